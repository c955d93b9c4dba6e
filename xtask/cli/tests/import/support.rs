//! What the import tests share (`import_go.rs`, `import_crd.rs`): running an import as
//! `cargo kubebuilder` does, controller-gen's CRDs, reading CRDs back.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder_cli::tools;
use serde_json::Value;

use super::common;

/// `import <source> <input> <dir> --local <this checkout> <options>` (`source`: `go` or
/// `crd`) as `cargo kubebuilder` runs it.
pub fn import(source: &str, input: &Path, dir: &Path, options: &str) -> anyhow::Result<()> {
    run_import(&format!(
        "{source} {} {} --local {} {options}",
        input.display(),
        dir.display(),
        common::repo_root().display()
    ))
}

/// `import <args>` as `cargo kubebuilder` runs it.
pub fn run_import(args: &str) -> anyhow::Result<()> {
    let line = format!("import {args}");
    let kubebuilder_cli::Command::Scaffold(kubebuilder_cli::scaffold::Command::Import { command }) =
        common::parse(&line)
    else {
        panic!("{line} is not import");
    };
    kubebuilder_cli::import::run(&command)
}

/// Expects `import <source> <input> <options>` to fail saying each of `said`, with nothing
/// written (the new project's parent directory stays empty).
pub fn assert_refused(source: &str, input: &Path, options: &str, said: &[&str]) {
    let parent = tempfile::tempdir().unwrap();
    let target = parent.path().join("imported");
    let error = format!(
        "{:#}",
        import(source, input, &target, options).expect_err("the import is refused")
    );
    for words in said {
        assert!(error.contains(words), "{words:?} not in:\n{error}");
    }
    assert!(
        fs::read_dir(parent.path()).unwrap().next().is_none(),
        "the import left something in {}",
        parent.path().display()
    );
}

/// The conformance suite's Go module: the tutorial's and controller-tools' constructs.
pub fn conformance_module() -> PathBuf {
    common::repo_root().join("macros/tests/conformance/go")
}

/// controller-gen's CRDs (`crd<options>`) for the Go packages `paths` of the module at
/// `dir`, in a temporary directory.
pub fn controller_gen_crds_dir(dir: &Path, options: &str, paths: &str) -> tempfile::TempDir {
    controller_gen(dir, &format!("crd{options}"), "crd", paths)
}

/// What controller-gen's `generator` (with its options: `crd:allowDangerousTypes=true`)
/// writes for the Go packages `paths` of the module at `dir`, its output `output` (`crd`,
/// `webhook`) in a temporary directory.
pub fn controller_gen(dir: &Path, generator: &str, output: &str, paths: &str) -> tempfile::TempDir {
    let output_dir = tempfile::tempdir().unwrap();
    let run = Command::new(tools::CONTROLLER_GEN.install().unwrap())
        .current_dir(dir)
        .arg(generator)
        .arg(format!("paths={paths}"))
        .arg(format!(
            "output:{output}:dir={}",
            output_dir.path().display()
        ))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "controller-gen failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    output_dir
}

/// The documents of the YAML file at `path`.
pub fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The CRDs of the YAML files in `dir` (other documents passed over), by name.
pub fn crds_in(dir: &Path) -> BTreeMap<String, Value> {
    let mut crds = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "yaml") {
            continue;
        }
        for crd in yaml_documents(&path)
            .into_iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
        {
            crds.insert(crd["metadata"]["name"].as_str().unwrap().to_owned(), crd);
        }
    }
    crds
}

/// The number of `value`'s leaves (scalars, empty lists and maps).
pub fn leaves(value: &Value) -> usize {
    match value {
        Value::Object(map) if !map.is_empty() => map.values().map(leaves).sum(),
        Value::Array(items) if !items.is_empty() => items.iter().map(leaves).sum(),
        _ => 1,
    }
}

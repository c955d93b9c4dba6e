//! The real peer: controller-gen's `crd` generator run on the Go fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The controller-gen release the differences in `DIFFERENCES.md` were recorded against.
pub const VERSION: &str = kubebuilder::crd::CONTROLLER_GEN_VERSION;

/// Runs `controller-gen crd:<options> paths=<paths>` (from `$CONTROLLER_GEN`) in the Go module
/// `go_module` and returns its CRDs by name. Panics, failing the test, when the tool is
/// missing or fails.
pub fn generate(go_module: &Path, options: &str, paths: &str) -> BTreeMap<String, Value> {
    let binary: PathBuf = std::env::var_os("CONTROLLER_GEN")
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "CONTROLLER_GEN is not set: run `cargo xtask test`, or export the path of \
                 controller-gen {VERSION} (`cargo xtask test` installs it)"
            )
        })
        .into();
    let output_dir = tempfile::tempdir().expect("creating a temporary directory");
    let output = Command::new(&binary)
        .current_dir(go_module)
        .arg(format!("crd:{options}"))
        .arg(format!("paths={paths}"))
        .arg(format!("output:crd:dir={}", output_dir.path().display()))
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    assert!(
        output.status.success(),
        "controller-gen failed on {}:\n{}",
        go_module.display(),
        String::from_utf8_lossy(&output.stderr)
    );

    let mut crds = BTreeMap::new();
    for entry in std::fs::read_dir(output_dir.path()).expect("reading controller-gen's output") {
        let path = entry.expect("listing controller-gen's output").path();
        let yaml = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let crd: Value = serde_saphyr::from_str(&yaml)
            .unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()));
        let version = crd
            .pointer("/metadata/annotations/controller-gen.kubebuilder.io~1version")
            .and_then(Value::as_str);
        // The annotation says which release wrote the CRD, unless it was asked to leave it out.
        let expected = (!options.contains("omitToolVersion=true")).then_some(VERSION);
        assert_eq!(
            version,
            expected,
            "{} was not written by controller-gen {VERSION} with {options}",
            path.display()
        );
        let name = crd["metadata"]["name"]
            .as_str()
            .expect("a CRD has a name")
            .to_owned();
        crds.insert(name, crd);
    }
    crds
}

//! Differential tests of the kustomize subset against kustomize itself (`$KUSTOMIZE`, which
//! `cargo xtask test` installs): what `cargo xtask build-installer` writes must hold the same
//! set of objects as `kustomize build`, for every kustomization of this repository's
//! `config/` and the fixtures in `tests/kustomize/` (which use what `config/` does not).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder_cli::kustomize::{self, Overrides};
use serde_json::Value;

/// This repository's root (this crate is `xtask/cli`).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kustomize() -> PathBuf {
    std::env::var_os("KUSTOMIZE")
        .expect("KUSTOMIZE must name kustomize v5 (`cargo xtask test` installs it and sets it)")
        .into()
}

/// The objects of a multi-document YAML stream, each as canonical JSON text, so that two
/// renderings compare as sets of objects (order of documents and keys aside).
fn objects(yaml: &str) -> BTreeSet<String> {
    serde_saphyr::from_multiple::<Value>(yaml)
        .expect("valid YAML")
        .into_iter()
        .filter(|object| !object.is_null())
        .map(|object| canonical(&object))
        .collect()
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by_key(|(key, _)| *key);
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(key, value)| format!("{key:?}:{}", canonical(value)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("running a command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// What `cargo xtask build-installer [--image <image>]` writes for `dir`.
fn ours(dir: &Path, image: Option<&str>) -> String {
    let objects = kustomize::build(dir, &Overrides::manager_image(image)).unwrap();
    kubebuilder::yaml::to_documents(&objects)
}

fn theirs(dir: &Path) -> String {
    run(Command::new(kustomize()).arg("build").arg(dir))
}

fn assert_same_objects(dir: &Path, ours: &str, theirs: &str) {
    let (ours, theirs) = (objects(ours), objects(theirs));
    let only_ours: Vec<_> = ours.difference(&theirs).collect();
    let only_theirs: Vec<_> = theirs.difference(&ours).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "{}: cargo xtask and kustomize differ\nonly ours: {only_ours:#?}\nonly kustomize: {only_theirs:#?}",
        dir.display()
    );
}

#[test]
fn every_kustomization_of_config_renders_as_kustomize_renders_it() {
    let config = workspace().join("config");
    let mut checked = 0;
    for entry in std::fs::read_dir(&config).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("kustomization.yaml").is_file() {
            continue;
        }
        assert_same_objects(&dir, &ours(&dir, None), &theirs(&dir));
        checked += 1;
    }
    // default, crd, rbac, manager, webhook, certmanager, prometheus, network-policy, samples
    assert_eq!(checked, 9, "a kustomization of config/ was not found");
}

#[test]
fn dist_install_yaml_holds_what_kustomize_builds_from_config_default() {
    let dir = workspace().join("config/default");
    let ours = ours(&dir, None);
    assert_same_objects(&dir, &ours, &theirs(&dir));
    assert!(
        ours.starts_with("---\napiVersion: v1\nkind: Namespace\n"),
        "namespaces come first"
    );
}

#[test]
fn the_fixtures_render_as_kustomize_renders_them() {
    for fixture in ["base", "overlay"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/kustomize")
            .join(fixture);
        assert_same_objects(&dir, &ours(&dir, None), &theirs(&dir));
    }
}

#[test]
fn image_sets_the_manager_image_as_kustomize_edit_set_image_does() {
    let image = "registry.example.com:5000/team/manager:v1.2.3";
    // kustomize's way edits config/manager/kustomization.yaml: do it on a copy.
    let copy = tempfile::tempdir().unwrap();
    copy_dir(&workspace().join("config"), copy.path());
    run(Command::new(kustomize())
        .current_dir(copy.path().join("manager"))
        .args(["edit", "set", "image", &format!("controller={image}")]));
    let dir = workspace().join("config/default");
    let ours = ours(&dir, Some(image));
    assert_same_objects(&dir, &ours, &theirs(&copy.path().join("default")));
    assert!(ours.contains(&format!("image: {image}")));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

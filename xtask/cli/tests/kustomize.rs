//! Differential tests of the kustomize subset against kustomize itself (`$KUSTOMIZE`, which
//! `cargo xtask test` installs): what `cargo xtask build-installer` writes must hold the same
//! set of objects as `kustomize build`, for every kustomization of this repository's
//! `config/` and the fixtures in `tests/kustomize/` (which use what `config/` does not).

mod common;

use std::path::Path;
use std::process::Command;

use kubebuilder_cli::kustomize::{self, Overrides};

use common::{copy_tree, kustomize, objects, repo_root};

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
    let config = repo_root().join("config");
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
    let dir = repo_root().join("config/default");
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
    copy_tree(&repo_root().join("config"), copy.path(), &[]);
    run(Command::new(kustomize())
        .current_dir(copy.path().join("manager"))
        .args(["edit", "set", "image", &format!("controller={image}")]));
    let dir = repo_root().join("config/default");
    let ours = ours(&dir, Some(image));
    assert_same_objects(&dir, &ours, &theirs(&copy.path().join("default")));
    assert!(ours.contains(&format!("image: {image}")));
}

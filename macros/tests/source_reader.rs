//! `cargo xtask manifests` reads the declarations from the sources without a build
//! (`kubebuilder_cli::source`), deferring to a build wherever a build could disagree. A
//! mistake the macros refuse must never be read into manifests: every compile-fail case
//! of the UI tests defers to the build, which reports it.

use std::path::{Path, PathBuf};

use kubebuilder_cli::source::{self, Crate};

/// The crates the UI cases (kubebuilder-ui-tests' `tests/ui`) may name: trybuild gives
/// them that package's dependencies.
const EXTERNS: &[&str] = &[
    "k8s_openapi",
    "kube",
    "kubebuilder",
    "schemars",
    "serde",
    "serde_json",
];

fn cases(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("ui/tests/ui")
        .join(kind);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("listing {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    cases.sort();
    cases
}

fn read(case: &Path) -> Result<kubebuilder::declarations::Declarations, source::DeferToBuild> {
    let krate = Crate {
        name: "case".to_owned(),
        root: case.to_owned(),
        externs: EXTERNS
            .iter()
            .map(|name| ((*name).to_owned(), (*name).to_owned()))
            .collect(),
    };
    source::read_crates(&[krate], &kubebuilder::crd::Options::default())
}

/// The compile-fail cases whose declarations are right, and so is reading them: a mistake
/// not in an attribute but in how kubebuilder-runtime registers the type
/// (`webhook_registered_*`), and a warning the case denies (`*_deprecated.rs`: a deprecated
/// argument still declares what it always did).
fn declarations_are_right(case: &str) -> bool {
    case.starts_with("webhook_registered_") || case.ends_with("_deprecated.rs")
}

#[test]
fn every_mistake_the_macros_refuse_defers_to_the_build() {
    let read: Vec<String> = cases("fail")
        .iter()
        .filter(|case| !declarations_are_right(&case.file_name().unwrap().to_string_lossy()))
        .filter(|case| read(case).is_ok())
        .map(|case| case.display().to_string())
        .collect();
    assert!(
        read.is_empty(),
        "the source reader read {} case(s) that do not compile:\n{}",
        read.len(),
        read.join("\n")
    );
}

/// The pass cases the reader defers to a build, by file name: kube-derive kinds register
/// through `register_custom_resource!`, whose expansion only a build knows.
const BUILT: &[&str] = &["kube_register_custom_resource.rs"];

/// Every other construct the pass cases use is read without a build, so an edit to it
/// takes the fast path.
#[test]
fn every_pass_case_is_read_but_the_listed_ones() {
    let mut report = Vec::new();
    for case in cases("pass") {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        match (read(&case), BUILT.contains(&name.as_str())) {
            (Ok(_), true) => report.push(format!("{name} is read: remove it from BUILT")),
            (Err(unread), false) => report.push(format!("{name} defers to a build: {unread}")),
            _ => {}
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

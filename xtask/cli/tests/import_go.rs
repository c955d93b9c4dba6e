//! `goimport` (the Go side of `cargo kubebuilder import go`) on the conformance suite's Go
//! module: it type-checks and reads every package, finds no unknown marker, and every marker
//! it reads has a Rust spelling the importer can write.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use kubebuilder_attributes::spellings::{self, Target};
use kubebuilder_cli::tools;
use serde_json::Value;

/// Markers no argument spells, and what the importer writes for each instead.
const TRANSLATED_OTHERWISE: [(&str, &str); 5] = [
    (
        "kubebuilder:object:root",
        "the kind `#[kubebuilder::resource]` generates",
    ),
    (
        "kubebuilder:object:generate",
        "nothing: the attributes derive Clone",
    ),
    ("kubebuilder:rbac", "#[kubebuilder::rbac(...)]"),
    ("kubebuilder:webhook", "#[kubebuilder::webhook(...)]"),
    (
        "k8s:enum",
        "a unit enum of the type's constants (DIFFERENCES M3)",
    ),
];

fn read(dir: &Path) -> Value {
    let goimport = tools::GOIMPORT.install().unwrap();
    let output = Command::new(goimport)
        .current_dir(dir)
        .arg("./...")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "goimport failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn every_marker_of_the_conformance_module_has_a_rust_spelling() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../macros/tests/conformance/go");
    let model = read(&dir);
    assert_eq!(model["unknownMarkers"], serde_json::json!([]));
    let spelled: BTreeSet<(String, Target)> = spellings::all()
        .into_iter()
        .map(|spelling| (spelling.go, spelling.target))
        .collect();
    let mut read_markers = BTreeSet::new();
    let mut unspelled = BTreeSet::new();
    let mut check = |markers: &Value, target: Target| {
        for name in markers.as_object().unwrap().keys() {
            read_markers.insert(name.clone());
            let other = TRANSLATED_OTHERWISE.iter().any(|(go, _)| go == name);
            if !other && !spelled.contains(&(name.clone(), target)) {
                unspelled.insert(format!("+{name} ({})", target.as_str()));
            }
        }
    };
    let packages = model["packages"].as_array().unwrap();
    for package in packages {
        check(&package["markers"], Target::Package);
        for typ in package["types"].as_array().unwrap() {
            check(&typ["markers"], Target::Type);
            for field in typ["fields"].as_array().into_iter().flatten() {
                check(&field["markers"], Target::Field);
            }
        }
    }
    assert!(unspelled.is_empty(), "no Rust spelling: {unspelled:?}");
    let types: usize = packages
        .iter()
        .map(|p| p["types"].as_array().unwrap().len())
        .sum();
    println!(
        "{} packages, {types} types, {} distinct markers, each with a spelling",
        packages.len(),
        read_markers.len()
    );
    assert!(read_markers.len() > 50, "{read_markers:?}");
}

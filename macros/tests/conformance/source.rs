//! `cargo xtask manifests` reads the declarations from the sources, without a build
//! (`kubebuilder_cli::source`). Over the fixtures and the `api` crate, every marker and
//! construct of this suite, it must arrive at the CRDs this binary registers.

use std::path::Path;

use kubebuilder_cli::source::{self, Crate};
use serde_json::Value;

use super::our_crds_with;

/// This test binary's crate (the fixtures' root) and the crates the repository's
/// declarations binary links (`api` among them).
fn crates() -> Vec<Crate> {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates = source::declarations_crates(&package.join(".."))
        .unwrap_or_else(|unread| panic!("finding the repository's crates: {unread}"));
    let externs = [
        "api",
        "k8s_openapi",
        "kube",
        "kubebuilder",
        "serde",
        "serde_json",
    ];
    crates.push(Crate {
        name: "conformance".to_owned(),
        root: package.join("tests/conformance/main.rs"),
        externs: externs
            .iter()
            .map(|name| ((*name).to_owned(), (*name).to_owned()))
            .collect(),
    });
    crates
}

#[test]
fn the_source_reader_arrives_at_the_crds_a_build_registers() {
    for max_desc_len in [None, Some(0), Some(40)] {
        let options = kubebuilder::crd::Options {
            max_desc_len,
            omit_tool_version: max_desc_len.is_some(),
            generate_embedded_object_meta: max_desc_len.is_none(),
        };
        let read = source::read_crates(&crates(), &options)
            .unwrap_or_else(|unread| panic!("the reader defers to a build: {unread}"));
        let as_json = |crds: &[_]| -> Vec<(String, Value)> {
            crds.iter()
                .map(|crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition| {
                    (super::name_of(crd), serde_json::to_value(crd).unwrap())
                })
                .collect()
        };
        let built = as_json(&our_crds_with(&options));
        let read = as_json(&read.crds);
        let names = |crds: &[(String, Value)]| -> Vec<String> {
            crds.iter().map(|(name, _)| name.clone()).collect()
        };
        assert_eq!(names(&read), names(&built), "maxDescLen {max_desc_len:?}");
        for ((name, read), (_, built)) in read.iter().zip(&built) {
            assert!(
                read == built,
                "maxDescLen {max_desc_len:?}: {name} differs:\nread:  {read}\nbuilt: {built}"
            );
        }
    }
}

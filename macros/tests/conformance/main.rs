//! Differential conformance against controller-gen.
//!
//! `go/` holds Go API types with kubebuilder markers; `fixtures/` and the `api` crate hold
//! their Rust twins. The pinned controller-gen (`$CONTROLLER_GEN`) generates the Go side's
//! CRDs, `kubebuilder::crd::all` ours, and both are compared structurally: the same CRDs,
//! with the same keys and values (key order and schema description text aside). Every
//! difference must be excused by a row of `DIFFERENCES.md`, and every row must excuse one.
//! Our CRDs are then applied to a real kube-apiserver, and the twins of the constructs
//! beyond one marker each are exercised there (`constructs.rs`).

mod compare;
mod constructs;
mod controller_gen;
mod fixtures;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::Value;

use compare::{Descriptions, Difference};

/// The CRDs compared with their descriptions: the embedded Kubernetes types' schemas come from
/// `kubebuilder`'s table, which must reproduce controller-gen's text too.
const COMPARED_WITH_DESCRIPTIONS: &[&str] = &["embeddeds.embedded.conformance.kubebuilder.io"];

/// controller-gen CRDs we refuse to generate (a compile error instead, see DIFFERENCES.md),
/// with the reason the apiserver gives for refusing them too.
const REFUSED_BY_THE_APISERVER: &[(&str, &str)] = &[(
    "uniques.markers.conformance.kubebuilder.io",
    "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
)];

/// Floats are refused unless allowed; the Rust twins allow them where they use them.
const CONTROLLER_GEN_OPTIONS: &str = "allowDangerousTypes=true";

static CONTROLLER_GEN_CRDS: LazyLock<BTreeMap<String, Value>> =
    LazyLock::new(|| controller_gen::generate(&go_module(), CONTROLLER_GEN_OPTIONS, "./..."));

fn go_module() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/go")
}

/// Our CRDs: every version registered in this test binary (the fixtures and the `api`
/// crate), merged per kind as `cargo xtask manifests` merges them.
fn our_crds() -> Vec<CustomResourceDefinition> {
    our_crds_with(&kubebuilder::crd::Options::default())
}

fn our_crds_with(options: &kubebuilder::crd::Options) -> Vec<CustomResourceDefinition> {
    // Referencing the api crate links it, and with it its registrations.
    let _ = api::GROUP;
    kubebuilder::crd::all(options).unwrap_or_else(|errors| {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!(
            "the registered versions do not merge:\n{}",
            errors.join("\n")
        )
    })
}

fn name_of(crd: &CustomResourceDefinition) -> String {
    crd.metadata.name.clone().expect("a CRD has a name")
}

/// A CRD as a YAML file would hold it: rendered by `kubebuilder::yaml` (what `cargo xtask
/// manifests` writes) and read back with the parser that reads controller-gen's files.
fn as_written(crd: &CustomResourceDefinition) -> Value {
    let yaml = kubebuilder::yaml::to_yaml(&serde_json::to_value(crd).expect("a CRD serializes"));
    serde_saphyr::from_str(&yaml)
        .unwrap_or_else(|e| panic!("our YAML for {} does not parse: {e}\n{yaml}", name_of(crd)))
}

/// `Kind.group`, as controller-gen names a kind.
fn group_kind(crd: &Value) -> String {
    format!(
        "{}.{}",
        crd["spec"]["names"]["kind"].as_str().unwrap_or_default(),
        crd["spec"]["group"].as_str().unwrap_or_default()
    )
}

fn crd_name(crd: &Value) -> &str {
    crd["metadata"]["name"].as_str().unwrap_or_default()
}

fn descriptions_for(name: &str) -> Descriptions {
    if COMPARED_WITH_DESCRIPTIONS.contains(&name) {
        Descriptions::Exact
    } else {
        Descriptions::Presence
    }
}

#[test]
fn crds_match_controller_gen_but_for_the_listed_differences() {
    let exceptions =
        compare::parse_exceptions(include_str!("DIFFERENCES.md")).unwrap_or_else(|e| panic!("{e}"));
    // Paired by kind and group rather than by name, so that a different plural shows as
    // the fields it changes.
    let theirs: BTreeMap<String, &Value> = CONTROLLER_GEN_CRDS
        .values()
        .map(|crd| (group_kind(crd), crd))
        .collect();
    let ours: BTreeMap<String, Value> = our_crds()
        .iter()
        .map(as_written)
        .map(|crd| (group_kind(&crd), crd))
        .collect();

    let kinds: BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    let mut found = Vec::new();
    for kind in kinds {
        match (theirs.get(kind), ours.get(kind)) {
            (Some(theirs), Some(ours)) => {
                let name = crd_name(theirs);
                found.extend(compare::differences(
                    name,
                    theirs,
                    ours,
                    descriptions_for(name),
                ));
            }
            (theirs, ours) => found.push(Difference {
                crd: crd_name(theirs.copied().or(ours).unwrap()).to_owned(),
                path: Vec::new(),
                controller_gen: theirs.map(|crd| (*crd).clone()),
                ours: ours.cloned(),
            }),
        }
    }

    compare::judge(found, &exceptions).assert_clean("DIFFERENCES.md");
}

/// A kind in a `#[kubebuilder::skip]` module is generated but registers no CRD, as
/// controller-gen writes none for a `+kubebuilder:skip` package.
#[test]
fn skipped_kinds_are_types_without_a_registered_crd() {
    let hidden = fixtures::skipped::v1::Hidden::new(
        "h",
        fixtures::skipped::v1::HiddenSpec { size: "s".into() },
    );
    assert_eq!(hidden.spec.size, "s");
    let name = "hiddens.skipped.conformance.kubebuilder.io";
    assert_eq!(
        fixtures::skipped::v1::Hidden::crd()
            .metadata
            .name
            .as_deref(),
        Some(name)
    );
    assert!(!our_crds().iter().any(|crd| name_of(crd) == name));
    assert!(!CONTROLLER_GEN_CRDS.contains_key(name));
}

/// controller-gen's CRD options act as ours do, checked on the fixture whose descriptions
/// are all equal to controller-gen's (the Kubernetes types'): `maxDescLen` 0 drops them, a
/// length cuts each at a sentence end, else at a space with `...`; `omitToolVersion` leaves
/// out the version annotation; `generateEmbeddedObjectMeta` gives the pod and job
/// templates' `metadata` its settable properties.
#[test]
fn crd_options_act_as_controller_gens() {
    use kubebuilder::crd::Options;
    let embedded = COMPARED_WITH_DESCRIPTIONS[0];
    let cases = [
        (
            "maxDescLen=0",
            Options {
                max_desc_len: Some(0),
                ..Options::default()
            },
        ),
        (
            "maxDescLen=40",
            Options {
                max_desc_len: Some(40),
                ..Options::default()
            },
        ),
        (
            "omitToolVersion=true",
            Options {
                omit_tool_version: true,
                ..Options::default()
            },
        ),
        (
            "generateEmbeddedObjectMeta=true",
            Options {
                generate_embedded_object_meta: true,
                ..Options::default()
            },
        ),
    ];
    for (option, ours) in cases {
        let theirs = controller_gen::generate(
            &go_module(),
            &format!("{CONTROLLER_GEN_OPTIONS},{option}"),
            "./embedded/...",
        );
        let theirs = &theirs[embedded];
        let ours = our_crds_with(&ours)
            .into_iter()
            .find(|crd| name_of(crd) == embedded)
            .expect("the embedded fixture is registered");
        let found = compare::differences(embedded, theirs, &as_written(&ours), Descriptions::Exact);
        let report: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            report.is_empty(),
            "{option}: {} difference(s):\n{}",
            report.len(),
            report.join("\n")
        );
    }
}

/// The comparison goes through k8s-openapi's CRD type and our YAML writer; neither may add
/// or lose anything, or the differences found above would not be ours.
#[test]
fn controller_gens_crds_survive_our_types_and_yaml_writer() {
    for (name, theirs) in &*CONTROLLER_GEN_CRDS {
        let crd: CustomResourceDefinition = serde_json::from_value(theirs.clone())
            .unwrap_or_else(|e| panic!("{name} does not read as a CustomResourceDefinition: {e}"));
        let found = compare::differences(name, theirs, &as_written(&crd), Descriptions::Exact);
        let report: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            report.is_empty(),
            "{name} changes on the way:\n{}",
            report.join("\n")
        );
    }
}

#[tokio::test]
async fn our_crds_are_established_by_the_apiserver() {
    let plane = kubebuilder_envtest::shared();
    plane
        .install_crds(&our_crds())
        .await
        .unwrap_or_else(|e| panic!("installing our CRDs: {e:#}"));
}

/// The CRDs controller-gen writes and we refuse to: the apiserver refuses them as well.
#[tokio::test]
async fn the_crds_we_refuse_are_refused_by_the_apiserver() {
    let crds: Api<CustomResourceDefinition> =
        Api::all(kubebuilder_envtest::shared().client().await.unwrap());
    for (name, reason) in REFUSED_BY_THE_APISERVER {
        let theirs = CONTROLLER_GEN_CRDS
            .get(*name)
            .unwrap_or_else(|| panic!("controller-gen no longer writes {name}"));
        let crd: CustomResourceDefinition = serde_json::from_value(theirs.clone()).unwrap();
        match crds.create(&PostParams::default(), &crd).await {
            Err(kube::Error::Api(status)) => assert!(
                status.message.contains(reason),
                "{name} refused for another reason: {}",
                status.message
            ),
            Ok(_) => {
                let _ = crds.delete(name, &DeleteParams::default()).await;
                panic!("the apiserver accepted {name}")
            }
            Err(other) => panic!("creating {name}: {other}"),
        }
    }
}

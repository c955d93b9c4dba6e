//! How versions merge into one CRD.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::root::check_hub;
use super::*;

fn schema() -> JSONSchemaProps {
    JSONSchemaProps {
        type_: Some("object".into()),
        description: Some("A long description. It has two sentences.".into()),
        ..JSONSchemaProps::default()
    }
}

const V1: Version = Version {
    group: Cow::Borrowed("example.kubebuilder.io"),
    kind: Cow::Borrowed("Thing"),
    name: Cow::Borrowed("v1"),
    plural: Cow::Borrowed("things"),
    singular: Cow::Borrowed("thing"),
    short_names: Cow::Borrowed(&[]),
    categories: Cow::Borrowed(&[]),
    scope: Cow::Borrowed("Namespaced"),
    storage: false,
    served: true,
    deprecated: None,
    skip: false,
    annotations: Cow::Borrowed(&[]),
    labels: Cow::Borrowed(&[]),
    status_subresource: false,
    scale: None,
    printer_columns: Cow::Borrowed(&[]),
    selectable_fields: Cow::Borrowed(&[]),
    hub: None,
    schema: RootSchema::Function(schema),
};

fn names(crd: &CustomResourceDefinition) -> Vec<(String, bool)> {
    crd.spec
        .versions
        .iter()
        .map(|v| (v.name.clone(), v.storage))
        .collect()
}

fn json(crd: &CustomResourceDefinition) -> Value {
    serde_json::to_value(crd).unwrap()
}

#[test]
fn a_single_version_is_the_storage_version() {
    let crd = merge(&[&V1], &Options::default()).unwrap().unwrap();
    assert_eq!(names(&crd), [("v1".to_owned(), true)]);
    assert_eq!(
        json(&crd)["metadata"],
        json!({"name": "things.example.kubebuilder.io",
               "annotations": {"controller-gen.kubebuilder.io/version": "v0.23.0"}})
    );
    assert_eq!(json(&crd)["spec"]["names"]["listKind"], json!("ThingList"));
}

#[test]
fn versions_sort_as_plain_strings() {
    let v2 = Version {
        name: Cow::Borrowed("v2"),
        ..V1
    };
    let v1beta1 = Version {
        name: Cow::Borrowed("v1beta1"),
        ..V1
    };
    let v1 = Version {
        storage: true,
        ..V1
    };
    let crd = merge(&[&v2, &v1beta1, &v1], &Options::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        names(&crd),
        [
            ("v1".to_owned(), true),
            ("v1beta1".to_owned(), false),
            ("v2".to_owned(), false)
        ]
    );
}

#[test]
fn storage_versions_must_be_exactly_one() {
    let v2 = Version {
        name: Cow::Borrowed("v2"),
        ..V1
    };
    assert_eq!(
        merge(&[&V1, &v2], &Options::default())
            .unwrap_err()
            .to_string(),
        "CRD for Thing.example.kubebuilder.io has no storage version"
    );
    let (v1, v2) = (
        Version {
            storage: true,
            ..V1
        },
        Version {
            storage: true,
            ..v2
        },
    );
    assert_eq!(
        merge(&[&v2, &v1], &Options::default())
            .unwrap_err()
            .to_string(),
        "CRD for Thing.example.kubebuilder.io has more than one storage version: v1, v2"
    );
}

#[test]
fn some_version_must_be_served_and_names_must_agree() {
    let unserved = Version {
        served: false,
        ..V1
    };
    assert_eq!(
        merge(&[&unserved], &Options::default())
            .unwrap_err()
            .to_string(),
        "CRD for Thing.example.kubebuilder.io with version(s) v1 does not serve any version"
    );
    let other = Version {
        name: Cow::Borrowed("v2"),
        short_names: Cow::Borrowed(&[Cow::Borrowed("t")]),
        ..V1
    };
    assert_eq!(
        merge(&[&V1, &other], &Options::default())
            .unwrap_err()
            .to_string(),
        "CRD for Thing.example.kubebuilder.io: versions v1 and v2 declare different resource(short_name)"
    );
    assert_eq!(
        merge(&[&V1, &V1], &Options::default())
            .unwrap_err()
            .to_string(),
        "CRD for Thing.example.kubebuilder.io: version v1 is declared twice"
    );
}

#[test]
fn skipped_versions_are_left_out() {
    let skipped = Version {
        name: Cow::Borrowed("v2"),
        skip: true,
        ..V1
    };
    let crd = merge(&[&skipped, &V1], &Options::default())
        .unwrap()
        .unwrap();
    assert_eq!(names(&crd), [("v1".to_owned(), true)]);
    assert!(
        merge(&[&Version { skip: true, ..V1 }], &Options::default())
            .unwrap()
            .is_none()
    );
}

#[test]
fn printer_columns_create_empty_subresources_as_controller_gen_does() {
    let columns = Version {
        printer_columns: Cow::Borrowed(&[PrinterColumn {
            name: Cow::Borrowed("Age"),
            type_: Cow::Borrowed("date"),
            json_path: Cow::Borrowed(".metadata.creationTimestamp"),
            description: None,
            format: None,
            priority: 0,
        }]),
        ..V1
    };
    let crd = json(&merge(&[&columns], &Options::default()).unwrap().unwrap());
    assert_eq!(crd["spec"]["versions"][0]["subresources"], json!({}));
    assert_eq!(
        crd["spec"]["versions"][0]["additionalPrinterColumns"],
        json!([{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])
    );
}

#[test]
fn max_desc_len_applies_to_every_version() {
    let description = |max_desc_len| {
        let options = Options {
            max_desc_len,
            ..Options::default()
        };
        let crd = merge(&[&V1], &options).unwrap().unwrap();
        json(&crd)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"].clone()
    };
    assert_eq!(
        description(None),
        json!("A long description. It has two sentences.")
    );
    assert_eq!(description(Some(25)), json!("A long description."));
    assert_eq!(description(Some(0)), Value::Null);
}

#[test]
fn omit_tool_version_leaves_out_the_generator_annotation() {
    let annotations = |omit_tool_version| {
        let options = Options {
            omit_tool_version,
            ..Options::default()
        };
        json(&merge(&[&V1], &options).unwrap().unwrap())["metadata"]["annotations"].clone()
    };
    assert_eq!(
        annotations(false),
        json!({GENERATOR_ANNOTATION.0: GENERATOR_ANNOTATION.1})
    );
    assert_eq!(annotations(true), Value::Null);
}

#[test]
fn kinds_are_ordered_by_kind_and_group() {
    let other = Version {
        kind: Cow::Borrowed("Apple"),
        plural: Cow::Borrowed("apples"),
        ..V1
    };
    let crds = merge_all(&[&V1, &other], &Options::default()).unwrap();
    let kinds: Vec<&str> = crds.iter().map(|c| c.spec.names.kind.as_str()).collect();
    assert_eq!(kinds, ["Apple", "Thing"]);
    let broken = Version {
        kind: Cow::Borrowed("Broken"),
        served: false,
        ..V1
    };
    assert_eq!(
        merge_all(&[&V1, &broken], &Options::default())
            .unwrap_err()
            .len(),
        1
    );
}

#[test]
fn a_hub_is_the_storage_version_of_the_same_kind() {
    let hub = Version {
        storage: true,
        ..V1
    };
    assert!(check_hub(hub.clone(), "example.kubebuilder.io", "Thing").is_none());
    assert_eq!(
        check_hub(V1, "example.kubebuilder.io", "Thing")
            .unwrap()
            .as_str(),
        "`hub` must be the storage version, but Thing v1 has no `storageversion`"
    );
    assert_eq!(
        check_hub(hub.clone(), "example.kubebuilder.io", "Other")
            .unwrap()
            .as_str(),
        "`hub` must be another version of the same kind; it is Thing.example.kubebuilder.io"
    );
}

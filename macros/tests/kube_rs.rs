//! kube-rs interop (docs/kube-rs.md): kube-derive kinds registered for `cargo xtask
//! manifests` with one line each and merged per kind like ours; RBAC rules and webhooks
//! declared for them as for ours; our `#[kubebuilder::schema]` types embedded in a
//! kube-derive CRD through their `schemars::JsonSchema`; the same spec derived both ways
//! with the CRD schemas compared (the figures docs/kube-rs.md quotes); and both kinds of
//! CRD side by side on a real kube-apiserver, our validation enforced inside the
//! kube-derive CRD and our defaulting webhook serving the kube-derive kind.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::{CustomResource, CustomResourceExt};
use kubebuilder::crd::{self, External};
use kubebuilder::webhook::Declared;
use kubebuilder_runtime::webhook::{
    AdmissionContext, Defaulter, FieldError, LoopbackRegistration, Webhooks,
};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const GROUP: &str = "interop.kubebuilder.test";

/// How far a harbor may grow.
#[kubebuilder::schema(validation(x_validation(
    rule = "self.min <= self.max",
    message = "min must not exceed max"
)))]
pub struct Bounds {
    /// The fewest berths.
    #[kubebuilder(validation(minimum = 1, maximum = 10))]
    pub min: i32,
    /// The most berths.
    #[kubebuilder(validation(minimum = 1, maximum = 10))]
    pub max: i32,
    /// A lower-case name.
    #[kubebuilder(validation(pattern = "^[a-z]+$"))]
    pub label: Option<String>,
}

/// Ours: a kind declared with `#[kubebuilder::resource]`, holding [`Bounds`].
#[kubebuilder::resource(group = "interop.kubebuilder.test", version = "v1", kind = "Dock")]
pub struct DockSpec {
    /// Its bounds.
    pub bounds: Bounds,
}

/// kube-derive's: a kind holding [`Bounds`] as a field type.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "interop.kubebuilder.test",
    version = "v1",
    kind = "Harbor",
    namespaced
)]
#[serde(rename_all = "camelCase")]
pub struct HarborSpec {
    /// Its bounds, validated by the apiserver as in our CRDs.
    pub bounds: Bounds,
    /// Set by the defaulting webhook when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

kubebuilder::register_custom_resource!(Harbor);

/// A kube-derive kind with two versions, each registered on its own line.
pub mod ferry {
    pub mod v1 {
        use super::super::*;

        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "interop.kubebuilder.test",
            version = "v1",
            kind = "Ferry",
            namespaced
        )]
        pub struct FerrySpec {
            pub seats: i32,
        }
    }

    pub mod v2 {
        use super::super::*;

        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "interop.kubebuilder.test",
            version = "v2",
            kind = "Ferry",
            namespaced,
            storage = false
        )]
        pub struct FerrySpec {
            pub seats: i32,
            pub deck: Option<super::super::Bounds>,
        }
    }
}

kubebuilder::register_custom_resource!(ferry::v1::Ferry);
kubebuilder::register_custom_resource!(ferry::v2::Ferry);

/// Not registered: the merge errors.
pub mod raft {
    pub mod v1 {
        use super::super::*;

        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(group = "interop.kubebuilder.test", version = "v1", kind = "Raft")]
        pub struct RaftSpec {
            pub logs: i32,
        }
    }

    pub mod v2 {
        use super::super::*;

        /// Stored too, as kube-derive does unless told.
        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(group = "interop.kubebuilder.test", version = "v2", kind = "Raft")]
        pub struct RaftSpec {
            pub logs: i32,
        }
    }

    pub mod v3 {
        use super::super::*;

        /// Another plural.
        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "interop.kubebuilder.test",
            version = "v3",
            kind = "Raft",
            plural = "rafters",
            storage = false
        )]
        pub struct RaftSpec {
            pub logs: i32,
        }
    }

    pub mod dock {
        use super::super::*;

        /// The kind of ours, `Dock`, in kube-derive.
        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "interop.kubebuilder.test",
            version = "v2",
            kind = "Dock",
            namespaced
        )]
        pub struct DockSpec {
            pub bounds: Bounds,
        }
    }
}

/// The reconciler of Harbors: its rule names the kube-derive kind's resource as for ours.
#[kubebuilder::rbac(groups = ["interop.kubebuilder.test"], resources = ["harbors"], verbs = ["get", "list", "watch"])]
#[kubebuilder::rbac(groups = ["interop.kubebuilder.test"], resources = ["harbors/status"], verbs = ["get", "update", "patch"])]
pub struct HarborReconciler;

/// Fills `note` in; the default path comes from the group, version and resource.
#[kubebuilder::webhook(
    mutating = true,
    failure_policy = "Fail",
    side_effects = "None",
    groups = ["interop.kubebuilder.test"],
    resources = ["harbors"],
    verbs = ["create", "update"],
    versions = ["v1"],
    name = "mharbor-v1.kb.io",
    admission_review_versions = ["v1"]
)]
pub struct HarborDefaulter;

impl Defaulter<Harbor> for HarborDefaulter {
    async fn default(
        &self,
        _: &AdmissionContext<'_>,
        harbor: &mut Harbor,
    ) -> Result<(), Vec<FieldError>> {
        harbor
            .spec
            .note
            .get_or_insert_with(|| "defaulted by our webhook".into());
        Ok(())
    }
}

fn crd_json(crd: &CustomResourceDefinition) -> Value {
    serde_json::to_value(crd).unwrap()
}

/// `spec.versions[i].schema.openAPIV3Schema` of `version`.
fn version_schema(crd: &CustomResourceDefinition, version: &str) -> Value {
    let crd = crd_json(crd);
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let found = versions.iter().find(|v| v["name"] == version).unwrap();
    found["schema"]["openAPIV3Schema"].clone()
}

/// A version's name, `served` and `storage`.
type VersionFlags<'a> = (&'a str, bool, bool);

#[test]
fn kube_derive_kinds_are_registered_beside_ours_with_their_versions_merged() {
    let crds = crd::all(&crd::Options::default()).unwrap();
    let names: Vec<(&str, Vec<VersionFlags<'_>>)> = crds
        .iter()
        .map(|crd| {
            let versions = crd
                .spec
                .versions
                .iter()
                .map(|v| (v.name.as_str(), v.served, v.storage))
                .collect();
            (crd.metadata.name.as_deref().unwrap(), versions)
        })
        .collect();
    // In `Kind.group` order, ours and kube-derive's alike (Measured is ours, below).
    assert_eq!(
        names,
        [
            ("docks.interop.kubebuilder.test", vec![("v1", true, true)]),
            (
                "ferries.interop.kubebuilder.test",
                vec![("v1", true, true), ("v2", true, false)]
            ),
            ("harbors.interop.kubebuilder.test", vec![("v1", true, true)]),
            (
                "measureds.measure.kubebuilder.test",
                vec![("v1", true, true)]
            ),
        ]
    );
    // The kube-derive CRD is kept as kube-derive built it.
    let harbor = crds.iter().find(|c| c.spec.names.kind == "Harbor").unwrap();
    assert_eq!(harbor, &Harbor::crd());
    let ferry = crds.iter().find(|c| c.spec.names.kind == "Ferry").unwrap();
    assert_eq!(
        version_schema(ferry, "v2"),
        version_schema(&ferry::v2::Ferry::crd(), "v2")
    );
    // `--max-desc-len` cuts theirs as ours.
    let cut = crd::all(&crd::Options {
        max_desc_len: Some(0),
        ..Default::default()
    })
    .unwrap();
    let harbor = cut.iter().find(|c| c.spec.names.kind == "Harbor").unwrap();
    assert!(
        !version_schema(harbor, "v1")
            .to_string()
            .contains("description"),
        "descriptions dropped"
    );
}

#[test]
fn versions_that_do_not_merge_are_refused_naming_them() {
    let errors = |external: &[&External]| -> Vec<String> {
        crd::merge_all_with(&[], external, &crd::Options::default())
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let v1 = External::of::<raft::v1::Raft>("raft::v1::Raft");
    let v2 = External::of::<raft::v2::Raft>("raft::v2::Raft");
    let v3 = External::of::<raft::v3::Raft>("raft::v3::Raft");
    assert_eq!(
        errors(&[&v1, &v2]),
        [
            "CRD for Raft.interop.kubebuilder.test has more than one storage version: v1, v2 \
          (kube-derive stores every version unless told: mark all but one \
          `#[kube(storage = false)]`)"
        ]
    );
    assert_eq!(
        errors(&[&v1, &v3]),
        [
            "CRD for Raft.interop.kubebuilder.test: raft::v1::Raft and raft::v3::Raft declare \
          different spec.names"
        ]
    );
    assert_eq!(
        errors(&[&v1, &v1]),
        [
            "CRD for Raft.interop.kubebuilder.test: version v1 is declared twice, by \
          raft::v1::Raft and raft::v1::Raft"
        ]
    );
    // A kind of ours registered again, or given a kube-derive version: one way per kind.
    let ours = External::of::<Dock>("Dock");
    let mixed = External::of::<raft::dock::Dock>("raft::dock::Dock");
    let message = |external: &External| {
        crd::merge_all_with(
            &[&<Dock as crd::CustomResource>::VERSION],
            &[external],
            &crd::Options::default(),
        )
        .unwrap_err()[0]
            .to_string()
    };
    assert_eq!(
        message(&ours),
        "CRD for Dock.interop.kubebuilder.test: version(s) v1 come from \
         #[kubebuilder::resource] and v1 in register_custom_resource!(Dock); a kind's versions \
         are declared one way (a #[kubebuilder::resource] kind registers itself, \
         register_custom_resource! is for kube-derive kinds)"
    );
    assert!(
        message(&mixed).contains("v2 in register_custom_resource!(raft::dock::Dock)"),
        "{}",
        message(&mixed)
    );
    // The rest still merges: one error per kind.
    let all = crd::merge_all_with(
        &[&<Dock as crd::CustomResource>::VERSION],
        &[&v1, &v2, &External::of::<Harbor>("Harbor")],
        &crd::Options::default(),
    );
    assert_eq!(all.unwrap_err().len(), 1);
}

#[test]
fn rbac_rules_and_webhooks_name_kube_derive_kinds_as_ours() {
    let rules = kubebuilder::rbac::registered();
    let harbor_rules: Vec<_> = rules
        .iter()
        .filter(|rule| *rule.groups == [GROUP])
        .collect();
    assert_eq!(harbor_rules.len(), 2);
    let roles = kubebuilder::rbac::to_yaml(&kubebuilder::rbac::roles(
        &rules,
        kubebuilder::rbac::DEFAULT_ROLE_NAME,
    ));
    assert!(roles.contains("  - harbors\n"), "{roles}");
    assert!(roles.contains("  - harbors/status\n"), "{roles}");

    let webhook = <HarborDefaulter as Declared>::WEBHOOK;
    assert_eq!(
        webhook.path.as_deref(),
        Some("/mutate-interop-kubebuilder-test-v1-harbor")
    );
    assert_eq!(
        kubebuilder::webhook::registered(),
        std::slice::from_ref(&webhook)
    );
    let manifests = kubebuilder::webhook::manifests(std::slice::from_ref(&webhook), &[])
        .unwrap()
        .to_yaml();
    assert!(manifests.contains("name: mharbor-v1.kb.io"), "{manifests}");
    // The webhook server takes the kube-derive kind as it takes ours.
    let webhooks = Webhooks::new().defaulter(HarborDefaulter);
    assert_eq!(webhooks.declarations(), [webhook]);
}

#[test]
fn our_types_embed_in_a_kube_derive_crd_with_the_schema_they_have_in_ours() {
    let ours =
        version_schema(&Dock::crd(), "v1")["properties"]["spec"]["properties"]["bounds"].clone();
    let theirs =
        version_schema(&Harbor::crd(), "v1")["properties"]["spec"]["properties"]["bounds"].clone();
    // The field's doc comment is the description in both.
    assert_eq!(ours["description"], "Its bounds.");
    assert_eq!(
        theirs["description"],
        "Its bounds, validated by the apiserver as in our CRDs."
    );
    let strip = |mut schema: Value| {
        schema.as_object_mut().unwrap().remove("description");
        schema
    };
    assert_eq!(strip(theirs.clone()), strip(ours));
    assert_eq!(
        theirs["x-kubernetes-validations"],
        json!([{"rule": "self.min <= self.max", "message": "min must not exceed max"}])
    );
    assert_eq!(theirs["properties"]["min"]["minimum"], json!(1.0));
    assert_eq!(theirs["required"], json!(["max", "min"]));
    // An `Option` of ours is `nullable` in kube-derive's CRD (kube-derive's doing), the rest
    // of the schema is ours.
    let deck =
        version_schema(&ferry::v2::Ferry::crd(), "v2")["properties"]["spec"]["properties"]["deck"]
            .clone();
    assert_eq!(deck["nullable"], true);
    let mut without = deck.clone();
    without.as_object_mut().unwrap().remove("nullable");
    assert_eq!(
        strip(without),
        strip(serde_json::to_value(<Bounds as kubebuilder::schema::Schema>::schema()).unwrap())
    );
    // Other schemars users get the same schema, named after the type.
    let schema = schemars::schema_for!(Bounds);
    assert_eq!(
        <Bounds as JsonSchema>::schema_name(),
        "Bounds",
        "schema name"
    );
    assert_eq!(
        schema.get("x-kubernetes-validations"),
        theirs.get("x-kubernetes-validations")
    );
}

/// The same spec, derived both ways: ours with `#[kubebuilder::resource]`, kube-derive's
/// with `#[derive(CustomResource, JsonSchema)]` over the same fields (k8s-openapi's own
/// `JsonSchema` for the embedded JobTemplateSpec).
pub mod measured {
    pub mod ours {
        use std::collections::BTreeMap;

        use k8s_openapi::api::batch::v1::JobTemplateSpec;

        /// What to do with a run while the previous one is still running.
        #[kubebuilder::schema]
        pub enum Policy {
            Allow,
            Forbid,
        }

        #[kubebuilder::resource(
            group = "measure.kubebuilder.test",
            version = "v1",
            kind = "Measured"
        )]
        pub struct MeasuredSpec {
            /// The schedule in Cron format.
            pub schedule: String,
            /// How many finished runs to keep.
            pub history: Option<i32>,
            /// What to do with concurrent runs.
            pub policy: Option<Policy>,
            /// Labels for the runs.
            pub labels: Option<BTreeMap<String, String>>,
            /// The Job each run creates.
            pub job_template: JobTemplateSpec,
        }
    }

    pub mod kube_derive {
        use std::collections::BTreeMap;

        use k8s_openapi::api::batch::v1::JobTemplateSpec;
        use kube::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        /// What to do with a run while the previous one is still running.
        #[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
        pub enum Policy {
            Allow,
            Forbid,
        }

        // In a group of its own, so that both CRDs install side by side.
        #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
        #[kube(
            group = "measure-kube-derive.kubebuilder.test",
            version = "v1",
            kind = "Measured",
            namespaced
        )]
        #[serde(rename_all = "camelCase")]
        pub struct MeasuredSpec {
            /// The schedule in Cron format.
            pub schedule: String,
            /// How many finished runs to keep.
            pub history: Option<i32>,
            /// What to do with concurrent runs.
            pub policy: Option<Policy>,
            /// Labels for the runs.
            pub labels: Option<BTreeMap<String, String>>,
            /// The Job each run creates.
            pub job_template: JobTemplateSpec,
        }
    }
}

/// How often each key occurs below a schema, and with which values for the list and map
/// types.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    nullable: usize,
    list_type: BTreeMap<String, usize>,
    list_map_keys: usize,
    map_type: BTreeMap<String, usize>,
    defaults: usize,
    descriptions: usize,
}

fn count(schema: &Value, counts: &mut Counts) {
    match schema {
        Value::Object(fields) => {
            for (key, value) in fields {
                match key.as_str() {
                    "nullable" if value == &Value::Bool(true) => counts.nullable += 1,
                    "x-kubernetes-list-type" => {
                        *counts
                            .list_type
                            .entry(value.as_str().unwrap().to_owned())
                            .or_default() += 1;
                    }
                    "x-kubernetes-list-map-keys" => counts.list_map_keys += 1,
                    "x-kubernetes-map-type" => {
                        *counts
                            .map_type
                            .entry(value.as_str().unwrap().to_owned())
                            .or_default() += 1;
                    }
                    "default" => counts.defaults += 1,
                    "description" if value.is_string() => counts.descriptions += 1,
                    _ => {}
                }
                // A property named like a key (`default`, `description`) is a schema.
                count(value, counts);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| count(item, counts)),
        _ => {}
    }
}

fn counts(schema: &Value) -> Counts {
    let mut counts = Counts::default();
    count(schema, &mut counts);
    counts
}

fn tally(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
}

/// The JSON pointers below `at` where the two schemas differ (a key present in one only, or
/// a leaf value that differs), at most `limit` of them.
fn differences(ours: &Value, theirs: &Value, at: &str, found: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let path = format!("{at}/{key}");
                match b.get(key) {
                    Some(other) => differences(value, other, &path, found),
                    None => found.push(format!("{path}: ours only")),
                }
            }
            for key in b.keys().filter(|key| !a.contains_key(*key)) {
                found.push(format!("{at}/{key}: kube-derive only"));
            }
        }
        (a, b) if a != b => found.push(format!("{at}: {a} vs {b}")),
        _ => {}
    }
}

#[test]
fn the_same_spec_derived_both_ways_gives_different_crd_schemas() {
    let ours = version_schema(&measured::ours::Measured::crd(), "v1");
    let theirs = version_schema(&measured::kube_derive::Measured::crd(), "v1");
    let spec = |schema: &Value| schema["properties"]["spec"].clone();
    let field = |schema: &Value, name: &str| spec(schema)["properties"][name].clone();

    // Scalars: the same, but every `Option` is nullable in kube-derive's.
    assert_eq!(
        field(&ours, "history"),
        json!({"description": "How many finished runs to keep.", "format": "int32", "type": "integer"})
    );
    assert_eq!(
        field(&theirs, "history"),
        json!({"description": "How many finished runs to keep.", "format": "int32", "nullable": true, "type": "integer"})
    );
    assert_eq!(
        field(&ours, "labels"),
        json!({"additionalProperties": {"type": "string"}, "description": "Labels for the runs.", "type": "object"})
    );
    assert_eq!(
        field(&theirs, "labels"),
        json!({"additionalProperties": {"type": "string"}, "description": "Labels for the runs.", "nullable": true, "type": "object"})
    );
    assert_eq!(
        field(&ours, "policy"),
        json!({"description": "What to do with concurrent runs.", "enum": ["Allow", "Forbid"], "type": "string"})
    );
    assert_eq!(
        field(&theirs, "policy"),
        json!({"description": "What to do with concurrent runs.", "enum": ["Allow", "Forbid", null], "nullable": true, "type": "string"})
    );
    assert_eq!(field(&ours, "schedule"), field(&theirs, "schedule"));
    assert_eq!(spec(&ours)["required"], json!(["jobTemplate", "schedule"]));
    assert_eq!(
        spec(&theirs)["required"],
        json!(["jobTemplate", "schedule"])
    );

    // The embedded JobTemplateSpec: controller-gen's metadata in ours, none in theirs.
    let ours_job = counts(&field(&ours, "jobTemplate"));
    let theirs_job = counts(&field(&theirs, "jobTemplate"));
    println!("JobTemplateSpec, ours: {ours_job:?}");
    println!("JobTemplateSpec, kube-derive: {theirs_job:?}");
    assert_eq!(
        ours_job,
        Counts {
            nullable: 0,
            list_type: tally(&[("atomic", 127), ("map", 27), ("set", 7)]),
            list_map_keys: 27,
            map_type: tally(&[("atomic", 55)]),
            defaults: 47,
            descriptions: ours_job.descriptions,
        }
    );
    assert_eq!(
        theirs_job,
        Counts {
            nullable: theirs_job.nullable,
            list_type: BTreeMap::new(),
            list_map_keys: 0,
            map_type: BTreeMap::new(),
            defaults: 0,
            descriptions: theirs_job.descriptions,
        }
    );
    assert!(theirs_job.nullable > 0);

    // Everything else that differs, root object included.
    let mut found = Vec::new();
    differences(&ours, &theirs, "", &mut found);
    let outside_job: Vec<&String> = found
        .iter()
        .filter(|path| !path.starts_with("/properties/spec/properties/jobTemplate/"))
        .collect();
    assert_eq!(
        outside_job,
        [
            "/description: \"Measured is the Schema for the measureds API.\" vs \"Auto-generated derived type for MeasuredSpec via `CustomResource`\"",
            "/properties/apiVersion: ours only",
            "/properties/kind: ours only",
            "/properties/metadata: ours only",
            "/properties/spec/properties/history/nullable: kube-derive only",
            "/properties/spec/properties/labels/nullable: kube-derive only",
            "/properties/spec/properties/policy/enum: [\"Allow\",\"Forbid\"] vs [\"Allow\",\"Forbid\",null]",
            "/properties/spec/properties/policy/nullable: kube-derive only",
            "/title: kube-derive only",
        ]
    );
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    for difference in &found {
        let (path, what) = difference.split_once(": ").unwrap();
        let key = path.rsplit('/').next().unwrap();
        let what = if what.ends_with("only") {
            what
        } else {
            "differs"
        };
        *by_key.entry(format!("{key}: {what}")).or_default() += 1;
    }
    println!("differences by key: {by_key:#?}");
    assert_eq!(
        by_key,
        tally(&[
            ("anyOf: ours only", 47),
            ("apiVersion: ours only", 1),
            ("default: ours only", 47),
            ("description: differs", 842),
            ("description: kube-derive only", 11),
            ("description: ours only", 6),
            ("enum: differs", 1),
            ("kind: ours only", 1),
            ("maxItems: ours only", 3),
            ("maximum: ours only", 1),
            ("metadata: ours only", 1),
            ("minLength: ours only", 3),
            ("minimum: ours only", 2),
            ("nullable: kube-derive only", 9),
            ("pattern: ours only", 17),
            ("properties: kube-derive only", 3),
            ("required: differs", 6),
            ("required: kube-derive only", 18),
            ("title: kube-derive only", 1),
            ("x-kubernetes-list-map-keys: ours only", 27),
            ("x-kubernetes-list-type: ours only", 161),
            ("x-kubernetes-map-type: ours only", 55),
            ("x-kubernetes-validations: ours only", 4),
        ])
    );

    // What the counts are made of, one example each.
    let pod = |schema: &Value| {
        field(schema, "jobTemplate")["properties"]["spec"]["properties"]["template"]["properties"]
            ["spec"]
            .clone()
    };
    let (ours_pod, theirs_pod) = (pod(&ours), pod(&theirs));
    let containers = |pod: &Value| pod["properties"]["containers"].clone();
    assert_eq!(containers(&ours_pod)["x-kubernetes-list-type"], "map");
    assert_eq!(
        containers(&ours_pod)["x-kubernetes-list-map-keys"],
        json!(["name"])
    );
    assert_eq!(containers(&theirs_pod).get("x-kubernetes-list-type"), None);
    let protocol = |pod: &Value| {
        containers(pod)["items"]["properties"]["ports"]["items"]["properties"]["protocol"].clone()
    };
    assert_eq!(protocol(&ours_pod)["default"], "TCP");
    assert_eq!(protocol(&theirs_pod).get("default"), None);
    // Go's `LocalObjectReference.Name` is optional (`+default=""`); k8s-openapi's is a
    // `String`, so schemars requires it.
    let pull_secret = |pod: &Value| pod["properties"]["imagePullSecrets"]["items"].clone();
    assert_eq!(pull_secret(&ours_pod).get("required"), None);
    assert_eq!(pull_secret(&theirs_pod)["required"], json!(["name"]));
    let config_map_key = |pod: &Value| {
        containers(pod)["items"]["properties"]["env"]["items"]["properties"]["valueFrom"]
            ["properties"]["configMapKeyRef"]["required"]
            .clone()
    };
    assert_eq!(config_map_key(&ours_pod), json!(["key"]));
    assert_eq!(config_map_key(&theirs_pod), json!(["key", "name"]));
    // Quantities: controller-gen's anyOf and pattern in ours; `nullable` in theirs.
    let size_limit = |pod: &Value| {
        pod["properties"]["volumes"]["items"]["properties"]["emptyDir"]["properties"]["sizeLimit"]
            .clone()
    };
    assert_eq!(
        size_limit(&ours_pod)["anyOf"],
        json!([{"type": "integer"}, {"type": "string"}])
    );
    assert!(size_limit(&ours_pod)["pattern"].is_string());
    assert_eq!(size_limit(&ours_pod)["x-kubernetes-int-or-string"], true);
    assert_eq!(
        size_limit(&theirs_pod),
        json!({"description": size_limit(&theirs_pod)["description"], "nullable": true, "x-kubernetes-int-or-string": true})
    );
    // An embedded ObjectMeta: controller-gen's bare object in ours, every field in theirs.
    let template_metadata =
        |schema: &Value| field(schema, "jobTemplate")["properties"]["metadata"].clone();
    assert_eq!(template_metadata(&ours).get("properties"), None);
    let fields = template_metadata(&theirs)["properties"]
        .as_object()
        .unwrap()
        .len();
    assert!(fields > 10, "{fields} ObjectMeta fields");
    // Descriptions: Go's line breaks in ours, k8s-openapi's joined lines in theirs.
    assert_eq!(
        field(&ours, "jobTemplate")["properties"]["spec"]["description"],
        "Specification of the desired behavior of the job.\n\
         More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status"
    );
    assert_eq!(
        field(&theirs, "jobTemplate")["properties"]["spec"]["description"],
        "Specification of the desired behavior of the job. \
         More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status"
    );
}

/// A manager serving [`HarborDefaulter`] for `namespace`, registered with the apiserver on
/// loopback, once the apiserver calls it.
async fn serve_harbor_webhook(
    client: &kube::Client,
    namespace: &str,
) -> kubebuilder_runtime::RunningManager {
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        ..ManagerArgs::default()
    };
    let running = Manager::new(client.clone(), args)
        .webhook_host("127.0.0.1".parse().unwrap())
        .webhooks(Webhooks::new().defaulter(HarborDefaulter))
        .enable_webhooks(true)
        .serve_webhooks_on_loopback(
            LoopbackRegistration::new(&format!("{namespace}-harbors")).only_namespace(namespace),
        )
        .start()
        .await
        .unwrap();
    // The apiserver picks new webhook configurations up through an informer.
    let harbors: Api<Harbor> = Api::namespaced(client.clone(), namespace);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let probe = harbor("probe", json!({"min": 1, "max": 1}));
    kubebuilder_envtest::eventually(
        "the Harbor webhook to be called",
        Duration::from_secs(20),
        || async {
            let created = harbors.create(&dry_run, &probe).await.ok()?;
            created.spec.note.is_some().then_some(())
        },
    )
    .await;
    running
}

fn harbor(name: &str, bounds: Value) -> Harbor {
    Harbor::new(
        name,
        HarborSpec {
            bounds: serde_json::from_value(bounds).unwrap(),
            note: None,
        },
    )
}

/// The status of a refused create: code and message.
fn refusal<K>(result: kube::Result<K>) -> (u16, String) {
    match result {
        Ok(_) => panic!("accepted"),
        Err(kube::Error::Api(status)) => (status.code, status.message),
        Err(other) => panic!("transport error: {other}"),
    }
}

#[tokio::test]
async fn both_kinds_of_crd_side_by_side_on_a_real_apiserver() {
    let plane = kubebuilder_envtest::shared();
    plane
        .install_crds(&[Dock::crd(), Harbor::crd()])
        .await
        .expect("our CRD and the kube-derive one embedding our type become Established");
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("kube-rs").await.unwrap();
    let docks: Api<Dock> = Api::namespaced(client.clone(), &namespace);
    let harbors: Api<Harbor> = Api::namespaced(client.clone(), &namespace);
    let running = serve_harbor_webhook(&client, &namespace).await;
    let create = PostParams::default();

    // One object of each.
    let bounds = json!({"min": 1, "max": 3, "label": "north"});
    let dock = Dock::new(
        "d",
        DockSpec {
            bounds: serde_json::from_value(bounds.clone()).unwrap(),
        },
    );
    let created = docks.create(&create, &dock).await.unwrap();
    assert_eq!(created.spec, dock.spec);
    let created = harbors.create(&create, &harbor("h", bounds)).await.unwrap();
    assert_eq!(created.spec.bounds.label.as_deref(), Some("north"));
    assert_eq!(
        created.spec.note.as_deref(),
        Some("defaulted by our webhook"),
        "our defaulting webhook serves the kube-derive kind"
    );

    // Our markers, inside the kube-derive CRD's embedded field: 422 with the field path,
    // as for our own kind.
    let cases = [
        (
            json!({"min": 0, "max": 3}),
            "spec.bounds.min: Invalid value: 0: spec.bounds.min in body should be greater than or equal to 1",
        ),
        (
            json!({"min": 1, "max": 11}),
            "spec.bounds.max: Invalid value: 11: spec.bounds.max in body should be less than or equal to 10",
        ),
        (
            json!({"min": 1, "max": 2, "label": "North"}),
            "spec.bounds.label: Invalid value: \"North\": spec.bounds.label in body should match '^[a-z]+$'",
        ),
        (
            json!({"min": 5, "max": 3}),
            "spec.bounds: Invalid value: min must not exceed max",
        ),
    ];
    for (index, (bounds, expected)) in cases.into_iter().enumerate() {
        let name = format!("bad-{index}");
        let (code, message) = refusal(
            harbors
                .create(&create, &harbor(&name, bounds.clone()))
                .await,
        );
        assert_eq!(code, 422, "{message}");
        assert!(
            message.contains(expected),
            "Harbor {bounds}: expected {expected:?} in {message:?}"
        );
        let dock = Dock::new(
            &name,
            DockSpec {
                bounds: serde_json::from_value(bounds.clone()).unwrap(),
            },
        );
        let (code, message) = refusal(docks.create(&create, &dock).await);
        assert_eq!(code, 422, "{message}");
        assert!(
            message.contains(expected),
            "Dock {bounds}: expected {expected:?} in {message:?}"
        );
    }
    running.shutdown().await.unwrap();
}

/// What the measured differences do on a real apiserver: the same object, created in our
/// CRD and in kube-derive's for the same spec.
#[tokio::test]
async fn the_measured_differences_on_a_real_apiserver() {
    let plane = kubebuilder_envtest::shared();
    plane
        .install_crds(&[
            measured::ours::Measured::crd(),
            measured::kube_derive::Measured::crd(),
        ])
        .await
        .expect("both CRDs become Established");
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("kube-rs-measured").await.unwrap();
    let api = |group: &str| {
        let resource = kube::core::ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk(
            group, "v1", "Measured",
        ));
        Api::<kube::core::DynamicObject>::namespaced_with(client.clone(), &namespace, &resource)
    };
    let ours = api("measure.kubebuilder.test");
    let theirs = api("measure-kube-derive.kubebuilder.test");
    let object = |group: &str, name: &str, pod: Value| -> kube::core::DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"),
            "kind": "Measured",
            "metadata": {"name": name},
            "spec": {
                "schedule": "@daily",
                "jobTemplate": {"spec": {"template": {"spec": pod}}},
            },
        }))
        .unwrap()
    };
    let create = |api: Api<kube::core::DynamicObject>, object: kube::core::DynamicObject| async move {
        api.create(&PostParams::default(), &object).await
    };
    let stored_pod = |object: &kube::core::DynamicObject| {
        object.data["spec"]["jobTemplate"]["spec"]["template"]["spec"].clone()
    };

    // A container port without a protocol: the upstream default (`TCP`) in ours only.
    let pod = json!({"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}]});
    let created = create(
        ours.clone(),
        object("measure.kubebuilder.test", "ports", pod.clone()),
    )
    .await
    .unwrap();
    assert_eq!(
        stored_pod(&created)["containers"][0]["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}])
    );
    let created = create(
        theirs.clone(),
        object("measure-kube-derive.kubebuilder.test", "ports", pod),
    )
    .await
    .unwrap();
    assert_eq!(
        stored_pod(&created)["containers"][0]["ports"],
        json!([{"containerPort": 80}])
    );

    // A pull secret without a name, which a Pod accepts: kube-derive's CRD refuses it.
    let pod = json!({"containers": [{"name": "c", "image": "busybox"}], "imagePullSecrets": [{}]});
    create(
        ours,
        object("measure.kubebuilder.test", "secrets", pod.clone()),
    )
    .await
    .expect("our CRD takes a LocalObjectReference without a name, as the Pod API does");
    let (code, message) = refusal(
        create(
            theirs,
            object("measure-kube-derive.kubebuilder.test", "secrets", pod),
        )
        .await,
    );
    assert_eq!(code, 422, "{message}");
    assert!(
        message.contains(
            "spec.jobTemplate.spec.template.spec.imagePullSecrets[0].name: Required value"
        ),
        "{message}"
    );
}

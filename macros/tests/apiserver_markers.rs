//! Every schema marker on a real kube-apiserver: the CRD of a test-only kind that uses them
//! all becomes Established, and per marker a valid object is accepted and an invalid one
//! refused with the apiserver's message (or, for markers without validation, the
//! apiserver's observable behaviour: defaulting, pruning, nullability).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

#[kubebuilder::schema]
pub struct Entry {
    pub name: String,
    #[kubebuilder(optional)]
    pub value: Option<String>,
}

/// Keeps fields it does not declare.
#[kubebuilder::schema(pruning(preserve_unknown_fields), struct_type = "atomic")]
pub struct Free {
    #[kubebuilder(optional)]
    pub known: Option<String>,
}

/// Drops fields it does not declare.
#[kubebuilder::schema]
pub struct Strict {
    #[kubebuilder(optional)]
    pub known: Option<String>,
}

#[kubebuilder::schema(validation(exactly_one_of = ["a", "b"]))]
pub struct Exactly {
    pub a: Option<String>,
    pub b: Option<String>,
}

#[kubebuilder::schema(validation(at_least_one_of = ["a", "b"]))]
pub struct AtLeast {
    pub a: Option<String>,
    pub b: Option<String>,
}

/// A key fixed at creation, and a pin that may be set once.
#[kubebuilder::schema]
pub struct Locked {
    #[kubebuilder(immutable)]
    pub key: String,
    #[kubebuilder(immutable)]
    pub pin: Option<String>,
}

/// A short code.
#[kubebuilder::schema(
    validation(max_length = 3),
    title = "Code",
    external_docs(url = "https://example.com/code")
)]
pub struct Code(String);

/// Exercises every schema marker.
#[kubebuilder::resource(
    group = "markers.test.kubebuilder.io",
    version = "v1",
    kind = "Sample",
    validation(x_validation(
        rule = "self.metadata.name.size() <= 20",
        message = "name at most 20 characters"
    ))
)]
#[kubebuilder::schema(validation(at_most_one_of = ["left", "right"], min_properties = 1))]
pub struct SampleSpec {
    #[kubebuilder(required)]
    pub must: String,
    #[kubebuilder(validation(minimum = 1, maximum = 10))]
    pub replicas: Option<i32>,
    #[kubebuilder(validation(minimum = 0, exclusive_minimum))]
    pub positive: Option<i32>,
    #[kubebuilder(validation(maximum = 10, exclusive_maximum))]
    pub below_ten: Option<i32>,
    #[kubebuilder(validation(multiple_of = 5))]
    pub fives: Option<i32>,
    #[kubebuilder(validation(min_length = 2, max_length = 4))]
    pub word: Option<String>,
    #[kubebuilder(validation(pattern = "^[a-z]+$"))]
    pub lower: Option<String>,
    #[kubebuilder(validation(min_items = 1, max_items = 2, unique_items = false))]
    pub pair: Option<Vec<String>>,
    #[kubebuilder(
        validation(min_properties = 1, max_properties = 1),
        map_type = "atomic"
    )]
    pub single: Option<BTreeMap<String, String>>,
    #[kubebuilder(validation(enum = ["a", "b"]), example = "a")]
    pub choice: Option<String>,
    #[kubebuilder(validation(format = "ipv4"))]
    pub address: Option<String>,
    #[kubebuilder(validation(type = "string"))]
    pub retyped: Option<i64>,
    #[kubebuilder(validation(x_int_or_string, max_length = 3))]
    pub port: Option<IntOrString>,
    #[kubebuilder(validation(x_validation(
        rule = "self.startsWith('x')",
        message = "must start with x",
        reason = "FieldValueForbidden"
    )))]
    pub prefixed: Option<String>,
    #[kubebuilder(optional)]
    pub left: Option<String>,
    #[kubebuilder(optional)]
    pub right: Option<String>,
    pub exactly: Option<Exactly>,
    pub at_least: Option<AtLeast>,
    #[kubebuilder(default = 3)]
    pub defaulted: Option<i32>,
    #[kubebuilder(default_json = r#"{"a": "b"}"#)]
    pub defaulted_map: Option<BTreeMap<String, String>>,
    #[kubebuilder(default = ["x"])]
    pub defaulted_list: Option<Vec<String>>,
    #[kubebuilder(nullable)]
    pub nullable: Option<String>,
    pub not_nullable: Option<String>,
    #[kubebuilder(list_type = "map", list_map_key = "name")]
    pub entries: Option<Vec<Entry>>,
    #[kubebuilder(list_type = "set")]
    pub tags: Option<Vec<String>>,
    #[kubebuilder(validation(items(max_length = 2, pattern = "^[0-9]+$")))]
    pub digits: Option<Vec<String>>,
    pub free: Option<Free>,
    pub strict: Option<Strict>,
    #[kubebuilder(validation(embedded_resource, type = "object"))]
    pub embedded: Option<serde_json::Value>,
    #[kubebuilder(validation(schemaless, x_preserve_unknown_fields), title = "Anything")]
    pub anything: Option<serde_json::Value>,
    #[kubebuilder(validation(max_length = 2))]
    pub code: Option<Code>,
    pub locked: Option<Locked>,
}

/// A namespace to create Samples in.
struct Fixture {
    api: Api<DynamicObject>,
    created: usize,
}

impl Fixture {
    async fn new() -> Fixture {
        let plane = kubebuilder_envtest::shared();
        plane
            .install_crds(&[Sample::crd()])
            .await
            .expect("a CRD using every marker is accepted and becomes Established");
        let namespace = plane.create_namespace("markers").await.unwrap();
        let api = Api::namespaced_with(
            plane.client().await.unwrap(),
            &namespace,
            &ApiResource::erase::<Sample>(&()),
        );
        Fixture { api, created: 0 }
    }

    /// Creates a Sample whose spec is `{"must": "x"}` plus `spec`; returns what was stored.
    async fn create_named(&mut self, name: &str, spec: Value) -> Result<Value, String> {
        let mut full = json!({"must": "x"});
        for (key, value) in spec.as_object().unwrap() {
            full[key] = value.clone();
        }
        let object: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "markers.test.kubebuilder.io/v1",
            "kind": "Sample",
            "metadata": {"name": name},
            "spec": full,
        }))
        .unwrap();
        match self.api.create(&PostParams::default(), &object).await {
            Ok(created) => Ok(created.data["spec"].clone()),
            Err(kube::Error::Api(status)) => Err(status.message),
            Err(other) => panic!("transport error: {other}"),
        }
    }

    /// Replaces the spec of the Sample `name` (read first for its resourceVersion).
    async fn replace(&mut self, name: &str, spec: Value) -> Result<Value, String> {
        let mut object = self.api.get(name).await.expect("the Sample exists");
        let mut full = json!({"must": "x"});
        for (key, value) in spec.as_object().unwrap() {
            full[key] = value.clone();
        }
        object.data["spec"] = full;
        match self
            .api
            .replace(name, &PostParams::default(), &object)
            .await
        {
            Ok(replaced) => Ok(replaced.data["spec"].clone()),
            Err(kube::Error::Api(status)) => Err(status.message),
            Err(other) => panic!("transport error: {other}"),
        }
    }

    async fn create(&mut self, spec: Value) -> Result<Value, String> {
        self.created += 1;
        let name = format!("s{}", self.created);
        self.create_named(&name, spec).await
    }

    async fn accepts(&mut self, spec: Value) -> Value {
        let shown = spec.to_string();
        self.create(spec)
            .await
            .unwrap_or_else(|message| panic!("{shown} was refused: {message}"))
    }

    async fn refuses(&mut self, spec: Value, expected: &str) {
        let shown = spec.to_string();
        match self.create(spec).await {
            Ok(_) => panic!("{shown} was accepted"),
            Err(message) => assert!(
                message.contains(expected),
                "{shown}: expected {expected:?} in {message:?}"
            ),
        }
    }
}

#[tokio::test]
async fn numeric_markers() {
    let mut sample = Fixture::new().await;
    sample
        .accepts(json!({"replicas": 10, "positive": 1, "belowTen": 9, "fives": 15}))
        .await;
    sample
        .refuses(
            json!({"replicas": 0}),
            "spec.replicas in body should be greater than or equal to 1",
        )
        .await;
    sample
        .refuses(
            json!({"replicas": 11}),
            "spec.replicas in body should be less than or equal to 10",
        )
        .await;
    sample
        .refuses(
            json!({"positive": 0}),
            "spec.positive in body should be greater than 0",
        )
        .await;
    sample
        .refuses(
            json!({"belowTen": 10}),
            "spec.belowTen in body should be less than 10",
        )
        .await;
    sample
        .refuses(
            json!({"fives": 7}),
            "spec.fives in body should be a multiple of 5",
        )
        .await;
}

#[tokio::test]
async fn string_markers() {
    let mut sample = Fixture::new().await;
    sample
        .accepts(json!({"word": "abcd", "lower": "abc", "choice": "b", "address": "10.0.0.1", "retyped": "text", "port": "abc"}))
        .await;
    sample.accepts(json!({"port": 8080})).await;
    sample
        .refuses(
            json!({"word": "a"}),
            "spec.word in body should be at least 2 chars long",
        )
        .await;
    sample
        .refuses(
            json!({"word": "abcde"}),
            "Too long: may not be more than 4 bytes",
        )
        .await;
    sample
        .refuses(
            json!({"lower": "ABC"}),
            "spec.lower in body should match '^[a-z]+$'",
        )
        .await;
    sample
        .refuses(
            json!({"choice": "c"}),
            r#"Unsupported value: "c": supported values: "a", "b""#,
        )
        .await;
    sample
        .refuses(
            json!({"address": "x"}),
            "spec.address in body must be of type ipv4",
        )
        .await;
    sample
        .refuses(
            json!({"retyped": 5}),
            "spec.retyped in body must be of type string",
        )
        .await;
    sample
        .refuses(
            json!({"port": "abcd"}),
            "Too long: may not be more than 3 bytes",
        )
        .await;
}

#[tokio::test]
async fn list_and_map_markers() {
    let mut sample = Fixture::new().await;
    sample
        .accepts(json!({"pair": ["a", "a"], "single": {"k": "v"}, "entries": [{"name": "a"}, {"name": "b"}],
                        "tags": ["x", "y"], "digits": ["1", "22"]}))
        .await;
    sample
        .refuses(
            json!({"pair": []}),
            "spec.pair in body should have at least 1 items",
        )
        .await;
    sample
        .refuses(
            json!({"pair": ["a", "b", "c"]}),
            "Too many: 3: must have at most 2 items",
        )
        .await;
    sample
        .refuses(
            json!({"single": {}}),
            "spec.single in body should have at least 1 properties",
        )
        .await;
    sample
        .refuses(
            json!({"single": {"a": "1", "b": "2"}}),
            "spec.single: Too many: 2: must have at most 1 item",
        )
        .await;
    sample
        .refuses(
            json!({"entries": [{"name": "a"}, {"name": "a"}]}),
            "spec.entries[1]: Duplicate value",
        )
        .await;
    sample
        .refuses(
            json!({"tags": ["x", "x"]}),
            r#"spec.tags[1]: Duplicate value: "x""#,
        )
        .await;
    sample
        .refuses(
            json!({"digits": ["123"]}),
            "Too long: may not be more than 2 bytes",
        )
        .await;
    sample
        .refuses(
            json!({"digits": ["a"]}),
            "spec.digits[0] in body should match '^[0-9]+$'",
        )
        .await;
}

#[tokio::test]
async fn cel_and_one_of_markers() {
    let mut sample = Fixture::new().await;
    sample
        .accepts(json!({"prefixed": "xyz", "left": "l", "exactly": {"a": "1"}, "atLeast": {"a": "1", "b": "2"}}))
        .await;
    sample
        .refuses(
            json!({"prefixed": "abc"}),
            "spec.prefixed: Forbidden: must start with x",
        )
        .await;
    sample
        .refuses(
            json!({"left": "l", "right": "r"}),
            "at most one of the fields in [left right] may be set",
        )
        .await;
    sample
        .refuses(
            json!({"exactly": {}}),
            "exactly one of the fields in [a b] must be set",
        )
        .await;
    sample
        .refuses(
            json!({"exactly": {"a": "1", "b": "2"}}),
            "exactly one of the fields in [a b] must be set",
        )
        .await;
    sample
        .refuses(
            json!({"atLeast": {}}),
            "at least one of the fields in [a b] must be set",
        )
        .await;
    let refused = sample
        .create_named("a-name-longer-than-twenty", json!({}))
        .await
        .unwrap_err();
    assert!(refused.contains("name at most 20 characters"), "{refused}");
}

#[tokio::test]
async fn required_and_type_level_markers() {
    let mut sample = Fixture::new().await;
    let without_must: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "markers.test.kubebuilder.io/v1", "kind": "Sample",
        "metadata": {"name": "no-must"}, "spec": {"replicas": 1}
    }))
    .unwrap();
    match sample
        .api
        .create(&PostParams::default(), &without_must)
        .await
    {
        Err(kube::Error::Api(status)) => assert!(
            status.message.contains("spec.must: Required value"),
            "{}",
            status.message
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // A field can tighten its type's rule (code: the type allows 3, the field 2).
    sample.accepts(json!({"code": "ab"})).await;
    sample
        .refuses(
            json!({"code": "abc"}),
            "Too long: may not be more than 2 bytes",
        )
        .await;
}

#[tokio::test]
async fn defaults_nullability_and_pruning() {
    let mut sample = Fixture::new().await;
    let stored = sample
        .accepts(json!({
            "nullable": null, "notNullable": null,
            "free": {"known": "k", "extra": 1}, "strict": {"known": "k", "extra": 1},
            "embedded": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}},
            "anything": {"deep": [1, 2]},
        }))
        .await;
    assert_eq!(stored["defaulted"], json!(3));
    assert_eq!(stored["defaultedMap"], json!({"a": "b"}));
    assert_eq!(stored["defaultedList"], json!(["x"]));
    assert_eq!(
        stored.get("nullable"),
        Some(&Value::Null),
        "a nullable field keeps its null"
    );
    assert_eq!(
        stored.get("notNullable"),
        None,
        "a null in a non-nullable field is pruned"
    );
    assert_eq!(stored["free"], json!({"known": "k", "extra": 1}));
    assert_eq!(stored["strict"], json!({"known": "k"}));
    assert_eq!(stored["embedded"]["data"], json!({"a": "b"}));
    assert_eq!(stored["anything"], json!({"deep": [1, 2]}));
    sample
        .refuses(
            json!({"embedded": {"metadata": {"name": "c"}}}),
            "spec.embedded.kind: Required value",
        )
        .await;
}

#[tokio::test]
async fn immutable_fields_keep_their_first_value() {
    let mut sample = Fixture::new().await;
    sample
        .create_named("locked", json!({"locked": {"key": "a"}}))
        .await
        .unwrap();
    sample
        .replace("locked", json!({"locked": {"key": "a"}, "word": "ab"}))
        .await
        .expect("an update that keeps the immutable field is accepted");
    let refused = sample
        .replace("locked", json!({"locked": {"key": "b"}}))
        .await
        .unwrap_err();
    assert!(
        refused.contains("spec.locked.key: Invalid value")
            && refused.contains("field is immutable"),
        "{refused}"
    );
    // An optional immutable field may be set once, then neither changed nor removed.
    sample
        .replace("locked", json!({"locked": {"key": "a", "pin": "1"}}))
        .await
        .expect("setting an unset immutable field is accepted");
    let changed = sample
        .replace("locked", json!({"locked": {"key": "a", "pin": "2"}}))
        .await
        .unwrap_err();
    assert!(changed.contains("field is immutable"), "{changed}");
    let removed = sample
        .replace("locked", json!({"locked": {"key": "a"}}))
        .await
        .unwrap_err();
    assert!(
        removed.contains("field pin is immutable once set"),
        "{removed}"
    );
}

//! The constructs of `fixtures/constructs.rs` on a real kube-apiserver: what their CRDs admit
//! and what the typed objects read back, construct by construct.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde_json::{Value, json};

use crate::fixtures::constructs::{
    Interval, Lean, LeanSpec, Payload, Route, RouteSpec, Settings, Shaped, ShapedSpec,
};
use crate::{name_of, our_crds};

/// Installs our CRD of the kind `K`; a client and a fresh namespace.
async fn install<K: Resource<DynamicType = ()>>() -> (kube::Client, String) {
    let plane = kubebuilder_envtest::shared();
    let name = format!("{}.{}", K::plural(&()), K::group(&()));
    let crd = our_crds()
        .into_iter()
        .find(|crd| name_of(crd) == name)
        .unwrap_or_else(|| panic!("{name} is registered"));
    plane.install_crds(&[crd]).await.unwrap();
    let namespace = plane.create_namespace("constructs").await.unwrap();
    (plane.client().await.unwrap(), namespace)
}

/// The object of kind `K` named `name` with these top-level fields, as JSON.
fn object<K: Resource<DynamicType = ()>>(name: &str, fields: Value) -> DynamicObject {
    let mut object = json!({
        "apiVersion": K::api_version(&()), "kind": K::kind(&()), "metadata": {"name": name},
    });
    for (key, value) in fields.as_object().expect("fields are an object") {
        object[key] = value.clone();
    }
    serde_json::from_value(object).unwrap()
}

/// Creates `object`; the apiserver's message when it refuses it.
async fn create(api: &Api<DynamicObject>, object: &DynamicObject) -> Result<DynamicObject, String> {
    match api.create(&PostParams::default(), object).await {
        Ok(created) => Ok(created),
        Err(kube::Error::Api(status)) => Err(status.message),
        Err(other) => panic!("transport error: {other}"),
    }
}

/// With every CRD we generate installed, nothing serves the skipped module's version.
#[tokio::test]
async fn a_skipped_version_module_is_not_served() {
    let plane = kubebuilder_envtest::shared();
    plane.install_crds(&our_crds()).await.unwrap();
    let client = plane.client().await.unwrap();
    match client
        .list_api_group_resources("skipped.conformance.kubebuilder.io/v1")
        .await
    {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 404, "{status:?}"),
        other => panic!("the skipped module's version is served: {other:?}"),
    }
}

#[tokio::test]
async fn fixed_size_arrays_byte_strings_and_custom_serde() {
    let (client, namespace) = install::<Shaped>().await;
    let spec = ShapedSpec {
        triple: Some([1, 2, 3]),
        pair: None,
        digest: Some([0, 1, 2, 255]),
        data: Some(BTreeMap::from([("k".to_owned(), b"v".to_vec())])),
        chunks: Some(vec![b"a".to_vec(), vec![0, 255]]),
        payload: Some(Payload(b"p".to_vec())),
        raw: None,
        every: Some(Interval { seconds: 90 }),
        extra: None,
    };
    let typed: Api<Shaped> = Api::namespaced(client.clone(), &namespace);
    let created = typed
        .create(&PostParams::default(), &Shaped::new("typed", spec.clone()))
        .await
        .expect("what serde writes is accepted");
    assert_eq!(created.spec, spec, "and reads back the same");
    let resource = ApiResource::erase::<Shaped>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client, &namespace, &resource);
    let stored = api.get("typed").await.unwrap();
    assert_eq!(
        stored.data["spec"],
        json!({"triple": [1, 2, 3], "digest": [0, 1, 2, 255], "data": {"k": "dg=="},
               "chunks": ["YQ==", "AP8="], "payload": "cA==", "every": "90s"}),
        "bytes are base64 strings everywhere, the interval its own string"
    );
    for (spec, refusal) in [
        (json!({"triple": [1, 2]}), "should have at least 3 items"),
        (json!({"triple": [1, 2, 3, 4]}), "must have at most 3 items"),
        (
            json!({"data": {"k": "not base64!"}}),
            "spec.data.k in body must be of type byte",
        ),
        (
            json!({"payload": 5}),
            "spec.payload in body must be of type byte",
        ),
        (json!({"every": "90"}), "spec.every in body should match"),
        (
            json!({"every": 90}),
            "spec.every in body must be of type string",
        ),
    ] {
        let refused = create(&api, &object::<Shaped>("raw", json!({ "spec": spec })))
            .await
            .unwrap_err();
        assert!(refused.contains(refusal), "{spec}: {refused}");
        // serde refuses the same.
        assert!(serde_json::from_value::<ShapedSpec>(spec).is_err());
    }
}

/// For each value of a field: the apiserver admits it exactly when serde reads it (the
/// candidates are well typed, as the apiserver refuses a mistyped field anyway), and what it
/// stores reads back as the value serde read.
#[tokio::test]
async fn enums_with_data_admit_exactly_what_serde_reads() {
    let (client, namespace) = install::<Route>().await;
    let resource = ApiResource::erase::<Route>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client, &namespace, &resource);
    let candidates = [
        ("source", json!({"Git": {"url": "u"}})),
        ("source", json!({"Git": {"url": "u", "branch": "b"}})),
        ("source", json!({"Image": {"name": "n"}})),
        ("source", json!({})),
        (
            "source",
            json!({"Git": {"url": "u"}, "Image": {"name": "n"}}),
        ),
        ("source", json!({"Image": {"tag": "t"}})),
        ("action", json!({"type": "Drop"})),
        ("action", json!({"type": "Redirect", "url": "u"})),
        (
            "action",
            json!({"type": "Redirect", "url": "u", "code": 301}),
        ),
        ("action", json!({"type": "Redirect"})),
        ("action", json!({"type": "Forward", "service": "s"})),
        ("action", json!({"type": "Forward", "port": 80})),
        ("action", json!({"type": "Drop", "url": "ignored by serde"})),
        ("action", json!({"type": "Jump"})),
        ("action", json!({"url": "u"})),
        ("port", json!(80)),
        ("port", json!("http")),
        ("port", json!(true)),
        ("endpoint", json!({"host": "h"})),
        ("endpoint", json!({"host": "h", "port": 1})),
        ("endpoint", json!({"ip": "1.2.3.4"})),
        ("endpoint", json!({"host": "h", "ip": "1.2.3.4"})),
        ("endpoint", json!({"port": 1})),
        ("endpoint", json!({})),
    ];
    for (index, (field, value)) in candidates.into_iter().enumerate() {
        let mut spec = json!({"source": {"Git": {"url": "u"}}});
        spec[field] = value;
        let by_serde = serde_json::from_value::<RouteSpec>(spec.clone());
        let object = object::<Route>(&format!("r{index}"), json!({ "spec": spec }));
        match (by_serde, create(&api, &object).await) {
            (Ok(read), Ok(stored)) => {
                let stored: RouteSpec = serde_json::from_value(stored.data["spec"].clone())
                    .unwrap_or_else(|e| panic!("{spec}: the stored object does not read: {e}"));
                assert_eq!(stored, read, "{spec}");
            }
            (Err(_), Err(_)) => {}
            (Ok(_), Err(refused)) => {
                panic!("{spec}: serde reads it, the apiserver refuses it: {refused}")
            }
            (Err(error), Ok(_)) => {
                panic!("{spec}: the apiserver accepts it, serde does not: {error}")
            }
        }
    }
}

#[tokio::test]
async fn a_spec_may_be_optional_or_absent() {
    let (client, namespace) = install::<Lean>().await;
    let resource = ApiResource::erase::<Lean>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &namespace, &resource);
    create(&api, &object::<Lean>("bare", json!({})))
        .await
        .expect("an object without its optional spec is accepted");
    let leans: Api<Lean> = Api::namespaced(client, &namespace);
    assert_eq!(leans.get("bare").await.unwrap().spec, LeanSpec::default());

    let (client, namespace) = install::<Settings>().await;
    let settings: Api<Settings> = Api::namespaced(client.clone(), &namespace);
    let value = Settings {
        metadata: ObjectMeta {
            name: Some("typed".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
        immutable: None,
        revision: 2,
    };
    let created = settings
        .create(&PostParams::default(), &value)
        .await
        .expect("a kind without spec is written with its fields at the top level");
    assert_eq!(
        (created.data, created.revision),
        (value.data, value.revision)
    );
    let resource = ApiResource::erase::<Settings>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(client, &namespace, &resource);
    let stored = api.get("typed").await.unwrap();
    assert_eq!(stored.data, json!({"data": {"k": "v"}, "revision": 2}));
    for (fields, refusal) in [
        (
            json!({"revision": 0}),
            "should be greater than or equal to 1",
        ),
        (json!({"data": {}}), "revision: Required value"),
    ] {
        let refused = create(&api, &object::<Settings>("raw", fields.clone()))
            .await
            .unwrap_err();
        assert!(refused.contains(refusal), "{fields}: {refused}");
    }
}

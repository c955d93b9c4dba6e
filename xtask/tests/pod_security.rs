//! Pod Security Admission: the manager's pod, as `cargo xtask build-installer` and `deploy`
//! render config/default, meets the `restricted` Pod Security Standard, and config/'s
//! Namespace enforces that standard. Checked by kube-apiserver's own PodSecurity admission
//! plugin (on by default), in a namespace labelled as config/'s Namespace is.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubebuilder_cli::kustomize::{self, Overrides};
use serde_json::{Value, json};

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";

/// What the apiserver answered a create: the status code, the `Warning` headers and the body.
struct Answer {
    status: u16,
    warnings: Vec<String>,
    body: String,
}

/// config/default's objects, as `cargo xtask build-installer` writes them.
fn rendered() -> Vec<Value> {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/default");
    kustomize::build(&config, &Overrides::default()).unwrap()
}

fn only<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let mut of_kind = objects.iter().filter(|object| object["kind"] == kind);
    let first = of_kind
        .next()
        .unwrap_or_else(|| panic!("no {kind} rendered"));
    assert!(of_kind.next().is_none(), "more than one {kind} rendered");
    first
}

/// The Namespace's Pod Security Admission labels.
fn pod_security_labels(namespace: &Value) -> BTreeMap<String, String> {
    let labels = namespace["metadata"]["labels"].as_object().unwrap();
    labels
        .iter()
        .filter(|(key, _)| key.starts_with(LABEL_PREFIX))
        .map(|(key, value)| (key.clone(), value.as_str().unwrap().to_owned()))
        .collect()
}

/// A pod made from the Deployment's template, as its ReplicaSet would make it.
fn pod_of(deployment: &Value, name: &str) -> Value {
    let template = &deployment["spec"]["template"];
    let mut metadata = template["metadata"].clone();
    metadata["name"] = json!(name);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]})
}

/// POSTs `object` to `path` (server-side dry run when `dry_run`), keeping the response
/// headers that kube's typed API drops: PodSecurity's warnings come back in them.
async fn create(client: &kube::Client, path: &str, object: &Value, dry_run: bool) -> Answer {
    let params = PostParams {
        dry_run,
        ..PostParams::default()
    };
    let request = kube::core::Request::new(path)
        .create(&params, serde_json::to_vec(object).unwrap())
        .unwrap();
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .unwrap();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|value| value.to_str().unwrap().to_owned())
        .collect();
    let status = response.status().as_u16();
    let body = response.into_body().collect_bytes().await.unwrap();
    Answer {
        status,
        warnings,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

#[tokio::test]
async fn the_manager_pod_is_admitted_under_the_restricted_standard_and_a_weaker_one_is_not() {
    let objects = rendered();
    let labels = pod_security_labels(only(&objects, "Namespace"));
    for mode in ["enforce", "warn"] {
        assert_eq!(
            labels
                .get(&format!("{LABEL_PREFIX}{mode}"))
                .map(String::as_str),
            Some("restricted"),
            "config/'s Namespace must {mode} the restricted standard: {labels:?}"
        );
    }

    let plane = kubebuilder_envtest::shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("pod-security").await.unwrap();
    Api::<Namespace>::all(client.clone())
        .patch(
            &namespace,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": labels}})),
        )
        .await
        .unwrap();

    let mut deployment = only(&objects, "Deployment").clone();
    deployment["metadata"]["namespace"] = json!(namespace);
    let pods = format!("/api/v1/namespaces/{namespace}/pods");
    let deployments = format!("/apis/apps/v1/namespaces/{namespace}/deployments");

    // The manager's pod is admitted, with nothing to warn about.
    let pod = pod_of(&deployment, "manager");
    let admitted = create(&client, &pods, &pod, true).await;
    assert_eq!(admitted.status, 201, "the manager's pod: {}", admitted.body);
    assert_eq!(admitted.warnings, Vec::<String>::new(), "the manager's pod");
    // So is its Deployment, which PodSecurity checks in warn mode only.
    let applied = create(&client, &deployments, &deployment, false).await;
    assert_eq!(applied.status, 201, "the Deployment: {}", applied.body);
    assert_eq!(applied.warnings, Vec::<String>::new(), "the Deployment");

    // The control: without runAsNonRoot the same pod is refused, naming the field, and a
    // Deployment of it is warned about: the checks above would see a weaker manifest.
    let weaken = |object: &mut Value, path: &str| {
        let context = object.pointer_mut(path).unwrap().as_object_mut().unwrap();
        assert!(context.remove("runAsNonRoot").is_some(), "{path}");
    };
    let mut weak_pod = pod.clone();
    weaken(&mut weak_pod, "/spec/securityContext");
    let refused = create(&client, &pods, &weak_pod, true).await;
    assert_eq!(refused.status, 403, "a root-capable pod: {}", refused.body);
    assert!(
        refused.body.contains("violates PodSecurity") && refused.body.contains("runAsNonRoot"),
        "{}",
        refused.body
    );
    let mut weak_deployment = deployment.clone();
    weak_deployment["metadata"]["name"] = json!("weakened");
    weaken(&mut weak_deployment, "/spec/template/spec/securityContext");
    let warned = create(&client, &deployments, &weak_deployment, true).await;
    assert_eq!(warned.status, 201, "{}", warned.body);
    assert!(
        warned.warnings.iter().any(|w| w.contains("runAsNonRoot")),
        "no PodSecurity warning for a root-capable Deployment: {:?}",
        warned.warnings
    );
}

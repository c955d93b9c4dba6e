//! Registering the served webhooks with an apiserver that reaches this process on the
//! loopback interface (a local control plane): Mutating/ValidatingWebhookConfigurations
//! with a `url` client config and the CA of the manager's in-memory loopback certificate
//! as `caBundle`, removed again on shutdown (see `Manager::serve_webhooks_on_loopback`).
//! The CRDs of converted kinds get the same: their `spec.conversion` calls the loopback
//! `/convert` until shutdown puts back what it was.
//! In a cluster the configurations come from `config/webhook`, the CRDs' conversion from
//! `cargo xtask manifests`, and their CA from cert-manager instead.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource};
use kubebuilder::conversion::CONVERT_PATH;
use kubebuilder::crd::Version;
use kubebuilder::webhook::Webhook;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Webhooks;

/// The field manager of the configurations written here.
const FIELD_MANAGER: &str = "kubebuilder-runtime";

/// How to register the served webhooks with a local apiserver.
#[derive(Clone, Debug)]
pub struct LoopbackRegistration {
    /// The name of both configurations (one mutating, one validating).
    pub name: String,
    /// Only objects in this namespace go through the webhooks (tests sharing one
    /// apiserver); every namespace when `None`.
    pub namespace: Option<String>,
}

/// The host the apiserver calls: the loopback serving certificate names it.
const LOOPBACK_HOST: &str = "127.0.0.1";

impl LoopbackRegistration {
    /// Configurations named `name`, calling `https://127.0.0.1:<port>`, for every
    /// namespace.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            namespace: None,
        }
    }

    /// Restricts the webhooks to objects in `namespace`.
    #[must_use]
    pub fn only_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Applies the configurations for `webhooks`, served on `port` with a certificate
    /// signed by `ca_pem` (server-side apply, so a rerun replaces a stale registration of
    /// the same name), and points the CRDs of the kinds they convert at `/convert`.
    pub(crate) async fn install(
        &self,
        client: &Client,
        webhooks: &Webhooks,
        port: u16,
        ca_pem: &str,
    ) -> Result<RegisteredWebhooks, kube::Error> {
        let entries = |mutating: bool| -> Vec<Value> {
            webhooks
                .declarations()
                .iter()
                .filter(|webhook| webhook.mutating == mutating)
                .map(|webhook| self.entry(webhook, port, ca_pem))
                .collect()
        };
        apply::<MutatingWebhookConfiguration>(client, &self.name, &entries(true)).await?;
        apply::<ValidatingWebhookConfiguration>(client, &self.name, &entries(false)).await?;
        let mut registered = RegisteredWebhooks {
            client: client.clone(),
            name: self.name.clone(),
            conversions: Vec::new(),
        };
        for hub in webhooks.converted_hubs() {
            let url = format!("https://{LOOPBACK_HOST}:{port}{CONVERT_PATH}");
            let conversion = json!({
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {"url": url, "caBundle": ByteString(ca_pem.as_bytes().to_vec())},
                    "conversionReviewVersions": ["v1"],
                },
            });
            let crd = crd_name(&hub);
            let previous = replace_conversion(client, &crd, conversion).await?;
            registered.conversions.push((crd, previous));
        }
        tracing::info!(name = %self.name, port, "webhooks registered on the loopback interface");
        Ok(registered)
    }

    fn entry(&self, webhook: &Webhook, port: u16, ca_pem: &str) -> Value {
        let path = webhook.path.as_deref().unwrap_or("/");
        let mut entry = json!({
            "name": webhook.name,
            "admissionReviewVersions": webhook.admission_review_versions,
            "clientConfig": {
                "url": format!("https://{LOOPBACK_HOST}:{port}{path}"),
                "caBundle": ByteString(ca_pem.as_bytes().to_vec()),
            },
            "failurePolicy": webhook.failure_policy,
            "sideEffects": webhook.side_effects,
            "rules": [{
                "apiGroups": webhook.groups,
                "apiVersions": webhook.versions,
                "operations": webhook.verbs,
                "resources": webhook.resources,
            }],
        });
        let optional = [
            (
                "matchPolicy",
                webhook.match_policy.as_deref().map(Value::from),
            ),
            ("timeoutSeconds", webhook.timeout_seconds.map(Value::from)),
            // Only mutating webhooks take a reinvocation policy.
            (
                "reinvocationPolicy",
                webhook
                    .reinvocation_policy
                    .as_deref()
                    .filter(|_| webhook.mutating)
                    .map(Value::from),
            ),
            (
                "namespaceSelector",
                self.namespace.as_ref().map(
                    |namespace| json!({"matchLabels": {"kubernetes.io/metadata.name": namespace}}),
                ),
            ),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                entry[key] = value;
            }
        }
        entry
    }
}

async fn apply<K>(client: &Client, name: &str, webhooks: &[Value]) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    if webhooks.is_empty() {
        return delete(&api, name).await;
    }
    let configuration = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": {"name": name},
        "webhooks": webhooks,
    });
    api.patch(
        name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(configuration),
    )
    .await?;
    Ok(())
}

async fn delete<K>(api: &Api<K>, name: &str) -> Result<(), kube::Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(()),
        Err(err) => Err(err),
    }
}

/// The CRD of the kind `hub` is a version of.
fn crd_name(hub: &Version) -> String {
    format!("{}.{}", hub.plural, hub.group)
}

/// Sets a CRD's `spec.conversion`, returning the one it had.
async fn replace_conversion(
    client: &Client,
    crd: &str,
    conversion: Value,
) -> Result<Value, kube::Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let current = api.get(crd).await?;
    let previous = serde_json::to_value(&current.spec.conversion).unwrap_or(Value::Null);
    set_conversion(&api, crd, conversion).await?;
    Ok(previous)
}

async fn set_conversion(
    api: &Api<CustomResourceDefinition>,
    crd: &str,
    conversion: Value,
) -> Result<(), kube::Error> {
    // `add` replaces the member when it is there (the apiserver always defaults one).
    let patch: json_patch::Patch = serde_json::from_value(
        json!([{"op": "add", "path": "/spec/conversion", "value": conversion}]),
    )
    .expect("a JSON patch");
    api.patch(crd, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await?;
    Ok(())
}

/// Webhook configurations and CRD conversions installed for a [`LoopbackRegistration`]
/// when the manager starts.
#[derive(Clone)]
pub struct RegisteredWebhooks {
    client: Client,
    name: String,
    /// Each CRD pointed at the loopback `/convert`, with the conversion it had.
    conversions: Vec<(String, Value)>,
}

impl RegisteredWebhooks {
    /// Deletes both configurations and puts back the CRDs' conversions (`None` when a CRD
    /// had none).
    pub async fn remove(self) -> Result<(), kube::Error> {
        for (crd, previous) in &self.conversions {
            let previous = if previous.is_null() {
                json!({"strategy": "None"})
            } else {
                previous.clone()
            };
            let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
            match set_conversion(&api, crd, previous).await {
                Ok(()) => {}
                Err(kube::Error::Api(status)) if status.is_not_found() => {}
                Err(err) => return Err(err),
            }
        }
        delete(
            &Api::<MutatingWebhookConfiguration>::all(self.client.clone()),
            &self.name,
        )
        .await?;
        delete(
            &Api::<ValidatingWebhookConfiguration>::all(self.client.clone()),
            &self.name,
        )
        .await?;
        tracing::info!(name = %self.name, "webhook configurations removed");
        Ok(())
    }
}

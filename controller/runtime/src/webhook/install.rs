//! Registering the served webhooks with an apiserver that reaches this process on the
//! loopback interface (a local control plane): Mutating/ValidatingWebhookConfigurations
//! with a `url` client config and the local CA as `caBundle`, removed again on shutdown.
//! In a cluster the configurations come from `config/webhook` and cert-manager instead.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{Client, Resource};
use kubebuilder::webhook::Webhook;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The field manager of the configurations written here.
const FIELD_MANAGER: &str = "kubebuilder-runtime";

/// How to register the served webhooks with a local apiserver.
#[derive(Clone, Debug)]
pub struct LoopbackRegistration {
    /// The name of both configurations (one mutating, one validating).
    pub name: String,
    /// The CA (PEM) that signed the webhook server's certificate.
    pub ca_bundle: String,
    /// The host the apiserver calls; the serving certificate must name it.
    pub host: String,
    /// Only objects in this namespace go through the webhooks (tests sharing one
    /// apiserver); every namespace when `None`.
    pub namespace: Option<String>,
}

impl LoopbackRegistration {
    /// Configurations named `name`, calling `https://127.0.0.1:<port>` trusted through
    /// `ca_bundle`, for every namespace.
    pub fn new(name: &str, ca_bundle: &str) -> Self {
        Self {
            name: name.to_owned(),
            ca_bundle: ca_bundle.to_owned(),
            host: "127.0.0.1".to_owned(),
            namespace: None,
        }
    }

    /// Restricts the webhooks to objects in `namespace`.
    #[must_use]
    pub fn only_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Applies the configurations for `webhooks`, served on `port` (server-side apply,
    /// so a rerun replaces a stale registration of the same name).
    pub async fn install(
        &self,
        client: &Client,
        webhooks: &[Webhook],
        port: u16,
    ) -> Result<RegisteredWebhooks, kube::Error> {
        let entries = |mutating: bool| -> Vec<Value> {
            webhooks
                .iter()
                .filter(|webhook| webhook.mutating == mutating)
                .map(|webhook| self.entry(webhook, port))
                .collect()
        };
        apply::<MutatingWebhookConfiguration>(client, &self.name, &entries(true)).await?;
        apply::<ValidatingWebhookConfiguration>(client, &self.name, &entries(false)).await?;
        tracing::info!(name = %self.name, port, "webhook configurations registered on the loopback interface");
        Ok(RegisteredWebhooks {
            client: client.clone(),
            name: self.name.clone(),
        })
    }

    fn entry(&self, webhook: &Webhook, port: u16) -> Value {
        let path = webhook.path.unwrap_or("/");
        let mut entry = json!({
            "name": webhook.name,
            "admissionReviewVersions": webhook.admission_review_versions,
            "clientConfig": {
                "url": format!("https://{}:{port}{path}", self.host),
                "caBundle": ByteString(self.ca_bundle.clone().into_bytes()),
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
            ("matchPolicy", webhook.match_policy.map(Value::from)),
            ("timeoutSeconds", webhook.timeout_seconds.map(Value::from)),
            // Only mutating webhooks take a reinvocation policy.
            (
                "reinvocationPolicy",
                webhook
                    .reinvocation_policy
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

/// Webhook configurations installed by [`LoopbackRegistration::install`].
#[derive(Clone)]
pub struct RegisteredWebhooks {
    client: Client,
    name: String,
}

impl RegisteredWebhooks {
    /// Deletes both configurations.
    pub async fn remove(self) -> Result<(), kube::Error> {
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

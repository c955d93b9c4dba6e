//! Admission webhook declarations: what `#[kubebuilder::webhook(...)]` records on a
//! defaulter or validator type. The same value renders `config/webhook/manifests.yaml`
//! and tells the webhook server which path serves the type, so both come from one place.
//!
//! Like RBAC rules and CRDs, declarations are registered with `inventory` at link time, so
//! `cargo xtask manifests` sees every webhook of the crates the project's declarations
//! binary links (see [`crate::declarations`]) without a list.

use std::fmt;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use kubebuilder_model::Text;
pub use kubebuilder_model::webhook::{
    Configuration, DEFAULT_MUTATING_CONFIGURATION, DEFAULT_SERVICE_NAME, DEFAULT_SERVICE_NAMESPACE,
    DEFAULT_VALIDATING_CONFIGURATION, Webhook,
};

/// Implemented by the attribute for the type it sits on: the webhook that type serves.
pub trait Declared {
    /// The webhook, as registered for `cargo xtask manifests`; the webhook server serves
    /// the type at its `path`.
    const WEBHOOK: Webhook;
}

/// A kind a webhook can be declared for (`#[kubebuilder::webhook(for = Kind, …)]`): the
/// names the webhook's rule and default path take. The kinds of `#[kubebuilder::resource]`
/// and k8s-openapi's kinds have it.
pub trait Target {
    /// The API group, `""` for the core group.
    const GROUP: &'static str;
    /// The API version (`v1`).
    const VERSION: &'static str;
    /// The kind (`CronJob`).
    const KIND: &'static str;
    /// The resource: the kind's plural (`cronjobs`).
    const PLURAL: &'static str;
}

impl<K: k8s_openapi::Resource> Target for K {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::URL_PATH_SEGMENT;
}

/// Implemented by the attribute: the kinds its type may be registered for with the webhook
/// server. Declared `for` a kind, that kind alone; declared with groups and resources, any.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is declared for another kind than `{K}`",
    label = "its `#[kubebuilder::webhook(for = …)]` names another kind",
    note = "register it for the kind its attribute names, or change `for`"
)]
pub trait Serves<K: ?Sized> {}

/// Every webhook registered by the crates linked into this binary.
pub fn registered() -> Vec<Webhook> {
    inventory::iter::<Webhook>.into_iter().cloned().collect()
}

/// Every configuration name registered by the crates linked into this binary.
pub fn registered_configurations() -> Vec<Configuration> {
    inventory::iter::<Configuration>
        .into_iter()
        .cloned()
        .collect()
}

/// `config/webhook/manifests.yaml`: at most one MutatingWebhookConfiguration, then at most
/// one ValidatingWebhookConfiguration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifests {
    /// Every mutating webhook; `None` when there is none.
    pub mutating: Option<MutatingWebhookConfiguration>,
    /// Every validating webhook; `None` when there is none.
    pub validating: Option<ValidatingWebhookConfiguration>,
}

/// Why the webhook configurations do not render.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Two `webhook_configuration` declarations for the same kind of configuration.
    DuplicateConfiguration {
        /// Whether the declarations name the mutating configuration (else the validating one).
        mutating: bool,
        /// The names declared, sorted.
        names: Vec<String>,
    },
    /// A webhook's `patch` does not leave a webhook of the admissionregistration API.
    InvalidPatch {
        /// The webhook's name.
        webhook: String,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::DuplicateConfiguration { mutating, names } => {
                let kind = if *mutating { "mutating" } else { "validating" };
                write!(
                    f,
                    "duplicate {kind} #[kubebuilder::webhook_configuration] declarations: {}",
                    names.join(", ")
                )
            }
            Error::InvalidPatch { webhook, reason } => {
                write!(f, "the patch of webhook {webhook}: {reason}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// The webhook configurations controller-gen's `webhook` generator writes for these
/// declarations: webhooks sorted by name (duplicates kept), one rule each.
pub fn manifests(
    webhooks: &[Webhook],
    configurations: &[Configuration],
) -> Result<Manifests, Error> {
    let mut sorted = webhooks.to_vec();
    // controller-gen sorts by name only; the path breaks ties so duplicates stay deterministic.
    sorted.sort_by(|a, b| (&a.name, &a.path, &a.url).cmp(&(&b.name, &b.path, &b.url)));
    let (mutating, validating): (Vec<_>, Vec<_>) = sorted.iter().partition(|w| w.mutating);
    let mut mutating = mutating
        .into_iter()
        .map(|webhook| patched(to_mutating(webhook), webhook))
        .collect::<Result<Vec<_>, _>>()?;
    let mut validating = validating
        .into_iter()
        .map(|webhook| patched(to_validating(webhook), webhook))
        .collect::<Result<Vec<_>, _>>()?;
    // A patch may rename a webhook; controller-gen sorts the patched entries (stably here).
    mutating.sort_by(|a, b| a.name.cmp(&b.name));
    validating.sort_by(|a, b| a.name.cmp(&b.name));

    let mutating_name = configuration_name(configurations, true)?;
    let validating_name = configuration_name(configurations, false)?;
    Ok(Manifests {
        mutating: (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
            metadata: named(mutating_name.unwrap_or(DEFAULT_MUTATING_CONFIGURATION)),
            webhooks: Some(mutating),
        }),
        validating: (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
            metadata: named(validating_name.unwrap_or(DEFAULT_VALIDATING_CONFIGURATION)),
            webhooks: Some(validating),
        }),
    })
}

impl Manifests {
    /// Whether there is no configuration: no webhook is declared.
    pub fn is_empty(&self) -> bool {
        self.mutating.is_none() && self.validating.is_none()
    }

    /// The configurations as JSON values, in file order.
    pub fn to_values(&self) -> Vec<serde_json::Value> {
        let mutating = self.mutating.as_ref().map(serde_json::to_value);
        let validating = self.validating.as_ref().map(serde_json::to_value);
        mutating
            .into_iter()
            .chain(validating)
            .map(|value| value.expect("webhook configurations always serialise"))
            .collect()
    }

    /// `manifests.yaml` as controller-gen writes it.
    pub fn to_yaml(&self) -> String {
        crate::yaml::to_documents(&self.to_values())
    }
}

fn configuration_name(
    configurations: &[Configuration],
    mutating: bool,
) -> Result<Option<&str>, Error> {
    let mut names: Vec<_> = configurations
        .iter()
        .filter(|c| c.mutating == mutating)
        .map(|c| &*c.name)
        .collect();
    names.sort_unstable();
    match names.as_slice() {
        [] => Ok(None),
        [name] => Ok(Some(name)),
        _ => Err(Error::DuplicateConfiguration {
            mutating,
            names: names.into_iter().map(str::to_owned).collect(),
        }),
    }
}

fn named(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..Default::default()
    }
}

fn strings(items: &[Text]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn client_config(webhook: &Webhook) -> WebhookClientConfig {
    WebhookClientConfig {
        service: webhook.path.as_ref().map(|path| ServiceReference {
            name: webhook.service_name.to_string(),
            namespace: webhook.service_namespace.to_string(),
            path: Some(path.to_string()),
            port: webhook.service_port,
        }),
        url: webhook.url.as_ref().map(Text::to_string),
        ca_bundle: None,
    }
}

fn rules(webhook: &Webhook) -> Vec<RuleWithOperations> {
    vec![RuleWithOperations {
        api_groups: Some(strings(&webhook.groups)),
        api_versions: Some(strings(&webhook.versions)),
        operations: Some(strings(&webhook.verbs)),
        resources: Some(strings(&webhook.resources)),
        scope: None,
    }]
}

fn to_mutating(webhook: &Webhook) -> MutatingWebhook {
    MutatingWebhook {
        admission_review_versions: strings(&webhook.admission_review_versions),
        client_config: client_config(webhook),
        failure_policy: Some(webhook.failure_policy.to_string()),
        match_policy: webhook.match_policy.as_ref().map(Text::to_string),
        name: webhook.name.to_string(),
        reinvocation_policy: webhook.reinvocation_policy.as_ref().map(Text::to_string),
        rules: Some(rules(webhook)),
        side_effects: webhook.side_effects.to_string(),
        timeout_seconds: webhook.timeout_seconds,
        ..Default::default()
    }
}

fn to_validating(webhook: &Webhook) -> ValidatingWebhook {
    ValidatingWebhook {
        admission_review_versions: strings(&webhook.admission_review_versions),
        client_config: client_config(webhook),
        failure_policy: Some(webhook.failure_policy.to_string()),
        match_policy: webhook.match_policy.as_ref().map(Text::to_string),
        name: webhook.name.to_string(),
        rules: Some(rules(webhook)),
        side_effects: webhook.side_effects.to_string(),
        timeout_seconds: webhook.timeout_seconds,
        ..Default::default()
    }
}

/// The entry with the webhook's `patch` applied as controller-gen applies it (a strategic
/// merge patch): objects merge, `null` removes a field, a list is replaced, but
/// `matchConditions` merge by `name`. What is left must read back as the API type whole:
/// k8s-openapi's types skip fields they do not know, controller-gen's strict decoding
/// refuses them.
fn patched<T: Serialize + DeserializeOwned>(entry: T, webhook: &Webhook) -> Result<T, Error> {
    let Some(patch) = &webhook.patch else {
        return Ok(entry);
    };
    let invalid = |reason: String| Error::InvalidPatch {
        webhook: webhook.name.to_string(),
        reason,
    };
    let patch: Value = serde_json::from_str(patch).map_err(|error| invalid(error.to_string()))?;
    let mut value = serde_json::to_value(&entry).expect("webhooks serialise");
    merge(&mut value, &patch);
    let read: T =
        serde_json::from_value(value.clone()).map_err(|error| invalid(error.to_string()))?;
    let written = serde_json::to_value(&read).expect("webhooks serialise");
    match unread(&value, &written, "") {
        Some(path) => Err(invalid(format!(
            "`{path}` is not a field of the API's webhook"
        ))),
        None => Ok(read),
    }
}

/// Merges `patch` into `target` (see [`patched`]).
fn merge(target: &mut Value, patch: &Value) {
    let (Value::Object(target), Value::Object(patch)) = (&mut *target, patch) else {
        *target = without_nulls(patch);
        return;
    };
    for (key, value) in patch {
        match (target.get_mut(key), value) {
            (_, Value::Null) => {
                target.remove(key);
            }
            (Some(Value::Array(existing)), Value::Array(items)) if key == "matchConditions" => {
                merge_by_name(existing, items);
            }
            (Some(existing), _) => merge(existing, value),
            (None, _) => {
                target.insert(key.clone(), without_nulls(value));
            }
        }
    }
}

/// A list merged by its items' `name`: a patched item merges into the one of the same
/// name, or is appended.
fn merge_by_name(existing: &mut Vec<Value>, items: &[Value]) {
    for item in items {
        let name = item.get("name");
        match existing
            .iter_mut()
            .find(|e| name.is_some() && e.get("name") == name)
        {
            Some(found) => merge(found, item),
            None => existing.push(without_nulls(item)),
        }
    }
}

fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), without_nulls(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// The path of the first field of `patched` that the API type did not read back.
fn unread(patched: &Value, written: &Value, path: &str) -> Option<String> {
    match (patched, written) {
        (Value::Object(patched), Value::Object(written)) => {
            patched.iter().find_map(|(key, value)| {
                let path = format!("{path}.{key}");
                match written.get(key) {
                    Some(read) => unread(value, read, &path),
                    None => Some(path),
                }
            })
        }
        (Value::Array(patched), Value::Array(written)) => patched
            .iter()
            .zip(written)
            .enumerate()
            .find_map(|(i, (value, read))| unread(value, read, &format!("{path}[{i}]"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;

    use super::*;

    const DEFAULTER: Webhook = Webhook {
        name: Cow::Borrowed("mcronjob-v1.kb.io"),
        mutating: true,
        path: Some(Cow::Borrowed(
            "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
        )),
        url: None,
        failure_policy: Cow::Borrowed("Fail"),
        match_policy: None,
        side_effects: Cow::Borrowed("None"),
        groups: Cow::Borrowed(&[Cow::Borrowed("batch.tutorial.kubebuilder.io")]),
        resources: Cow::Borrowed(&[Cow::Borrowed("cronjobs")]),
        verbs: Cow::Borrowed(&[Cow::Borrowed("CREATE"), Cow::Borrowed("UPDATE")]),
        versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
        admission_review_versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
        reinvocation_policy: None,
        timeout_seconds: None,
        service_name: Cow::Borrowed(DEFAULT_SERVICE_NAME),
        service_namespace: Cow::Borrowed(DEFAULT_SERVICE_NAMESPACE),
        service_port: None,
        patch: None,
    };

    const VALIDATOR: Webhook = Webhook {
        name: Cow::Borrowed("vcronjob-v1.kb.io"),
        mutating: false,
        path: Some(Cow::Borrowed(
            "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
        )),
        ..DEFAULTER
    };

    #[test]
    fn the_tutorial_webhooks_render_as_controller_gen_writes_them() {
        let manifests = manifests(&[VALIDATOR, DEFAULTER], &[]).unwrap();
        assert_eq!(
            manifests.to_yaml(),
            "---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /mutate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: mcronjob-v1.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: validating-webhook-configuration
webhooks:
- admissionReviewVersions:
  - v1
  clientConfig:
    service:
      name: webhook-service
      namespace: system
      path: /validate-batch-tutorial-kubebuilder-io-v1-cronjob
  failurePolicy: Fail
  name: vcronjob-v1.kb.io
  rules:
  - apiGroups:
    - batch.tutorial.kubebuilder.io
    apiVersions:
    - v1
    operations:
    - CREATE
    - UPDATE
    resources:
    - cronjobs
  sideEffects: None
"
        );
    }

    #[test]
    fn webhooks_are_sorted_by_name_and_duplicates_kept() {
        let b = Webhook {
            name: Cow::Borrowed("b.example.com"),
            ..DEFAULTER
        };
        let a = Webhook {
            name: Cow::Borrowed("a.example.com"),
            ..DEFAULTER
        };
        let got = manifests(&[b.clone(), a, b], &[]).unwrap();
        let names: Vec<_> = got.mutating.unwrap().webhooks.unwrap();
        let names: Vec<_> = names.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["a.example.com", "b.example.com", "b.example.com"]);
        assert!(got.validating.is_none());
    }

    #[test]
    fn url_service_port_and_optional_fields_render() {
        let webhook = Webhook {
            path: None,
            url: Some(Cow::Borrowed("https://hooks.example.com/mutate")),
            match_policy: Some(Cow::Borrowed("Equivalent")),
            reinvocation_policy: Some(Cow::Borrowed("IfNeeded")),
            timeout_seconds: Some(5),
            ..DEFAULTER
        };
        let hook = &manifests(&[webhook], &[])
            .unwrap()
            .mutating
            .unwrap()
            .webhooks
            .unwrap()[0];
        assert_eq!(hook.client_config.service, None);
        assert_eq!(
            hook.client_config.url.as_deref(),
            Some("https://hooks.example.com/mutate")
        );
        assert_eq!(hook.match_policy.as_deref(), Some("Equivalent"));
        assert_eq!(hook.reinvocation_policy.as_deref(), Some("IfNeeded"));
        assert_eq!(hook.timeout_seconds, Some(5));

        let ported = Webhook {
            service_name: Cow::Borrowed("svc"),
            service_namespace: Cow::Borrowed("ns"),
            service_port: Some(8443),
            patch: None,
            ..VALIDATOR
        };
        let hook = &manifests(&[ported], &[])
            .unwrap()
            .validating
            .unwrap()
            .webhooks
            .unwrap()[0];
        let service = hook.client_config.service.as_ref().unwrap();
        assert_eq!(
            (service.name.as_str(), service.namespace.as_str()),
            ("svc", "ns")
        );
        assert_eq!(service.port, Some(8443));
    }

    #[test]
    fn configuration_names_replace_the_defaults() {
        let names = [
            Configuration {
                mutating: true,
                name: Cow::Borrowed("my-mutating"),
            },
            Configuration {
                mutating: false,
                name: Cow::Borrowed("my-validating"),
            },
        ];
        let got = manifests(&[DEFAULTER, VALIDATOR], &names).unwrap();
        assert_eq!(
            got.mutating.unwrap().metadata.name.as_deref(),
            Some("my-mutating")
        );
        assert_eq!(
            got.validating.unwrap().metadata.name.as_deref(),
            Some("my-validating")
        );
    }

    #[test]
    fn two_names_for_one_kind_of_configuration_are_refused() {
        let names = [
            Configuration {
                mutating: true,
                name: Cow::Borrowed("b"),
            },
            Configuration {
                mutating: true,
                name: Cow::Borrowed("a"),
            },
        ];
        let error = manifests(&[DEFAULTER], &names).unwrap_err();
        assert_eq!(
            error.to_string(),
            "duplicate mutating #[kubebuilder::webhook_configuration] declarations: a, b"
        );
    }

    fn patched_defaulter(patch: &'static str) -> Result<serde_json::Value, Error> {
        let webhook = Webhook {
            patch: Some(Cow::Borrowed(patch)),
            ..DEFAULTER
        };
        let manifests = manifests(&[webhook], &[])?;
        Ok(manifests.to_values()[0]["webhooks"][0].clone())
    }

    #[test]
    fn a_patch_merges_objects_removes_nulls_and_replaces_lists() {
        let entry = patched_defaulter(
            r#"{"namespaceSelector": {"matchLabels": {"env": "prod", "gone": null}},
                "clientConfig": {"service": {"port": 8443}},
                "timeoutSeconds": null,
                "admissionReviewVersions": ["v1beta1"],
                "matchConditions": [{"name": "not-system", "expression": "true"}]}"#,
        )
        .unwrap();
        assert_eq!(
            entry["namespaceSelector"],
            json!({"matchLabels": {"env": "prod"}})
        );
        assert_eq!(
            entry["clientConfig"]["service"],
            json!({"name": "webhook-service", "namespace": "system",
                   "path": "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob", "port": 8443})
        );
        assert_eq!(entry.get("timeoutSeconds"), None);
        assert_eq!(entry["admissionReviewVersions"], json!(["v1beta1"]));
        assert_eq!(
            entry["matchConditions"],
            json!([{"name": "not-system", "expression": "true"}])
        );
    }

    #[test]
    fn match_conditions_merge_by_name() {
        let mut existing = vec![
            json!({"name": "a", "expression": "1"}),
            json!({"name": "b", "expression": "2"}),
        ];
        merge_by_name(
            &mut existing,
            &[
                json!({"name": "b", "expression": "3"}),
                json!({"name": "c", "expression": "4"}),
            ],
        );
        assert_eq!(
            existing,
            [
                json!({"name": "a", "expression": "1"}),
                json!({"name": "b", "expression": "3"}),
                json!({"name": "c", "expression": "4"})
            ]
        );
    }

    #[test]
    fn a_patch_must_leave_a_webhook_of_the_api() {
        let error =
            patched_defaulter(r#"{"namespaceSelector": {"matchLabel": {"a": "b"}}}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the patch of webhook mcronjob-v1.kb.io: `.namespaceSelector.matchLabel` is not a field of the API's webhook"
        );
        let error = patched_defaulter(r#"{"timeoutSeconds": "ten"}"#).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "the patch of webhook mcronjob-v1.kb.io: invalid type: string \"ten\""
            ),
            "{error}"
        );
    }
}

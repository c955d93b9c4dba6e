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
use serde::{Deserialize, Serialize};

/// One `+kubebuilder:webhook` marker's worth of data, normalised by the attribute the way
/// controller-gen normalises the marker: verbs upper-cased (`CREATE`), `core` group
/// rewritten to `""`, policies in their API spelling (`Fail`, `Equivalent`, `IfNeeded`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// `webhooks[].name`: a domain of at least three segments (`mcronjob-v1.kb.io`).
    pub name: &'static str,
    /// `true` for a defaulter (in the MutatingWebhookConfiguration), `false` for a
    /// validator (in the ValidatingWebhookConfiguration).
    pub mutating: bool,
    /// `clientConfig.service.path`; exactly one of `path` and `url` is set. When the
    /// attribute names neither, it derives kubebuilder's default path
    /// (`/mutate-<group with dots as dashes>-<version>-<kind lowercased>`, or `/validate-…`).
    pub path: Option<&'static str>,
    /// `clientConfig.url`: an `https://` URL the apiserver calls instead of the Service.
    pub url: Option<&'static str>,
    /// `failurePolicy`: `Fail` or `Ignore`, whether an admission fails when the webhook
    /// cannot be called.
    pub failure_policy: &'static str,
    /// `matchPolicy`: `Exact` or `Equivalent`; `None` leaves the apiserver's default
    /// (`Equivalent`).
    pub match_policy: Option<&'static str>,
    /// `sideEffects`: `None` or `NoneOnDryRun`, the only values v1 configurations accept.
    pub side_effects: &'static str,
    /// The rule's `apiGroups`, the core group as `""`.
    pub groups: &'static [&'static str],
    /// The rule's `resources`: plural names, subresources as `pods/status`.
    pub resources: &'static [&'static str],
    /// The rule's `operations`: `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub verbs: &'static [&'static str],
    /// The rule's `apiVersions`.
    pub versions: &'static [&'static str],
    /// `admissionReviewVersions`: the AdmissionReview versions the webhook understands
    /// (`v1`, `v1beta1`), the apiserver sending the first it supports.
    pub admission_review_versions: &'static [&'static str],
    /// `reinvocationPolicy`: `Never` or `IfNeeded`; mutating webhooks only.
    pub reinvocation_policy: Option<&'static str>,
    /// `timeoutSeconds`, 1 to 30; `None` leaves the apiserver's default of 10 seconds.
    pub timeout_seconds: Option<i32>,
    /// `clientConfig.service.name` of a `path` webhook: [`DEFAULT_SERVICE_NAME`] unless
    /// the attribute sets `service_name`.
    pub service_name: &'static str,
    /// `clientConfig.service.namespace` of a `path` webhook: [`DEFAULT_SERVICE_NAMESPACE`]
    /// unless the attribute sets `service_namespace`.
    pub service_namespace: &'static str,
    /// `clientConfig.service.port`; `None` leaves the apiserver's default of 443.
    pub service_port: Option<i32>,
}

/// Implemented by the attribute for the type it sits on: the webhook that type serves.
pub trait Declared {
    /// The webhook, as registered for `cargo xtask manifests`; the webhook server serves
    /// the type at its `path`.
    const WEBHOOK: Webhook;
}

/// What the attribute implements `Declared` with when its arguments are wrong, next to the
/// compile error, so that code using the type reports nothing else.
#[doc(hidden)]
pub const INVALID: Webhook = Webhook {
    name: "",
    mutating: false,
    path: None,
    url: None,
    failure_policy: "",
    match_policy: None,
    side_effects: "",
    groups: &[],
    resources: &[],
    verbs: &[],
    versions: &[],
    admission_review_versions: &[],
    reinvocation_policy: None,
    timeout_seconds: None,
    service_name: "",
    service_namespace: "",
    service_port: None,
};

/// `#[kubebuilder::webhook_configuration(mutating = …, name = …)]`: the name of the
/// Mutating- or ValidatingWebhookConfiguration object (controller-gen's
/// `+kubebuilder:webhookconfiguration`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Configuration {
    /// `true` names the MutatingWebhookConfiguration, `false` the
    /// ValidatingWebhookConfiguration.
    pub mutating: bool,
    /// The configuration's `metadata.name`.
    pub name: &'static str,
}

inventory::collect!(Webhook);
inventory::collect!(Configuration);

/// The MutatingWebhookConfiguration's name controller-gen uses when no
/// `webhook_configuration` names one.
pub const DEFAULT_MUTATING_CONFIGURATION: &str = "mutating-webhook-configuration";
/// The ValidatingWebhookConfiguration's name controller-gen uses when no
/// `webhook_configuration` names one.
pub const DEFAULT_VALIDATING_CONFIGURATION: &str = "validating-webhook-configuration";

/// The default `clientConfig.service.name`, which kustomize's name prefix rewrites.
pub const DEFAULT_SERVICE_NAME: &str = "webhook-service";
/// The default `clientConfig.service.namespace`, which kustomize's namespace rewrites.
pub const DEFAULT_SERVICE_NAMESPACE: &str = "system";

/// Every webhook registered by the crates linked into this binary.
pub fn registered() -> Vec<Webhook> {
    inventory::iter::<Webhook>.into_iter().copied().collect()
}

/// Every configuration name registered by the crates linked into this binary.
pub fn registered_configurations() -> Vec<Configuration> {
    inventory::iter::<Configuration>
        .into_iter()
        .copied()
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

/// Two `webhook_configuration` declarations for the same kind of configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateConfiguration {
    /// Whether the declarations name the mutating configuration (else the validating one).
    pub mutating: bool,
    /// The names declared, sorted.
    pub names: Vec<&'static str>,
}

impl fmt::Display for DuplicateConfiguration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.mutating {
            "mutating"
        } else {
            "validating"
        };
        write!(
            f,
            "duplicate {kind} #[kubebuilder::webhook_configuration] declarations: {}",
            self.names.join(", ")
        )
    }
}

impl std::error::Error for DuplicateConfiguration {}

/// The webhook configurations controller-gen's `webhook` generator writes for these
/// declarations: webhooks sorted by name (duplicates kept), one rule each.
pub fn manifests(
    webhooks: &[Webhook],
    configurations: &[Configuration],
) -> Result<Manifests, DuplicateConfiguration> {
    let mut sorted = webhooks.to_vec();
    // controller-gen sorts by name only; the path breaks ties so duplicates stay deterministic.
    sorted.sort_by_key(|webhook| (webhook.name, webhook.path, webhook.url));
    let (mutating, validating): (Vec<_>, Vec<_>) = sorted.iter().partition(|w| w.mutating);

    let mutating_name = configuration_name(configurations, true)?;
    let validating_name = configuration_name(configurations, false)?;
    Ok(Manifests {
        mutating: (!mutating.is_empty()).then(|| MutatingWebhookConfiguration {
            metadata: named(mutating_name.unwrap_or(DEFAULT_MUTATING_CONFIGURATION)),
            webhooks: Some(mutating.into_iter().map(to_mutating).collect()),
        }),
        validating: (!validating.is_empty()).then(|| ValidatingWebhookConfiguration {
            metadata: named(validating_name.unwrap_or(DEFAULT_VALIDATING_CONFIGURATION)),
            webhooks: Some(validating.into_iter().map(to_validating).collect()),
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
) -> Result<Option<&'static str>, DuplicateConfiguration> {
    let mut names: Vec<_> = configurations
        .iter()
        .filter(|c| c.mutating == mutating)
        .map(|c| c.name)
        .collect();
    names.sort_unstable();
    match names.as_slice() {
        [] => Ok(None),
        [name] => Ok(Some(name)),
        _ => Err(DuplicateConfiguration { mutating, names }),
    }
}

fn named(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        ..Default::default()
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn client_config(webhook: &Webhook) -> WebhookClientConfig {
    WebhookClientConfig {
        service: webhook.path.map(|path| ServiceReference {
            name: webhook.service_name.to_owned(),
            namespace: webhook.service_namespace.to_owned(),
            path: Some(path.to_owned()),
            port: webhook.service_port,
        }),
        url: webhook.url.map(str::to_owned),
        ca_bundle: None,
    }
}

fn rules(webhook: &Webhook) -> Vec<RuleWithOperations> {
    vec![RuleWithOperations {
        api_groups: Some(strings(webhook.groups)),
        api_versions: Some(strings(webhook.versions)),
        operations: Some(strings(webhook.verbs)),
        resources: Some(strings(webhook.resources)),
        scope: None,
    }]
}

fn to_mutating(webhook: &Webhook) -> MutatingWebhook {
    MutatingWebhook {
        admission_review_versions: strings(webhook.admission_review_versions),
        client_config: client_config(webhook),
        failure_policy: Some(webhook.failure_policy.to_owned()),
        match_policy: webhook.match_policy.map(str::to_owned),
        name: webhook.name.to_owned(),
        reinvocation_policy: webhook.reinvocation_policy.map(str::to_owned),
        rules: Some(rules(webhook)),
        side_effects: webhook.side_effects.to_owned(),
        timeout_seconds: webhook.timeout_seconds,
        ..Default::default()
    }
}

fn to_validating(webhook: &Webhook) -> ValidatingWebhook {
    ValidatingWebhook {
        admission_review_versions: strings(webhook.admission_review_versions),
        client_config: client_config(webhook),
        failure_policy: Some(webhook.failure_policy.to_owned()),
        match_policy: webhook.match_policy.map(str::to_owned),
        name: webhook.name.to_owned(),
        rules: Some(rules(webhook)),
        side_effects: webhook.side_effects.to_owned(),
        timeout_seconds: webhook.timeout_seconds,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTER: Webhook = Webhook {
        name: "mcronjob-v1.kb.io",
        mutating: true,
        path: Some("/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"),
        url: None,
        failure_policy: "Fail",
        match_policy: None,
        side_effects: "None",
        groups: &["batch.tutorial.kubebuilder.io"],
        resources: &["cronjobs"],
        verbs: &["CREATE", "UPDATE"],
        versions: &["v1"],
        admission_review_versions: &["v1"],
        reinvocation_policy: None,
        timeout_seconds: None,
        service_name: DEFAULT_SERVICE_NAME,
        service_namespace: DEFAULT_SERVICE_NAMESPACE,
        service_port: None,
    };

    const VALIDATOR: Webhook = Webhook {
        name: "vcronjob-v1.kb.io",
        mutating: false,
        path: Some("/validate-batch-tutorial-kubebuilder-io-v1-cronjob"),
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
            name: "b.example.com",
            ..DEFAULTER
        };
        let a = Webhook {
            name: "a.example.com",
            ..DEFAULTER
        };
        let got = manifests(&[b, a, b], &[]).unwrap();
        let names: Vec<_> = got.mutating.unwrap().webhooks.unwrap();
        let names: Vec<_> = names.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["a.example.com", "b.example.com", "b.example.com"]);
        assert!(got.validating.is_none());
    }

    #[test]
    fn url_service_port_and_optional_fields_render() {
        let webhook = Webhook {
            path: None,
            url: Some("https://hooks.example.com/mutate"),
            match_policy: Some("Equivalent"),
            reinvocation_policy: Some("IfNeeded"),
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
            service_name: "svc",
            service_namespace: "ns",
            service_port: Some(8443),
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
                name: "my-mutating",
            },
            Configuration {
                mutating: false,
                name: "my-validating",
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
                name: "b",
            },
            Configuration {
                mutating: true,
                name: "a",
            },
        ];
        let error = manifests(&[DEFAULTER], &names).unwrap_err();
        assert_eq!(
            error.to_string(),
            "duplicate mutating #[kubebuilder::webhook_configuration] declarations: a, b"
        );
    }
}

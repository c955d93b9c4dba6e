//! Admission webhooks: what `#[kubebuilder::webhook(...)]` records on a defaulter or
//! validator type, and `#[kubebuilder::webhook_configuration(...)]` anywhere.

use crate::{Text, Texts};

/// One `+kubebuilder:webhook` marker's worth of data, normalised by the attribute the way
/// controller-gen normalises the marker: verbs upper-cased (`CREATE`), `core` group
/// rewritten to `""`, policies in their API spelling (`Fail`, `Equivalent`, `IfNeeded`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Webhook {
    /// `webhooks[].name`: a domain of at least three segments (`mcronjob-v1.kb.io`).
    pub name: Text,
    /// `true` for a defaulter (in the MutatingWebhookConfiguration), `false` for a
    /// validator (in the ValidatingWebhookConfiguration).
    pub mutating: bool,
    /// `clientConfig.service.path`; exactly one of `path` and `url` is set. When the
    /// attribute names neither, it derives kubebuilder's default path
    /// (`/mutate-<group with dots as dashes>-<version>-<kind lowercased>`, or `/validate-…`).
    pub path: Option<Text>,
    /// `clientConfig.url`: an `https://` URL the apiserver calls instead of the Service.
    pub url: Option<Text>,
    /// `failurePolicy`: `Fail` or `Ignore`, whether an admission fails when the webhook
    /// cannot be called.
    pub failure_policy: Text,
    /// `matchPolicy`: `Exact` or `Equivalent`; `None` leaves the apiserver's default
    /// (`Equivalent`).
    pub match_policy: Option<Text>,
    /// `sideEffects`: `None` or `NoneOnDryRun`, the only values v1 configurations accept.
    pub side_effects: Text,
    /// The rule's `apiGroups`, the core group as `""`.
    pub groups: Texts,
    /// The rule's `resources`: plural names, subresources as `pods/status`.
    pub resources: Texts,
    /// The rule's `operations`: `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.
    pub verbs: Texts,
    /// The rule's `apiVersions`.
    pub versions: Texts,
    /// `admissionReviewVersions`: the AdmissionReview versions the webhook understands
    /// (`v1`, `v1beta1`), the apiserver sending the first it supports.
    pub admission_review_versions: Texts,
    /// `reinvocationPolicy`: `Never` or `IfNeeded`; mutating webhooks only.
    pub reinvocation_policy: Option<Text>,
    /// `timeoutSeconds`, 1 to 30; `None` leaves the apiserver's default of 10 seconds.
    pub timeout_seconds: Option<i32>,
    /// `clientConfig.service.name` of a `path` webhook: [`DEFAULT_SERVICE_NAME`] unless
    /// the attribute sets `service_name`.
    pub service_name: Text,
    /// `clientConfig.service.namespace` of a `path` webhook: [`DEFAULT_SERVICE_NAMESPACE`]
    /// unless the attribute sets `service_namespace`.
    pub service_namespace: Text,
    /// `clientConfig.service.port`; `None` leaves the apiserver's default of 443.
    pub service_port: Option<i32>,
    /// `patch`: a strategic merge patch (JSON) applied to the rendered webhook entry, for
    /// the fields no argument sets (`namespaceSelector`, `objectSelector`,
    /// `matchConditions`, ...); a `null` removes a field.
    pub patch: Option<Text>,
}

/// `#[kubebuilder::webhook_configuration(mutating = …, name = …)]`: the name of the
/// Mutating- or ValidatingWebhookConfiguration object (controller-gen's
/// `+kubebuilder:webhookconfiguration`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configuration {
    /// `true` names the MutatingWebhookConfiguration, `false` the
    /// ValidatingWebhookConfiguration.
    pub mutating: bool,
    /// The configuration's `metadata.name`.
    pub name: Text,
}

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

/// kubebuilder's default path of a webhook: `/mutate-` or `/validate-`, then the group with
/// dots as dashes, the version and the kind lower-cased (`/mutate-batch-tutorial-kubebuilder-io-v1-cronjob`;
/// `/validate--v1-pod` for the core group). Built in constant evaluation too, for the kinds a
/// webhook is declared `for`.
pub struct DefaultPath {
    bytes: [u8; DefaultPath::CAPACITY],
    len: usize,
}

impl DefaultPath {
    /// Longer than any path of valid names: a group is at most 253 bytes, a version and a
    /// kind at most 63 each.
    const CAPACITY: usize = 512;

    /// The path of a mutating (or validating) webhook for `kind` in `group`/`version`.
    pub const fn new(mutating: bool, group: &str, version: &str, kind: &str) -> DefaultPath {
        let mut path = DefaultPath {
            bytes: [0; DefaultPath::CAPACITY],
            len: 0,
        };
        path.push(if mutating { "/mutate-" } else { "/validate-" }, Case::AsIs);
        path.push(group, Case::DotsAsDashes);
        path.push("-", Case::AsIs);
        path.push(version, Case::AsIs);
        path.push("-", Case::AsIs);
        path.push(kind, Case::Lower);
        path
    }

    /// The path.
    pub const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.bytes.split_at(self.len).0) {
            Ok(path) => path,
            Err(_) => panic!("a webhook path is built from whole strings"),
        }
    }

    const fn push(&mut self, text: &str, case: Case) {
        let text = text.as_bytes();
        assert!(
            self.len + text.len() <= DefaultPath::CAPACITY,
            "a webhook path is at most 512 bytes"
        );
        let mut at = 0;
        while at < text.len() {
            self.bytes[self.len + at] = match (case, text[at]) {
                (Case::DotsAsDashes, b'.') => b'-',
                (Case::Lower, byte) => byte.to_ascii_lowercase(),
                (_, byte) => byte,
            };
            at += 1;
        }
        self.len += text.len();
    }
}

#[derive(Clone, Copy)]
enum Case {
    AsIs,
    DotsAsDashes,
    Lower,
}

#[cfg(test)]
mod tests {
    use super::DefaultPath;

    #[test]
    fn default_paths_are_kubebuilders() {
        const CRONJOB: DefaultPath =
            DefaultPath::new(true, "batch.tutorial.kubebuilder.io", "v1", "CronJob");
        assert_eq!(
            CRONJOB.as_str(),
            "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
        assert_eq!(
            DefaultPath::new(false, "", "v1", "Pod").as_str(),
            "/validate--v1-pod"
        );
    }
}

#[cfg(feature = "inventory")]
inventory::collect!(Webhook);
#[cfg(feature = "inventory")]
inventory::collect!(Configuration);

//! Admission webhook declarations: what `#[kubebuilder::webhook(...)]` records on a
//! defaulter or validator type. The same value renders `config/webhook/manifests.yaml`
//! and tells the webhook server which path serves the type, so both come from one place.

/// One `+kubebuilder:webhook` marker's worth of data, as written in the attribute
/// (normalised: verbs upper-cased, `core` group rewritten to `""`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Webhook {
    pub name: &'static str,
    pub mutating: bool,
    /// `clientConfig.service.path`; exactly one of `path` and `url` is set.
    pub path: Option<&'static str>,
    pub url: Option<&'static str>,
    pub failure_policy: &'static str,
    pub match_policy: Option<&'static str>,
    pub side_effects: &'static str,
    pub groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
    pub versions: &'static [&'static str],
    pub admission_review_versions: &'static [&'static str],
    pub reinvocation_policy: Option<&'static str>,
    pub timeout_seconds: Option<i32>,
    pub service_name: &'static str,
    pub service_namespace: &'static str,
    pub service_port: Option<i32>,
}

/// Implemented by the attribute for the type it sits on: the webhook that type serves.
pub trait Declared {
    const WEBHOOK: Webhook;
}

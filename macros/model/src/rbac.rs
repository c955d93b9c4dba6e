//! RBAC rules: what `#[kubebuilder::rbac(...)]` records on a reconciler type.

use crate::{Text, Texts};

/// One `#[kubebuilder::rbac(...)]` attribute, as written (`core` not yet rewritten).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `apiGroups`, with `core` for the core group; empty in a `urls` rule.
    pub groups: Texts,
    /// `resources`: plural names, subresources as `cronjobs/status`; empty in a `urls` rule.
    pub resources: Texts,
    /// `resourceNames`: the objects the rule is limited to; empty for all of them.
    pub resource_names: Texts,
    /// `nonResourceURLs` (`/metrics`): a rule for these has no groups nor resources.
    pub urls: Texts,
    /// `verbs`: `get`, `list`, `watch`, ... (HTTP methods in lower case for `urls`).
    pub verbs: Texts,
    /// `Some` puts the rule in a Role of that namespace instead of the ClusterRole.
    pub namespace: Option<Text>,
    /// Overrides the generator's role name for this rule.
    pub role_name: Option<Text>,
}

#[cfg(feature = "inventory")]
inventory::collect!(Rule);

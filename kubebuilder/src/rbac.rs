//! RBAC rules: what `#[kubebuilder::rbac(...)]` records on a reconciler type, and the
//! roles controller-gen's `rbac` generator would build from the same markers.
//!
//! Each attribute registers one [`Rule`] with `inventory` at link time (the mechanism the
//! CRD attributes use too): every crate linked into the project's declarations binary (see
//! [`crate::declarations`]) contributes its rules without a hand-kept list, and only code
//! that compiles is seen. [`roles`] then applies
//! controller-gen's normalisation (explode per resource, merge verbs, then resources,
//! then groups, then URLs, sort, collapse `*`), so `config/rbac/role.yaml` is the file
//! controller-gen writes for the equivalent `+kubebuilder:rbac` markers.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// The role name controller-gen is given in kubebuilder projects (`rbac:roleName=manager-role`).
pub const DEFAULT_ROLE_NAME: &str = "manager-role";

use kubebuilder_model::Text;
pub use kubebuilder_model::rbac::Rule;

/// Every rule registered by the crates linked into this binary.
pub fn registered() -> Vec<Rule> {
    inventory::iter::<Rule>.into_iter().cloned().collect()
}

/// A generated role: a ClusterRole, or a Role when the rules name a namespace. Each reads
/// back as what it was: the object's `kind` tells them apart.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GeneratedRole {
    /// The rules without a `namespace`.
    Cluster(ClusterRole),
    /// The rules of one `namespace`.
    Namespaced(Role),
}

impl GeneratedRole {
    /// A ClusterRole named `name`, or with `namespace` a Role there, of `rules` normalised.
    fn new(namespace: Option<&str>, name: &str, rules: Vec<PolicyRule>) -> Self {
        let metadata = ObjectMeta {
            name: Some(name.to_owned()),
            namespace: namespace.map(str::to_owned),
            ..Default::default()
        };
        let rules = Some(normalize_rules(rules));
        match namespace {
            None => GeneratedRole::Cluster(ClusterRole {
                metadata,
                rules,
                ..Default::default()
            }),
            Some(_) => GeneratedRole::Namespaced(Role { metadata, rules }),
        }
    }

    /// The role's `metadata.namespace`: `None` for a ClusterRole.
    pub fn namespace(&self) -> Option<&str> {
        match self {
            GeneratedRole::Cluster(_) => None,
            GeneratedRole::Namespaced(role) => role.metadata.namespace.as_deref(),
        }
    }

    /// The role's `metadata.name`.
    pub fn name(&self) -> &str {
        let metadata = match self {
            GeneratedRole::Cluster(role) => &role.metadata,
            GeneratedRole::Namespaced(role) => &role.metadata,
        };
        metadata.name.as_deref().unwrap_or_default()
    }

    /// The role's rules, normalised.
    pub fn rules(&self) -> &[PolicyRule] {
        let rules = match self {
            GeneratedRole::Cluster(role) => &role.rules,
            GeneratedRole::Namespaced(role) => &role.rules,
        };
        rules.as_deref().unwrap_or_default()
    }
}

/// The roles controller-gen's `rbac:roleName=<default_role_name>` generates for these rules:
/// one per (namespace, role name), sorted by namespace then name; namespace-less buckets
/// become ClusterRoles.
pub fn roles<'a>(
    rules: impl IntoIterator<Item = &'a Rule>,
    default_role_name: &str,
) -> Vec<GeneratedRole> {
    // The BTreeMap key orders buckets as controller-gen does: namespace, then role name.
    let mut buckets: BTreeMap<(&str, &str), Vec<PolicyRule>> = BTreeMap::new();
    for rule in rules {
        let bucket = buckets
            .entry((
                rule.namespace.as_deref().unwrap_or_default(),
                rule.role_name.as_deref().unwrap_or(default_role_name),
            ))
            .or_default();
        bucket.extend(explode(rule));
    }
    buckets
        .into_iter()
        .map(|((namespace, name), rules)| {
            GeneratedRole::new(Some(namespace).filter(|n| !n.is_empty()), name, rules)
        })
        .collect()
}

/// What the manager of `kubebuilder-runtime` calls the apiserver for itself, whatever its
/// reconcilers do: its event recorder (`events::Recorder`, and `Manager::event_recorder`)
/// creates events.k8s.io/v1 Events and patches their series. `cargo xtask manifests`
/// adds these to the manager's role ([`with_runtime_rules`]), so that a project cannot
/// forget them, nor grant core `events` instead, as a rule translated from Go's
/// `+kubebuilder:rbac:groups=core,resources=events` would.
///
/// Leader election (Leases) and the metrics endpoint's TokenReviews and
/// SubjectAccessReviews are not here: every scaffolded project grants them in roles of
/// their own (`config/rbac/leader_election_role.yaml`, `metrics_auth_role.yaml`), bound to
/// the same service account.
pub const RUNTIME_RULES: &[Rule] = &[Rule {
    // Named by the type the recorder writes, so that the two cannot drift apart.
    groups: Cow::Borrowed(&[Cow::Borrowed(<Event as k8s_openapi::Resource>::GROUP)]),
    resources: Cow::Borrowed(&[Cow::Borrowed(
        <Event as k8s_openapi::Resource>::URL_PATH_SEGMENT,
    )]),
    resource_names: Cow::Borrowed(&[]),
    urls: Cow::Borrowed(&[]),
    verbs: Cow::Borrowed(&[Cow::Borrowed("create"), Cow::Borrowed("patch")]),
    namespace: None,
    role_name: None,
}];

/// `roles` (as [`roles`] makes them) with [`RUNTIME_RULES`] added to the manager's role,
/// [`DEFAULT_ROLE_NAME`]: the ClusterRole, or with `namespace` the Role of that namespace (a namespaced project's
/// manager is bound to a Role in its own namespace, where it records its Events). The role
/// is made when no attribute declared a rule of it; the order stays [`roles`]'.
pub fn with_runtime_rules(
    roles: Vec<GeneratedRole>,
    namespace: Option<&str>,
) -> Vec<GeneratedRole> {
    let mut by_key: BTreeMap<(String, String), GeneratedRole> = roles
        .into_iter()
        .map(|role| {
            let key = (
                role.namespace().unwrap_or_default().to_owned(),
                role.name().to_owned(),
            );
            (key, role)
        })
        .collect();
    let key = (
        namespace.unwrap_or_default().to_owned(),
        DEFAULT_ROLE_NAME.to_owned(),
    );
    let declared = by_key
        .remove(&key)
        .map(|role| role.rules().to_vec())
        .unwrap_or_default();
    let rules = declared
        .into_iter()
        .chain(RUNTIME_RULES.iter().flat_map(explode));
    by_key.insert(
        key,
        GeneratedRole::new(namespace, DEFAULT_ROLE_NAME, rules.collect()),
    );
    by_key.into_values().collect()
}

/// `role.yaml` as controller-gen writes it: every role as a `---` document.
pub fn to_yaml(roles: &[GeneratedRole]) -> String {
    let documents: Vec<serde_json::Value> = roles.iter().map(to_value).collect();
    crate::yaml::to_documents(&documents)
}

/// The role as a JSON value with `apiVersion` and `kind` set.
pub fn to_value(role: &GeneratedRole) -> serde_json::Value {
    serde_json::to_value(role).expect("RBAC objects always serialise")
}

/// One policy rule per resource (or one without resources), as controller-gen splits
/// each marker before merging.
fn explode(rule: &Rule) -> Vec<PolicyRule> {
    let owned = |items: &[Text]| items.iter().map(Text::to_string).collect::<Vec<_>>();
    let with_resources = |resources: Vec<String>| PolicyRule {
        api_groups: Some(owned(&rule.groups)),
        resources: Some(resources),
        resource_names: Some(owned(&rule.resource_names)),
        non_resource_urls: Some(owned(&rule.urls)),
        verbs: owned(&rule.verbs),
    };
    if rule.resources.is_empty() {
        return vec![with_resources(Vec::new())];
    }
    rule.resources
        .iter()
        .map(|resource| with_resources(vec![resource.to_string()]))
        .collect()
}

/// controller-gen's `NormalizeRules`: rewrites `core` to `""`, unions the verbs of rules
/// on the same (groups, resources, resourceNames, urls), then merges rules that differ
/// only in resources, then only in groups, then only in URLs; sorts by the joined key and
/// collapses verbs containing `*` to `["*"]`. Empty lists are omitted.
pub fn normalize_rules(rules: impl IntoIterator<Item = PolicyRule>) -> Vec<PolicyRule> {
    let mut by_key: BTreeMap<String, WorkingRule> = BTreeMap::new();
    for rule in rules {
        let mut rule = WorkingRule::from(rule);
        for group in &mut rule.groups {
            if group == "core" {
                group.clear();
            }
        }
        rule.normalize();
        match by_key.entry(rule.key()) {
            Entry::Occupied(mut existing) => {
                let existing = existing.get_mut();
                existing.verbs.append(&mut rule.verbs);
                existing.normalize();
            }
            Entry::Vacant(slot) => {
                slot.insert(rule);
            }
        }
    }
    let by_key = merge_on(by_key, Field::Resources);
    let by_key = merge_on(by_key, Field::Groups);
    let by_key = merge_on(by_key, Field::Urls);
    // `by_key` is keyed by "G + R + RN + U", so its order is controller-gen's sort order.
    by_key
        .into_values()
        .map(|mut rule| {
            if rule.verbs.iter().any(|verb| verb == "*") {
                rule.verbs = vec!["*".to_owned()];
            }
            rule.into_policy_rule()
        })
        .collect()
}

/// A rule while it is being normalised: every list deduplicated and sorted.
#[derive(Clone, Debug, Default)]
struct WorkingRule {
    groups: Vec<String>,
    resources: Vec<String>,
    resource_names: Vec<String>,
    urls: Vec<String>,
    verbs: Vec<String>,
}

/// The list two rules may differ in and still be merged.
#[derive(Clone, Copy)]
enum Field {
    Groups,
    Resources,
    Urls,
}

impl From<PolicyRule> for WorkingRule {
    fn from(rule: PolicyRule) -> Self {
        WorkingRule {
            groups: rule.api_groups.unwrap_or_default(),
            resources: rule.resources.unwrap_or_default(),
            resource_names: rule.resource_names.unwrap_or_default(),
            urls: rule.non_resource_urls.unwrap_or_default(),
            verbs: rule.verbs,
        }
    }
}

impl WorkingRule {
    fn normalize(&mut self) {
        for list in [
            &mut self.groups,
            &mut self.resources,
            &mut self.resource_names,
            &mut self.urls,
            &mut self.verbs,
        ] {
            list.sort();
            list.dedup();
        }
    }

    /// controller-gen's `ruleKey.String()`: the four lists joined with `&`, then with ` + `.
    fn key(&self) -> String {
        [
            &self.groups,
            &self.resources,
            &self.resource_names,
            &self.urls,
        ]
        .map(|list| list.join("&"))
        .join(" + ")
    }

    /// The key of everything but `field`, verbs included: rules equal on it merge `field`.
    fn key_without(&self, field: Field) -> String {
        let lists = match field {
            Field::Resources => [&self.groups, &self.resource_names, &self.urls],
            Field::Groups => [&self.resources, &self.resource_names, &self.urls],
            Field::Urls => [&self.groups, &self.resources, &self.resource_names],
        };
        let mut parts = lists.map(|list| list.join("&")).to_vec();
        parts.push(self.verbs.join("&"));
        parts.join(" + ")
    }

    fn list_mut(&mut self, field: Field) -> &mut Vec<String> {
        match field {
            Field::Groups => &mut self.groups,
            Field::Resources => &mut self.resources,
            Field::Urls => &mut self.urls,
        }
    }

    fn into_policy_rule(self) -> PolicyRule {
        let non_empty = |list: Vec<String>| (!list.is_empty()).then_some(list);
        PolicyRule {
            api_groups: non_empty(self.groups),
            resources: non_empty(self.resources),
            resource_names: non_empty(self.resource_names),
            non_resource_urls: non_empty(self.urls),
            verbs: self.verbs,
        }
    }
}

/// Merges the rules that are equal except for `field` by concatenating that field.
fn merge_on(rules: BTreeMap<String, WorkingRule>, field: Field) -> BTreeMap<String, WorkingRule> {
    let mut groups: BTreeMap<String, WorkingRule> = BTreeMap::new();
    for mut rule in rules.into_values() {
        match groups.entry(rule.key_without(field)) {
            Entry::Occupied(mut merged) => {
                let merged = merged.get_mut();
                merged.list_mut(field).append(rule.list_mut(field));
                merged.normalize();
            }
            Entry::Vacant(slot) => {
                slot.insert(rule);
            }
        }
    }
    groups
        .into_values()
        .map(|rule| (rule.key(), rule))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubebuilder_model::texts;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Rule {
        Rule {
            groups: texts(groups.iter().copied()),
            resources: texts(resources.iter().copied()),
            resource_names: Cow::Borrowed(&[]),
            urls: Cow::Borrowed(&[]),
            verbs: texts(verbs.iter().copied()),
            namespace: None,
            role_name: None,
        }
    }

    fn policy(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let list = |items: &[&str]| {
            (!items.is_empty()).then(|| items.iter().map(|s| s.to_string()).collect())
        };
        PolicyRule {
            api_groups: list(groups),
            resources: list(resources),
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn only_role(rules: &[Rule]) -> Vec<PolicyRule> {
        let roles = roles(rules, DEFAULT_ROLE_NAME);
        assert_eq!(roles.len(), 1);
        roles[0].rules().to_vec()
    }

    #[test]
    fn the_tutorial_rules_merge_into_one_cluster_role() {
        let rules = [
            rule(
                &["batch.tutorial.kubebuilder.io"],
                &["cronjobs"],
                &[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ],
            ),
            rule(
                &["batch.tutorial.kubebuilder.io"],
                &["cronjobs/status"],
                &["get", "update", "patch"],
            ),
            rule(
                &["batch.tutorial.kubebuilder.io"],
                &["cronjobs/finalizers"],
                &["update"],
            ),
            rule(
                &["batch"],
                &["jobs"],
                &[
                    "get", "list", "watch", "create", "update", "patch", "delete",
                ],
            ),
            rule(&["batch"], &["jobs/status"], &["get"]),
        ];
        let all = [
            "create", "delete", "get", "list", "patch", "update", "watch",
        ];
        assert_eq!(
            only_role(&rules),
            vec![
                policy(&["batch"], &["jobs"], &all),
                policy(&["batch"], &["jobs/status"], &["get"]),
                policy(&["batch.tutorial.kubebuilder.io"], &["cronjobs"], &all),
                policy(
                    &["batch.tutorial.kubebuilder.io"],
                    &["cronjobs/finalizers"],
                    &["update"]
                ),
                policy(
                    &["batch.tutorial.kubebuilder.io"],
                    &["cronjobs/status"],
                    &["get", "patch", "update"]
                ),
            ]
        );
    }

    #[test]
    fn verbs_of_the_same_resource_are_united_and_sorted() {
        let rules = [
            rule(&["apps"], &["deployments"], &["watch", "get"]),
            rule(&["apps"], &["deployments"], &["list", "get"]),
        ];
        assert_eq!(
            only_role(&rules),
            vec![policy(
                &["apps"],
                &["deployments"],
                &["get", "list", "watch"]
            )]
        );
    }

    #[test]
    fn resources_with_equal_verbs_merge_then_groups_with_equal_resources_merge() {
        let rules = [
            rule(&["apps"], &["deployments", "statefulsets"], &["get"]),
            rule(&["batch"], &["deployments"], &["get"]),
            rule(&["batch"], &["statefulsets"], &["get"]),
        ];
        assert_eq!(
            only_role(&rules),
            vec![policy(
                &["apps", "batch"],
                &["deployments", "statefulsets"],
                &["get"]
            )]
        );
    }

    #[test]
    fn core_is_the_empty_group_and_sorts_first_after_urls() {
        let rules = [
            rule(&["apps"], &["deployments"], &["get"]),
            rule(&["core"], &["pods"], &["list"]),
            Rule {
                urls: texts(["/metrics"]),
                ..rule(&[], &[], &["get"])
            },
        ];
        let got = only_role(&rules);
        assert_eq!(got[0].non_resource_urls, Some(vec!["/metrics".to_owned()]));
        assert_eq!(got[0].api_groups, None);
        assert_eq!(got[1], policy(&[""], &["pods"], &["list"]));
        assert_eq!(got[2], policy(&["apps"], &["deployments"], &["get"]));
    }

    #[test]
    fn urls_with_equal_verbs_merge() {
        let url = |urls: &[&str], verbs| Rule {
            urls: texts(urls.iter().copied()),
            ..rule(&[], &[], verbs)
        };
        let got = only_role(&[url(&["/metrics"], &["get"]), url(&["/healthz"], &["get"])]);
        assert_eq!(
            got,
            vec![PolicyRule {
                non_resource_urls: Some(vec!["/healthz".into(), "/metrics".into()]),
                verbs: vec!["get".into()],
                ..Default::default()
            }]
        );
    }

    #[test]
    fn a_star_verb_collapses_the_verbs() {
        let rules = [
            rule(&["apps"], &["deployments"], &["get"]),
            rule(&["apps"], &["deployments"], &["*", "list"]),
        ];
        assert_eq!(
            only_role(&rules),
            vec![policy(&["apps"], &["deployments"], &["*"])]
        );
    }

    #[test]
    fn resource_names_keep_rules_apart() {
        let named = Rule {
            resource_names: texts(["my-config"]),
            ..rule(&[""], &["configmaps"], &["get"])
        };
        let got = only_role(&[named, rule(&[""], &["configmaps"], &["get"])]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].resource_names, None);
        assert_eq!(got[1].resource_names, Some(vec!["my-config".to_owned()]));
    }

    #[test]
    fn sorting_compares_the_joined_key_bytewise() {
        // "a + …" sorts before "a&b + …" because ' ' < '&'; and "b" after both.
        let rules = [
            rule(&["b"], &["x"], &["get"]),
            rule(&["a", "b"], &["y"], &["list"]),
            rule(&["a"], &["z"], &["watch"]),
        ];
        let groups: Vec<_> = only_role(&rules)
            .into_iter()
            .map(|r| r.api_groups.unwrap().join("&"))
            .collect();
        assert_eq!(groups, ["a", "a&b", "b"]);
    }

    #[test]
    fn namespaces_and_role_names_make_separate_roles_sorted_by_namespace_then_name() {
        let rules = [
            Rule {
                namespace: Some("zeta".into()),
                ..rule(&[""], &["secrets"], &["get"])
            },
            Rule {
                role_name: Some("custom".into()),
                ..rule(&[""], &["pods"], &["get"])
            },
            rule(&[""], &["configmaps"], &["get"]),
            Rule {
                namespace: Some("alpha".into()),
                role_name: Some("reader".into()),
                ..rule(&[""], &["secrets"], &["list"])
            },
        ];
        assert_eq!(
            role_names(&roles(&rules, DEFAULT_ROLE_NAME)),
            [
                "ClusterRole custom",
                "ClusterRole manager-role",
                "Role alpha/reader",
                "Role zeta/manager-role"
            ]
        );
    }

    /// Each role as `Kind namespace/name`, in order.
    fn role_names(generated: &[GeneratedRole]) -> Vec<String> {
        generated
            .iter()
            .map(|role| match role.namespace() {
                None => format!("ClusterRole {}", role.name()),
                Some(namespace) => format!("Role {namespace}/{}", role.name()),
            })
            .collect()
    }

    #[test]
    fn the_runtime_rules_merge_into_the_managers_cluster_role_as_if_declared() {
        let declared = [
            rule(&["events.k8s.io"], &["events"], &["get"]),
            rule(&["batch"], &["jobs"], &["get"]),
            Rule {
                namespace: Some("ns".into()),
                ..rule(&[""], &["secrets"], &["get"])
            },
        ];
        let all: Vec<Rule> = declared.iter().chain(RUNTIME_RULES).cloned().collect();
        let generated = with_runtime_rules(roles(&declared, DEFAULT_ROLE_NAME), None);
        assert_eq!(generated, roles(&all, DEFAULT_ROLE_NAME));
        assert_eq!(
            role_names(&generated),
            ["ClusterRole manager-role", "Role ns/manager-role"]
        );
        assert_eq!(
            generated[0].rules()[1],
            policy(&["events.k8s.io"], &["events"], &["create", "get", "patch"])
        );
    }

    #[test]
    fn the_runtime_rules_make_the_managers_role_where_none_is_declared() {
        let elsewhere = Rule {
            namespace: Some("zeta".into()),
            ..rule(&[""], &["secrets"], &["get"])
        };
        let generated = with_runtime_rules(roles(&[elsewhere], DEFAULT_ROLE_NAME), Some("alpha"));
        assert_eq!(
            role_names(&generated),
            ["Role alpha/manager-role", "Role zeta/manager-role"]
        );
        assert_eq!(
            generated[0].rules(),
            [policy(
                &["events.k8s.io"],
                &["events"],
                &["create", "patch"]
            )]
        );
        assert_eq!(
            role_names(&with_runtime_rules(Vec::new(), None)),
            ["ClusterRole manager-role"]
        );
    }

    #[test]
    fn yaml_matches_controller_gen_layout() {
        let rules = [
            rule(&["batch"], &["jobs"], &["get", "list"]),
            Rule {
                namespace: Some("ns".into()),
                ..rule(&["core"], &["secrets"], &["*"])
            },
        ];
        assert_eq!(
            to_yaml(&roles(&rules, DEFAULT_ROLE_NAME)),
            "---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups:
  - batch
  resources:
  - jobs
  verbs:
  - get
  - list
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager-role
  namespace: ns
rules:
- apiGroups:
  - \"\"
  resources:
  - secrets
  verbs:
  - '*'
"
        );
    }
}

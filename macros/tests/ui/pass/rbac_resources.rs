//! groups, resources, verbs; repeatable on one type; `core` kept as written until rendering.

use kubebuilder::rbac::{DEFAULT_ROLE_NAME, Rule, registered, roles};

#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"], verbs = ["get", "list", "watch"])]
#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs/status"], verbs = ["get"])]
#[kubebuilder::rbac(groups = ["core"], resources = ["pods", "services"], verbs = ["*"])]
pub struct Reconciler;

fn main() {
    let mut rules = registered();
    rules.sort_by_key(|rule| rule.resources);
    assert_eq!(rules.len(), 3);
    assert_eq!(
        rules[0],
        Rule {
            groups: &["batch"],
            resources: &["jobs"],
            resource_names: &[],
            urls: &[],
            verbs: &["get", "list", "watch"],
            namespace: None,
            role_name: None,
        }
    );
    assert_eq!(rules[2].groups, ["core"]);
    let generated = roles(&rules, DEFAULT_ROLE_NAME);
    assert_eq!(generated.len(), 1);
    assert_eq!(generated[0].name(), "manager-role");
    assert_eq!(generated[0].rules()[0].api_groups, Some(vec![String::new()]));
}

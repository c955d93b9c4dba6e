//! groups, resources, verbs; repeatable on one type; `core` kept as written until rendering.

use std::borrow::Cow;

use kubebuilder::rbac::{DEFAULT_ROLE_NAME, Rule, registered, roles};

#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"], verbs = ["get", "list", "watch"])]
#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs/status"], verbs = ["get"])]
#[kubebuilder::rbac(groups = ["core"], resources = ["pods", "services"], verbs = ["*"])]
pub struct Reconciler;

fn main() {
    let mut rules = registered();
    rules.sort_by_key(|rule| rule.resources.clone());
    assert_eq!(rules.len(), 3);
    assert_eq!(
        rules[0],
        Rule {
            groups: Cow::Borrowed(&[Cow::Borrowed("batch")]),
            resources: Cow::Borrowed(&[Cow::Borrowed("jobs")]),
            resource_names: Cow::Borrowed(&[]),
            urls: Cow::Borrowed(&[]),
            verbs: Cow::Borrowed(&[Cow::Borrowed("get"), Cow::Borrowed("list"), Cow::Borrowed("watch")]),
            namespace: None,
            role_name: None,
        }
    );
    assert_eq!(*rules[2].groups, ["core"]);
    let generated = roles(&rules, DEFAULT_ROLE_NAME);
    assert_eq!(generated.len(), 1);
    assert_eq!(generated[0].name(), "manager-role");
    assert_eq!(generated[0].rules()[0].api_groups, Some(vec![String::new()]));
}

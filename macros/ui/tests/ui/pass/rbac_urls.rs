//! urls grant non-resource URLs with HTTP-method verbs.

#[kubebuilder::rbac(urls = ["/metrics", "/healthz"], verbs = ["get"])]
#[kubebuilder::rbac(urls = ["/api/*"], verbs = ["post", "put", "head", "options"])]
pub struct Reconciler {
    pub name: String,
}

fn main() {
    let mut rules = kubebuilder::rbac::registered();
    rules.sort_by_key(|rule| rule.urls.clone());
    assert_eq!(*rules[0].urls, ["/api/*"]);
    assert_eq!(*rules[1].urls, ["/metrics", "/healthz"]);
    assert!(rules.iter().all(|rule| rule.groups.is_empty() && rule.resources.is_empty()));
    let _ = Reconciler { name: String::new() }.name;
}

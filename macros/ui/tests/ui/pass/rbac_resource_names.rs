//! resource_names restricts a rule to named objects.

#[kubebuilder::rbac(groups = ["core"], resources = ["configmaps"], resource_names = ["my-config", "other"], verbs = ["get", "update"])]
pub enum Reconciler {}

fn main() {
    let rules = kubebuilder::rbac::registered();
    assert_eq!(rules.len(), 1);
    assert_eq!(*rules[0].resource_names, ["my-config", "other"]);
}

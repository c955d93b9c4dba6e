#[kubebuilder::rbac(groups = ["core"], resources = ["pods", 1], verbs = ["get"])]
pub struct Reconciler;

#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = {"get": true})]
pub struct Other;

fn main() {}

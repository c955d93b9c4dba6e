#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["get"], role_name = "a/b")]
pub struct Reconciler;

fn main() {}

#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["get"], verbs = ["list"])]
pub struct Reconciler;

fn main() {}

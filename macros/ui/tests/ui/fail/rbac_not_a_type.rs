#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["get"])]
pub fn reconcile() {}

fn main() {}

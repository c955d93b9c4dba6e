#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["get"], namespace = 3)]
pub struct Reconciler;

fn main() {}

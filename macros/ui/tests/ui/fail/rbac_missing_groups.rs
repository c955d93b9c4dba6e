#[kubebuilder::rbac(resources = ["pods"], verbs = ["get"])]
pub struct Reconciler;

fn main() {}

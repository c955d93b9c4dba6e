#[kubebuilder::rbac(groups = ["batch"], verbs = ["get"])]
pub struct Reconciler;

fn main() {}

#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], verbs = ["get"], namespace = "My_Namespace")]
pub struct Reconciler;

fn main() {}

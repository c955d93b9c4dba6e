#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"], verb = ["get"])]
pub struct Reconciler;

fn main() {}

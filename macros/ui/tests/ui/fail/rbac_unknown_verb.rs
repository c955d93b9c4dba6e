#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"], verbs = ["get", "gett", "lst", "frobnicate"])]
pub struct Reconciler;

fn main() {}

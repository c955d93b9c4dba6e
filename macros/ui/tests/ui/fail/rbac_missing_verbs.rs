#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"])]
pub struct Reconciler;

#[kubebuilder::rbac(groups = ["batch"], resources = ["jobs"], verbs = [])]
pub struct Other;

fn main() {}

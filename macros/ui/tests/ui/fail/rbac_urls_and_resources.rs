#[kubebuilder::rbac(groups = ["core"], resources = ["pods"], urls = ["/metrics"], verbs = ["get"])]
pub struct Reconciler;

#[kubebuilder::rbac(resource_names = ["x"], urls = ["/metrics"], verbs = ["get"])]
pub struct Other;

fn main() {}

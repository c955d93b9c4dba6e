#[kubebuilder::rbac(urls = ["/metrics"], verbs = ["get"], namespace = "monitoring")]
pub struct Reconciler;

fn main() {}

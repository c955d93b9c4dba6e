// Non-resource URLs are authorised with HTTP methods, so "list" can never match.
#[kubebuilder::rbac(urls = ["/metrics"], verbs = ["list"])]
pub struct Reconciler;

fn main() {}

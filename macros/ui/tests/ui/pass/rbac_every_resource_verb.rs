//! Every Kubernetes verb the attribute accepts on resources.

#[kubebuilder::rbac(
    groups = ["core", "rbac.authorization.k8s.io", "certificates.k8s.io", "policy"],
    resources = ["serviceaccounts", "roles", "certificatesigningrequests/approval", "podsecuritypolicies"],
    verbs = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
             "impersonate", "bind", "escalate", "approve", "sign", "use"]
)]
pub struct Reconciler;

fn main() {
    assert_eq!(kubebuilder::rbac::registered()[0].verbs.len(), 14);
}

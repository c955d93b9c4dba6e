//! namespace puts the rule in a Role of that namespace; role_name overrides the role's name.

use kubebuilder::rbac::{DEFAULT_ROLE_NAME, GeneratedRole, registered, roles};

#[kubebuilder::rbac(groups = ["core"], resources = ["secrets"], verbs = ["get"], namespace = "infra")]
#[kubebuilder::rbac(groups = ["apps"], resources = ["deployments"], verbs = ["list"], role_name = "deployment-reader")]
#[kubebuilder::rbac(groups = ["core"], resources = ["configmaps"], verbs = ["watch"], namespace = "users", role_name = "user-config")]
pub struct Reconciler;

fn main() {
    let generated = roles(&registered(), DEFAULT_ROLE_NAME);
    let described: Vec<String> = generated
        .iter()
        .map(|role| match role {
            GeneratedRole::Cluster(role) => format!("ClusterRole {}", role.metadata.name.as_deref().unwrap()),
            GeneratedRole::Namespaced(role) => format!(
                "Role {}/{}",
                role.metadata.namespace.as_deref().unwrap(),
                role.metadata.name.as_deref().unwrap()
            ),
        })
        .collect();
    assert_eq!(
        described,
        ["ClusterRole deployment-reader", "Role infra/manager-role", "Role users/user-config"]
    );
}

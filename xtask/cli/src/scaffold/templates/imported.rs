//! The files `import go` has `create api` write for an imported kind, whose types are the
//! Go project's: a reconciler stub to fill in with the Go controller's logic, and a test
//! that holds whatever the types are.

use super::kind::{controller_test_constants, controller_test_manager};

/// `controller/src/<kind>/reconciler.rs` of an imported kind: the Go controller's RBAC
/// rules replace the scaffolded ones (`import go` writes them), the logic is to be written.
pub const RECONCILER_RS: &str = concat!(
    r#"//! The {{kind}} reconciler, imported from a Go project: its RBAC attributes are the Go
//! controller's markers; its logic, the Go controller's `Reconcile`, is still to be written.

use {{api_module}}::{{kind}};
use kubebuilder_runtime::prelude::*;

/// The reason of the Event the stub records for each {{kind}} it reconciles.
pub const RECONCILED: &str = "Reconciled";

/// Reconciles {{kind}}s: makes the cluster match their spec and reports in their status.
"#,
    super::kind::kind_rbac!(),
    r#"pub struct {{kind}}Reconciler;

impl Reconciler<{{kind}}> for {{kind}}Reconciler {
    type Error = Error;

    async fn reconcile(&self, {{kind_snake}}: Arc<{{kind}}>, ctx: &Context) -> Result<Action> {
        tracing::debug!("reconciling");
        // TODO(import): the Go controller's `Reconcile`: make the cluster match
        // `{{kind_snake}}.spec` (with an RBAC attribute above for each kind it touches) and
        // report in its status.
        ctx.normal(&*{{kind_snake}}, RECONCILED, "Reconciled by the imported stub").await;
        Ok(Action::await_change())
    }
}
"#
);

/// `controller/tests/<kind>_controller.rs` of an imported kind: the apiserver serves the
/// CRD and the manager runs the reconciler on it as its service account.
pub const CONTROLLER_TEST_RS: &str = concat!(
    r#"//! The {{kind}} controller against a real control plane (`kubebuilder_envtest`, which
//! `cargo xtask test` provides), run as it is deployed: as its service account, allowed
//! what `config/rbac/role.yaml` grants it. The apiserver serves the imported CRD and the
//! controller starts on it. Add a test per behaviour of the reconciler once it has the Go
//! controller's logic.

use std::path::Path;
use std::time::Duration;

use {{api_module}}::{{kind}};
use kube::api::{Api, ListParams};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs};

"#,
    controller_test_constants!(),
    r#"
#[tokio::test]
async fn the_controller_runs_on_the_imported_crd() {
"#,
    controller_test_manager!(),
    r#"
    let api: Api<{{kind}}> = {{test_api}};
    let listed = tokio::time::timeout(TIMEOUT, api.list(&ListParams::default()))
        .await
        .unwrap()
        .unwrap();
    assert!(listed.items.is_empty());
    manager.shutdown().await.unwrap();
}
"#
);

use k8s_openapi::api::apps::v1::Deployment;
use kubebuilder_runtime::prelude::*;
use serde_json::json;

use super::Memcached;

const FINALIZER: &str = "cache.example.com/finalizer";

pub fn setup_with_manager(manager: Manager) -> Manager {
    manager
        .controller_for::<Memcached>()
        .owns::<Deployment>()
        .complete(MemcachedReconciler)
}

pub struct MemcachedReconciler;

impl Reconciler<Memcached> for MemcachedReconciler {
    type Error = Error;

    async fn reconcile(&self, memcached: Arc<Memcached>, ctx: &Context) -> Result<Action> {
        let api = ctx.api(&*memcached);
        let action =
            controllerutil::finalize(&api, FINALIZER, memcached, async |event| match event {
                Finalizing::Apply(memcached) => apply(ctx, &memcached).await,
                Finalizing::Cleanup(memcached) => {
                    ctx.warning(&*memcached, "Deleting", "Cleaning up").await;
                    Ok(Action::await_change())
                }
            });
        Ok(action.await?)
    }
}

async fn apply(ctx: &Context, memcached: &Memcached) -> Result<Action> {
    let (name, size) = (memcached.name_any(), memcached.spec.size);
    let mut deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": memcached.namespace()},
        "spec": {"replicas": size, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.26"}]},
        }},
    }))?;
    controllerutil::set_controller_reference(memcached, &mut deployment)?;
    ctx.apply(&deployment).await?;
    let mut status = memcached.status.clone().unwrap_or_default();
    let available = conditions::new("Available", Status::True, "Reconciled", "Applied");
    if conditions::set_for(memcached, &mut status.conditions, available) {
        ctx.apply_status(memcached, &status).await?;
        ctx.normal(memcached, "Reconciled", "Applied").await;
    }
    Ok(Action::await_change())
}

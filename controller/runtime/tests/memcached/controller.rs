use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::jiff::Timestamp;
use kubebuilder_runtime::prelude::*;
use serde_json::json;

use super::Memcached;

const FINALIZER: &str = "cache.example.com/finalizer";

pub fn setup_with_manager(manager: Manager) -> Manager {
    let client = manager.client().clone();
    let recorder = manager.event_recorder("memcached-controller");
    let reconciler = MemcachedReconciler { client, recorder };
    manager
        .controller_for::<Memcached>()
        .owns::<Deployment>()
        .complete(reconciler)
}

pub struct MemcachedReconciler {
    client: Client,
    recorder: Recorder,
}

impl Reconciler<Memcached> for MemcachedReconciler {
    type Error = FinalizeError;

    async fn reconcile(&self, memcached: Arc<Memcached>) -> Result<Action, FinalizeError> {
        let api = Api::namespaced(self.client.clone(), &memcached.namespace().unwrap());
        controllerutil::finalize(&api, FINALIZER, memcached, async |event| match event {
            Finalizing::Apply(memcached) => self.apply(&api, &memcached).await,
            Finalizing::Cleanup(memcached) => {
                self.recorder
                    .warning(&*memcached, "Deleting", "Cleaning up")
                    .await;
                Ok(Action::await_change())
            }
        })
        .await
    }
}

impl MemcachedReconciler {
    async fn apply(&self, api: &Api<Memcached>, memcached: &Memcached) -> Result<Action, Error> {
        let (name, namespace) = (memcached.name_any(), memcached.namespace().unwrap());
        let size = memcached.spec.size;
        let mut deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": size, "selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "memcached", "image": "memcached:1.6.26"}]},
            }},
        }))?;
        controllerutil::set_controller_reference(memcached, &mut deployment)?;
        let applier = Applier::new("memcached-controller");
        let deployments = Api::namespaced(self.client.clone(), &namespace);
        applier
            .apply::<Deployment>(&deployments, &deployment)
            .await?;
        let mut status = memcached.status.clone().unwrap_or_default();
        let message = format!("{size} replicas");
        let generation = memcached.metadata.generation;
        let available = conditions::new(
            "Available",
            Status::True,
            "Reconciled",
            message,
            generation,
            Timestamp::now(),
        );
        if conditions::set(&mut status.conditions, available) {
            applier.apply_status(api, &name, &status).await?;
            self.recorder
                .normal(memcached, "Reconciled", "Deployment applied")
                .await;
        }
        Ok(Action::await_change())
    }
}

type Error = Box<dyn std::error::Error + Send + Sync>;

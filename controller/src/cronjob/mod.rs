//! The CronJob controller: its reconciler and its admission webhooks.
//!
//! [`setup_with_manager`] registers the controller on a [`Manager`], as kubebuilder's
//! `SetupWithManager`: it watches CronJobs and the Jobs they control, and reconciles a
//! CronJob whenever it or one of its Jobs changes, and at its next scheduled run.

pub mod conditions;
pub mod jobs;
pub mod reconciler;
pub mod schedule;
pub mod webhook;
// +kubebuilder:scaffold:submodules

use std::sync::Arc;

use api::v1::CronJob;
use k8s_openapi::api::batch::v1::Job;
use kube::runtime::controller::{Config, Controller};
use kube::runtime::watcher;
use kubebuilder_runtime::{Clock, ControllerContext, Manager};

use self::jobs::OwnedJobs;
use self::reconciler::Reconciler;

/// The controller's name: the `controller` label of its metrics and its readiness check.
pub const CONTROLLER_NAME: &str = "cronjob";

/// How many CronJobs are reconciled at once (one CronJob is never reconciled twice at
/// once). kube-runtime's default is unbounded: at a popular minute every due CronJob would
/// hit the apiserver together and meet its in-flight request limits. With 1,000 CronJobs
/// due at once, `cargo xtask bench controller` measured 64 no faster than 16: the
/// apiserver is the bottleneck.
const MAX_CONCURRENT_RECONCILES: u16 = 16;

/// Registers the CronJob controller on `manager`, reading the time from `clock`.
pub fn setup_with_manager(manager: Manager, clock: Arc<dyn Clock>) -> Manager {
    manager.controller(CONTROLLER_NAME, move |context| run(context, clock.clone()))
}

/// Runs the controller until the manager stops it. Each start (each leadership term)
/// builds its caches afresh.
async fn run(context: ControllerContext, clock: Arc<dyn Clock>) {
    let jobs = OwnedJobs::default();
    let reconciler = Arc::new(Reconciler::new(
        context.client().clone(),
        clock,
        jobs.clone(),
    ));
    context
        .run(
            |scope| {
                Controller::new(scope.api::<CronJob>(), watcher::Config::default())
                    .with_config(Config::default().concurrency(MAX_CONCURRENT_RECONCILES))
                    .owns_stream(jobs.watch(scope.api::<Job>(), scope.namespace()))
            },
            Reconciler::reconcile,
            reconciler,
        )
        .await;
}

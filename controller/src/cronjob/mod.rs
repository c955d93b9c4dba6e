//! The CronJob controller: its reconciler and its admission webhooks.
//!
//! [`setup_with_manager`] registers the controller on a [`Manager`], as kubebuilder's
//! `SetupWithManager`: it indexes Jobs by their controller in the manager's cache, watches
//! CronJobs and the Jobs they own, and reconciles a CronJob whenever it or one of its Jobs
//! changes, and at its next scheduled run.

pub mod conditions;
pub mod jobs;
pub mod reconciler;
pub mod schedule;
pub mod webhook;
pub mod webhook_v2;
// +kubebuilder:scaffold:submodules

use std::sync::Arc;

use api::v1::CronJob;
use k8s_openapi::api::batch::v1::Job;
use kubebuilder_runtime::{Clock, Manager};

use self::jobs::{JOB_OWNER_KEY, controller_uid};
use self::reconciler::CronJobReconciler;

/// The controller's name: the `controller` label of its metrics and its readiness check.
pub const CONTROLLER_NAME: &str = "cronjob";

/// How many CronJobs are reconciled at once (one CronJob is never reconciled twice at
/// once). At a popular minute every due CronJob hits the apiserver together; with 1,000
/// CronJobs due at once, `cargo xtask bench controller` measured 64 no faster than 16:
/// the apiserver is the bottleneck.
const MAX_CONCURRENT_RECONCILES: u16 = 16;

/// Registers the CronJob controller on `manager`, reading the time from `clock`.
pub fn setup_with_manager(manager: Manager, clock: Arc<dyn Clock>) -> Manager {
    let cache = manager.cache();
    cache.index_field::<Job, _>(JOB_OWNER_KEY, |job| {
        controller_uid(job).into_iter().collect()
    });
    // The reconciler reads a Job's metadata and status, never its spec, whose pod template
    // is most of a cached Job's memory: a cluster may hold many Jobs.
    cache.transform::<Job, _>(|job| job.spec = None);
    manager
        .controller_for::<CronJob>()
        .named(CONTROLLER_NAME)
        .owns::<Job>()
        .max_concurrent_reconciles(MAX_CONCURRENT_RECONCILES)
        .complete(CronJobReconciler::new(clock))
}

//! Version `v1` of the API, the storage version.

mod cronjob_types;

pub use cronjob_types::{ConcurrencyPolicy, CronJob, CronJobList, CronJobSpec, CronJobStatus};
// +kubebuilder:scaffold:kinds

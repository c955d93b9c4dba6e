//! Version `v2` of the API: served, not stored. It converts through `v1`, the storage
//! version and hub (see `cronjob_conversion`).

mod cronjob_conversion;
mod cronjob_types;

pub use cronjob_conversion::{V1_SCHEDULE_ANNOTATION, V2_SCHEDULE_ANNOTATION};
pub use cronjob_types::{
    ConcurrencyPolicy, CronJob, CronJobList, CronJobSpec, CronJobStatus, CronSchedule,
};
// +kubebuilder:scaffold:kinds

//! The CronJob kind in v2: v1's types with the schedule as a structured [`CronSchedule`].
//! The types are v2's own, not v1's re-exported: each version's schema evolves on its own.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// CronJobSpec defines the desired state of CronJob.
#[kubebuilder::resource(
    group = "batch.tutorial.kubebuilder.io",
    version = "v2",
    kind = "CronJob",
    status = CronJobStatus,
    resource(short_name = ["cj"], categories = ["all"]),
    subresource(status),
    // kubectl prints the object's fields (`map[minute:*/1]`).
    printcolumn(name = "Schedule", type = "string", json_path = ".spec.schedule"),
    printcolumn(name = "Suspend", type = "boolean", json_path = ".spec.suspend"),
    // JSONPath has no count function: the column shows the first active Job's name.
    printcolumn(name = "Active", type = "string", json_path = ".status.active[*].name"),
    printcolumn(name = "Last Schedule", type = "date", json_path = ".status.lastScheduleTime"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
    hub = crate::v1::CronJob,
)]
pub struct CronJobSpec {
    /// The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.
    #[kubebuilder(required)]
    pub schedule: CronSchedule,

    /// The time zone name for the given schedule, see
    /// https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.
    /// If not specified, the schedule is evaluated in UTC.
    #[kubebuilder(optional)]
    pub time_zone: Option<String>,

    /// Optional deadline in seconds for starting the job if it misses scheduled
    /// time for any reason.  Missed jobs executions will be counted as failed ones.
    #[kubebuilder(optional, validation(minimum = 0))]
    pub starting_deadline_seconds: Option<i64>,

    /// Specifies how to treat concurrent executions of a Job.
    /// Valid values are:
    /// - "Allow" (default): allows CronJobs to run concurrently;
    /// - "Forbid": forbids concurrent runs, skipping next run if previous run hasn't finished yet;
    /// - "Replace": cancels currently running job and replaces it with a new one
    #[kubebuilder(optional, default = "Allow")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,

    /// This flag tells the controller to suspend subsequent executions, it does
    /// not apply to already started executions.  Defaults to false.
    #[kubebuilder(optional)]
    pub suspend: Option<bool>,

    /// Specifies the job that will be created when executing a CronJob.
    #[kubebuilder(required)]
    pub job_template: JobTemplateSpec,

    /// The number of successful finished jobs to retain.
    /// This is a pointer to distinguish between explicit zero and not specified.
    #[kubebuilder(optional, validation(minimum = 0))]
    pub successful_jobs_history_limit: Option<i32>,

    /// The number of failed finished jobs to retain.
    /// This is a pointer to distinguish between explicit zero and not specified.
    #[kubebuilder(optional, validation(minimum = 0))]
    pub failed_jobs_history_limit: Option<i32>,
}

/// Describes a Cron schedule: each field is one part of the standard cron format, `*`
/// when not given.
#[kubebuilder::schema]
#[derive(Default)]
pub struct CronSchedule {
    /// specifies the minute during which the job executes.
    #[kubebuilder(optional)]
    pub minute: Option<String>,
    /// specifies the hour during which the job executes.
    #[kubebuilder(optional)]
    pub hour: Option<String>,
    /// specifies the day of the month during which the job executes.
    #[kubebuilder(optional)]
    pub day_of_month: Option<String>,
    /// specifies the month during which the job executes.
    #[kubebuilder(optional)]
    pub month: Option<String>,
    /// specifies the day of the week during which the job executes.
    #[kubebuilder(optional)]
    pub day_of_week: Option<String>,
}

/// ConcurrencyPolicy describes how the job will be handled.
/// Only one of the following concurrent policies may be specified.
/// If none of the following policies is specified, the default one
/// is AllowConcurrent.
#[kubebuilder::schema]
#[derive(Default)]
pub enum ConcurrencyPolicy {
    /// AllowConcurrent allows CronJobs to run concurrently.
    #[default]
    Allow,
    /// ForbidConcurrent forbids concurrent runs, skipping next run if previous
    /// hasn't finished yet.
    Forbid,
    /// ReplaceConcurrent cancels currently running job and replaces it with a new one.
    Replace,
}

/// CronJobStatus defines the observed state of CronJob.
#[kubebuilder::schema]
#[derive(Default)]
pub struct CronJobStatus {
    /// A list of pointers to currently running jobs.
    #[kubebuilder(
        optional,
        list_type = "atomic",
        validation(min_items = 1, max_items = 10)
    )]
    pub active: Vec<ObjectReference>,

    /// Information when was the last time the job was successfully scheduled.
    #[kubebuilder(optional)]
    pub last_schedule_time: Option<Time>,

    /// conditions represent the current state of the CronJob resource.
    /// Each condition has a unique type and reflects the status of a specific aspect of the resource.
    ///
    /// Standard condition types include:
    /// - "Available": the resource is fully functional
    /// - "Progressing": the resource is being created or updated
    /// - "Degraded": the resource failed to reach or maintain its desired state
    ///
    /// The status of each condition is one of True, False, or Unknown.
    #[kubebuilder(optional, list_type = "map", list_map_key = "type")]
    pub conditions: Vec<Condition>,
}

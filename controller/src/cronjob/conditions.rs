//! The CronJob's status conditions: `Available`, `Progressing` and `Degraded`, set with the
//! semantics of apimachinery's `meta.SetStatusCondition` (`kubebuilder_runtime::conditions`).

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kubebuilder_runtime::conditions;

pub use kubebuilder_runtime::conditions::{Status, find};

/// The CronJob runs its schedule.
pub const AVAILABLE: &str = "Available";
/// The CronJob has work under way.
pub const PROGRESSING: &str = "Progressing";
/// The CronJob failed to reach or keep its desired state.
pub const DEGRADED: &str = "Degraded";

/// What the Jobs of a CronJob say about it (step 6 of the reconcile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    pub suspended: bool,
    pub active: usize,
    pub failed: usize,
}

/// Sets the conditions `summary` calls for; the first case that applies wins: suspended,
/// then failed Jobs, then active Jobs, then all done.
pub fn summarise(
    conditions: &mut Vec<Condition>,
    summary: Summary,
    observed_generation: Option<i64>,
    now: Timestamp,
) {
    // As `meta.SetStatusCondition`: the transition time moves with the status only.
    let mut set = |type_, status, reason, message: String| {
        let condition = conditions::new_at(type_, status, reason, message, now);
        conditions::set(
            conditions,
            Condition {
                observed_generation,
                ..condition
            },
        );
    };
    if summary.suspended {
        set(
            AVAILABLE,
            Status::False,
            "Suspended",
            "CronJob is suspended".into(),
        );
    } else if summary.failed > 0 {
        let message = format!("{} job(s) have failed", summary.failed);
        set(DEGRADED, Status::True, "JobsFailed", message.clone());
        set(AVAILABLE, Status::False, "JobsFailed", message);
    } else if summary.active > 0 {
        set(
            PROGRESSING,
            Status::True,
            "JobsActive",
            format!("{} job(s) are currently active", summary.active),
        );
        set(
            AVAILABLE,
            Status::True,
            "JobsActive",
            format!(
                "CronJob is progressing with {} active job(s)",
                summary.active
            ),
        );
    } else {
        set(
            AVAILABLE,
            Status::True,
            "AllJobsCompleted",
            "All jobs have completed successfully".into(),
        );
        set(
            PROGRESSING,
            Status::False,
            "NoJobsActive",
            "No jobs are currently active".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    fn view(conditions: &[Condition]) -> Vec<(&str, &str, &str, &str)> {
        conditions
            .iter()
            .map(|condition| {
                (
                    condition.type_.as_str(),
                    condition.status.as_str(),
                    condition.reason.as_str(),
                    condition.message.as_str(),
                )
            })
            .collect()
    }

    #[test]
    fn the_first_matching_case_sets_the_conditions() {
        let now = at("2026-11-30T10:00:00Z");
        let summarised = |suspended, active, failed| {
            let mut conditions = Vec::new();
            summarise(
                &mut conditions,
                Summary {
                    suspended,
                    active,
                    failed,
                },
                Some(1),
                now,
            );
            conditions
        };
        assert_eq!(
            view(&summarised(true, 2, 1)),
            [(AVAILABLE, "False", "Suspended", "CronJob is suspended")]
        );
        assert_eq!(
            view(&summarised(false, 2, 3)),
            [
                (DEGRADED, "True", "JobsFailed", "3 job(s) have failed"),
                (AVAILABLE, "False", "JobsFailed", "3 job(s) have failed"),
            ]
        );
        assert_eq!(
            view(&summarised(false, 2, 0)),
            [
                (
                    PROGRESSING,
                    "True",
                    "JobsActive",
                    "2 job(s) are currently active"
                ),
                (
                    AVAILABLE,
                    "True",
                    "JobsActive",
                    "CronJob is progressing with 2 active job(s)"
                ),
            ]
        );
        assert_eq!(
            view(&summarised(false, 0, 0)),
            [
                (
                    AVAILABLE,
                    "True",
                    "AllJobsCompleted",
                    "All jobs have completed successfully"
                ),
                (
                    PROGRESSING,
                    "False",
                    "NoJobsActive",
                    "No jobs are currently active"
                ),
            ]
        );
    }
}

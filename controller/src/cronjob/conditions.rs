//! The CronJob's status conditions: `Available`, `Progressing` and `Degraded`, set with the
//! semantics of apimachinery's `meta.SetStatusCondition`.

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

/// Sets the condition of type `type_`, as `meta.SetStatusCondition`: a new condition, or a
/// change of status, gets `now` as its last transition time; otherwise the time is kept and
/// only reason, message and observed generation are updated.
pub fn set(
    conditions: &mut Vec<Condition>,
    type_: &str,
    status: Status,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
    now: Timestamp,
) {
    let condition = conditions::new(type_, status, reason, message, observed_generation, now);
    conditions::set(conditions, condition);
}

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
    let mut set = |type_, status, reason, message: String| {
        set(
            conditions,
            type_,
            status,
            reason,
            message,
            observed_generation,
            now,
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
    fn transition_time_changes_only_with_the_status() {
        let mut conditions = Vec::new();
        let first = at("2026-11-30T10:00:00.750Z");
        set(
            &mut conditions,
            DEGRADED,
            Status::True,
            "A",
            "a",
            Some(1),
            first,
        );
        assert_eq!(
            conditions[0].last_transition_time.0,
            at("2026-11-30T10:00:00Z")
        );

        // Same status: reason, message and generation follow, the time stays.
        set(
            &mut conditions,
            DEGRADED,
            Status::True,
            "B",
            "b",
            Some(2),
            at("2026-11-30T11:00:00Z"),
        );
        assert_eq!(view(&conditions), [(DEGRADED, "True", "B", "b")]);
        assert_eq!(conditions[0].observed_generation, Some(2));
        assert_eq!(
            conditions[0].last_transition_time.0,
            at("2026-11-30T10:00:00Z")
        );

        // New status: new time.
        set(
            &mut conditions,
            DEGRADED,
            Status::False,
            "C",
            "c",
            Some(2),
            at("2026-11-30T12:00:00Z"),
        );
        assert_eq!(
            conditions[0].last_transition_time.0,
            at("2026-11-30T12:00:00Z")
        );
        assert_eq!(conditions.len(), 1);
        assert_eq!(find(&conditions, DEGRADED).unwrap().reason, "C");
        assert!(find(&conditions, AVAILABLE).is_none());
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

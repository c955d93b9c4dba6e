//! Status conditions as apimachinery's `meta` package handles them
//! (`SetStatusCondition`, `FindStatusCondition`, `RemoveStatusCondition`,
//! `IsStatusConditionTrue`/`False`): one condition per type, whose last transition time
//! moves only when its status changes.
//!
//! ```
//! use k8s_openapi::jiff::Timestamp;
//! use kubebuilder_runtime::conditions::{self, Status};
//!
//! let mut conditions = Vec::new();
//! let ready = conditions::new("Ready", Status::True, "Reconciled", "all replicas up");
//! assert!(conditions::set(&mut conditions, ready));
//! assert!(conditions::is_true(&conditions, "Ready"));
//! assert!(conditions::remove(&mut conditions, "Ready"));
//!
//! // A reconciler's clock, and the generation the condition speaks for:
//! let at = "2026-11-30T10:00:00Z".parse::<Timestamp>()?;
//! let ready = conditions::new_at("Ready", Status::True, "Reconciled", "up", at);
//! let job: k8s_openapi::api::batch::v1::Job = serde_json::from_value(
//!     serde_json::json!({"metadata": {"name": "pi", "generation": 3}}),
//! )?;
//! assert!(conditions::set_for(&job, &mut conditions, ready));
//! assert_eq!(conditions[0].observed_generation, Some(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Resource;

/// A condition's status: `metav1.ConditionStatus`, whose only values are these three.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// `True`: the condition holds.
    True,
    /// `False`: the condition does not hold.
    False,
    /// `Unknown`: the controller cannot tell (yet).
    Unknown,
}

impl Status {
    /// The status as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::True => "True",
            Status::False => "False",
            Status::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<bool> for Status {
    fn from(holds: bool) -> Self {
        if holds { Status::True } else { Status::False }
    }
}

/// A condition to pass to [`set`] (or [`set_for`]), with the present as its transition
/// time (which `set` keeps only when the type is new or the status changes): Go's
/// `metav1.Condition{...}` literal, whose time `meta.SetStatusCondition` fills in.
pub fn new(type_: &str, status: Status, reason: &str, message: impl Into<String>) -> Condition {
    new_at(type_, status, reason, message, Timestamp::now())
}

/// [`new`] at the time `now` (a reconciler's [`Clock`](crate::Clock)). The time is cut to
/// whole seconds: the API stores condition times in seconds, so a condition compared with
/// what the apiserver returned would otherwise differ in its nanoseconds alone.
pub fn new_at(
    type_: &str,
    status: Status,
    reason: &str,
    message: impl Into<String>,
    now: Timestamp,
) -> Condition {
    let whole_seconds = Timestamp::from_second(now.as_second())
        .expect("a timestamp's whole seconds are a valid timestamp");
    Condition {
        type_: type_.to_owned(),
        status: status.as_str().to_owned(),
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation: None,
        last_transition_time: Time(whole_seconds),
    }
}

/// [`set`] with the condition's `observedGeneration` taken from `object`: the condition
/// says what the controller saw of that generation of its spec.
pub fn set_for(
    object: &impl Resource,
    conditions: &mut Vec<Condition>,
    condition: Condition,
) -> bool {
    let observed_generation = object.meta().generation;
    set(
        conditions,
        Condition {
            observed_generation,
            ..condition
        },
    )
}

/// Sets `condition` in `conditions`, replacing the one of the same type. Its
/// `last_transition_time` is taken only when the type is new or its status changes;
/// otherwise the recorded time stays and reason, message and observed generation are
/// updated. Returns whether anything changed, so that an unchanged status need not be
/// written (writing it would only trigger another reconcile).
pub fn set(conditions: &mut Vec<Condition>, condition: Condition) -> bool {
    let Some(existing) = conditions
        .iter_mut()
        .find(|existing| existing.type_ == condition.type_)
    else {
        conditions.push(condition);
        return true;
    };
    let mut changed = false;
    if existing.status != condition.status {
        existing.status = condition.status;
        existing.last_transition_time = condition.last_transition_time;
        changed = true;
    }
    if existing.reason != condition.reason {
        existing.reason = condition.reason;
        changed = true;
    }
    if existing.message != condition.message {
        existing.message = condition.message;
        changed = true;
    }
    if existing.observed_generation != condition.observed_generation {
        existing.observed_generation = condition.observed_generation;
        changed = true;
    }
    changed
}

/// The condition of type `type_`, if set.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|condition| condition.type_ == type_)
}

/// Whether the condition of type `type_` is set with `status`
/// (`meta.IsStatusConditionPresentAndEqual`).
pub fn has_status(conditions: &[Condition], type_: &str, status: Status) -> bool {
    find(conditions, type_).is_some_and(|condition| condition.status == status.as_str())
}

/// Whether the condition of type `type_` is set and `True` (`meta.IsStatusConditionTrue`).
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    has_status(conditions, type_, Status::True)
}

/// Whether the condition of type `type_` is set and `False` (`meta.IsStatusConditionFalse`);
/// an absent condition is neither true nor false.
pub fn is_false(conditions: &[Condition], type_: &str) -> bool {
    has_status(conditions, type_, Status::False)
}

/// Removes the condition of type `type_`; returns whether there was one
/// (`meta.RemoveStatusCondition`).
pub fn remove(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|condition| condition.type_ != type_);
    conditions.len() != before
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn condition(status: &str, reason: &str, generation: i64, second: i64) -> Condition {
        Condition {
            type_: "Available".to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: format!("{reason} at generation {generation}"),
            observed_generation: Some(generation),
            last_transition_time: Time(Timestamp::from_second(second).unwrap()),
        }
    }

    #[test]
    fn a_new_type_is_added() {
        let mut conditions = Vec::new();
        assert!(set(&mut conditions, condition("True", "Reconciled", 1, 10)));
        assert_eq!(conditions, [condition("True", "Reconciled", 1, 10)]);
        assert_eq!(find(&conditions, "Available"), Some(&conditions[0]));
        assert_eq!(find(&conditions, "Degraded"), None);
    }

    #[test]
    fn the_same_condition_again_changes_nothing_not_even_the_time() {
        let mut conditions = vec![condition("True", "Reconciled", 1, 10)];
        assert!(!set(
            &mut conditions,
            condition("True", "Reconciled", 1, 20)
        ));
        assert_eq!(conditions, [condition("True", "Reconciled", 1, 10)]);
    }

    #[test]
    fn the_transition_time_moves_with_the_status_only() {
        let mut conditions = vec![condition("True", "Reconciled", 1, 10)];
        assert!(set(&mut conditions, condition("True", "Updated", 2, 20)));
        let kept_time = condition("True", "Updated", 2, 10);
        assert_eq!(conditions, [kept_time]);

        assert!(set(&mut conditions, condition("False", "Failed", 2, 30)));
        assert_eq!(conditions, [condition("False", "Failed", 2, 30)]);
    }

    #[test]
    fn new_takes_whole_seconds_and_set_keeps_the_first_time_while_the_status_holds() {
        let at = |text: &str| text.parse::<Timestamp>().unwrap();
        let mut conditions = Vec::new();
        let first = new_at(
            "Available",
            Status::True,
            "Reconciled",
            "up",
            at("2026-11-30T10:00:00.750Z"),
        );
        assert_eq!(first.last_transition_time.0, at("2026-11-30T10:00:00Z"));
        assert_eq!(first.status, "True");
        assert!(set(&mut conditions, first));
        let later = at("2026-11-30T11:00:00Z");
        let same_status = new_at("Available", Status::True, "Scaled", "up", later);
        assert!(set(&mut conditions, same_status));
        assert_eq!(
            conditions[0].last_transition_time.0,
            at("2026-11-30T10:00:00Z")
        );
        assert_eq!(conditions[0].reason, "Scaled");
    }

    #[test]
    fn is_true_and_is_false_see_only_a_present_condition() {
        let mut conditions = vec![condition("True", "Reconciled", 1, 10)];
        assert!(is_true(&conditions, "Available"));
        assert!(!is_false(&conditions, "Available"));
        assert!(!is_true(&conditions, "Degraded") && !is_false(&conditions, "Degraded"));
        conditions[0].status = Status::Unknown.to_string();
        assert!(!is_true(&conditions, "Available") && !is_false(&conditions, "Available"));
        assert!(has_status(&conditions, "Available", Status::Unknown));
        assert_eq!(Status::from(false), Status::False);
    }

    #[test]
    fn remove_reports_whether_the_type_was_there() {
        let mut conditions = vec![condition("True", "Reconciled", 1, 10)];
        assert!(!remove(&mut conditions, "Degraded"));
        assert_eq!(conditions.len(), 1);
        assert!(remove(&mut conditions, "Available"));
        assert!(conditions.is_empty());
    }
}

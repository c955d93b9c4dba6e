//! Status conditions as apimachinery's `meta.SetStatusCondition` and
//! `meta.FindStatusCondition` handle them: one condition per type, whose last transition
//! time moves only when its status changes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

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
}

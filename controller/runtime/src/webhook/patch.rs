//! The defaulting webhook's answer: a JSON patch from the object the apiserver sent to
//! the object the defaulter returned.

use json_patch::{Patch, PatchOperation};
use serde_json::Value;

/// The patch turning `received` (the object as the apiserver sent it) into `defaulted`.
///
/// `decoded` is `received` after a trip through the Rust type, before defaulting. Fields
/// the type does not know (or drops when empty) are missing from both `decoded` and
/// `defaulted`; a plain diff would remove them from the stored object. Removals are
/// therefore kept only where the field existed in `decoded`, i.e. where the defaulter
/// itself removed it.
pub fn defaulting_patch(received: &Value, decoded: &Value, defaulted: &Value) -> Patch {
    let Patch(operations) = json_patch::diff(received, defaulted);
    Patch(
        operations
            .into_iter()
            .filter(|operation| match operation {
                PatchOperation::Remove(remove) => decoded.pointer(remove.path.as_str()).is_some(),
                _ => true,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn patch_json(patch: &Patch) -> Value {
        serde_json::to_value(patch).unwrap()
    }

    #[test]
    fn adds_defaults_and_keeps_set_values() {
        let received = json!({"spec": {"schedule": "* * * * *", "suspend": true}});
        let defaulted = json!({"spec": {"schedule": "* * * * *", "suspend": true, "concurrencyPolicy": "Allow"}});
        let patch = defaulting_patch(&received, &received, &defaulted);
        assert_eq!(
            patch_json(&patch),
            json!([{"op": "add", "path": "/spec/concurrencyPolicy", "value": "Allow"}])
        );
        let mut applied = received.clone();
        json_patch::patch(&mut applied, &patch).unwrap();
        assert_eq!(applied, defaulted);
    }

    #[test]
    fn nothing_to_change_is_an_empty_patch() {
        let object = json!({"spec": {"a": 1, "list": [1, 2]}});
        assert!(defaulting_patch(&object, &object, &object).0.is_empty());
    }

    #[test]
    fn replaces_changed_values_and_escapes_pointer_segments() {
        let received = json!({"metadata": {"labels": {"app.kubernetes.io/name": "x"}}});
        let defaulted = json!({"metadata": {"labels": {"app.kubernetes.io/name": "y"}}});
        let patch = defaulting_patch(&received, &received, &defaulted);
        assert_eq!(
            patch_json(&patch),
            json!([{"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "y"}])
        );
    }

    #[test]
    fn unknown_fields_survive_but_deliberate_removals_do_not() {
        let received =
            json!({"spec": {"known": 1, "legacy": true, "unknown": {"x": 1}}, "extra": [1]});
        // The Rust type knows `known` and `legacy`, not `unknown` or `extra`.
        let decoded = json!({"spec": {"known": 1, "legacy": true}});
        // The defaulter dropped `legacy` and added `added`.
        let defaulted = json!({"spec": {"known": 1, "added": "v"}});
        let patch = defaulting_patch(&received, &decoded, &defaulted);
        let mut applied = received.clone();
        json_patch::patch(&mut applied, &patch).unwrap();
        assert_eq!(
            applied,
            json!({"spec": {"known": 1, "added": "v", "unknown": {"x": 1}}, "extra": [1]})
        );
    }

    #[test]
    fn list_items_are_patched_in_place() {
        let received = json!({"spec": {"containers": [{"name": "a"}, {"name": "b", "future": 1}]}});
        let decoded = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let defaulted = json!({"spec": {"containers": [{"name": "a", "pull": "IfNotPresent"}, {"name": "b", "pull": "IfNotPresent"}]}});
        let patch = defaulting_patch(&received, &decoded, &defaulted);
        let mut applied = received.clone();
        json_patch::patch(&mut applied, &patch).unwrap();
        assert_eq!(
            applied,
            json!({"spec": {"containers": [{"name": "a", "pull": "IfNotPresent"}, {"name": "b", "future": 1, "pull": "IfNotPresent"}]}})
        );
    }
}

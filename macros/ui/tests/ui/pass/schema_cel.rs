//! x_validation (every argument), at_most_one_of, exactly_one_of, at_least_one_of.
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema(
    validation(x_validation(rule = "self.min <= self.max", message = "min must not exceed max")),
    validation(at_most_one_of = ["a", "b"], exactly_one_of = ["c", "d"], at_least_one_of = ["a", "c"]),
)]
pub struct Range {
    pub min: i32,
    pub max: i32,
    #[kubebuilder(optional)]
    pub a: Option<String>,
    #[kubebuilder(optional)]
    pub b: Option<String>,
    #[kubebuilder(optional)]
    pub c: Option<String>,
    #[kubebuilder(optional)]
    pub d: Option<String>,
    #[kubebuilder(validation(
        x_validation(
            rule = "self == oldSelf",
            message_expression = "'name is immutable, was ' + oldSelf",
            reason = "FieldValueForbidden",
            field_path = ".name",
            optional_old_self = true,
        ),
        x_validation(
            rule = "self.size() > 0",
            message = "must not be empty",
            reason = "FieldValueRequired"
        ),
        items(x_validation(rule = "self != 'x'")),
    ))]
    pub names: Vec<String>,
}

fn main() {
    let schema = serde_json::to_value(Range::schema()).unwrap();
    assert_eq!(
        schema["x-kubernetes-validations"],
        json!([
            {"rule": "self.min <= self.max", "message": "min must not exceed max"},
            {"rule": "(has(self.a)?1:0)+(has(self.b)?1:0) <= 1",
             "message": "at most one of the fields in [a b] may be set"},
            {"rule": "(has(self.c)?1:0)+(has(self.d)?1:0) == 1",
             "message": "exactly one of the fields in [c d] must be set"},
            {"rule": "has(self.a)||has(self.c)",
             "message": "at least one of the fields in [a c] must be set"},
        ])
    );
    let names = &schema["properties"]["names"];
    assert_eq!(
        names["x-kubernetes-validations"],
        json!([
            {"rule": "self == oldSelf", "messageExpression": "'name is immutable, was ' + oldSelf",
             "reason": "FieldValueForbidden", "fieldPath": ".name", "optionalOldSelf": true},
            {"rule": "self.size() > 0", "message": "must not be empty", "reason": "FieldValueRequired"},
        ])
    );
    assert_eq!(
        names["items"]["x-kubernetes-validations"],
        json!([{"rule": "self != 'x'"}])
    );
}

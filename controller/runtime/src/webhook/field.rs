//! Field errors as Kubernetes reports them (`k8s.io/apimachinery/pkg/util/validation/field`)
//! and the `Invalid` status they add up to (`apierrors.NewInvalid`): HTTP 422, reason
//! `Invalid`, the kind and group of the object, and one cause per field path.

use std::fmt;

use kube::core::Status;
use kube::core::response::{StatusCause, StatusDetails};
use serde_json::Value;

/// A path to a field, written as Kubernetes writes them: `spec.containers[0].image`,
/// `metadata.labels[app]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path starting at the top-level field `name`.
    pub fn new(name: &str) -> Self {
        Self(name.to_owned())
    }

    /// The child field `name`.
    #[must_use]
    pub fn child(mut self, name: &str) -> Self {
        self.0.push('.');
        self.0.push_str(name);
        self
    }

    /// The list item at `index`.
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        self.0.push_str(&format!("[{index}]"));
        self
    }

    /// The map entry at `key`.
    #[must_use]
    pub fn key(mut self, key: &str) -> Self {
        self.0.push_str(&format!("[{key}]"));
        self
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for FieldPath {
    /// A path written out in full, e.g. `"spec.schedule"`.
    fn from(path: &str) -> Self {
        Self(path.to_owned())
    }
}

/// Why a field is wrong; the names of Kubernetes' `field.ErrorType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `field.NotFound`: a value that should exist does not.
    NotFound,
    /// `field.Required`: a required value is missing.
    Required,
    /// `field.Duplicate`: a value that must be unique is repeated.
    Duplicate,
    /// `field.Invalid`: a malformed value.
    Invalid,
    /// `field.NotSupported`: a value outside an enumeration.
    NotSupported,
    /// `field.Forbidden`: a value not allowed here, whatever its form.
    Forbidden,
    /// `field.TooLong`: a value longer than allowed.
    TooLong,
    /// `field.TooMany`: more items than allowed.
    TooMany,
    /// `field.InternalError`: a failure unrelated to the input.
    Internal,
    /// `field.TypeInvalid`: a value of the wrong type.
    TypeInvalid,
}

impl FieldErrorType {
    /// The cause type in a Status (`FieldValueInvalid`, ...).
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::Internal => "InternalError",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The words in a message (`Invalid value`, ...).
    pub fn message(self) -> &'static str {
        match self {
            FieldErrorType::NotFound => "Not found",
            FieldErrorType::Required => "Required value",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Invalid | FieldErrorType::TypeInvalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::Internal => "Internal error",
        }
    }

    /// Kubernetes leaves the offending value out of these messages.
    fn hides_value(self) -> bool {
        matches!(
            self,
            FieldErrorType::Required
                | FieldErrorType::Forbidden
                | FieldErrorType::TooLong
                | FieldErrorType::Internal
        )
    }
}

/// One wrong field: where, why, the offending value, and a detail for humans.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// Why the field is wrong: the cause's type in the status, and the message's words.
    pub error_type: FieldErrorType,
    /// The wrong field.
    pub field: FieldPath,
    /// The offending value; `None` leaves it out of the message.
    pub bad_value: Option<Value>,
    /// What is wrong, for humans; empty when the error type says it all.
    pub detail: String,
}

impl FieldError {
    /// A malformed value (`field.Invalid`).
    pub fn invalid(
        field: impl Into<FieldPath>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(FieldErrorType::Invalid, field, Some(value.into()), detail)
    }

    /// A missing value (`field.Required`).
    pub fn required(field: impl Into<FieldPath>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Required, field, None, detail)
    }

    /// A value not allowed here (`field.Forbidden`).
    pub fn forbidden(field: impl Into<FieldPath>, detail: impl Into<String>) -> Self {
        Self::new(FieldErrorType::Forbidden, field, None, detail)
    }

    /// A value outside an enumeration (`field.NotSupported`).
    pub fn not_supported(
        field: impl Into<FieldPath>,
        value: impl Into<Value>,
        supported: &[&str],
    ) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|value| format!("{value:?}")).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(
            FieldErrorType::NotSupported,
            field,
            Some(value.into()),
            detail,
        )
    }

    /// A value longer than `max_length` (`field.TooLongMaxLength`).
    pub fn too_long(field: impl Into<FieldPath>, max_length: usize) -> Self {
        Self::new(
            FieldErrorType::TooLong,
            field,
            None,
            format!("may not be longer than {max_length}"),
        )
    }

    /// A value that must be unique but is not (`field.Duplicate`).
    pub fn duplicate(field: impl Into<FieldPath>, value: impl Into<Value>) -> Self {
        Self::new(FieldErrorType::Duplicate, field, Some(value.into()), "")
    }

    /// A failure unrelated to the input (`field.InternalError`).
    pub fn internal(field: impl Into<FieldPath>, err: &dyn std::error::Error) -> Self {
        Self::new(FieldErrorType::Internal, field, None, err.to_string())
    }

    /// Any other kind of field error.
    pub fn new(
        error_type: FieldErrorType,
        field: impl Into<FieldPath>,
        bad_value: Option<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            error_type,
            field: field.into(),
            bad_value,
            detail: detail.into(),
        }
    }

    /// The message without the field, as Go's `ErrorBody`: `Invalid value: "x": detail`.
    pub fn body(&self) -> String {
        let mut body = self.error_type.message().to_owned();
        if let Some(value) = self
            .bad_value
            .as_ref()
            .filter(|_| !self.error_type.hides_value())
        {
            body.push_str(": ");
            match value {
                // Go quotes strings with %q; Rust's Debug quoting agrees for printable text.
                Value::String(text) => body.push_str(&format!("{text:?}")),
                other => body.push_str(&other.to_string()),
            }
        }
        if !self.detail.is_empty() {
            body.push_str(": ");
            body.push_str(&self.detail);
        }
        body
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// The `Invalid` status for `errors` on object `name` of `kind` in `group`, as
/// `apierrors.NewInvalid` builds it.
pub fn invalid_status(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Status {
    let qualified_kind = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}.{group}")
    };
    // Go's aggregate: duplicates dropped, one message bare, several in brackets.
    let mut messages: Vec<String> = Vec::new();
    for error in errors {
        let message = error.to_string();
        if !messages.contains(&message) {
            messages.push(message);
        }
    }
    let message = match messages.as_slice() {
        [] => format!("{qualified_kind} {name:?} is invalid"),
        [one] => format!("{qualified_kind} {name:?} is invalid: {one}"),
        many => format!(
            "{qualified_kind} {name:?} is invalid: [{}]",
            many.join(", ")
        ),
    };
    let causes = errors
        .iter()
        .map(|error| StatusCause {
            reason: error.error_type.reason().to_owned(),
            message: error.body(),
            field: error.field.to_string(),
        })
        .collect();
    Status::failure(&message, "Invalid")
        .with_code(422)
        .with_details(StatusDetails {
            name: name.to_owned(),
            group: group.to_owned(),
            kind: kind.to_owned(),
            uid: String::new(),
            causes,
            retry_after_seconds: 0,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_as_kubernetes_writes_them() {
        let name = FieldError::invalid(
            FieldPath::new("metadata").child("name"),
            "a-very-long-name",
            "must be no more than 52 characters",
        );
        assert_eq!(
            name.to_string(),
            r#"metadata.name: Invalid value: "a-very-long-name": must be no more than 52 characters"#
        );
        let required = FieldError::required("spec.schedule", "");
        assert_eq!(required.to_string(), "spec.schedule: Required value");
        let replicas =
            FieldError::invalid("spec.replicas", -1, "must be greater than or equal to 0");
        assert_eq!(
            replicas.body(),
            "Invalid value: -1: must be greater than or equal to 0"
        );
        let policy = FieldError::not_supported(
            "spec.concurrencyPolicy",
            "Sometimes",
            &["Allow", "Forbid", "Replace"],
        );
        assert_eq!(
            policy.to_string(),
            r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#
        );
        let long = FieldError::too_long(FieldPath::new("spec").child("args").index(2), 10);
        assert_eq!(
            long.to_string(),
            "spec.args[2]: Too long: may not be longer than 10"
        );
        let label = FieldError::forbidden(
            FieldPath::new("metadata").child("labels").key("app"),
            "immutable",
        );
        assert_eq!(
            label.to_string(),
            "metadata.labels[app]: Forbidden: immutable"
        );
        assert_eq!(
            FieldError::duplicate("spec.ports[1].name", "http").body(),
            r#"Duplicate value: "http""#
        );
        let io = std::io::Error::other("disk on fire");
        assert_eq!(
            FieldError::internal("spec", &io).to_string(),
            "spec: Internal error: disk on fire"
        );
    }

    #[test]
    fn one_invalid_status_carries_every_cause() {
        let errors = [
            FieldError::invalid("metadata.name", "n", "too long"),
            FieldError::invalid("spec.schedule", "bad", "unparsable"),
        ];
        let status = invalid_status("batch.example.io", "CronJob", "n", &errors);
        assert_eq!(status.code, 422);
        assert_eq!(status.reason, "Invalid");
        assert!(status.is_failure());
        assert_eq!(
            status.message,
            r#"CronJob.batch.example.io "n" is invalid: [metadata.name: Invalid value: "n": too long, spec.schedule: Invalid value: "bad": unparsable]"#
        );
        let details = status.details.unwrap();
        assert_eq!(
            (
                details.group.as_str(),
                details.kind.as_str(),
                details.name.as_str()
            ),
            ("batch.example.io", "CronJob", "n")
        );
        let fields: Vec<_> = details
            .causes
            .iter()
            .map(|cause| (cause.reason.as_str(), cause.field.as_str()))
            .collect();
        assert_eq!(
            fields,
            [
                ("FieldValueInvalid", "metadata.name"),
                ("FieldValueInvalid", "spec.schedule")
            ]
        );
        assert_eq!(
            details.causes[1].message,
            r#"Invalid value: "bad": unparsable"#
        );

        let single = invalid_status("", "ConfigMap", "c", &errors[..1]);
        assert_eq!(
            single.message,
            r#"ConfigMap "c" is invalid: metadata.name: Invalid value: "n": too long"#
        );
        assert_eq!(
            invalid_status("", "ConfigMap", "c", &[]).message,
            r#"ConfigMap "c" is invalid"#
        );
    }
}

//! The conversion endpoint: `apiextensions.k8s.io/v1` ConversionReviews in and out, each
//! object converted through its kind's hub by the spokes `hub =` registered
//! ([`kubebuilder::conversion`]).
//!
//! As the apiserver requires, a converted object keeps the metadata it came with except
//! labels and annotations (where conversions carry what a version cannot say). One object
//! that cannot be converted fails the whole review, with a message naming it; a panic
//! in a conversion is such a failure too, and counted.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use http::{Response, StatusCode};
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kubebuilder::conversion::{ConversionError, convert};
use kubebuilder::crd::Version;
use serde_json::Value;

use crate::controller::panic_message;
use crate::http::Body;
use crate::metrics::Metrics;

/// The kinds one conversion endpoint converts: their hubs by `(group, kind)`.
#[derive(Clone, Debug, Default)]
pub(super) struct Conversions {
    hubs: BTreeMap<(String, String), Version>,
}

/// Why one object was not converted.
enum Failure {
    Conversion(ConversionError),
    Panic(String),
}

impl Conversions {
    pub(super) fn with(mut self, hub: Version) -> Self {
        self.hubs
            .insert((hub.group.to_string(), hub.kind.to_string()), hub);
        self
    }

    pub(super) fn merge(mut self, other: &Conversions) -> Self {
        self.hubs.extend(
            other
                .hubs
                .iter()
                .map(|(key, hub)| (key.clone(), hub.clone())),
        );
        self
    }

    /// The hub versions of the converted kinds.
    pub(super) fn hubs(&self) -> impl Iterator<Item = &Version> {
        self.hubs.values()
    }

    /// Answers a ConversionReview: 200 with the converted objects or a Failure result,
    /// 400 when the body is not a review with a request.
    pub(super) fn review(&self, body: &[u8], metrics: Option<&Metrics>) -> Response<Body> {
        let mut request = match parse(body) {
            Ok(request) => request,
            Err(reason) => return refused(StatusCode::BAD_REQUEST, &reason),
        };
        let desired = request.desired_api_version.clone();
        let objects = std::mem::take(&mut request.objects);
        let response = ConversionResponse::for_request(request);
        let converted: Result<Vec<Value>, String> = objects
            .into_iter()
            .map(|object| self.convert_one(object, &desired, metrics))
            .collect();
        let response = match converted {
            Ok(objects) => response.success(objects),
            Err(message) => {
                tracing::warn!(uid = %response.uid, %message, "conversion failed");
                response.failure(Status::failure(&message, "Invalid").with_code(422))
            }
        };
        review_response(StatusCode::OK, response)
    }

    /// One object in `desired`, its metadata as received but for labels and annotations.
    fn convert_one(
        &self,
        object: Value,
        desired: &str,
        metrics: Option<&Metrics>,
    ) -> Result<Value, String> {
        let name = describe(&object);
        let kind = (
            group_of(&object).to_owned(),
            string(&object, "kind").to_owned(),
        );
        if !self.hubs.contains_key(&kind) {
            return Err(format!("{name}: this webhook does not convert {}", kind.1));
        }
        let metadata = object["metadata"].clone();
        let converted = catch_unwind(AssertUnwindSafe(|| convert(object, desired)))
            .map_err(|panic| Failure::Panic(panic_message(panic.as_ref())))
            .and_then(|result| result.map_err(Failure::Conversion));
        let mut converted = match converted {
            Ok(converted) => converted,
            Err(Failure::Conversion(err)) => {
                return Err(format!("converting {name} to {desired}: {err}"));
            }
            Err(Failure::Panic(message)) => {
                tracing::error!(object = %name, %message, "Observed a panic in a conversion");
                if let Some(metrics) = metrics {
                    metrics.webhook_panicked();
                }
                return Err(format!(
                    "converting {name} to {desired}: panic: {message} [recovered]"
                ));
            }
        };
        converted["metadata"] = kept_metadata(metadata, &converted["metadata"]);
        Ok(converted)
    }
}

/// The received metadata with the converted labels and annotations.
fn kept_metadata(mut received: Value, converted: &Value) -> Value {
    if let Some(fields) = received.as_object_mut() {
        for field in ["labels", "annotations"] {
            match converted.get(field) {
                Some(value) if !value.is_null() => {
                    fields.insert(field.to_owned(), value.clone());
                }
                _ => {
                    fields.remove(field);
                }
            }
        }
    }
    received
}

/// A ConversionReview refusing a request that is not one, with the HTTP status as its
/// result's code.
pub(super) fn refused(status: StatusCode, reason: &str) -> Response<Body> {
    tracing::debug!(%status, %reason, "bad conversion request");
    let result = Status::failure(reason, "BadRequest").with_code(status.as_u16());
    review_response(status, ConversionResponse::invalid(result))
}

fn parse(body: &[u8]) -> Result<ConversionRequest, String> {
    let review: ConversionReview = serde_json::from_slice(body)
        .map_err(|err| format!("cannot decode the ConversionReview: {err}"))?;
    super::check_review_type(&review.types, "apiextensions.k8s.io", "ConversionReview")?;
    ConversionRequest::try_from(review).map_err(|err| err.to_string())
}

fn string<'a>(object: &'a Value, field: &str) -> &'a str {
    object[field].as_str().unwrap_or_default()
}

fn group_of(object: &Value) -> &str {
    string(object, "apiVersion")
        .rsplit_once('/')
        .map_or("", |(group, _)| group)
}

/// `CronJob default/hello (batch.tutorial.kubebuilder.io/v1)`, for failure messages.
fn describe(object: &Value) -> String {
    let metadata = &object["metadata"];
    let name = string(metadata, "name");
    let key = match metadata["namespace"].as_str() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    };
    format!(
        "{} {key} ({})",
        string(object, "kind"),
        string(object, "apiVersion")
    )
}

fn review_response(status: StatusCode, response: ConversionResponse) -> Response<Body> {
    super::json_reply(status, &response.into_review())
}

//! Admission webhooks: typed [`Defaulter`] and [`Validator`] traits, registered per kind
//! on [`Webhooks`] at the path their `#[kubebuilder::webhook]` declaration names, and the
//! HTTP side that turns AdmissionReview v1 requests into calls of those traits.

mod field;
mod install;
mod patch;

use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Limited};
use hyper::body::Incoming;
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{DynamicObject, Status};
use kubebuilder::webhook::{Declared, Webhook};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use field::{FieldError, FieldErrorType, FieldPath, invalid_status};
pub use install::{LoopbackRegistration, RegisteredWebhooks};

use self::patch::defaulting_patch;
use crate::http::{Body, respond, text};

/// Warnings returned to the API client with an allowed request.
pub type Warnings = Vec<String>;

/// The largest AdmissionReview accepted (controller-runtime's limit): an object and its
/// old version, each up to the apiserver's ~3 MiB.
const MAX_REVIEW_BYTES: usize = 7 * 1024 * 1024;

/// Sets defaults on objects of kind `K` as they are created or updated.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Fills in the defaults of `object`. The webhook answers with the JSON patch from the
    /// object received to the object left here; an error refuses the request as Invalid.
    fn default(&self, object: &mut K) -> impl Future<Output = Result<(), Vec<FieldError>>> + Send;
}

/// Checks objects of kind `K` as they are created, updated or deleted.
pub trait Validator<K>: Send + Sync + 'static {
    /// Checks a new object.
    fn validate_create(
        &self,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send;

    /// Checks a change from `old` to `new`.
    fn validate_update(
        &self,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send;

    /// Checks a deletion; allowed unless overridden.
    fn validate_delete(
        &self,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send {
        let _ = object;
        async { Ok(Warnings::new()) }
    }
}

/// The bounds a kind needs to be handled by a webhook.
pub trait WebhookKind:
    Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

impl<K> WebhookKind for K where
    K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static
{
}

/// One registered path's handler.
trait Admit: Send + Sync {
    fn admit(&self, request: AdmissionRequest<DynamicObject>) -> BoxFuture<'_, AdmissionResponse>;
}

/// The webhooks a manager serves, by path.
#[derive(Clone, Default)]
pub struct Webhooks {
    routes: BTreeMap<String, Arc<dyn Admit>>,
    declared: Vec<Webhook>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("paths", &self.routes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// No webhooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `defaulter` at the path of its `#[kubebuilder::webhook]` declaration.
    ///
    /// # Panics
    /// When the declaration is not a mutating one with a `path`, or the path is taken:
    /// both are programming errors the first start-up shows.
    #[must_use]
    pub fn defaulter<K, D>(self, defaulter: D) -> Self
    where
        K: WebhookKind,
        D: Defaulter<K> + Declared,
    {
        let path = declared_path::<D>(true);
        self.declare(D::WEBHOOK).defaulter_at(path, defaulter)
    }

    /// Serves `defaulter` at `path` (for a webhook declared elsewhere).
    ///
    /// # Panics
    /// When the path is taken.
    #[must_use]
    pub fn defaulter_at<K, D>(self, path: &str, defaulter: D) -> Self
    where
        K: WebhookKind,
        D: Defaulter<K>,
    {
        self.route(
            path,
            DefaultingHandler {
                defaulter,
                kind: PhantomData::<fn() -> K>,
            },
        )
    }

    /// Serves `validator` at the path of its `#[kubebuilder::webhook]` declaration.
    ///
    /// # Panics
    /// When the declaration is not a validating one with a `path`, or the path is taken.
    #[must_use]
    pub fn validator<K, V>(self, validator: V) -> Self
    where
        K: WebhookKind,
        V: Validator<K> + Declared,
    {
        let path = declared_path::<V>(false);
        self.declare(V::WEBHOOK).validator_at(path, validator)
    }

    /// Serves `validator` at `path` (for a webhook declared elsewhere).
    ///
    /// # Panics
    /// When the path is taken.
    #[must_use]
    pub fn validator_at<K, V>(self, path: &str, validator: V) -> Self
    where
        K: WebhookKind,
        V: Validator<K>,
    {
        self.route(
            path,
            ValidatingHandler {
                validator,
                kind: PhantomData::<fn() -> K>,
            },
        )
    }

    /// The declarations of the webhooks registered through their attributes (what
    /// [`LoopbackRegistration`] installs).
    pub fn declarations(&self) -> &[Webhook] {
        &self.declared
    }

    /// Whether no webhook is registered.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    fn declare(mut self, webhook: Webhook) -> Self {
        self.declared.push(webhook);
        self
    }

    /// Adds every webhook of `other` (another kind's, say), declarations included.
    ///
    /// # Panics
    /// When one of its paths is taken.
    #[must_use]
    pub fn merge(self, other: Webhooks) -> Self {
        let mut merged = other
            .routes
            .into_iter()
            .fold(self, |webhooks, (path, handler)| {
                webhooks.insert(path, handler)
            });
        merged.declared.extend(other.declared);
        merged
    }

    fn route(self, path: &str, handler: impl Admit + 'static) -> Self {
        assert!(
            path.starts_with('/'),
            "webhook path {path:?} must start with '/'"
        );
        self.insert(path.to_owned(), Arc::new(handler))
    }

    fn insert(mut self, path: String, handler: Arc<dyn Admit>) -> Self {
        let previous = self.routes.insert(path.clone(), handler);
        assert!(previous.is_none(), "two webhooks registered at {path}");
        self
    }

    /// Answers one HTTP request: an AdmissionReview POSTed to a registered path.
    pub(crate) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let Some(handler) = self.routes.get(request.uri().path()) else {
            return text(StatusCode::NOT_FOUND, "404 page not found\n");
        };
        if request.method() != Method::POST {
            return text(
                StatusCode::METHOD_NOT_ALLOWED,
                "admission webhooks take POST\n",
            );
        }
        let is_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                value
                    .split(';')
                    .next()
                    .is_some_and(|media| media.trim() == "application/json")
            });
        if !is_json {
            return bad_request("contentType must be application/json");
        }
        let body = match Limited::new(request.into_body(), MAX_REVIEW_BYTES)
            .collect()
            .await
        {
            Ok(body) => body.to_bytes(),
            Err(err) => return bad_request(&format!("cannot read the request body: {err}")),
        };
        match parse_review(&body) {
            Ok(request) => review_response(StatusCode::OK, handler.admit(request).await),
            Err(reason) => bad_request(&reason),
        }
    }
}

fn declared_path<T: Declared>(mutating: bool) -> &'static str {
    let webhook = T::WEBHOOK;
    let (expected, registration) = if mutating {
        ("mutating", "defaulter")
    } else {
        ("validating", "validator")
    };
    assert!(
        webhook.mutating == mutating,
        "webhook {} is not declared {expected} but is registered as a {registration}",
        webhook.name
    );
    webhook.path.unwrap_or_else(|| {
        panic!(
            "webhook {} is declared with a url, not a path; register it with {registration}_at",
            webhook.name
        )
    })
}

fn parse_review(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, String> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body)
        .map_err(|err| format!("cannot decode the AdmissionReview: {err}"))?;
    review
        .try_into()
        .map_err(|_| "the AdmissionReview has no request".to_owned())
}

fn bad_request(reason: &str) -> Response<Body> {
    tracing::debug!(%reason, "bad admission request");
    review_response(StatusCode::BAD_REQUEST, AdmissionResponse::invalid(reason))
}

fn review_response(status: StatusCode, response: AdmissionResponse) -> Response<Body> {
    match serde_json::to_vec(&response.into_review()) {
        Ok(json) => respond(status, "application/json", json),
        Err(err) => text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot encode the response: {err}\n"),
        ),
    }
}

/// A request refused before the user's code ran (the object does not fit the type).
struct Refusal {
    code: u16,
    reason: &'static str,
    message: String,
}

impl Refusal {
    fn bad_request(message: String) -> Self {
        Self {
            code: 400,
            reason: "BadRequest",
            message,
        }
    }

    fn internal(err: &dyn std::error::Error) -> Self {
        Self {
            code: 500,
            reason: "InternalError",
            message: err.to_string(),
        }
    }

    fn into_response(self, request: &AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        tracing::warn!(uid = %request.uid, message = %self.message, "admission request refused");
        let mut response = AdmissionResponse::from(request).deny(&self.message);
        response.result = Status::failure(&self.message, self.reason).with_code(self.code);
        response
    }
}

/// The object as received (JSON) and as the Rust type.
fn decode<K: WebhookKind>(object: Option<&DynamicObject>) -> Result<(K, Value), Refusal> {
    let kind = K::kind(&());
    let object =
        object.ok_or_else(|| Refusal::bad_request(format!("the request carries no {kind}")))?;
    let received = serde_json::to_value(object).map_err(|err| Refusal::internal(&err))?;
    // Deserialised from a borrow: the received JSON is kept for the defaulting patch.
    let typed = K::deserialize(&received)
        .map_err(|err| Refusal::bad_request(format!("cannot decode {kind}: {err}")))?;
    Ok((typed, received))
}

fn denied_invalid<K: WebhookKind>(
    request: &AdmissionRequest<DynamicObject>,
    errors: &[FieldError],
) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request);
    response.allowed = false;
    response.result = invalid_status(&K::group(&()), &K::kind(&()), &request.name, errors);
    response
}

struct DefaultingHandler<K, D> {
    defaulter: D,
    kind: PhantomData<fn() -> K>,
}

impl<K: WebhookKind, D: Defaulter<K>> DefaultingHandler<K, D> {
    async fn default(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        if !matches!(request.operation, Operation::Create | Operation::Update) {
            return AdmissionResponse::from(&request);
        }
        self.try_default(&request)
            .await
            .unwrap_or_else(|refusal| refusal.into_response(&request))
    }

    async fn try_default(
        &self,
        request: &AdmissionRequest<DynamicObject>,
    ) -> Result<AdmissionResponse, Refusal> {
        let (mut object, received) = decode::<K>(request.object.as_ref())?;
        let decoded = serde_json::to_value(&object).map_err(|err| Refusal::internal(&err))?;
        if let Err(errors) = self.defaulter.default(&mut object).await {
            return Ok(denied_invalid::<K>(request, &errors));
        }
        let defaulted = serde_json::to_value(&object).map_err(|err| Refusal::internal(&err))?;
        let patch = defaulting_patch(&received, &decoded, &defaulted);
        let response = AdmissionResponse::from(request);
        if patch.0.is_empty() {
            return Ok(response);
        }
        response
            .with_patch(patch)
            .map_err(|err| Refusal::internal(&err))
    }
}

impl<K: WebhookKind, D: Defaulter<K>> Admit for DefaultingHandler<K, D> {
    fn admit(&self, request: AdmissionRequest<DynamicObject>) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(self.default(request))
    }
}

struct ValidatingHandler<K, V> {
    validator: V,
    kind: PhantomData<fn() -> K>,
}

impl<K: WebhookKind, V: Validator<K>> ValidatingHandler<K, V> {
    async fn validate(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        match self.verdict(&request).await {
            Ok(Ok(warnings)) => {
                let mut response = AdmissionResponse::from(&request);
                if !warnings.is_empty() {
                    response.warnings = Some(warnings);
                }
                response
            }
            Ok(Err(errors)) => denied_invalid::<K>(&request, &errors),
            Err(refusal) => refusal.into_response(&request),
        }
    }

    /// The validator's verdict on the operation, once the objects decode.
    async fn verdict(
        &self,
        request: &AdmissionRequest<DynamicObject>,
    ) -> Result<Result<Warnings, Vec<FieldError>>, Refusal> {
        Ok(match request.operation {
            Operation::Create => {
                let (object, _) = decode::<K>(request.object.as_ref())?;
                self.validator.validate_create(&object).await
            }
            Operation::Update => {
                let (old, _) = decode::<K>(request.old_object.as_ref())?;
                let (new, _) = decode::<K>(request.object.as_ref())?;
                self.validator.validate_update(&old, &new).await
            }
            Operation::Delete => {
                let (object, _) = decode::<K>(request.old_object.as_ref())?;
                self.validator.validate_delete(&object).await
            }
            Operation::Connect => Ok(Warnings::new()),
        })
    }
}

impl<K: WebhookKind, V: Validator<K>> Admit for ValidatingHandler<K, V> {
    fn admit(&self, request: AdmissionRequest<DynamicObject>) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(self.validate(request))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    /// Sets `data.mode` to `auto` when missing; refuses a `mode` of `broken`.
    struct ModeDefaulter;

    impl Defaulter<ConfigMap> for ModeDefaulter {
        async fn default(&self, object: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
            let data = object.data.get_or_insert_with(Default::default);
            if data.get("mode").is_some_and(|mode| mode == "broken") {
                return Err(vec![FieldError::invalid(
                    "data.mode",
                    "broken",
                    "cannot be defaulted",
                )]);
            }
            data.entry("mode".into()).or_insert_with(|| "auto".into());
            Ok(())
        }
    }

    /// Refuses changing `data.mode`; warns on create.
    struct ModeValidator;

    impl Validator<ConfigMap> for ModeValidator {
        async fn validate_create(&self, _: &ConfigMap) -> Result<Warnings, Vec<FieldError>> {
            Ok(vec!["created".into()])
        }

        async fn validate_update(
            &self,
            old: &ConfigMap,
            new: &ConfigMap,
        ) -> Result<Warnings, Vec<FieldError>> {
            let mode = |object: &ConfigMap| {
                object
                    .data
                    .as_ref()
                    .and_then(|data| data.get("mode"))
                    .cloned()
            };
            if mode(old) == mode(new) {
                Ok(Warnings::new())
            } else {
                Err(vec![FieldError::forbidden("data.mode", "is immutable")])
            }
        }
    }

    fn request(
        operation: &str,
        object: Value,
        old_object: Value,
    ) -> AdmissionRequest<DynamicObject> {
        parse_review(
            &serde_json::to_vec(&json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "4d6d6a3c-1",
                    "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                    "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                    "name": "settings",
                    "namespace": "default",
                    "operation": operation,
                    "userInfo": {"username": "admin"},
                    "object": object,
                    "oldObject": old_object,
                    "dryRun": false,
                }
            }))
            .unwrap(),
        )
        .unwrap()
    }

    fn config_map(data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}, "data": data})
    }

    fn defaulter() -> DefaultingHandler<ConfigMap, ModeDefaulter> {
        DefaultingHandler {
            defaulter: ModeDefaulter,
            kind: PhantomData,
        }
    }

    fn validator() -> ValidatingHandler<ConfigMap, ModeValidator> {
        ValidatingHandler {
            validator: ModeValidator,
            kind: PhantomData,
        }
    }

    #[tokio::test]
    async fn defaulting_answers_with_a_patch_or_nothing() {
        let response = defaulter()
            .default(request(
                "CREATE",
                config_map(json!({"a": "1"})),
                Value::Null,
            ))
            .await;
        assert!(response.allowed);
        assert_eq!(response.uid, "4d6d6a3c-1");
        let patch: Value = serde_json::from_slice(response.patch.as_deref().unwrap()).unwrap();
        assert_eq!(
            patch,
            json!([{"op": "add", "path": "/data/mode", "value": "auto"}])
        );

        let complete = defaulter()
            .default(request(
                "UPDATE",
                config_map(json!({"mode": "manual"})),
                config_map(json!({})),
            ))
            .await;
        assert!(complete.allowed);
        assert_eq!(complete.patch, None);

        let deleting = defaulter()
            .default(request("DELETE", Value::Null, config_map(json!({}))))
            .await;
        assert!(deleting.allowed);
    }

    #[tokio::test]
    async fn a_failing_defaulter_refuses_as_invalid() {
        let response = defaulter()
            .default(request(
                "CREATE",
                config_map(json!({"mode": "broken"})),
                Value::Null,
            ))
            .await;
        assert!(!response.allowed);
        assert_eq!(response.result.code, 422);
        assert_eq!(response.result.reason, "Invalid");
        assert_eq!(
            response.result.message,
            r#"ConfigMap "settings" is invalid: data.mode: Invalid value: "broken": cannot be defaulted"#
        );
    }

    #[tokio::test]
    async fn objects_that_do_not_fit_the_type_are_bad_requests() {
        let response = defaulter()
            .default(request(
                "CREATE",
                config_map(json!({"mode": 7})),
                Value::Null,
            ))
            .await;
        assert!(!response.allowed);
        assert_eq!(response.result.code, 400);
        assert!(
            response
                .result
                .message
                .starts_with("cannot decode ConfigMap"),
            "{}",
            response.result.message
        );
    }

    #[tokio::test]
    async fn validation_sees_the_operation_and_both_versions() {
        let created = validator()
            .validate(request("CREATE", config_map(json!({})), Value::Null))
            .await;
        assert!(created.allowed);
        assert_eq!(created.warnings, Some(vec!["created".to_owned()]));

        let unchanged = validator()
            .validate(request(
                "UPDATE",
                config_map(json!({"mode": "a"})),
                config_map(json!({"mode": "a"})),
            ))
            .await;
        assert!(unchanged.allowed);
        assert_eq!(unchanged.warnings, None);

        let changed = validator()
            .validate(request(
                "UPDATE",
                config_map(json!({"mode": "b"})),
                config_map(json!({"mode": "a"})),
            ))
            .await;
        assert!(!changed.allowed);
        let details = changed.result.details.unwrap();
        assert_eq!(details.kind, "ConfigMap");
        assert_eq!(details.causes[0].field, "data.mode");
        assert_eq!(details.causes[0].reason, "FieldValueForbidden");

        let deleted = validator()
            .validate(request(
                "DELETE",
                Value::Null,
                config_map(json!({"mode": "a"})),
            ))
            .await;
        assert!(deleted.allowed, "delete is allowed by default");
    }

    const fn declared(mutating: bool, path: Option<&'static str>) -> Webhook {
        Webhook {
            name: "mconfigmap.example.io",
            mutating,
            path,
            url: match path {
                Some(_) => None,
                None => Some("https://webhooks.example.io/configmaps"),
            },
            failure_policy: "Fail",
            match_policy: None,
            side_effects: "None",
            groups: &[""],
            resources: &["configmaps"],
            verbs: &["CREATE"],
            versions: &["v1"],
            admission_review_versions: &["v1"],
            reinvocation_policy: None,
            timeout_seconds: None,
            service_name: "webhook-service",
            service_namespace: "system",
            service_port: None,
        }
    }

    impl Declared for ModeDefaulter {
        const WEBHOOK: Webhook = declared(true, Some("/mutate-v1-configmap"));
    }

    impl Declared for ModeValidator {
        // Deliberately declared mutating: registering it as a validator is a mistake.
        const WEBHOOK: Webhook = declared(true, Some("/validate-v1-configmap"));
    }

    struct ExternalDefaulter;

    impl Defaulter<ConfigMap> for ExternalDefaulter {
        async fn default(&self, _: &mut ConfigMap) -> Result<(), Vec<FieldError>> {
            Ok(())
        }
    }

    impl Declared for ExternalDefaulter {
        const WEBHOOK: Webhook = declared(true, None);
    }

    fn paths(webhooks: &Webhooks) -> Vec<&str> {
        webhooks.routes.keys().map(String::as_str).collect()
    }

    #[test]
    fn registration_takes_the_declared_path_and_keeps_the_declaration() {
        let webhooks = Webhooks::new()
            .defaulter(ModeDefaulter)
            .validator_at("/validate-v1-configmap", ModeValidator);
        assert_eq!(
            paths(&webhooks),
            ["/mutate-v1-configmap", "/validate-v1-configmap"]
        );
        assert_eq!(webhooks.declarations(), [ModeDefaulter::WEBHOOK]);
    }

    #[test]
    #[should_panic(
        expected = "webhook mconfigmap.example.io is not declared validating but is registered as a validator"
    )]
    fn a_mutating_declaration_cannot_serve_a_validator() {
        let _ = Webhooks::new().validator(ModeValidator);
    }

    #[test]
    #[should_panic(expected = "is declared with a url, not a path; register it with defaulter_at")]
    fn a_url_declaration_needs_an_explicit_path() {
        let _ = Webhooks::new().defaulter(ExternalDefaulter);
    }

    #[test]
    #[should_panic(expected = "two webhooks registered at /mutate-v1-configmap")]
    fn paths_are_unique() {
        let _ = Webhooks::new()
            .defaulter(ModeDefaulter)
            .defaulter_at("/mutate-v1-configmap", ExternalDefaulter);
    }

    #[test]
    fn merging_keeps_the_routes_and_declarations_of_both() {
        let webhooks = Webhooks::new()
            .defaulter(ModeDefaulter)
            .merge(Webhooks::new().validator_at("/validate-v1-configmap", ModeValidator));
        assert_eq!(
            paths(&webhooks),
            ["/mutate-v1-configmap", "/validate-v1-configmap"]
        );
        assert_eq!(webhooks.declarations(), [ModeDefaulter::WEBHOOK]);
    }

    #[test]
    #[should_panic(expected = "two webhooks registered at /mutate-v1-configmap")]
    fn merged_paths_are_unique() {
        let _ = Webhooks::new()
            .defaulter(ModeDefaulter)
            .merge(Webhooks::new().defaulter_at("/mutate-v1-configmap", ExternalDefaulter));
    }

    #[test]
    fn reviews_without_a_request_are_refused() {
        let err = parse_review(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#)
            .unwrap_err();
        assert_eq!(err, "the AdmissionReview has no request");
        let err = parse_review(b"{not json").unwrap_err();
        assert!(
            err.starts_with("cannot decode the AdmissionReview"),
            "{err}"
        );
    }
}

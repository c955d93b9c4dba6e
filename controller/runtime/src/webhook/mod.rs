//! Admission webhooks: typed [`Defaulter`] and [`Validator`] traits, registered per kind
//! on [`Webhooks`] at the path their `#[kubebuilder::webhook]` declaration names, raw
//! [`AdmissionHandler`]s for webhooks that are not per kind, and the HTTP side that turns
//! AdmissionReview v1 requests into calls of those, with controller-runtime's webhook
//! metrics and its recovery from panics (the request is answered 500, counted, and the
//! server goes on).
//!
//! Each path serves one admission webhook, or the conversion between the versions of the
//! kinds registered with [`Webhooks::conversion`] (at `/convert`).
//!
//! A request that is not a review is answered with a review all the same (for the
//! apiserver's logs), its HTTP status saying what is wrong: 405 for a method other than
//! POST, 400 for a content type other than JSON, a body that does not decode, a review of
//! another `apiVersion` or without a request, 413 for a body over
//! [`MAX_ADMISSION_REVIEW_BYTES`] or [`MAX_CONVERSION_REVIEW_BYTES`], 408 for a body that
//! does not arrive within [`BODY_READ_TIMEOUT`]. A review that decodes but
//! that the webhook cannot judge (an object that does not fit the kind) is answered 200
//! with a denial, as controller-runtime does.

mod conversion;
mod field;
mod install;
mod patch;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use k8s_openapi::api::authentication::v1::UserInfo;
use kube::Resource;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{DynamicObject, Status, TypeMeta};
use kubebuilder::webhook::{Declared, Serves, Webhook};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The timeouts of every server of the manager (webhooks, metrics, probes): a request
/// head within [`HEADER_READ_TIMEOUT`] (32 s, also the longest a keep-alive connection
/// stays idle), a body within [`BODY_READ_TIMEOUT`] (30 s), a TLS handshake within
/// [`HANDSHAKE_TIMEOUT`] (10 s); a connection that overstays is closed.
pub use crate::http::{BODY_READ_TIMEOUT, HANDSHAKE_TIMEOUT, HEADER_READ_TIMEOUT};
pub use field::{FieldError, FieldErrorType, FieldPath, invalid_status};
pub use install::{LoopbackRegistration, RegisteredWebhooks};

use self::conversion::Conversions;
use self::patch::defaulting_patch;
use crate::controller::panic_message;
use crate::http::{Body, read_body, respond, text};
use crate::metrics::Metrics;

/// Warnings returned to the API client with an allowed request.
pub type Warnings = Vec<String>;

/// The largest AdmissionReview accepted (controller-runtime's limit): an update carries
/// the object and its old version, each up to the apiserver's 3 MiB request limit, and
/// the rest of the review is well under 1 MiB.
pub const MAX_ADMISSION_REVIEW_BYTES: usize = 7 * 1024 * 1024;

/// The largest ConversionReview accepted. The apiserver converts a whole page of a list
/// in one review, so it is larger than the admission limit: a page of 500 objects
/// (client-go's) of up to 64 KiB each.
pub const MAX_CONVERSION_REVIEW_BYTES: usize = 32 * 1024 * 1024;

/// What the apiserver says of the request being admitted, beside the object (what
/// controller-runtime's `admission.RequestFromContext(ctx)` gives): who asks, for which
/// operation, whether it is a dry run, and the object as it was before an update.
#[derive(Clone, Copy, Debug)]
pub struct AdmissionContext<'a> {
    request: &'a AdmissionRequest<DynamicObject>,
}

impl<'a> AdmissionContext<'a> {
    /// The context of `request` (what the webhook server passes; for unit tests of a
    /// webhook).
    pub fn new(request: &'a AdmissionRequest<DynamicObject>) -> Self {
        Self { request }
    }

    /// The whole request, for what the accessors below do not cover.
    pub fn request(&self) -> &'a AdmissionRequest<DynamicObject> {
        self.request
    }

    /// CREATE, UPDATE, DELETE or CONNECT.
    pub fn operation(&self) -> &'a Operation {
        &self.request.operation
    }

    /// The user (or service account) making the request, with its groups.
    pub fn user_info(&self) -> &'a UserInfo {
        &self.request.user_info
    }

    /// Whether nothing of this request will be persisted (`kubectl --dry-run=server`):
    /// a webhook with side effects must not make them.
    pub fn dry_run(&self) -> bool {
        self.request.dry_run
    }

    /// The namespace of the object (`None` for cluster-scoped kinds).
    pub fn namespace(&self) -> Option<&'a str> {
        self.request.namespace.as_deref()
    }

    /// The name of the object (empty on a create that generates the name).
    pub fn name(&self) -> &'a str {
        &self.request.name
    }

    /// The object as it is stored, decoded as `K`: on update and delete.
    pub fn old_object<K: DeserializeOwned>(&self) -> Option<Result<K, serde_json::Error>> {
        let old = self.request.old_object.as_ref()?;
        Some(serde_json::to_string(old).and_then(|text| serde_json::from_str(&text)))
    }
}

/// Sets defaults on objects of kind `K` as they are created or updated.
pub trait Defaulter<K>: Send + Sync + 'static {
    /// Fills in the defaults of `object`. The webhook answers with the JSON patch from the
    /// object received to the object left here; an error refuses the request as Invalid.
    fn default(
        &self,
        context: &AdmissionContext<'_>,
        object: &mut K,
    ) -> impl Future<Output = Result<(), Vec<FieldError>>> + Send;
}

/// Checks objects of kind `K` as they are created, updated or deleted.
pub trait Validator<K>: Send + Sync + 'static {
    /// Checks a new object.
    fn validate_create(
        &self,
        context: &AdmissionContext<'_>,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send;

    /// Checks a change from `old` to `new`.
    fn validate_update(
        &self,
        context: &AdmissionContext<'_>,
        old: &K,
        new: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send;

    /// Checks a deletion; allowed unless overridden.
    fn validate_delete(
        &self,
        context: &AdmissionContext<'_>,
        object: &K,
    ) -> impl Future<Output = Result<Warnings, Vec<FieldError>>> + Send {
        let _ = (context, object);
        async { Ok(Warnings::new()) }
    }
}

/// Answers whole admission requests (controller-runtime's `admission.Handler`), for
/// webhooks that are not one kind's defaulter or validator. Implemented for closures
/// `Fn(AdmissionRequest<DynamicObject>) -> impl Future<Output = AdmissionResponse>`.
pub trait AdmissionHandler: Send + Sync + 'static {
    /// The response to `request` (start from `AdmissionResponse::from(&request)`).
    fn handle(
        &self,
        request: AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = AdmissionResponse> + Send;
}

impl<F, Fut> AdmissionHandler for F
where
    F: Fn(AdmissionRequest<DynamicObject>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = AdmissionResponse> + Send,
{
    fn handle(
        &self,
        request: AdmissionRequest<DynamicObject>,
    ) -> impl Future<Output = AdmissionResponse> + Send {
        self(request)
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

/// An [`AdmissionHandler`] behind a pointer.
trait Admit: Send + Sync {
    fn admit(&self, request: AdmissionRequest<DynamicObject>) -> BoxFuture<'_, AdmissionResponse>;
}

impl<H: AdmissionHandler> Admit for H {
    fn admit(&self, request: AdmissionRequest<DynamicObject>) -> BoxFuture<'_, AdmissionResponse> {
        Box::pin(self.handle(request))
    }
}

/// What one path serves.
#[derive(Clone)]
enum Endpoint {
    /// AdmissionReview in, AdmissionReview out.
    Admission(Arc<dyn Admit>),
    /// ConversionReview in, ConversionReview out.
    Conversion(Conversions),
}

/// The webhooks a manager serves, by path.
#[derive(Clone, Default)]
pub struct Webhooks {
    routes: BTreeMap<String, Endpoint>,
    declared: Vec<Webhook>,
    metrics: Option<Metrics>,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("paths", &self.routes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The path a `#[kubebuilder::webhook]` declaration serves, checked at compile time:
/// `mutating` must match the registration, and the declaration must name a path.
const fn declared_path(webhook: Webhook, mutating: bool) -> &'static str {
    if webhook.mutating != mutating {
        if mutating {
            panic!(
                "this type's #[kubebuilder::webhook] is not mutating: register it with `.defaulter()`, not `.validator()`"
            );
        }
        panic!(
            "this type's #[kubebuilder::webhook] is mutating: register it with `.defaulter()`, not `.validator()`"
        );
    }
    let path = match &webhook.path {
        Some(Cow::Borrowed(path)) => *path,
        // The attribute writes its strings as literals.
        Some(Cow::Owned(_)) => panic!("a declared path is a literal"),
        None => panic!(
            "this type's #[kubebuilder::webhook] names a url, not a path: register it with `.defaulter_at()` or `.validator_at()`"
        ),
    };
    // A constant's strings are borrowed: there is nothing to drop, and a constant cannot.
    std::mem::forget(webhook);
    path
}

impl Webhooks {
    /// No webhooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `defaulter` at the path of its `#[kubebuilder::webhook]` declaration, which
    /// must be a mutating one with a `path`, declared for `K` if it names a kind with `for`
    /// (a compile error otherwise).
    ///
    /// # Panics
    /// When the path is taken: a programming error the first start-up shows.
    #[must_use]
    pub fn defaulter<K, D>(self, defaulter: D) -> Self
    where
        K: WebhookKind,
        D: Defaulter<K> + Declared + Serves<K>,
    {
        let path = const { declared_path(D::WEBHOOK, true) };
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
        self.handler_at(
            path,
            DefaultingHandler {
                defaulter,
                kind: PhantomData::<fn() -> K>,
            },
        )
    }

    /// Serves `validator` at the path of its `#[kubebuilder::webhook]` declaration, which
    /// must be a validating one with a `path`, declared for `K` if it names a kind with `for`
    /// (a compile error otherwise).
    ///
    /// # Panics
    /// When the path is taken.
    #[must_use]
    pub fn validator<K, V>(self, validator: V) -> Self
    where
        K: WebhookKind,
        V: Validator<K> + Declared + Serves<K>,
    {
        let path = const { declared_path(V::WEBHOOK, false) };
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
        self.handler_at(
            path,
            ValidatingHandler {
                validator,
                kind: PhantomData::<fn() -> K>,
            },
        )
    }

    /// Serves a raw admission `handler` at `path` (controller-runtime's
    /// `mgr.GetWebhookServer().Register(path, &webhook.Admission{Handler: h})`).
    ///
    /// # Panics
    /// When the path is taken, or does not start with `/`.
    #[must_use]
    pub fn handler_at(self, path: &str, handler: impl AdmissionHandler) -> Self {
        assert!(
            path.starts_with('/'),
            "webhook path {path:?} must start with '/'"
        );
        self.insert(path.to_owned(), Endpoint::Admission(Arc::new(handler)))
    }

    /// Serves the conversion between the versions of kind `Hub` (its storage version) at
    /// `/convert`, through the spokes that name it with `hub =`: controller-runtime's
    /// conversion webhook, which the kind's CRD calls (`cargo xtask manifests` writes its
    /// `spec.conversion`). Several kinds share the endpoint.
    ///
    /// # Panics
    /// When no version names `Hub` as its hub: there is nothing to convert.
    #[must_use]
    pub fn conversion<Hub: kubebuilder::crd::CustomResource>(self) -> Self {
        let hub = Hub::VERSION;
        assert!(
            kubebuilder::conversion::spokes()
                .any(|spoke| spoke.hub.group == hub.group && spoke.hub.kind == hub.kind),
            "{}.{} {} has no spoke: no version names it with `hub =`",
            hub.kind,
            hub.group,
            hub.name
        );
        self.add_conversions(&Conversions::default().with(hub))
    }

    fn add_conversions(mut self, added: &Conversions) -> Self {
        let path = kubebuilder::conversion::CONVERT_PATH;
        let conversions = match self.routes.remove(path) {
            None => Conversions::default(),
            Some(Endpoint::Conversion(conversions)) => conversions,
            Some(Endpoint::Admission(_)) => {
                panic!("{path} is an admission webhook's path; conversion needs it")
            }
        };
        self.routes.insert(
            path.to_owned(),
            Endpoint::Conversion(conversions.merge(added)),
        );
        self
    }

    /// The declarations of the webhooks registered through their attributes (what
    /// [`LoopbackRegistration`] installs).
    pub fn declarations(&self) -> &[Webhook] {
        &self.declared
    }

    /// The storage versions of the kinds converted at `/convert`.
    pub(crate) fn converted_hubs(&self) -> Vec<kubebuilder::crd::Version> {
        match self.routes.get(kubebuilder::conversion::CONVERT_PATH) {
            Some(Endpoint::Conversion(conversions)) => conversions.hubs().cloned().collect(),
            _ => Vec::new(),
        }
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
            .fold(self, |webhooks, (path, endpoint)| match endpoint {
                Endpoint::Conversion(conversions) => webhooks.add_conversions(&conversions),
                admission => webhooks.insert(path, admission),
            });
        merged.declared.extend(other.declared);
        merged
    }

    fn insert(mut self, path: String, endpoint: Endpoint) -> Self {
        let previous = self.routes.insert(path.clone(), endpoint);
        assert!(previous.is_none(), "two webhooks registered at {path}");
        self
    }

    /// Counts and times every request in `metrics` (the manager's).
    pub(crate) fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Answers one HTTP request: a review POSTed to a registered path.
    pub(crate) async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path().to_owned();
        let Some(endpoint) = self.routes.get(&path) else {
            return text(StatusCode::NOT_FOUND, "404 page not found\n");
        };
        let in_flight = self
            .metrics
            .as_ref()
            .map(|metrics| metrics.webhook_started(&path));
        let response = match read_review_body(request, endpoint.body_limit()).await {
            Ok(body) => match endpoint {
                Endpoint::Admission(handler) => {
                    admit(handler.as_ref(), &body, self.metrics.as_ref()).await
                }
                Endpoint::Conversion(conversions) => {
                    conversions.review(&body, self.metrics.as_ref())
                }
            },
            Err((status, reason)) => endpoint.refuse(status, &reason),
        };
        if let Some(in_flight) = in_flight {
            in_flight.finish(response.status());
        }
        response
    }
}

impl Endpoint {
    fn body_limit(&self) -> usize {
        match self {
            Endpoint::Admission(_) => MAX_ADMISSION_REVIEW_BYTES,
            Endpoint::Conversion(_) => MAX_CONVERSION_REVIEW_BYTES,
        }
    }

    /// A request refused before its review was decoded, answered with a review of the
    /// endpoint's kind.
    fn refuse(&self, status: StatusCode, reason: &str) -> Response<Body> {
        match self {
            Endpoint::Admission(_) => refused(status, reason),
            Endpoint::Conversion(_) => conversion::refused(status, reason),
        }
    }
}

/// The body of a POSTed JSON review, or the status and reason refusing the request.
async fn read_review_body(
    request: Request<Incoming>,
    limit: usize,
) -> Result<Bytes, (StatusCode, String)> {
    if request.method() != Method::POST {
        return Err((StatusCode::METHOD_NOT_ALLOWED, "webhooks take POST".into()));
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
        return Err((
            StatusCode::BAD_REQUEST,
            "contentType must be application/json".into(),
        ));
    }
    read_body(request.into_body(), limit)
        .await
        .map_err(|err| (err.status(), err.to_string()))
}

/// Answers an AdmissionReview with `handler`; a panic of the handler is answered with a
/// 500 for that request and counted.
async fn admit(handler: &dyn Admit, body: &[u8], metrics: Option<&Metrics>) -> Response<Body> {
    let request = match parse_review(body) {
        Ok(request) => request,
        Err(reason) => return refused(StatusCode::BAD_REQUEST, &reason),
    };
    let if_panicked = AdmissionResponse::from(&request);
    let (uid, path) = (request.uid.clone(), request.resource.resource.clone());
    let response = match AssertUnwindSafe(handler.admit(request))
        .catch_unwind()
        .await
    {
        Ok(response) => response,
        Err(panic) => {
            let message = format!("panic: {} [recovered]", panic_message(panic.as_ref()));
            tracing::error!(%uid, resource = %path, %message, "Observed a panic in webhook");
            if let Some(metrics) = metrics {
                metrics.webhook_panicked();
            }
            let mut response = if_panicked.deny(&message);
            response.result = Status::failure(&message, "InternalError").with_code(500);
            response
        }
    };
    review_response(StatusCode::OK, response)
}

fn parse_review(body: &[u8]) -> Result<AdmissionRequest<DynamicObject>, String> {
    let review: AdmissionReview<DynamicObject> = serde_json::from_slice(body)
        .map_err(|err| format!("cannot decode the AdmissionReview: {err}"))?;
    check_review_type(&review.types, "admission.k8s.io", "AdmissionReview")?;
    review
        .try_into()
        .map_err(|_| "the AdmissionReview has no request".to_owned())
}

/// Refuses a review that is not a `kind` of `group`/v1 or v1beta1: v1beta1 has the same
/// fields, and the response is written in the version of the request.
fn check_review_type(types: &TypeMeta, group: &str, kind: &str) -> Result<(), String> {
    let version = types.api_version.strip_prefix(group).unwrap_or_default();
    if types.kind == kind && matches!(version, "/v1" | "/v1beta1") {
        return Ok(());
    }
    Err(format!(
        "expected {kind} {group}/v1, got {} {}",
        types.api_version, types.kind
    ))
}

/// An AdmissionReview refusing a request that is not one, with the HTTP status as its
/// result's code.
fn refused(status: StatusCode, reason: &str) -> Response<Body> {
    tracing::debug!(%status, %reason, "bad admission request");
    let mut response = AdmissionResponse::invalid(reason);
    response.result = response.result.with_code(status.as_u16());
    review_response(status, response)
}

fn review_response(status: StatusCode, response: AdmissionResponse) -> Response<Body> {
    json_reply(status, &response.into_review())
}

/// A review (admission or conversion) as the HTTP response.
fn json_reply(status: StatusCode, review: &impl Serialize) -> Response<Body> {
    match serde_json::to_vec(review) {
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
    // Both read from text: `K` only ever is, so that a manager compiles one decoder of it
    // (see the cache's module docs).
    let text = serde_json::to_string(object).map_err(|err| Refusal::internal(&err))?;
    let received: Value = serde_json::from_str(&text).map_err(|err| Refusal::internal(&err))?;
    let typed = serde_json::from_str::<K>(&text)
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
    async fn try_default(
        &self,
        request: &AdmissionRequest<DynamicObject>,
    ) -> Result<AdmissionResponse, Refusal> {
        let (mut object, received) = decode::<K>(request.object.as_ref())?;
        let decoded = serde_json::to_value(&object).map_err(|err| Refusal::internal(&err))?;
        let context = AdmissionContext { request };
        if let Err(errors) = self.defaulter.default(&context, &mut object).await {
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

impl<K: WebhookKind, D: Defaulter<K>> AdmissionHandler for DefaultingHandler<K, D> {
    async fn handle(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
        if !matches!(request.operation, Operation::Create | Operation::Update) {
            return AdmissionResponse::from(&request);
        }
        self.try_default(&request)
            .await
            .unwrap_or_else(|refusal| refusal.into_response(&request))
    }
}

struct ValidatingHandler<K, V> {
    validator: V,
    kind: PhantomData<fn() -> K>,
}

impl<K: WebhookKind, V: Validator<K>> ValidatingHandler<K, V> {
    /// The validator's verdict on the operation, once the objects decode.
    async fn verdict(
        &self,
        request: &AdmissionRequest<DynamicObject>,
    ) -> Result<Result<Warnings, Vec<FieldError>>, Refusal> {
        let context = AdmissionContext { request };
        Ok(match request.operation {
            Operation::Create => {
                let (object, _) = decode::<K>(request.object.as_ref())?;
                self.validator.validate_create(&context, &object).await
            }
            Operation::Update => {
                let (old, _) = decode::<K>(request.old_object.as_ref())?;
                let (new, _) = decode::<K>(request.object.as_ref())?;
                self.validator.validate_update(&context, &old, &new).await
            }
            Operation::Delete => {
                let (object, _) = decode::<K>(request.old_object.as_ref())?;
                self.validator.validate_delete(&context, &object).await
            }
            Operation::Connect => Ok(Warnings::new()),
        })
    }
}

impl<K: WebhookKind, V: Validator<K>> AdmissionHandler for ValidatingHandler<K, V> {
    async fn handle(&self, request: AdmissionRequest<DynamicObject>) -> AdmissionResponse {
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
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    /// Sets `data.mode` to `auto` when missing; refuses a `mode` of `broken`.
    struct ModeDefaulter;

    impl Defaulter<ConfigMap> for ModeDefaulter {
        async fn default(
            &self,
            _: &AdmissionContext<'_>,
            object: &mut ConfigMap,
        ) -> Result<(), Vec<FieldError>> {
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
        async fn validate_create(
            &self,
            _: &AdmissionContext<'_>,
            _: &ConfigMap,
        ) -> Result<Warnings, Vec<FieldError>> {
            Ok(vec!["created".into()])
        }

        async fn validate_update(
            &self,
            _: &AdmissionContext<'_>,
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
            .handle(request(
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
            .handle(request(
                "UPDATE",
                config_map(json!({"mode": "manual"})),
                config_map(json!({})),
            ))
            .await;
        assert!(complete.allowed);
        assert_eq!(complete.patch, None);

        let deleting = defaulter()
            .handle(request("DELETE", Value::Null, config_map(json!({}))))
            .await;
        assert!(deleting.allowed);
    }

    #[tokio::test]
    async fn a_failing_defaulter_refuses_as_invalid() {
        let response = defaulter()
            .handle(request(
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
            .handle(request(
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
            .handle(request("CREATE", config_map(json!({})), Value::Null))
            .await;
        assert!(created.allowed);
        assert_eq!(created.warnings, Some(vec!["created".to_owned()]));

        let unchanged = validator()
            .handle(request(
                "UPDATE",
                config_map(json!({"mode": "a"})),
                config_map(json!({"mode": "a"})),
            ))
            .await;
        assert!(unchanged.allowed);
        assert_eq!(unchanged.warnings, None);

        let changed = validator()
            .handle(request(
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
            .handle(request(
                "DELETE",
                Value::Null,
                config_map(json!({"mode": "a"})),
            ))
            .await;
        assert!(deleted.allowed, "delete is allowed by default");
    }

    const fn declared(mutating: bool, path: Option<&'static str>) -> Webhook {
        Webhook {
            name: Cow::Borrowed("mconfigmap.example.io"),
            mutating,
            path: match path {
                Some(path) => Some(Cow::Borrowed(path)),
                None => None,
            },
            url: match path {
                Some(_) => None,
                None => Some(Cow::Borrowed("https://webhooks.example.io/configmaps")),
            },
            failure_policy: Cow::Borrowed("Fail"),
            match_policy: None,
            side_effects: Cow::Borrowed("None"),
            groups: Cow::Borrowed(&[Cow::Borrowed("")]),
            resources: Cow::Borrowed(&[Cow::Borrowed("configmaps")]),
            verbs: Cow::Borrowed(&[Cow::Borrowed("CREATE")]),
            versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
            admission_review_versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
            reinvocation_policy: None,
            timeout_seconds: None,
            service_name: Cow::Borrowed("webhook-service"),
            service_namespace: Cow::Borrowed("system"),
            service_port: None,
            patch: None,
        }
    }

    impl Declared for ModeDefaulter {
        const WEBHOOK: Webhook = declared(true, Some("/mutate-v1-configmap"));
    }

    impl Serves<ConfigMap> for ModeDefaulter {}

    impl Declared for ModeValidator {
        // Deliberately declared mutating: registering it as a validator is a mistake.
        const WEBHOOK: Webhook = declared(true, Some("/validate-v1-configmap"));
    }

    impl Serves<ConfigMap> for ModeValidator {}

    struct ExternalDefaulter;

    impl Defaulter<ConfigMap> for ExternalDefaulter {
        async fn default(
            &self,
            _: &AdmissionContext<'_>,
            _: &mut ConfigMap,
        ) -> Result<(), Vec<FieldError>> {
            Ok(())
        }
    }

    impl Declared for ExternalDefaulter {
        const WEBHOOK: Webhook = declared(true, None);
    }

    impl Serves<ConfigMap> for ExternalDefaulter {}

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
    fn reviews_without_a_request_or_of_another_version_are_refused() {
        let err = parse_review(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#)
            .unwrap_err();
        assert_eq!(err, "the AdmissionReview has no request");
        let err =
            parse_review(br#"{"apiVersion":"apps/v1","kind":"AdmissionReview"}"#).unwrap_err();
        assert_eq!(
            err,
            "expected AdmissionReview admission.k8s.io/v1, got apps/v1 AdmissionReview"
        );
        let err = parse_review(b"{not json").unwrap_err();
        assert!(
            err.starts_with("cannot decode the AdmissionReview"),
            "{err}"
        );
    }
}

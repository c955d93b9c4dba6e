//! Bad input to every server of the manager: the webhook server (admission and
//! conversion), the metrics server and the probe server each get 10,000 bad
//! requests (however many cycles `cargo xtask test-faults` asks for: the count is the
//! issue's figure, and the memory is compared around it), each followed by a good one, with
//! the process' RSS printed and its live heap bytes checked around them;
//! review bodies are drawn from proptest strategies (truncated, wrong types, huge, deeply
//! nested, wrong apiVersion, missing fields); slow clients are disconnected after the
//! documented timeouts; TLS ports refuse plain HTTP, garbage and TLS below 1.2.
//!
//! Each test prints one `FaultReport` line per fault and fails when the line does not hold.

// `common::eventually` is for the other test binaries.
#[allow(unused_imports)]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{Widget, test_args};
use http_body_util::Full;
use kubebuilder_envtest::faults::FaultReport;
use kubebuilder_envtest::http_client::{HttpClient, Reply};
use kubebuilder_envtest::shared;
use kubebuilder_runtime::certs::write_loopback_serving_certificate;
use kubebuilder_runtime::webhook::{
    AdmissionContext, BODY_READ_TIMEOUT, Defaulter, FieldError, HANDSHAKE_TIMEOUT,
    HEADER_READ_TIMEOUT, MAX_ADMISSION_REVIEW_BYTES, MAX_CONVERSION_REVIEW_BYTES, Webhooks,
};
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs, RunningManager};
use proptest::prelude::*;
use proptest::strategy::ValueTree as _;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// A kind in two versions, converted at `/convert`: v1 is the hub.
mod gadget {
    pub mod v1 {
        /// A gadget, v1 (the storage version).
        #[kubebuilder::resource(
            group = "faults.kubebuilder.test",
            version = "v1",
            kind = "Gadget",
            storageversion
        )]
        pub struct GadgetSpec {
            /// How big.
            #[kubebuilder(optional)]
            pub size: Option<i64>,
        }
    }

    pub mod v2 {
        use kubebuilder::conversion::{ConversionError, Spoke, by_field_names};

        /// A gadget, v2.
        #[kubebuilder::resource(
            group = "faults.kubebuilder.test",
            version = "v2",
            kind = "Gadget",
            hub = super::v1::Gadget
        )]
        pub struct GadgetSpec {
            /// How big.
            #[kubebuilder(optional)]
            pub size: Option<i64>,
        }

        impl Spoke<super::v1::Gadget> for Gadget {
            fn to_hub(self) -> Result<super::v1::Gadget, ConversionError> {
                by_field_names(self)
            }

            fn from_hub(hub: super::v1::Gadget) -> Result<Self, ConversionError> {
                by_field_names(hub)
            }
        }
    }
}

const MUTATE_PATH: &str = "/mutate-widget";
const CONVERT_PATH: &str = kubebuilder::conversion::CONVERT_PATH;
const GOOD_UID: &str = "b0a1d2e3-good";
/// Bad requests each server gets in its bulk run, each followed by a good one.
const BAD_REQUESTS: usize = 10_000;
/// How long a bad request may take to be answered (or its connection closed).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How much the live heap may grow over one server's bad requests: a leak of 100 bytes
/// per request passes it at 10,000 requests.
const HEAP_BOUND_MIB: f64 = 1.0;

/// The bulk tests measure the process' RSS: no other test runs beside them.
static ALONE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

/// Sets `spec.size` to 1 when missing.
struct SizeDefaulter;

impl Defaulter<Widget> for SizeDefaulter {
    async fn default(
        &self,
        _: &AdmissionContext<'_>,
        widget: &mut Widget,
    ) -> Result<(), Vec<FieldError>> {
        widget.spec.size.get_or_insert(1);
        Ok(())
    }
}

/// A running manager and clients for its three servers.
struct Servers {
    running: RunningManager,
    /// HTTPS, trusting the webhook server's CA.
    webhook: HttpClient,
    /// HTTPS without verification when secure, else plain.
    metrics: HttpClient,
    probes: HttpClient,
    _certs: tempfile::TempDir,
}

impl Servers {
    async fn start(metrics_secure: bool) -> Self {
        let client = shared().client().await.unwrap();
        let certs = tempfile::tempdir().unwrap();
        let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key").unwrap();
        let args = ManagerArgs {
            webhook_cert_path: Some(certs.path().to_owned()),
            metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
            metrics_secure,
            ..test_args()
        };
        let webhooks = Webhooks::new()
            .defaulter_at::<Widget, _>(MUTATE_PATH, SizeDefaulter)
            .conversion::<gadget::v1::Gadget>();
        let running = Manager::new(client, args)
            .webhook_host("127.0.0.1".parse().unwrap())
            .webhooks(webhooks)
            .enable_webhooks(true)
            .start()
            .await
            .unwrap();
        let metrics_addr = running.metrics_addr().unwrap();
        Self {
            webhook: HttpClient::tls(running.webhook_addr().unwrap(), &ca).unwrap(),
            metrics: if metrics_secure {
                HttpClient::tls_unverified(metrics_addr)
            } else {
                HttpClient::plain(metrics_addr)
            },
            probes: HttpClient::plain(running.probe_addr().unwrap()),
            running,
            _certs: certs,
        }
    }

    /// The webhook port spoken to without TLS.
    fn webhook_plain(&self) -> HttpClient {
        HttpClient::plain(self.running.webhook_addr().unwrap())
    }

    async fn stop(self) {
        self.running.shutdown().await.unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Reviews, good and spoiled.

fn admission_review() -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": GOOD_UID,
            "kind": {"group": common::GROUP, "version": "v1", "kind": "Widget"},
            "resource": {"group": common::GROUP, "version": "v1", "resource": "widgets"},
            "name": "w",
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "tester"},
            "object": {
                "apiVersion": format!("{}/v1", common::GROUP),
                "kind": "Widget",
                "metadata": {"name": "w"},
                "spec": {"color": "red"}
            },
            "oldObject": null,
            "dryRun": false
        }
    })
}

fn conversion_review() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": GOOD_UID,
            "desiredAPIVersion": "faults.kubebuilder.test/v1",
            "objects": [{
                "apiVersion": "faults.kubebuilder.test/v2",
                "kind": "Gadget",
                "metadata": {"name": "g", "namespace": "default"},
                "spec": {"size": 3}
            }]
        }
    })
}

/// The fields of a review that may be spoiled, as JSON pointers, and those of them whose
/// absence makes the body no review at all.
struct Fields {
    all: &'static [&'static str],
    required: &'static [&'static str],
}

const ADMISSION_FIELDS: Fields = Fields {
    all: &[
        "/apiVersion",
        "/kind",
        "/request",
        "/request/uid",
        "/request/kind",
        "/request/kind/kind",
        "/request/resource",
        "/request/operation",
        "/request/userInfo",
        "/request/userInfo/username",
        "/request/name",
        "/request/namespace",
        "/request/object",
        "/request/object/metadata",
        "/request/object/spec",
        "/request/object/spec/color",
        "/request/oldObject",
        "/request/dryRun",
    ],
    required: &[
        "/apiVersion",
        "/kind",
        "/request",
        "/request/uid",
        "/request/kind",
        "/request/resource",
        "/request/operation",
        "/request/userInfo",
    ],
};

const CONVERSION_FIELDS: Fields = Fields {
    all: &[
        "/apiVersion",
        "/kind",
        "/request",
        "/request/uid",
        "/request/desiredAPIVersion",
        "/request/objects",
        "/request/objects/0",
        "/request/objects/0/apiVersion",
        "/request/objects/0/kind",
        "/request/objects/0/metadata",
        "/request/objects/0/spec",
        "/request/objects/0/spec/size",
    ],
    required: &[
        "/apiVersion",
        "/kind",
        "/request",
        "/request/uid",
        "/request/desiredAPIVersion",
        "/request/objects",
    ],
};

/// What a spoiled body must get.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// 400 with a review saying so: the body is not a review.
    BadRequest,
    /// 400, or 200 with the review's verdict (the spoiled field may still be valid).
    Answered,
}

/// Any JSON value, small.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,16}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// `value` with the field at `pointer` set to `new`.
fn with_field(mut value: Value, pointer: &str, new: Value) -> Value {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    match value.pointer_mut(parent).unwrap() {
        Value::Object(fields) => {
            fields.insert(last.to_owned(), new);
        }
        Value::Array(items) => items[last.parse::<usize>().unwrap()] = new,
        _ => unreachable!("{pointer} is inside an object or array"),
    }
    value
}

/// `value` without the field at `pointer`.
fn without_field(mut value: Value, pointer: &str) -> Value {
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    match value.pointer_mut(parent).unwrap() {
        Value::Object(fields) => {
            fields.remove(last);
        }
        Value::Array(items) => {
            items.remove(last.parse::<usize>().unwrap());
        }
        _ => unreachable!("{pointer} is inside an object or array"),
    }
    value
}

/// `review` with `depth` arrays (or objects) inside each other at `pointer`, as text:
/// a `Value` that deep would overflow the test's stack when serialized or dropped.
fn nested_at(review: Value, pointer: &str, depth: usize, arrays: bool) -> Vec<u8> {
    const MARK: &str = "\u{1}nested\u{1}";
    let marked = with_field(review, pointer, Value::from(MARK));
    let text = serde_json::to_string(&marked).unwrap();
    let mark = serde_json::to_string(MARK).unwrap();
    assert!(text.contains(&mark), "{pointer} holds the mark");
    let (open, close) = if arrays { ("[", "]") } else { ("{\"a\":", "}") };
    let nested = format!("{}null{}", open.repeat(depth), close.repeat(depth));
    text.replace(&mark, &nested).into_bytes()
}

fn bytes_of(value: &Value) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}

/// Bodies made from the review `valid`, spoiled in each of the ways bad input comes,
/// with what each must get.
fn spoiled(valid: Value, fields: &'static Fields) -> impl Strategy<Value = (Vec<u8>, Expect)> {
    let field = || prop::sample::select(fields.all);
    let text = bytes_of(&valid);
    let (v1, v2, v3, v4, v5) = (
        valid.clone(),
        valid.clone(),
        valid.clone(),
        valid.clone(),
        valid,
    );
    let api_version = v3["apiVersion"].clone();
    prop_oneof![
        // Truncated: never valid JSON, since the closing brace is last.
        (0..text.len()).prop_map(move |at| (text[..at].to_vec(), Expect::BadRequest)),
        // A field of another type (or the same type, another value).
        (field(), json_value()).prop_map(move |(pointer, new)| {
            (
                bytes_of(&with_field(v1.clone(), pointer, new)),
                Expect::Answered,
            )
        }),
        // A field missing.
        field().prop_map(move |pointer| {
            let expect = if fields.required.contains(&pointer) {
                Expect::BadRequest
            } else {
                Expect::Answered
            };
            (bytes_of(&without_field(v2.clone(), pointer)), expect)
        }),
        // Another apiVersion.
        "[a-z0-9./]{0,30}"
            .prop_filter("another apiVersion", move |version| *version != api_version)
            .prop_map(move |version| {
                let review = with_field(v3.clone(), "/apiVersion", Value::from(version));
                (bytes_of(&review), Expect::BadRequest)
            }),
        // Deeply nested: refused past serde_json's 128 levels where the value is kept,
        // skipped (without recursion) where it is not.
        (field(), 1..20_000usize, any::<bool>()).prop_map(move |(pointer, depth, arrays)| {
            (
                nested_at(v4.clone(), pointer, depth, arrays),
                Expect::Answered,
            )
        }),
        // Huge (within the limit: the limit has its own requests).
        (field(), 0..(1usize << 20)).prop_map(move |(pointer, len)| {
            let review = with_field(v5.clone(), pointer, Value::from("x".repeat(len)));
            (bytes_of(&review), Expect::Answered)
        }),
        // Not a review: any bytes, any JSON.
        prop::collection::vec(any::<u8>(), 0..256).prop_map(|bytes| (bytes, Expect::BadRequest)),
        json_value().prop_map(|value| (bytes_of(&value), Expect::BadRequest)),
    ]
}

/// Where a review's result code is: `response.status` (admission), `response.result`
/// (conversion).
#[derive(Clone, Copy, Debug)]
enum Review {
    Admission,
    Conversion,
}

impl Review {
    fn kind(self) -> &'static str {
        match self {
            Review::Admission => "AdmissionReview",
            Review::Conversion => "ConversionReview",
        }
    }

    fn result(self, review: &Value) -> &Value {
        match self {
            Review::Admission => &review["response"]["status"],
            Review::Conversion => &review["response"]["result"],
        }
    }

    fn path(self) -> &'static str {
        match self {
            Review::Admission => MUTATE_PATH,
            Review::Conversion => CONVERT_PATH,
        }
    }

    fn good_body(self) -> Bytes {
        Bytes::from(bytes_of(&match self {
            Review::Admission => admission_review(),
            Review::Conversion => conversion_review(),
        }))
    }
}

/// Whether `reply` is a clean answer to a spoiled review.
fn clean_review(reply: &Reply, review: Review, expect: Expect) -> Result<(), String> {
    let status = reply.status.as_u16();
    let body: Value = serde_json::from_slice(&reply.body)
        .map_err(|err| format!("{status} with a body that is no review ({err})"))?;
    if body["kind"] != review.kind() || !body["response"].is_object() {
        return Err(format!(
            "{status} without a {} response: {body}",
            review.kind()
        ));
    }
    let code = review.result(&body)["code"].as_u64();
    match (status, expect) {
        (400, _) if code == Some(400) => Ok(()),
        (200, Expect::Answered) => Ok(()),
        _ => Err(format!(
            "{status} (result code {code:?}) where {expect:?} was due: {}",
            reply.text()
        )),
    }
}

/// Whether `reply` is the answer to the good review of `review`.
fn good_review(reply: &Reply, review: Review) -> Result<(), String> {
    let body: Value = serde_json::from_slice(&reply.body).unwrap_or_default();
    let response = &body["response"];
    let good = reply.status.as_u16() == 200
        && response["uid"] == GOOD_UID
        && match review {
            Review::Admission => response["allowed"] == true && !response["patch"].is_null(),
            Review::Conversion => {
                response["result"]["status"] == "Success"
                    && response["convertedObjects"][0]["apiVersion"] == "faults.kubebuilder.test/v1"
            }
        };
    good.then_some(()).ok_or_else(|| {
        format!(
            "good {review:?} answered {}: {}",
            reply.status,
            reply.text()
        )
    })
}

// ---------------------------------------------------------------------------------------
// Raw requests: bytes no HTTP client sends.

/// What came back on a connection until the server closed it.
#[derive(Debug)]
struct Exchange {
    /// The status of the first response, if one came.
    status: Option<u16>,
    /// The first bytes received.
    head: Vec<u8>,
    /// From the last byte written to the close.
    took: Duration,
}

/// Reads until the server closes the connection (an error is a close too), at most
/// `timeout`.
async fn read_until_closed(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
    timeout: Duration,
) -> Result<Exchange, String> {
    let started = Instant::now();
    let mut head = Vec::new();
    let mut buffer = vec![0u8; 16 * 1024];
    let read_all = async {
        while let Ok(read @ 1..) = stream.read(&mut buffer).await {
            if head.len() < 4096 {
                head.extend_from_slice(&buffer[..read]);
            }
        }
    };
    tokio::time::timeout(timeout, read_all)
        .await
        .map_err(|_| format!("still open after {timeout:?}"))?;
    Ok(Exchange {
        status: status_of(&head),
        head,
        took: started.elapsed(),
    })
}

fn status_of(head: &[u8]) -> Option<u16> {
    let line = std::str::from_utf8(head.get(..12)?).ok()?;
    line.strip_prefix("HTTP/1.")?.get(2..5)?.parse().ok()
}

/// Writes `request` on a new connection of `client` and reads what comes back.
async fn exchange(client: &HttpClient, request: &[u8]) -> Result<Exchange, String> {
    let mut stream = client.stream().await.map_err(|err| err.to_string())?;
    // The server may close before everything is written: what it answered is what counts.
    let _ = stream.write_all(request).await;
    let _ = stream.flush().await;
    read_until_closed(&mut stream, ANSWER_TIMEOUT).await
}

/// Sends the head of a request and then `body_len` bytes of chunked body, stopping when
/// the server closes, and reads what comes back.
async fn exchange_streamed(
    client: &HttpClient,
    head: String,
    body_len: usize,
) -> Result<Exchange, String> {
    let stream = client.stream().await.map_err(|err| err.to_string())?;
    let (mut reader, mut writer) = tokio::io::split(stream);
    let writing = tokio::spawn(async move {
        writer.write_all(head.as_bytes()).await?;
        let chunk = format!("{:x}\r\n{}\r\n", 64 * 1024, "x".repeat(64 * 1024));
        for _ in 0..body_len.div_ceil(64 * 1024) {
            writer.write_all(chunk.as_bytes()).await?;
        }
        writer.write_all(b"0\r\n\r\n").await?;
        writer.flush().await
    });
    let answer = read_until_closed(&mut reader, ANSWER_TIMEOUT).await;
    writing.abort();
    answer
}

fn post_head(path: &str, extra: &str) -> String {
    format!("POST {path} HTTP/1.1\r\nHost: server\r\nContent-Type: application/json\r\n{extra}\r\n")
}

fn too_many_headers(path: &str) -> Vec<u8> {
    let headers: String = (0..120).map(|n| format!("X-Header-{n}: {n}\r\n")).collect();
    format!("GET {path} HTTP/1.1\r\nHost: server\r\n{headers}\r\n").into_bytes()
}

fn huge_header(path: &str) -> Vec<u8> {
    let value = "a".repeat(512 * 1024);
    format!("GET {path} HTTP/1.1\r\nHost: server\r\nX-Huge: {value}\r\n\r\n").into_bytes()
}

fn long_uri(path: &str) -> Vec<u8> {
    let query = "a".repeat(70 * 1024);
    format!("GET {path}?{query} HTTP/1.1\r\nHost: server\r\n\r\n").into_bytes()
}

/// Bytes that are neither HTTP nor TLS: the first is no letter and no TLS content type.
fn garbage(seed: usize) -> Vec<u8> {
    let mut state = seed as u64 | 1;
    let mut bytes: Vec<u8> = (0..200)
        .map(|_| {
            // xorshift: reproducible noise without another dependency.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    bytes[0] = (seed % 20) as u8;
    bytes
}

const MALFORMED_HEADER: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: server\r\nNo colon here\r\n\r\n";
const BAD_METHOD: &[u8] = b"G(T /healthz HTTP/1.1\r\nHost: server\r\n\r\n";
const BAD_CONTENT_LENGTH: &[u8] =
    b"POST /healthz HTTP/1.1\r\nHost: server\r\nContent-Length: 12abc\r\n\r\n";
const TWO_CONTENT_LENGTHS: &[u8] =
    b"POST /healthz HTTP/1.1\r\nHost: server\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab";
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const UNKNOWN_VERSION: &[u8] = b"GET /healthz HTTP/7.1\r\nHost: server\r\n\r\n";

// ---------------------------------------------------------------------------------------
// Counting.

/// The answers one server gave, and what was wrong with them.
#[derive(Default)]
struct Tally {
    bad_requests: u64,
    answers: BTreeMap<String, u64>,
    errors: Vec<String>,
}

impl Tally {
    /// Counts the answer to a bad request (`Ok` names it, `Err` says what is wrong).
    fn bad(&mut self, what: &str, answer: Result<String, String>) {
        self.bad_requests += 1;
        match answer {
            Ok(answer) => *self.answers.entry(answer).or_default() += 1,
            Err(err) => self.errors.push(format!("{what}: {err}")),
        }
    }

    /// Counts a good request after a bad one.
    fn good(&mut self, after: &str, answer: Result<(), String>) {
        if let Err(err) = answer {
            self.errors
                .push(format!("good request after {after}: {err}"));
        }
    }

    fn report(&self, fault: &str, detail: String) -> FaultReport {
        FaultReport {
            cycles: self.bad_requests,
            errors: self.errors.len() as u64,
            detail,
            ..FaultReport::new(fault)
        }
    }

    fn answers(&self) -> String {
        let answers: Vec<String> = self
            .answers
            .iter()
            .map(|(answer, count)| format!("{answer}×{count}"))
            .collect();
        answers.join(" ")
    }

    /// Fails the test with the first errors.
    fn assert_clean(&self, fault: &str) {
        assert!(
            self.errors.is_empty(),
            "{fault}: {} errors, the first ones:\n{}",
            self.errors.len(),
            self.errors[..self.errors.len().min(10)].join("\n")
        );
    }
}

/// An exchange that ended with `expected` (a status, or `None` for a close without one).
fn expect_exchange(
    exchange: Result<Exchange, String>,
    expected: &[Option<u16>],
) -> Result<String, String> {
    let exchange = exchange?;
    if expected.contains(&exchange.status) {
        Ok(match exchange.status {
            Some(status) => status.to_string(),
            None => "closed".to_owned(),
        })
    } else {
        Err(format!(
            "{:?} where {expected:?} was due: {:?}",
            exchange.status,
            String::from_utf8_lossy(&exchange.head)
        ))
    }
}

/// The system allocator, counting the bytes it has handed out and not been given back.
///
/// Leaks are checked on this count, not on the RSS: after a 7 MiB review the RSS keeps
/// whatever the allocator's arenas happen to hold (it swung by ±20 MiB between runs with
/// nothing kept), while this count is what the process still owns.
struct CountingAllocator;

static LIVE_HEAP_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed to `System` unchanged; the counter only observes sizes.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is `System::alloc`'s.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE_HEAP_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let pointer = unsafe { System.alloc_zeroed(layout) };
        if !pointer.is_null() {
            LIVE_HEAP_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is `System::dealloc`'s.
        unsafe { System.dealloc(pointer, layout) };
        LIVE_HEAP_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is `System::realloc`'s.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE_HEAP_BYTES.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn live_heap_mib() -> f64 {
    LIVE_HEAP_BYTES.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0)
}

/// The process' RSS, printed beside the heap count (the issue asks for it).
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .unwrap();
    let kib: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024.0
}

/// The RSS and live heap before the measured requests of one server.
struct Measure {
    rss_before: f64,
    heap_before: f64,
    started: Instant,
    warm_up: u64,
}

impl Measure {
    fn start(tally: &Tally) -> Self {
        Self {
            rss_before: rss_mib(),
            heap_before: live_heap_mib(),
            started: Instant::now(),
            warm_up: tally.bad_requests,
        }
    }

    /// Prints the report of `fault` and fails when there were errors or the live heap grew
    /// more than [`HEAP_BOUND_MIB`].
    fn conclude(self, fault: &str, tally: &Tally) {
        let (rss_after, heap_after) = (rss_mib(), live_heap_mib());
        let measured = tally.bad_requests - self.warm_up;
        let detail = format!(
            "RSS {:.1} → {rss_after:.1} MiB, live heap {:.2} → {heap_after:.2} MiB over {measured} bad requests (after {} to warm up) in {:.1} s; answers: {}",
            self.rss_before,
            self.heap_before,
            self.warm_up,
            self.started.elapsed().as_secs_f64(),
            tally.answers()
        );
        tally.report(fault, detail).print();
        tally.assert_clean(fault);
        assert!(
            heap_after - self.heap_before <= HEAP_BOUND_MIB,
            "{fault}: the live heap grew from {:.2} to {heap_after:.2} MiB, more than {HEAP_BOUND_MIB} MiB",
            self.heap_before
        );
    }
}

/// Draws values from a strategy, reproducibly (the bulk tests' bodies).
struct Draw {
    runner: TestRunner,
    strategy: BoxedStrategy<(Body, Expect)>,
}

impl Draw {
    fn new(strategy: BoxedStrategy<(Body, Expect)>) -> Self {
        Self {
            runner: TestRunner::deterministic(),
            strategy,
        }
    }

    fn next(&mut self) -> (Vec<u8>, Expect) {
        let (body, expect) = self.strategy.new_tree(&mut self.runner).unwrap().current();
        (body.0, expect)
    }
}

/// A request body, shown as text when proptest reports it.
#[derive(Clone)]
struct Body(Vec<u8>);

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = String::from_utf8_lossy(&self.0);
        let shown: String = text.chars().take(2000).collect();
        write!(f, "{} bytes: {shown:?}", self.0.len())
    }
}

fn admission_bodies() -> BoxedStrategy<(Body, Expect)> {
    spoiled(admission_review(), &ADMISSION_FIELDS)
        .prop_map(|(body, expect)| (Body(body), expect))
        .boxed()
}

fn conversion_bodies() -> BoxedStrategy<(Body, Expect)> {
    spoiled(conversion_review(), &CONVERSION_FIELDS)
        .prop_map(|(body, expect)| (Body(body), expect))
        .boxed()
}

/// Sends `request` on the keep-alive `connection`, opened again from `client` when the
/// exchange failed (so that one failure is counted once).
async fn send_on(
    connection: &mut kubebuilder_envtest::http_client::Connection,
    client: &HttpClient,
    request: http::Request<Full<Bytes>>,
) -> Result<Reply, String> {
    match connection.send(request).await {
        Ok(reply) => Ok(reply),
        Err(err) => {
            *connection = client.connect().await.map_err(|err| err.to_string())?;
            Err(err.to_string())
        }
    }
}

/// Sends a bodiless `method` request for `path` on the keep-alive `connection` (opened
/// again from `client` when the exchange failed): its status, or why it was not `expected`.
async fn keep_alive(
    connection: &mut kubebuilder_envtest::http_client::Connection,
    client: &HttpClient,
    method: &str,
    path: &str,
    expected: u16,
) -> Result<String, String> {
    let request = connection
        .request(method, path)
        .body(Full::default())
        .unwrap();
    let reply = send_on(connection, client, request).await?;
    if reply.status.as_u16() == expected {
        Ok(reply.status.as_str().to_owned())
    } else {
        Err(format!(
            "{} where {expected} was due: {}",
            reply.status,
            reply.text()
        ))
    }
}

// ---------------------------------------------------------------------------------------
// The bulk runs: 10,000 bad requests to each server, each followed by a good one.

/// One bad request and a good one after it, of a kind that depends on `i`.
trait Rounds {
    async fn round(&mut self, i: usize, tally: &mut Tally);
}

/// Runs a fifth of [`BAD_REQUESTS`] rounds to warm up (the rare kinds of bad request at
/// least twice at the default count), so that buffers and allocator arenas have their
/// working size, then the measured [`BAD_REQUESTS`]; reports and checks them as `fault`.
async fn measured(fault: &str, run: &mut impl Rounds) {
    let count = BAD_REQUESTS;
    let warm_up = count / 5;
    let mut tally = Tally::default();
    for i in 0..warm_up {
        run.round(i, &mut tally).await;
    }
    let measure = Measure::start(&tally);
    for i in warm_up..warm_up + count {
        run.round(i, &mut tally).await;
    }
    measure.conclude(fault, &tally);
}

struct WebhookRun<'a> {
    servers: &'a Servers,
    admission: Draw,
    conversion: Draw,
    bad: kubebuilder_envtest::http_client::Connection,
    good: kubebuilder_envtest::http_client::Connection,
}

impl Rounds for WebhookRun<'_> {
    async fn round(&mut self, i: usize, tally: &mut Tally) {
        let (what, answer) = self.bad_request(i).await;
        tally.bad(what, answer);
        let review = if i.is_multiple_of(2) {
            Review::Admission
        } else {
            Review::Conversion
        };
        let reply = if i.is_multiple_of(100) {
            // Now and then on a new connection: the server still accepts.
            let fresh = self
                .servers
                .webhook
                .post_json(review.path(), review.good_body());
            fresh.await.map_err(|err| err.to_string())
        } else {
            let request = self
                .good
                .json_post(review.path(), review.good_body())
                .unwrap();
            send_on(&mut self.good, &self.servers.webhook, request).await
        };
        tally.good(what, reply.and_then(|reply| good_review(&reply, review)));
    }
}

impl WebhookRun<'_> {
    async fn bad_request(&mut self, i: usize) -> (&'static str, Result<String, String>) {
        let review = if (i / 1000).is_multiple_of(2) {
            Review::Admission
        } else {
            Review::Conversion
        };
        match i % 1000 {
            999 => {
                return (
                    "streamed body over the limit",
                    self.streamed_over_limit(review).await,
                );
            }
            499 => {
                return (
                    "huge review within the limit",
                    self.huge_within_limit().await,
                );
            }
            _ => {}
        }
        match i % 20 {
            0..=6 => {
                let (body, expect) = self.admission.next();
                (
                    "admission body",
                    self.body(Review::Admission, body, expect).await,
                )
            }
            7..=11 => {
                let (body, expect) = self.conversion.next();
                (
                    "conversion body",
                    self.body(Review::Conversion, body, expect).await,
                )
            }
            12 => (
                "GET",
                keep_alive(
                    &mut self.bad,
                    &self.servers.webhook,
                    "GET",
                    review.path(),
                    405,
                )
                .await,
            ),
            13 => (
                "unknown path",
                keep_alive(&mut self.bad, &self.servers.webhook, "GET", "/nothing", 404).await,
            ),
            14 => {
                let request = format!(
                    "POST {} HTTP/1.1\r\nHost: server\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}",
                    review.path()
                );
                let exchanged = exchange(&self.servers.webhook, request.as_bytes()).await;
                ("content type", expect_exchange(exchanged, &[Some(400)]))
            }
            15 => {
                let limit = match review {
                    Review::Admission => MAX_ADMISSION_REVIEW_BYTES,
                    Review::Conversion => MAX_CONVERSION_REVIEW_BYTES,
                };
                let head = post_head(review.path(), &format!("Content-Length: {}\r\n", limit + 1));
                let exchanged = exchange(&self.servers.webhook, head.as_bytes()).await;
                (
                    "Content-Length over the limit",
                    expect_exchange(exchanged, &[Some(413)]),
                )
            }
            16 => {
                let request = if i % 40 == 16 {
                    MALFORMED_HEADER
                } else {
                    BAD_METHOD
                };
                let exchanged = exchange(&self.servers.webhook, request).await;
                ("malformed head", expect_exchange(exchanged, &[Some(400)]))
            }
            17 => {
                let request = too_many_headers(review.path());
                let exchanged = exchange(&self.servers.webhook, &request).await;
                ("too many headers", expect_exchange(exchanged, &[Some(431)]))
            }
            18 => {
                let request = post_head(review.path(), "Content-Length: 2\r\n") + "{}";
                let exchanged = exchange(&self.servers.webhook_plain(), request.as_bytes()).await;
                (
                    "plain HTTP on the TLS port",
                    expect_exchange(exchanged, &[Some(400)]),
                )
            }
            _ => {
                let exchanged = exchange(&self.servers.webhook_plain(), &garbage(i)).await;
                (
                    "garbage on the TLS port",
                    expect_exchange(exchanged, &[None]),
                )
            }
        }
    }

    async fn body(
        &mut self,
        review: Review,
        body: Vec<u8>,
        expect: Expect,
    ) -> Result<String, String> {
        let request = self.bad.json_post(review.path(), body.into()).unwrap();
        let reply = send_on(&mut self.bad, &self.servers.webhook, request).await?;
        clean_review(&reply, review, expect)?;
        Ok(reply.status.as_str().to_owned())
    }

    async fn streamed_over_limit(&self, review: Review) -> Result<String, String> {
        let limit = match review {
            Review::Admission => MAX_ADMISSION_REVIEW_BYTES,
            Review::Conversion => MAX_CONVERSION_REVIEW_BYTES,
        };
        let head = post_head(review.path(), "Transfer-Encoding: chunked\r\n");
        let exchanged = exchange_streamed(&self.servers.webhook, head, limit + (1 << 20)).await;
        expect_exchange(exchanged, &[Some(413)])
    }

    async fn huge_within_limit(&mut self) -> Result<String, String> {
        let review = with_field(
            admission_review(),
            "/request/object/spec/color",
            Value::from("x".repeat(MAX_ADMISSION_REVIEW_BYTES - 64 * 1024)),
        );
        self.body(Review::Admission, bytes_of(&review), Expect::Answered)
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_webhook_server() {
    let _alone = ALONE.write().await;
    let servers = Servers::start(false).await;
    let mut run = WebhookRun {
        servers: &servers,
        admission: Draw::new(admission_bodies()),
        conversion: Draw::new(conversion_bodies()),
        bad: servers.webhook.connect().await.unwrap(),
        good: servers.webhook.connect().await.unwrap(),
    };
    measured("bad input: webhook server", &mut run).await;
    servers.stop().await;
}

/// A server that reads no bodies (metrics, probes), on plain HTTP.
struct PlainRun<'a> {
    client: &'a HttpClient,
    /// Its endpoint (`/metrics`, `/healthz`): a GET there is the good request.
    path: &'static str,
    bad: kubebuilder_envtest::http_client::Connection,
    good: kubebuilder_envtest::http_client::Connection,
}

impl Rounds for PlainRun<'_> {
    async fn round(&mut self, i: usize, tally: &mut Tally) {
        let (what, answer) = self.bad_request(i).await;
        tally.bad(what, answer);
        let reply = if i.is_multiple_of(100) {
            self.client
                .get(self.path, None)
                .await
                .map_err(|err| err.to_string())
        } else {
            let request = self
                .good
                .request("GET", self.path)
                .body(Full::default())
                .unwrap();
            send_on(&mut self.good, self.client, request).await
        };
        let good = reply.and_then(|reply| {
            (reply.status.as_u16() == 200 && !reply.body.is_empty())
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "GET {} answered {}: {}",
                        self.path,
                        reply.status,
                        reply.text()
                    )
                })
        });
        tally.good(what, good);
    }
}

impl PlainRun<'_> {
    async fn bad_request(&mut self, i: usize) -> (&'static str, Result<String, String>) {
        let (path, client) = (self.path, self.client);
        let raw = |request: Vec<u8>| async move { exchange(client, &request).await };
        match i % 12 {
            0 => (
                "unknown path",
                keep_alive(&mut self.bad, self.client, "GET", "/nothing", 404).await,
            ),
            1 => (
                "POST",
                keep_alive(&mut self.bad, self.client, "POST", path, 405).await,
            ),
            2 => (
                "malformed header",
                expect_exchange(raw(MALFORMED_HEADER.into()).await, &[Some(400)]),
            ),
            3 => (
                "malformed method",
                expect_exchange(raw(BAD_METHOD.into()).await, &[Some(400)]),
            ),
            4 => (
                "bad Content-Length",
                expect_exchange(raw(BAD_CONTENT_LENGTH.into()).await, &[Some(400)]),
            ),
            5 => (
                "two Content-Lengths",
                expect_exchange(raw(TWO_CONTENT_LENGTHS.into()).await, &[Some(400)]),
            ),
            6 => (
                "too many headers",
                expect_exchange(raw(too_many_headers(path)).await, &[Some(431)]),
            ),
            7 if i % 100 == 7 => (
                "huge header",
                expect_exchange(raw(huge_header(path)).await, &[Some(431)]),
            ),
            7 | 8 => (
                "long URI",
                expect_exchange(raw(long_uri(path)).await, &[Some(414)]),
            ),
            9 => (
                "garbage",
                expect_exchange(raw(garbage(i)).await, &[Some(400)]),
            ),
            10 => (
                "HTTP/2 preface",
                expect_exchange(raw(HTTP2_PREFACE.into()).await, &[None]),
            ),
            _ => (
                "unknown HTTP version",
                expect_exchange(raw(UNKNOWN_VERSION.into()).await, &[Some(400)]),
            ),
        }
    }
}

/// The bulk run on a server that reads no bodies.
async fn bulk_plain(fault: &str, client: &HttpClient, path: &'static str) {
    let mut run = PlainRun {
        client,
        path,
        bad: client.connect().await.unwrap(),
        good: client.connect().await.unwrap(),
    };
    measured(fault, &mut run).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_metrics_server() {
    let _alone = ALONE.write().await;
    let servers = Servers::start(false).await;
    bulk_plain("bad input: metrics server", &servers.metrics, "/metrics").await;
    servers.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_to_the_probe_server() {
    let _alone = ALONE.write().await;
    let servers = Servers::start(false).await;
    bulk_plain("bad input: probe server", &servers.probes, "/healthz").await;
    servers.stop().await;
}

// ---------------------------------------------------------------------------------------
// The property: every spoiled review gets a clean answer, and a good one after it works.

#[test]
fn every_spoiled_review_gets_a_clean_answer() {
    let _shared = ALONE.blocking_read();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let servers = runtime.block_on(Servers::start(false));
    let config = Config {
        cases: 256,
        // Failures are reported with their shrunk input; no file is written in the tree.
        failure_persistence: None,
        ..Config::default()
    };
    for (review, bodies) in [
        (Review::Admission, admission_bodies()),
        (Review::Conversion, conversion_bodies()),
    ] {
        let mut runner = TestRunner::new(config.clone());
        let result = runner.run(&bodies, |(body, expect)| {
            runtime.block_on(async {
                let reply = servers.webhook.post_json(review.path(), body.0).await;
                let reply = reply.map_err(|err| TestCaseError::fail(err.to_string()))?;
                clean_review(&reply, review, expect).map_err(TestCaseError::fail)?;
                let good = servers.webhook.post_json(review.path(), review.good_body());
                let good = good
                    .await
                    .map_err(|err| TestCaseError::fail(err.to_string()))?;
                good_review(&good, review).map_err(TestCaseError::fail)
            })
        });
        let report = FaultReport {
            cycles: u64::from(config.cases),
            errors: u64::from(result.is_err()),
            detail: format!(
                "{} bodies drawn by proptest, each followed by a good review",
                review.kind()
            ),
            ..FaultReport::new(&format!("bad input: {} bodies (proptest)", review.kind()))
        };
        report.print();
        if let Err(failure) = result {
            panic!("{review:?}: {failure}");
        }
    }
    runtime.block_on(servers.stop());
}

// ---------------------------------------------------------------------------------------
// Slow clients.

/// A ClientHello of `version` (0x0301 is TLS 1.0, 0x0302 TLS 1.1, 0x0303 TLS 1.2) without
/// the `supported_versions` extension, as a client of that version sends it: ECDHE and
/// RSA suites, the P-256 and X25519 groups, ECDSA and RSA signatures.
fn client_hello(version: u16) -> Vec<u8> {
    fn with_len16(bytes: &[u8]) -> Vec<u8> {
        let mut out = (bytes.len() as u16).to_be_bytes().to_vec();
        out.extend_from_slice(bytes);
        out
    }
    let extension = |kind: u16, data: &[u8]| [&kind.to_be_bytes()[..], &with_len16(data)].concat();
    let suites: Vec<u8> = [0xc02b_u16, 0xc02f, 0xc009, 0xc013, 0x002f]
        .iter()
        .flat_map(|suite| suite.to_be_bytes())
        .collect();
    let groups = with_len16(&[0x00, 0x1d, 0x00, 0x17]);
    let signatures = with_len16(&[0x04, 0x03, 0x08, 0x04, 0x04, 0x01, 0x02, 0x01]);
    let extensions = [
        extension(0x000a, &groups),
        extension(0x000b, &[1, 0]),
        extension(0x000d, &signatures),
    ]
    .concat();
    let hello = [
        &version.to_be_bytes()[..],
        &[0x42; 32],
        &[0],
        &with_len16(&suites),
        &[1, 0],
        &with_len16(&extensions),
    ]
    .concat();
    let len = (hello.len() as u32).to_be_bytes();
    let handshake = [&[1u8][..], &len[1..], &hello].concat();
    [&[0x16, 0x03, 0x01][..], &with_len16(&handshake)].concat()
}

/// A connection that sends part of what it should, then nothing.
struct Stall {
    what: String,
    client: HttpClient,
    sent: Vec<u8>,
    /// Sends `sent` one byte a second instead of at once.
    trickle: bool,
    /// When the server must close it: the documented timeout, from when it was sent.
    after: Duration,
    /// What the server answers first, if anything.
    answers: &'static [Option<u16>],
}

impl Stall {
    /// How long the server took to close the connection, checked against `after`.
    async fn run(self) -> Result<Duration, String> {
        let stream = self.client.stream().await.map_err(|err| err.to_string())?;
        let (mut reader, mut writer) = tokio::io::split(stream);
        let (sent, trickle) = (self.sent, self.trickle);
        let writing = tokio::spawn(async move {
            if !trickle {
                return writer.write_all(&sent).await.map(|()| writer);
            }
            for byte in sent {
                writer.write_all(&[byte]).await?;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Ok(writer)
        });
        let exchange = read_until_closed(&mut reader, self.after + STALL_SLACK).await;
        writing.abort();
        let exchange = exchange.map_err(|err| format!("{}: {err}", self.what))?;
        if !self.answers.contains(&exchange.status) {
            return Err(format!(
                "{}: answered {:?} where {:?} was due",
                self.what, exchange.status, self.answers
            ));
        }
        let took = exchange.took;
        let early = self.after.saturating_sub(Duration::from_secs(1));
        if took < early || took > self.after + STALL_SLACK {
            return Err(format!(
                "{}: closed after {took:.1?}, not after {:?}",
                self.what, self.after
            ));
        }
        Ok(took)
    }
}

/// How much later than its timeout a stalled connection may be closed (two busy cores).
const STALL_SLACK: Duration = Duration::from_secs(5);

/// The stalls of every server.
fn stalls(servers: &Servers) -> Vec<Stall> {
    let stall = |what: &str, client: &HttpClient, sent: &[u8], after, answers| Stall {
        what: what.to_owned(),
        client: client.clone(),
        sent: sent.to_vec(),
        trickle: false,
        after,
        answers,
    };
    let half_head = b"GET /healthz HTTP/1.1\r\nHost: server\r\nAccept: te";
    let half_body =
        b"POST /metrics HTTP/1.1\r\nHost: server\r\nContent-Length: 1000\r\n\r\n0123456789";
    let closed: &[Option<u16>] = &[None, Some(408)];
    let mut stalls = vec![
        stall(
            "TLS port, nothing sent",
            &servers.webhook_plain(),
            b"",
            HANDSHAKE_TIMEOUT,
            &[None],
        ),
        stall(
            "TLS port, half a ClientHello",
            &servers.webhook_plain(),
            &client_hello(0x0303)[..40],
            HANDSHAKE_TIMEOUT,
            &[None],
        ),
        stall(
            "webhook, idle",
            &servers.webhook,
            b"",
            HEADER_READ_TIMEOUT,
            closed,
        ),
        stall(
            "webhook, half a head",
            &servers.webhook,
            half_head,
            HEADER_READ_TIMEOUT,
            closed,
        ),
        stall(
            "webhook, half a body",
            &servers.webhook,
            (post_head(MUTATE_PATH, "Content-Length: 1000\r\n") + "{\"apiVersion\"").as_bytes(),
            BODY_READ_TIMEOUT,
            &[Some(408)],
        ),
        Stall {
            trickle: true,
            ..stall(
                "webhook, head trickled",
                &servers.webhook,
                &[b'a'; 60],
                HEADER_READ_TIMEOUT,
                closed,
            )
        },
    ];
    for (name, client) in [("metrics", &servers.metrics), ("probes", &servers.probes)] {
        stalls.extend([
            stall(
                &format!("{name}, idle"),
                client,
                b"",
                HEADER_READ_TIMEOUT,
                closed,
            ),
            stall(
                &format!("{name}, half a head"),
                client,
                half_head,
                HEADER_READ_TIMEOUT,
                closed,
            ),
            // Neither server reads bodies: answered at once, the rest of the body not awaited.
            stall(
                &format!("{name}, half a body"),
                client,
                half_body,
                Duration::ZERO,
                &[Some(405), Some(404)],
            ),
            Stall {
                trickle: true,
                ..stall(
                    &format!("{name}, head trickled"),
                    client,
                    half_head,
                    HEADER_READ_TIMEOUT,
                    closed,
                )
            },
        ]);
    }
    stalls
}

/// Good requests to every server, one round a second, until `done`: the servers serve
/// while connections stall. Returns the failures.
async fn keep_asking(servers: &Servers, done: tokio_util::sync::CancellationToken) -> Vec<String> {
    let mut failures = Vec::new();
    while !done.is_cancelled() {
        let review = Review::Admission;
        let webhook = servers
            .webhook
            .post_json(review.path(), review.good_body())
            .await;
        if let Err(err) = webhook
            .map_err(|err| err.to_string())
            .and_then(|reply| good_review(&reply, review))
        {
            failures.push(format!("webhook while stalled: {err}"));
        }
        for (client, path) in [
            (&servers.metrics, "/metrics"),
            (&servers.probes, "/healthz"),
        ] {
            match client.get(path, None).await {
                Ok(reply) if reply.status.as_u16() == 200 => {}
                Ok(reply) => failures.push(format!("GET {path} while stalled: {}", reply.status)),
                Err(err) => failures.push(format!("GET {path} while stalled: {err}")),
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_are_disconnected_after_the_documented_timeouts() {
    let _shared = ALONE.read().await;
    let servers = Servers::start(false).await;
    let stalls = stalls(&servers);
    let count = stalls.len() as u64;
    let done = tokio_util::sync::CancellationToken::new();
    let asking = keep_asking(&servers, done.clone());
    let stalled = async {
        let results = futures::future::join_all(stalls.into_iter().map(Stall::run)).await;
        done.cancel();
        results
    };
    let (results, failures) = tokio::join!(stalled, asking);
    let mut errors = failures;
    let mut took = Vec::new();
    for result in results {
        match result {
            Ok(duration) => took.push(duration),
            Err(err) => errors.push(err),
        }
    }
    let report = FaultReport {
        cycles: count,
        recoveries: took,
        errors: errors.len() as u64,
        detail: format!(
            "closed after the documented timeouts (head {HEADER_READ_TIMEOUT:?}, body {BODY_READ_TIMEOUT:?}, TLS handshake {HANDSHAKE_TIMEOUT:?}); recoveries = time to close"
        ),
        ..FaultReport::new("slow clients: every server")
    };
    report.print();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    servers.stop().await;
}

// ---------------------------------------------------------------------------------------
// TLS ports.

/// What a TLS port must do with bytes that are no TLS 1.2+ handshake.
#[derive(Clone, Copy)]
enum Refusal {
    /// Answer 400 in plain HTTP, then close.
    PlainHttp,
    /// Close, after a TLS alert or not.
    Close,
    /// A fatal `protocol_version` alert (70), then close.
    ProtocolVersion,
}

fn tls_refusals() -> Vec<(&'static str, Vec<u8>, Refusal)> {
    vec![
        (
            "plain HTTP",
            b"GET /metrics HTTP/1.1\r\nHost: server\r\n\r\n".to_vec(),
            Refusal::PlainHttp,
        ),
        ("HTTP/2 preface", HTTP2_PREFACE.to_vec(), Refusal::PlainHttp),
        ("garbage", garbage(7), Refusal::Close),
        ("zeros", vec![0; 64], Refusal::Close),
        (
            "a record longer than TLS allows",
            [&[0x16, 0x03, 0x01, 0xff, 0xff][..], &[0; 16]].concat(),
            Refusal::Close,
        ),
        (
            "an SSLv2 ClientHello",
            [&[0x80, 0x2e, 0x01, 0x00, 0x02][..], &[0; 16]].concat(),
            Refusal::Close,
        ),
        (
            "a TLS 1.0 ClientHello",
            client_hello(0x0301),
            Refusal::ProtocolVersion,
        ),
        (
            "a TLS 1.1 ClientHello",
            client_hello(0x0302),
            Refusal::ProtocolVersion,
        ),
    ]
}

/// Whether `exchange` is the refusal due.
fn refused(exchange: &Exchange, refusal: Refusal) -> bool {
    let head = &exchange.head;
    match refusal {
        Refusal::PlainHttp => {
            exchange.status == Some(400)
                && String::from_utf8_lossy(head).contains("This port serves HTTPS")
        }
        Refusal::Close => exchange.status.is_none(),
        // An alert record: content type 21, level fatal (2), description.
        Refusal::ProtocolVersion => {
            head.len() >= 7 && head[0] == 21 && head[5] == 2 && head[6] == 70
        }
    }
}

/// A request the TLS server behind `client` answers as it should: a good review on the
/// webhook server, 401 for an anonymous scrape on the secure metrics server.
async fn answers_over_tls(name: &str, client: &HttpClient) -> Result<(), String> {
    if name == "webhook" {
        let review = Review::Admission;
        let reply = client.post_json(review.path(), review.good_body()).await;
        return reply
            .map_err(|err| err.to_string())
            .and_then(|reply| good_review(&reply, review));
    }
    let reply = client
        .get("/metrics", None)
        .await
        .map_err(|err| err.to_string())?;
    (reply.status.as_u16() == 401)
        .then_some(())
        .ok_or_else(|| format!("anonymous scrape answered {}", reply.status))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_ports_refuse_plain_http_garbage_and_tls_below_1_2() {
    let _shared = ALONE.read().await;
    let servers = Servers::start(true).await;
    let ports = [
        ("webhook", servers.webhook_plain(), servers.webhook.clone()),
        (
            "metrics",
            HttpClient::plain(servers.running.metrics_addr().unwrap()),
            servers.metrics.clone(),
        ),
    ];
    let (mut attempts, mut errors) = (0u64, Vec::new());
    for (name, plain, tls) in &ports {
        for (what, bytes, refusal) in tls_refusals() {
            attempts += 1;
            match exchange(plain, &bytes).await {
                Ok(exchange) if refused(&exchange, refusal) => {}
                Ok(exchange) => errors.push(format!(
                    "{name}, {what}: got {:?}",
                    String::from_utf8_lossy(&exchange.head)
                )),
                Err(err) => errors.push(format!("{name}, {what}: {err}")),
            }
            if let Err(err) = answers_over_tls(name, tls).await {
                errors.push(format!("{name}, after {what}: {err}"));
            }
        }
        for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
            let only = tls.clone().with_tls_version(version);
            if let Err(err) = answers_over_tls(name, &only).await {
                errors.push(format!("{name}, {version:?} only: {err}"));
            }
        }
    }
    let report = FaultReport {
        cycles: attempts,
        errors: errors.len() as u64,
        detail: "plain HTTP answered 400, garbage closed, TLS 1.0/1.1 refused with protocol_version, TLS 1.2 and 1.3 served; on the webhook and secure metrics ports".into(),
        ..FaultReport::new("bad input: TLS ports")
    };
    report.print();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    servers.stop().await;
}

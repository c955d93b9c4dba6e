//! The HTTP(S) plumbing shared by the probe, metrics and webhook servers: hyper 1 on a
//! bound listener, optional TLS whose certificate is re-read when its files change, HTTP/2
//! only when asked for, and a graceful stop that lets requests in flight finish.
//!
//! What a client that sends bad input or sends slowly gets, on every server:
//! - request heads (request line and headers, HTTP/1.1) must arrive within
//!   [`HEADER_READ_TIMEOUT`], 32 s as controller-runtime's and the apiserver's own servers;
//!   the clock also runs while a keep-alive connection waits for its next request, so idle
//!   connections are closed after it. A head over hyper's buffer (~400 KiB) or of more than
//!   100 headers gets 431, a malformed one 400, and the connection is closed;
//! - a body read by a handler ([`read_body`]) must arrive within [`BODY_READ_TIMEOUT`], 30 s
//!   (the apiserver gives up on a webhook after at most 30 s, so a slower body is for a
//!   request nobody waits for), and is refused with 413 above the handler's limit, as soon
//!   as its `Content-Length` says so or, without one, once that many bytes have come: never
//!   more than the limit is held;
//! - on a TLS port, the handshake must be done within [`HANDSHAKE_TIMEOUT`], 10 s; TLS 1.2
//!   and 1.3 only; plain HTTP is answered 400 and closed (as Go's servers do), anything
//!   else that is not TLS is closed with rustls' alert.
//!
//! HTTP/2, off unless `--enable-http2`, has no head timeout in hyper; its bodies are
//! bounded as above. None of these ends more than the one connection: the server goes on
//! accepting.

use std::convert::Infallible;
use std::fs;
use std::future::Future;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use rustls::SupportedProtocolVersion;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::version::{TLS12, TLS13};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_util::sync::CancellationToken;

use crate::certs::CertPair;

/// The body of every response these servers write.
pub type Body = Full<Bytes>;

/// How long a client may take for its TLS handshake before the connection is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may take to send a request head, or wait idle for the next one.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(32);
/// How long a handler waits for a whole request body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The TLS versions served: TLS 1.0 and 1.1 are refused with a `protocol_version` alert.
/// Named rather than left to rustls' defaults so that the floor is this crate's decision.
const TLS_VERSIONS: &[&SupportedProtocolVersion] = &[&TLS13, &TLS12];
/// What a plain-HTTP request to a TLS port is answered, so that whoever misconfigured
/// the client reads why instead of a TLS alert.
const PLAIN_HTTP_REFUSAL: &[u8] = b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nThis port serves HTTPS: the request was sent as plain HTTP.\n";
/// How long a stopping server waits for requests in flight.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves one kind of request. Implemented for closures returning a response future.
pub trait Handler: Clone + Send + Sync + 'static {
    /// Answers one request.
    fn handle(&self, request: Request<Incoming>) -> impl Future<Output = Response<Body>> + Send;
}

impl<F, Fut> Handler for F
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<Body>> + Send,
{
    fn handle(&self, request: Request<Incoming>) -> impl Future<Output = Response<Body>> + Send {
        self(request)
    }
}

/// A response with a status and a plain-text body.
pub fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", body)
}

/// A response with a status, a content type and a body.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

/// Serves `handler` on `listener` until `stop` is cancelled, then lets open requests
/// finish (for at most [`DRAIN_TIMEOUT`]).
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    enable_http2: bool,
    handler: impl Handler,
    stop: CancellationToken,
) {
    let builder = connection_builder(enable_http2);
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Running out of file descriptors and the like: wait instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let builder = builder.clone();
        let tls = tls.clone();
        let handler = handler.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let handler = handler.clone();
                async move { Ok::<_, Infallible>(handler.handle(request).await) }
            });
            let result = match tls {
                None => {
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(connection.into_owned()).await
                }
                Some(acceptor) => {
                    let Some(stream) = accept_tls(&acceptor, stream, peer).await else {
                        return;
                    };
                    let connection = builder.serve_connection(TokioIo::new(stream), service);
                    watcher.watch(connection.into_owned()).await
                }
            };
            if let Err(err) = result {
                tracing::debug!(%peer, error = %err, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still open after {DRAIN_TIMEOUT:?}; closing them");
    }
}

/// HTTP/1.1 with the head timeout (and HTTP/2 beside it when enabled).
fn connection_builder(enable_http2: bool) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // hyper only enforces its timeouts with a timer.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    if enable_http2 {
        builder
    } else {
        builder.http1_only()
    }
}

/// The TLS stream of a connection, or `None` when the client does not complete a
/// handshake within [`HANDSHAKE_TIMEOUT`] (plain HTTP, garbage, an old TLS version).
async fn accept_tls(
    acceptor: &TlsAcceptor,
    mut stream: TcpStream,
    peer: std::net::SocketAddr,
) -> Option<TlsStream<TcpStream>> {
    let handshake = async {
        if sends_plain_http(&stream).await {
            refuse_plain_http(&mut stream).await;
            return Err(io::Error::other("plain HTTP on the TLS port"));
        }
        acceptor.accept(stream).await
    };
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(stream)) => Some(stream),
        Ok(Err(err)) => {
            tracing::debug!(%peer, error = %err, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            None
        }
    }
}

/// Whether the first byte the client sent starts an HTTP method rather than a TLS
/// record (whose first byte, the content type, is 20 to 24: never a letter).
async fn sends_plain_http(stream: &TcpStream) -> bool {
    let mut first = [0u8; 1];
    matches!(stream.peek(&mut first).await, Ok(1) if first[0].is_ascii_alphabetic())
}

/// Answers a plain-HTTP request with [`PLAIN_HTTP_REFUSAL`] and closes the connection.
async fn refuse_plain_http(stream: &mut TcpStream) {
    // Read what has come of the request first: closing a socket with unread input resets
    // the connection, and the client might lose the answer.
    let mut request = [0u8; 4096];
    let _ = stream.read(&mut request).await;
    let _ = stream.write_all(PLAIN_HTTP_REFUSAL).await;
    let _ = stream.shutdown().await;
}

/// The servers' TLS implementation: *ring*'s, as kube's client here uses it (it builds
/// without a C toolchain, unlike aws-lc-rs). rustls 0.23.48 deprecates it for lacking
/// post-quantum key exchange; the clients of these servers (the apiserver, scrapers, probes)
/// negotiate X25519 with it.
#[allow(
    deprecated,
    reason = "ring, chosen above, has no post-quantum key exchange"
)]
fn crypto_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// A TLS acceptor for `certificates`, offering HTTP/2 in ALPN only when enabled.
pub fn tls_acceptor(certificates: Arc<dyn ResolvesServerCert>, enable_http2: bool) -> TlsAcceptor {
    let provider = Arc::new(crypto_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(TLS_VERSIONS)
        .expect("the ring provider supports TLS 1.2 and 1.3")
        .with_no_client_auth()
        .with_cert_resolver(certificates);
    config.alpn_protocols = if enable_http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    TlsAcceptor::from(Arc::new(config))
}

/// Why a request body was not read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("request entity is too large; limit is {0} bytes")]
    TooLarge(usize),
    #[error("the request body did not arrive within {BODY_READ_TIMEOUT:?}")]
    TimedOut,
    #[error("cannot read the request body: {0}")]
    Broken(String),
}

impl BodyError {
    /// The status that answers the request: 413, 408 or 400.
    pub fn status(&self) -> StatusCode {
        match self {
            BodyError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            BodyError::TimedOut => StatusCode::REQUEST_TIMEOUT,
            BodyError::Broken(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// The whole body of a request, of at most `limit` bytes, within [`BODY_READ_TIMEOUT`].
/// A `Content-Length` over the limit is refused before anything of the body is read.
pub async fn read_body(body: Incoming, limit: usize) -> Result<Bytes, BodyError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(BodyError::TooLarge(limit));
    }
    let collected = tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, limit).collect())
        .await
        .map_err(|_| BodyError::TimedOut)?;
    match collected {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<LengthLimitError>() => Err(BodyError::TooLarge(limit)),
        Err(err) => Err(BodyError::Broken(err.to_string())),
    }
}

/// Why a certificate could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("no certificate in {0}")]
    NoCertificate(PathBuf),
    #[error("no private key in {path}: {reason}")]
    NoKey { path: PathBuf, reason: String },
    #[error("certificate {cert} and key {key} do not belong together: {reason}")]
    Mismatch {
        cert: PathBuf,
        key: PathBuf,
        reason: String,
    },
}

/// A serving certificate that never changes (self-signed at start-up).
#[derive(Debug)]
pub struct FixedCertificate(Arc<CertifiedKey>);

impl FixedCertificate {
    /// Loads a PEM certificate chain and key.
    pub fn from_pem(pair: &CertPair) -> Result<Self, TlsError> {
        certified_key(
            pair.cert_pem.as_bytes(),
            pair.key_pem.as_bytes(),
            Path::new("<memory>"),
            Path::new("<memory>"),
        )
        .map(|key| Self(Arc::new(key)))
    }
}

impl ResolvesServerCert for FixedCertificate {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// A serving certificate read from two files and read again, at the next handshake,
/// whenever either file changes (cert-manager rotates mounted secrets in place).
///
/// A pair that does not load (a half-written rotation: new certificate, old key) keeps
/// the previous certificate in use and is retried at the following handshake.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: Mutex<Loaded>,
}

#[derive(Debug)]
struct Loaded {
    key: Arc<CertifiedKey>,
    stamp: (FileStamp, FileStamp),
}

/// What identifies one version of a file: a rotation changes at least one of these,
/// including an atomic symlink swap (which changes the inode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    modified: Option<SystemTime>,
    inode: u64,
    len: u64,
}

impl FileStamp {
    fn of(path: &Path) -> io::Result<Self> {
        let metadata = fs::metadata(path)?;
        Ok(Self {
            modified: metadata.modified().ok(),
            inode: metadata.ino(),
            len: metadata.len(),
        })
    }
}

impl ReloadingCertificate {
    /// Loads the pair now (failing when it does not load) and watches it from then on.
    pub fn load(cert_path: PathBuf, key_path: PathBuf) -> Result<Self, TlsError> {
        let loaded = Self::read(&cert_path, &key_path)?;
        Ok(Self {
            cert_path,
            key_path,
            current: Mutex::new(loaded),
        })
    }

    fn read(cert_path: &Path, key_path: &Path) -> Result<Loaded, TlsError> {
        let stamp_of = |path: &Path| {
            FileStamp::of(path).map_err(|source| TlsError::Read {
                path: path.to_owned(),
                source,
            })
        };
        let stamp = (stamp_of(cert_path)?, stamp_of(key_path)?);
        let read = |path: &Path| {
            fs::read(path).map_err(|source| TlsError::Read {
                path: path.to_owned(),
                source,
            })
        };
        let key = certified_key(&read(cert_path)?, &read(key_path)?, cert_path, key_path)?;
        Ok(Loaded {
            key: Arc::new(key),
            stamp,
        })
    }

    /// The certificate to serve now, re-read first when the files changed.
    fn current(&self) -> Arc<CertifiedKey> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        let stamp = FileStamp::of(&self.cert_path)
            .and_then(|cert| Ok((cert, FileStamp::of(&self.key_path)?)));
        if matches!(stamp, Ok(stamp) if stamp != current.stamp) {
            match Self::read(&self.cert_path, &self.key_path) {
                Ok(loaded) => {
                    tracing::info!(cert = %self.cert_path.display(), "serving certificate reloaded");
                    *current = loaded;
                }
                Err(err) => {
                    tracing::warn!(error = %err, "keeping the previous serving certificate")
                }
            }
        }
        current.key.clone()
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert_path: &Path,
    key_path: &Path,
) -> Result<CertifiedKey, TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| TlsError::NoCertificate(cert_path.to_owned()))?;
    if chain.is_empty() {
        return Err(TlsError::NoCertificate(cert_path.to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|err| TlsError::NoKey {
        path: key_path.to_owned(),
        reason: err.to_string(),
    })?;
    CertifiedKey::from_der(chain, key, &crypto_provider()).map_err(|err| TlsError::Mismatch {
        cert: cert_path.to_owned(),
        key: key_path.to_owned(),
        reason: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certs::CertificateAuthority;

    fn write_pair(dir: &Path, pair: &CertPair) {
        fs::write(dir.join("tls.crt"), &pair.cert_pem).unwrap();
        fs::write(dir.join("tls.key"), &pair.key_pem).unwrap();
    }

    fn served(certificate: &ReloadingCertificate) -> Vec<u8> {
        certificate.current().cert[0].to_vec()
    }

    #[test]
    fn rereads_changed_files_and_keeps_the_old_pair_when_the_new_one_is_broken() {
        let ca = CertificateAuthority::new("reload-ca").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let first = ca.issue_server(&["localhost"], &[]).unwrap();
        write_pair(dir.path(), &first);
        let certificate =
            ReloadingCertificate::load(dir.path().join("tls.crt"), dir.path().join("tls.key"))
                .unwrap();
        let first_der = served(&certificate);

        // Half a rotation: a new certificate next to the old key does not load.
        let second = ca.issue_server(&["localhost"], &[]).unwrap();
        fs::write(dir.path().join("tls.crt"), &second.cert_pem).unwrap();
        assert_eq!(served(&certificate), first_der);

        // The rotation completes: the new pair is served.
        fs::write(dir.path().join("tls.key"), &second.key_pem).unwrap();
        let second_der = served(&certificate);
        assert_ne!(second_der, first_der);
        assert_eq!(served(&certificate), second_der);
    }

    #[test]
    fn loading_reports_what_is_wrong() {
        let ca = CertificateAuthority::new("reload-ca").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let err =
            ReloadingCertificate::load(dir.path().join("tls.crt"), dir.path().join("tls.key"))
                .unwrap_err();
        assert!(matches!(err, TlsError::Read { .. }), "{err}");
        let pair = ca.issue_server(&["localhost"], &[]).unwrap();
        fs::write(dir.path().join("tls.crt"), "not pem").unwrap();
        fs::write(dir.path().join("tls.key"), &pair.key_pem).unwrap();
        let err =
            ReloadingCertificate::load(dir.path().join("tls.crt"), dir.path().join("tls.key"))
                .unwrap_err();
        assert!(matches!(err, TlsError::NoCertificate(_)), "{err}");
        let other = ca.issue_server(&["localhost"], &[]).unwrap();
        fs::write(dir.path().join("tls.crt"), &other.cert_pem).unwrap();
        let err =
            ReloadingCertificate::load(dir.path().join("tls.crt"), dir.path().join("tls.key"))
                .unwrap_err();
        assert!(matches!(err, TlsError::Mismatch { .. }), "{err}");
    }
}

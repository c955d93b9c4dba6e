//! A small HTTP/1.1 client for the runtime's servers, over plain TCP or TLS trusting a
//! given CA: what benchmarks and tests use to call the webhook, metrics and probe
//! servers directly, to see which certificate a server presents, and to write bytes no
//! HTTP client would ([`HttpClient::stream`]).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use rustls::DigitallySignedStruct;
use rustls::SignatureScheme;
use rustls::SupportedProtocolVersion;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The CA given to [`HttpClient::tls`] is not PEM or not a usable certificate.
    #[error("invalid CA certificate: {0}")]
    Ca(String),
    /// The TCP connection or the TLS handshake failed (the server's certificate not
    /// trusted, say).
    #[error("cannot connect: {0}")]
    Connect(#[from] std::io::Error),
    /// The HTTP/1.1 exchange failed: the connection's handshake, the request or the
    /// response.
    #[error("HTTP error: {0}")]
    Http(#[from] hyper::Error),
    /// The request could not be built (a path that is not a valid URI, say).
    #[error("invalid request: {0}")]
    Request(#[from] http::Error),
}

/// Where and how to connect.
#[derive(Clone)]
pub struct HttpClient {
    addr: SocketAddr,
    tls: Option<Tls>,
}

#[derive(Clone)]
struct Tls {
    /// `None` accepts any certificate (`curl -k`), for self-signed servers.
    roots: Option<Arc<rustls::RootCertStore>>,
    server_name: ServerName<'static>,
    /// `None` offers rustls' safe defaults (TLS 1.2 and 1.3).
    version: Option<&'static SupportedProtocolVersion>,
}

/// The bytes of one connection, after the TLS handshake on an HTTPS client.
pub trait ByteStream: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> ByteStream for T {}

/// What a TLS handshake showed of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    /// The server's certificate, DER.
    pub certificate: Vec<u8>,
    /// The protocol agreed through ALPN (`http/1.1`, `h2`).
    pub alpn: Option<Vec<u8>>,
}

/// A response: status and body.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The response's HTTP status.
    pub status: StatusCode,
    /// The whole response body.
    pub body: Bytes,
}

impl Reply {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl HttpClient {
    /// Plain HTTP to `addr`.
    pub fn plain(addr: SocketAddr) -> Self {
        Self { addr, tls: None }
    }

    /// HTTPS to `addr`, trusting only `ca_pem` and expecting the certificate to name the
    /// IP address of `addr`.
    pub fn tls(addr: SocketAddr, ca_pem: &str) -> Result<Self, ClientError> {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            let certificate = certificate.map_err(|err| ClientError::Ca(err.to_string()))?;
            roots
                .add(certificate)
                .map_err(|err| ClientError::Ca(err.to_string()))?;
        }
        Ok(Self {
            addr,
            tls: Some(Tls {
                roots: Some(Arc::new(roots)),
                server_name: ServerName::IpAddress(addr.ip().into()),
                version: None,
            }),
        })
    }

    /// HTTPS to `addr` without checking who signed the server's certificate (`curl -k`):
    /// for servers with a self-signed certificate, such as the metrics server without
    /// `--metrics-cert-path`.
    pub fn tls_unverified(addr: SocketAddr) -> Self {
        Self {
            addr,
            tls: Some(Tls {
                roots: None,
                server_name: ServerName::IpAddress(addr.ip().into()),
                version: None,
            }),
        }
    }

    /// The same client offering only `version` (`&rustls::version::TLS12`, say), to see
    /// which versions a server accepts.
    ///
    /// # Panics
    /// When the client is plain HTTP.
    #[must_use]
    pub fn with_tls_version(mut self, version: &'static SupportedProtocolVersion) -> Self {
        let tls = self.tls.as_mut().expect("a TLS version needs a TLS client");
        tls.version = Some(version);
        self
    }

    /// Opens a connection (and does the TLS handshake) for a caller that writes and reads
    /// the bytes itself: malformed requests, stalled ones.
    pub async fn stream(&self) -> Result<Box<dyn ByteStream>, ClientError> {
        Ok(match &self.tls {
            None => Box::new(TcpStream::connect(self.addr).await?),
            Some(tls) => Box::new(self.tls_stream(tls, &[b"http/1.1"]).await?),
        })
    }

    /// A TLS handshake offering the `alpn` protocols, to see what the server presents.
    ///
    /// # Panics
    /// When the client is plain HTTP.
    pub async fn handshake(&self, alpn: &[&[u8]]) -> Result<Handshake, ClientError> {
        let tls = self.tls.as_ref().expect("handshake() needs a TLS client");
        let stream = self.tls_stream(tls, alpn).await?;
        let (_, session) = stream.get_ref();
        Ok(Handshake {
            certificate: session
                .peer_certificates()
                .and_then(|chain| chain.first())
                .map(|certificate| certificate.to_vec())
                .unwrap_or_default(),
            alpn: session.alpn_protocol().map(<[u8]>::to_vec),
        })
    }

    /// Opens one keep-alive HTTP/1.1 connection.
    pub async fn connect(&self) -> Result<Connection, ClientError> {
        let sender = match &self.tls {
            None => Self::handshake_http(TcpStream::connect(self.addr).await?).await?,
            Some(tls) => Self::handshake_http(self.tls_stream(tls, &[b"http/1.1"]).await?).await?,
        };
        Ok(Connection {
            sender,
            authority: self.addr.to_string(),
        })
    }

    /// One GET on a new connection, with a bearer token when given.
    pub async fn get(&self, path: &str, bearer_token: Option<&str>) -> Result<Reply, ClientError> {
        let mut connection = self.connect().await?;
        let mut request = connection.request("GET", path);
        if let Some(token) = bearer_token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        connection.send(request.body(Full::default())?).await
    }

    /// One JSON POST on a new connection.
    pub async fn post_json(
        &self,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<Reply, ClientError> {
        let mut connection = self.connect().await?;
        let request = connection.json_post(path, body.into())?;
        connection.send(request).await
    }

    async fn tls_stream(
        &self,
        tls: &Tls,
        alpn: &[&[u8]],
    ) -> Result<tokio_rustls::client::TlsStream<TcpStream>, ClientError> {
        let provider = Arc::new(crypto_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone());
        let builder = match tls.version {
            Some(version) => builder.with_protocol_versions(&[version]),
            None => builder.with_safe_default_protocol_versions(),
        }
        .expect("the ring provider supports TLS 1.2 and 1.3");
        let mut config = match &tls.roots {
            Some(roots) => builder.with_root_certificates(roots.clone()),
            None => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider))),
        }
        .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
        let tcp = TcpStream::connect(self.addr).await?;
        Ok(TlsConnector::from(Arc::new(config))
            .connect(tls.server_name.clone(), tcp)
            .await?)
    }

    async fn handshake_http<S>(stream: S) -> Result<http1::SendRequest<Full<Bytes>>, ClientError>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let (sender, connection) = http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::debug!(error = %err, "client connection ended");
            }
        });
        Ok(sender)
    }
}

/// One open HTTP/1.1 connection; requests go one after another.
pub struct Connection {
    sender: http1::SendRequest<Full<Bytes>>,
    authority: String,
}

impl Connection {
    /// A request builder for `method path` with the Host header set.
    pub fn request(&self, method: &str, path: &str) -> http::request::Builder {
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, &self.authority)
    }

    /// A JSON POST to `path`.
    pub fn json_post(&self, path: &str, body: Bytes) -> Result<Request<Full<Bytes>>, ClientError> {
        Ok(self
            .request("POST", path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(body))?)
    }

    /// Sends `request` and reads the whole response.
    pub async fn send(&mut self, request: Request<Full<Bytes>>) -> Result<Reply, ClientError> {
        self.sender.ready().await?;
        let response = self.sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        Ok(Reply { status, body })
    }
}

/// The client's TLS implementation: *ring*'s, as the framework's servers use it. rustls
/// 0.23.48 deprecates it for lacking post-quantum key exchange, which tests of loopback
/// servers do not need.
#[allow(
    deprecated,
    reason = "ring, chosen above, has no post-quantum key exchange"
)]
fn crypto_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// Accepts any server certificate, still checking that the server holds its key.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

//! The manager: runs the registered controllers (only while leading, with
//! `--leader-elect`), the probe, metrics and webhook servers, and the graceful shutdown
//! on SIGTERM/SIGINT: stop taking work, let reconciles in flight finish, release the
//! lease, stop the servers.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt as _};
use kube::Client;
use rustls::server::ResolvesServerCert;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::certs::{CertError, CertPair, CertificateAuthority, LOCAL_CA_NAME};
use crate::controller::ControllerContext;
use crate::http::{self, FixedCertificate, ReloadingCertificate, TlsError};
use crate::leader::{self, LeaseSettings};
use crate::metrics::{Metrics, MetricsEndpoint};
use crate::options::{BindAddress, ManagerArgs};
use crate::probes::{self, Readiness};
use crate::webhook::{LoopbackRegistration, RegisteredWebhooks, Webhooks};

/// controller-runtime's lease duration (`LeaseDuration` 15 s, renewed with 5 s to spare,
/// as its `RenewDeadline` of 10 s).
const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
const DEFAULT_LEASE_GRACE: Duration = Duration::from_secs(5);

type StartController = Arc<dyn Fn(ControllerContext) -> BoxFuture<'static, ()> + Send + Sync>;

/// Why the manager could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    #[error("cannot listen for the {server} server on {address}: {source}")]
    Bind {
        server: &'static str,
        address: String,
        source: std::io::Error,
    },
    #[error("{server} server certificate: {source}")]
    Certificate {
        server: &'static str,
        source: TlsError,
    },
    #[error("cannot generate the self-signed metrics certificate: {0}")]
    SelfSigned(#[from] CertError),
    #[error("leader election is enabled but no lease name is set (--leader-election-id)")]
    NoLeaseName,
    #[error("invalid lease timing: {0}")]
    LeaseTiming(String),
    #[error("cannot register the webhooks: {0}")]
    RegisterWebhooks(#[source] kube::Error),
    #[error("cannot remove the webhook registrations: {0}")]
    RemoveWebhooks(#[source] kube::Error),
    #[error("the controllers stopped on their own before shutdown")]
    ControllersStopped,
}

/// Runs controllers and servers with controller-runtime's behaviour.
///
/// ```no_run
/// # async fn demo(client: kube::Client, args: kubebuilder_runtime::ManagerArgs) -> Result<(), kubebuilder_runtime::ManagerError> {
/// use kubebuilder_runtime::Manager;
///
/// Manager::new(client, args)
///     .leader_election_id("80807133.tutorial.kubebuilder.io")
///     .controller("cronjob", |ctx| async move {
///         // ctx.run(|scope| Controller::new(scope.api::<CronJob>(), ..), reconcile, data).await
///         ctx.stopped().await;
///     })
///     .run()
///     .await
/// # }
/// ```
pub struct Manager {
    client: Client,
    args: ManagerArgs,
    lease_name: Option<String>,
    lease_namespace: Option<String>,
    lease_duration: Duration,
    lease_grace: Duration,
    webhook_host: IpAddr,
    controllers: Vec<(String, StartController)>,
    webhooks: Webhooks,
    webhooks_enabled: bool,
    loopback_registration: Option<LoopbackRegistration>,
    /// Serves the webhooks instead of `--webhook-cert-path` (see
    /// [`Manager::serve_webhooks_on_loopback`]).
    loopback_serving_certificate: Option<CertPair>,
    metrics: Metrics,
}

impl Manager {
    /// A manager configured by `args`, talking to the apiserver through `client`.
    pub fn new(client: Client, args: ManagerArgs) -> Self {
        Self {
            client,
            args,
            lease_name: None,
            lease_namespace: None,
            lease_duration: DEFAULT_LEASE_DURATION,
            lease_grace: DEFAULT_LEASE_GRACE,
            webhook_host: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            controllers: Vec::new(),
            webhooks: Webhooks::new(),
            webhooks_enabled: webhooks_enabled(std::env::var("ENABLE_WEBHOOKS").ok().as_deref()),
            loopback_registration: None,
            loopback_serving_certificate: None,
            metrics: Metrics::new(),
        }
    }

    /// The lease name used when `--leader-election-id` is not given.
    #[must_use]
    pub fn leader_election_id(mut self, name: &str) -> Self {
        self.lease_name = Some(name.to_owned());
        self
    }

    /// The lease namespace used when `--leader-election-namespace` is not given
    /// (otherwise the client's default namespace: the pod's, or the kubeconfig's).
    #[must_use]
    pub fn leader_election_namespace(mut self, namespace: &str) -> Self {
        self.lease_namespace = Some(namespace.to_owned());
        self
    }

    /// How long the lease lasts after a renewal, and how long before its end the leader
    /// renews it (whole seconds, as Lease objects count).
    #[must_use]
    pub fn lease_timing(mut self, duration: Duration, renew_before_expiry: Duration) -> Self {
        self.lease_duration = duration;
        self.lease_grace = renew_before_expiry;
        self
    }

    /// The interface the webhook server listens on (all interfaces by default).
    #[must_use]
    pub fn webhook_host(mut self, host: IpAddr) -> Self {
        self.webhook_host = host;
        self
    }

    /// Registers a controller: `start` is called with a fresh [`ControllerContext`] each
    /// time the controllers start (at start-up, or on becoming leader) and must return
    /// once [`ControllerContext::stopped`] resolves and its work is finished; usually it
    /// calls [`ControllerContext::run`].
    ///
    /// # Panics
    /// When a controller of that name is already registered.
    #[must_use]
    pub fn controller<F, Fut>(mut self, name: &str, start: F) -> Self
    where
        F: Fn(ControllerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Names label metrics and readiness checks: two controllers may not share one.
        assert!(
            self.controllers
                .iter()
                .all(|(registered, _)| registered != name),
            "a controller named {name:?} is already registered"
        );
        let start: StartController = Arc::new(move |context| Box::pin(start(context)));
        self.controllers.push((name.to_owned(), start));
        self
    }

    /// Adds admission webhooks to serve on `--webhook-port` (unless `ENABLE_WEBHOOKS=false`):
    /// each kind's webhooks come with a call of their own, as kubebuilder's main registers
    /// each kind's webhooks with the manager.
    ///
    /// # Panics
    /// When two webhooks share a path.
    #[must_use]
    pub fn webhooks(mut self, webhooks: Webhooks) -> Self {
        self.webhooks = std::mem::take(&mut self.webhooks).merge(webhooks);
        self
    }

    /// Serves webhooks or not, overriding the `ENABLE_WEBHOOKS` environment variable.
    #[must_use]
    pub fn enable_webhooks(mut self, enabled: bool) -> Self {
        self.webhooks_enabled = enabled;
        self
    }

    /// Registers the served webhooks with the apiserver once the server listens, pointing
    /// at the loopback interface, and removes them at shutdown (local runs and tests).
    #[must_use]
    pub fn register_webhooks_on_loopback(mut self, registration: LoopbackRegistration) -> Self {
        self.loopback_registration = Some(registration);
        self
    }

    /// For a local control plane, where no cert-manager provides certificates: serves the
    /// webhooks with a certificate for the loopback interface generated in memory (not
    /// `--webhook-cert-path`), and registers them with the apiserver as configurations
    /// named `name` that trust its CA, removed at shutdown.
    pub fn serve_webhooks_on_loopback(mut self, name: &str) -> Result<Self, CertError> {
        let ca = CertificateAuthority::new(LOCAL_CA_NAME)?;
        self.loopback_serving_certificate = Some(ca.issue_loopback_server()?);
        Ok(self.register_webhooks_on_loopback(LoopbackRegistration::new(name, &ca.cert_pem())))
    }

    /// The metrics registry, to add metrics of your own.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Starts everything and runs until SIGTERM or SIGINT, then shuts down gracefully.
    pub async fn run(self) -> Result<(), ManagerError> {
        self.start().await?.run_until(shutdown_signal()).await
    }

    /// Binds the servers, starts them and the controllers (or the leader election), and
    /// returns at once. Everything that can be wrong with the configuration (addresses,
    /// certificates, lease settings) fails here, before anything runs.
    pub async fn start(self) -> Result<RunningManager, ManagerError> {
        let lease = self
            .args
            .leader_elect
            .then(|| self.lease_settings())
            .transpose()?;
        let probe_listener = bind("probe", &self.args.health_probe_bind_address).await?;
        let metrics_listener = bind("metrics", &self.args.metrics_bind_address).await?;
        let metrics_tls = match &metrics_listener {
            Some(_) if self.args.metrics_secure => Some(http::tls_acceptor(
                metrics_certificate(&self.args)?,
                self.args.enable_http2,
            )),
            _ => None,
        };
        let serve_webhooks = !self.webhooks.is_empty() && self.webhooks_enabled;
        if !self.webhooks.is_empty() && !self.webhooks_enabled {
            tracing::info!("webhooks disabled by ENABLE_WEBHOOKS=false");
        }
        let webhook_server = if serve_webhooks {
            let address =
                BindAddress::from(SocketAddr::new(self.webhook_host, self.args.webhook_port));
            let listener = bind("webhook", &address)
                .await?
                .expect("a host:port is never disabled");
            let certificate = match &self.loopback_serving_certificate {
                Some(pair) => fixed_certificate("webhook", pair)?,
                None => webhook_certificate(&self.args)?,
            };
            let tls = http::tls_acceptor(certificate, self.args.enable_http2);
            Some((listener, tls))
        } else {
            None
        };

        let servers_stop = CancellationToken::new();
        let readiness = Readiness::default();
        let mut servers = Vec::new();
        let probe_addr = probe_listener.map(|listener| {
            let addr = local_addr(&listener);
            let readiness = readiness.clone();
            let handler = move |request| probes::handle(readiness.clone(), request);
            servers.push(tokio::spawn(http::serve(
                listener,
                None,
                false,
                handler,
                servers_stop.clone(),
            )));
            tracing::info!(%addr, "serving health probes");
            addr
        });
        let metrics_addr = metrics_listener.map(|listener| {
            let addr = local_addr(&listener);
            let endpoint = MetricsEndpoint {
                metrics: self.metrics.clone(),
                auth: self.args.metrics_secure.then(|| self.client.clone()),
            };
            let handler = move |request| {
                let endpoint = endpoint.clone();
                async move { endpoint.handle(request).await }
            };
            let enable_http2 = self.args.enable_http2;
            servers.push(tokio::spawn(http::serve(
                listener,
                metrics_tls,
                enable_http2,
                handler,
                servers_stop.clone(),
            )));
            tracing::info!(%addr, secure = self.args.metrics_secure, "serving metrics");
            addr
        });
        let webhook_addr = webhook_server.map(|(listener, tls)| {
            let addr = local_addr(&listener);
            let webhooks = Arc::new(self.webhooks.clone());
            let handler = move |request| {
                let webhooks = webhooks.clone();
                async move { webhooks.handle(request).await }
            };
            let enable_http2 = self.args.enable_http2;
            servers.push(tokio::spawn(http::serve(
                listener,
                Some(tls),
                enable_http2,
                handler,
                servers_stop.clone(),
            )));
            tracing::info!(%addr, "serving webhooks");
            addr
        });
        let registered = match (&self.loopback_registration, webhook_addr) {
            (Some(registration), Some(addr)) => {
                let installed = registration
                    .install(&self.client, self.webhooks.declarations(), addr.port())
                    .await;
                match installed {
                    Ok(installed) => Some(installed),
                    Err(err) => {
                        servers_stop.cancel();
                        return Err(ManagerError::RegisterWebhooks(err));
                    }
                }
            }
            _ => None,
        };

        let shutdown = CancellationToken::new();
        let (leading_tx, leading) = watch::channel(false);
        let controllers = Controllers {
            client: self.client.clone(),
            namespaces: self.args.namespaces.clone().into(),
            entries: self.controllers,
            readiness,
            metrics: self.metrics.clone(),
        };
        let work = match lease {
            Some(settings) => {
                let client = self.client.clone();
                let metrics = self.metrics.clone();
                let shutdown = shutdown.clone();
                tokio::spawn(async move {
                    leader::campaign(client, settings, metrics, leading_tx, shutdown, |stop| {
                        controllers.run(stop)
                    })
                    .await
                    .map_err(|_| ManagerError::ControllersStopped)
                })
            }
            None => {
                leading_tx.send_replace(true);
                let shutdown = shutdown.clone();
                tokio::spawn(async move {
                    controllers.run(shutdown.child_token()).await;
                    if shutdown.is_cancelled() {
                        Ok(())
                    } else {
                        Err(ManagerError::ControllersStopped)
                    }
                })
            }
        };

        Ok(RunningManager {
            probe_addr,
            metrics_addr,
            webhook_addr,
            leading,
            shutdown,
            servers_stop,
            work,
            servers,
            registered,
        })
    }

    /// The lease from the flags, else the builder's settings, else the client's namespace.
    fn lease_settings(&self) -> Result<LeaseSettings, ManagerError> {
        let settings = LeaseSettings {
            name: self
                .args
                .leader_election_id
                .clone()
                .or_else(|| self.lease_name.clone())
                .ok_or(ManagerError::NoLeaseName)?,
            namespace: self
                .args
                .leader_election_namespace
                .clone()
                .or_else(|| self.lease_namespace.clone())
                .unwrap_or_else(|| self.client.default_namespace().to_owned()),
            identity: leader::identity(),
            duration_seconds: self.lease_duration.as_secs(),
            grace_seconds: self.lease_grace.as_secs(),
        };
        check_lease_timing(&settings)?;
        Ok(settings)
    }
}

/// A started manager.
pub struct RunningManager {
    probe_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    webhook_addr: Option<SocketAddr>,
    leading: watch::Receiver<bool>,
    shutdown: CancellationToken,
    servers_stop: CancellationToken,
    work: JoinHandle<Result<(), ManagerError>>,
    servers: Vec<JoinHandle<()>>,
    registered: Option<RegisteredWebhooks>,
}

impl RunningManager {
    /// Where the probes are served (`None` when disabled).
    pub fn probe_addr(&self) -> Option<SocketAddr> {
        self.probe_addr
    }

    /// Where the metrics are served (`None` when disabled).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Where the webhooks are served (`None` when there are none or they are disabled).
    pub fn webhook_addr(&self) -> Option<SocketAddr> {
        self.webhook_addr
    }

    /// Whether the controllers run here: always without leader election, else while
    /// this replica holds the lease. Watch it for changes.
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Runs until `signal` resolves (or the controllers stop on their own), then shuts
    /// down gracefully.
    pub async fn run_until(mut self, signal: impl Future<Output = ()>) -> Result<(), ManagerError> {
        let stopped_early = tokio::select! {
            () = signal => None,
            result = &mut self.work => Some(result),
        };
        match stopped_early {
            None => self.shutdown().await,
            Some(result) => {
                let result = result.unwrap_or(Err(ManagerError::ControllersStopped));
                tracing::error!("controllers stopped on their own; shutting down");
                let cleanup = self.stop_servers().await;
                result.and(cleanup)
            }
        }
    }

    /// Stops taking work, waits for the reconciles in flight, releases the leader lease,
    /// removes loopback webhook registrations and stops the servers.
    pub async fn shutdown(mut self) -> Result<(), ManagerError> {
        tracing::info!("shutting down: waiting for reconciles in flight");
        self.shutdown.cancel();
        let work = (&mut self.work)
            .await
            .unwrap_or(Err(ManagerError::ControllersStopped));
        let cleanup = self.stop_servers().await;
        tracing::info!("manager stopped");
        work.and(cleanup)
    }

    /// Stops everything at once, as a crash would: no draining, no lease release, no
    /// removal of webhook registrations.
    pub fn abort(self) {
        self.work.abort();
        for server in &self.servers {
            server.abort();
        }
    }

    async fn stop_servers(&mut self) -> Result<(), ManagerError> {
        // Unregister first: the apiserver must stop calling before the server goes away.
        let removed = match self.registered.take() {
            Some(registered) => registered
                .remove()
                .await
                .map_err(ManagerError::RemoveWebhooks),
            None => Ok(()),
        };
        self.servers_stop.cancel();
        for server in self.servers.drain(..) {
            let _ = server.await;
        }
        removed
    }
}

/// The registered controllers and what they share.
struct Controllers {
    client: Client,
    namespaces: Arc<[String]>,
    entries: Vec<(String, StartController)>,
    readiness: Readiness,
    metrics: Metrics,
}

impl Controllers {
    /// Starts every controller and returns when all have stopped: after `stop`, or
    /// after one of them stops on its own (which stops the others: a manager with a
    /// dead controller must not look healthy).
    async fn run(&self, stop: CancellationToken) {
        if self.entries.is_empty() {
            stop.cancelled().await;
            return;
        }
        let mut running: FuturesUnordered<_> = self
            .entries
            .iter()
            .map(|(name, start)| {
                let context = ControllerContext {
                    name: name.clone(),
                    client: self.client.clone(),
                    namespaces: self.namespaces.clone(),
                    stop: stop.clone(),
                    readiness: self.readiness.register(name),
                    metrics: self.metrics.controller(name),
                };
                let name = name.clone();
                let started = start(context);
                async move {
                    started.await;
                    name
                }
            })
            .collect();
        while let Some(name) = running.next().await {
            if !stop.is_cancelled() {
                tracing::error!(controller = %name, "controller stopped on its own; stopping the others");
                stop.cancel();
            }
        }
    }
}

/// `ENABLE_WEBHOOKS=false` turns the webhook server off, as in kubebuilder's main.
fn webhooks_enabled(value: Option<&str>) -> bool {
    value != Some("false")
}

fn check_lease_timing(settings: &LeaseSettings) -> Result<(), ManagerError> {
    if settings.grace_seconds == 0 || settings.grace_seconds >= settings.duration_seconds {
        return Err(ManagerError::LeaseTiming(format!(
            "renew {}s before expiry of a {}s lease: need 0 < renewal < duration, in whole seconds",
            settings.grace_seconds, settings.duration_seconds
        )));
    }
    Ok(())
}

async fn bind(
    server: &'static str,
    address: &BindAddress,
) -> Result<Option<TcpListener>, ManagerError> {
    let bind_error = |source| ManagerError::Bind {
        server,
        address: address.to_string(),
        source,
    };
    let Some(addr) = address.resolve().await.map_err(bind_error)? else {
        return Ok(None);
    };
    TcpListener::bind(addr).await.map(Some).map_err(bind_error)
}

fn local_addr(listener: &TcpListener) -> SocketAddr {
    listener
        .local_addr()
        .expect("a bound TCP listener has an address")
}

/// The metrics certificate from `--metrics-cert-path`, else a self-signed one.
fn metrics_certificate(args: &ManagerArgs) -> Result<Arc<dyn ResolvesServerCert>, ManagerError> {
    let Some(dir) = &args.metrics_cert_path else {
        tracing::info!("no --metrics-cert-path: serving metrics with a self-signed certificate");
        let ca = CertificateAuthority::new("metrics-self-signed")?;
        let pair = ca.issue_server(&["localhost"], &[IpAddr::V4(Ipv4Addr::LOCALHOST)])?;
        return fixed_certificate("metrics", &pair);
    };
    reloading(
        "metrics",
        dir,
        &args.metrics_cert_name,
        &args.metrics_cert_key,
    )
}

/// The webhook certificate from `--webhook-cert-path`, or controller-runtime's default
/// directory `<tmp>/k8s-webhook-server/serving-certs`.
fn webhook_certificate(args: &ManagerArgs) -> Result<Arc<dyn ResolvesServerCert>, ManagerError> {
    let dir = args.webhook_cert_path.clone().unwrap_or_else(|| {
        std::env::temp_dir()
            .join("k8s-webhook-server")
            .join("serving-certs")
    });
    reloading(
        "webhook",
        &dir,
        &args.webhook_cert_name,
        &args.webhook_cert_key,
    )
}

fn fixed_certificate(
    server: &'static str,
    pair: &CertPair,
) -> Result<Arc<dyn ResolvesServerCert>, ManagerError> {
    let certificate = FixedCertificate::from_pem(pair)
        .map_err(|source| ManagerError::Certificate { server, source })?;
    Ok(Arc::new(certificate))
}

fn reloading(
    server: &'static str,
    dir: &Path,
    cert: &str,
    key: &str,
) -> Result<Arc<dyn ResolvesServerCert>, ManagerError> {
    let certificate = ReloadingCertificate::load(dir.join(cert), dir.join(key))
        .map_err(|source| ManagerError::Certificate { server, source })?;
    Ok(Arc::new(certificate))
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate =
        signal(SignalKind::terminate()).expect("cannot install the SIGTERM handler");
    let mut interrupt = signal(SignalKind::interrupt()).expect("cannot install the SIGINT handler");
    let received = tokio::select! {
        _ = terminate.recv() => "SIGTERM",
        _ = interrupt.recv() => "SIGINT",
    };
    tracing::info!(signal = received, "shutdown requested");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_literal_false_disables_webhooks() {
        assert!(webhooks_enabled(None));
        assert!(webhooks_enabled(Some("true")));
        assert!(webhooks_enabled(Some("")));
        assert!(!webhooks_enabled(Some("false")));
    }

    #[tokio::test]
    #[should_panic(expected = "a controller named \"twice\" is already registered")]
    async fn controller_names_are_unique() {
        let config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
        let client = Client::try_from(config).unwrap();
        let _ = Manager::new(client, ManagerArgs::default())
            .controller("twice", |_| async {})
            .controller("twice", |_| async {});
    }

    #[test]
    fn lease_timing_must_leave_room_to_renew() {
        let settings = |duration_seconds, grace_seconds| LeaseSettings {
            name: "lease".into(),
            namespace: "default".into(),
            identity: "me".into(),
            duration_seconds,
            grace_seconds,
        };
        assert!(check_lease_timing(&settings(15, 5)).is_ok());
        assert!(check_lease_timing(&settings(5, 5)).is_err());
        assert!(check_lease_timing(&settings(5, 0)).is_err());
    }
}

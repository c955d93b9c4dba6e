//! The manager: runs the registered controllers (only while leading, with
//! `--leader-elect`), the probe, metrics and webhook servers, and the graceful shutdown
//! on SIGTERM/SIGINT: stop taking work, let reconciles in flight finish, release the
//! lease, stop the servers.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt as _};
use kube::Client;
use kube::api::{DynamicObject, GroupVersionKind};
use rustls::server::ResolvesServerCert;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::backoff::RateLimiter;
use crate::builder::Builder;
use crate::cache::{Cache, CachedKind, ManagedFields};
use crate::certs::{CertError, CertPair, CertificateAuthority, LOCAL_CA_NAME};
use crate::controller::{ControllerContext, DEFAULT_MAX_CONCURRENT_RECONCILES};
use crate::events::{Recorder, Reporter};
use crate::healthz::{self, CheckResult, Probes};
use crate::http::{self, FixedCertificate, ReloadingCertificate, TlsError};
use crate::leader::{self, Campaign, Fence, LeaseSettings, LeaseTiming};
use crate::metrics::{Metrics, MetricsEndpoint};
use crate::options::{BindAddress, ManagerArgs};
use crate::rest_client;
use crate::webhook::{LoopbackRegistration, RegisteredWebhooks, Webhooks};

/// The loopback webhook configurations' name when the manager has no leader-election id
/// to name them after.
const DEFAULT_LOOPBACK_WEBHOOKS_NAME: &str = "manager-loopback-webhooks";

type StartController = Arc<dyn Fn(ControllerContext) -> BoxFuture<'static, ()> + Send + Sync>;

/// controller-runtime's `GracefulShutdownTimeout` default.
const DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a runnable failed; the manager stops.
pub type RunnableError = Box<dyn std::error::Error + Send + Sync>;

type StartRunnable =
    Arc<dyn Fn(CancellationToken) -> BoxFuture<'static, Result<(), RunnableError>> + Send + Sync>;

/// Whether a runnable added with [`Manager::add`], or a controller
/// ([`Builder::need_leader_election`]), runs only on the leader (controller-runtime's
/// `LeaderElectionRunnable` and `controller.Options.NeedLeaderElection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeedLeaderElection {
    /// Only while this replica leads (always, without `--leader-elect`), started again
    /// each leadership term, like the controllers.
    Yes,
    /// On every replica, from start to shutdown.
    No,
}

/// Why the manager could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// A server cannot listen on its address (in use, say).
    #[error("cannot listen for the {server} server on {address}: {source}")]
    Bind {
        /// `probe`, `metrics` or `webhook`.
        server: &'static str,
        /// `--health-probe-bind-address`, `--metrics-bind-address`, or the webhook host
        /// with `--webhook-port`.
        address: String,
        /// Why the address cannot be bound.
        source: std::io::Error,
    },
    /// A server's certificate cannot be loaded (`--metrics-cert-path`,
    /// `--webhook-cert-path`) or used.
    #[error("{server} server certificate: {source}")]
    Certificate {
        /// `metrics` or `webhook`.
        server: &'static str,
        /// What is wrong with the files or the PEM.
        source: TlsError,
    },
    /// A self-signed certificate cannot be made: the metrics server's without
    /// `--metrics-cert-path`, or the webhook server's on loopback.
    #[error("cannot generate the self-signed metrics certificate: {0}")]
    SelfSigned(#[from] CertError),
    /// `--leader-elect` without a lease name: neither `--leader-election-id` nor
    /// [`Manager::leader_election_id`] gives one.
    #[error("leader election is enabled but no lease name is set (--leader-election-id)")]
    NoLeaseName,
    /// The `--leader-elect-*` durations cannot work together; the message says why.
    #[error("invalid lease timing: {0}")]
    LeaseTiming(String),
    /// The loopback webhook configurations cannot be created
    /// ([`Manager::serve_webhooks_on_loopback`], `--register-webhooks-on-loopback`).
    #[error("cannot register the webhooks: {0}")]
    RegisterWebhooks(#[source] kube::Error),
    /// The loopback webhook configurations cannot be deleted at shutdown.
    #[error("cannot remove the webhook registrations: {0}")]
    RemoveWebhooks(#[source] kube::Error),
    /// The reconciles or runnables in flight did not finish within the graceful-shutdown
    /// timeout ([`Manager::graceful_shutdown_timeout`]); they were abandoned.
    #[error("the reconciles and runnables in flight did not finish within {0:?} of shutdown")]
    ShutdownTimedOut(Duration),
    /// The controllers ended on their own (or their task panicked) before shutdown was
    /// asked for.
    #[error("the controllers stopped on their own before shutdown")]
    ControllersStopped,
    /// A runnable added with [`Manager::add`] returned an error, or a controller could not
    /// start (its kind not served); the message says which.
    #[error("a runnable failed: {0}")]
    RunnableFailed(String),
    /// [`Manager::from_config`] cannot make a client of the config.
    #[error("cannot connect to the apiserver: {0}")]
    Connect(#[source] kube::Error),
}

/// Runs controllers and servers with controller-runtime's behaviour.
///
/// ```no_run
/// # async fn demo(client: kube::Client, args: kubebuilder_runtime::ManagerArgs) -> Result<(), kubebuilder_runtime::ManagerError> {
/// use kubebuilder_runtime::Manager;
///
/// Manager::new(client, args)
///     .leader_election_id("80807133.tutorial.kubebuilder.io")
///     // .controller_for::<CronJob>().owns::<Job>().complete(reconciler)
///     .run()
///     .await
/// # }
/// ```
pub struct Manager {
    /// What the servers, the leader election and the runnables of every replica use.
    unfenced_client: Client,
    /// Whether the controllers may write (open while this replica leads).
    fence: Fence,
    /// `unfenced_client`, fenced with `--leader-elect`: what controllers write through.
    client: Client,
    args: ManagerArgs,
    lease_name: Option<String>,
    lease_namespace: Option<String>,
    webhook_host: IpAddr,
    controllers: Vec<(String, NeedLeaderElection, StartController)>,
    graceful_shutdown_timeout: Option<Duration>,
    runnables: Vec<(NeedLeaderElection, StartRunnable)>,
    probes: Probes,
    webhooks: Webhooks,
    webhooks_enabled: bool,
    loopback_registration: Option<LoopbackRegistration>,
    metrics: Metrics,
    cache: Cache,
}

impl Manager {
    /// A manager configured by `args`, talking to the apiserver through `client` (rate
    /// limited by `--kube-api-qps`, measured in `rest_client_*`; those metrics' `host`
    /// label is empty: [`Manager::from_config`] knows the apiserver's address).
    pub fn new(client: Client, args: ManagerArgs) -> Self {
        Self::connected(client, "", args)
    }

    /// A manager configured by `args`, connecting to the apiserver of `config` (what
    /// `kube::Config::infer` finds: the kubeconfig, or the pod's service account).
    pub fn from_config(config: kube::Config, args: ManagerArgs) -> Result<Self, ManagerError> {
        let host = config
            .cluster_url
            .authority()
            .map(ToString::to_string)
            .unwrap_or_default();
        let client = Client::try_from(config).map_err(ManagerError::Connect)?;
        Ok(Self::connected(client, &host, args))
    }

    fn connected(client: Client, host: &str, args: ManagerArgs) -> Self {
        let metrics = Metrics::new();
        let client = rest_client::instrument(
            client,
            host,
            args.kube_api_qps,
            args.kube_api_burst,
            metrics.clone(),
        );
        let cache = Cache::new(
            client.clone(),
            args.namespaces.clone().into(),
            ManagedFields::kept_if(args.cache_keep_managed_fields),
        );
        let fence = Fence::default();
        let fenced = if args.leader_elect {
            fence.guard(client.clone())
        } else {
            client.clone()
        };
        Self {
            unfenced_client: client,
            fence,
            client: fenced,
            args,
            lease_name: None,
            lease_namespace: None,
            webhook_host: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            controllers: Vec::new(),
            graceful_shutdown_timeout: Some(DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT),
            runnables: Vec::new(),
            probes: Probes::default(),
            webhooks: Webhooks::new(),
            webhooks_enabled: webhooks_enabled(std::env::var("ENABLE_WEBHOOKS").ok().as_deref()),
            loopback_registration: None,
            metrics,
            cache,
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

    /// The interface the webhook server listens on: all interfaces by default (in a pod,
    /// the webhook Service reaches the pod IP), 127.0.0.1 whatever this says when serving
    /// on loopback ([`Manager::serve_webhooks_on_loopback`]).
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
    pub fn controller<F, Fut>(self, name: &str, start: F) -> Self
    where
        F: Fn(ControllerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.controller_needing(name, NeedLeaderElection::Yes, start)
    }

    /// [`Manager::controller`], on the leader only or on every replica as `needs` says;
    /// one that runs on every replica writes through [`Manager::unfenced_client`].
    pub(crate) fn controller_needing<F, Fut>(
        mut self,
        name: &str,
        needs: NeedLeaderElection,
        start: F,
    ) -> Self
    where
        F: Fn(ControllerContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Names label metrics and readiness checks: two controllers may not share one.
        assert!(
            self.controllers
                .iter()
                .all(|(registered, _, _)| registered != name),
            "a controller named {name:?} is already registered"
        );
        let start: StartController = Arc::new(move |context| Box::pin(start(context)));
        self.controllers.push((name.to_owned(), needs, start));
        self
    }

    /// Starts a controller of kind `K` (controller-runtime's
    /// `ctrl.NewControllerManagedBy(mgr).For(&K{})`): name its owned and watched kinds and
    /// its filters, then register it with [`Builder::complete`].
    pub fn controller_for<K: CachedKind>(self) -> Builder<K> {
        Builder::new(self)
    }

    /// Starts a controller of a kind known only at run time, by its group, version and
    /// kind (a CRD with no Rust type: controller-runtime's `For(&unstructured.Unstructured{})`
    /// with the kind set); its reconciler gets `DynamicObject`s. The apiserver's discovery
    /// is asked for the kind when the controller starts: a kind it does not serve stops the
    /// manager with an error naming it.
    pub fn controller_for_dynamic(self, kind: &GroupVersionKind) -> Builder<DynamicObject> {
        Builder::dynamic(self, kind)
    }

    /// A recorder of Events about objects, reported as the controller `name`
    /// (controller-runtime's `mgr.GetEventRecorderFor(name)`); it writes through
    /// [`Manager::client`], on the leader only with `--leader-elect`.
    pub fn event_recorder(&self, name: &str) -> Recorder {
        Recorder::new(self.client.clone(), Reporter::from(name))
    }

    /// How long a shutdown waits for the reconciles and runnables in flight before it
    /// gives up on them and fails with [`ManagerError::ShutdownTimedOut`]
    /// (controller-runtime's `GracefulShutdownTimeout`): 30 s by default, as there;
    /// `None` waits as long as they take.
    #[must_use]
    pub fn graceful_shutdown_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.graceful_shutdown_timeout = timeout;
        self
    }

    /// Adds a runnable (controller-runtime's `mgr.Add`): `task` is called with a token
    /// that is cancelled when it must stop, and must return then. With
    /// [`NeedLeaderElection::Yes`] it runs only on the leader and starts again each
    /// leadership term; with [`NeedLeaderElection::No`] it runs on every replica from
    /// start to shutdown. A runnable that returns early is done; one that fails stops the
    /// manager.
    #[must_use]
    pub fn add<F, Fut>(mut self, task: F, needs: NeedLeaderElection) -> Self
    where
        F: Fn(CancellationToken) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), RunnableError>> + Send + 'static,
    {
        let start: StartRunnable = Arc::new(move |stop| Box::pin(task(stop)));
        self.runnables.push((needs, start));
        self
    }

    /// Adds a liveness check, shown on `/healthz` and `/healthz/<name>`
    /// (controller-runtime's `AddHealthzCheck`; [`healthz::ping`] is `healthz.Ping`).
    ///
    /// # Panics
    /// When a liveness check of that name exists.
    #[must_use]
    pub fn add_healthz_check<F, Fut>(self, name: &str, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CheckResult> + Send + 'static,
    {
        self.probes.healthz.add(name, check);
        self
    }

    /// Adds a readiness check, shown on `/readyz` and `/readyz/<name>` beside the
    /// controllers' cache checks (controller-runtime's `AddReadyzCheck`).
    ///
    /// # Panics
    /// When a readiness check (or a controller) of that name exists.
    #[must_use]
    pub fn add_readyz_check<F, Fut>(self, name: &str, check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CheckResult> + Send + 'static,
    {
        self.probes.readyz.add(name, check);
        self
    }

    /// Adds admission webhooks to serve on `--webhook-port` (unless `ENABLE_WEBHOOKS=false`
    /// or `--webhook-port=-1`):
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

    /// Serves the conversion between the versions of kind `Hub` (its storage version) at
    /// `/convert` ([`Webhooks::conversion`]), as the hub's webhook setup registers it in
    /// kubebuilder's main.
    ///
    /// # Panics
    /// When no version names `Hub` with `hub =`.
    #[must_use]
    pub fn conversion<Hub: kubebuilder::crd::CustomResource>(self) -> Self {
        self.webhooks(Webhooks::new().conversion::<Hub>())
    }

    /// Serves webhooks or not, overriding the `ENABLE_WEBHOOKS` environment variable.
    #[must_use]
    pub fn enable_webhooks(mut self, enabled: bool) -> Self {
        self.webhooks_enabled = enabled;
        self
    }

    /// For a local control plane, where no cert-manager provides certificates: serves the
    /// webhooks with a certificate for the loopback interface generated in memory (not
    /// `--webhook-cert-path`), registers them with the apiserver once the server listens
    /// as `registration` says, trusting that certificate's CA, and removes them at
    /// shutdown. `--register-webhooks-on-loopback` does this with configurations named
    /// after the leader-election id.
    #[must_use]
    pub fn serve_webhooks_on_loopback(mut self, registration: LoopbackRegistration) -> Self {
        self.loopback_registration = Some(registration);
        self
    }

    /// The client reconcilers write through (controller-runtime's `mgr.GetClient()`, which
    /// calls the apiserver: cached reads go through [`Manager::cache`]): rate-limited and
    /// measured, and with `--leader-elect` fenced. Its writes are refused while this replica
    /// cannot prove that it holds the lease, so that a reconciler built with it never writes
    /// after its leadership is lost (another replica leads by then). A runnable that runs on
    /// every replica ([`NeedLeaderElection::No`]) writes through
    /// [`Manager::unfenced_client`].
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The client without the leader's fence: for runnables that run on every replica and
    /// write whether or not it leads.
    pub fn unfenced_client(&self) -> &Client {
        &self.unfenced_client
    }

    /// The manager's shared cache, to register field indexes and transforms while setting
    /// up (controller-runtime's `mgr.GetCache()` / `mgr.GetFieldIndexer()`).
    pub fn cache(&self) -> &Cache {
        &self.cache
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
    pub async fn start(mut self) -> Result<RunningManager, ManagerError> {
        let lease = self
            .args
            .leader_elect
            .then(|| self.lease_settings())
            .transpose()?;
        let servers = self.start_servers().await?;
        let shutdown = CancellationToken::new();
        let failure = Failure {
            error: Arc::default(),
            shutdown: shutdown.clone(),
        };
        let (leading_tx, leading) = watch::channel(false);
        let (always, elected): (Vec<_>, Vec<_>) = std::mem::take(&mut self.runnables)
            .into_iter()
            .partition(|(needs, _)| *needs == NeedLeaderElection::No);
        let (unelected, controllers): (Vec<_>, Vec<_>) = std::mem::take(&mut self.controllers)
            .into_iter()
            .partition(|(_, needs, _)| *needs == NeedLeaderElection::No);
        // With leader election, the controllers write only while this replica can prove it
        // leads; servers, runnables and controllers that run on every replica keep the
        // plain client.
        let fence = self.fence.clone();
        let controllers = self
            .controllers_of(controllers, self.client.clone(), &failure)
            .with_runnables(elected.into_iter().map(|(_, start)| start).collect());
        let unelected = self.controllers_of(unelected, self.unfenced_client.clone(), &failure);
        let elected = {
            let shutdown = shutdown.clone();
            let client = self.unfenced_client.clone();
            let metrics = self.metrics.clone();
            stop_all_when_stopped(shutdown.clone(), async move {
                let Some(settings) = lease else {
                    leading_tx.send_replace(true);
                    controllers.run(shutdown.child_token()).await;
                    return ok_if_cancelled(&shutdown);
                };
                let campaign = Campaign {
                    client,
                    settings,
                    metrics,
                    fence,
                    leading: leading_tx,
                    shutdown,
                };
                campaign
                    .run(|stop| controllers.run(stop))
                    .await
                    .map_err(|_| ManagerError::ControllersStopped)
            })
        };
        let always = run_runnables(
            always.into_iter().map(|(_, start)| start).collect(),
            shutdown.child_token(),
            failure.clone(),
        );
        let unelected = {
            let shutdown = shutdown.clone();
            stop_all_when_stopped(shutdown.clone(), async move {
                unelected.run(shutdown.child_token()).await;
                ok_if_cancelled(&shutdown)
            })
        };
        let cache = self.cache.clone();
        let work = tokio::spawn(async move {
            let (elected, (), unelected) = futures::future::join3(elected, always, unelected).await;
            cache.stop();
            failure.result().and(elected).and(unelected)
        });
        Ok(RunningManager {
            graceful_shutdown_timeout: self.graceful_shutdown_timeout,
            probe_addr: servers.probe_addr,
            metrics_addr: servers.metrics_addr,
            webhook_addr: servers.webhook_addr,
            leading,
            shutdown,
            servers_stop: servers.stop,
            work,
            servers: servers.tasks,
            registered: servers.registered,
        })
    }

    /// The controllers `entries`, writing through `client`.
    fn controllers_of(
        &self,
        entries: Vec<(String, NeedLeaderElection, StartController)>,
        client: Client,
        failure: &Failure,
    ) -> Controllers {
        Controllers {
            client,
            cache: self.cache.clone(),
            namespaces: self.args.namespaces.clone().into(),
            entries: entries
                .into_iter()
                .map(|(name, _, start)| (name, start))
                .collect(),
            runnables: Vec::new(),
            probes: self.probes.clone(),
            metrics: self.metrics.clone(),
            failure: failure.clone(),
        }
    }

    /// Binds and starts the probe, metrics and webhook servers, and registers loopback
    /// webhooks.
    async fn start_servers(&self) -> Result<Servers, ManagerError> {
        let probe_listener = bind("probe", &self.args.health_probe_bind_address).await?;
        let metrics_listener = bind("metrics", &self.args.metrics_bind_address).await?;
        let metrics_tls = match &metrics_listener {
            Some(_) if self.args.metrics_secure => Some(http::tls_acceptor(
                metrics_certificate(&self.args)?,
                self.args.enable_http2,
            )),
            _ => None,
        };
        let webhook_server = self.bind_webhooks().await?;

        let mut servers = Servers {
            stop: CancellationToken::new(),
            tasks: Vec::new(),
            probe_addr: None,
            metrics_addr: None,
            webhook_addr: None,
            registered: None,
        };
        servers.metrics_addr = metrics_listener.map(|listener| {
            let endpoint = MetricsEndpoint {
                metrics: self.metrics.clone(),
                auth: self
                    .args
                    .metrics_secure
                    .then(|| self.unfenced_client.clone()),
            };
            let handler = move |request| {
                let endpoint = endpoint.clone();
                async move { endpoint.handle(request).await }
            };
            servers.serve(
                "metrics",
                listener,
                metrics_tls,
                self.args.enable_http2,
                handler,
            )
        });
        if let Some(webhook_server) = webhook_server {
            self.serve_webhooks(&mut servers, webhook_server).await?;
        }
        // Last: a manager is not ready before its loopback webhooks are registered.
        servers.probe_addr = probe_listener.map(|listener| {
            let probes = self.probes.clone();
            let handler = move |request| healthz::handle(probes.clone(), request);
            servers.serve("health probes", listener, None, false, handler)
        });
        Ok(servers)
    }

    /// Serves the webhooks and registers them on loopback when asked to.
    async fn serve_webhooks(
        &self,
        servers: &mut Servers,
        (listener, tls, loopback): WebhookServer,
    ) -> Result<(), ManagerError> {
        let webhooks = Arc::new(self.webhooks.clone().with_metrics(self.metrics.clone()));
        let handler = move |request| {
            let webhooks = webhooks.clone();
            async move { webhooks.handle(request).await }
        };
        let addr = servers.serve(
            "webhooks",
            listener,
            Some(tls),
            self.args.enable_http2,
            handler,
        );
        servers.webhook_addr = Some(addr);
        if let Some((registration, ca_pem)) = loopback {
            let installed = registration
                .install(&self.unfenced_client, &self.webhooks, addr.port(), &ca_pem)
                .await;
            match installed {
                Ok(installed) => servers.registered = Some(installed),
                Err(err) => {
                    servers.stop.cancel();
                    return Err(ManagerError::RegisterWebhooks(err));
                }
            }
        }
        Ok(())
    }

    /// The webhook server's listener and TLS, unless there are no webhooks or they are
    /// disabled; with the loopback registration and its CA when serving on loopback.
    async fn bind_webhooks(&self) -> Result<Option<WebhookServer>, ManagerError> {
        if self.webhooks.is_empty() {
            return Ok(None);
        }
        if !self.webhooks_enabled {
            tracing::info!("webhooks disabled by ENABLE_WEBHOOKS=false");
            return Ok(None);
        }
        let Ok(port) = u16::try_from(self.args.webhook_port) else {
            tracing::info!("webhook server disabled by --webhook-port=-1");
            return Ok(None);
        };
        let registration = self.loopback_registration();
        // Webhooks registered on loopback are called at 127.0.0.1 only: listen nowhere else.
        let host = if registration.is_some() {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        } else {
            self.webhook_host
        };
        let address = BindAddress::from(SocketAddr::new(host, port));
        let listener = bind("webhook", &address)
            .await?
            .expect("a host:port is never disabled");
        let (certificate, loopback) = match registration {
            Some(registration) => {
                let ca = CertificateAuthority::new(LOCAL_CA_NAME)?;
                let pair = ca.issue_loopback_server()?;
                (
                    fixed_certificate("webhook", &pair)?,
                    Some((registration, ca.cert_pem())),
                )
            }
            None => (webhook_certificate(&self.args)?, None),
        };
        let tls = http::tls_acceptor(certificate, self.args.enable_http2);
        Ok(Some((listener, tls, loopback)))
    }

    /// The loopback registration: the builder's, else `--register-webhooks-on-loopback`'s.
    fn loopback_registration(&self) -> Option<LoopbackRegistration> {
        self.loopback_registration.clone().or_else(|| {
            self.args.register_webhooks_on_loopback.then(|| {
                let name = match &self.lease_name {
                    Some(lease) => format!("{lease}-loopback-webhooks"),
                    None => DEFAULT_LOOPBACK_WEBHOOKS_NAME.to_owned(),
                };
                LoopbackRegistration::new(&name)
            })
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
                .unwrap_or_else(|| self.unfenced_client.default_namespace().to_owned()),
            identity: leader::identity(),
            timing: LeaseTiming {
                lease_duration: self.args.leader_elect_lease_duration,
                renew_deadline: self.args.leader_elect_renew_deadline,
                retry_period: self.args.leader_elect_retry_period,
            },
        };
        settings.timing.check().map_err(ManagerError::LeaseTiming)?;
        Ok(settings)
    }
}

/// A bound webhook server: its listener, TLS, and the loopback registration with its CA.
type WebhookServer = (
    TcpListener,
    tokio_rustls::TlsAcceptor,
    Option<(LoopbackRegistration, String)>,
);

/// The started servers.
struct Servers {
    stop: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
    probe_addr: Option<SocketAddr>,
    metrics_addr: Option<SocketAddr>,
    webhook_addr: Option<SocketAddr>,
    registered: Option<RegisteredWebhooks>,
}

impl Servers {
    fn serve(
        &mut self,
        what: &str,
        listener: TcpListener,
        tls: Option<tokio_rustls::TlsAcceptor>,
        enable_http2: bool,
        handler: impl http::Handler,
    ) -> SocketAddr {
        let addr = local_addr(&listener);
        self.tasks.push(tokio::spawn(http::serve(
            listener,
            tls,
            enable_http2,
            handler,
            self.stop.clone(),
        )));
        tracing::info!(%addr, "serving {what}");
        addr
    }
}

/// Resolves `Ok` when the work ended because of shutdown.
/// Runs a set of controllers; when they stop on their own (an error), stops the rest of
/// the manager too: a manager with dead controllers must not look healthy.
async fn stop_all_when_stopped(
    shutdown: CancellationToken,
    controllers: impl Future<Output = Result<(), ManagerError>>,
) -> Result<(), ManagerError> {
    let result = controllers.await;
    if result.is_err() {
        shutdown.cancel();
    }
    result
}

fn ok_if_cancelled(shutdown: &CancellationToken) -> Result<(), ManagerError> {
    if shutdown.is_cancelled() {
        Ok(())
    } else {
        Err(ManagerError::ControllersStopped)
    }
}

/// The first error of a runnable, which stops the manager.
#[derive(Clone)]
pub(crate) struct Failure {
    error: Arc<Mutex<Option<String>>>,
    shutdown: CancellationToken,
}

impl Failure {
    pub(crate) fn fail(&self, error: &RunnableError) {
        tracing::error!(%error, "stopping the manager");
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| error.to_string());
        self.shutdown.cancel();
    }

    fn result(&self) -> Result<(), ManagerError> {
        match self
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            Some(error) => Err(ManagerError::RunnableFailed(error)),
            None => Ok(()),
        }
    }
}

/// Runs runnables until they end (`stop` asks them to).
async fn run_runnables(runnables: Vec<StartRunnable>, stop: CancellationToken, failure: Failure) {
    let running: FuturesUnordered<_> = runnables
        .iter()
        .map(|start| {
            let failure = failure.clone();
            let run = start(stop.clone());
            async move {
                if let Err(error) = run.await {
                    failure.fail(&error);
                }
            }
        })
        .collect();
    running.collect::<()>().await;
}

/// A started manager.
pub struct RunningManager {
    graceful_shutdown_timeout: Option<Duration>,
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
                tracing::error!(
                    "the controllers or a runnable stopped on their own; shutting down"
                );
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
        let work = match self.graceful_shutdown_timeout {
            None => (&mut self.work).await,
            Some(timeout) => match tokio::time::timeout(timeout, &mut self.work).await {
                Ok(finished) => finished,
                Err(_) => {
                    tracing::error!(
                        ?timeout,
                        "the reconciles in flight did not finish; giving up on them"
                    );
                    self.work.abort();
                    Ok(Err(ManagerError::ShutdownTimedOut(timeout)))
                }
            },
        };
        let work = work.unwrap_or(Err(ManagerError::ControllersStopped));
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

/// The registered controllers and leader-only runnables, and what they share.
struct Controllers {
    client: Client,
    cache: Cache,
    namespaces: Arc<[String]>,
    entries: Vec<(String, StartController)>,
    runnables: Vec<StartRunnable>,
    probes: Probes,
    metrics: Metrics,
    failure: Failure,
}

impl Controllers {
    /// These controllers with the leader-only runnables, started and stopped with them.
    fn with_runnables(mut self, runnables: Vec<StartRunnable>) -> Self {
        self.runnables = runnables;
        self
    }

    /// Starts every controller and leader-only runnable, and returns when all have
    /// stopped: after `stop`, or after a controller stops on its own (which stops the
    /// others: a manager with a dead controller must not look healthy).
    async fn run(&self, stop: CancellationToken) {
        let runnables = run_runnables(self.runnables.clone(), stop.clone(), self.failure.clone());
        let mut running: FuturesUnordered<_> = self
            .entries
            .iter()
            .map(|(name, start)| {
                let context = ControllerContext {
                    name: name.clone(),
                    client: self.client.clone(),
                    cache: self.cache.clone(),
                    namespaces: self.namespaces.clone(),
                    stop: stop.clone(),
                    readiness: self.probes.readyz.register_controller(name),
                    metrics: self.metrics.controller(name),
                    max_concurrent_reconciles: DEFAULT_MAX_CONCURRENT_RECONCILES,
                    reconcile_timeout: None,
                    rate_limiter: RateLimiter::default(),
                    failure: self.failure.clone(),
                };
                let name = name.clone();
                let started = start(context);
                async move {
                    started.await;
                    name
                }
            })
            .collect();
        let controllers = async {
            if running.is_empty() {
                stop.cancelled().await;
            }
            while let Some(name) = running.next().await {
                if !stop.is_cancelled() {
                    tracing::error!(controller = %name, "controller stopped on its own; stopping the others");
                    stop.cancel();
                }
            }
        };
        futures::future::join(controllers, runnables).await;
    }
}

/// `ENABLE_WEBHOOKS=false` turns the webhook server off, as in kubebuilder's main.
fn webhooks_enabled(value: Option<&str>) -> bool {
    value != Some("false")
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
}

//! One control plane: etcd and kube-apiserver on free loopback ports, started with
//! controller-runtime envtest's flags and PKI, and kube-controller-manager when asked for;
//! stopped on drop.

use std::fs;
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kubebuilder_runtime::certs::{CertPair, CertificateAuthority};

use crate::assets;
use crate::controller_manager::{self, ControllerManager};
use crate::process::{self, Process};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
/// The admin user: in `system:masters`, so RBAC never refuses it.
const ADMIN_USER: &str = "admin";
const ADMIN_GROUP: &str = "system:masters";

/// Where the control plane keeps its files, whether it owns them, and what runs in it.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// A directory to use (kept on stop); a fresh temporary directory when `None` (removed).
    pub work_dir: Option<PathBuf>,
    /// Extra kube-apiserver flags, appended after envtest's.
    pub apiserver_args: Vec<String>,
    /// kube-controller-manager beside the apiserver, running these controllers, with
    /// credentials of its own; `None` (envtest's plane) runs none, so that nothing acts on
    /// what a test writes. Its binary comes from [`assets::find_controller_manager`].
    pub controller_manager: Option<ControllerManager>,
}

/// A running etcd + kube-apiserver, and kube-controller-manager when asked for.
pub struct ControlPlane {
    // Field order is drop order: the controller-manager stops before the apiserver, the
    // apiserver before etcd.
    controller_manager: Option<Process>,
    apiserver: Process,
    etcd: Process,
    /// etcd's client port, polled for health after a restart.
    etcd_port: u16,
    work_dir: PathBuf,
    owns_work_dir: bool,
    url: String,
    kubeconfig_path: PathBuf,
    kubeconfig: Kubeconfig,
    serving_ca_pem: String,
    client_ca: CertificateAuthority,
    startup: Duration,
}

impl ControlPlane {
    /// Starts a control plane with default options (see [`ControlPlane::start_with`]).
    pub fn start() -> Result<Self> {
        Self::start_with(Options::default())
    }

    /// Starts etcd and kube-apiserver and waits until the apiserver is ready and the
    /// `default` namespace exists; then, when asked for, kube-controller-manager, waiting
    /// until it has built its controllers. Blocking; callable from inside or outside a
    /// Tokio runtime.
    pub fn start_with(options: Options) -> Result<Self> {
        let started = Instant::now();
        let binaries = assets::find()?;
        let controller_manager = options
            .controller_manager
            .as_ref()
            .map(|controllers| anyhow::Ok((assets::find_controller_manager()?, controllers)))
            .transpose()?;
        let (work_dir, owns_work_dir) = match options.work_dir {
            Some(dir) => {
                fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
                (dir, false)
            }
            None => {
                let dir = new_temp_dir()?;
                process::remove_dir_at_exit(&dir);
                (dir, true)
            }
        };
        let timeout = start_timeout();

        let parts = with_new_ports("etcd and kube-apiserver", || {
            start_processes(&binaries, &work_dir, &options.apiserver_args, timeout)
        })
        .and_then(|mut parts| {
            if let Some((binary, controllers)) = &controller_manager {
                let apiserver = controller_manager::Apiserver {
                    url: &parts.url,
                    serving_ca_pem: &parts.serving_ca_pem,
                    client_ca: &parts.client_ca,
                    service_account_key: &work_dir.join("pki/sa-signer.key"),
                };
                parts.controller_manager = Some(controller_manager::start(
                    binary,
                    controllers,
                    &apiserver,
                    &work_dir,
                    timeout,
                )?);
            }
            Ok(parts)
        });
        match parts {
            Ok(parts) => Ok(Self::assemble(
                parts,
                work_dir,
                owns_work_dir,
                started.elapsed(),
            )),
            Err(error) => {
                if owns_work_dir {
                    let _ = fs::remove_dir_all(&work_dir);
                    process::forget_dir(&work_dir);
                }
                Err(error)
            }
        }
    }

    fn assemble(parts: Started, work_dir: PathBuf, owns_work_dir: bool, startup: Duration) -> Self {
        eprintln!(
            "envtest: control plane ready in {:.1} s at {} (kubeconfig {})",
            startup.as_secs_f64(),
            parts.url,
            parts.kubeconfig_path.display()
        );
        Self {
            controller_manager: parts.controller_manager,
            apiserver: parts.apiserver,
            etcd: parts.etcd,
            etcd_port: parts.etcd_port,
            work_dir,
            owns_work_dir,
            url: parts.url,
            kubeconfig_path: parts.kubeconfig_path,
            kubeconfig: parts.kubeconfig,
            serving_ca_pem: parts.serving_ca_pem,
            client_ca: parts.client_ca,
            startup,
        }
    }

    /// The apiserver's base URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A kubeconfig file for the admin user (cluster, user and context named `envtest`).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The CA that signed the apiserver's serving certificate, PEM.
    pub fn serving_ca_pem(&self) -> &str {
        &self.serving_ca_pem
    }

    /// How long [`ControlPlane::start`] took.
    pub fn startup_time(&self) -> Duration {
        self.startup
    }

    /// The directory holding the PKI, logs and etcd data.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// The last `lines` of a component's log (`etcd`, `kube-apiserver`,
    /// `kube-controller-manager`), for failure messages; empty for a component not running
    /// here.
    pub fn component_log(&self, name: &str, lines: usize) -> String {
        [
            Some(&self.etcd),
            Some(&self.apiserver),
            self.controller_manager.as_ref(),
        ]
        .into_iter()
        .flatten()
        .find(|process| process.name() == name)
        .map(|process| process.log_tail(lines))
        .unwrap_or_default()
    }

    /// The admin client configuration.
    pub async fn config(&self) -> Result<kube::Config> {
        let config = kube::Config::from_custom_kubeconfig(
            self.kubeconfig.clone(),
            &KubeConfigOptions::default(),
        )
        .await?;
        Ok(config)
    }

    /// A client for the admin user (in `system:masters`). Call it inside the Tokio runtime
    /// that will use it: a client's connections belong to the runtime that made them.
    pub async fn client(&self) -> Result<kube::Client> {
        Ok(kube::Client::try_from(self.config().await?)?)
    }

    /// A client that impersonates service account `namespace/name` (with the groups the
    /// apiserver gives service accounts), for testing what RBAC allows that account.
    pub async fn client_as_service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<kube::Client> {
        let mut config = self.config().await?;
        config.auth_info.impersonate = Some(format!("system:serviceaccount:{namespace}:{name}"));
        config.auth_info.impersonate_groups = Some(vec![
            "system:serviceaccounts".into(),
            format!("system:serviceaccounts:{namespace}"),
            "system:authenticated".into(),
        ]);
        Ok(kube::Client::try_from(config)?)
    }

    /// A client authenticated by a client certificate for `user` (and at most one group),
    /// signed by the apiserver's client CA: real authentication, no impersonation.
    pub async fn client_as_user(&self, user: &str, group: Option<&str>) -> Result<kube::Client> {
        let pair = self.client_ca.issue_client(user, group)?;
        let mut config = self.config().await?;
        config.auth_info.client_certificate_data = Some(base64(&pair.cert_pem));
        config.auth_info.client_key_data = Some(base64(&pair.key_pem).into());
        Ok(kube::Client::try_from(config)?)
    }

    /// Creates a namespace with a unique name starting with `prefix`, for one test.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String> {
        create_namespace(&self.client().await?, prefix).await
    }

    /// Creates service account `namespace/name` and returns a token for it from the
    /// TokenRequest API (no token controller runs here), valid for ten minutes.
    pub async fn service_account_token(&self, namespace: &str, name: &str) -> Result<String> {
        let accounts: Api<ServiceAccount> = Api::namespaced(self.client().await?, namespace);
        let account = ServiceAccount {
            metadata: ObjectMeta {
                name: Some(name.to_string()),
                ..Default::default()
            },
            ..Default::default()
        };
        accounts.create(&PostParams::default(), &account).await?;
        let request = TokenRequest {
            spec: Some(TokenRequestSpec {
                expiration_seconds: Some(600),
                ..Default::default()
            }),
            ..Default::default()
        };
        accounts
            .create_token_request(name, &PostParams::default(), &request)
            .await?
            .status
            .and_then(|status| status.token)
            .context("the TokenRequest returned no token")
    }

    /// Creates `role` and binds it, cluster-wide, to service account `namespace/account`
    /// (which need not exist yet). The authorizer sees the binding shortly after, not at
    /// once: callers wait for its effect.
    pub async fn grant_cluster_role(
        &self,
        role: &ClusterRole,
        namespace: &str,
        account: &str,
    ) -> Result<()> {
        let client = self.client().await?;
        let role_name = role
            .metadata
            .name
            .clone()
            .context("ClusterRole without a name")?;
        Api::<ClusterRole>::all(client.clone())
            .create(&PostParams::default(), role)
            .await
            .with_context(|| format!("creating ClusterRole {role_name}"))?;
        let (role_ref, subjects) = binding_of("ClusterRole", &role_name, namespace, account);
        let binding = ClusterRoleBinding {
            metadata: ObjectMeta {
                name: Some(format!("{role_name}-{namespace}-{account}")),
                ..Default::default()
            },
            role_ref,
            subjects,
        };
        Api::<ClusterRoleBinding>::all(client)
            .create(&PostParams::default(), &binding)
            .await
            .with_context(|| format!("binding ClusterRole {role_name} to {namespace}/{account}"))?;
        Ok(())
    }

    /// Grants service account `namespace/account` the roles of a generated RBAC file
    /// (`config/rbac/role.yaml`, `leader_election_role.yaml`: ClusterRoles and Roles as YAML
    /// documents), bound as `config/rbac` binds them to the manager's account, so that a
    /// test can run the manager with what its deployment would be allowed: each ClusterRole
    /// cluster-wide ([`Self::grant_cluster_role`]), renamed `<namespace>-<name>` so that tests
    /// side by side do not share one; each Role in `namespace`, whatever namespace the file
    /// names (kustomize moves config/'s objects to the manager's). The authorizer sees the
    /// bindings shortly after, not at once: callers wait for their effect.
    pub async fn grant_roles_in_file(
        &self,
        path: &Path,
        namespace: &str,
        account: &str,
    ) -> Result<()> {
        let text =
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("{}: not YAML", path.display()))?;
        for document in documents.into_iter().filter(|d| !d.is_null()) {
            match document["kind"].as_str() {
                Some("ClusterRole") => {
                    let mut role: ClusterRole = serde_json::from_value(document)?;
                    let name = role.metadata.name.take().unwrap_or_default();
                    role.metadata.name = Some(format!("{namespace}-{name}"));
                    self.grant_cluster_role(&role, namespace, account).await?;
                }
                Some("Role") => {
                    let mut role: Role = serde_json::from_value(document)?;
                    role.metadata.namespace = Some(namespace.to_owned());
                    self.grant_role(&role, account).await?;
                }
                other => bail!("{}: {other:?} is not a role", path.display()),
            }
        }
        Ok(())
    }

    /// Creates `role` and binds it in its namespace to that namespace's service account
    /// `account`.
    async fn grant_role(&self, role: &Role, account: &str) -> Result<()> {
        let client = self.client().await?;
        let name = role.metadata.name.clone().context("Role without a name")?;
        let namespace = role
            .metadata
            .namespace
            .clone()
            .context("Role without a namespace")?;
        Api::<Role>::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), role)
            .await
            .with_context(|| format!("creating Role {namespace}/{name}"))?;
        let (role_ref, subjects) = binding_of("Role", &name, &namespace, account);
        let binding = RoleBinding {
            metadata: ObjectMeta {
                name: Some(format!("{name}-{account}")),
                ..Default::default()
            },
            role_ref,
            subjects,
        };
        Api::<RoleBinding>::namespaced(client, &namespace)
            .create(&PostParams::default(), &binding)
            .await
            .with_context(|| format!("binding Role {namespace}/{name} to {account}"))?;
        Ok(())
    }

    /// Applies the CRDs (server-side apply) and waits until each is Established.
    pub async fn install_crds(&self, crds: &[CustomResourceDefinition]) -> Result<()> {
        let api: Api<CustomResourceDefinition> = Api::all(self.client().await?);
        for crd in crds {
            let name = crd.metadata.name.clone().context("CRD without a name")?;
            let params = PatchParams::apply("envtest").force();
            api.patch(&name, &params, &Patch::Apply(crd))
                .await
                .with_context(|| format!("applying CRD {name}"))?;
        }
        for crd in crds {
            let name = crd.metadata.name.as_deref().unwrap_or_default();
            wait_established(&api, name, Duration::from_secs(30)).await?;
        }
        Ok(())
    }

    /// Kills kube-apiserver with SIGKILL, as a crash would: its connections and watches
    /// are cut, nothing is shut down gracefully. [`ControlPlane::start_apiserver`] brings
    /// it back.
    pub fn kill_apiserver(&mut self) {
        self.apiserver.stop(Duration::ZERO);
    }

    /// Starts the killed kube-apiserver again on the same port, with the same flags,
    /// certificates and etcd, and waits until it is ready (as [`ControlPlane::start_with`]
    /// does, blocking). Clients made before keep working: same URL, same CA.
    pub fn start_apiserver(&mut self) -> Result<()> {
        self.apiserver.restart()?;
        wait_ready(
            &mut self.apiserver,
            &self.kubeconfig,
            Instant::now() + start_timeout(),
        )
    }

    /// Kills etcd with SIGKILL; the apiserver keeps running without its storage.
    /// [`ControlPlane::start_etcd`] brings it back.
    pub fn kill_etcd(&mut self) {
        self.etcd.stop(Duration::ZERO);
    }

    /// Starts the killed etcd again on the same ports and data directory (nothing stored
    /// is lost), and waits until it answers `/health`; the apiserver reconnects by itself.
    pub fn start_etcd(&mut self) -> Result<()> {
        self.etcd.restart()?;
        let port = self.etcd_port;
        wait_until(&mut self.etcd, Instant::now() + start_timeout(), || {
            http_get_ok(port, "/health")
        })
    }

    /// Stops the processes and removes the work directory if it is temporary.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(controller_manager) = &mut self.controller_manager {
            controller_manager.stop(Duration::from_secs(10));
        }
        self.apiserver.stop(Duration::from_secs(10));
        self.etcd.stop(Duration::from_secs(10));
        if self.owns_work_dir {
            let _ = fs::remove_dir_all(&self.work_dir);
            process::forget_dir(&self.work_dir);
        }
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Creates a namespace named `prefix-<random>` and returns its name.
pub(crate) async fn create_namespace(client: &kube::Client, prefix: &str) -> Result<String> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            generate_name: Some(format!("{prefix}-")),
            ..Default::default()
        },
        ..Default::default()
    };
    let created = namespaces
        .create(&PostParams::default(), &namespace)
        .await?;
    created
        .metadata
        .name
        .context("apiserver returned a namespace without a name")
}

/// What a binding of `kind` `role` to service account `namespace/account` refers to: its
/// `roleRef` and `subjects`.
fn binding_of(
    kind: &str,
    role: &str,
    namespace: &str,
    account: &str,
) -> (RoleRef, Option<Vec<Subject>>) {
    let role_ref = RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: role.into(),
    };
    let subject = Subject {
        kind: "ServiceAccount".into(),
        name: account.into(),
        namespace: Some(namespace.into()),
        ..Default::default()
    };
    (role_ref, Some(vec![subject]))
}

/// Polls the CRD until its `Established` condition is true.
pub async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    timeout: Duration,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let crd = api.get(name).await?;
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("CRD {name} not Established after {timeout:?}: {conditions:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

struct Started {
    controller_manager: Option<Process>,
    apiserver: Process,
    etcd: Process,
    etcd_port: u16,
    url: String,
    kubeconfig_path: PathBuf,
    kubeconfig: Kubeconfig,
    serving_ca_pem: String,
    client_ca: CertificateAuthority,
}

fn start_processes(
    binaries: &Path,
    dir: &Path,
    extra_args: &[String],
    timeout: Duration,
) -> Result<Started> {
    let pki = dir.join("pki");
    fs::create_dir_all(&pki)?;

    // etcd
    let (etcd_client_port, etcd_peer_port) = (free_port()?, free_port()?);
    let etcd_url = format!("http://127.0.0.1:{etcd_client_port}");
    let etcd_data = dir.join("etcd");
    let _ = fs::remove_dir_all(&etcd_data);
    let etcd_args = vec![
        format!("--data-dir={}", etcd_data.display()),
        format!("--listen-client-urls={etcd_url}"),
        format!("--advertise-client-urls={etcd_url}"),
        format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer_port}"),
        format!("--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer_port}"),
        format!("--initial-cluster=default=http://127.0.0.1:{etcd_peer_port}"),
        "--unsafe-no-fsync=true".into(),
        "--log-level=warn".into(),
    ];
    let mut etcd = Process::spawn(
        "etcd",
        &binaries.join("etcd"),
        &etcd_args,
        dir.join("etcd.log"),
    )?;
    let deadline = Instant::now() + timeout;
    wait_until(&mut etcd, deadline, || {
        http_get_ok(etcd_client_port, "/health")
    })?;

    // PKI: serving CA + apiserver cert, client CA + admin cert, service-account signing key.
    let serving_ca = CertificateAuthority::new("envtest-serving-ca")?;
    let serving = serving_ca.issue_server(&["localhost"], &[LOOPBACK])?;
    write_pair(&dir.join("apiserver"), "apiserver", &serving)?;
    let client_ca = CertificateAuthority::new("envtest-client-ca")?;
    fs::write(pki.join("client-ca.crt"), client_ca.cert_pem())?;
    let admin = client_ca.issue_client(ADMIN_USER, Some(ADMIN_GROUP))?;
    let service_accounts = CertificateAuthority::new("envtest-service-accounts")?.pair();
    write_pair(&pki, "sa-signer", &service_accounts)?;

    // kube-apiserver
    let port = free_port()?;
    let url = format!("https://127.0.0.1:{port}");
    let mut args = vec![
        format!("--etcd-servers={etcd_url}"),
        format!("--cert-dir={}", dir.join("apiserver").display()),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".into(),
        "--service-cluster-ip-range=10.0.0.0/24".into(),
        "--allow-privileged=true".into(),
        "--disable-admission-plugins=ServiceAccount".into(),
        "--authorization-mode=RBAC".into(),
        format!("--client-ca-file={}", pki.join("client-ca.crt").display()),
        format!("--service-account-issuer={url}/"),
        format!(
            "--service-account-key-file={}",
            pki.join("sa-signer.crt").display()
        ),
        format!(
            "--service-account-signing-key-file={}",
            pki.join("sa-signer.key").display()
        ),
    ];
    if !has_default_route() {
        // Without a default route the apiserver cannot pick an advertise address itself.
        args.push("--advertise-address=127.0.0.1".into());
        args.push("--endpoint-reconciler-type=none".into());
    }
    args.extend(extra_args.iter().cloned());
    let mut apiserver = Process::spawn(
        "kube-apiserver",
        &binaries.join("kube-apiserver"),
        &args,
        dir.join("kube-apiserver.log"),
    )?;

    let kubeconfig_text = kubeconfig_yaml(&url, &serving_ca.cert_pem(), &admin);
    let kubeconfig_path = dir.join("kubeconfig");
    fs::write(&kubeconfig_path, &kubeconfig_text)?;
    let kubeconfig = Kubeconfig::from_yaml(&kubeconfig_text)?;

    wait_ready(&mut apiserver, &kubeconfig, deadline)?;
    Ok(Started {
        controller_manager: None,
        apiserver,
        etcd,
        etcd_port: etcd_client_port,
        url,
        kubeconfig_path,
        kubeconfig,
        serving_ca_pem: serving_ca.cert_pem(),
        client_ca,
    })
}

/// Polls `/readyz` and then the `default` namespace (created by the apiserver itself once
/// its bootstrap controllers ran).
fn wait_ready(apiserver: &mut Process, kubeconfig: &Kubeconfig, deadline: Instant) -> Result<()> {
    let kubeconfig = kubeconfig.clone();
    wait_for_probe(apiserver, async move {
        let config =
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
        let client = kube::Client::try_from(config)?;
        let namespaces: Api<Namespace> = Api::all(client.clone());
        loop {
            let ready = client
                .request_text(http::Request::get("/readyz").body(Vec::new())?)
                .await
                .is_ok_and(|body| body.trim() == "ok");
            if ready && namespaces.get_opt("default").await.ok().flatten().is_some() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("kube-apiserver not ready before the deadline");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Runs `probe`, which returns once `process` is ready or fails at its deadline, on a
/// runtime of its own in a thread of its own, so that this works whether or not the
/// caller is inside a Tokio runtime; fails at once, with the end of its log, when
/// `process` exits meanwhile.
pub(crate) fn wait_for_probe(
    process: &mut Process,
    probe: impl Future<Output = Result<()>> + Send + 'static,
) -> Result<()> {
    let probe = std::thread::spawn(move || -> Result<()> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(probe)
    });
    while !probe.is_finished() {
        ensure_running(process)?;
        std::thread::sleep(Duration::from_millis(50));
    }
    probe
        .join()
        .map_err(|_| anyhow::anyhow!("readiness probe panicked"))?
        .with_context(|| {
            format!(
                "{} log ends with:\n{}",
                process.name(),
                process.log_tail(20)
            )
        })
}

/// Runs `start` up to three times: a free port can be taken by someone else between our
/// probe and the server's bind (another test binary starting at the same moment), and
/// each attempt picks new ports.
pub(crate) fn with_new_ports<T>(what: &str, mut start: impl FnMut() -> Result<T>) -> Result<T> {
    let mut last_error = None;
    for attempt in 1..=3 {
        match start() {
            Ok(started) => return Ok(started),
            Err(err) => {
                eprintln!("envtest: starting {what}: attempt {attempt} failed: {err:#}");
                last_error = Some(err);
            }
        }
    }
    Err(last_error.expect("three attempts ran"))
}

fn wait_until(process: &mut Process, deadline: Instant, ready: impl Fn() -> bool) -> Result<()> {
    loop {
        if ready() {
            return Ok(());
        }
        ensure_running(process)?;
        if Instant::now() > deadline {
            bail!(
                "{} not ready before the deadline; its log ends with:\n{}",
                process.name(),
                process.log_tail(20)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An error quoting the end of its log when `process` has exited while starting.
fn ensure_running(process: &mut Process) -> Result<()> {
    if let Some(status) = process.exited() {
        bail!(
            "{} exited ({status}) while starting; its log ends with:\n{}",
            process.name(),
            process.log_tail(20)
        );
    }
    Ok(())
}

/// A plain-HTTP GET on loopback that reports whether the answer was 200.
fn http_get_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = TcpStream::connect((Ipv4Addr::LOCALHOST, port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut response = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut response).is_ok()
        && response.starts_with("HTTP/1.0 200")
}

pub(crate) fn free_port() -> Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

fn has_default_route() -> bool {
    fs::read_to_string("/proc/net/route").is_ok_and(|routes| {
        routes
            .lines()
            .skip(1)
            .any(|line| line.split_whitespace().nth(1) == Some("00000000"))
    })
}

fn start_timeout() -> Duration {
    std::env::var("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT")
        .ok()
        .and_then(|v| v.trim_end_matches('s').parse().ok())
        .map(Duration::from_secs)
        .unwrap_or(Duration::from_secs(60))
}

fn new_temp_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir();
    for n in 0.. {
        let dir = base.join(format!("envtest-{}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err).with_context(|| format!("creating {}", dir.display())),
        }
    }
    unreachable!("the loop returns")
}

pub(crate) fn write_pair(dir: &Path, name: &str, pair: &CertPair) -> Result<()> {
    fs::create_dir_all(dir)?;
    fs::write(dir.join(format!("{name}.crt")), &pair.cert_pem)?;
    fs::write(dir.join(format!("{name}.key")), &pair.key_pem)?;
    Ok(())
}

fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// A kubeconfig for `user` (a client certificate) of the apiserver at `url`, certificates
/// inline; cluster, user and context named `envtest`.
pub(crate) fn kubeconfig_yaml(url: &str, ca_pem: &str, user: &CertPair) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {url}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: envtest\n  user:\n    client-certificate-data: {cert}\n    \
         client-key-data: {key}\ncontexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest\n    \
         namespace: default\ncurrent-context: envtest\n",
        ca = base64(ca_pem),
        cert = base64(&user.cert_pem),
        key = base64(&user.key_pem),
    )
}

//! Starting the node, in the order each part needs the previous one: the network guard
//! before anything that could send a packet, etcd, the apiserver, containerd (and the
//! pause image), the controllers, kube-proxy, and the kubelet last.

use std::fs;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use k8s_openapi::api::core::v1::{Node as NodeObject, ServiceAccount};
use kube::Api;

use super::daemon::{self, Daemon};
use super::layout::{self, *};
use super::{
    Footprint, STEP_TIMEOUT, State, admin_client, block_on, config, footprint, images, network,
    pki, teardown,
};
use crate::assets;
use crate::controller_manager::{self, ControllerManager};

/// Starts every component from nothing; on failure, tears down what started and returns
/// the error (with the failing component's log).
pub fn run(owner: &Path) -> Result<()> {
    let control_plane = assets::install()?;
    let controller_manager = assets::install_controller_manager()?;
    let node_binaries = assets::NODE.install()?;
    check_ports_free()?;
    let started = Instant::now();
    let mut state = State {
        owner: owner.to_path_buf(),
        baseline: Footprint::capture(),
        daemons: Vec::new(),
        ready: false,
    };
    // From here on `down` can undo whatever happened, even after a crash of this process.
    state.save()?;
    let result = start_components(
        &mut state,
        &control_plane,
        &controller_manager,
        &node_binaries,
    );
    if let Err(error) = result {
        eprintln!("node: start failed; stopping what started");
        if let Err(teardown_error) = teardown::run() {
            eprintln!("node: {teardown_error:#}");
        }
        return Err(error);
    }
    state.ready = true;
    state.save()?;
    eprintln!(
        "node: ready in {:.1} s (kubeconfig {})",
        started.elapsed().as_secs_f64(),
        layout::kubeconfig_path().display()
    );
    Ok(())
}

fn start_components(
    state: &mut State,
    control_plane: &Path,
    controller_manager: &Path,
    node_binaries: &Path,
) -> Result<()> {
    for dir in [
        layout::root().to_path_buf(),
        layout::run_dir().to_path_buf(),
        layout::log_dir(),
    ] {
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for sysctl in footprint::SYSCTLS {
        if footprint::read_sysctl(sysctl).is_none() {
            bail!("this kernel has no sysctl {sysctl}, which the node needs");
        }
    }
    network::install()?;
    pki::write()?;
    let configs = write_configs()?;
    let pki = layout::pki_dir();
    let pki_file = |name: &str| pki.join(name).display().to_string();

    let etcd = spawn(
        state,
        "etcd",
        &control_plane.join("etcd"),
        &etcd_args(),
        &[],
    )?;
    wait_for(&etcd, "etcd health", || {
        http_ok(ETCD_CLIENT_PORT, "/health")
    })?;

    let apiserver_args = apiserver_args(&pki_file);
    let apiserver = spawn(
        state,
        "kube-apiserver",
        &control_plane.join("kube-apiserver"),
        &apiserver_args,
        &[],
    )?;
    wait_for(&apiserver, "the apiserver's /readyz", || {
        block_on(async { Ok(readyz(&admin_client().await?).await) }).unwrap_or(false)
    })?;

    let containerd_args = vec![
        "--config".to_owned(),
        configs.containerd.display().to_string(),
    ];
    let proxy = [
        ("HTTP_PROXY", CLOSED_PROXY),
        ("HTTPS_PROXY", CLOSED_PROXY),
        ("NO_PROXY", ""),
    ];
    let containerd = spawn(
        state,
        "containerd",
        Path::new("/usr/bin/containerd"),
        &containerd_args,
        &proxy,
    )?;
    wait_for(&containerd, "containerd's socket", || {
        images::list().is_ok()
    })?;
    images::import(&images::pause_archive()?)?;

    spawn(
        state,
        "kube-controller-manager",
        controller_manager,
        &controller_manager_args(&pki),
        &[],
    )?;
    spawn(
        state,
        "kube-scheduler",
        &node_binaries.join("kube-scheduler"),
        &scheduler_args(),
        &[],
    )?;
    let proxy_args = vec![format!("--config={}", configs.kube_proxy.display())];
    let kube_proxy = spawn(
        state,
        "kube-proxy",
        &node_binaries.join("kube-proxy"),
        &proxy_args,
        &[],
    )?;

    let kubelet_args = vec![
        format!("--config={}", configs.kubelet.display()),
        format!("--kubeconfig={}", pki::kubeconfig_of("kubelet").display()),
        format!("--hostname-override={NODE_NAME}"),
        format!("--root-dir={}", layout::kubelet_root().display()),
        format!("--cert-dir={}", layout::pki_dir().join("kubelet").display()),
        "--v=1".to_owned(),
    ];
    let kubelet = spawn(
        state,
        "kubelet",
        &node_binaries.join("kubelet"),
        &kubelet_args,
        &[],
    )?;
    wait_for(&kubelet, "the node to be Ready", || {
        block_on(node_ready()).unwrap_or(false)
    })?;
    // kube-proxy waits for the Node object (its addresses) before it syncs rules; healthy
    // means Services work.
    wait_for(&kube_proxy, "kube-proxy's first sync", || {
        http_ok(PROXY_HEALTHZ_PORT, "/healthz")
    })?;
    // The service account controller makes `default` in each namespace; pods need it.
    wait_for(&kubelet, "the default service account", || {
        block_on(async {
            let accounts: Api<ServiceAccount> = Api::namespaced(admin_client().await?, "default");
            Ok(accounts.get_opt("default").await?.is_some())
        })
        .unwrap_or(false)
    })
}

struct ConfigFiles {
    containerd: PathBuf,
    kubelet: PathBuf,
    kube_proxy: PathBuf,
}

fn write_configs() -> Result<ConfigFiles> {
    let dir = layout::root().join("config");
    let cni = layout::root().join("cni/net.d");
    fs::create_dir_all(&dir)?;
    fs::create_dir_all(&cni)?;
    let files = ConfigFiles {
        containerd: dir.join("containerd.toml"),
        kubelet: dir.join("kubelet.yaml"),
        kube_proxy: dir.join("kube-proxy.yaml"),
    };
    fs::write(
        &files.containerd,
        config::containerd(Path::new("/usr/sbin/runc"), &images::sandbox_image()),
    )?;
    fs::write(
        cni.join("10-kubebuilder-rs.conflist"),
        config::cni_conflist(),
    )?;
    fs::write(&files.kubelet, config::kubelet())?;
    fs::write(
        &files.kube_proxy,
        config::kube_proxy(&pki::kubeconfig_of("kube-proxy")),
    )?;
    Ok(files)
}

fn etcd_args() -> Vec<String> {
    let client = format!("http://127.0.0.1:{ETCD_CLIENT_PORT}");
    let peer = format!("http://127.0.0.1:{ETCD_PEER_PORT}");
    vec![
        format!("--data-dir={}", layout::root().join("etcd").display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls={peer}"),
        format!("--initial-advertise-peer-urls={peer}"),
        format!("--initial-cluster=default={peer}"),
        "--listen-metrics-urls=".to_owned(),
        "--unsafe-no-fsync=true".into(),
        "--log-level=warn".into(),
    ]
}

fn apiserver_args(pki_file: &dyn Fn(&str) -> String) -> Vec<String> {
    vec![
        format!("--etcd-servers=http://127.0.0.1:{ETCD_CLIENT_PORT}"),
        "--bind-address=127.0.0.1".into(),
        format!("--secure-port={APISERVER_PORT}"),
        // Nothing may point at another address of this machine; the `kubernetes` Service
        // is translated to 127.0.0.1 by our own rule, so no endpoints are written for it.
        "--advertise-address=127.0.0.1".into(),
        "--endpoint-reconciler-type=none".into(),
        format!("--tls-cert-file={}", pki_file("apiserver.crt")),
        format!("--tls-private-key-file={}", pki_file("apiserver.key")),
        format!("--client-ca-file={}", pki_file("ca.crt")),
        format!("--service-cluster-ip-range={SERVICE_CIDR}"),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
        format!("--service-account-key-file={}", pki_file("sa.crt")),
        format!("--service-account-signing-key-file={}", pki_file("sa.key")),
        "--authorization-mode=Node,RBAC".into(),
        "--enable-admission-plugins=NodeRestriction".into(),
        "--allow-privileged=true".into(),
        format!(
            "--kubelet-client-certificate={}",
            pki_file("apiserver-kubelet-client.crt")
        ),
        format!(
            "--kubelet-client-key={}",
            pki_file("apiserver-kubelet-client.key")
        ),
        format!("--kubelet-certificate-authority={}", pki_file("ca.crt")),
        // The node is `localhost`: the apiserver reaches the kubelet at 127.0.0.1.
        "--kubelet-preferred-address-types=Hostname,InternalIP".into(),
        "--profiling=false".into(),
    ]
}

fn controller_manager_args(pki_dir: &Path) -> Vec<String> {
    controller_manager::Flags {
        kubeconfig: &pki::kubeconfig_of("kube-controller-manager"),
        secure_port: CONTROLLER_MANAGER_PORT,
        service_account_key: &pki_dir.join("sa.key"),
        root_ca: &pki_dir.join("ca.crt"),
        signing_ca: (&pki_dir.join("ca.crt"), &pki_dir.join("ca.key")),
        controllers: &ControllerManager::defaults(),
    }
    .args()
}

fn scheduler_args() -> Vec<String> {
    let kubeconfig = pki::kubeconfig_of("kube-scheduler").display().to_string();
    vec![
        format!("--kubeconfig={kubeconfig}"),
        format!("--authentication-kubeconfig={kubeconfig}"),
        format!("--authorization-kubeconfig={kubeconfig}"),
        "--bind-address=127.0.0.1".into(),
        format!("--secure-port={SCHEDULER_PORT}"),
        "--leader-elect=false".into(),
        "--profiling=false".into(),
    ]
}

/// Starts a daemon and records it in the state at once, so that `down` finds it whatever
/// happens next.
fn spawn(
    state: &mut State,
    name: &str,
    program: &Path,
    args: &[String],
    env: &[(&str, &str)],
) -> Result<Daemon> {
    let log = layout::log_dir().join(format!("{name}.log"));
    let started = daemon::spawn(name, program, args, env, log)?;
    state.daemons.push(started.clone());
    state.save()?;
    Ok(started)
}

/// Polls `ready` until it holds; fails with the daemon's log when it exits or the step
/// times out.
fn wait_for(daemon: &Daemon, what: &str, ready: impl Fn() -> bool) -> Result<()> {
    let started = Instant::now();
    let deadline = started + STEP_TIMEOUT;
    loop {
        if ready() {
            eprintln!("node: {what}: {:.1} s", started.elapsed().as_secs_f64());
            return Ok(());
        }
        if !daemon.is_running() {
            bail!(
                "{} exited while waiting for {what}; its log ({}) ends with:\n{}",
                daemon.name,
                daemon.log.display(),
                daemon.log_tail(25)
            );
        }
        if Instant::now() > deadline {
            bail!(
                "timed out after {STEP_TIMEOUT:?} waiting for {what}; {}'s log ({}) ends with:\n{}",
                daemon.name,
                daemon.log.display(),
                daemon.log_tail(25)
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Whether the node is healthy: every daemon runs, the apiserver is ready and the node
/// Ready. The error says what is not.
pub fn health(state: &State) -> Result<()> {
    if !state.ready {
        bail!("its start did not finish");
    }
    if let Some(stopped) = state.stopped_daemon() {
        bail!("{} is not running", stopped.name);
    }
    if !block_on(node_ready())? {
        bail!("the node is not Ready");
    }
    Ok(())
}

async fn readyz(client: &kube::Client) -> bool {
    let Ok(request) = http::Request::get("/readyz").body(Vec::new()) else {
        return false;
    };
    client
        .request_text(request)
        .await
        .is_ok_and(|body| body.trim() == "ok")
}

async fn node_ready() -> Result<bool> {
    let client = admin_client().await?;
    if !readyz(&client).await {
        return Ok(false);
    }
    let nodes: Api<NodeObject> = Api::all(client);
    let Some(node) = nodes.get_opt(NODE_NAME).await? else {
        return Ok(false);
    };
    Ok(node
        .status
        .and_then(|status| status.conditions)
        .unwrap_or_default()
        .iter()
        .any(|condition| condition.type_ == "Ready" && condition.status == "True"))
}

/// Fails naming every port of [`PORTS`] another program listens on, and that program.
fn check_ports_free() -> Result<()> {
    let taken: Vec<String> = PORTS
        .iter()
        .filter(|(port, _)| TcpListener::bind((Ipv4Addr::LOCALHOST, *port)).is_err())
        .map(|(port, owner)| match listener_of(*port) {
            Some(program) => format!("127.0.0.1:{port} (for {owner}) is taken by {program}"),
            None => format!("127.0.0.1:{port} (for {owner}) is taken"),
        })
        .collect();
    if !taken.is_empty() {
        bail!(
            "the local node cannot start: {}; stop that program (or the node it belongs to: \
             `cargo xtask cluster down`)",
            taken.join("; ")
        );
    }
    Ok(())
}

/// `name (pid N)` of the process listening on TCP `port`, from /proc.
fn listener_of(port: u16) -> Option<String> {
    let table = fs::read_to_string("/proc/net/tcp").ok()?;
    let inode = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let local_port = fields.get(1)?.rsplit_once(':')?.1;
        // State 0A is LISTEN.
        (u16::from_str_radix(local_port, 16).ok()? == port && fields.get(3) == Some(&"0A"))
            .then(|| fields.get(9).map(|inode| (*inode).to_owned()))
            .flatten()
    })?;
    let socket = format!("socket:[{inode}]");
    daemon::processes().into_iter().find_map(|(pid, exe)| {
        let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
        fds.flatten()
            .any(|fd| {
                fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == socket.as_str())
            })
            .then(|| format!("{} (pid {pid})", exe.display()))
    })
}

/// Whether a plain-HTTP GET on loopback answers 200.
fn http_ok(port: u16, path: &str) -> bool {
    http_status(port, path) == Some(200)
}

/// The status code of a plain-HTTP GET on loopback, if anything answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.split_whitespace().nth(1)?.parse().ok()
}

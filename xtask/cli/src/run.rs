//! `cargo xtask run`: the manager on this machine against a cluster (kubebuilder's
//! `make run`), or against a local control plane when no cluster is configured.
//!
//! The manager runs as what it is in production, the `controller` binary, built here and
//! started as a child process in the foreground (its logs are the output). With a
//! kubeconfig (`KUBECONFIG` or `~/.kube/config`) it talks to that cluster; a remote
//! apiserver cannot call back into this machine, so the webhooks are off
//! (`ENABLE_WEBHOOKS=false` unless set). Without a kubeconfig a local control plane is
//! started; with it, or with a kubeconfig whose apiserver is on loopback (`cargo xtask
//! envtest start`), the manager serves the webhooks on loopback and registers them with that
//! apiserver (`--register-webhooks-on-loopback`), removing them when it stops.
//! Either way the manifests are rendered first (`make run` depends on `manifests`), the CRDs
//! are installed, the manager is started and, once ready, the samples are applied (so they
//! pass through the webhooks). Ctrl-C stops the manager gracefully,
//! then the control plane.
//!
//! Every server of the manager listens on 127.0.0.1 only, since nothing off this machine
//! needs to reach it: the probes on a free loopback port (`--health-probe-bind-address`),
//! the metrics when asked for (a `:<port>` given becomes `127.0.0.1:<port>`; an explicit
//! host is kept), and the webhooks on loopback (`--register-webhooks-on-loopback`). The
//! exception is a remote cluster with `ENABLE_WEBHOOKS` set: its apiserver must reach the
//! webhook server, which then listens on every interface.

use std::net::{SocketAddr, TcpListener};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kube::config::Kubeconfig;
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::{ControlPlane, ControllerManager, Options, assets};

use crate::deploy::{self, DeployArgs};
use crate::manifests;

/// How long the manager may take to become ready (caches synced).
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the apiserver may take to call a CRD's new conversion webhook.
const CONVERSION_PICKUP: Duration = Duration::from_secs(30);

/// The options of `cargo xtask run` (kubebuilder's `make run`).
#[derive(clap::Args)]
pub struct Args {
    /// Flags for the manager, after `--` (e.g. `-- --metrics-bind-address=:8080`); see
    /// `cargo run -p controller -- --help`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    manager_args: Vec<String>,
}

/// Runs the manager as the module docs describe, until it exits or Ctrl-C stops it.
pub fn run(args: Args) -> Result<()> {
    // As `make run` depends on `manifests`: a field added since the last render is in the
    // CRD the apiserver gets; a stale CRD would prune it and skip its validation.
    println!("xtask: rendering the manifests (cargo xtask manifests)");
    manifests::run(manifests::Args::default())?;
    let binary = build_manager(&crate::workspace_root(), false)?;
    let kubeconfig = Kubeconfig::read().ok();
    let local_plane = if cluster_configured(kubeconfig.as_ref()) {
        println!("xtask: using the cluster of the current kubeconfig");
        None
    } else {
        println!("xtask: no kubeconfig: starting a local control plane");
        assets::install()?;
        assets::install_controller_manager()?;
        // The controller-manager, as a cluster has: the manager's Deployments get their
        // Pods (Pending: no node runs them), and what it owns goes with its owner.
        let plane = ControlPlane::start_with(Options {
            controller_manager: Some(ControllerManager::defaults()),
            ..Options::default()
        })?;
        // SAFETY: the control plane's threads only start processes, through std, which
        // serialises them with environment changes; nothing else runs yet.
        unsafe { std::env::set_var("KUBECONFIG", plane.kubeconfig_path()) };
        println!(
            "xtask: control plane at {} (KUBECONFIG={})",
            plane.url(),
            plane.kubeconfig_path().display()
        );
        Some(plane)
    };

    println!("xtask: installing the CRDs (config/crd)");
    deploy::install()?;

    let mut flags = ManagerFlags::new(args.manager_args);
    let probe_addr = flags.probe_address()?;
    flags.on_loopback(METRICS_FLAG)?;
    flags.webhook_port()?;
    let mut command = Command::new(&binary);
    if local_plane.is_some() || kubeconfig.as_ref().is_some_and(apiserver_on_loopback) {
        flags.push("--register-webhooks-on-loopback");
    } else if std::env::var_os("ENABLE_WEBHOOKS").is_none() {
        println!(
            "xtask: webhooks off (ENABLE_WEBHOOKS=false): a remote apiserver cannot call this machine"
        );
        command.env("ENABLE_WEBHOOKS", "false");
    }
    command.args(&flags.args);
    println!(
        "xtask: starting the manager: {} {}",
        binary.display(),
        flags.args.join(" ")
    );
    let mut manager = spawn_manager(command)?;

    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(wait_ready(probe_addr, &mut manager))?;
    println!("xtask: the manager is ready; applying the samples (config/samples)");
    apply_samples()?;
    println!(
        "xtask: the samples are applied; the manager logs what it does with them. Ctrl-C stops everything."
    );

    let status = runtime.block_on(run_until_interrupted(&mut manager))?;
    drop(local_plane);
    if !status.success() {
        bail!("the manager exited with {status}");
    }
    println!("xtask: stopped");
    Ok(())
}

/// Whether a cluster is configured: `KUBECONFIG`, a kubeconfig (`~/.kube/config`), or
/// running in a pod.
fn cluster_configured(kubeconfig: Option<&Kubeconfig>) -> bool {
    let set = |name| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    set("KUBECONFIG") || set("KUBERNETES_SERVICE_HOST") || kubeconfig.is_some()
}

/// Applies `config/samples`. The apiserver takes a moment to call a CRD's new conversion
/// webhook (the manager points it at loopback as it starts), and until then refuses writes
/// of that kind: those refusals are retried for a bounded time.
fn apply_samples() -> Result<()> {
    let deadline = Instant::now() + CONVERSION_PICKUP;
    loop {
        let applied = deploy::deploy(DeployArgs {
            image: None,
            dir: "config/samples".into(),
            no_wait: true,
            timeout: 0,
        });
        match applied {
            Err(err)
                if format!("{err:#}").contains("conversion webhook")
                    && Instant::now() < deadline =>
            {
                println!(
                    "xtask: the apiserver does not call the conversion webhook yet; applying again"
                );
                std::thread::sleep(Duration::from_secs(1));
            }
            other => return other,
        }
    }
}

/// Whether the kubeconfig's current apiserver runs on this machine (a loopback URL, as
/// `cargo xtask envtest start` writes): it can call webhooks served on loopback, so they are
/// registered with it as with a control plane `run` starts itself.
fn apiserver_on_loopback(kubeconfig: &Kubeconfig) -> bool {
    let cluster = kubeconfig
        .current_context
        .as_deref()
        .and_then(|name| kubeconfig.contexts.iter().find(|c| c.name == name))
        .and_then(|named| named.context.as_ref())
        .map(|context| context.cluster.as_str());
    kubeconfig
        .clusters
        .iter()
        .find(|named| Some(named.name.as_str()) == cluster)
        .and_then(|named| named.cluster.as_ref())
        .and_then(|cluster| cluster.server.as_deref())
        .is_some_and(is_loopback_url)
}

/// `https://127.0.0.1:6443`, `https://localhost`, `https://[::1]:6443` …
fn is_loopback_url(url: &str) -> bool {
    let authority = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Builds the `controller` binary of the workspace at `root` (`release` or debug) and
/// returns its path.
pub fn build_manager(root: &Path, release: bool) -> Result<PathBuf> {
    let mut command = crate::cargo();
    command
        .current_dir(root)
        .args(["build", "--package", "controller", "--bin", "controller"])
        .args(["--message-format", "json-render-diagnostics"])
        .stderr(Stdio::inherit());
    if release {
        command.arg("--release");
    }
    let output = command.output().context("running cargo build")?;
    if !output.status.success() {
        bail!("building the controller binary failed ({})", output.status);
    }
    built_executable(&String::from_utf8_lossy(&output.stdout), "controller")
        .context("cargo build did not report the controller executable")
}

/// The executable of target `name` in cargo's JSON messages.
pub(crate) fn built_executable(messages: &str, name: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == name
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
}

/// Starts the manager in a process group of its own (a Ctrl-C reaches `xtask`, which
/// stops the manager first and the control plane after), told to stop when `xtask` dies.
pub fn spawn_manager(mut command: Command) -> Result<Child> {
    command.process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec. This
    // thread (the main one) lives as long as the manager is wanted.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().context("starting the manager")
}

/// Waits until the manager's `/readyz` passes (caches synced), failing if it exits first.
pub async fn wait_ready(probe_addr: SocketAddr, manager: &mut Child) -> Result<()> {
    let probes = HttpClient::plain(probe_addr);
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if let Some(status) = manager.try_wait()? {
            bail!("the manager exited before becoming ready ({status})");
        }
        if let Ok(reply) = probes.get("/readyz", None).await
            && reply.status.is_success()
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the manager is not ready after {READY_TIMEOUT:?} ({probe_addr}/readyz)");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs until the manager exits or Ctrl-C / SIGTERM arrives; then asks the manager to stop
/// (SIGTERM: it finishes its reconciles, releases its lease, removes its webhook
/// registration) and waits for it.
async fn run_until_interrupted(manager: &mut Child) -> Result<ExitStatus> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut poll = tokio::time::interval(Duration::from_millis(200));
    loop {
        tokio::select! {
            _ = interrupt.recv() => break,
            _ = terminate.recv() => break,
            _ = poll.tick() => {
                if let Some(status) = manager.try_wait()? {
                    return Ok(status);
                }
            }
        }
    }
    println!("\nxtask: stopping the manager");
    stop_manager(manager).await
}

/// SIGTERM, then waits for the manager to exit.
pub async fn stop_manager(manager: &mut Child) -> Result<ExitStatus> {
    let pid = libc::pid_t::try_from(manager.id()).context("the manager's process id")?;
    // SAFETY: signalling our own child, which has not been reaped (try_wait saw it run).
    unsafe { libc::kill(pid, libc::SIGTERM) };
    loop {
        if let Some(status) = manager.try_wait()? {
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const PROBE_FLAG: &str = "--health-probe-bind-address";
const METRICS_FLAG: &str = "--metrics-bind-address";
const WEBHOOK_PORT_FLAG: &str = "--webhook-port";

/// The manager's command line: the user's flags, with the servers' addresses on loopback.
struct ManagerFlags {
    args: Vec<String>,
}

impl ManagerFlags {
    fn new(args: Vec<String>) -> Self {
        Self { args }
    }

    fn push(&mut self, flag: &str) {
        self.args.push(flag.to_owned());
    }

    /// Where `xtask` polls `/readyz`: the user's probe address (on loopback), or a free
    /// loopback port added to the flags.
    fn probe_address(&mut self) -> Result<SocketAddr> {
        let port = match self.on_loopback(PROBE_FLAG)? {
            Some(0) => bail!("{PROBE_FLAG} needs a port: `cargo xtask run` polls /readyz"),
            Some(port) => port,
            None => {
                let port = free_port()?;
                self.args.push(format!("{PROBE_FLAG}=127.0.0.1:{port}"));
                port
            }
        };
        Ok(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// A free webhook port added to the flags unless the user gave one (the default 9443
    /// may be taken on a developer's machine).
    fn webhook_port(&mut self) -> Result<()> {
        if flag_value_at(&self.args, WEBHOOK_PORT_FLAG).is_none() {
            self.args
                .push(format!("{WEBHOOK_PORT_FLAG}={}", free_port()?));
        }
        Ok(())
    }

    /// The port of the `host:port` flag `flag`, `None` when not given. A value without a
    /// host (`:8080`), which the manager reads as every interface, becomes
    /// `127.0.0.1:8080`; an explicit host is the user's choice and kept.
    fn on_loopback(&mut self, flag: &str) -> Result<Option<u16>> {
        let Some((index, start)) = flag_value_at(&self.args, flag) else {
            return Ok(None);
        };
        let value = self.args[index][start..].to_owned();
        let port = value
            .rsplit(':')
            .next()
            .and_then(|port| port.parse::<u16>().ok())
            .with_context(|| format!("{flag}={value} has no port"))?;
        if value.starts_with(':') {
            self.args[index] = format!("{}127.0.0.1{value}", &self.args[index][..start]);
        }
        Ok(Some(port))
    }
}

/// Where the value of `flag` is in `--flag=value` or `--flag value` form: the argument's
/// index, and where the value starts in it.
fn flag_value_at(args: &[String], flag: &str) -> Option<(usize, usize)> {
    args.iter().enumerate().find_map(|(index, arg)| {
        if arg
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='))
        {
            Some((index, flag.len() + 1))
        } else if arg == flag {
            (index + 1 < args.len()).then_some((index + 1, 0))
        } else {
            None
        }
    })
}

/// A loopback port free at the time of asking.
pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn loopback_apiservers_are_recognised() {
        for url in [
            "https://127.0.0.1:41271",
            "https://localhost",
            "https://[::1]:6443/",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "https://10.0.0.1:6443",
            "https://api.example.com",
            "https://[2001:db8::1]",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }

    #[test]
    fn flags_are_found_in_both_forms() {
        let args = strings(&[
            "--leader-elect",
            "--health-probe-bind-address=:9000",
            "--webhook-port",
            "9444",
        ]);
        assert_eq!(
            flag_value_at(&args, PROBE_FLAG),
            Some((1, PROBE_FLAG.len() + 1))
        );
        assert_eq!(flag_value_at(&args, WEBHOOK_PORT_FLAG), Some((3, 0)));
        assert_eq!(flag_value_at(&args, METRICS_FLAG), None);
        // A longer flag with the same prefix is another flag; a flag without its value has none.
        assert_eq!(
            flag_value_at(&strings(&["--webhook-port-x=1"]), WEBHOOK_PORT_FLAG),
            None
        );
        assert_eq!(
            flag_value_at(&strings(&["--webhook-port"]), WEBHOOK_PORT_FLAG),
            None
        );
    }

    #[test]
    fn every_address_given_or_added_is_on_loopback() {
        let mut flags = ManagerFlags::new(strings(&[
            "--health-probe-bind-address=:9000",
            "--metrics-bind-address",
            ":8443",
        ]));
        assert_eq!(
            flags.probe_address().unwrap(),
            "127.0.0.1:9000".parse().unwrap()
        );
        assert_eq!(flags.on_loopback(METRICS_FLAG).unwrap(), Some(8443));
        flags.webhook_port().unwrap();
        let webhook = flag_value_at(&flags.args, WEBHOOK_PORT_FLAG).unwrap();
        let webhook_port = flags.args[webhook.0][webhook.1..].to_owned();
        assert!(webhook_port.parse::<u16>().is_ok(), "{webhook_port}");
        assert_eq!(
            flags.args,
            strings(&[
                "--health-probe-bind-address=127.0.0.1:9000",
                "--metrics-bind-address",
                "127.0.0.1:8443",
                &format!("--webhook-port={webhook_port}"),
            ])
        );

        let mut missing = ManagerFlags::new(Vec::new());
        let probes = missing.probe_address().unwrap();
        assert_eq!(
            missing.on_loopback(METRICS_FLAG).unwrap(),
            None,
            "metrics stay off"
        );
        assert_eq!(
            missing.args,
            strings(&[&format!("--health-probe-bind-address={probes}")])
        );
        assert!(probes.ip().is_loopback());
    }

    #[test]
    fn explicit_hosts_are_kept_and_unusable_probe_addresses_refused() {
        let mut flags = ManagerFlags::new(strings(&["--metrics-bind-address=0.0.0.0:8080"]));
        assert_eq!(flags.on_loopback(METRICS_FLAG).unwrap(), Some(8080));
        assert_eq!(
            flags.args,
            strings(&["--metrics-bind-address=0.0.0.0:8080"])
        );
        for bad in [
            "--health-probe-bind-address=0",
            "--health-probe-bind-address=:none",
        ] {
            let mut flags = ManagerFlags::new(strings(&[bad]));
            assert!(flags.probe_address().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_executable_comes_from_the_compiler_artifact_message() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"name":"api"},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"controller"},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"name":"controller"},"executable":"/t/debug/controller"}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(
            built_executable(&messages, "controller"),
            Some(PathBuf::from("/t/debug/controller"))
        );
        assert_eq!(built_executable(&messages, "xtask"), None);
    }
}

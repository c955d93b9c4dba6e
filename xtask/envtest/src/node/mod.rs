//! A real single-node cluster on this machine, kind's role without a container engine:
//! etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy and the
//! kubelet (all built from the pinned `k8s.io/kubernetes` module), containerd, runc and the
//! CNI plugins from Debian, and a pause image built here.
//!
//! The node runs detached: [`up`] returns once it is Ready and the `default` service
//! account exists, and it keeps running until [`down`], which leaves the machine as it
//! found it (checked: see [`Footprint`]). One node per machine: a second `up` from the same
//! checkout reuses it, from another checkout it is refused.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let node = kubebuilder_envtest::node::shared();
//! let client = node.client().await?;
//! # Ok(()) }
//! ```

mod config;
mod daemon;
mod footprint;
mod images;
pub mod layout;
mod network;
pub mod packages;
mod pki;
mod start;
mod teardown;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use kube::config::{KubeConfigOptions, Kubeconfig};
use serde::{Deserialize, Serialize};

pub use footprint::Footprint;
pub use images::{TestImage, sandbox_image};

use crate::image::ArchivedImage;
use daemon::Daemon;

/// The name of the node's cluster, user and context in a kubeconfig.
pub const CONTEXT_NAME: &str = "kubebuilder-rs-node";

/// What `up` records and `down` reads back (in [`layout::state_file`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    /// The checkout (workspace root) whose `up` started the node.
    owner: PathBuf,
    /// The machine before `up` changed anything.
    baseline: Footprint,
    daemons: Vec<Daemon>,
    ready: bool,
}

impl State {
    fn load() -> Result<Option<State>> {
        match fs::read_to_string(layout::state_file()) {
            Ok(text) => Ok(Some(serde_json::from_str(&text).with_context(|| {
                format!("reading {}", layout::state_file().display())
            })?)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).context("reading the node's state"),
        }
    }

    fn save(&self) -> Result<()> {
        fs::create_dir_all(layout::root())?;
        let path = layout::state_file();
        let staging = path.with_extension("json.partial");
        fs::write(&staging, serde_json::to_vec_pretty(self)?)?;
        fs::rename(&staging, &path)?;
        Ok(())
    }

    fn daemon(&self, name: &str) -> Option<&Daemon> {
        self.daemons.iter().find(|daemon| daemon.name == name)
    }

    /// The first daemon that is not running, if any.
    fn stopped_daemon(&self) -> Option<&Daemon> {
        self.daemons.iter().find(|daemon| !daemon.is_running())
    }
}

/// A handle on the running node.
#[derive(Clone, Debug)]
pub struct Node {
    owner: PathBuf,
}

/// How [`up`] found the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Started {
    /// It was not running: started now.
    New,
    /// It was running and healthy, started by the same checkout: reused.
    Reused,
}

/// Starts the node for the checkout at `owner` (a workspace root), or reuses the one
/// running for it. Fails, starting nothing, when we are not root, a package is missing and
/// cannot be installed, a port is taken, or a node of another checkout runs; a start that
/// fails half-way is torn down before the error is returned.
pub fn up(owner: &Path) -> Result<(Node, Started)> {
    ensure_root()?;
    packages::ensure_node_packages()?;
    let owner = fs::canonicalize(owner).unwrap_or_else(|_| owner.to_path_buf());
    if let Some(state) = State::load()? {
        if state.owner != owner {
            bail!(
                "a local node from another checkout ({}) is running on this machine (one node per \
                 machine: its ports, bridge and containerd socket are machine-wide); stop it with \
                 `cargo xtask cluster down` there, or here",
                state.owner.display()
            );
        }
        match start::health(&state) {
            Ok(()) => return Ok((Node { owner }, Started::Reused)),
            Err(problem) => {
                eprintln!(
                    "node: the node of an earlier run is not healthy ({problem:#}); stopping it first"
                );
                teardown::run()?;
            }
        }
    }
    start::run(&owner)?;
    Ok((Node { owner }, Started::New))
}

/// Stops the node (whichever checkout started it) and removes everything it made: no
/// process, mount, network namespace, bridge, iptables rule, cgroup, sysctl change or
/// directory is left. Fails naming what could not be removed. Nothing running is fine.
pub fn down() -> Result<()> {
    ensure_root()?;
    teardown::run()
}

/// What `cargo xtask cluster status` reports.
#[derive(Clone, Debug)]
pub enum Status {
    /// No node is up: there is no state file.
    NotRunning,
    /// A node is up, healthy or not.
    Running {
        /// The checkout (workspace root) whose `up` started it.
        owner: PathBuf,
        /// Each component and whether its process runs.
        components: Vec<(String, bool)>,
        /// `Ok` when the apiserver answers and the node is Ready.
        health: Result<(), String>,
    },
}

impl Status {
    /// Whether a node is up (see [`Status::Running`]), whatever its health.
    pub fn is_running(&self) -> bool {
        matches!(self, Status::Running { .. })
    }
}

/// The node's state, without changing anything.
pub fn status() -> Result<Status> {
    let Some(state) = State::load()? else {
        return Ok(Status::NotRunning);
    };
    Ok(Status::Running {
        components: state
            .daemons
            .iter()
            .map(|daemon| (daemon.name.clone(), daemon.is_running()))
            .collect(),
        health: start::health(&state).map_err(|error| format!("{error:#}")),
        owner: state.owner,
    })
}

/// The running node, without starting one.
pub fn running() -> Result<Node> {
    match State::load()? {
        Some(state) => Ok(Node { owner: state.owner }),
        None => bail!("no local node is running: start it with `cargo xtask cluster up`"),
    }
}

/// The node for this test binary's checkout: the running one when it is this checkout's
/// (as `cargo xtask test-e2e` starts it), else one started now and stopped when the test
/// binary exits.
///
/// # Panics
/// When the node cannot start: a test that needs it must fail loudly, not skip.
pub fn shared() -> &'static Node {
    static NODE: OnceLock<Result<Node, String>> = OnceLock::new();
    let started = NODE.get_or_init(|| {
        let owner = checkout_of(&std::env::current_dir().unwrap_or_default());
        match up(&owner) {
            Ok((node, Started::Reused)) => Ok(node),
            Ok((node, Started::New)) => {
                teardown::at_exit();
                Ok(node)
            }
            Err(error) => Err(format!("{error:#}")),
        }
    });
    match started {
        Ok(node) => node,
        Err(reason) => panic!("the local node could not start: {reason}"),
    }
}

/// The workspace root at or above `dir` (the nearest `Cargo.toml` with `[workspace]`),
/// or `dir` itself.
fn checkout_of(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|dir| {
            fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.lines().any(|line| line.trim() == "[workspace]"))
        })
        .unwrap_or(dir)
        .to_path_buf()
}

fn ensure_root() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!(
            "the local node needs root: it runs containerd, creates network namespaces, a bridge \
             and iptables rules (run as root, e.g. with sudo)"
        );
    }
    Ok(())
}

impl Node {
    /// The checkout that started the node.
    pub fn owner(&self) -> &Path {
        &self.owner
    }

    /// The admin kubeconfig (in `system:masters`), certificates inline.
    pub fn kubeconfig_path(&self) -> PathBuf {
        layout::kubeconfig_path()
    }

    /// A client for the admin user. Call it inside the Tokio runtime that will use it.
    pub async fn client(&self) -> Result<kube::Client> {
        admin_client().await
    }

    /// Creates a namespace with a unique name starting with `prefix`, for one test.
    pub async fn create_namespace(&self, prefix: &str) -> Result<String> {
        crate::plane::create_namespace(&self.client().await?, prefix).await
    }

    /// Imports every image of an OCI archive (`docker-build`'s, or `podman save --format
    /// oci-archive`'s) into the node.
    pub fn load(&self, archive: &Path) -> Result<Vec<ArchivedImage>> {
        images::import(archive)
    }

    /// The names of the images on the node.
    pub fn images(&self) -> Result<Vec<String>> {
        images::list()
    }

    /// Loads a test image into the node unless it is there already; returns its name.
    pub fn test_image(&self, image: TestImage) -> Result<&'static str> {
        // Tests of one binary ask at once; two imports of the same image race in containerd
        // and the loser fails with "already exists".
        static LOADING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _loading = LOADING
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !images::list()?.iter().any(|name| name == image.name()) {
            images::import(&image.archive()?)?;
        }
        Ok(image.name())
    }

    /// The resident memory of each of the node's processes (daemons, shims, containers):
    /// `(name, KiB)`, largest first.
    pub fn memory(&self) -> Vec<(String, u64)> {
        let mut usage: Vec<(String, u64)> = footprint::node_pids()
            .into_iter()
            .map(|(pid, name)| (name, footprint::rss_kib(pid)))
            .collect();
        usage.sort_by_key(|(_, kib)| std::cmp::Reverse(*kib));
        usage
    }

    /// Where the node's kube-proxy sends new connections to the port named `port` of the
    /// Service `namespace/name` now, as `address:port`. Its rules follow the Service's
    /// EndpointSlices some time after they change: a test that must reach particular pods
    /// through a Service waits for these, not only for the EndpointSlices.
    pub fn service_routes(
        &self,
        namespace: &str,
        name: &str,
        port: &str,
    ) -> Result<std::collections::BTreeSet<String>> {
        network::service_routes(namespace, name, port)
    }

    /// The log of a component (`kubelet`, `containerd`, ...), for failure messages.
    pub fn component_log(&self, name: &str, lines: usize) -> String {
        State::load()
            .ok()
            .flatten()
            .and_then(|state| state.daemon(name).map(|daemon| daemon.log_tail(lines)))
            .unwrap_or_default()
    }
}

/// A client for the node's admin user, from the admin kubeconfig.
async fn admin_client() -> Result<kube::Client> {
    let kubeconfig = Kubeconfig::read_from(layout::kubeconfig_path())?;
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?;
    Ok(kube::Client::try_from(config)?)
}

/// Runs `work` on a runtime of its own in a thread of its own, so that the blocking API
/// works inside and outside a Tokio runtime.
fn block_on<T: Send + 'static>(
    work: impl std::future::Future<Output = Result<T>> + Send + 'static,
) -> Result<T> {
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(work)
    })
    .join()
    .map_err(|_| anyhow::anyhow!("a node task panicked"))?
}

/// How long to wait for one step of starting or stopping.
const STEP_TIMEOUT: Duration = Duration::from_secs(90);

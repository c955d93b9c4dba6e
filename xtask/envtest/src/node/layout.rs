//! Where the local node lives: its directories, ports and networks, in one place.
//!
//! One node per machine: the containerd socket, the pod bridge and the ports are
//! machine-wide, so the paths are fixed (as kind's are inside its container). Every listener
//! is on 127.0.0.1; pods live in network namespaces on a bridge of their own.

use std::path::{Path, PathBuf};

/// Persistent state: PKI, etcd data, the kubelet's and containerd's roots, logs.
pub const ROOT: &str = "/var/lib/kubebuilder-rs/node";
/// Runtime state: sockets, containerd's state (short paths: unix sockets are limited to
/// 108 bytes).
pub const RUN: &str = "/run/kubebuilder-rs/node";

/// The node's name; the kubelet refuses a loopback node IP, so the apiserver reaches the
/// kubelet by this hostname, which resolves to 127.0.0.1.
pub const NODE_NAME: &str = "localhost";

// Ports on 127.0.0.1, the usual ones of each component (kubeadm's and kind's).
/// kube-apiserver's secure (HTTPS) port, the cluster's endpoint in the kubeconfig.
pub const APISERVER_PORT: u16 = 6443;
/// etcd's client port, where kube-apiserver talks to it.
pub const ETCD_CLIENT_PORT: u16 = 2379;
/// etcd's peer port: a single member has no peers, but etcd still listens on it.
pub const ETCD_PEER_PORT: u16 = 2380;
/// The kubelet's API (logs, exec, port-forward), reached by the apiserver.
pub const KUBELET_PORT: u16 = 10250;
/// The kubelet's plain-HTTP `/healthz`.
pub const KUBELET_HEALTHZ_PORT: u16 = 10248;
/// kube-controller-manager's secure port (`/healthz`, `/metrics`).
pub const CONTROLLER_MANAGER_PORT: u16 = 10257;
/// kube-scheduler's secure port (`/healthz`, `/metrics`).
pub const SCHEDULER_PORT: u16 = 10259;
/// kube-proxy's plain-HTTP `/healthz`.
pub const PROXY_HEALTHZ_PORT: u16 = 10256;
/// kube-proxy's plain-HTTP `/metrics`.
pub const PROXY_METRICS_PORT: u16 = 10249;

/// Every port the node listens on, with its owner, checked free before anything starts.
pub const PORTS: [(u16, &str); 9] = [
    (APISERVER_PORT, "kube-apiserver"),
    (ETCD_CLIENT_PORT, "etcd (clients)"),
    (ETCD_PEER_PORT, "etcd (peers)"),
    (KUBELET_PORT, "kubelet"),
    (KUBELET_HEALTHZ_PORT, "kubelet (healthz)"),
    (CONTROLLER_MANAGER_PORT, "kube-controller-manager"),
    (SCHEDULER_PORT, "kube-scheduler"),
    (PROXY_HEALTHZ_PORT, "kube-proxy (healthz)"),
    (PROXY_METRICS_PORT, "kube-proxy (metrics)"),
];

/// ClusterIPs come from here; packets to it that no Service rule translated are refused
/// on this machine, never routed out.
pub const SERVICE_CIDR: &str = "10.96.0.0/12";
/// The `kubernetes` Service's ClusterIP (the first address of the service CIDR).
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";
/// Pod addresses, on the bridge.
pub const POD_CIDR: &str = "10.244.0.0/24";
/// The name of the Linux bridge the pods' veths are attached to.
pub const BRIDGE: &str = "kbrs0";
/// The bridge's address in the pod CIDR: the pods' gateway.
pub const BRIDGE_ADDRESS: &str = "10.244.0.1/24";
/// containerd fetches nothing: its HTTP(S) proxy is this closed loopback port, so a pull
/// is refused at once instead of leaving the machine.
pub const CLOSED_PROXY: &str = "http://127.0.0.1:9";

/// The CNI network's name (also the prefix of CNI's cache files).
pub const CNI_NETWORK: &str = "kubebuilder-rs";

/// [`ROOT`] as a path.
pub fn root() -> &'static Path {
    Path::new(ROOT)
}

/// [`RUN`] as a path.
pub fn run_dir() -> &'static Path {
    Path::new(RUN)
}

/// The node's CA, serving and client certificates, and each component's kubeconfig.
pub fn pki_dir() -> PathBuf {
    root().join("pki")
}

/// Each daemon's output, in `<name>.log`.
pub fn log_dir() -> PathBuf {
    root().join("logs")
}

/// What `up` records (the owning checkout, the machine before it, the daemons) for
/// `down` and `status` to read back; absent when no node is up.
pub fn state_file() -> PathBuf {
    root().join("state.json")
}

/// The cluster-admin kubeconfig `up` writes, pointing at [`APISERVER_PORT`].
pub fn kubeconfig_path() -> PathBuf {
    root().join("admin.kubeconfig")
}

/// containerd's socket: the kubelet's CRI endpoint, and where `ctr` imports images.
pub fn containerd_socket() -> PathBuf {
    run_dir().join("containerd.sock")
}

/// The kubelet's `--root-dir`: pods' volumes and plugins.
pub fn kubelet_root() -> PathBuf {
    root().join("kubelet")
}

/// Directories outside our two roots that the kubelet, containerd or CNI write to
/// whatever they are told (hard-coded upstream); `down` removes them when `up` made them.
pub const FOREIGN_DIRS: [&str; 6] = [
    "/var/lib/kubelet",
    "/var/log/pods",
    "/var/log/containers",
    "/var/lib/cni",
    "/run/netns",
    "/etc/cni",
];

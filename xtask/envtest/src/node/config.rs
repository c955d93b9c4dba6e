//! The node's configuration files: containerd, CNI, the kubelet, kube-proxy and the
//! kubeconfigs of each component. Each flag or setting that differs from a default says
//! why: most were found necessary on this kind of machine (see local-node.md).

use std::path::Path;

use super::layout::{self, *};

/// containerd's configuration: the CRI plugin on our own socket, roots and CNI directory,
/// with the settings this machine needs (no oom_score_adj lowering, no AppArmor, no
/// hugetlb controller, cgroupfs).
pub fn containerd(runc: &Path, sandbox_image: &str) -> String {
    let root = layout::root().join("containerd");
    let state = layout::run_dir().join("containerd");
    let socket = layout::containerd_socket();
    let cni = layout::root().join("cni");
    format!(
        r#"version = 2
root = "{root}"
state = "{state}"

[grpc]
  address = "{socket}"

[debug]
  level = "warn"

[plugins."io.containerd.internal.v1.opt"]
  # The default is /opt/containerd, outside the node's directories.
  path = "{root}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{sandbox_image}"
  # runc cannot lower oom_score_adj here (no CAP_SYS_RESOURCE): without this every sandbox fails.
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # Network namespaces under our state directory rather than /run/netns.
  netns_mounts_under_state_dir = true

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{runc}"
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{cni}/net.d"
    max_conf_num = 1
"#,
        root = root.display(),
        state = state.display(),
        socket = socket.display(),
        cni = cni.display(),
        runc = runc.display(),
    )
}

/// The pod network: one bridge, addresses from [`POD_CIDR`], no masquerading (pods have
/// nowhere to go beyond this machine), hairpin so a pod can reach itself through a Service.
pub fn cni_conflist() -> String {
    let data_dir = layout::root().join("cni/networks");
    format!(
        r#"{{
  "cniVersion": "1.0.0",
  "name": "{CNI_NETWORK}",
  "plugins": [
    {{
      "type": "bridge",
      "bridge": "{BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {{
        "type": "host-local",
        "ranges": [[{{"subnet": "{POD_CIDR}", "gateway": "{gateway}"}}]],
        "routes": [{{"dst": "0.0.0.0/0"}}],
        "dataDir": "{data_dir}"
      }}
    }}
  ]
}}
"#,
        gateway = BRIDGE_ADDRESS.split('/').next().unwrap_or_default(),
        data_dir = data_dir.display(),
    )
}

/// The kubelet: on 127.0.0.1 only, cgroupfs on cgroup v1, no image garbage collection (an
/// image removed cannot be pulled back), no cluster DNS and no resolv.conf for pods
/// (nothing to resolve beyond this machine).
pub fn kubelet() -> String {
    let pki = layout::pki_dir();
    format!(
        r#"apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: {KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: {KUBELET_HEALTHZ_PORT}
containerRuntimeEndpoint: unix://{socket}
cgroupDriver: cgroupfs
# Kubernetes 1.35+ refuses cgroup v1 unless told otherwise; this machine has a hybrid hierarchy.
failCgroupV1: false
failSwapOn: false
# The hard limit of open files here.
maxOpenFiles: 20000
makeIPTablesUtilChains: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {pki}/ca.crt
authorization:
  mode: Webhook
tlsCertFile: {pki}/kubelet-serving.crt
tlsPrivateKeyFile: {pki}/kubelet-serving.key
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
resolvConf: ""
podLogsDir: {pod_logs}
serializeImagePulls: false
registerNode: true
"#,
        socket = layout::containerd_socket().display(),
        pki = pki.display(),
        pod_logs = layout::root().join("pod-logs").display(),
    )
}

/// kube-proxy in iptables mode: Services reach their pods, the apiserver reaches webhook
/// Services; node ports only on the bridge address and never on loopback (which would
/// change `route_localnet` machine-wide); conntrack settings left as they are.
pub fn kube_proxy(kubeconfig: &Path) -> String {
    format!(
        r#"apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: {kubeconfig}
hostnameOverride: {NODE_NAME}
clusterCIDR: {POD_CIDR}
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:{PROXY_HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:{PROXY_METRICS_PORT}
nodePortAddresses: ["{bridge_ip}/32"]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
  masqueradeAll: false
  syncPeriod: 10s
"#,
        kubeconfig = kubeconfig.display(),
        bridge_ip = BRIDGE_ADDRESS.split('/').next().unwrap_or_default(),
    )
}

/// A kubeconfig for the node's apiserver with a client certificate.
pub fn kubeconfig(ca: &Path, cert: &Path, key: &Path) -> String {
    format!(
        r#"apiVersion: v1
kind: Config
clusters:
- name: kubebuilder-rs-node
  cluster:
    server: https://127.0.0.1:{APISERVER_PORT}
    certificate-authority: {ca}
users:
- name: user
  user:
    client-certificate: {cert}
    client-key: {key}
contexts:
- name: kubebuilder-rs-node
  context:
    cluster: kubebuilder-rs-node
    user: user
    namespace: default
current-context: kubebuilder-rs-node
"#,
        ca = ca.display(),
        cert = cert.display(),
        key = key.display(),
    )
}

//! The node's PKI: one CA for serving, client and kubelet certificates (a single-node
//! cluster needs no more), the service-account key pair, and a client certificate and
//! kubeconfig per component, named as the default RBAC bindings expect.

use std::fs;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use base64::Engine as _;
use kubebuilder_runtime::certs::{CertPair, CertificateAuthority};

use super::config;
use super::layout::{self, KUBERNETES_SERVICE_IP, NODE_NAME};

/// The client identities, each bound by Kubernetes' default RBAC (or, for the admin and
/// the apiserver's kubelet client, in `system:masters`): file name, user (CN), group (O).
fn identities() -> [(&'static str, String, Option<&'static str>); 6] {
    [
        ("admin", "kubernetes-admin".into(), Some("system:masters")),
        (
            "kube-controller-manager",
            "system:kube-controller-manager".into(),
            None,
        ),
        ("kube-scheduler", "system:kube-scheduler".into(), None),
        ("kube-proxy", "system:kube-proxy".into(), None),
        (
            "kubelet",
            format!("system:node:{NODE_NAME}"),
            Some("system:nodes"),
        ),
        (
            "apiserver-kubelet-client",
            "kube-apiserver-kubelet-client".into(),
            Some("system:masters"),
        ),
    ]
}

/// Writes the CA, the serving certificates, the service-account keys, each component's
/// client certificate and kubeconfig into the PKI directory, and the admin kubeconfig
/// (certificates inline, so it can be merged into a user's kubeconfig).
pub fn write() -> Result<()> {
    let dir = layout::pki_dir();
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))?;
    let ca = CertificateAuthority::new("kubebuilder-rs-node-ca")?;
    write_pair(&dir, "ca", &ca.pair())?;
    write_pair(
        &dir,
        "sa",
        &CertificateAuthority::new("kubebuilder-rs-node-service-accounts")?.pair(),
    )?;

    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let service_ip: IpAddr = KUBERNETES_SERVICE_IP.parse()?;
    let apiserver = ca.issue_server(
        &[
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ],
        &[loopback, service_ip],
    )?;
    write_pair(&dir, "apiserver", &apiserver)?;
    write_pair(
        &dir,
        "kubelet-serving",
        &ca.issue_server(&[NODE_NAME], &[loopback])?,
    )?;

    for (file, user, group) in identities() {
        let pair = ca.issue_client(&user, group)?;
        write_pair(&dir, file, &pair)?;
        fs::write(
            kubeconfig_of(file),
            config::kubeconfig(
                &dir.join("ca.crt"),
                &dir.join(format!("{file}.crt")),
                &dir.join(format!("{file}.key")),
            ),
        )?;
    }
    let admin = CertPair {
        cert_pem: fs::read_to_string(dir.join("admin.crt"))?,
        key_pem: fs::read_to_string(dir.join("admin.key"))?,
    };
    fs::write(
        layout::kubeconfig_path(),
        admin_kubeconfig(&ca.cert_pem(), &admin),
    )?;
    fs::set_permissions(layout::kubeconfig_path(), fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// The kubeconfig file of a component (by its identity's file name).
pub fn kubeconfig_of(file: &str) -> PathBuf {
    layout::pki_dir().join(format!("{file}.kubeconfig"))
}

fn write_pair(dir: &Path, name: &str, pair: &CertPair) -> Result<()> {
    fs::write(dir.join(format!("{name}.crt")), &pair.cert_pem)?;
    let key = dir.join(format!("{name}.key"));
    fs::write(&key, &pair.key_pem)?;
    fs::set_permissions(&key, fs::Permissions::from_mode(0o600))?;
    Ok(())
}

/// The admin's kubeconfig with everything inline; cluster, user and context are all named
/// `kubebuilder-rs-node`, so merging it into another kubeconfig adds one entry of each.
fn admin_kubeconfig(ca_pem: &str, admin: &CertPair) -> String {
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n    server: https://127.0.0.1:{port}\n    \
         certificate-authority-data: {ca}\nusers:\n- name: {name}\n  user:\n    client-certificate-data: {cert}\n    \
         client-key-data: {key}\ncontexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    \
         namespace: default\ncurrent-context: {name}\n",
        name = super::CONTEXT_NAME,
        port = layout::APISERVER_PORT,
        ca = encode(ca_pem),
        cert = encode(&admin.cert_pem),
        key = encode(&admin.key_pem),
    )
}

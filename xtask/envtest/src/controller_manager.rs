//! kube-controller-manager: the flags it runs with wherever it runs (a control plane that
//! asks for it, the local node), and its start beside a control plane's apiserver.
//!
//! An apiserver alone stores objects and nothing acts on them: a Deployment gets no
//! ReplicaSet, an object whose owner is deleted stays. The controller-manager is what
//! does that in a cluster, and it needs no root: it is a client of the apiserver with a
//! loopback server of its own for its health and metrics.

use std::fs;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kubebuilder_runtime::certs::CertificateAuthority;

use crate::http_client::HttpClient;
use crate::plane::{free_port, kubeconfig_yaml, wait_for_probe, with_new_ports, write_pair};
use crate::process::Process;

/// The user the controller-manager authenticates as: Kubernetes' default RBAC binds it
/// the `system:kube-controller-manager` role (creating each controller's service account
/// and token, reading its server's authentication configuration).
const USER: &str = "system:kube-controller-manager";

/// Which controllers a control plane's kube-controller-manager runs (its `--controllers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerManager {
    controllers: Vec<String>,
}

impl ControllerManager {
    /// Every controller that is on by default (`--controllers=*`), as in a cluster: what a
    /// person running an operator against the plane expects (Deployments get Pods, namespaces
    /// are emptied and removed, each namespace gets its `default` service account).
    pub fn defaults() -> Self {
        Self::only(&["*"])
    }

    /// Only the controllers named, by kube-controller-manager's names
    /// (`deployment-controller`, `replicaset-controller`, `garbage-collector-controller`,
    /// ...): less to start and less CPU for a test that needs only these. An unknown name
    /// fails the start with kube-controller-manager's own complaint.
    pub fn only(controllers: &[&str]) -> Self {
        Self {
            controllers: controllers.iter().map(|name| (*name).to_owned()).collect(),
        }
    }
}

impl Default for ControllerManager {
    fn default() -> Self {
        Self::defaults()
    }
}

/// The files and port a kube-controller-manager runs with. Wherever it runs, it acts as
/// [`USER`] only to set up, and each controller with a service account of its own
/// (`--use-service-account-credentials`), so each has its own RBAC role as in a cluster; it
/// runs alone (no leader election) and serves on 127.0.0.1 only.
pub(crate) struct Flags<'a> {
    /// The kubeconfig of its own identity, also used to delegate the authentication and
    /// authorization of requests to its server.
    pub kubeconfig: &'a Path,
    /// Its HTTPS server's port (health and metrics) on 127.0.0.1.
    pub secure_port: u16,
    /// The key the apiserver verifies service-account tokens with (the token controller's).
    pub service_account_key: &'a Path,
    /// The CA that signed the apiserver's serving certificate, published to every namespace
    /// (`kube-root-ca.crt`).
    pub root_ca: &'a Path,
    /// The CA that signs approved CertificateSigningRequests: certificate and key.
    pub signing_ca: (&'a Path, &'a Path),
    /// The controllers to run.
    pub controllers: &'a ControllerManager,
}

impl Flags<'_> {
    /// The command line.
    pub fn args(&self) -> Vec<String> {
        let kubeconfig = self.kubeconfig.display();
        let (signing_cert, signing_key) = self.signing_ca;
        vec![
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={}", self.secure_port),
            "--use-service-account-credentials".into(),
            format!(
                "--service-account-private-key-file={}",
                self.service_account_key.display()
            ),
            format!("--root-ca-file={}", self.root_ca.display()),
            format!("--cluster-signing-cert-file={}", signing_cert.display()),
            format!("--cluster-signing-key-file={}", signing_key.display()),
            format!("--controllers={}", self.controllers.controllers.join(",")),
            "--leader-elect=false".into(),
            "--profiling=false".into(),
        ]
    }
}

/// What the controller-manager needs of the control plane's apiserver.
pub(crate) struct Apiserver<'a> {
    /// `https://127.0.0.1:<port>`.
    pub url: &'a str,
    /// The CA of its serving certificate, PEM.
    pub serving_ca_pem: &'a str,
    /// The CA it trusts client certificates of: it issues the controller-manager's, and
    /// signs approved CertificateSigningRequests (so what it signs authenticates).
    pub client_ca: &'a CertificateAuthority,
    /// Its service-account signing key, PEM file.
    pub service_account_key: &'a Path,
}

/// Starts kube-controller-manager against `apiserver`, its files in `work_dir` (its log
/// `kube-controller-manager.log`), and waits until it has built its controllers. Fails
/// with the end of its log when it exits or is not there within `timeout`.
pub(crate) fn start(
    binary: &Path,
    controllers: &ControllerManager,
    apiserver: &Apiserver<'_>,
    work_dir: &Path,
    timeout: Duration,
) -> Result<Process> {
    let dir = work_dir.join("kube-controller-manager");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let identity = apiserver.client_ca.issue_client(USER, None)?;
    let kubeconfig = dir.join("kubeconfig");
    fs::write(
        &kubeconfig,
        kubeconfig_yaml(apiserver.url, apiserver.serving_ca_pem, &identity),
    )?;
    let root_ca = dir.join("root-ca.crt");
    fs::write(&root_ca, apiserver.serving_ca_pem)?;
    write_pair(&dir, "signing-ca", &apiserver.client_ca.pair())?;

    with_new_ports("kube-controller-manager", || {
        let port = free_port()?;
        let mut args = Flags {
            kubeconfig: &kubeconfig,
            secure_port: port,
            service_account_key: apiserver.service_account_key,
            root_ca: &root_ca,
            signing_ca: (&dir.join("signing-ca.crt"), &dir.join("signing-ca.key")),
            controllers,
        }
        .args();
        // The volume controllers create their FlexVolume directory if it is missing: by
        // default under /usr/libexec, which is not the plane's to write.
        args.push(format!(
            "--flex-volume-plugin-dir={}",
            dir.join("volume-plugins").display()
        ));
        let mut process = Process::spawn(
            "kube-controller-manager",
            binary,
            &args,
            work_dir.join("kube-controller-manager.log"),
        )?;
        wait_controllers_built(&mut process, port, Instant::now() + timeout)?;
        Ok(process)
    })
}

/// Waits until the controller-manager on `port` has built its controllers. Its `/healthz`
/// answers as soon as it listens, with a `ping` check only; it gets one check per
/// controller once it has built them, which takes its credentials and the apiserver's
/// discovery: then it watches and acts.
fn wait_controllers_built(process: &mut Process, port: u16, deadline: Instant) -> Result<()> {
    // Its certificate is self-signed; the probe only asks for its state, on loopback.
    let server = HttpClient::tls_unverified(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    wait_for_probe(process, async move {
        loop {
            let answer = match server.get("/healthz?verbose", None).await {
                Ok(reply) if reply.status.is_success() && lists_controllers(&reply.text()) => {
                    return Ok(());
                }
                Ok(reply) => format!("{}: {}", reply.status, reply.text()),
                Err(error) => error.to_string(),
            };
            if Instant::now() > deadline {
                bail!(
                    "kube-controller-manager built no controllers before the deadline; its \
                     /healthz?verbose said: {answer}"
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// Whether a verbose `/healthz` body (`[+]name ok` per check) lists a check other than
/// `ping`: one of the controllers'.
fn lists_controllers(healthz: &str) -> bool {
    healthz
        .lines()
        .filter_map(|line| line.strip_prefix("[+]").or(line.strip_prefix("[-]")))
        .filter_map(|check| check.split_whitespace().next())
        .any(|name| name != "ping")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_controller_checks_mean_the_controllers_are_built() {
        assert!(!lists_controllers("[+]ping ok\nhealthz check passed\n"));
        assert!(!lists_controllers(""));
        assert!(lists_controllers(
            "[+]serviceaccount-token-controller ok\n[+]garbage-collector-controller ok\nhealthz check passed\n"
        ));
        assert!(lists_controllers(
            "[-]garbage-collector-controller failed: reason withheld\nhealthz check failed\n"
        ));
    }

    #[test]
    fn the_controllers_asked_for_are_its_controllers_flag() {
        let flags = |controllers: &ControllerManager| {
            Flags {
                kubeconfig: Path::new("/k"),
                secure_port: 1,
                service_account_key: Path::new("/sa.key"),
                root_ca: Path::new("/ca.crt"),
                signing_ca: (Path::new("/s.crt"), Path::new("/s.key")),
                controllers,
            }
            .args()
        };
        assert!(flags(&ControllerManager::defaults()).contains(&"--controllers=*".to_owned()));
        let some = ControllerManager::only(&["deployment-controller", "replicaset-controller"]);
        assert!(
            flags(&some)
                .contains(&"--controllers=deployment-controller,replicaset-controller".to_owned())
        );
    }

    /// A controller-manager that cannot start fails the start with its own words, from the
    /// end of its log. An unknown controller is refused before it contacts the apiserver,
    /// so none is needed here.
    #[test]
    fn a_controller_manager_that_exits_fails_the_start_with_its_log() {
        let binary = crate::assets::find_controller_manager().unwrap();
        let work_dir = tempfile::tempdir().unwrap();
        let client_ca = CertificateAuthority::new("test-client-ca").unwrap();
        let service_account_key = work_dir.path().join("sa.key");
        fs::write(&service_account_key, client_ca.pair().key_pem).unwrap();
        let serving_ca = CertificateAuthority::new("test-serving-ca").unwrap();
        let apiserver = Apiserver {
            url: "https://127.0.0.1:1",
            serving_ca_pem: &serving_ca.cert_pem(),
            client_ca: &client_ca,
            service_account_key: &service_account_key,
        };
        let error = start(
            &binary,
            &ControllerManager::only(&["no-such-controller"]),
            &apiserver,
            work_dir.path(),
            Duration::from_secs(30),
        )
        .err()
        .expect("an unknown controller is refused");
        let message = format!("{error:#}");
        assert!(
            message.contains("kube-controller-manager exited"),
            "{message}"
        );
        // klog quotes the error, escaping the quotes around the name.
        assert!(
            message.contains(r#"no-such-controller\" is not in the list of known controllers"#),
            "{message}"
        );
    }
}

//! `cargo xtask envtest start` / `stop`: a long-lived control plane for people, started once
//! however often `start` runs, reachable through the kubeconfig it prints, gone after `stop`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

fn xtask(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("KUBEBUILDER_LOCAL_PLANE_DIR", dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "xtask {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn exported_kubeconfig(output: &Output) -> PathBuf {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("export KUBECONFIG="))
        .unwrap_or_else(|| panic!("no export line in {stdout:?}"));
    PathBuf::from(line)
}

fn server_pid(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("pid")).unwrap()
}

/// Whether the process exists and is not a zombie (the server was started detached, so its
/// exit is reaped by init, maybe a little later).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
        !state.starts_with('Z')
    })
}

#[tokio::test]
async fn start_twice_gives_one_control_plane_and_stop_ends_it() {
    let dir = tempfile::tempdir().unwrap();

    let first = xtask(dir.path(), &["envtest", "start"]);
    let kubeconfig = exported_kubeconfig(&first);
    let pid = server_pid(dir.path());

    let second = xtask(dir.path(), &["envtest", "start"]);
    assert_eq!(exported_kubeconfig(&second), kubeconfig);
    assert!(String::from_utf8_lossy(&second.stderr).contains("already running"));
    assert_eq!(server_pid(dir.path()), pid, "a second server was started");

    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&kubeconfig).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    let namespaces: Api<Namespace> = Api::all(kube::Client::try_from(config).unwrap());
    assert!(namespaces.get_opt("default").await.unwrap().is_some());

    xtask(dir.path(), &["envtest", "stop"]);
    assert!(!dir.path().join("pid").exists());
    assert!(
        !running(pid.trim()),
        "the control plane server (pid {pid}) is still running"
    );
    let again = xtask(dir.path(), &["envtest", "stop"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("no local control plane is running"));
}

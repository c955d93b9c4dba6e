//! `cargo xtask envtest start` / `stop`: a long-lived control plane for people, started once
//! however often `start` runs, reachable through the kubeconfig it prints, gone after `stop`,
//! its files in the target directory cargo uses (`CARGO_TARGET_DIR` honoured).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

/// `xtask <args>` with `target_dir` as cargo's target directory.
fn xtask(target_dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir)
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
    let target = tempfile::tempdir().unwrap();
    let target = target.path();
    let dir = target.join("envtest-local");

    let first = xtask(target, &["envtest", "start"]);
    let kubeconfig = exported_kubeconfig(&first);
    assert!(
        kubeconfig.starts_with(&dir),
        "{} is not in {}",
        kubeconfig.display(),
        dir.display()
    );
    let pid = server_pid(&dir);

    let second = xtask(target, &["envtest", "start"]);
    assert_eq!(exported_kubeconfig(&second), kubeconfig);
    assert!(String::from_utf8_lossy(&second.stderr).contains("already running"));
    assert_eq!(server_pid(&dir), pid, "a second server was started");

    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::read_from(&kubeconfig).unwrap(),
        &KubeConfigOptions::default(),
    )
    .await
    .unwrap();
    let namespaces: Api<Namespace> = Api::all(kube::Client::try_from(config).unwrap());
    assert!(namespaces.get_opt("default").await.unwrap().is_some());

    xtask(target, &["envtest", "stop"]);
    assert!(!dir.join("pid").exists());
    assert!(
        !running(pid.trim()),
        "the control plane server (pid {pid}) is still running"
    );
    let again = xtask(target, &["envtest", "stop"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("no local control plane is running"));
}

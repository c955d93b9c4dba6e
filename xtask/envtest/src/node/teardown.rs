//! Stopping the node and removing everything it made, from any state: after a clean run,
//! after a failed start, after `kill -9` of any component (the kubelet included) or of the
//! process that started it. The order matters: nothing may recreate pods while they are
//! removed, containers go before the runtime, mounts before directories.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::api::{DeleteParams, ListParams};

use super::daemon::{self, Daemon};
use super::footprint::{self, Footprint};
use super::layout::{self, BRIDGE, CNI_NETWORK};
use super::{State, admin_client, block_on, network};

/// Stops the node and cleans up; fails listing whatever is still there afterwards.
pub fn run() -> Result<()> {
    let state = match State::load() {
        Ok(state) => state,
        Err(error) => {
            eprintln!("node: {error:#}; cleaning up without it");
            None
        }
    };
    let baseline = match &state {
        Some(state) => state.baseline.clone(),
        None if nothing_to_clean() => {
            eprintln!("node: no local node is running");
            return Ok(());
        }
        None => without_node(&Footprint::capture()),
    };
    let daemons = state.map(|state| state.daemons).unwrap_or_default();
    let find = |name: &str| daemons.iter().find(|daemon| daemon.name == name);
    let stop = |name: &str| {
        if let Some(daemon) = find(name) {
            daemon.stop(Duration::from_secs(10));
        }
    };

    // Nothing recreates or reschedules pods while they go.
    stop("kube-controller-manager");
    stop("kube-scheduler");
    if find("kubelet").is_some_and(Daemon::is_running) {
        drain_pods();
    }
    stop("kubelet");
    stop("kube-proxy");
    if find("containerd").is_some_and(Daemon::is_running) {
        remove_containers();
    }
    stop("containerd");
    stop("kube-apiserver");
    stop("etcd");

    kill_node_processes();
    unmount_node_mounts(&baseline);
    remove_network_namespaces(&baseline);
    remove_pod_cgroups(&baseline);
    network::remove();
    network::remove_rules_added_since(&baseline.iptables);
    remove_empty_nft_tables(&baseline);
    restore_sysctls(&baseline);
    remove_directories(&baseline);

    let left = Footprint::capture().left_over(&baseline);
    if !left.is_empty() {
        bail!(
            "`down` could not remove everything the node made:\n  {}",
            left.join("\n  ")
        );
    }
    eprintln!("node: stopped; nothing left behind");
    Ok(())
}

/// Registers a teardown at process exit (for a node a test binary started).
pub fn at_exit() {
    extern "C" fn teardown_at_exit() {
        if let Err(error) = run() {
            eprintln!("node: {error:#}");
        }
    }
    // SAFETY: registering a plain `extern "C" fn` with no captured state.
    unsafe {
        libc::atexit(teardown_at_exit);
    }
}

/// Whether no trace of a node exists (no state, no directories, no processes, no bridge).
fn nothing_to_clean() -> bool {
    !layout::root().exists()
        && !layout::run_dir().exists()
        && footprint::node_processes().is_empty()
        && !Path::new("/sys/class/net").join(BRIDGE).exists()
}

/// The machine as it would be without a node, for a cleanup that has lost its state: the
/// node's processes, mounts, bridge, chains and pod cgroups removed from what is there now.
fn without_node(now: &Footprint) -> Footprint {
    let ours = |item: &String| {
        item.contains(layout::ROOT)
            || item.contains(layout::RUN)
            || item.contains("kubepods")
            || item.contains("KBRS-NODE")
            || item.contains("KUBE-")
            || item == BRIDGE
    };
    let keep =
        |items: &BTreeSet<String>| items.iter().filter(|item| !ours(item)).cloned().collect();
    Footprint {
        processes: BTreeSet::new(),
        mounts: keep(&now.mounts),
        network_namespaces: now
            .network_namespaces
            .iter()
            .filter(|name| !name.starts_with("cni-"))
            .cloned()
            .collect(),
        links: keep(&now.links),
        iptables: keep(&now.iptables),
        nftables: now.nftables.clone(),
        cgroups: keep(&now.cgroups),
        sysctls: now.sysctls.clone(),
        dirs: now
            .dirs
            .iter()
            .filter(|dir| !dir.contains("kubebuilder-rs"))
            .cloned()
            .collect(),
    }
}

/// Deletes every pod at once (grace 0) and waits, up to 30 s, for the kubelet to stop
/// their containers and release their mounts, cgroups and network namespaces.
fn drain_pods() {
    let deleted = block_on(async {
        let client = admin_client().await?;
        let namespaces: Api<Namespace> = Api::all(client.clone());
        for namespace in namespaces.list(&ListParams::default()).await? {
            let name = namespace.metadata.name.unwrap_or_default();
            let pods: Api<Pod> = Api::namespaced(client.clone(), &name);
            pods.delete_collection(
                &DeleteParams::default().grace_period(0),
                &ListParams::default(),
            )
            .await?;
        }
        Ok(())
    });
    if let Err(error) = deleted {
        eprintln!(
            "node: could not delete the pods ({error:#}); removing their containers directly"
        );
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        // No container runs: the kubelet has stopped every pod (the containers' records
        // go with containerd's directory).
        if ctr_ids(&["tasks", "list", "--quiet"]).is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    eprintln!("node: containers still ran 30 s after their pods' deletion; killing them");
}

/// Kills and removes every container containerd still has (the kubelet is gone).
fn remove_containers() {
    for id in ctr_ids(&["tasks", "list", "--quiet"]) {
        let _ = ctr(&["tasks", "kill", "--signal", "SIGKILL", &id]);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let tasks = ctr_ids(&["tasks", "list", "--quiet"]);
        for id in &tasks {
            let _ = ctr(&["tasks", "delete", "--force", id]);
        }
        if tasks.is_empty() || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    for id in ctr_ids(&["containers", "list", "--quiet"]) {
        let _ = ctr(&["containers", "delete", &id]);
    }
}

fn ctr(args: &[&str]) -> Option<String> {
    let output = Command::new("ctr")
        .arg("--address")
        .arg(layout::containerd_socket())
        .args(["--connect-timeout", "3s", "--namespace", "k8s.io"])
        .args(args)
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn ctr_ids(args: &[&str]) -> Vec<String> {
    ctr(args)
        .map(|out| {
            out.lines()
                .map(|line| line.trim().to_owned())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// SIGKILL for every process of the node still alive (containerd's shims and the
/// containers they ran, when their daemons died first), until none is left.
fn kill_node_processes() {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids: Vec<i32> = footprint::node_pids()
            .into_iter()
            .map(|(pid, _)| pid)
            .collect();
        if pids.is_empty() || Instant::now() > deadline {
            return;
        }
        for pid in pids {
            daemon::signal(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Unmounts (lazily, deepest first) every mount under the node's directories and every
/// network namespace mount that was not there before.
fn unmount_node_mounts(baseline: &Footprint) {
    for _ in 0..3 {
        let mut ours: Vec<String> = footprint::mounts()
            .difference(&baseline.mounts)
            .filter(|mount| {
                mount.starts_with(layout::ROOT)
                    || mount.starts_with(layout::RUN)
                    || mount.starts_with("/run/netns/")
                    || mount.starts_with("/var/lib/kubelet")
            })
            .cloned()
            .collect();
        if ours.is_empty() {
            return;
        }
        ours.sort_by_key(|mount| std::cmp::Reverse(mount.len()));
        for mount in ours {
            if let Ok(path) = CString::new(mount) {
                // SAFETY: umount2 on a path we own; MNT_DETACH never blocks.
                unsafe {
                    libc::umount2(path.as_ptr(), libc::MNT_DETACH);
                }
            }
        }
    }
}

fn remove_network_namespaces(baseline: &Footprint) {
    let now = Footprint::capture().network_namespaces;
    for name in now.difference(&baseline.network_namespaces) {
        let _ = fs::remove_file(Path::new("/run/netns").join(name));
    }
}

/// Removes the kubelet's pod cgroups in every hierarchy, deepest first (a cgroup can only
/// go once it has no children and no processes).
fn remove_pod_cgroups(baseline: &Footprint) {
    for _ in 0..20 {
        let mut ours: Vec<String> = Footprint::capture()
            .cgroups
            .difference(&baseline.cgroups)
            .cloned()
            .collect();
        if ours.is_empty() {
            return;
        }
        ours.sort_by_key(|dir| std::cmp::Reverse(dir.matches('/').count()));
        for dir in ours {
            let _ = fs::remove_dir(dir);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Deletes the nftables tables iptables-nft made for the node's rules, once they hold no
/// rule (iptables itself never removes a table).
fn remove_empty_nft_tables(baseline: &Footprint) {
    for table in footprint::nft_tables().difference(&baseline.nftables) {
        let Some(spec) = table.strip_prefix("table ") else {
            continue;
        };
        let args: Vec<&str> = spec.split(' ').collect();
        let listing = Command::new("nft")
            .arg("list")
            .arg("table")
            .args(&args)
            .output();
        let empty = listing.is_ok_and(|out| {
            out.status.success()
                && !String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::trim)
                    .any(|line| {
                        !(line.is_empty()
                            || line == "}"
                            || line.starts_with("table ")
                            || line.starts_with("chain ")
                            || line.starts_with("type "))
                    })
        });
        if empty {
            let _ = Command::new("nft")
                .arg("delete")
                .arg("table")
                .args(&args)
                .output();
        }
    }
}

fn restore_sysctls(baseline: &Footprint) {
    for (name, value) in &baseline.sysctls {
        if footprint::read_sysctl(name).as_deref() != Some(value.as_str())
            && let Err(error) = network::write_sysctl(name, value)
        {
            eprintln!("node: {error:#}");
        }
    }
}

/// Removes the node's directories, the directories outside them it made, and CNI's cache
/// entries for its network in a cache directory that existed before.
fn remove_directories(baseline: &Footprint) {
    for dir in [layout::RUN, layout::ROOT] {
        let _ = fs::remove_dir_all(dir);
        if let Some(parent) = Path::new(dir).parent() {
            let _ = fs::remove_dir(parent);
        }
    }
    for dir in layout::FOREIGN_DIRS {
        if !baseline.dirs.contains(dir) {
            let _ = fs::remove_dir_all(dir);
        }
    }
    if let Ok(entries) = fs::read_dir("/var/lib/cni/results") {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(CNI_NETWORK) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

//! The local node itself, on this machine: it starts, runs real pods, keeps every packet on
//! the machine, refuses what it must, and `down` leaves nothing behind — after a clean run
//! and after `kill -9` of the kubelet. Needs root; run by `cargo xtask test-e2e` (these
//! tests start and stop nodes, so they run one at a time, with no other node running).

#![cfg(feature = "e2e")]

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use kubebuilder_envtest::eventually;
use kubebuilder_envtest::node::{self, Footprint, Started, TestImage, layout};

/// One node per machine: the tests take turns.
static MACHINE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn checkout() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("the workspace root")
}

/// A pod running `command` in busybox, never restarted.
fn busybox_pod(name: &str, command: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "main",
                "image": TestImage::Busybox.name(),
                "imagePullPolicy": "Never",
                "command": ["/bin/sh", "-c", command],
            }],
        },
    }))
    .unwrap()
}

/// Waits until pod `name` reaches `wanted`; the panic shows the pod and the kubelet's log.
async fn wait_for_phase(node: &node::Node, pods: &Api<Pod>, name: &str, wanted: &str) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let pod = pods.get(name).await.ok();
        let phase = pod.as_ref().and_then(|p| p.status.as_ref()?.phase.clone());
        if phase.as_deref() == Some(wanted) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "pod {name} not {wanted}: {:?}\nkubelet log:\n{}",
            pod.and_then(|p| p.status),
            node.component_log("kubelet", 30)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

fn up() -> node::Node {
    let (node, started) = node::up(checkout()).expect("the node starts");
    assert_eq!(started, Started::New);
    node
}

/// Starts a pod that keeps running, and waits until it does.
async fn start_sleeper(node: &node::Node) -> Api<Pod> {
    node.test_image(TestImage::Busybox).unwrap();
    let pods: Api<Pod> = Api::namespaced(node.client().await.unwrap(), "default");
    pods.create(
        &PostParams::default(),
        &busybox_pod("sleeper", "sleep 3600"),
    )
    .await
    .unwrap();
    wait_for_phase(node, &pods, "sleeper", "Running").await;
    pods
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_runs_pods_and_down_leaves_the_machine_as_it_was() {
    let _machine = MACHINE.lock().await;
    node::down().unwrap();
    let baseline = Footprint::capture();
    let node = up();

    let pods = start_sleeper(&node).await;
    // A pod that finishes: Succeeded, its log readable through the kubelet.
    pods.create(
        &PostParams::default(),
        &busybox_pod("hello", "echo hello from the node"),
    )
    .await
    .unwrap();
    wait_for_phase(&node, &pods, "hello", "Succeeded").await;
    let log = pods.logs("hello", &Default::default()).await.unwrap();
    assert_eq!(log.trim(), "hello from the node");
    assert_ne!(
        Footprint::capture().left_over(&baseline),
        Vec::<String>::new()
    );

    node::down().unwrap();
    let left = Footprint::capture().left_over(&baseline);
    assert!(left.is_empty(), "left after down: {left:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn down_after_kill_9_of_the_kubelet_leaves_nothing() {
    let _machine = MACHINE.lock().await;
    node::down().unwrap();
    let baseline = Footprint::capture();
    let node = up();
    start_sleeper(&node).await;

    let kubelet = kubelet_pid();
    // SAFETY: signalling the node's kubelet, found by its command line.
    unsafe {
        libc::kill(kubelet, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let node::Status::Running { components, .. } = node::status().unwrap() else {
            panic!("the node's state is gone after killing the kubelet");
        };
        if components.contains(&("kubelet".to_owned(), false)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the kubelet still runs: {components:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    node::down().unwrap();
    let left = Footprint::capture().left_over(&baseline);
    assert!(left.is_empty(), "left after down: {left:#?}");
}

fn kubelet_pid() -> i32 {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .is_ok_and(|exe| exe.file_name().is_some_and(|name| name == "kubelet"))
        })
        .expect("a kubelet process")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_node_is_reused_and_keeps_every_packet_on_the_machine() {
    let _machine = MACHINE.lock().await;
    node::down().unwrap();
    let node = up();

    // A second `up` from the same checkout reuses the node; another checkout is refused.
    let (_, again) = node::up(checkout()).unwrap();
    assert_eq!(again, Started::Reused);
    let other = tempfile::tempdir().unwrap();
    let refused = node::up(other.path()).unwrap_err().to_string();
    assert!(refused.contains("another checkout"), "{refused}");
    assert!(
        refused.contains(&checkout().display().to_string()),
        "{refused}"
    );

    // Every listener of the node's processes on this machine is on loopback.
    let listeners = node_listeners();
    assert!(
        listeners.len() >= 9,
        "too few listeners found: {listeners:?}"
    );
    for (process, address) in &listeners {
        assert!(
            address.starts_with("127.0.0.1:") || address.starts_with("[::1]:"),
            "{process} listens on {address}"
        );
    }

    // An unassigned ClusterIP is refused at once, from this machine...
    let unassigned: SocketAddr = "10.96.200.200:80".parse().unwrap();
    let started = Instant::now();
    let error = TcpStream::connect_timeout(&unassigned, Duration::from_secs(5)).unwrap_err();
    assert_eq!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused,
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // ... and from a pod, which cannot reach beyond the bridge either (192.0.2.1 is the
    // TEST-NET-1 documentation address: a refusal proves the packet never left).
    node.test_image(TestImage::Busybox).unwrap();
    let pods: Api<Pod> = Api::namespaced(node.client().await.unwrap(), "default");
    let probe = "for target in 10.96.200.200 192.0.2.1; do \
                 echo \"$target $(nc -w 3 $target 80 </dev/null 2>&1 && echo open)\"; done";
    pods.create(&PostParams::default(), &busybox_pod("egress", probe))
        .await
        .unwrap();
    wait_for_phase(&node, &pods, "egress", "Succeeded").await;
    let log = pods.logs("egress", &Default::default()).await.unwrap();
    for target in ["10.96.200.200", "192.0.2.1"] {
        let line = log
            .lines()
            .find(|l| l.starts_with(target))
            .unwrap_or_default();
        assert!(
            ["refused", "unreachable", "prohibited", "No route"]
                .iter()
                .any(|why| line.contains(why)),
            "{target} from a pod: {log}"
        );
    }

    // The in-cluster address of the apiserver works from a pod, unmodified.
    let in_cluster =
        "nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT </dev/null && echo reachable";
    pods.create(
        &PostParams::default(),
        &busybox_pod("apiserver", in_cluster),
    )
    .await
    .unwrap();
    // (Succeeded only if nc connected: the pod reached the apiserver's ClusterIP.)
    wait_for_phase(&node, &pods, "apiserver", "Succeeded").await;

    // A pull never leaves the machine: containerd's proxy is a closed loopback port.
    let mut pull = busybox_pod("pull", "true");
    let container = &mut pull.spec.as_mut().unwrap().containers[0];
    container.image = Some("registry.invalid/nothing:1".into());
    container.image_pull_policy = Some("Always".into());
    pods.create(&PostParams::default(), &pull).await.unwrap();
    let message = eventually(
        "the pull refused by the closed proxy",
        Duration::from_secs(60),
        || async {
            let pod = pods.get("pull").await.ok()?;
            let waiting = pod
                .status?
                .container_statuses?
                .first()?
                .state
                .clone()?
                .waiting?;
            waiting.message.filter(|m| m.contains("127.0.0.1:9"))
        },
    )
    .await;
    assert!(message.contains("refused"), "{message}");
    let _ = pods.delete("pull", &DeleteParams::default()).await;

    node::down().unwrap();
}

/// `(process, address)` of every TCP listener of the node's processes in this machine's
/// network namespace (pods' own listeners are in theirs).
fn node_listeners() -> Vec<(String, String)> {
    let mut sockets = std::collections::HashMap::new();
    for (table, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        for line in std::fs::read_to_string(table).unwrap().lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields[3] != "0A" {
                continue; // not LISTEN
            }
            let (ip, port) = fields[1].split_once(':').unwrap();
            let port = u16::from_str_radix(port, 16).unwrap();
            let address = if v6 {
                match ip {
                    "00000000000000000000000001000000" => format!("[::1]:{port}"),
                    "0000000000000000FFFF00000100007F" => format!("127.0.0.1:{port}"),
                    other => format!("[{other}]:{port}"),
                }
            } else {
                let bytes = u32::from_str_radix(ip, 16).unwrap().to_le_bytes();
                format!("{}:{port}", Ipv4Addr::from(bytes))
            };
            sockets.insert(format!("socket:[{}]", fields[9]), address);
        }
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if !(cmdline.contains(layout::ROOT) || cmdline.contains(layout::RUN)) {
            continue;
        }
        let name = cmdline.split('\0').next().unwrap_or_default().to_owned();
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Some(address) = std::fs::read_link(fd.path())
                .ok()
                .and_then(|target| sockets.get(target.to_string_lossy().as_ref()))
            {
                found.push((name.clone(), address.clone()));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn a_taken_port_is_named_and_nothing_starts() {
    let _machine = MACHINE.blocking_lock();
    node::down().unwrap();
    let baseline = Footprint::capture();
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, layout::KUBELET_PORT)).unwrap();
    let error = format!("{:#}", node::up(checkout()).unwrap_err());
    drop(listener);
    assert!(
        error.contains("127.0.0.1:10250 (for kubelet) is taken by"),
        "{error}"
    );
    assert!(
        error.contains("node-"),
        "the error names this test binary: {error}"
    );
    assert!(!layout::state_file().exists());
    let left = Footprint::capture().left_over(&baseline);
    assert!(left.is_empty(), "a refused start left: {left:#?}");
}

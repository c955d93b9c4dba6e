//! The manager against the real apiserver: probes, namespace scoping, back-off and
//! metrics with authenticated scrapes, leader election and graceful shutdown.

mod common;
mod memcached;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    GROUP, Widget, WidgetSpec, eventually, promlint, promlint_check, test_args, widget_crd,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::shared;
use kubebuilder_runtime::certs::write_loopback_serving_certificate;
use kubebuilder_runtime::conditions;
use kubebuilder_runtime::metrics::RestClientMetric;
use kubebuilder_runtime::predicate::GenerationChanged;
use kubebuilder_runtime::{
    BindAddress, Context, ControllerContext, Manager, ManagerArgs, ManagerError,
    NeedLeaderElection, Reconciler, RunningManager, healthz,
};
use memcached::{Memcached, MemcachedSpec};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ReconcileError(String);

/// What the test reconcilers saw: `(manager, namespace/name)` per reconcile.
#[derive(Default)]
struct Seen {
    manager: &'static str,
    log: Arc<Mutex<Vec<(&'static str, String)>>>,
}

impl Seen {
    fn record(&self, object: &ConfigMap) -> usize {
        let key = format!(
            "{}/{}",
            object.namespace().unwrap_or_default(),
            object.name_any()
        );
        let mut log = self.log.lock().unwrap();
        log.push((self.manager, key.clone()));
        log.iter().filter(|(_, seen)| *seen == key).count()
    }
}

fn entries(log: &Mutex<Vec<(&'static str, String)>>) -> Vec<(&'static str, String)> {
    log.lock().unwrap().clone()
}

/// Reconciles ConfigMaps, recording each; `flaky` fails its first three reconciles.
async fn record(object: Arc<ConfigMap>, seen: Arc<Seen>) -> Result<Action, ReconcileError> {
    let attempts = seen.record(&object);
    if object.name_any() == "flaky" && attempts <= 3 {
        return Err(ReconcileError(format!("attempt {attempts} fails")));
    }
    Ok(Action::await_change())
}

/// A controller factory running [`record`] on ConfigMaps.
fn recording(
    seen: Arc<Seen>,
) -> impl Fn(ControllerContext) -> futures::future::BoxFuture<'static, ()> + Send + Sync {
    move |context: ControllerContext| {
        let seen = seen.clone();
        Box::pin(async move {
            context
                .run(|scope| scope.controller_for::<ConfigMap>(), record, seen)
                .await;
        })
    }
}

/// Creates `steady` and `flaky` and waits until `flaky` succeeds on its fourth attempt.
async fn flaky_succeeds(client: &Client, namespace: &str, seen: &Seen) {
    create_config_map(client, namespace, "steady").await;
    create_config_map(client, namespace, "flaky").await;
    let flaky = format!("{namespace}/flaky");
    eventually(
        "flaky to succeed on its fourth attempt",
        Duration::from_secs(20),
        || async {
            let attempts = entries(&seen.log)
                .iter()
                .filter(|(_, key)| *key == flaky)
                .count();
            (attempts >= 4).then_some(())
        },
    )
    .await;
}

async fn create_config_map(client: &Client, namespace: &str, name: &str) {
    let config_map: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
}

#[tokio::test]
async fn readyz_waits_for_the_cache_and_the_namespace_flag_scopes_the_watch() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let watched = plane.create_namespace("rt-ready").await.unwrap();
    let unwatched = plane.create_namespace("rt-ready-other").await.unwrap();
    create_config_map(&client, &watched, "mine").await;
    create_config_map(&client, &unwatched, "not-mine").await;

    let seen = Arc::new(Seen {
        manager: "only",
        ..Seen::default()
    });
    let gate = Arc::new(Notify::new());
    let start = recording(seen.clone());
    let args = ManagerArgs {
        namespaces: vec![watched.clone()],
        ..test_args()
    };
    let controller_gate = gate.clone();
    let running = Manager::new(client, args)
        .controller("configmaps", move |context| {
            let gate = controller_gate.clone();
            let run = start(context);
            async move {
                // The cache cannot sync before the test opens the gate.
                gate.notified().await;
                run.await;
            }
        })
        .start()
        .await
        .unwrap();
    let probes = HttpClient::plain(running.probe_addr().unwrap());

    let health = probes.get("/healthz", None).await.unwrap();
    assert_eq!(
        (health.status.as_u16(), health.text().as_str()),
        (200, "ok")
    );
    let not_ready = probes.get("/readyz", None).await.unwrap();
    assert_eq!(not_ready.status.as_u16(), 500);
    assert_eq!(
        not_ready.text(),
        "[-]configmaps failed: cache not synced\nreadyz check failed\n"
    );
    assert_eq!(
        probes.get("/nothing", None).await.unwrap().status.as_u16(),
        404
    );

    gate.notify_one();
    let ready = eventually("readyz to pass", Duration::from_secs(20), || async {
        let reply = probes.get("/readyz", None).await.unwrap();
        (reply.status.as_u16() == 200).then_some(reply)
    })
    .await;
    assert_eq!(ready.text(), "ok");
    let verbose = probes.get("/readyz?verbose", None).await.unwrap();
    assert_eq!(verbose.text(), "[+]configmaps ok\nreadyz check passed\n");

    let mine = format!("{watched}/mine");
    eventually(
        "the watched ConfigMap reconciled",
        Duration::from_secs(20),
        || async {
            entries(&seen.log)
                .iter()
                .any(|(_, key)| *key == mine)
                .then_some(())
        },
    )
    .await;
    assert!(
        entries(&seen.log)
            .iter()
            .all(|(_, key)| key.starts_with(&format!("{watched}/"))),
        "only the watched namespace is reconciled: {:?}",
        entries(&seen.log)
    );
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn errors_are_retried_and_secure_metrics_need_an_authorized_token() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-metrics").await.unwrap();
    let seen = Arc::new(Seen {
        manager: "only",
        ..Seen::default()
    });
    let args = ManagerArgs {
        metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        namespaces: vec![namespace.clone()],
        ..test_args()
    };
    let running = Manager::new(client.clone(), args)
        .controller("configmaps", recording(seen.clone()))
        .start()
        .await
        .unwrap();
    // Nothing but the error policy triggers the retries: three failures, then success.
    flaky_succeeds(&client, &namespace, &seen).await;

    // Self-signed: the scraper cannot verify the server, as `curl -k`.
    let scraper = HttpClient::tls_unverified(running.metrics_addr().unwrap());
    let anonymous = scraper.get("/metrics", None).await.unwrap();
    assert_eq!(anonymous.status.as_u16(), 401, "{}", anonymous.text());
    let forged = scraper.get("/metrics", Some("not-a-token")).await.unwrap();
    assert_eq!(forged.status.as_u16(), 401, "{}", forged.text());

    let outsider = plane
        .service_account_token(&namespace, "outsider")
        .await
        .unwrap();
    let forbidden = scraper.get("/metrics", Some(&outsider)).await.unwrap();
    assert_eq!(forbidden.status.as_u16(), 403, "{}", forbidden.text());

    let prometheus = plane
        .service_account_token(&namespace, "prometheus")
        .await
        .unwrap();
    // The kubebuilder `metrics-reader` role.
    let reader: ClusterRole = serde_json::from_value(json!({
        "metadata": {"name": format!("{namespace}-metrics-reader")},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    }))
    .unwrap();
    plane
        .grant_cluster_role(&reader, &namespace, "prometheus")
        .await
        .unwrap();
    // RBAC reaches the authorizer through its informers: allow a moment.
    let metrics = eventually(
        "the metrics-reader binding to apply",
        Duration::from_secs(20),
        || async {
            let reply = scraper.get("/metrics", Some(&prometheus)).await.unwrap();
            (reply.status.as_u16() == 200).then_some(reply.text())
        },
    )
    .await;
    for line in [
        "controller_runtime_reconcile_total{controller=\"configmaps\",result=\"success\"} 2",
        "controller_runtime_reconcile_total{controller=\"configmaps\",result=\"error\"} 3",
        "controller_runtime_reconcile_errors_total{controller=\"configmaps\"} 3",
        "controller_runtime_reconcile_time_seconds_count{controller=\"configmaps\"} 5",
        "controller_runtime_active_workers{controller=\"configmaps\"} 0",
    ] {
        assert!(metrics.contains(line), "missing {line:?} in\n{metrics}");
    }
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn metrics_serve_plain_http_or_the_certificate_given() {
    let plane = shared();
    let client = plane.client().await.unwrap();

    let plain = Manager::new(
        client.clone(),
        ManagerArgs {
            metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
            metrics_secure: false,
            ..test_args()
        },
    )
    .start()
    .await
    .unwrap();
    let scrape = HttpClient::plain(plain.metrics_addr().unwrap())
        .get("/metrics", None)
        .await
        .unwrap();
    assert_eq!(scrape.status.as_u16(), 200);
    // No controller: the process basics only, in the Prometheus text format.
    let text = scrape.text();
    assert!(text.contains("\nprocess_cpu_seconds_total "), "{text}");
    assert!(!text.contains("controller=\""), "{text}");
    assert!(!text.contains("# EOF"), "{text}");
    plain.shutdown().await.unwrap();

    let certs = tempfile::tempdir().unwrap();
    let ca =
        write_loopback_serving_certificate(certs.path(), "metrics.crt", "metrics.key").unwrap();
    let secure = Manager::new(
        client,
        ManagerArgs {
            metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
            metrics_cert_path: Some(certs.path().to_owned()),
            metrics_cert_name: "metrics.crt".into(),
            metrics_cert_key: "metrics.key".into(),
            ..test_args()
        },
    )
    .start()
    .await
    .unwrap();
    let verified = HttpClient::tls(secure.metrics_addr().unwrap(), &ca).unwrap();
    let handshake = verified.handshake(&[b"h2", b"http/1.1"]).await.unwrap();
    assert_eq!(
        handshake.alpn.as_deref(),
        Some(&b"http/1.1"[..]),
        "HTTP/2 is off by default"
    );
    assert_eq!(
        verified
            .get("/metrics", None)
            .await
            .unwrap()
            .status
            .as_u16(),
        401
    );
    secure.shutdown().await.unwrap();
}

async fn lease_holder(client: &Client, namespace: &str, name: &str) -> Option<String> {
    Api::<Lease>::namespaced(client.clone(), namespace)
        .get(name)
        .await
        .unwrap()
        .spec
        .and_then(|spec| spec.holder_identity)
}

fn is_leading(manager: &RunningManager) -> bool {
    *manager.leading().borrow()
}

#[tokio::test]
async fn one_leader_reconciles_and_hands_over_on_stop_and_on_crash() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-leader").await.unwrap();
    let lease = "runtime-test-lease";
    let log = Arc::new(Mutex::new(Vec::new()));
    let lease_duration = Duration::from_secs(6);
    let elected = |manager: &'static str| {
        let seen = Arc::new(Seen {
            manager,
            log: log.clone(),
        });
        Manager::new(
            client.clone(),
            ManagerArgs {
                leader_elect: true,
                leader_election_namespace: Some(namespace.clone()),
                namespaces: vec![namespace.clone()],
                ..short_lease(lease_duration)
            },
        )
        .leader_election_id(lease)
        .controller("configmaps", recording(seen))
    };
    let first = elected("first");
    let first_metrics = first.metrics().clone();
    let first = first.start().await.unwrap();
    let second = elected("second").start().await.unwrap();

    eventually("a leader", Duration::from_secs(20), || async {
        (is_leading(&first) || is_leading(&second)).then_some(())
    })
    .await;
    let (leader, follower, leader_name, follower_name) = if is_leading(&first) {
        (first, second, "first", "second")
    } else {
        (second, first, "second", "first")
    };
    assert!(!is_leading(&follower));
    assert!(lease_holder(&client, &namespace, lease).await.is_some());

    create_config_map(&client, &namespace, "before-handover").await;
    let before = format!("{namespace}/before-handover");
    eventually(
        "the leader to reconcile",
        Duration::from_secs(20),
        || async {
            entries(&log)
                .contains(&(leader_name, before.clone()))
                .then_some(())
        },
    )
    .await;
    // Give the follower time to misbehave: several renewals of the lease.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        entries(&log)
            .iter()
            .all(|(manager, _)| *manager == leader_name),
        "only the leader reconciles: {:?}",
        entries(&log)
    );
    assert!(!is_leading(&follower));
    if leader_name == "first" {
        let metrics = first_metrics.encode();
        assert!(
            metrics.contains(&format!(
                "leader_election_master_status{{name=\"{lease}\"}} 1"
            )),
            "{metrics}"
        );
    }

    // A graceful stop releases the lease: the follower takes over within the lease duration.
    let leader_identity = lease_holder(&client, &namespace, lease).await;
    leader.shutdown().await.unwrap();
    assert_ne!(
        lease_holder(&client, &namespace, lease).await,
        leader_identity,
        "released on shutdown"
    );
    if leader_name == "first" {
        let metrics = first_metrics.encode();
        assert!(
            metrics.contains(&format!(
                "leader_election_master_status{{name=\"{lease}\"}} 0"
            )),
            "{metrics}"
        );
    }
    eventually("the follower to take over", lease_duration, || async {
        is_leading(&follower).then_some(())
    })
    .await;
    create_config_map(&client, &namespace, "after-handover").await;
    let after = format!("{namespace}/after-handover");
    eventually(
        "the new leader to reconcile",
        Duration::from_secs(20),
        || async {
            entries(&log)
                .contains(&(follower_name, after.clone()))
                .then_some(())
        },
    )
    .await;

    // A crash releases nothing: a new candidate waits for the lease to expire.
    let third = elected("third").start().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!is_leading(&third), "the lease is still held");
    follower.abort();
    eventually(
        "the candidate to take over after expiry",
        lease_duration * 3,
        || async { is_leading(&third).then_some(()) },
    )
    .await;
    let all_reconciled_by = |name: &str| -> BTreeMap<String, Vec<&'static str>> {
        let mut by_object: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
        for (manager, key) in entries(&log) {
            if key.ends_with(name) {
                by_object.entry(key).or_default().push(manager);
            }
        }
        by_object
    };
    eventually(
        "the third manager to resync every ConfigMap",
        Duration::from_secs(20),
        || async {
            all_reconciled_by("handover")
                .values()
                .all(|managers| managers.contains(&"third"))
                .then_some(())
        },
    )
    .await;
    third.shutdown().await.unwrap();
    assert_eq!(lease_holder(&client, &namespace, lease).await, None);
}

#[tokio::test]
async fn shutdown_waits_for_the_reconcile_in_flight_and_releases_the_lease() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-shutdown").await.unwrap();
    let lease = "runtime-shutdown-lease";

    struct Slow {
        started: Notify,
        release: Notify,
        finished: AtomicBool,
    }
    async fn slow_reconcile(_: Arc<ConfigMap>, slow: Arc<Slow>) -> Result<Action, ReconcileError> {
        slow.started.notify_one();
        slow.release.notified().await;
        slow.finished.store(true, Ordering::SeqCst);
        Ok(Action::await_change())
    }
    let slow = Arc::new(Slow {
        started: Notify::new(),
        release: Notify::new(),
        finished: AtomicBool::new(false),
    });
    let context_slow = slow.clone();
    let running = Manager::new(
        client.clone(),
        ManagerArgs {
            leader_elect: true,
            leader_election_namespace: Some(namespace.clone()),
            namespaces: vec![namespace.clone()],
            ..test_args()
        },
    )
    .leader_election_id(lease)
    .controller("slow", move |context| {
        let slow = context_slow.clone();
        async move {
            context
                .run(
                    |scope| scope.controller_for::<ConfigMap>(),
                    slow_reconcile,
                    slow,
                )
                .await;
        }
    })
    .start()
    .await
    .unwrap();
    eventually("leadership", Duration::from_secs(20), || async {
        is_leading(&running).then_some(())
    })
    .await;
    create_config_map(&client, &namespace, "slow").await;
    tokio::time::timeout(Duration::from_secs(20), slow.started.notified())
        .await
        .expect("the reconcile starts");
    assert!(lease_holder(&client, &namespace, lease).await.is_some());

    // The same path as SIGTERM: `Manager::run` is `run_until(shutdown_signal())`.
    let (terminate, terminated) = tokio::sync::oneshot::channel::<()>();
    let stopping = tokio::spawn(running.run_until(async {
        let _ = terminated.await;
    }));
    terminate.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !stopping.is_finished(),
        "shutdown waits for the reconcile in flight"
    );
    assert!(
        lease_holder(&client, &namespace, lease).await.is_some(),
        "the lease is kept while draining"
    );

    slow.release.notify_one();
    tokio::time::timeout(Duration::from_secs(20), stopping)
        .await
        .expect("shutdown completes")
        .unwrap()
        .unwrap();
    assert!(
        slow.finished.load(Ordering::SeqCst),
        "the reconcile in flight finished"
    );
    assert_eq!(
        lease_holder(&client, &namespace, lease).await,
        None,
        "the lease is released"
    );
}

#[tokio::test]
async fn a_controller_that_stops_on_its_own_stops_the_manager_with_an_error() {
    let client = shared().client().await.unwrap();
    let running = Manager::new(client, test_args())
        .controller("quitter", |_context| async {})
        .start()
        .await
        .unwrap();
    let result = running.run_until(std::future::pending()).await;
    assert!(
        matches!(result, Err(ManagerError::ControllersStopped)),
        "{result:?}"
    );
}

#[tokio::test]
async fn leader_election_needs_a_lease_name() {
    let client = shared().client().await.unwrap();
    let args = ManagerArgs {
        leader_elect: true,
        ..test_args()
    };
    let result = Manager::new(client, args).start().await;
    assert!(
        matches!(result, Err(ManagerError::NoLeaseName)),
        "{:?}",
        result.err()
    );
}

#[tokio::test]
async fn controllers_stop_when_the_lease_is_taken_away() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-lost").await.unwrap();
    let lease = "runtime-lost-lease";
    let stopped = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Seen {
        manager: "only",
        ..Seen::default()
    });
    let start = recording(seen);
    let controller_stopped = stopped.clone();
    let manager = Manager::new(
        client.clone(),
        ManagerArgs {
            leader_elect: true,
            leader_election_namespace: Some(namespace.clone()),
            namespaces: vec![namespace.clone()],
            ..short_lease(Duration::from_secs(6))
        },
    )
    .leader_election_id(lease)
    .controller("configmaps", move |context| {
        let stopped = controller_stopped.clone();
        let run = start(context);
        async move {
            run.await;
            stopped.store(true, Ordering::SeqCst);
        }
    });
    let metrics = manager.metrics().clone();
    let running = manager.start().await.unwrap();
    let probes = HttpClient::plain(running.probe_addr().unwrap());
    eventually(
        "leadership and a synced cache",
        Duration::from_secs(20),
        || async {
            let ready = probes.get("/readyz/configmaps", None).await.unwrap();
            (is_leading(&running) && ready.status.as_u16() == 200).then_some(())
        },
    )
    .await;

    // Someone else takes the lease (as a partitioned replica would find on its return)
    // and keeps it renewed.
    let usurp = || async {
        let renewed = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        Api::<Lease>::namespaced(client.clone(), &namespace)
            .patch(
                lease,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {
                    "holderIdentity": "usurper",
                    "renewTime": renewed,
                    "leaseDurationSeconds": 3600
                }})),
            )
            .await
            .unwrap();
    };
    usurp().await;

    // The next renewal (within the lease duration) finds the lease gone.
    eventually(
        "the controllers to stop",
        Duration::from_secs(12),
        || async { (!is_leading(&running) && stopped.load(Ordering::SeqCst)).then_some(()) },
    )
    .await;
    usurp().await;
    let gauge = metrics.encode();
    assert!(
        gauge.contains(&format!(
            "leader_election_master_status{{name=\"{lease}\"}} 0"
        )),
        "{gauge}"
    );
    let standby = probes.get("/readyz?verbose", None).await.unwrap();
    assert_eq!(
        (standby.status.as_u16(), standby.text().as_str()),
        (200, "readyz check passed\n"),
        "a standby replica is ready to take over"
    );
    assert_eq!(
        lease_holder(&client, &namespace, lease).await.as_deref(),
        Some("usurper")
    );
    running.shutdown().await.unwrap();
    assert_eq!(
        lease_holder(&client, &namespace, lease).await.as_deref(),
        Some("usurper"),
        "shutdown releases only a lease it holds"
    );
}

/// Reconciles ConfigMaps; panics on every reconcile of the one named `bomb`.
async fn explosive(object: Arc<ConfigMap>, seen: Arc<Seen>) -> Result<Action, ReconcileError> {
    seen.record(&object);
    if object.name_any() == "bomb" {
        panic!("bomb went off");
    }
    Ok(Action::await_change())
}

#[tokio::test]
async fn a_panicking_reconcile_is_retried_and_every_other_object_reconciles() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-panic").await.unwrap();
    create_config_map(&client, &namespace, "bomb").await;
    for index in 0..100 {
        create_config_map(&client, &namespace, &format!("calm-{index:03}")).await;
    }
    let seen = Arc::new(Seen {
        manager: "only",
        ..Seen::default()
    });
    let manager = Manager::new(
        client.clone(),
        ManagerArgs {
            namespaces: vec![namespace.clone()],
            ..test_args()
        },
    )
    .controller("explosive", {
        let seen = seen.clone();
        move |context: ControllerContext| {
            let seen = seen.clone();
            async move {
                context
                    .max_concurrent_reconciles(4)
                    .run(|scope| scope.controller_for::<ConfigMap>(), explosive, seen)
                    .await;
            }
        }
    })
    .controller("bystander", recording(seen.clone()));
    let metrics = manager.metrics().clone();
    let running = manager.start().await.unwrap();

    eventually(
        "every calm ConfigMap reconciled, and the bomb retried",
        Duration::from_secs(30),
        || async {
            let log = entries(&seen.log);
            let calm: std::collections::BTreeSet<_> = log
                .iter()
                .filter(|(_, key)| key.contains("/calm-"))
                .map(|(_, key)| key.clone())
                .collect();
            let bombs = log.iter().filter(|(_, key)| key.ends_with("/bomb")).count();
            // Each controller sees the bomb; the explosive one again and again.
            (calm.len() == 100 && bombs >= 4).then_some(())
        },
    )
    .await;
    let text = metrics.encode();
    let panics = metric_value(
        &text,
        "controller_runtime_reconcile_panics_total{controller=\"explosive\"}",
    );
    assert!(
        panics >= 2.0,
        "retried with back-off after each panic:\n{text}"
    );
    assert!(
        metric_value(
            &text,
            "controller_runtime_reconcile_errors_total{controller=\"explosive\"}"
        ) >= panics,
        "a panic is an error too"
    );
    assert_eq!(
        metric_value(
            &text,
            "controller_runtime_reconcile_panics_total{controller=\"bystander\"}"
        ),
        0.0
    );
    assert!(is_leading(&running), "the manager goes on");
    running.shutdown().await.unwrap();
}

/// The value of the sample `series` (name and labels, as exposed) in a scrape.
fn metric_value(scrape: &str, series: &str) -> f64 {
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no sample {series} in:\n{scrape}"))
}

#[tokio::test]
async fn runnables_and_controllers_run_on_every_replica_or_only_on_the_leader() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-runnables").await.unwrap();
    let lease = "runtime-runnables-lease";
    let started = Arc::new(Mutex::new(Vec::<(&'static str, &'static str)>::new()));
    let replica = |name: &'static str| {
        let always = started.clone();
        let leading_only = started.clone();
        Manager::new(
            client.clone(),
            ManagerArgs {
                leader_elect: true,
                leader_election_namespace: Some(namespace.clone()),
                namespaces: vec![namespace.clone()],
                ..test_args()
            },
        )
        .leader_election_id(lease)
        .add(
            move |stop: CancellationToken| {
                always.lock().unwrap().push((name, "everywhere"));
                async move {
                    stop.cancelled().await;
                    Ok(())
                }
            },
            NeedLeaderElection::No,
        )
        .add(
            move |stop: CancellationToken| {
                leading_only.lock().unwrap().push((name, "leader"));
                async move {
                    stop.cancelled().await;
                    Ok(())
                }
            },
            NeedLeaderElection::Yes,
        )
        .controller_for::<ConfigMap>()
        .need_leader_election(NeedLeaderElection::No)
        .complete(MarksSeen(name))
    };
    create_config_map(&client, &namespace, "watched").await;
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let first = replica("first").start().await.unwrap();
    eventually(
        "the first replica to lead",
        Duration::from_secs(20),
        || async { is_leading(&first).then_some(()) },
    )
    .await;
    let second = replica("second").start().await.unwrap();
    eventually(
        "the standby's runnable to start",
        Duration::from_secs(10),
        || async {
            started
                .lock()
                .unwrap()
                .contains(&("second", "everywhere"))
                .then_some(())
        },
    )
    .await;
    // Give a wrongly started leader-only runnable time to show.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut seen = started.lock().unwrap().clone();
    seen.sort_unstable();
    assert_eq!(
        seen,
        [
            ("first", "everywhere"),
            ("first", "leader"),
            ("second", "everywhere")
        ],
        "the standby runs only what needs no leader election"
    );
    assert!(!is_leading(&second));
    // The standby's controller writes too: its client is not fenced on the leader.
    eventually(
        "both replicas' controllers to mark the ConfigMap",
        Duration::from_secs(10),
        || async {
            let annotations = maps.get("watched").await.unwrap().annotations().clone();
            (annotations.contains_key("seen-by-first")
                && annotations.contains_key("seen-by-second"))
            .then_some(())
        },
    )
    .await;
    first.shutdown().await.unwrap();
    second.shutdown().await.unwrap();
}

/// Marks each ConfigMap as seen by its replica, through the controller's own client.
struct MarksSeen(&'static str);

impl Reconciler<ConfigMap> for MarksSeen {
    type Error = kube::Error;

    async fn reconcile(&self, map: Arc<ConfigMap>, ctx: &Context) -> Result<Action, kube::Error> {
        let seen = json!({"metadata": {"annotations": {format!("seen-by-{}", self.0): "yes"}}});
        ctx.api::<ConfigMap>(&*map)
            .patch(
                &map.name_any(),
                &PatchParams::default(),
                &Patch::Merge(seen),
            )
            .await?;
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn a_failing_runnable_stops_the_manager_with_its_error() {
    let client = shared().client().await.unwrap();
    let result = Manager::new(client, test_args())
        .add(
            |_| async { Err("the queue broker is gone".into()) },
            NeedLeaderElection::No,
        )
        .start()
        .await
        .unwrap()
        .run_until(std::future::pending())
        .await;
    assert_eq!(
        result.unwrap_err().to_string(),
        "a runnable failed: the queue broker is gone"
    );
}

#[tokio::test]
async fn custom_health_and_readiness_checks_are_served() {
    let client = shared().client().await.unwrap();
    let database_up = Arc::new(AtomicBool::new(false));
    let up = database_up.clone();
    let running = Manager::new(client, test_args())
        .add_healthz_check("healthz", healthz::ping)
        .add_readyz_check("database", move || {
            let up = up.load(Ordering::SeqCst);
            async move {
                if up {
                    Ok(())
                } else {
                    Err("connection refused".to_owned())
                }
            }
        })
        .start()
        .await
        .unwrap();
    let probes = HttpClient::plain(running.probe_addr().unwrap());
    let answer = |path: &'static str| {
        let probes = probes.clone();
        async move {
            let reply = probes.get(path, None).await.unwrap();
            (reply.status.as_u16(), reply.text())
        }
    };

    assert_eq!(answer("/healthz").await, (200, "ok".to_owned()));
    assert_eq!(answer("/healthz/healthz").await, (200, "ok".to_owned()));
    assert_eq!(
        answer("/healthz?verbose").await,
        (200, "[+]healthz ok\nhealthz check passed\n".to_owned())
    );
    assert_eq!(
        answer("/readyz").await,
        (
            500,
            "[-]database failed: connection refused\nreadyz check failed\n".to_owned()
        )
    );
    assert_eq!(
        answer("/readyz/database").await,
        (
            500,
            "internal server error: connection refused\n".to_owned()
        )
    );
    assert_eq!(answer("/readyz/nothing").await.0, 404);

    database_up.store(true, Ordering::SeqCst);
    assert_eq!(answer("/readyz").await, (200, "ok".to_owned()));
    assert_eq!(answer("/readyz/database").await, (200, "ok".to_owned()));
    running.shutdown().await.unwrap();
}

/// The metric families controller-runtime (and client-go, and Go's process collector)
/// expose, as a scrape names them.
const FAMILIES: [&str; 21] = [
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_panics_total",
    "controller_runtime_reconcile_time_seconds",
    "controller_runtime_active_workers",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_webhook_panics_total",
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_retries_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "rest_client_requests_total",
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_open_fds",
    "process_start_time_seconds",
    "tokio_runtime_workers",
    "tokio_runtime_alive_tasks",
];

/// The linter the scrapes are checked with refuses what promtool refuses, as promtool does.
#[test]
fn promlint_refuses_an_unparsable_scrape_and_one_without_help() {
    let unparsable = promlint("bad{ 1\n");
    assert_eq!(unparsable.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unparsable.stderr).contains("text format parsing error"));
    let without_help = promlint("# TYPE requests_total counter\nrequests_total 1\n");
    assert_eq!(without_help.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&without_help.stderr),
        "requests_total no help text\n"
    );
}

#[tokio::test]
async fn every_metric_family_moves_with_reconciles_and_prometheus_lints_the_scrape_clean() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-families").await.unwrap();
    let seen = Arc::new(Seen {
        manager: "only",
        ..Seen::default()
    });
    let args = ManagerArgs {
        metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        metrics_secure: false,
        namespaces: vec![namespace.clone()],
        ..test_args()
    };
    let manager = Manager::from_config(plane.config().await.unwrap(), args)
        .unwrap()
        .controller("configmaps", recording(seen.clone()));
    let manager_client = manager.client().clone();
    let running = manager.start().await.unwrap();
    let scraper = HttpClient::plain(running.metrics_addr().unwrap());
    let scrape = || async { scraper.get("/metrics", None).await.unwrap().text() };
    eventually("the first list", Duration::from_secs(20), || async {
        scrape()
            .await
            .contains("workqueue_depth{name=\"configmaps\"}")
            .then_some(())
    })
    .await;
    let before = scrape().await;
    promlint_check(&before);

    flaky_succeeds(&client, &namespace, &seen).await;
    // The manager's own requests (its list and watch) may all come before the first
    // scrape; one more through its client must be counted.
    Api::<ConfigMap>::namespaced(manager_client, &namespace)
        .list(&Default::default())
        .await
        .unwrap();
    spend_cpu_ticks(3);
    let after = scrape().await;
    promlint_check(&after);
    for family in FAMILIES {
        assert!(
            after.lines().any(|line| line.starts_with(family)),
            "{family} missing from:\n{after}"
        );
    }
    let sum = |scrape: &str, prefix: &str| -> f64 {
        scrape
            .lines()
            .filter(|line| line.starts_with(prefix))
            .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
            .sum()
    };
    for moving in [
        "controller_runtime_reconcile_total{",
        "controller_runtime_reconcile_time_seconds_count{",
        "workqueue_adds_total{name=\"configmaps\"}",
        "workqueue_retries_total{name=\"configmaps\"}",
        "workqueue_queue_duration_seconds_count{name=\"configmaps\"}",
        "workqueue_work_duration_seconds_count{name=\"configmaps\"}",
        "rest_client_requests_total{",
        "process_cpu_seconds_total",
    ] {
        assert!(
            sum(&after, moving) > sum(&before, moving),
            "{moving} did not move: {} then {}",
            sum(&before, moving),
            sum(&after, moving)
        );
    }
    let host = plane.url().trim_start_matches("https://").to_owned();
    assert!(
        after.contains(&format!(
            "rest_client_requests_total{{code=\"200\",method=\"GET\",host=\"{host}\"}}"
        )),
        "{after}"
    );
    assert!(
        after.contains("controller_runtime_max_concurrent_reconciles{controller=\"configmaps\"} 1")
    );
    running.shutdown().await.unwrap();
}

/// The REST client metrics beyond the request count are off until enabled, then carry
/// controller-runtime v0.25's names and labels (`verb`, and the apiserver's host:port).
#[tokio::test]
async fn rest_client_metrics_are_off_until_enabled_and_named_as_controller_runtimes() {
    let plane = shared();
    let namespace = plane.create_namespace("rt-rest").await.unwrap();
    let host = plane.url().trim_start_matches("https://").to_owned();
    let scrape_after_requests = |enabled: &'static [RestClientMetric]| {
        let namespace = namespace.clone();
        async move {
            let args = ManagerArgs {
                metrics_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
                metrics_secure: false,
                kube_api_qps: 1000.0,
                kube_api_burst: 10,
                ..test_args()
            };
            let manager = Manager::from_config(plane.config().await.unwrap(), args).unwrap();
            manager.metrics().enable_rest_client(enabled);
            let config_maps = Api::<ConfigMap>::namespaced(manager.client().clone(), &namespace);
            let running = manager.start().await.unwrap();
            let name = format!("rest-{}", enabled.len());
            let config_map = ConfigMap {
                metadata: kube::api::ObjectMeta {
                    name: Some(name.clone()),
                    ..Default::default()
                },
                data: Some(BTreeMap::from([("k".to_owned(), "v".to_owned())])),
                ..Default::default()
            };
            config_maps
                .create(&PostParams::default(), &config_map)
                .await
                .unwrap();
            config_maps.get(&name).await.unwrap();
            let scraper = HttpClient::plain(running.metrics_addr().unwrap());
            let scrape = scraper.get("/metrics", None).await.unwrap().text();
            running.shutdown().await.unwrap();
            scrape
        }
    };

    let default = scrape_after_requests(&[]).await;
    promlint_check(&default);
    assert!(default.contains(&format!(
        "rest_client_requests_total{{code=\"201\",method=\"POST\",host=\"{host}\"}}"
    )));
    assert!(!default.contains("rest_client_request_"), "{default}");
    assert!(!default.contains("rest_client_response_"), "{default}");
    assert!(!default.contains("rest_client_rate_limiter_"), "{default}");

    let all = scrape_after_requests(&[
        RestClientMetric::RequestLatency,
        RestClientMetric::RequestSize,
        RestClientMetric::ResponseSize,
        RestClientMetric::RateLimiterLatency,
    ])
    .await;
    promlint_check(&all);
    for series in [
        "rest_client_request_duration_seconds_count{verb=\"GET\"",
        "rest_client_request_duration_seconds_count{verb=\"POST\"",
        "rest_client_request_size_bytes_count{verb=\"POST\"",
        "rest_client_response_size_bytes_count{verb=\"GET\"",
        "rest_client_rate_limiter_duration_seconds_count{verb=\"POST\"",
    ] {
        let line = all
            .lines()
            .find(|line| line.starts_with(series))
            .unwrap_or_else(|| panic!("{series} missing from:\n{all}"));
        assert!(line.contains(&format!("host=\"{host}\"")), "{line}");
    }
}

/// This process's CPU time in clock ticks, as `/proc/self/stat` counts it (utime + stime),
/// which is what `process_cpu_seconds_total` reports.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // The fields after the command name (which may hold spaces) start at field 3.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Stays on a CPU until this process is charged `ticks` more clock ticks. The counter
/// moves in whole ticks (10 ms), and the reconciles between two scrapes can take less.
/// A few ticks take well under a second of spinning on a loaded machine (1 s at most,
/// measured beside two busy loops and other builds: 20 runnable threads on 2 cores); if
/// 10 s are not enough, say so here rather than as a counter that "did not move".
fn spend_cpu_ticks(ticks: u64) {
    let start = cpu_ticks();
    let deadline = Instant::now() + Duration::from_secs(10);
    while cpu_ticks() < start + ticks {
        assert!(
            Instant::now() < deadline,
            "charged {} of {ticks} clock ticks in 10 s on a CPU: this thread was starved",
            cpu_ticks() - start
        );
        std::hint::black_box(0u64);
    }
}

/// The test flags with a lease of `duration` (whole seconds), renewed every second and
/// lost 2 s before it would expire for the others: short, so a takeover test is quick.
fn short_lease(duration: Duration) -> ManagerArgs {
    ManagerArgs {
        leader_elect_lease_duration: duration,
        leader_elect_renew_deadline: duration - Duration::from_secs(2),
        leader_elect_retry_period: Duration::from_secs(1),
        ..test_args()
    }
}

/// The generation of each Widget reconcile a controller saw, in order.
#[derive(Default)]
struct Generations(Arc<Mutex<Vec<i64>>>);

impl Reconciler<Widget> for Generations {
    type Error = ReconcileError;

    async fn reconcile(&self, widget: Arc<Widget>, _: &Context) -> Result<Action, ReconcileError> {
        let generation = widget.metadata.generation.unwrap_or_default();
        self.0.lock().unwrap().push(generation);
        Ok(Action::await_change())
    }
}

/// Waits until `seen` holds `count` reconciles.
async fn reconciled(seen: &Mutex<Vec<i64>>, count: usize, what: &str) {
    eventually(what, Duration::from_secs(20), || async {
        (seen.lock().unwrap().len() >= count).then_some(())
    })
    .await;
}

#[tokio::test]
async fn built_controllers_reconcile_owners_of_changed_children_and_the_generation_filter_drops_status_writes()
 {
    let plane = shared();
    plane.install_crds(&[widget_crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-builder").await.unwrap();
    let widgets: Api<Widget> = Api::namespaced(client.clone(), &namespace);
    let (every, filtered) = (Generations::default(), Generations::default());
    let (every_seen, filtered_seen) = (every.0.clone(), filtered.0.clone());
    let args = ManagerArgs {
        namespaces: vec![namespace.clone()],
        ..test_args()
    };
    let running = Manager::new(client.clone(), args)
        .controller_for::<Widget>()
        .owns::<ConfigMap>()
        .complete(every)
        .controller_for::<Widget>()
        .named("filtered")
        .with_event_filter(GenerationChanged)
        .complete(filtered)
        .start()
        .await
        .unwrap();

    let widget = widgets
        .create(
            &PostParams::default(),
            &Widget::new("w", WidgetSpec::default()),
        )
        .await
        .unwrap();
    reconciled(&every_seen, 1, "the new widget, unfiltered").await;
    reconciled(&filtered_seen, 1, "the new widget, filtered").await;

    // A status write: a new resourceVersion, the same generation.
    let status = json!({"status": {"ready": true}});
    widgets
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    reconciled(&every_seen, 2, "the status write, unfiltered").await;

    // A ConfigMap the widget controls, and one it only owns.
    for (name, controller) in [("controlled", true), ("owned", false)] {
        let child: ConfigMap = serde_json::from_value(json!({"metadata": {
            "name": name,
            "ownerReferences": [{
                "apiVersion": format!("{GROUP}/v1"), "kind": "Widget", "name": "w",
                "uid": widget.metadata.uid, "controller": controller,
            }],
        }}))
        .unwrap();
        Api::<ConfigMap>::namespaced(client.clone(), &namespace)
            .create(&PostParams::default(), &child)
            .await
            .unwrap();
    }
    reconciled(&every_seen, 3, "the controlled child").await;

    // A spec change: a new generation, which both see.
    let spec = json!({"spec": {"size": 2}});
    widgets
        .patch("w", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .unwrap();
    reconciled(&every_seen, 4, "the spec change, unfiltered").await;
    reconciled(&filtered_seen, 2, "the spec change, filtered").await;
    running.shutdown().await.unwrap();

    assert_eq!(
        *every_seen.lock().unwrap(),
        [1, 1, 1, 2],
        "created, status written, child created, spec changed; not the owned child"
    );
    assert_eq!(
        *filtered_seen.lock().unwrap(),
        [1, 2],
        "the status write and the children are filtered out"
    );
}

#[tokio::test]
async fn the_memcached_operator_owns_its_deployment_reports_and_cleans_up_behind_its_finalizer() {
    let plane = shared();
    plane.install_crds(&[Memcached::crd()]).await.unwrap();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-memcached").await.unwrap();
    let args = ManagerArgs {
        namespaces: vec![namespace.clone()],
        ..test_args()
    };
    let running = memcached::controller::setup_with_manager(Manager::new(client.clone(), args))
        .start()
        .await
        .unwrap();
    let memcacheds: Api<Memcached> = Api::namespaced(client.clone(), &namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &namespace);
    let cache = Memcached::new("cache", MemcachedSpec { size: 2 });
    memcacheds
        .create(&PostParams::default(), &cache)
        .await
        .unwrap();

    let available = eventually("Available", Duration::from_secs(20), || async {
        let status = memcacheds.get("cache").await.unwrap().status?;
        conditions::find(&status.conditions, "Available").cloned()
    })
    .await;
    assert_eq!(
        (available.status.as_str(), available.reason.as_str()),
        ("True", "Reconciled")
    );
    let deployment = deployments.get("cache").await.unwrap();
    assert_eq!(deployment.spec.replicas, Some(2));
    let owner = &deployment.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Memcached", Some(true), Some(true))
    );
    let cached = memcacheds.get("cache").await.unwrap();
    assert_eq!(
        cached.metadata.finalizers,
        Some(vec!["cache.example.com/finalizer".to_owned()])
    );

    memcacheds
        .delete("cache", &Default::default())
        .await
        .unwrap();
    eventually("the Memcached gone", Duration::from_secs(20), || async {
        memcacheds
            .get_opt("cache")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    let events: Api<K8sEvent> = Api::namespaced(client.clone(), &namespace);
    let reasons: Vec<String> = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|event| event.reason)
        .collect();
    assert!(reasons.contains(&"Reconciled".to_owned()), "{reasons:?}");
    assert!(reasons.contains(&"Deleting".to_owned()), "{reasons:?}");
    running.shutdown().await.unwrap();
}

/// Counts its reconciles; with `stuck`, each one waits for ever.
#[derive(Clone, Default)]
struct Counting {
    reconciles: Arc<Mutex<usize>>,
    stuck: bool,
}

impl Reconciler<ConfigMap> for Counting {
    type Error = ReconcileError;

    async fn reconcile(&self, _: Arc<ConfigMap>, _: &Context) -> Result<Action, ReconcileError> {
        *self.reconciles.lock().unwrap() += 1;
        if self.stuck {
            std::future::pending::<()>().await;
        }
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn shutdown_gives_up_on_reconciles_that_outlast_the_graceful_shutdown_timeout() {
    let plane = shared();
    let client = plane.client().await.unwrap();
    let namespace = plane.create_namespace("rt-stuck").await.unwrap();
    let stuck = Counting {
        stuck: true,
        ..Counting::default()
    };
    let started = stuck.reconciles.clone();
    let args = ManagerArgs {
        namespaces: vec![namespace.clone()],
        ..test_args()
    };
    let running = Manager::new(client.clone(), args)
        .graceful_shutdown_timeout(Some(Duration::from_millis(500)))
        .controller_for::<ConfigMap>()
        .complete(stuck)
        .start()
        .await
        .unwrap();
    create_config_map(&client, &namespace, "stuck").await;
    eventually(
        "the reconcile to start",
        Duration::from_secs(20),
        || async { (*started.lock().unwrap() > 0).then_some(()) },
    )
    .await;

    let stopped = tokio::time::timeout(Duration::from_secs(20), running.shutdown())
        .await
        .expect("the shutdown gives up");
    assert!(
        matches!(stopped, Err(ManagerError::ShutdownTimedOut(timeout)) if timeout == Duration::from_millis(500)),
        "{stopped:?}"
    );
}

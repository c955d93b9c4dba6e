//! Scale as a fault: 10,000 CronJobs all due in the same minute, the `controller` binary
//! rate limited on its client. Every Job must be created, no reconcile may fail, and the
//! apiserver must never be sent more than the configured rate; the figures (RSS,
//! schedule→Job p50/p99) go into the [`FaultReport`] for `cargo xtask test-faults`.

mod common;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use api::v1::CronJob;
use common::{ControllerBinary, TestEnv, eventually};
use controller::cronjob::jobs::scheduled_time;
use futures::{StreamExt as _, TryStreamExt as _, stream};
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use kube::ResourceExt as _;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kubebuilder_envtest::faults::FaultReport;
use kubebuilder_envtest::http_client::HttpClient;
use serde_json::json;

/// CronJobs, as the scale fault asks.
const CRONJOBS: usize = 10_000;
/// The manager's client-side limit (`--kube-api-qps`, `--kube-api-burst`).
const QPS: f64 = 300.0;
const BURST: f64 = 300.0;
/// How long after creation the one run of every CronJob falls due: time to create and
/// reconcile them all first, so that the minute's work is measured alone.
const LEAD_TIME: Duration = Duration::from_secs(300);
/// How long everything may take: creating, reconciling, the minute's Jobs.
const PHASE_TIMEOUT: Duration = Duration::from_secs(900);

#[tokio::test]
async fn ten_thousand_cronjobs_due_in_one_minute_all_get_their_job_within_the_client_rate() {
    let env = TestEnv::new("fault-scale").await;
    let mut report = FaultReport::new("10,000 CronJobs due in one minute");
    // One minute's run: every CronJob has one run due in the test's life.
    report.cycles = 1;
    let due =
        Timestamp::from_second((Timestamp::now() + LEAD_TIME).as_second().div_euclid(60) * 60)
            .unwrap();
    create_cronjobs(&env, &once_at(due)).await;

    let ControllerBinary {
        mut command,
        metrics,
        ..
    } = ControllerBinary::new(&env.namespace);
    let mut manager = command
        .args([
            format!("--kube-api-qps={QPS}"),
            format!("--kube-api-burst={BURST}"),
        ])
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the controller binary starts");
    let pid = manager.id().expect("the manager runs");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let sampler = tokio::spawn(sample_requests(metrics.clone(), requests.clone()));

    let seen = watch_jobs(&env);
    let created = eventually("every CronJob's Job", PHASE_TIMEOUT, || async {
        let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        (seen.len() >= CRONJOBS).then(|| seen.clone())
    })
    .await;
    let scrape = metrics.get("/metrics", None).await.unwrap().text();
    sampler.abort();
    let (peak_rss, rss) = (status_kib(pid, "VmHWM:"), status_kib(pid, "VmRSS:"));
    manager.kill().await.ok();

    let mut delays: Vec<Duration> = created
        .values()
        .map(|jobs| Duration::try_from(jobs.seen_at.duration_since(jobs.run)).unwrap_or_default())
        .collect();
    delays.sort();
    report.duplicates = created
        .values()
        .map(|jobs| jobs.names.len() as u64 - 1)
        .sum();
    report.misses = (CRONJOBS - created.len().min(CRONJOBS)) as u64;
    report.errors = counter(
        &scrape,
        "controller_runtime_reconcile_errors_total{controller=\"cronjob\"}",
    );
    let excess = rate_excess(&requests.lock().unwrap_or_else(PoisonError::into_inner));
    if let Some(excess) = &excess {
        eprintln!("the client rate was exceeded: {excess}");
        report.errors += 1;
    }
    report.recoveries.push(*delays.last().unwrap());
    report.detail = format!(
        "schedule→Job p50 {:.1} s, p99 {:.1} s; RSS {:.1} MiB (peak {:.1} MiB); limit {QPS}/s burst {BURST}",
        percentile(&delays, 50).as_secs_f64(),
        percentile(&delays, 99).as_secs_f64(),
        rss as f64 / 1024.0,
        peak_rss as f64 / 1024.0,
    );
    report.print();
    assert!(
        created.values().all(|jobs| jobs.run == due),
        "every Job is for the one run due"
    );
    assert_eq!(
        (report.duplicates, report.misses, report.errors),
        (0, 0, 0),
        "{report:?}"
    );
}

/// A schedule whose only run in the test's life is at `due` (its minute of its hour, daily).
fn once_at(due: Timestamp) -> String {
    let time = due.to_zoned(jiff::tz::TimeZone::UTC);
    format!("{} {} * * *", time.minute(), time.hour())
}

async fn create_cronjobs(env: &TestEnv, schedule: &str) {
    let api = env.cronjobs();
    stream::iter(0..CRONJOBS)
        .map(|index| {
            let api = api.clone();
            async move {
                let cronjob: CronJob = serde_json::from_value(json!({
                    "apiVersion": "batch.tutorial.kubebuilder.io/v1",
                    "kind": "CronJob",
                    "metadata": {"name": format!("scale-{index:05}")},
                    "spec": {
                        "schedule": schedule,
                        "jobTemplate": {"spec": {"template": {"spec": {
                            "containers": [{"name": "hello", "image": "busybox"}],
                            "restartPolicy": "Never"
                        }}}}
                    }
                }))?;
                api.create(&PostParams::default(), &cronjob).await?;
                Ok::<_, anyhow::Error>(())
            }
        })
        .buffer_unordered(32)
        .try_collect::<()>()
        .await
        .expect("the CronJobs are created");
}

/// The Jobs seen, by CronJob: the run the first is for, when the watch saw it, and how
/// many Jobs it has (more than one is a duplicate: no CronJob has two runs due).
fn watch_jobs(env: &TestEnv) -> Arc<Mutex<BTreeMap<String, SeenJobs>>> {
    let seen = Arc::new(Mutex::new(BTreeMap::new()));
    let jobs: Api<Job> = env.jobs();
    let recorded = seen.clone();
    tokio::spawn(async move {
        let mut events =
            std::pin::pin!(watcher(jobs, watcher::Config::default()).applied_objects());
        while let Some(job) = events.next().await {
            let Ok(job) = job else { continue };
            let owner = job
                .owner_references()
                .first()
                .map(|owner| owner.name.clone())
                .unwrap_or_default();
            let run = scheduled_time(&job)
                .unwrap()
                .expect("a scheduled-at annotation");
            let mut seen = recorded.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = seen.entry(owner).or_insert(SeenJobs {
                run,
                seen_at: Timestamp::now(),
                names: Vec::new(),
            });
            if !entry.names.contains(&job.name_any()) {
                entry.names.push(job.name_any());
            }
        }
    });
    seen
}

#[derive(Clone)]
struct SeenJobs {
    run: Timestamp,
    seen_at: Timestamp,
    names: Vec<String>,
}

/// Samples the manager's request count every second: (when, requests so far).
async fn sample_requests(metrics: HttpClient, samples: Arc<Mutex<Vec<(Instant, f64)>>>) {
    loop {
        if let Ok(reply) = metrics.get("/metrics", None).await {
            let total = sum(&reply.text(), "rest_client_requests_total{");
            samples
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((Instant::now(), total));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The first window of samples in which more was sent than the token bucket lets through
/// (`QPS` a second plus the `BURST` saved up), if any. Samples are a second apart at best,
/// so a window is at least five seconds: the scrape's own timing blurs shorter ones.
fn rate_excess(samples: &[(Instant, f64)]) -> Option<String> {
    assert!(samples.len() > 10, "the request rate was sampled");
    for (i, (start, before)) in samples.iter().enumerate() {
        for (end, after) in &samples[i + 1..] {
            let elapsed = end.duration_since(*start).as_secs_f64();
            // One extra second: the scrape that ends a window may have waited its turn.
            if elapsed >= 5.0 && after - before > QPS * (elapsed + 1.0) + BURST {
                return Some(format!("{} requests in {elapsed:.1} s", after - before));
            }
        }
    }
    None
}

fn sum(scrape: &str, prefix: &str) -> f64 {
    scrape
        .lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn counter(scrape: &str, series: &str) -> u64 {
    sum(scrape, series) as u64
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    sorted[(sorted.len() * percent / 100).min(sorted.len() - 1)]
}

/// A `/proc/<pid>/status` figure in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| {
            line.strip_prefix(field)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

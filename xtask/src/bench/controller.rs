//! `cargo xtask bench controller`: the CronJob controller under many CronJobs.
//!
//! On a fresh local control plane, creates `--cronjobs` CronJobs (every minute, in one
//! namespace), then starts the `controller` binary as a child process (as deployed: its
//! own process, so its memory is its own) and measures:
//! - the time from the manager's start until every CronJob has been reconciled once (its
//!   status has conditions), and the reconciles per second over that time (the manager's
//!   `controller_runtime_reconcile_total`, scraped over plain HTTP);
//! - for the first run that starts after that (every CronJob is due in the same minute:
//!   every minute, or every `--every-minutes`), the delay between the scheduled time
//!   and the moment a client watching Jobs sees each CronJob's Job (p50, p99, max);
//! - the manager's peak RSS (`VmHWM`, the high-water mark of its whole life) and its RSS
//!   (`VmRSS`) a few seconds after that minute's work is done, from `/proc/<pid>/status`;
//! - the watches the manager keeps open, per resource, as the apiserver counts them
//!   (`apiserver_longrunning_requests{verb="WATCH"}` on its `/metrics`).
//!
//! `--compare <git-rev>` measures the `controller` binary of another commit the same way in
//! the same run (built from a git worktree under `target/bench/`, on a fresh control plane
//! of its own), and prints both tables and the ratios.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use api::v1::CronJob;
use futures::{StreamExt as _, TryStreamExt as _, stream};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::{ControlPlane, assets, open_watches};
use kubebuilder_runtime::bench::percentile;
use kubebuilder_runtime::client::HttpClient;
use serde_json::json;

use kubebuilder_cli::run::{build_manager, free_port, spawn_manager, stop_manager, wait_ready};

/// The annotation the controller puts the scheduled time in.
const SCHEDULED_AT: &str = "batch.tutorial.kubebuilder.io/scheduled-at";
/// CronJobs created at once.
const CREATE_CONCURRENCY: usize = 32;
/// How long the manager may take to reconcile every CronJob, and to start one minute's Jobs.
const PHASE_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the manager is left alone after the minute's Jobs before its RSS is read.
const SETTLE: Duration = Duration::from_secs(5);

#[derive(clap::Args)]
pub struct Args {
    /// How many CronJobs to create.
    #[arg(long, default_value_t = 1000)]
    cronjobs: usize,

    /// Also measure the controller of this git revision (a commit, branch or tag).
    #[arg(long, value_name = "GIT_REV")]
    compare: Option<String>,

    /// Every CronJob runs every N minutes (`*/N * * * *`), all in the same minute: with
    /// many CronJobs, a run every minute is more than one apiserver on two cores writes
    /// in a minute.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=30))]
    every_minutes: u16,
}

/// What one run measured.
struct Figures {
    cronjobs: usize,
    all_reconciled: Duration,
    reconciles: u64,
    schedule_delays: Vec<Duration>,
    minute: Timestamp,
    peak_rss_kib: u64,
    steady_rss_kib: u64,
    /// Watches the manager keeps open on the apiserver, by resource.
    watches: BTreeMap<String, u64>,
}

pub fn run(args: Args, release: bool) -> Result<()> {
    ensure!(args.cronjobs > 0, "--cronjobs must be at least 1");
    let root = kubebuilder_cli::workspace_root();
    let mut builds = vec![("this tree".to_owned(), build_manager(&root, release)?)];
    if let Some(rev) = &args.compare {
        let tree = worktree(&root, rev)?;
        builds.push((rev.clone(), build_manager(&tree, release)?));
    }
    assets::install()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let mut report = String::new();
    let mut measured = Vec::new();
    for (label, binary) in &builds {
        eprintln!("xtask: measuring the controller of {label}");
        // A fresh control plane each: no object or watch of one run reaches the next.
        let plane = ControlPlane::start()?;
        let figures =
            runtime.block_on(measure(&plane, binary, args.cronjobs, args.every_minutes))?;
        plane.stop();
        report += &table(&figures, label, release);
        measured.push(figures);
    }
    if let [new, old] = measured.as_slice() {
        report += &comparison(new, old, &builds[1].0);
    }
    super::publish(&report, "controller.md")
}

/// A git worktree of `rev` under `target/bench/`, made (or moved to `rev`) for the
/// comparison.
fn worktree(root: &std::path::Path, rev: &str) -> Result<std::path::PathBuf> {
    let dir = super::output_dir()?.join(format!("compare-{}", rev.replace('/', "-")));
    let git = |args: &[&str], dir: &std::path::Path| -> Result<()> {
        let status = Command::new("git").args(args).current_dir(dir).status()?;
        ensure!(status.success(), "git {} failed ({status})", args.join(" "));
        Ok(())
    };
    if dir.join(".git").exists() {
        git(&["checkout", "--quiet", "--detach", rev], &dir)?;
    } else {
        let path = dir.to_string_lossy();
        git(&["worktree", "add", "--detach", &path, rev], root)?;
    }
    Ok(dir)
}

async fn measure(
    plane: &ControlPlane,
    binary: &std::path::Path,
    count: usize,
    every_minutes: u16,
) -> Result<Figures> {
    plane.install_crds(&[CronJob::crd()]).await?;
    let client = plane.client().await?;
    let namespace = plane.create_namespace("bench").await?;
    eprintln!("xtask: creating {count} CronJobs in namespace {namespace}");
    let schedule = match every_minutes {
        1 => "* * * * *".to_owned(),
        n => format!("*/{n} * * * *"),
    };
    if every_minutes > 1 {
        // Start right after a run's minute, so that creating and reconciling the CronJobs
        // fits in the period before the measured run: no run falls due while they are
        // created (which would put a minute's Jobs into one measurement and not another).
        let period = 60 * i64::from(every_minutes);
        let now = Timestamp::now().as_second();
        let wait = (period - now.rem_euclid(period) + 2) % period;
        eprintln!("xtask: waiting {wait} s for the start of a {every_minutes}-minute period");
        tokio::time::sleep(Duration::from_secs(wait.unsigned_abs())).await;
    }
    create_cronjobs(
        &Api::namespaced(client.clone(), &namespace),
        count,
        &schedule,
    )
    .await?;

    let before = open_watches(&client).await?;
    let probe_port = free_port()?;
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let log_path = super::output_dir()?.join("controller-manager.log");
    let log = std::fs::File::create(&log_path)?;
    let mut command = Command::new(binary);
    command
        .args([
            format!("--namespace={namespace}"),
            format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            format!("--metrics-bind-address={metrics_addr}"),
            "--metrics-secure=false".to_owned(),
        ])
        .env("KUBECONFIG", plane.kubeconfig_path())
        .env("ENABLE_WEBHOOKS", "false")
        .stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null());
    eprintln!("xtask: starting the manager (log: {})", log_path.display());
    let started = Instant::now();
    let mut manager = spawn_manager(command)?;
    let pid = manager.id();

    let measured = measure_manager(
        &client,
        &namespace,
        (count, every_minutes),
        started,
        metrics_addr,
        probe_port,
        &mut manager,
    )
    .await;
    // Read before stopping: VmHWM is the peak over the manager's whole life.
    let memory = memory_of(pid);
    let status = stop_manager(&mut manager).await?;
    let (all_reconciled, reconciles, minute, schedule_delays, during) = measured?;
    ensure!(
        status.success(),
        "the manager exited with {status}; see {}",
        log_path.display()
    );
    let (steady_rss_kib, peak_rss_kib) =
        memory.context("cannot read the manager's memory figures")?;
    Ok(Figures {
        cronjobs: count,
        all_reconciled,
        reconciles,
        schedule_delays,
        minute,
        peak_rss_kib,
        steady_rss_kib,
        watches: opened_by_manager(&before, &during),
    })
}

/// The watches open while the manager ran, less those open before it started and the
/// benchmark's own Job watch.
fn opened_by_manager(
    before: &BTreeMap<String, u64>,
    during: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    during
        .iter()
        .map(|(resource, count)| {
            let own = u64::from(resource == "jobs");
            let earlier = before.get(resource).copied().unwrap_or(0);
            (resource.clone(), count.saturating_sub(earlier + own))
        })
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// The timed part: every CronJob reconciled once, then one minute's Jobs.
async fn measure_manager(
    client: &Client,
    namespace: &str,
    (count, every_minutes): (usize, u16),
    started: Instant,
    metrics_addr: SocketAddr,
    probe_port: u16,
    manager: &mut Child,
) -> Result<(
    Duration,
    u64,
    Timestamp,
    Vec<Duration>,
    BTreeMap<String, u64>,
)> {
    // Watched from now on, so that the minute's Jobs are seen as they are created; the
    // CronJobs are watched too (a list of thousands every tick would load the apiserver
    // the benchmark measures).
    let seen = SeenJobs::default();
    let watch = tokio::spawn(watch_new_jobs(
        Api::namespaced(client.clone(), namespace),
        seen.clone(),
    ));
    let reconciled = Reconciled::default();
    let watch_reconciled = tokio::spawn(watch_reconciled(
        Api::namespaced(client.clone(), namespace),
        reconciled.clone(),
    ));
    wait_ready(SocketAddr::from(([127, 0, 0, 1], probe_port)), manager).await?;

    let deadline = Instant::now() + PHASE_TIMEOUT;
    loop {
        let done = lock(&reconciled).len();
        if done == count {
            break;
        }
        if let Some(status) = manager.try_wait()? {
            bail!("the manager exited ({status})");
        }
        ensure!(
            Instant::now() < deadline,
            "only {done} of {count} CronJobs reconciled after {PHASE_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    watch_reconciled.abort();
    let all_reconciled = started.elapsed();
    let reconciles = reconcile_total(metrics_addr).await?;
    let watches = open_watches(client).await?;
    eprintln!("xtask: every CronJob reconciled after {all_reconciled:.2?}");

    // The first run after now (with a second to spare, so its minute is not half over).
    let now = Timestamp::now() + SignedDuration::from_secs(1);
    let period = 60 * i64::from(every_minutes);
    let minute = Timestamp::from_second((now.as_second() / period + 1) * period)?;
    eprintln!("xtask: waiting for the Jobs of {minute}");
    let deadline = Instant::now() + Duration::from_secs(period as u64 + 10) + PHASE_TIMEOUT;
    let delays = loop {
        let delays = delays_for(&seen, minute);
        if delays.len() == count {
            break delays;
        }
        if let Some(status) = manager.try_wait()? {
            bail!("the manager exited ({status})");
        }
        ensure!(
            Instant::now() < deadline,
            "only {} of {count} Jobs for {minute} after {PHASE_TIMEOUT:?}",
            delays.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    watch.abort();
    // What the manager holds once the minute's work is done.
    tokio::time::sleep(SETTLE).await;
    Ok((all_reconciled, reconciles, minute, delays, watches))
}

async fn create_cronjobs(cronjobs: &Api<CronJob>, count: usize, schedule: &str) -> Result<()> {
    stream::iter(0..count)
        .map(|index| async move {
            let cronjob: CronJob = serde_json::from_value(json!({
                "apiVersion": "batch.tutorial.kubebuilder.io/v1",
                "kind": "CronJob",
                "metadata": {"name": format!("bench-{index:05}")},
                "spec": {
                    "schedule": schedule,
                    "jobTemplate": {"spec": {"template": {"spec": {
                        "containers": [{"name": "hello", "image": "busybox"}],
                        "restartPolicy": "Never"
                    }}}}
                }
            }))?;
            cronjobs.create(&PostParams::default(), &cronjob).await?;
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// Jobs as a watching client first sees them, by name: scheduled time and when seen.
type SeenJobs = Arc<Mutex<HashMap<String, (Timestamp, Timestamp)>>>;

/// The CronJobs seen with conditions: reconciled at least once.
type Reconciled = Arc<Mutex<std::collections::HashSet<String>>>;

/// Records every CronJob that has status conditions, until aborted.
async fn watch_reconciled(cronjobs: Api<CronJob>, reconciled: Reconciled) {
    watcher(cronjobs, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .for_each(|cronjob| {
            if let Ok(cronjob) = cronjob
                && cronjob
                    .status
                    .as_ref()
                    .is_some_and(|status| !status.conditions.is_empty())
            {
                lock(&reconciled).insert(cronjob.name_any());
            }
            futures::future::ready(())
        })
        .await;
}

/// Records every Job with a scheduled time when first seen, until aborted.
async fn watch_new_jobs(jobs: Api<Job>, seen: SeenJobs) {
    watcher(jobs, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .for_each(|job| {
            let at = Timestamp::now();
            if let Ok(job) = job
                && let Some(scheduled) = job
                    .annotations()
                    .get(SCHEDULED_AT)
                    .and_then(|time| time.parse().ok())
            {
                lock(&seen).entry(job.name_any()).or_insert((scheduled, at));
            }
            futures::future::ready(())
        })
        .await;
}

/// The delays of the Jobs seen so far for the run at `minute`.
fn delays_for(seen: &SeenJobs, minute: Timestamp) -> Vec<Duration> {
    lock(seen)
        .values()
        .filter(|(scheduled, _)| *scheduled == minute)
        .map(|(scheduled, at)| {
            Duration::try_from(at.duration_since(*scheduled)).unwrap_or_default()
        })
        .collect()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `controller_runtime_reconcile_total` of the cronjob controller, all results.
async fn reconcile_total(metrics_addr: SocketAddr) -> Result<u64> {
    let scrape = HttpClient::plain(metrics_addr)
        .get("/metrics", None)
        .await?
        .text();
    Ok(scrape
        .lines()
        .filter(|line| {
            line.starts_with("controller_runtime_reconcile_total{controller=\"cronjob\",")
        })
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .map(|value| value as u64)
        .sum())
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_of(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn table(figures: &Figures, label: &str, release: bool) -> String {
    let mut delays = figures.schedule_delays.clone();
    delays.sort_unstable();
    let rate = figures.reconciles as f64 / figures.all_reconciled.as_secs_f64();
    let mib = |kib: u64| kib as f64 / 1024.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## CronJob controller of {label}, {} CronJobs ({} build, local control plane)\n",
        figures.cronjobs,
        if release { "release" } else { "debug" }
    );
    let _ = writeln!(out, "| measure | value |");
    let _ = writeln!(out, "|---|---|");
    let rows = [
        (
            "start → every CronJob reconciled once",
            format!("{:.2} s", figures.all_reconciled.as_secs_f64()),
        ),
        ("reconciles in that time", figures.reconciles.to_string()),
        ("reconciles per second", format!("{rate:.0}")),
        (
            "schedule → Job seen, p50",
            format!("{:.0} ms", percentile(&delays, 50).as_secs_f64() * 1000.0),
        ),
        (
            "schedule → Job seen, p99",
            format!("{:.0} ms", percentile(&delays, 99).as_secs_f64() * 1000.0),
        ),
        (
            "schedule → Job seen, max",
            format!(
                "{:.0} ms",
                delays.last().copied().unwrap_or_default().as_secs_f64() * 1000.0
            ),
        ),
        (
            "manager peak RSS (VmHWM)",
            format!("{:.1} MiB", mib(figures.peak_rss_kib)),
        ),
        (
            "manager RSS after the minute's Jobs",
            format!("{:.1} MiB", mib(figures.steady_rss_kib)),
        ),
        (
            "watches the manager keeps open (apiserver's count)",
            watch_summary(&figures.watches),
        ),
    ];
    for (measure, value) in rows {
        let _ = writeln!(out, "| {measure} | {value} |");
    }
    let _ = writeln!(
        out,
        "\nJobs measured: the {} runs of {}.",
        delays.len(),
        figures.minute
    );
    out
}

fn watch_summary(watches: &BTreeMap<String, u64>) -> String {
    watches
        .iter()
        .map(|(resource, count)| format!("{resource} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This tree's figures against those of `rev`.
fn comparison(new: &Figures, old: &Figures, rev: &str) -> String {
    let mut delays = [new, old].map(|figures| {
        let mut delays = figures.schedule_delays.clone();
        delays.sort_unstable();
        delays
    });
    let [new_delays, old_delays] = &mut delays;
    let ratio = |new: f64, old: f64| format!("{:.2}", new / old);
    let mut out = String::new();
    let _ = writeln!(out, "\n## This tree against {rev} (ratio new / old)\n");
    let _ = writeln!(out, "| measure | ratio |");
    let _ = writeln!(out, "|---|---|");
    let rows = [
        (
            "start → every CronJob reconciled once",
            ratio(
                new.all_reconciled.as_secs_f64(),
                old.all_reconciled.as_secs_f64(),
            ),
        ),
        (
            "schedule → Job seen, p50",
            ratio(
                percentile(new_delays, 50).as_secs_f64(),
                percentile(old_delays, 50).as_secs_f64(),
            ),
        ),
        (
            "schedule → Job seen, p99",
            ratio(
                percentile(new_delays, 99).as_secs_f64(),
                percentile(old_delays, 99).as_secs_f64(),
            ),
        ),
        (
            "manager peak RSS",
            ratio(new.peak_rss_kib as f64, old.peak_rss_kib as f64),
        ),
        (
            "manager RSS after the minute's Jobs",
            ratio(new.steady_rss_kib as f64, old.steady_rss_kib as f64),
        ),
    ];
    for (measure, value) in rows {
        let _ = writeln!(out, "| {measure} | {value} |");
    }
    out
}

//! `cargo xtask bench controller`: the CronJob controller under many CronJobs.
//!
//! For each size given with `--cronjobs` (`0,1000,10000`: one after the other), on a fresh
//! local control plane, creates that many CronJobs (every minute, in one namespace), then
//! starts the `controller` binary as a child process (as deployed: its own process, so its
//! memory is its own) and measures:
//! - the time from the manager's start until every CronJob has been reconciled once (its
//!   status has conditions), and the reconciles per second over that time (the manager's
//!   `controller_runtime_reconcile_total`, scraped over plain HTTP);
//! - for the first run that starts after that (every CronJob is due in the same minute:
//!   every minute, or every `--every-minutes`), the delay between the scheduled time
//!   and the moment a client watching Jobs sees each CronJob's Job (p50, p99, max);
//! - the manager's peak RSS (`VmHWM`, the high-water mark of its whole life) and its RSS
//!   (`VmRSS`) a few seconds after that minute's work is done, when it caches every
//!   CronJob and one Job of each (active: the control plane runs no Job controller), from
//!   `/proc/<pid>/status`; with several sizes, the bytes each CronJob adds (the slope);
//! - both memory figures again at the end of each phase (ready, every CronJob reconciled,
//!   the run's Jobs seen), and so the phase in which the peak was reached;
//! - its CPU time and its request rate to the apiserver (client-go's
//!   `rest_client_requests_total` on its metrics, over its lifetime);
//! - the watches the manager keeps open, per resource, as the apiserver counts them
//!   (`apiserver_longrunning_requests{verb="WATCH"}` on its `/metrics`).
//!
//! Size 0 measures the idle manager: its memory and CPU once ready, with nothing to do.
//!
//! `--compare <git-rev>` measures the `controller` binary of another commit the same way in
//! the same run (built from a git worktree under `target/bench/`, in the same target
//! directory, on fresh control planes of its own), size by size and build by build in
//! turn, and prints both tables and the ratios.
//! `--heap-profile` runs the largest size once more under heaptrack and names the
//! allocation sites holding the most memory at the manager's peak.
//!
//! `--selector-secrets N` measures something else instead: the cache of a kind watched
//! with a label selector among N objects it does not match, against an unfiltered watch
//! (see `selector.rs`). `--generation-filter N` too: the reconciles per CronJob of a
//! controller whose status is only a report, with and without the `GenerationChanged`
//! event filter (see `filter.rs`).

mod filter;
mod process;
mod report;
mod selector;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures::{StreamExt as _, TryStreamExt as _, stream};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::{ControlPlane, assets, open_watches};
use serde_json::json;

use kubebuilder_cli::run::{build_manager, free_port, spawn_manager, stop_manager, wait_ready};

/// The annotation the controller puts the scheduled time in.
const SCHEDULED_AT: &str = "batch.tutorial.kubebuilder.io/scheduled-at";
/// The CronJob kind's CRD, as `cargo xtask manifests` writes it (and `--check` keeps it
/// current): xtask does not link `api`, so the CronJobs are dynamic objects of its v1.
const CRONJOB_CRD: &str = "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml";
const CRONJOB_GROUP: &str = "batch.tutorial.kubebuilder.io";
/// The version the controller reconciles, its storage version.
const CRONJOB_VERSION: &str = "v1";
/// CronJobs created at once.
const CREATE_CONCURRENCY: usize = 32;
/// How long the manager may take to reconcile every CronJob.
const PHASE_TIMEOUT: Duration = Duration::from_secs(1800);
/// How long after the next run is due the Jobs of the measured run may still appear (from
/// reconciles that started before it).
const NEXT_RUN_GRACE: Duration = Duration::from_secs(10);
/// How long the manager is left alone after the minute's Jobs before its RSS is read.
const SETTLE: Duration = Duration::from_secs(5);

#[derive(clap::Args)]
pub struct Args {
    /// How many CronJobs to create; a list (`0,1000,10000`) measures each size on a
    /// fresh control plane and gives the bytes each CronJob adds. 0 measures the idle
    /// manager.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000",
        value_name = "N,..."
    )]
    cronjobs: Vec<usize>,

    /// Also measure the controller of this git revision (a commit, branch or tag).
    #[arg(long, value_name = "GIT_REV")]
    compare: Option<String>,

    /// Every CronJob runs every N minutes (`*/N * * * *`), all in the same minute: with
    /// many CronJobs, a run every minute is more than one apiserver on two cores writes
    /// in a minute.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=30))]
    every_minutes: u16,

    /// Then run the largest size once more with this tree's manager under heaptrack
    /// (Debian's, installed when missing) and print the allocation sites holding the most
    /// memory at its peak. A run of its own: the profiler's memory would count in the RSS.
    #[arg(long)]
    heap_profile: bool,

    /// An extra argument for the manager of every build (repeatable), e.g.
    /// `--manager-arg=--cache-keep-managed-fields`.
    #[arg(long = "manager-arg", value_name = "ARG", allow_hyphen_values = true)]
    manager_args: Vec<String>,

    /// An environment variable for the manager of every build (repeatable), e.g.
    /// `--manager-env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2` to measure
    /// another allocator than the system's.
    #[arg(long = "manager-env", value_name = "NAME=VALUE", value_parser = parse_env)]
    manager_env: Vec<(String, String)>,

    /// Instead of the CronJob runs: create N Secrets that a label selector does not match
    /// and compare the memory of a cache of Secrets watched with that selector to an
    /// unfiltered one's (10000 for the figure the issue asks for).
    #[arg(long, value_name = "N", conflicts_with_all = ["compare", "heap_profile"])]
    selector_secrets: Option<usize>,

    /// Instead of the CronJob runs: N CronJobs reconciled by a controller whose status is
    /// only a report, with the `GenerationChanged` event filter and without it, and the
    /// reconciles per CronJob of each.
    #[arg(long, value_name = "N", conflicts_with_all = ["compare", "heap_profile", "selector_secrets"])]
    generation_filter: Option<usize>,
}

/// `NAME=VALUE`, as `env` takes it.
fn parse_env(variable: &str) -> Result<(String, String), String> {
    match variable.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("`{variable}` is not NAME=VALUE")),
    }
}

/// What one size measured.
struct Figures {
    cronjobs: usize,
    /// `None` for the idle manager (no CronJobs).
    work: Option<Work>,
    peak_rss_kib: u64,
    steady_rss_kib: u64,
    /// The memory at the end of each phase, in order.
    marks: Vec<Mark>,
    /// User and system CPU time over the manager's life.
    cpu: Duration,
    /// Requests the manager sent to the apiserver, and over how long.
    requests: u64,
    lifetime: Duration,
    /// Watches the manager keeps open on the apiserver, by resource.
    watches: BTreeMap<String, u64>,
}

/// The manager's memory when one phase of its run ended.
struct Mark {
    phase: Phase,
    rss_kib: u64,
    peak_rss_kib: u64,
}

/// The phases of one run, in order; the memory is read at the end of each.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Started, the caches synced, the readiness probe answering.
    Ready,
    /// Every CronJob's status written once.
    Reconciled,
    /// Every Job of the measured run seen.
    RunJobs,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Ready => "start → ready",
            Phase::Reconciled => "ready → every CronJob reconciled",
            Phase::RunJobs => "reconciled → the run's Jobs seen",
        }
    }
}

/// The reconciles and the minute's Jobs of one size.
struct Work {
    all_reconciled: Duration,
    reconciles: u64,
    /// Sorted.
    schedule_delays: Vec<Duration>,
    minute: Timestamp,
}

/// One manager binary to measure.
struct Build {
    label: String,
    binary: PathBuf,
}

/// How one manager is run.
struct Launch<'a> {
    binary: &'a Path,
    cronjobs: usize,
    every_minutes: u16,
    manager_args: &'a [String],
    manager_env: &'a [(String, String)],
    /// Run under heaptrack, writing its profile here.
    heap_profile: Option<&'a Path>,
}

pub fn run(args: Args, release: bool) -> Result<()> {
    if let Some(secrets) = args.selector_secrets {
        assets::install()?;
        return selector::run(&tokio::runtime::Runtime::new()?, secrets);
    }
    if let Some(cronjobs) = args.generation_filter {
        assets::install()?;
        return filter::run(&tokio::runtime::Runtime::new()?, cronjobs);
    }
    ensure!(
        !args.cronjobs.is_empty(),
        "--cronjobs needs at least one size"
    );
    // heaptrack preloads its own library: the profile would not be of the asked allocator.
    ensure!(
        !(args.heap_profile
            && args
                .manager_env
                .iter()
                .any(|(name, _)| name == "LD_PRELOAD")),
        "--heap-profile runs the manager under heaptrack's LD_PRELOAD; drop --manager-env LD_PRELOAD=..."
    );
    let root = kubebuilder_cli::workspace_root();
    let mut builds = vec![Build::of(&root, "this tree", release)?];
    if let Some(rev) = &args.compare {
        builds.push(Build::of(&worktree(&root, rev)?, rev, release)?);
    }
    assets::install()?;
    let runtime = tokio::runtime::Runtime::new()?;
    // Size by size, each build in turn (A B, A B): a machine whose load changes during the
    // run weighs on both builds alike.
    let mut measured: Vec<Vec<Figures>> = builds.iter().map(|_| Vec::new()).collect();
    for &cronjobs in &args.cronjobs {
        for (build, sizes) in builds.iter().zip(&mut measured) {
            eprintln!(
                "xtask: measuring the controller of {} with {cronjobs} CronJobs",
                build.label
            );
            let launch = Launch {
                binary: &build.binary,
                cronjobs,
                every_minutes: args.every_minutes,
                manager_args: &args.manager_args,
                manager_env: &args.manager_env,
                heap_profile: None,
            };
            sizes.push(on_fresh_control_plane(&runtime, &launch)?);
        }
    }
    let mut report = String::new();
    for (name, value) in &args.manager_env {
        report += &format!("\nEvery manager ran with `{name}={value}`.\n");
    }
    for (build, sizes) in builds.iter().zip(&measured) {
        report += &report::table(&build.label, sizes, release);
    }
    if let [new, old] = measured.as_slice() {
        report += &report::comparison(new, old, &builds[1].label);
    }
    super::publish(&report, "controller.md")?;
    if args.heap_profile {
        let cronjobs = args.cronjobs.iter().copied().max().unwrap_or_default();
        let profile = super::output_dir()?.join("heaptrack-manager");
        let launch = Launch {
            binary: &builds[0].binary,
            cronjobs,
            every_minutes: args.every_minutes,
            manager_args: &args.manager_args,
            manager_env: &args.manager_env,
            heap_profile: Some(&profile),
        };
        eprintln!("xtask: profiling the manager's heap with {cronjobs} CronJobs (heaptrack)");
        on_fresh_control_plane(&runtime, &launch)?;
        super::publish(
            &process::heap_summary(&profile, cronjobs)?,
            "controller-heap.md",
        )?;
    }
    Ok(())
}

/// Measures one launch on a control plane of its own: no object or watch of one run
/// reaches the next.
fn on_fresh_control_plane(runtime: &tokio::runtime::Runtime, launch: &Launch) -> Result<Figures> {
    let plane = ControlPlane::start()?;
    let figures = runtime.block_on(measure(&plane, launch));
    plane.stop();
    figures
}

impl Build {
    /// Builds the manager of the workspace at `root` and keeps a copy of its binary under
    /// `target/bench/`: both builds share the target directory, so the second would
    /// otherwise overwrite the first.
    fn of(root: &Path, label: &str, release: bool) -> Result<Self> {
        let built = build_manager(root, release)?;
        let slug: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let binary = super::output_dir()?.join(format!("controller-{slug}"));
        std::fs::copy(&built, &binary)
            .with_context(|| format!("copying {} to {}", built.display(), binary.display()))?;
        Ok(Self {
            label: label.to_owned(),
            binary,
        })
    }
}

/// A git worktree of `rev` under `target/bench/`, made (or moved to `rev`) for the
/// comparison.
fn worktree(root: &Path, rev: &str) -> Result<PathBuf> {
    let dir = super::output_dir()?.join(format!("compare-{}", rev.replace('/', "-")));
    let git = |args: &[&str], dir: &Path| -> Result<()> {
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

async fn measure(plane: &ControlPlane, launch: &Launch<'_>) -> Result<Figures> {
    plane.install_crds(&[cronjob_crd()?]).await?;
    let client = plane.client().await?;
    let namespace = plane.create_namespace("bench").await?;
    if launch.cronjobs > 0 {
        create_cronjobs(&cronjobs(&client, &namespace), launch).await?;
    }

    let before = open_watches(&client).await?;
    let probe_port = free_port()?;
    let metrics_addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let log_path = super::output_dir()?.join("controller-manager.log");
    let log = std::fs::File::create(&log_path)?;
    let mut command = match launch.heap_profile {
        Some(profile) => process::under_heaptrack(launch.binary, profile)?,
        None => Command::new(launch.binary),
    };
    command
        .args([
            format!("--namespace={namespace}"),
            format!("--health-probe-bind-address=127.0.0.1:{probe_port}"),
            format!("--metrics-bind-address={metrics_addr}"),
            "--metrics-secure=false".to_owned(),
        ])
        .args(launch.manager_args)
        .envs(launch.manager_env.iter().map(|(name, value)| (name, value)))
        .env("KUBECONFIG", plane.kubeconfig_path())
        .env("ENABLE_WEBHOOKS", "false")
        .stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null());
    eprintln!("xtask: starting the manager (log: {})", log_path.display());
    let started = Instant::now();
    let mut manager = spawn_manager(command)?;
    let pid = process::manager_pid(&manager, launch.heap_profile.is_some())?;

    let ready = wait_ready(SocketAddr::from(([127, 0, 0, 1], probe_port)), &mut manager).await;
    let mut marks = Vec::new();
    mark(&mut marks, Phase::Ready, pid);
    let work = match (ready, launch.cronjobs) {
        (Err(error), _) => Err(error),
        (Ok(()), 0) => Ok(None),
        (Ok(()), count) => {
            let phases = Phases {
                client: &client,
                namespace: &namespace,
                count,
                every_minutes: launch.every_minutes,
                metrics_addr,
            };
            phases
                .run(started, &mut manager, &mut |phase| {
                    mark(&mut marks, phase, pid)
                })
                .await
                .map(Some)
        }
    };
    // What the manager holds once its work is done.
    tokio::time::sleep(SETTLE).await;
    let during = open_watches(&client).await;
    let requests = rest_client_requests(metrics_addr).await;
    let lifetime = started.elapsed();
    // Read before stopping: VmHWM is the peak over the manager's whole life.
    let memory = process::memory_of(pid);
    let cpu = process::cpu_time_of(pid);
    let status = stop_manager_process(&mut manager, pid).await?;
    let work = work?;
    ensure!(
        status.success(),
        "the manager exited with {status}; see {}",
        log_path.display()
    );
    let (steady_rss_kib, peak_rss_kib) =
        memory.context("cannot read the manager's memory figures")?;
    Ok(Figures {
        cronjobs: launch.cronjobs,
        work,
        peak_rss_kib,
        steady_rss_kib,
        marks,
        cpu: cpu.context("cannot read the manager's CPU time")?,
        requests: requests?,
        lifetime,
        watches: opened_by_manager(&before, &during?),
    })
}

/// Records the manager's memory at the end of `phase` (nothing when it cannot be read: the
/// figures read after the run then say why).
fn mark(marks: &mut Vec<Mark>, phase: Phase, pid: u32) {
    if let Some((rss_kib, peak_rss_kib)) = process::memory_of(pid) {
        marks.push(Mark {
            phase,
            rss_kib,
            peak_rss_kib,
        });
    }
}

/// Stops the manager; under heaptrack, the manager itself, and heaptrack's script then
/// ends by itself once it has written the profile.
async fn stop_manager_process(manager: &mut Child, pid: u32) -> Result<std::process::ExitStatus> {
    if pid == manager.id() {
        return stop_manager(manager).await;
    }
    let pid = libc::pid_t::try_from(pid).context("the manager's process id")?;
    // SAFETY: signalling the profiled manager, a child of our child.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    loop {
        if let Some(status) = manager.try_wait()? {
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The watches open at the end of the run, less those open before the manager started.
/// The benchmark's own watches are gone by then: dropped when its phases ended, closed
/// during the settling time.
fn opened_by_manager(
    before: &BTreeMap<String, u64>,
    during: &BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    during
        .iter()
        .map(|(resource, count)| {
            let earlier = before.get(resource).copied().unwrap_or(0);
            (resource.clone(), count.saturating_sub(earlier))
        })
        .filter(|(_, count)| *count > 0)
        .collect()
}

/// The timed part of one size: every CronJob reconciled once, then one minute's Jobs.
struct Phases<'a> {
    client: &'a Client,
    namespace: &'a str,
    count: usize,
    every_minutes: u16,
    metrics_addr: SocketAddr,
}

impl Phases<'_> {
    /// Runs the phases after [`Phase::Ready`], calling `ended` at the end of each.
    async fn run(
        &self,
        started: Instant,
        manager: &mut Child,
        ended: &mut impl FnMut(Phase),
    ) -> Result<Work> {
        // Watched from now on, so that the minute's Jobs are seen as they are created;
        // the CronJobs are watched too (a list of thousands every tick would load the
        // apiserver the benchmark measures).
        let seen = SeenJobs::default();
        let watch = tokio::spawn(watch_new_jobs(
            Api::namespaced(self.client.clone(), self.namespace),
            seen.clone(),
        ));
        let reconciled = Reconciled::default();
        let watch_reconciled = tokio::spawn(watch_reconciled(
            cronjobs(self.client, self.namespace),
            reconciled.clone(),
        ));
        let all_reconciled = self.all_reconciled(&reconciled, started, manager).await;
        watch_reconciled.abort();
        let all_reconciled = all_reconciled?;
        ended(Phase::Reconciled);
        let reconciles = reconcile_total(self.metrics_addr).await?;
        eprintln!("xtask: every CronJob reconciled after {all_reconciled:.2?}");
        let minute = self.minute_jobs(&seen, manager).await;
        watch.abort();
        let (minute, mut schedule_delays) = minute?;
        ended(Phase::RunJobs);
        schedule_delays.sort_unstable();
        Ok(Work {
            all_reconciled,
            reconciles,
            schedule_delays,
            minute,
        })
    }

    /// Waits until every CronJob has been reconciled once; the time since `started`.
    async fn all_reconciled(
        &self,
        reconciled: &Reconciled,
        started: Instant,
        manager: &mut Child,
    ) -> Result<Duration> {
        let deadline = Instant::now() + PHASE_TIMEOUT;
        loop {
            let done = lock(reconciled).len();
            if done == self.count {
                return Ok(started.elapsed());
            }
            if let Some(status) = manager.try_wait()? {
                bail!("the manager exited ({status})");
            }
            ensure!(
                Instant::now() < deadline,
                "only {done} of {} CronJobs reconciled after {PHASE_TIMEOUT:?}",
                self.count
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Waits for the Jobs of the first run after now; its time and their delays.
    ///
    /// Fails once the next run is due (and a few seconds more, for reconciles under way):
    /// a CronJob reconciled after that gets the next run's Job instead, as the tutorial's
    /// controller creates only the latest missed run, so the Jobs still missing never come.
    async fn minute_jobs(
        &self,
        seen: &SeenJobs,
        manager: &mut Child,
    ) -> Result<(Timestamp, Vec<Duration>)> {
        // With a second to spare, so that the run's minute is not half over.
        let now = Timestamp::now() + SignedDuration::from_secs(1);
        let period = 60 * i64::from(self.every_minutes);
        let minute = Timestamp::from_second((now.as_second() / period + 1) * period)?;
        eprintln!("xtask: waiting for the Jobs of {minute}");
        let next = minute + SignedDuration::from_secs(period);
        let until_next = next.duration_since(Timestamp::now()).unsigned_abs();
        let deadline = Instant::now() + until_next + NEXT_RUN_GRACE;
        loop {
            let delays = delays_for(seen, minute);
            if delays.len() == self.count {
                return Ok((minute, delays));
            }
            if let Some(status) = manager.try_wait()? {
                bail!("the manager exited ({status})");
            }
            ensure!(
                Instant::now() < deadline,
                "only {} of {} Jobs for {minute} when the next run ({next}) was due: the \
                 controller fell behind the schedule; measure with a longer --every-minutes",
                delays.len(),
                self.count
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// The CRD `api::v1::CronJob::crd()` gives: the CronJob's v1 alone, stored, without the
/// conversion webhook of the two-version CRD.
fn cronjob_crd() -> Result<CustomResourceDefinition> {
    let path = kubebuilder_cli::workspace_root().join(CRONJOB_CRD);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut crd: CustomResourceDefinition =
        serde_saphyr::from_str(&text).with_context(|| format!("{CRONJOB_CRD}: not a CRD"))?;
    crd.spec.conversion = None;
    crd.spec
        .versions
        .retain(|version| version.name == CRONJOB_VERSION);
    let version = crd
        .spec
        .versions
        .first_mut()
        .with_context(|| format!("{CRONJOB_CRD} has no version {CRONJOB_VERSION}"))?;
    version.storage = true;
    Ok(crd)
}

/// The CronJobs of `namespace`, at the version the controller reconciles.
fn cronjobs(client: &Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(CRONJOB_GROUP, CRONJOB_VERSION, "CronJob"),
        "cronjobs",
    );
    Api::namespaced_with(client.clone(), namespace, &resource)
}

/// Creates the launch's CronJobs, all due in the same minute.
async fn create_cronjobs(cronjobs: &Api<DynamicObject>, launch: &Launch<'_>) -> Result<()> {
    let schedule = match launch.every_minutes {
        1 => "* * * * *".to_owned(),
        n => format!("*/{n} * * * *"),
    };
    if launch.every_minutes > 1 {
        // Start right after a run's minute, so that creating and reconciling the CronJobs
        // fits in the period before the measured run: no run falls due while they are
        // created (which would put a minute's Jobs into one measurement and not another).
        let period = 60 * i64::from(launch.every_minutes);
        let now = Timestamp::now().as_second();
        let wait = (period - now.rem_euclid(period) + 2) % period;
        eprintln!(
            "xtask: waiting {wait} s for the start of a {}-minute period",
            launch.every_minutes
        );
        tokio::time::sleep(Duration::from_secs(wait.unsigned_abs())).await;
    }
    eprintln!("xtask: creating {} CronJobs", launch.cronjobs);
    let schedule = &schedule;
    stream::iter(0..launch.cronjobs)
        .map(|index| async move {
            let cronjob = new_cronjob(index, schedule)?;
            cronjobs.create(&PostParams::default(), &cronjob).await?;
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// The `index`th CronJob of a bench, running on `schedule`.
fn new_cronjob(index: usize, schedule: &str) -> Result<DynamicObject> {
    Ok(serde_json::from_value(json!({
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
    }))?)
}

/// Jobs as a watching client first sees them, by name: scheduled time and when seen.
type SeenJobs = Arc<Mutex<HashMap<String, (Timestamp, Timestamp)>>>;

/// The CronJobs seen with conditions: reconciled at least once.
type Reconciled = Arc<Mutex<std::collections::HashSet<String>>>;

/// Records every CronJob that has status conditions, until aborted.
async fn watch_reconciled(cronjobs: Api<DynamicObject>, reconciled: Reconciled) {
    watcher(cronjobs, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .for_each(|cronjob| {
            if let Ok(cronjob) = cronjob
                && cronjob.data["status"]["conditions"]
                    .as_array()
                    .is_some_and(|conditions| !conditions.is_empty())
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
    sum_of(
        metrics_addr,
        "controller_runtime_reconcile_total{controller=\"cronjob\",",
    )
    .await
}

/// client-go's `rest_client_requests_total`, every code, method and host.
async fn rest_client_requests(metrics_addr: SocketAddr) -> Result<u64> {
    sum_of(metrics_addr, "rest_client_requests_total{").await
}

/// The sum of the manager's samples whose line starts with `series`.
async fn sum_of(metrics_addr: SocketAddr, series: &str) -> Result<u64> {
    let scrape = HttpClient::plain(metrics_addr)
        .get("/metrics", None)
        .await?
        .text();
    Ok(scrape
        .lines()
        .filter(|line| line.starts_with(series))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .map(|value| value as u64)
        .sum())
}

#[cfg(test)]
mod tests {
    use super::parse_env;

    #[test]
    fn a_manager_variable_is_name_equals_value_and_anything_else_is_refused() {
        assert_eq!(
            parse_env("LD_PRELOAD=/usr/lib/libjemalloc.so.2=x"),
            Ok((
                "LD_PRELOAD".to_owned(),
                "/usr/lib/libjemalloc.so.2=x".to_owned()
            ))
        );
        assert_eq!(parse_env("EMPTY="), Ok(("EMPTY".to_owned(), String::new())));
        assert_eq!(
            parse_env("LD_PRELOAD"),
            Err("`LD_PRELOAD` is not NAME=VALUE".to_owned())
        );
        assert!(parse_env("=value").is_err());
    }
}

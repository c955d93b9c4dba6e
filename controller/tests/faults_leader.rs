//! Faults of the manager process itself, with the `controller` binary as deployed (one
//! process per replica) on a real control plane: the leader SIGKILLed again and again while
//! CronJobs are due, a leader paused (SIGSTOP) past its lease and resumed, and a manager
//! killed between creating a Job and writing the CronJob's status. Each prints its
//! [`FaultReport`] for `cargo xtask test-faults`, and fails if its contract does not hold.

mod common;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{ControllerBinary, TIMEOUT, TestEnv, eventually};
use controller::cronjob::jobs::scheduled_time;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt as _;
use kube::api::{Api, ListParams};
use kubebuilder_envtest::faults::{FaultReport, cycles, slow_cycles};
use kubebuilder_envtest::http_client::HttpClient;
use serde_json::json;
use tokio::process::Child;

/// The lease name the binary uses.
const LEASE: &str = "80807133.tutorial.kubebuilder.io";
/// Short leader-election timing, so that a cycle takes seconds; the bound on a takeover
/// after a crash is the lease duration plus the retry period.
const LEASE_DURATION: Duration = Duration::from_secs(4);
const RENEW_DEADLINE: Duration = Duration::from_secs(3);
const RETRY_PERIOD: Duration = Duration::from_secs(1);
/// The runs' deadline: far longer than a takeover, so no run may be missed.
const STARTING_DEADLINE_SECONDS: i64 = 30;

/// One `controller` process.
struct Replica {
    child: Child,
    /// The holder identity's prefix (the host name the process was given).
    host: String,
    metrics: HttpClient,
    probes: HttpClient,
    log: PathBuf,
}

impl Replica {
    /// Starts the binary on the shared control plane, electing a leader in `namespace`
    /// and watching only it; webhooks off (nothing here tests them).
    fn spawn(env: &TestEnv, host: &str, extra_env: &[(&str, &str)]) -> Self {
        let log = std::env::temp_dir().join(format!("{}-{host}.log", env.namespace));
        let ControllerBinary {
            mut command,
            metrics,
            probes,
        } = ControllerBinary::new(&env.namespace);
        command
            .args([
                "--leader-elect".to_owned(),
                format!("--leader-election-namespace={}", env.namespace),
                format!(
                    "--leader-elect-lease-duration={}s",
                    LEASE_DURATION.as_secs()
                ),
                format!(
                    "--leader-elect-renew-deadline={}s",
                    RENEW_DEADLINE.as_secs()
                ),
                format!("--leader-elect-retry-period={}s", RETRY_PERIOD.as_secs()),
            ])
            .env("HOSTNAME", host)
            .envs(extra_env.iter().copied())
            .stderr(std::fs::File::create(&log).expect("a log file"));
        Self {
            child: command.spawn().expect("the controller binary starts"),
            host: host.to_owned(),
            metrics,
            probes,
            log,
        }
    }

    fn holds(&self, holder: Option<&str>) -> bool {
        holder.is_some_and(|holder| holder.starts_with(&format!("{}_", self.host)))
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = self.child.id().expect("the replica runs");
        // SAFETY: kill only sends a signal, to a child this test started.
        let sent = unsafe { libc::kill(i32::try_from(pid).unwrap(), signal) };
        assert_eq!(sent, 0, "signal {signal} to {}", self.host);
    }

    async fn wait_ready(&self) {
        eventually(&format!("{} to be ready", self.host), TIMEOUT, || async {
            let ready = self.probes.get("/readyz", None).await.ok()?;
            (ready.status.as_u16() == 200).then_some(())
        })
        .await;
    }

    async fn scrape(&self) -> String {
        let reply = self
            .metrics
            .get("/metrics", None)
            .await
            .expect("metrics scrape");
        reply.text()
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<_> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Requests that change something, sent and answered, from a scrape of
/// `rest_client_requests_total`.
fn writes_sent(scrape: &str) -> u64 {
    scrape
        .lines()
        .filter(|line| line.starts_with("rest_client_requests_total{"))
        .filter(|line| {
            ["POST", "PUT", "PATCH", "DELETE"]
                .iter()
                .any(|method| line.contains(&format!("method=\"{method}\"")))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

fn is_leading(scrape: &str) -> bool {
    scrape.contains(&format!(
        "leader_election_master_status{{name=\"{LEASE}\"}} 1"
    ))
}

async fn holder(env: &TestEnv) -> Option<String> {
    Api::<Lease>::namespaced(env.client.clone(), &env.namespace)
        .get_opt(LEASE)
        .await
        .ok()
        .flatten()?
        .spec?
        .holder_identity
        .filter(|holder| !holder.is_empty())
}

/// Creates `count` CronJobs due every minute, with the runs' deadline.
async fn create_every_minute(env: &TestEnv, count: usize) {
    for index in 0..count {
        env.create_cronjob(
            &format!("minutely-{index}"),
            json!({"schedule": "* * * * *", "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS}),
        )
        .await;
    }
}

/// The Jobs of the namespace by (CronJob, scheduled run).
async fn jobs_by_run(env: &TestEnv) -> BTreeMap<(String, Timestamp), u64> {
    let mut runs = BTreeMap::new();
    for job in Api::<Job>::namespaced(env.client.clone(), &env.namespace)
        .list(&ListParams::default())
        .await
        .unwrap()
    {
        let owner = job
            .owner_references()
            .first()
            .map(|owner| owner.name.clone())
            .unwrap_or_default();
        let run = scheduled_time(&job)
            .unwrap()
            .unwrap_or_else(|| panic!("Job {} has no scheduled-at annotation", job.name_any()));
        *runs.entry((owner, run)).or_insert(0) += 1;
    }
    runs
}

/// Minute boundaries strictly after `from` up to `to`: the runs every-minute CronJobs had
/// due in between.
fn minutes_between(from: Timestamp, to: Timestamp) -> Vec<Timestamp> {
    let first = from.as_second().div_euclid(60) * 60 + 60;
    (first..=to.as_second())
        .step_by(60)
        .map(|second| Timestamp::from_second(second).unwrap())
        .collect()
}

/// Duplicates (Jobs beyond the first for one run) and misses (runs due in `due` without a
/// Job) of `cronjobs` CronJobs.
fn duplicates_and_misses(
    runs: &BTreeMap<(String, Timestamp), u64>,
    cronjobs: usize,
    due: &[Timestamp],
) -> (u64, u64) {
    let duplicates = runs.values().map(|count| count - 1).sum();
    let misses = (0..cronjobs)
        .flat_map(|index| {
            due.iter()
                .map(move |run| (format!("minutely-{index}"), *run))
        })
        .filter(|run| !runs.contains_key(run))
        .count() as u64;
    (duplicates, misses)
}

/// [`duplicates_and_misses`] once every run due has had its deadline to get a Job (or
/// sooner, when none is missing); the runs missing are printed.
async fn settled_duplicates_and_misses(
    env: &TestEnv,
    cronjobs: usize,
    due: &[Timestamp],
) -> (u64, u64) {
    let settle = Instant::now() + Duration::from_secs(STARTING_DEADLINE_SECONDS as u64);
    loop {
        let runs = jobs_by_run(env).await;
        let counted = duplicates_and_misses(&runs, cronjobs, due);
        if counted.1 == 0 || Instant::now() > settle {
            if counted != (0, 0) {
                eprintln!("runs due {due:?}; Jobs by run {runs:?}");
            }
            return counted;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Waits until the lease is held by one of `replicas`; the holder's index.
async fn leader_among(env: &TestEnv, replicas: &[Replica], timeout: Duration) -> usize {
    eventually("a replica to hold the lease", timeout, || async {
        let holder = holder(env).await;
        replicas
            .iter()
            .position(|replica| replica.holds(holder.as_deref()))
    })
    .await
}

#[tokio::test]
async fn the_leader_sigkilled_again_and_again_duplicates_and_misses_no_run() {
    let env = TestEnv::new("fault-crash").await;
    let cronjobs = 5;
    create_every_minute(&env, cronjobs).await;
    let mut replicas: Vec<_> = (0..3)
        .map(|slot| Replica::spawn(&env, &format!("replica-{slot}-0"), &[]))
        .collect();
    for replica in &replicas {
        replica.wait_ready().await;
    }
    leader_among(&env, &replicas, TIMEOUT).await;
    let started = Timestamp::now();
    let bound = LEASE_DURATION + RETRY_PERIOD;
    let mut report = FaultReport::new("leader SIGKILLed (3 replicas)");
    for cycle in 1..=cycles(12) {
        let leader = leader_among(&env, &replicas, TIMEOUT).await;
        // Let it lead (and renew) for a moment: the kill lands at any point of its term.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        replicas[leader].signal(libc::SIGKILL);
        let killed = Instant::now();
        let _ = replicas[leader].child.wait().await;
        let survivors: Vec<_> = (0..replicas.len()).filter(|&i| i != leader).collect();
        let successor = eventually("a survivor to take over", TIMEOUT, || async {
            let holder = holder(&env).await;
            survivors
                .iter()
                .find(|&&i| replicas[i].holds(holder.as_deref()))
                .copied()
        })
        .await;
        let takeover = killed.elapsed();
        report.recoveries.push(takeover);
        if takeover > bound {
            report.errors += 1;
            eprintln!(
                "cycle {cycle}: takeover by {} took {takeover:?} > {bound:?}",
                replicas[successor].host
            );
        }
        report.cycles = cycle;
        replicas[leader] = Replica::spawn(&env, &format!("replica-{leader}-{cycle}"), &[]);
    }
    let ended = Timestamp::now();
    // Every run due until the end gets its Job within the deadline, from whoever leads.
    let due = minutes_between(started, ended);
    let (duplicates, misses) = settled_duplicates_and_misses(&env, cronjobs, &due).await;
    report.duplicates = duplicates;
    report.misses = misses;
    report.detail = format!(
        "{} runs due ({cronjobs} CronJobs × {} minutes); lease {}s, retry {}s: bound {:?}",
        due.len() * cronjobs,
        due.len(),
        LEASE_DURATION.as_secs(),
        RETRY_PERIOD.as_secs(),
        bound
    );
    report.print();
    for replica in &replicas {
        if report.errors + report.duplicates + report.misses > 0 {
            eprintln!("--- {}:\n{}", replica.host, replica.log_tail());
        }
    }
    assert!(
        !due.is_empty(),
        "the run spans at least one minute boundary"
    );
    assert_eq!(
        (report.duplicates, report.misses, report.errors),
        (0, 0, 0),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_leader_paused_past_its_lease_writes_nothing_after_it_resumes_and_steps_down() {
    let env = TestEnv::new("fault-pause").await;
    create_every_minute(&env, 2).await;
    let replicas = [
        Replica::spawn(&env, "paused-a", &[]),
        Replica::spawn(&env, "paused-b", &[]),
    ];
    for replica in &replicas {
        replica.wait_ready().await;
    }
    let started = Timestamp::now();
    let mut report = FaultReport::new("leader SIGSTOPped past its lease, then SIGCONT");
    // A pause is long against the lease (the successor takes over meanwhile) and spans a
    // minute boundary, so the paused replica has a run to write when it wakes.
    let pause = LEASE_DURATION + RETRY_PERIOD * 3;
    for cycle in 1..=slow_cycles() {
        let leader = leader_among(&env, &replicas, TIMEOUT).await;
        let other = 1 - leader;
        wait_until_second_of_minute(60 - pause.as_secs() / 2).await;
        let (baseline, paused_at) = pause_just_after_a_renewal(&env, &replicas[leader]).await;
        let successor = eventually("the other replica to take over", pause * 2, || async {
            replicas[other]
                .holds(holder(&env).await.as_deref())
                .then(Instant::now)
        })
        .await;
        report.recoveries.push(successor - paused_at);
        tokio::time::sleep(pause.saturating_sub(paused_at.elapsed())).await;
        replicas[leader].signal(libc::SIGCONT);
        // It notices at its next tick that it cannot prove its lease, and stops.
        eventually("the resumed replica to step down", TIMEOUT, || async {
            (!is_leading(&replicas[leader].scrape().await)).then_some(())
        })
        .await;
        // Whatever it had queued (the minute's run, a renewal) is due by now; give it time.
        tokio::time::sleep(RETRY_PERIOD * 3).await;
        let written = writes_sent(&replicas[leader].scrape().await) - baseline;
        let holder_now = holder(&env).await;
        if written > 0 || !replicas[other].holds(holder_now.as_deref()) {
            report.errors += 1;
            eprintln!(
                "cycle {cycle}: {written} writes after resuming; lease holder {holder_now:?}\n{}",
                replicas[leader].log_tail()
            );
        }
        report.cycles = cycle;
    }
    let due = minutes_between(started, Timestamp::now());
    let (duplicates, misses) = settled_duplicates_and_misses(&env, 2, &due).await;
    report.duplicates = duplicates;
    report.misses = misses;
    report.detail =
        format!("paused {pause:?} each cycle; writes counted on the paused replica's own metrics");
    report.print();
    assert_eq!(
        (report.duplicates, report.misses, report.errors),
        (0, 0, 0),
        "{report:?}"
    );
}

/// Sleeps until the wall clock's second of the minute is `second`.
async fn wait_until_second_of_minute(second: u64) {
    let now = Timestamp::now();
    let into_minute = now.as_millisecond().rem_euclid(60_000) as u64;
    let target = second * 1000;
    let wait = (target + 60_000 - into_minute) % 60_000;
    tokio::time::sleep(Duration::from_millis(wait)).await;
}

/// Pauses `leader` right after one of its renewals is seen, so that no renewal of its is
/// in flight while the baseline of its writes is taken; the baseline and when it paused.
async fn pause_just_after_a_renewal(env: &TestEnv, leader: &Replica) -> (u64, Instant) {
    let leases = Api::<Lease>::namespaced(env.client.clone(), &env.namespace);
    let renewed = |lease: &Lease| lease.spec.as_ref().and_then(|spec| spec.renew_time.clone());
    let before = renewed(&leases.get(LEASE).await.unwrap());
    eventually("a renewal by the leader", TIMEOUT, || async {
        let now = renewed(&leases.get(LEASE).await.ok()?);
        (now != before).then_some(())
    })
    .await;
    // The renewal's response has been read by now; the next one is a retry period away.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let baseline = writes_sent(&leader.scrape().await);
    leader.signal(libc::SIGSTOP);
    (baseline, Instant::now())
}

/// Crashes in one round of the crash-between-writes test, each round on CronJobs of its
/// own: a round lasts a few minutes, so no CronJob reaches 10 runs. Here every Job stays
/// active (no Job controller runs), and `status.active` holds at most 10 (the API's
/// `maxItems`): an 11th run's status write would be refused with a 422.
const CRASHES_PER_ROUND: u64 = 8;

#[tokio::test]
async fn a_crash_right_after_creating_a_job_creates_no_second_job_and_the_status_converges() {
    let crashes = cycles(5);
    let mut report = FaultReport::new("SIGKILL between Job create and status write");
    let (mut cronjobs, mut runs_due) = (0, 0);
    while report.cycles < crashes {
        let round = crash_round((crashes - report.cycles).min(CRASHES_PER_ROUND)).await;
        report.cycles += round.crashes;
        report.duplicates += round.duplicates;
        report.misses += round.misses;
        report.recoveries.push(round.recovery);
        cronjobs += round.cronjobs;
        runs_due += round.runs_due;
    }
    report.detail = format!(
        "{cronjobs} CronJobs, {runs_due} runs due; recovery = restart without the crash point → every status right"
    );
    report.print();
    assert_eq!(
        (report.duplicates, report.misses, report.errors),
        (0, 0, 0),
        "{report:?}"
    );
}

/// What one round of [`crash_round`] counted.
struct CrashRound {
    crashes: u64,
    cronjobs: usize,
    runs_due: usize,
    duplicates: u64,
    misses: u64,
    /// From the start of the manager without the crash point to every status right.
    recovery: Duration,
}

/// Managers started with the crash point one after the other, `crashes` of them, on
/// CronJobs of a fresh namespace all due every minute: each creates a Job (or a few, as
/// reconciles run concurrently) and is killed before it writes that CronJob's status;
/// the next one carries on. Then a manager without the crash point must converge.
async fn crash_round(crashes: u64) -> CrashRound {
    let env = TestEnv::new("fault-between").await;
    let cronjobs = usize::try_from(crashes).unwrap();
    create_every_minute(&env, cronjobs).await;
    let started = Timestamp::now();
    let crash_after = [("KUBEBUILDER_CRASH_AFTER", "POST /jobs")];
    for crash in 0..crashes {
        let host = format!("crashing-{crash}");
        let mut replica = Replica::spawn(&env, &host, &crash_after);
        // The first Job is due at the next minute boundary.
        let exit = tokio::time::timeout(Duration::from_secs(90), replica.child.wait()).await;
        let killed = matches!(&exit, Ok(Ok(status)) if status.signal() == Some(libc::SIGKILL));
        assert!(
            killed,
            "{host} was to kill itself after creating a Job: {exit:?}\n{}",
            replica.log_tail()
        );
    }
    let restarted = Instant::now();
    let survivor = Replica::spawn(&env, "after-the-crashes", &[]);
    survivor.wait_ready().await;
    eventually(
        "every CronJob's status to list exactly its Jobs",
        TIMEOUT,
        || async { status_lists_every_job(&env).await.then_some(()) },
    )
    .await;
    let recovery = restarted.elapsed();
    let due = minutes_between(started, Timestamp::now());
    let (duplicates, misses) = settled_duplicates_and_misses(&env, cronjobs, &due).await;
    CrashRound {
        crashes,
        cronjobs,
        runs_due: due.len() * cronjobs,
        duplicates,
        misses,
        recovery,
    }
}

/// Whether every CronJob's status lists exactly the Jobs it owns as active (no Job
/// controller runs: every Job stays active) and its last run as the latest of theirs.
async fn status_lists_every_job(env: &TestEnv) -> bool {
    let jobs = Api::<Job>::namespaced(env.client.clone(), &env.namespace);
    let Ok(jobs) = jobs.list(&ListParams::default()).await else {
        return false;
    };
    let Ok(cronjobs) = env.cronjobs().list(&ListParams::default()).await else {
        return false;
    };
    cronjobs.iter().all(|cronjob| {
        let owned: Vec<&Job> = jobs
            .iter()
            .filter(|job| {
                job.owner_references()
                    .iter()
                    .any(|owner| owner.uid == cronjob.uid().unwrap_or_default())
            })
            .collect();
        let mut expected: Vec<String> = owned.iter().map(|job| job.name_any()).collect();
        expected.sort();
        let latest = owned
            .iter()
            .filter_map(|job| scheduled_time(job).ok().flatten())
            .max();
        let Some(status) = &cronjob.status else {
            return false;
        };
        let mut listed: Vec<String> = status
            .active
            .iter()
            .filter_map(|job| job.name.clone())
            .collect();
        listed.sort();
        !expected.is_empty()
            && listed == expected
            && status.last_schedule_time.as_ref().map(|time| time.0) == latest
    })
}

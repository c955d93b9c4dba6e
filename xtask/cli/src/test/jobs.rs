//! Test executables and checks run side by side, in two lanes: most tests wait (for a
//! control plane, a minute boundary, a lease, a pod), so several run at once at normal
//! priority; the work that keeps the CPU busy (lints, builds, the slow tests that compile
//! whole workspaces) runs at the lowest CPU priority, filling the time the waiting tests
//! leave, without stretching what they measure (a takeover within a lease, a Job within
//! its minute).
//!
//! Each job's output goes to a log file and is printed whole when the job ends, so that
//! the outputs of jobs running at once do not interleave.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Where a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// Tests that mostly wait: several at once, at normal priority.
    Waiting,
    /// Work that keeps the CPU busy: at the lowest CPU priority ([`BUSY_NICENESS`]).
    Busy,
}

/// Commands to run in a lane, one after another.
pub struct Job {
    /// What the job is, in the log and the timing table.
    pub name: String,
    /// Its lane.
    pub lane: Lane,
    /// The commands, run in this order; each runs even when one before it failed.
    pub commands: Vec<Command>,
}

impl Job {
    /// A job named `name` running `command` in `lane`.
    pub fn new(name: impl Into<String>, lane: Lane, command: Command) -> Self {
        Job::chain(name, lane, vec![command])
    }

    /// A job named `name` running `commands` one after another in `lane`: commands that
    /// would contend for one resource if they ran at once (a build directory) and share
    /// its work when they do not.
    pub fn chain(name: impl Into<String>, lane: Lane, commands: Vec<Command>) -> Self {
        Job {
            name: name.into(),
            lane,
            commands,
        }
    }
}

/// How a job ended.
#[derive(Debug)]
pub struct Outcome {
    /// The job's name.
    pub name: String,
    /// Its lane.
    pub lane: Lane,
    /// Whether it exited with success.
    pub passed: bool,
    /// How it ended, as the OS said (`exit status: 101`), or why it could not start.
    pub status: String,
    /// From its start to its end.
    pub elapsed: Duration,
    /// The CPU time (user and system) of its processes and those they waited for: what it
    /// costs the machine, whatever ran beside it.
    pub cpu: Duration,
    /// Everything it printed, standard output and error in the order written.
    pub output: String,
}

/// How many jobs of each lane run at once.
#[derive(Clone, Copy, Debug)]
pub struct Slots {
    /// Waiting tests at once.
    pub waiting: usize,
    /// Busy jobs at once: two keep two cores busy while one of them waits.
    pub busy: usize,
}

/// Runs every job, each lane's in the order given, and returns how each ended, in the
/// order they ended. Logs go to `log_dir`.
pub fn run(jobs: Vec<Job>, slots: Slots, log_dir: &Path) -> Result<Vec<Outcome>> {
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let (waiting, busy): (VecDeque<Job>, VecDeque<Job>) =
        jobs.into_iter().partition(|job| job.lane == Lane::Waiting);
    let queues = [
        (Mutex::new(waiting), slots.waiting),
        (Mutex::new(busy), slots.busy),
    ];
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for (queue, slots) in &queues {
            for _ in 0..(*slots).max(1) {
                scope.spawn(|| {
                    while let Some(job) = pop(queue) {
                        let outcome = run_one(job, log_dir);
                        print_outcome(&outcome);
                        outcomes
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(outcome);
                    }
                });
            }
        }
    });
    Ok(outcomes.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn pop(queue: &Mutex<VecDeque<Job>>) -> Option<Job> {
    queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
}

/// Runs one job to its end, its output into its log file. It passes when each of its
/// commands does; its status is the first failure's.
fn run_one(mut job: Job, log_dir: &Path) -> Outcome {
    let log = log_dir.join(format!("{}.log", file_name(&job.name)));
    eprintln!("xtask: started {}", job.name);
    let started = Instant::now();
    let mut cpu = Duration::ZERO;
    let mut failure = File::create(&log)
        .err()
        .map(|error| format!("creating {}: {error}", log.display()));
    if failure.is_none() {
        for command in &mut job.commands {
            let status = spawn_logged(command, job.lane, &job.name, &log)
                .and_then(|child| Ok(wait_with_cpu(&child)?));
            let failed = match status {
                Ok((status, used)) => {
                    cpu += used;
                    if status.success() {
                        continue;
                    }
                    status.to_string()
                }
                Err(error) => format!("{error:#}"),
            };
            failure.get_or_insert(failed);
        }
    }
    let output = std::fs::read(&log)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let passed = failure.is_none();
    let status = failure.unwrap_or_else(|| "exit status: 0".to_owned());
    Outcome {
        name: job.name,
        lane: job.lane,
        passed,
        status,
        elapsed: started.elapsed(),
        cpu,
        output,
    }
}

/// Waits for `child`; its exit status and the CPU time it and the processes it waited for
/// used (`wait4`'s resource usage).
fn wait_with_cpu(child: &std::process::Child) -> std::io::Result<(ExitStatus, Duration)> {
    let pid = libc::pid_t::try_from(child.id()).map_err(std::io::Error::other)?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our child, not yet reaped (`Child::wait` was not called); the
        // pointers are to live locals.
        if unsafe { libc::wait4(pid, &mut status, 0, &mut usage) } == pid {
            break;
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ok((
        ExitStatus::from_raw(status),
        time(usage.ru_utime) + time(usage.ru_stime),
    ))
}

/// Starts `command` of job `name`, its output appended to `log`.
fn spawn_logged(
    command: &mut Command,
    lane: Lane,
    name: &str,
    log: &Path,
) -> Result<std::process::Child> {
    let file = File::options()
        .append(true)
        .open(log)
        .with_context(|| format!("opening {}", log.display()))?;
    command
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    if lane == Lane::Busy {
        niced(command, BUSY_NICENESS);
    }
    command.spawn().with_context(|| format!("starting {name}"))
}

/// The niceness of busy jobs: the lowest CPU priority.
pub const BUSY_NICENESS: i32 = 19;

/// Makes `command` run at CPU priority `niceness` (0 is normal, 19 the lowest), with
/// everything it starts: the higher the niceness, the more of the CPU time goes to the
/// processes at normal priority first.
pub fn niced(command: &mut Command, niceness: i32) -> &mut Command {
    // SAFETY: setpriority is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::setpriority(libc::PRIO_PROCESS, 0, niceness) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// A job's name as a file name: every character but ASCII letters, digits, `-` and `.`
/// becomes `_`.
fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Prints a job's end and its output in one piece (`println!` holds the lock on standard
/// output for the whole of it, and a test's capture takes it).
pub fn print_outcome(outcome: &Outcome) {
    let verdict = if outcome.passed { "passed" } else { "FAILED" };
    println!(
        "\nxtask: ──── {}: {verdict} in {:.1} s ({}) ────\n{}",
        outcome.name,
        outcome.elapsed.as_secs_f64(),
        outcome.status,
        outcome.output.trim_end()
    );
}

/// The outcomes as a table, the longest first: job, lane, result, seconds, CPU seconds.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by_key(|outcome| std::cmp::Reverse(outcome.elapsed));
    let rows: Vec<[String; 5]> = sorted
        .iter()
        .map(|outcome| {
            [
                outcome.name.clone(),
                match outcome.lane {
                    Lane::Waiting => "waiting".to_owned(),
                    Lane::Busy => "busy".to_owned(),
                },
                if outcome.passed { "passed" } else { "FAILED" }.to_owned(),
                format!("{:.1}", outcome.elapsed.as_secs_f64()),
                format!("{:.1}", outcome.cpu.as_secs_f64()),
            ]
        })
        .collect();
    crate::report::table(&["job", "lane", "result", "seconds", "CPU seconds"], &rows)
}

/// The log directory of a command's jobs: `<target>/xtask-logs/<command>`.
pub fn log_dir(root: &Path, command: &str) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    target.join("xtask-logs").join(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn every_job_runs_and_its_output_and_result_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = vec![
            Job::new(
                "waits",
                Lane::Waiting,
                shell("sleep 0.2; echo out; echo err >&2"),
            ),
            Job::new("fails", Lane::Waiting, shell("echo broken; exit 3")),
            Job::new("niced", Lane::Busy, shell("echo $(ps -o ni= -p $$)")),
        ];
        let slots = Slots {
            waiting: 2,
            busy: 1,
        };
        let mut outcomes = run(jobs, slots, dir.path()).unwrap();
        outcomes.sort_by(|a, b| a.name.cmp(&b.name));
        let summary: Vec<(&str, bool, &str)> = outcomes
            .iter()
            .map(|o| (o.name.as_str(), o.passed, o.output.trim()))
            .collect();
        assert_eq!(
            summary,
            [
                ("fails", false, "broken"),
                ("niced", true, "19"),
                ("waits", true, "out\nerr"),
            ]
        );
        assert_eq!(outcomes[0].status, "exit status: 3");
        assert!(dir.path().join("waits.log").is_file());
    }

    #[test]
    fn a_jobs_cpu_time_is_its_processes_and_theirs() {
        let dir = tempfile::tempdir().unwrap();
        // A child of the job's shell counts to 300000: a fixed amount of work, whatever
        // else the machine runs (a loop until a time would measure the load); a sleep
        // costs next to nothing.
        let jobs = vec![
            Job::new(
                "counts",
                Lane::Busy,
                shell("sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'"),
            ),
            Job::new("sleeps", Lane::Waiting, shell("sleep 0.5")),
        ];
        let slots = Slots {
            waiting: 1,
            busy: 1,
        };
        let mut outcomes = run(jobs, slots, dir.path()).unwrap();
        outcomes.sort_by(|a, b| a.name.cmp(&b.name));
        let (counts, sleeps) = (&outcomes[0], &outcomes[1]);
        assert!(counts.cpu >= Duration::from_millis(50), "{counts:?}");
        assert!(sleeps.cpu * 4 < counts.cpu, "{sleeps:?} {counts:?}");
    }

    #[test]
    fn waiting_jobs_run_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let meeting = dir.path().join("meeting");
        std::fs::create_dir(&meeting).unwrap();
        // Each job arrives, then waits up to 30 s for the other two: one after another,
        // the first would wait alone and fail.
        let jobs = (0..3)
            .map(|i| {
                let script = format!(
                    "touch {dir}/{i}; for _ in $(seq 300); do \
                     [ $(ls {dir} | wc -l) -ge 3 ] && exit 0; sleep 0.1; done; exit 1",
                    dir = meeting.display()
                );
                Job::new(format!("meets {i}"), Lane::Waiting, shell(&script))
            })
            .collect();
        let slots = Slots {
            waiting: 3,
            busy: 1,
        };
        let outcomes = run(jobs, slots, dir.path()).unwrap();
        assert_eq!(outcomes.len(), 3);
        assert!(outcomes.iter().all(|o| o.passed), "{outcomes:?}");
    }

    #[test]
    fn a_command_that_cannot_start_fails_its_job() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = vec![Job::new(
            "missing",
            Lane::Busy,
            Command::new("/nonexistent/binary"),
        )];
        let slots = Slots {
            waiting: 1,
            busy: 1,
        };
        let outcomes = run(jobs, slots, dir.path()).unwrap();
        assert!(!outcomes[0].passed);
        assert!(
            outcomes[0].status.contains("starting missing"),
            "{}",
            outcomes[0].status
        );
    }

    #[test]
    fn a_chain_runs_its_commands_in_order_and_fails_with_its_first_failure() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = vec![Job::chain(
            "chain",
            Lane::Busy,
            vec![
                shell("echo one; exit 4"),
                shell("echo two"),
                shell("echo three; exit 5"),
            ],
        )];
        let slots = Slots {
            waiting: 1,
            busy: 1,
        };
        let outcomes = run(jobs, slots, dir.path()).unwrap();
        assert!(!outcomes[0].passed);
        assert_eq!(outcomes[0].status, "exit status: 4");
        assert_eq!(outcomes[0].output, "one\ntwo\nthree\n");
    }

    #[test]
    fn job_names_become_file_names() {
        assert_eq!(
            file_name("controller --test faults_leader"),
            "controller_--test_faults_leader"
        );
    }
}

//! `cargo xtask test-faults [--cycles N]`: the fault suite. Real faults against the operator
//! and the runtime (processes killed with SIGKILL, the apiserver and etcd killed and
//! started again, RBAC revoked, bad input to every server), each test printing one
//! `fault-report` line ([`FaultReport`]) that this command collects into one table: fault,
//! cycles, duplicates, misses, recovery min/p50/max, errors, detail.
//!
//! The suite is every test target of the workspace that requires the `faults` feature, so
//! a project's own fault tests join it by declaring that feature. A package's targets run
//! one after another, each test alone; the packages' run side by side.
//!
//! It fails when a test failed, when a target printed no report (a fault that did not run
//! must not look like a pass), or when a report counts errors.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::assets;
use kubebuilder_envtest::faults::{CYCLES_ENV, FaultReport, REPORT_PREFIX};

use crate::report::Phases;
use crate::test::binaries::{self, TestBinary};

/// The options of `cargo xtask test-faults`.
#[derive(clap::Args)]
pub struct Args {
    /// The full run: the leader killed, and the manager killed between two writes, N
    /// times each; the faults that take a minute or more a cycle (a paused leader, the
    /// control plane down, permissions revoked) N/10 times, rounded up. Without it, each
    /// test's bounded default (what `.ci/run` runs). The bad-input runs (10,000 requests
    /// per server) and the scale run (10,000 CronJobs) are the same in both.
    #[arg(long, value_name = "N")]
    cycles: Option<u64>,
}

/// The feature a fault test requires: it marks a test target as part of the suite.
const FAULTS_FEATURE: &str = "faults";

/// A test target of the suite (`cargo test -p <package> --features faults --test <target>`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Target {
    package: String,
    target: String,
}

/// The suite: every test target of the workspace with `required-features = ["faults"]`
/// (in this repository the leader crash, fencing and crash between writes; the
/// control plane down and permissions revoked; the scale run; bad input to every
/// server), in `cargo metadata`'s order. Each must report, or the command fails.
fn fault_targets(packages: &[serde_json::Value]) -> Vec<Target> {
    let mut targets = Vec::new();
    for package in packages {
        let Some(name) = package["name"].as_str() else {
            continue;
        };
        for target in package["targets"].as_array().into_iter().flatten() {
            let is_test = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|kind| kind == "test"));
            let needs_faults = target["required-features"]
                .as_array()
                .is_some_and(|features| features.iter().any(|feature| feature == FAULTS_FEATURE));
            if let (true, true, Some(target)) = (is_test, needs_faults, target["name"].as_str()) {
                targets.push(Target {
                    package: name.to_owned(),
                    target: target.to_owned(),
                });
            }
        }
    }
    targets
}

/// What one target's run gave.
#[derive(Debug)]
struct Run {
    target: Target,
    passed: bool,
    reports: Vec<FaultReport>,
}

/// Runs every target, prints the table, and fails as the module docs say; then prints
/// how long each phase took.
pub fn run(args: Args) -> Result<()> {
    Phases::run("cargo xtask test-faults", |phases| {
        run_phases(&args, phases)
    })
}

fn run_phases(args: &Args, phases: &mut Phases) -> Result<()> {
    let targets = fault_targets(&crate::workspace_packages()?);
    if targets.is_empty() {
        bail!(
            "this workspace has no fault tests: a fault test is a test target with \
             required-features = [\"{FAULTS_FEATURE}\"]"
        );
    }
    let assets = phases.time("the control plane binaries", assets::install)?;
    let root = crate::workspace_root();
    // The build `cargo xtask test` makes too: run beside it, one of them waits for the
    // other and then finds it done.
    let binaries = phases
        .time("the test build (every target, every feature)", || {
            binaries::build(&root, &[])
        })?
        .tests;
    let runs = phases.time(
        "the faults: a package's targets one after another, the packages side by side",
        || {
            run_by_package(targets, |target| {
                let mut command = test_command(target, &binaries)?;
                command.env(assets::ASSETS_ENV, &assets);
                if let Some(cycles) = args.cycles {
                    command.env(CYCLES_ENV, cycles.to_string());
                }
                Ok(command)
            })
        },
    )?;
    let reports: Vec<FaultReport> = runs.iter().flat_map(|run| run.reports.clone()).collect();
    println!("\n{}", render(&reports));
    let failures = failures(&runs);
    if !failures.is_empty() {
        bail!("the fault suite failed:\n- {}", failures.join("\n- "));
    }
    eprintln!("xtask: the fault suite passed ({} faults)", reports.len());
    Ok(())
}

/// Runs each package's targets one after another (its faults may stop what its other
/// targets measure), and the packages' chains side by side, each target with the command
/// `command_for` gives; the runs in the targets' order.
fn run_by_package(
    targets: Vec<Target>,
    command_for: impl Fn(&Target) -> Result<Command> + Sync,
) -> Result<Vec<Run>> {
    let mut chains: Vec<Vec<Target>> = Vec::new();
    for target in targets {
        match chains
            .iter_mut()
            .find(|chain| chain[0].package == target.package)
        {
            Some(chain) => chain.push(target),
            None => chains.push(vec![target]),
        }
    }
    let command_for = &command_for;
    let chains: Vec<Result<Vec<Run>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chains
            .into_iter()
            .map(|chain| {
                scope.spawn(move || {
                    chain
                        .into_iter()
                        .map(|target| {
                            let mut command = command_for(&target)?;
                            run_target(target, &mut command)
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a chain of fault targets panicked"))
            .collect()
    });
    Ok(chains
        .into_iter()
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect())
}

/// One target's tests, one at a time (faults stop shared processes and measure time),
/// their output shown.
fn test_command(target: &Target, binaries: &[TestBinary]) -> Result<Command> {
    let binary = binaries
        .iter()
        .find(|binary| {
            binary.package == target.package
                && binary.target == target.target
                && binary.kind == "test"
        })
        .with_context(|| {
            format!(
                "the build made no executable for {} --test {}",
                target.package, target.target
            )
        })?;
    let mut command = binary.command();
    command.args(["--nocapture", "--test-threads=1"]);
    Ok(command)
}

/// Runs `command`, echoing its stdout while collecting the report lines.
fn run_target(target: Target, command: &mut Command) -> Result<Run> {
    eprintln!(
        "xtask: the faults of {} (--test {})",
        target.package, target.target
    );
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("running the tests of {}", target.target))?;
    let stdout = child.stdout.take().context("the test's stdout")?;
    let mut reports = Vec::new();
    // Line by line, named: another package's faults may be printing beside these.
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading the test output")?;
        println!("[{}] {line}", target.target);
        reports.extend(report_in(&line));
    }
    let status = child.wait()?;
    Ok(Run {
        target,
        passed: status.success(),
        reports,
    })
}

/// The report a line of test output holds. Not only at its start: libtest prints
/// `test <name> ... ` and the test's own output follows on the same line.
fn report_in(line: &str) -> Option<FaultReport> {
    FaultReport::parse(&line[line.find(REPORT_PREFIX)?..])
}

/// Why the suite fails, one line each; empty when it passes.
fn failures(runs: &[Run]) -> Vec<String> {
    let mut failures = Vec::new();
    for run in runs {
        let name = format!("{} --test {}", run.target.package, run.target.target);
        if !run.passed {
            failures.push(format!("{name}: a test failed"));
        }
        if run.reports.is_empty() {
            failures.push(format!("{name}: no fault report (did its faults run?)"));
        }
        for report in run.reports.iter().filter(|report| report.errors > 0) {
            failures.push(format!(
                "{name}: {}: {} errors",
                report.fault, report.errors
            ));
        }
    }
    failures
}

/// The reports as one table, its columns aligned.
fn render(reports: &[FaultReport]) -> String {
    let header = [
        "fault",
        "cycles",
        "duplicates",
        "misses",
        "recovery min/p50/max",
        "errors",
        "detail",
    ];
    let rows: Vec<[String; 7]> = reports
        .iter()
        .map(|report| {
            [
                report.fault.clone(),
                report.cycles.to_string(),
                report.duplicates.to_string(),
                report.misses.to_string(),
                recovery(report),
                report.errors.to_string(),
                report.detail.clone(),
            ]
        })
        .collect();
    crate::report::table(&header, &rows)
}

/// `min / p50 / max` in seconds, or `-` when the fault has no recovery to time.
fn recovery(report: &FaultReport) -> String {
    let seconds = |duration: Duration| format!("{:.1}", duration.as_secs_f64());
    match report.recovery_summary() {
        Some((min, median, max)) => {
            format!(
                "{} / {} / {} s",
                seconds(min),
                seconds(median),
                seconds(max)
            )
        }
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(fault: &str, recoveries: &[u64], errors: u64) -> FaultReport {
        FaultReport {
            cycles: recoveries.len() as u64,
            recoveries: recoveries
                .iter()
                .copied()
                .map(Duration::from_millis)
                .collect(),
            errors,
            detail: "12 requests".to_owned(),
            ..FaultReport::new(fault)
        }
    }

    #[test]
    fn the_table_has_a_row_per_fault_and_aligned_columns() {
        let table = render(&[
            report("apiserver down 30 s", &[4900, 1200, 52400], 0),
            report("bad input", &[], 0),
        ]);
        assert_eq!(
            table,
            "\
| fault               | cycles | duplicates | misses | recovery min/p50/max | errors | detail      |
| ------------------- | ------ | ---------- | ------ | -------------------- | ------ | ----------- |
| apiserver down 30 s | 3      | 0          | 0      | 1.2 / 4.9 / 52.4 s   | 0      | 12 requests |
| bad input           | 0      | 0          | 0      | -                    | 0      | 12 requests |"
        );
    }

    #[test]
    fn reports_are_found_after_the_test_name_libtest_prints() {
        let line = format!(
            "test the_fault ... {REPORT_PREFIX}{}",
            serde_json::to_string(&report("etcd down 30 s", &[13054], 0)).unwrap()
        );
        assert_eq!(
            report_in(&line),
            Some(report("etcd down 30 s", &[13054], 0))
        );
        assert_eq!(report_in("test the_fault ... ok"), None);
    }

    #[test]
    fn the_suite_is_every_test_target_that_requires_the_faults_feature() {
        let packages: Vec<serde_json::Value> = serde_json::from_value(serde_json::json!([
            {"name": "operator", "targets": [
                {"name": "operator", "kind": ["lib"], "required-features": []},
                {"name": "faults_leader", "kind": ["test"], "required-features": ["faults"]},
                {"name": "e2e", "kind": ["test"], "required-features": ["e2e"]},
                {"name": "unit", "kind": ["test"]},
                {"name": "faults_tool", "kind": ["bin"], "required-features": ["faults"]}
            ]},
            {"name": "runtime", "targets": [
                {"name": "bad_input", "kind": ["test"], "required-features": ["tls", "faults"]}
            ]}
        ]))
        .unwrap();
        assert_eq!(
            fault_targets(&packages)
                .iter()
                .map(|target| format!("{} --test {}", target.package, target.target))
                .collect::<Vec<_>>(),
            ["operator --test faults_leader", "runtime --test bad_input"]
        );
    }

    #[test]
    fn each_package_runs_its_targets_in_turn_and_the_packages_side_by_side() {
        let dir = tempfile::tempdir().unwrap();
        let meeting = dir.path().to_owned();
        let targets = vec![
            target("controller", "faults_leader"),
            target("runtime", "bad_input"),
            target("controller", "faults_scale"),
        ];
        // The first target of each package waits (30 s at most) for the other package's
        // to start: one package after the other, they would never meet.
        let runs = run_by_package(targets, |target| {
            let script = match target.target.as_str() {
                "faults_scale" => "exit 0".to_owned(),
                name => format!(
                    "touch {dir}/{name}; for _ in $(seq 300); do \
                     [ $(ls {dir} | wc -l) -ge 2 ] && exit 0; sleep 0.1; done; exit 1",
                    dir = meeting.display()
                ),
            };
            let mut command = Command::new("sh");
            command.args(["-c", &script]);
            Ok(command)
        })
        .unwrap();
        let summary: Vec<(&str, bool)> = runs
            .iter()
            .map(|run| (run.target.target.as_str(), run.passed))
            .collect();
        assert_eq!(
            summary,
            [
                ("faults_leader", true),
                ("faults_scale", true),
                ("bad_input", true)
            ]
        );
    }

    fn target(package: &str, target: &str) -> Target {
        Target {
            package: package.to_owned(),
            target: target.to_owned(),
        }
    }

    #[test]
    fn a_target_without_a_report_fails_the_suite_even_when_its_tests_pass() {
        let run = |target: Target, passed, reports| Run {
            target,
            passed,
            reports,
        };
        let target = |package: &str, target: &str| Target {
            package: package.to_owned(),
            target: target.to_owned(),
        };
        let runs = [
            run(
                target("controller", "faults_leader"),
                true,
                vec![report("leader SIGKILLed", &[900], 0)],
            ),
            run(
                target("controller", "faults_control_plane"),
                true,
                Vec::new(),
            ),
            run(
                target("kubebuilder-runtime", "bad_input"),
                false,
                vec![report("bad input", &[], 2)],
            ),
        ];
        assert_eq!(
            failures(&runs),
            [
                "controller --test faults_control_plane: no fault report (did its faults run?)",
                "kubebuilder-runtime --test bad_input: a test failed",
                "kubebuilder-runtime --test bad_input: bad input: 2 errors",
            ]
        );
        assert!(failures(&runs[..1]).is_empty());
    }
}

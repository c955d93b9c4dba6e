//! `cargo xtask bench first-minutes`: a user's first minutes, from cold and timed step by
//! step — `cargo install --locked --path xtask/cargo-kubebuilder` into an empty root with an
//! empty target directory, `cargo kubebuilder init --local` on this checkout, and the first
//! `create api`, which writes the kind's files and its manifests. Everything happens under
//! `target/bench/first-minutes/`, made again on each run.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};

/// The kind the first `create api` adds.
const CREATE_API: [&str; 8] = [
    "create",
    "api",
    "--group",
    "ship",
    "--version",
    "v1",
    "--kind",
    "Frigate",
];
/// The CRD that `create api` writes.
const CRD: &str = "config/crd/bases/ship.example.com_frigates.yaml";

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> Result<()> {
    let checkout = kubebuilder_cli::workspace_root();
    let dir = super::output_dir()?.join("first-minutes");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    let (root, target, projects) = (dir.join("root"), dir.join("target"), dir.join("projects"));
    std::fs::create_dir_all(&projects)?;
    let load_before = load_average()?;
    let mut rows = Vec::new();

    let mut install = kubebuilder_cli::cargo();
    install
        .current_dir(&checkout)
        .args([
            "install",
            "--locked",
            "--path",
            "xtask/cargo-kubebuilder",
            "--root",
        ])
        .arg(&root)
        .env("CARGO_TARGET_DIR", &target);
    rows.push((
        "cargo install --locked --path xtask/cargo-kubebuilder (empty target dir)",
        timed(&mut install)?,
    ));

    // The installed binary itself, as cargo runs it (`cargo-kubebuilder kubebuilder …`):
    // `cargo kubebuilder` could find another one first, in `$CARGO_HOME/bin`. Without the
    // `CARGO_MANIFEST_DIR` that `cargo xtask` has, which would name this workspace to it.
    let cli = root.join("bin/cargo-kubebuilder");
    let user_cli = || {
        let mut command = Command::new(&cli);
        command.env_remove("CARGO_MANIFEST_DIR");
        command
    };
    let mut init = user_cli();
    init.current_dir(&projects)
        .args([
            "kubebuilder",
            "init",
            "fleet",
            "--domain",
            "example.com",
            "--local",
        ])
        .arg(&checkout);
    rows.push((
        "cargo kubebuilder init --local (a new project)",
        timed(&mut init)?,
    ));

    let project = projects.join("fleet");
    let mut create = user_cli();
    create
        .current_dir(&project)
        .arg("kubebuilder")
        .args(CREATE_API);
    rows.push((
        "cargo kubebuilder create api (its files and manifests)",
        timed(&mut create)?,
    ));
    ensure!(
        project.join(CRD).is_file(),
        "create api wrote no {CRD} in {}",
        project.display()
    );

    super::publish(
        &table(&rows, &load_before, &load_average()?)?,
        "first-minutes.md",
    )
}

/// Runs `command` to completion, its output kept for an error, and returns its wall time
/// in seconds. A step that builds the project's xtask to write the manifests would be timed
/// as another path under this one's name: it says so, and fails the benchmark.
fn timed(command: &mut Command) -> Result<f64> {
    let started = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {command:?}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("{command:?} failed ({}):\n{stderr}", output.status);
    }
    ensure!(
        !stderr.contains("running the project's `cargo xtask manifests`"),
        "{command:?} built the project to write its manifests:\n{stderr}"
    );
    Ok(seconds)
}

/// The 1-, 5- and 15-minute load averages, which the figures of a shared machine need.
fn load_average() -> Result<String> {
    let text = std::fs::read_to_string("/proc/loadavg").context("reading /proc/loadavg")?;
    Ok(text
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" "))
}

fn table(rows: &[(&str, f64)], load_before: &str, load_after: &str) -> Result<String> {
    let mut out = String::new();
    writeln!(out, "| step | time |")?;
    writeln!(out, "|---|---:|")?;
    for (step, seconds) in rows {
        writeln!(out, "| {step} | {seconds:.1} s |")?;
    }
    let total: f64 = rows.iter().map(|(_, seconds)| seconds).sum();
    writeln!(out, "| all | {total:.1} s |")?;
    writeln!(
        out,
        "\nload average (1, 5, 15 min): {load_before} before, {load_after} after ({} cores)",
        std::thread::available_parallelism().map_or(0, usize::from)
    )?;
    Ok(out)
}

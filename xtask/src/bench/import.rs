//! `cargo xtask bench import`: `cargo kubebuilder import go` (release build) on the largest
//! API of the import corpus, Kueue v0.17.0's three versions (`./apis/kueue/...`, from the Go
//! module proxy), timed as a whole process with its peak RSS: reading the Go packages
//! (goimport), writing the project and rendering its manifests. Beside it, controller-gen
//! renders the same packages' CRDs from the Go original, alternating (A B A B).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kubebuilder_cli::tools;
use kubebuilder_envtest::load::percentile;

use super::{Sample, timed};

/// The corpus' largest API.
const MODULE: &str = "sigs.k8s.io/kueue";
const VERSION: &str = "v0.17.0";
const PATHS: &str = "./apis/kueue/...";

#[derive(clap::Args)]
pub struct Args {
    /// Timed runs (each side).
    #[arg(long, default_value_t = 3)]
    runs: usize,
}

pub fn run(args: Args) -> Result<()> {
    ensure!(args.runs > 0, "--runs must be at least 1");
    let root = kubebuilder_cli::workspace_root();
    let out = super::output_dir()?.join("import");
    let module = kubebuilder_envtest::assets::go_module_source(
        &root.join("macros/tests/conformance/go"),
        MODULE,
        VERSION,
    )?;
    eprintln!("xtask: building cargo-kubebuilder (release)");
    let built = kubebuilder_cli::cargo()
        .current_dir(&root)
        .args(["build", "--release", "--package", "cargo-kubebuilder"])
        .status()
        .context("running cargo")?;
    ensure!(built.success(), "building cargo-kubebuilder failed");
    let target = kubebuilder_cli::target_dir()?;
    let cli = target.join("release/cargo-kubebuilder");
    let controller_gen = tools::CONTROLLER_GEN.install()?;
    let import = |run: usize| -> Result<Sample> {
        let project = out.join(format!("imported-{run}"));
        if project.exists() {
            std::fs::remove_dir_all(&project)?;
        }
        let mut command = Command::new(&cli);
        command
            .args(["kubebuilder", "import", "go"])
            .arg(&module)
            .arg(&project)
            .arg("--local")
            .arg(&root)
            .args(["--paths", PATHS]);
        timed(&mut command)
    };
    let render = || -> Result<Sample> {
        let crds = out.join("controller-gen");
        let mut command = Command::new(&controller_gen);
        command
            .current_dir(&module)
            .arg("crd")
            .arg(format!("paths={PATHS}"))
            .arg(format!("output:crd:dir={}", crds.display()));
        timed(&mut command)
    };
    eprintln!("xtask: warming up (the Go build cache, the module cache)");
    import(0)?;
    render()?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for run in 1..=args.runs {
        ours.push(import(run)?);
        theirs.push(render()?);
    }
    super::publish(&table(&module, &ours, &theirs), "import.md")
}

fn table(module: &Path, ours: &[Sample], theirs: &[Sample]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## {MODULE}@{VERSION} {PATHS} ({} runs each, alternating; {})\n",
        ours.len(),
        module.display()
    );
    let _ = writeln!(out, "| command | median | min | max | peak RSS (max) |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    let seconds = |d: Duration| format!("{:.2} s", d.as_secs_f64());
    for (name, samples) in [
        (
            "cargo kubebuilder import go (goimport, project, manifests)",
            ours,
        ),
        ("controller-gen crd (the Go original)", theirs),
    ] {
        let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        walls.sort_unstable();
        let peak = samples.iter().map(|s| s.peak_rss_kib).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {:.0} MiB |",
            seconds(percentile(&walls, 50)),
            seconds(walls[0]),
            seconds(walls[walls.len() - 1]),
            peak as f64 / 1024.0
        );
    }
    out
}

//! `cargo xtask bench manifests`: the inner loop of an API author, edit one marker in
//! `api/` and regenerate the manifests, timed as a whole process.
//!
//! The edit is made in a copy of this workspace under `target/bench/` (its own target
//! directory, built once before timing), flipping a `minimum = 0` of
//! `api/src/v1/cronjob_types.rs` to 1 and back, then `cargo xtask manifests` runs: as users
//! run it (reading the sources, which the benchmark checks it does rather than build), and
//! with `--build` (building the declarations binary, the path before the source reader and
//! its fallback). Each run must change the CRD it writes, or the benchmark fails: a loop
//! that changed nothing would be timed faster than the real one.
//!
//! With `--go-project <dir>` (a kubebuilder Go project, such as the tutorial's CronJob
//! project), the same edit (`+kubebuilder:validation:Minimum=0` of
//! `api/v1/cronjob_types.go`) is made in a copy of it and `make manifests`' command runs
//! (the pinned controller-gen, as cached for the conformance tests), alternating with ours
//! (A B A B), and the table gives the ratio of each pair.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use kubebuilder_cli::tools;
use kubebuilder_envtest::load::percentile;

use super::{Sample, timed};

/// The file and marker our edit flips.
const OUR_TYPES: &str = "api/src/v1/cronjob_types.rs";
const OUR_MARKER: [&str; 2] = ["minimum = 0", "minimum = 1"];
/// The generated file our edit changes.
const OUR_CRD: &str = "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml";
/// The same for a Go kubebuilder project.
const GO_TYPES: &str = "api/v1/cronjob_types.go";
const GO_MARKER: [&str; 2] = [
    "+kubebuilder:validation:Minimum=0",
    "+kubebuilder:validation:Minimum=1",
];
/// Our loops: reading the sources, and building.
const OUR_LOOPS: usize = 2;
const GO_CRD: &str = "config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml";

#[derive(clap::Args)]
pub struct Args {
    /// Timed edits (each side).
    #[arg(long, default_value_t = 5)]
    edits: usize,

    /// A kubebuilder Go project with the tutorial's CronJob API, timed the same way with
    /// controller-gen.
    #[arg(long, value_name = "DIR")]
    go_project: Option<PathBuf>,
}

/// One side of the comparison: a project copy, its edit and its command.
struct Loop {
    name: &'static str,
    dir: PathBuf,
    types: &'static str,
    marker: [&'static str; 2],
    crd: &'static str,
    /// The command, run in a project directory.
    command: Box<dyn Fn(&Path) -> Command>,
}

pub fn run(args: Args) -> Result<()> {
    ensure!(args.edits > 0, "--edits must be at least 1");
    let out = super::output_dir()?;
    let copy = copy_tree(
        &kubebuilder_cli::workspace_root(),
        &out.join("manifests-rust"),
    )?;
    let ours = |name, build| Loop {
        name,
        dir: copy.clone(),
        types: OUR_TYPES,
        marker: OUR_MARKER,
        crd: OUR_CRD,
        command: Box::new(move |dir| our_command(dir, build)),
    };
    let mut loops = vec![
        ours("cargo xtask manifests", false),
        ours("cargo xtask manifests --build", true),
    ];
    if let Some(project) = &args.go_project {
        loops.push(Loop {
            name: "controller-gen (make manifests)",
            dir: copy_tree(project, &out.join("manifests-go"))?,
            types: GO_TYPES,
            marker: GO_MARKER,
            crd: GO_CRD,
            command: go_command(tools::CONTROLLER_GEN.install()?),
        });
    }
    let mut nothing_changed = Vec::new();
    for side in &loops {
        eprintln!("xtask: warming up {} in {}", side.name, side.dir.display());
        side.set_marker(Some(0))?;
        timed(&mut (side.command)(&side.dir))?;
        nothing_changed.push(timed(&mut (side.command)(&side.dir))?);
    }
    reads_the_sources(&loops[0])?;
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); loops.len()];
    for _ in 0..args.edits {
        // A B A B: the sides see the same load, pair by pair.
        for (side, samples) in loops.iter().zip(&mut samples) {
            samples.push(side.edit_and_run()?);
        }
    }
    for side in &loops {
        side.set_marker(Some(0))?;
    }
    super::publish(
        &table(&loops, &samples, &nothing_changed, args.edits),
        "manifests.md",
    )
}

impl Loop {
    /// Sets the first marker of the copy's types file (in either spelling) to its value
    /// `which` (0 or 1), or to the other one than now with `None`; the other markers of
    /// the file stay as they are.
    fn set_marker(&self, which: Option<usize>) -> Result<()> {
        let path = self.dir.join(self.types);
        let mut text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        // Both spellings have the same length.
        let (first, now) = self
            .marker
            .iter()
            .enumerate()
            .filter_map(|(spelling, marker)| text.find(marker).map(|at| (at, spelling)))
            .min()
            .with_context(|| {
                format!(
                    "{} holds neither {:?} nor {:?}",
                    path.display(),
                    self.marker[0],
                    self.marker[1]
                )
            })?;
        let which = which.unwrap_or(1 - now);
        text.replace_range(first..first + self.marker[which].len(), self.marker[which]);
        std::fs::write(&path, text)?;
        Ok(())
    }

    /// Flips the marker, runs the command, and checks that the CRD changed.
    fn edit_and_run(&self) -> Result<Sample> {
        let crd = self.dir.join(self.crd);
        let before = std::fs::read_to_string(&crd).unwrap_or_default();
        self.set_marker(None)?;
        let sample = timed(&mut (self.command)(&self.dir))?;
        let after = std::fs::read_to_string(&crd).unwrap_or_default();
        ensure!(
            before != after,
            "{} did not change {} after the edit",
            self.name,
            crd.display()
        );
        Ok(sample)
    }
}

fn our_command(dir: &Path, build: bool) -> Command {
    let mut command = kubebuilder_cli::cargo();
    command
        .current_dir(dir)
        .args(["xtask", "manifests"])
        .args(build.then_some("--build"))
        .env("CARGO_TARGET_DIR", dir.join("target"));
    command
}

/// `manifests` reads the copy's sources: it says when it builds instead, and a benchmark
/// of that would time the other path under this one's name.
fn reads_the_sources(side: &Loop) -> Result<()> {
    let output = (side.command)(&side.dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", side.name))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(
        output.status.success() && !stderr.contains("building the declarations"),
        "{} did not read the sources:\n{stderr}",
        side.name
    );
    Ok(())
}

/// What kubebuilder's `make manifests` runs, with the controller-gen at `controller_gen`.
fn go_command(controller_gen: PathBuf) -> Box<dyn Fn(&Path) -> Command> {
    Box::new(move |dir| {
        let mut command = Command::new(&controller_gen);
        command.current_dir(dir).args([
            "rbac:roleName=manager-role",
            "crd",
            "webhook",
            "paths=./...",
            "output:crd:artifacts:config=config/crd/bases",
        ]);
        command
    })
}

/// A copy of the files git knows in `source` (tracked and untracked, not ignored) at
/// `dest`, refreshed: what changed since the last copy is written again, so that an
/// earlier build in it stays valid.
fn copy_tree(source: &Path, dest: &Path) -> Result<PathBuf> {
    let listed = Command::new("git")
        .current_dir(source)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output()
        .with_context(|| format!("listing the files of {} with git", source.display()))?;
    ensure!(
        listed.status.success(),
        "git ls-files failed in {}",
        source.display()
    );
    for name in listed
        .stdout
        .split(|&b| b == 0)
        .filter(|name| !name.is_empty())
    {
        let name = std::str::from_utf8(name)?;
        let (from, to) = (source.join(name), dest.join(name));
        let Ok(content) = std::fs::read(&from) else {
            continue; // deleted in the working tree
        };
        if std::fs::read(&to).ok().as_ref() != Some(&content) {
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&to, content)?;
            let mode = std::fs::metadata(&from)?.permissions();
            std::fs::set_permissions(&to, mode)?;
        }
    }
    Ok(dest.to_path_buf())
}

fn table(loops: &[Loop], samples: &[Vec<Sample>], nothing: &[Sample], edits: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Edit one marker → manifests written ({edits} edits each, alternating)\n"
    );
    let _ = writeln!(
        out,
        "| command | median | min | max | peak RSS (max) | nothing changed |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let seconds = |d: Duration| format!("{:.2} s", d.as_secs_f64());
    for ((side, samples), nothing) in loops.iter().zip(samples).zip(nothing) {
        let mut walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
        walls.sort_unstable();
        let peak = samples.iter().map(|s| s.peak_rss_kib).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} MiB | {} |",
            side.name,
            seconds(percentile(&walls, 50)),
            seconds(walls[0]),
            seconds(walls[walls.len() - 1]),
            peak as f64 / 1024.0,
            seconds(nothing.wall)
        );
    }
    // With a Go project, controller-gen's loop is the last: each of ours against it.
    if let ([our_loops @ .., _controller_gen], [our_samples @ .., go]) = (loops, samples)
        && loops.len() == OUR_LOOPS + 1
    {
        out.push('\n');
        for (side, ours) in our_loops.iter().zip(our_samples) {
            let mut ratios: Vec<f64> = ours
                .iter()
                .zip(go)
                .map(|(a, b)| a.wall.as_secs_f64() / b.wall.as_secs_f64())
                .collect();
            ratios.sort_by(f64::total_cmp);
            let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
            let _ = writeln!(
                out,
                "`{}` / controller-gen, pair by pair: {} (median {:.2}).",
                side.name,
                listed.join(", "),
                ratios[ratios.len() / 2]
            );
        }
    }
    out
}

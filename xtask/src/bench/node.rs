//! `cargo xtask bench node`: the road from a laptop to the local node, timed step by step —
//! the manager image (`docker-build`, incremental), `cluster up` to a Ready node,
//! cert-manager, loading the image, `deploy` until the manager is Ready, `cluster down` —
//! and the node's memory with the operator running. Needs root and no node running.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kubebuilder_cli::{certmanager, image};
use kubebuilder_envtest::node;

/// The image the benchmark builds and deploys.
const IMAGE: &str = "example.com/project:v0.0.1";

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> Result<()> {
    if node::status()?.is_running() {
        bail!(
            "a local node is running; the benchmark starts its own: `cargo xtask cluster down` first"
        );
    }
    let root = kubebuilder_cli::workspace_root();
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut timed = |name: &str, started: Instant| {
        rows.push((
            name.to_owned(),
            format!("{:.1} s", started.elapsed().as_secs_f64()),
        ));
    };

    let started = Instant::now();
    image::run(image::Args {
        image: IMAGE.to_owned(),
    })?;
    timed("docker-build (incremental)", started);
    let archive = image::archive_path(IMAGE)?;
    let image_size = std::fs::metadata(&archive)?.len();

    let started = Instant::now();
    let (node, _) = node::up(&root)?;
    timed("cluster up to a Ready node", started);
    let result = (|| -> Result<Vec<(String, u64)>> {
        let started = Instant::now();
        certmanager::install(&node)?;
        timed("cert-manager installed and admitting", started);
        let started = Instant::now();
        node.load(&archive)?;
        timed("image loaded", started);
        let started = Instant::now();
        let status = Command::new(std::env::current_exe()?)
            .args(["deploy", "--image", IMAGE])
            .env("KUBECONFIG", node.kubeconfig_path())
            .stdout(std::process::Stdio::null())
            .status()
            .context("running cargo xtask deploy")?;
        if !status.success() {
            bail!("cargo xtask deploy failed ({status})");
        }
        timed("deploy to the manager Ready", started);
        Ok(node.memory())
    })();
    let started = Instant::now();
    let stopped = node::down();
    timed("cluster down", started);
    let memory = result?;
    stopped?;

    super::publish(&table(&rows, image_size, &memory)?, "node.txt")
}

fn table(rows: &[(String, String)], image_size: u64, memory: &[(String, u64)]) -> Result<String> {
    let mut out = String::new();
    writeln!(out, "| step | time |")?;
    writeln!(out, "|---|---:|")?;
    for (name, time) in rows {
        writeln!(out, "| {name} | {time} |")?;
    }
    writeln!(
        out,
        "\nimage archive: {:.1} MiB\n",
        image_size as f64 / 1024.0 / 1024.0
    )?;
    writeln!(
        out,
        "| process (RSS with cert-manager and the manager running) | MiB |"
    )?;
    writeln!(out, "|---|---:|")?;
    let mut total = 0;
    for (name, kib) in memory.iter().filter(|(_, kib)| *kib >= 1024) {
        writeln!(out, "| {name} | {:.1} |", *kib as f64 / 1024.0)?;
        total += kib;
    }
    let small: u64 = memory
        .iter()
        .filter(|(_, kib)| *kib < 1024)
        .map(|(_, kib)| kib)
        .sum();
    writeln!(
        out,
        "| {} processes under 1 MiB | {:.1} |",
        memory.iter().filter(|(_, k)| *k < 1024).count(),
        small as f64 / 1024.0
    )?;
    writeln!(out, "| all | {:.1} |", (total + small) as f64 / 1024.0)?;
    Ok(out)
}

//! `cargo xtask test-e2e`: kubebuilder's `make test-e2e`, on the local node instead of Kind.
//!
//! 1. The manager image (`docker-build`), built from the start at a lower CPU priority,
//!    beside the next two steps.
//! 2. The tests, built as `cargo xtask test` builds them (every target, every feature).
//! 3. In this repository, the node's own tests (start, reuse, refusals, nothing left after
//!    `down` or after `kill -9` of the kubelet) — they start and stop nodes themselves.
//! 4. The node with cert-manager (`cluster up --cert-manager`), the image loaded into it.
//! 5. Every workspace package's `e2e` test target (built with its `e2e` feature), which
//!    deploys the image with `cargo xtask deploy` and checks what runs.
//! 6. The node stopped, whatever happened, and checked to leave nothing behind.

use std::process::{Child, Command};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::assets;
use kubebuilder_envtest::node;

use crate::report::Phases;
use crate::test::binaries;
use crate::test::jobs::niced;
use crate::test::{step, succeeds};
use crate::{certmanager, cluster, image, kustomize};

/// The image the end-to-end tests deploy (kubebuilder's e2e uses the same name).
pub const E2E_IMAGE: &str = "example.com/project:v0.0.1";
/// The variable that tells the e2e tests which image to deploy.
pub const IMAGE_ENV: &str = "E2E_IMAGE";
/// The package whose `node` tests exercise the node itself.
const NODE_TESTS_PACKAGE: &str = "kubebuilder-envtest";

/// The options of `cargo xtask test-e2e` (kubebuilder's `make test-e2e`).
#[derive(clap::Args)]
pub struct Args {
    /// Extra arguments for the e2e `cargo test` runs (e.g. a test name filter after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    cargo_args: Vec<String>,
}

/// Runs the steps of the module docs in order, failing at the first that fails; the node is
/// stopped whatever happens once it is up. Fails at once when a local node is already
/// running. Then prints how long each phase took.
pub fn run(args: Args) -> Result<()> {
    Phases::run("cargo xtask test-e2e", |phases| run_phases(&args, phases))
}

fn run_phases(args: &Args, phases: &mut Phases) -> Result<()> {
    let started = Instant::now();
    let root = crate::workspace_root();
    let (build_args, test_args) = crate::test::split_at_dashes(&args.cargo_args);
    let packages = e2e_packages()?;
    let assets = phases.time("the node's binaries and packages", || {
        let assets = assets::install()?;
        assets::install_controller_manager()?;
        assets::NODE.install()?;
        node::packages::ensure("the Dockerfile check", &[("/usr/bin/podman", "podman")])?;
        Ok(assets)
    })?;
    if node::status()?.is_running() {
        bail!(
            "a local node is running; the end-to-end tests start their own: `cargo xtask cluster down` first"
        );
    }
    // The image's release build keeps the CPU busy for minutes, so it runs beside the
    // test build and the node's own tests, at a lower CPU priority: they come first.
    let mut image_build = spawn_image_build()?;
    let binaries = phases
        .time("the test build (every target, every feature)", || {
            binaries::build(&root, &build_args)
        })?
        .tests;
    let test = |package: &str, target: &str| -> Result<Command> {
        let binary = binaries
            .iter()
            .find(|b| b.package == package && b.target == target && b.kind == "test")
            .with_context(|| {
                format!("the build made no executable for {package} --test {target}")
            })?;
        let mut command = binary.command();
        command.args(&test_args);
        Ok(command)
    };
    if packages.iter().any(|p| p == NODE_TESTS_PACKAGE) {
        phases.time("the node's own tests", || {
            succeeds(
                "the node's own tests",
                test(NODE_TESTS_PACKAGE, "node")?.env(assets::ASSETS_ENV, &assets),
            )
        })?;
    }
    phases.time("the manager image (release build)", || {
        let status = image_build.wait()?;
        if !status.success() {
            bail!("cargo xtask docker-build failed ({status})");
        }
        Ok(())
    })?;
    let result = (|| -> Result<()> {
        let (node, _) = phases.time("the node up", || node::up(&root))?;
        phases.time("cert-manager installed", || certmanager::install(&node))?;
        let archive = image::archive_path(E2E_IMAGE)?;
        phases.time("the image loaded", || cluster::load(E2E_IMAGE))?;
        for package in packages.iter().filter(|p| *p != NODE_TESTS_PACKAGE) {
            let name = format!("the e2e tests of {package}");
            phases.time(&name, || {
                succeeds(
                    &name,
                    test(package, "e2e")?
                        // They mostly wait: for minutes to pass, pods to start.
                        .arg("--test-threads=16")
                        .env("KUBECONFIG", node.kubeconfig_path())
                        .env(IMAGE_ENV, E2E_IMAGE)
                        .env("E2E_IMAGE_ARCHIVE", &archive)
                        .env("XTASK", crate::xtask_exe()?),
                )
            })?;
        }
        phases.time("undeploy", || undeploy_removes_everything(&node))
    })();
    let stopped = phases.time("the node down", node::down);
    result?;
    stopped?;
    eprintln!(
        "xtask: end-to-end tests passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The image build's niceness: below the tests (at 0), which it must not slow down, and
/// above the busy jobs of a `cargo xtask test` running beside it (at 19), since the
/// end-to-end tests wait for it and then take minutes of their own.
const IMAGE_BUILD_NICENESS: i32 = 10;

/// `cargo xtask docker-build` of the e2e image, started at [`IMAGE_BUILD_NICENESS`].
fn spawn_image_build() -> Result<Child> {
    let mut command = Command::new(crate::xtask_exe()?);
    command.args(["docker-build", "--image", E2E_IMAGE]);
    niced(&mut command, IMAGE_BUILD_NICENESS)
        .spawn()
        .context("starting cargo xtask docker-build")
}

/// `cargo xtask undeploy` on the node: every object of config/default is deleted (it waits
/// for each), and with a real namespace controller the namespaces go too.
fn undeploy_removes_everything(node: &node::Node) -> Result<()> {
    let objects = kustomize::build(
        &kustomize::in_workspace("config/default".as_ref()),
        &kustomize::Overrides::default(),
    )?;
    step(
        "cargo xtask undeploy",
        Command::new(crate::xtask_exe()?)
            .arg("undeploy")
            .env("KUBECONFIG", node.kubeconfig_path()),
    )?;
    let namespaces: Vec<String> = objects
        .iter()
        .filter(|object| object["kind"] == "Namespace")
        .filter_map(|object| object["metadata"]["name"].as_str().map(str::to_owned))
        .collect();
    let node = node.clone();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let api: kube::Api<k8s_openapi::api::core::v1::Namespace> =
                kube::Api::all(node.client().await?);
            let deadline = Instant::now() + std::time::Duration::from_secs(120);
            for name in namespaces {
                while api.get_opt(&name).await?.is_some() {
                    if Instant::now() > deadline {
                        bail!("namespace {name} still exists 120 s after undeploy");
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                }
                println!("namespace/{name} gone");
            }
            Ok(())
        })
}

/// The workspace members that have an `e2e` feature.
pub(crate) fn e2e_packages() -> Result<Vec<String>> {
    Ok(crate::workspace_packages()?
        .iter()
        .filter(|package| package["features"].get("e2e").is_some())
        .filter_map(|package| package["name"].as_str().map(str::to_owned))
        .collect())
}

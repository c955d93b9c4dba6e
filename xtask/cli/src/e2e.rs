//! `cargo xtask test-e2e`: kubebuilder's `make test-e2e`, on the local node instead of Kind.
//!
//! 1. In this repository, the node's own tests (start, reuse, refusals, nothing left after
//!    `down` or after `kill -9` of the kubelet) — they start and stop nodes themselves.
//! 2. The manager image (`docker-build`), the node with cert-manager (`cluster up
//!    --cert-manager`), the image loaded into it.
//! 3. Every workspace package's `e2e` test target (built with its `e2e` feature), which
//!    deploys the image with `cargo xtask deploy` and checks what runs.
//! 4. The node stopped, whatever happened, and checked to leave nothing behind.

use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};
use kubebuilder_envtest::assets;
use kubebuilder_envtest::node;

use crate::test::step;
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
/// stopped whatever happens once it is up. Fails at once when a local node is already running.
pub fn run(args: Args) -> Result<()> {
    let started = Instant::now();
    let root = crate::workspace_root();
    let packages = e2e_packages()?;
    let assets = assets::install()?;
    assets::NODE.install()?;
    // The Dockerfile is checked with podman.
    node::packages::ensure("the Dockerfile check", &[("/usr/bin/podman", "podman")])?;
    if node::status()?.is_running() {
        bail!(
            "a local node is running; the end-to-end tests start their own: `cargo xtask cluster down` first"
        );
    }

    if packages.iter().any(|p| p == NODE_TESTS_PACKAGE) {
        step(
            "the node's own tests",
            cargo_test(NODE_TESTS_PACKAGE, "node", &args.cargo_args)
                .env(assets::ASSETS_ENV, &assets),
        )?;
    }

    image::run(image::Args {
        image: E2E_IMAGE.to_owned(),
    })?;
    let result = (|| -> Result<()> {
        let (node, _) = node::up(&root)?;
        certmanager::install(&node)?;
        let archive = image::archive_path(E2E_IMAGE)?;
        cluster::load(E2E_IMAGE)?;
        for package in packages.iter().filter(|p| *p != NODE_TESTS_PACKAGE) {
            step(
                &format!("the e2e tests of {package}"),
                cargo_test(package, "e2e", &args.cargo_args)
                    .env("KUBECONFIG", node.kubeconfig_path())
                    .env(IMAGE_ENV, E2E_IMAGE)
                    .env("E2E_IMAGE_ARCHIVE", &archive)
                    .env("XTASK", std::env::current_exe()?),
            )?;
        }
        undeploy_removes_everything(&node)
    })();
    let stopped = node::down();
    result?;
    stopped?;
    eprintln!(
        "xtask: end-to-end tests passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
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
        Command::new(std::env::current_exe()?)
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

/// `cargo test -p <package> --features e2e --test <target>`, its tests all at once (they
/// mostly wait: for minutes to pass, pods to start).
fn cargo_test(package: &str, target: &str, extra: &[String]) -> Command {
    let mut command = crate::cargo();
    command
        .current_dir(crate::workspace_root())
        .args([
            "test",
            "--package",
            package,
            "--features",
            "e2e",
            "--test",
            target,
        ])
        .args(extra);
    if !extra.iter().any(|arg| arg == "--") {
        command.arg("--");
    }
    command.arg("--test-threads=16");
    command
}

/// The workspace members that have an `e2e` feature.
fn e2e_packages() -> Result<Vec<String>> {
    Ok(crate::workspace_packages()?
        .iter()
        .filter(|package| package["features"].get("e2e").is_some())
        .filter_map(|package| package["name"].as_str().map(str::to_owned))
        .collect())
}

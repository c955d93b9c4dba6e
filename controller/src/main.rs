//! The manager of the project operator (kubebuilder's `cmd/main.go`): the
//! controllers and admission webhooks of its kinds on a manager with leader election,
//! probes and metrics. `cargo xtask create api` and `cargo xtask create webhook` register
//! new ones at the `+kubebuilder:scaffold` markers.

use anyhow::{Context as _, Result};
use clap::Parser;
use kubebuilder_runtime::{Manager, ManagerArgs, healthz};

/// The leader-election Lease name, as kubebuilder derives it: a hash of the project
/// (`<domain>/<project name>`), then the domain.
const LEADER_ELECTION_ID: &str = "80807133.tutorial.kubebuilder.io";

#[derive(Parser)]
#[command(
    name = "controller",
    about = "The project operator: runs its controllers and serves its admission webhooks"
)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    cli.manager.init_logging()?;
    let config = kube::Config::infer()
        .await
        .context("no cluster configured: set KUBECONFIG, write ~/.kube/config or run in a pod")?;
    let mut manager =
        Manager::from_config(config, cli.manager)?.leader_election_id(LEADER_ELECTION_ID);
    manager = controller::cronjob::setup_with_manager(
        manager,
        std::sync::Arc::new(kubebuilder_runtime::SystemClock),
    );
    // +kubebuilder:scaffold:controllers
    manager = manager.webhooks(controller::cronjob::webhook::webhooks());
    manager = manager.webhooks(controller::cronjob::webhook_v2::webhooks());
    manager = manager.conversion::<api::v1::CronJob>();
    // +kubebuilder:scaffold:webhooks
    manager = manager
        .add_healthz_check("healthz", healthz::ping)
        .add_readyz_check("readyz", healthz::ping);
    manager.run().await.context("the manager failed")
}

//! The manager of the project operator (kubebuilder's `cmd/main.go`): the
//! controllers and admission webhooks of its kinds on a manager with leader election,
//! probes and metrics. `cargo xtask create api` and `cargo xtask create webhook` register
//! new ones at the `+kubebuilder:scaffold` markers.

use anyhow::{Context as _, Result};
use clap::{ArgAction, Parser};
use kubebuilder_runtime::{Manager, ManagerArgs};

/// The leader-election Lease name, as kubebuilder derives it: a hash of the project
/// (`<domain>/<project name>`), then the domain.
const LEADER_ELECTION_ID: &str = "80807133.tutorial.kubebuilder.io";

/// The name of the webhook configurations registered by `--register-webhooks-on-loopback`.
const LOOPBACK_WEBHOOKS_NAME: &str = "project-loopback-webhooks";

#[derive(Parser)]
#[command(
    name = "controller",
    about = "The project operator: runs its controllers and serves its admission webhooks"
)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,

    /// For a local control plane: serve the webhooks with a certificate generated for
    /// 127.0.0.1, register them with the apiserver at https://127.0.0.1:<webhook-port>,
    /// and remove the registration on shutdown. (In a cluster, config/webhook and
    /// cert-manager do this.)
    #[arg(long, default_value = "false", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          conflicts_with = "webhook_cert_path")]
    register_webhooks_on_loopback: bool,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    cli.manager.init_logging()?;
    let client = kube::Client::try_default()
        .await
        .context("no cluster configured: set KUBECONFIG, write ~/.kube/config or run in a pod")?;
    let mut manager = Manager::new(client, cli.manager).leader_election_id(LEADER_ELECTION_ID);
    manager = controller::cronjob::setup_with_manager(
        manager,
        std::sync::Arc::new(kubebuilder_runtime::SystemClock),
    );
    // +kubebuilder:scaffold:controllers
    manager = manager.webhooks(controller::cronjob::webhook::webhooks());
    // +kubebuilder:scaffold:webhooks
    if cli.register_webhooks_on_loopback {
        manager = manager
            .serve_webhooks_on_loopback(LOOPBACK_WEBHOOKS_NAME)
            .context("generating the loopback webhook certificate")?;
    }
    manager.run().await.context("the manager failed")
}

//! The CronJob admission and conversion webhooks under load, for `cargo xtask bench
//! webhook`, which runs this binary and keeps the table it prints on standard output. It is
//! a package of its own because it links the controller's webhooks: xtask links neither
//! `api` nor `controller`, so that an edit to the API does not rebuild it.
//!
//! Starts a local control plane (the manager needs a client, as in `cargo xtask run`) and a
//! manager serving only the CronJob webhooks over TLS on loopback, with a self-signed
//! certificate. Then, per webhook and concurrency, sends the AdmissionReview the apiserver
//! would send for creating the sample CronJob (`config/samples/batch_v1_cronjob.yaml`),
//! and ConversionReviews of 1 and 100 such CronJobs from v1 to v2 (what the apiserver sends
//! to read one, or list a hundred, as v2), each worker on its own keep-alive connection as
//! the apiserver keeps them.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};

use anyhow::{Context, Result, bail, ensure};
use controller::cronjob::webhook::webhooks;
use kubebuilder::conversion::CONVERT_PATH;
use kubebuilder::webhook::Webhook;
use kubebuilder_envtest::http_client::HttpClient;
use kubebuilder_envtest::load::{BenchReport, admission_load};
use kubebuilder_envtest::{ControlPlane, assets};
use kubebuilder_runtime::certs::write_loopback_serving_certificate;
use kubebuilder_runtime::{BindAddress, Manager, ManagerArgs};
use serde_json::{Value, json};

/// The concurrencies measured: one client at a time, and the apiserver's burst.
const CONCURRENCIES: [usize; 2] = [1, 16];

const SAMPLE: &str = "config/samples/batch_v1_cronjob.yaml";

#[derive(clap::Parser)]
struct Args {
    /// Requests per measurement (one measurement per webhook and concurrency).
    #[arg(long, default_value_t = 5000)]
    requests: usize,
}

/// Objects per ConversionReview: a read, and a page of a list.
const CONVERTED_OBJECTS: [usize; 2] = [1, 100];

/// One row of the table.
struct Measurement {
    webhook: String,
    report: BenchReport,
}

fn main() -> Result<()> {
    let args = <Args as clap::Parser>::parse();
    ensure!(args.requests > 0, "--requests must be at least 1");
    assets::install()?;
    let plane = ControlPlane::start()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let measurements = runtime.block_on(measure(&plane, args.requests))?;
    print!("{}", table(&measurements, args.requests));
    Ok(())
}

async fn measure(plane: &ControlPlane, requests: usize) -> Result<Vec<Measurement>> {
    let certs = tempfile::tempdir()?;
    let ca = write_loopback_serving_certificate(certs.path(), "tls.crt", "tls.key")?;
    let args = ManagerArgs {
        health_probe_bind_address: BindAddress::Disabled,
        webhook_port: 0,
        webhook_cert_path: Some(certs.path().to_owned()),
        ..ManagerArgs::default()
    };
    let webhooks = webhooks();
    let declared: Vec<Webhook> = webhooks.declarations().to_vec();
    let running = Manager::new(plane.client().await?, args)
        .webhook_host(IpAddr::V4(Ipv4Addr::LOCALHOST))
        .webhooks(webhooks)
        .conversion::<api::v1::CronJob>()
        .enable_webhooks(true)
        .start()
        .await?;
    let address = running
        .webhook_addr()
        .context("the manager serves no webhooks")?;
    let server = HttpClient::tls(address, &ca)?;
    let sample = sample_cronjob()?;
    let review = serde_json::to_vec(&create_review(&sample))?;

    let mut measurements = Vec::new();
    for webhook in &declared {
        let path = webhook
            .path
            .as_deref()
            .context("CronJob webhooks are served at a path")?;
        check_answer(&server, webhook, path, &review).await?;
        for concurrency in CONCURRENCIES {
            let report =
                admission_load(&server, path, review.clone().into(), requests, concurrency).await?;
            ensure!(
                report.failures == 0,
                "{} answered {} of {} requests with an HTTP error",
                webhook.name,
                report.failures,
                report.requests
            );
            measurements.push(Measurement {
                webhook: webhook.name.to_string(),
                report,
            });
        }
    }
    for objects in CONVERTED_OBJECTS {
        let review = serde_json::to_vec(&conversion_review(&sample, objects))?;
        check_conversion(&server, &review, objects).await?;
        for concurrency in CONCURRENCIES {
            let report = admission_load(
                &server,
                CONVERT_PATH,
                review.clone().into(),
                requests,
                concurrency,
            )
            .await?;
            ensure!(
                report.failures == 0,
                "/convert answered {} of {} reviews with an HTTP error",
                report.failures,
                report.requests
            );
            measurements.push(Measurement {
                webhook: format!("conversion v1 → v2, {objects} object(s)"),
                report,
            });
        }
    }
    running.shutdown().await?;
    Ok(measurements)
}

/// The ConversionReview of `objects` copies of `cronjob` (stored as v1) to v2.
fn conversion_review(cronjob: &Value, objects: usize) -> Value {
    let objects: Vec<Value> = (0..objects)
        .map(|index| {
            let mut object = cronjob.clone();
            object["metadata"]["name"] = json!(format!("cronjob-{index}"));
            object["metadata"]["namespace"] = json!("default");
            object
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "0b7e2d1c-bench",
            "desiredAPIVersion": format!("{}/v2", api::GROUP),
            "objects": objects,
        },
    })
}

/// Makes sure the load measures real work: every object converted.
async fn check_conversion(server: &HttpClient, review: &[u8], objects: usize) -> Result<()> {
    let reply = server.post_json(CONVERT_PATH, review.to_vec()).await?;
    let answer: Value = serde_json::from_slice(&reply.body)
        .with_context(|| format!("/convert answered HTTP {}: {}", reply.status, reply.text()))?;
    let response = &answer["response"];
    ensure!(
        response["result"]["status"] == "Success",
        "/convert failed the sample: {}",
        response["result"]
    );
    let converted = response["convertedObjects"].as_array().map_or(0, Vec::len);
    ensure!(
        converted == objects,
        "/convert gave {converted} objects for {objects}"
    );
    Ok(())
}

fn sample_cronjob() -> Result<Value> {
    let path = kubebuilder_cli::workspace_root().join(SAMPLE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_saphyr::from_str(&text).with_context(|| format!("{SAMPLE}: invalid YAML"))
}

/// The AdmissionReview the apiserver sends when `cronjob` is created.
fn create_review(cronjob: &Value) -> Value {
    let group = api::GROUP;
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "6f1e7c52-0d7a-4f3e-9a51-bench",
            "kind": {"group": group, "version": "v1", "kind": "CronJob"},
            "resource": {"group": group, "version": "v1", "resource": "cronjobs"},
            "requestKind": {"group": group, "version": "v1", "kind": "CronJob"},
            "requestResource": {"group": group, "version": "v1", "resource": "cronjobs"},
            "name": cronjob["metadata"]["name"],
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": cronjob,
            "oldObject": null,
            "dryRun": false,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        }
    })
}

/// Makes sure the load measures real work: the sample is admitted, and the defaulter
/// answers with a patch (the sample leaves `suspend` and the history limits unset).
async fn check_answer(
    server: &HttpClient,
    webhook: &Webhook,
    path: &str,
    review: &[u8],
) -> Result<()> {
    let reply = server.post_json(path, review.to_vec()).await?;
    ensure!(
        reply.status.is_success(),
        "{} answered HTTP {}: {}",
        webhook.name,
        reply.status,
        reply.text()
    );
    let answer: Value = serde_json::from_slice(&reply.body)?;
    let response = &answer["response"];
    if response["allowed"] != true {
        bail!(
            "{} refused the sample CronJob: {}",
            webhook.name,
            response["status"]
        );
    }
    ensure!(
        response["patch"].is_null() != webhook.mutating,
        "{} answered {} patch",
        webhook.name,
        if webhook.mutating {
            "without a"
        } else {
            "with a"
        }
    );
    Ok(())
}

fn table(measurements: &[Measurement], requests: usize) -> String {
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let mut table = format!(
        "CronJob admission and conversion webhooks: {requests} requests per row, {build} build, \
         server and load generator in one process on {cpus} CPUs, TLS over loopback\n\n"
    );
    table.push_str("| webhook | concurrency | req/s | p50 (ms) | p99 (ms) |\n");
    table.push_str("|---|---:|---:|---:|---:|\n");
    for Measurement { webhook, report } in measurements {
        let _ = writeln!(
            table,
            "| {webhook} | {} | {:.0} | {:.3} | {:.3} |",
            report.concurrency,
            report.throughput,
            report.p50.as_secs_f64() * 1e3,
            report.p99.as_secs_f64() * 1e3,
        );
    }
    table
}

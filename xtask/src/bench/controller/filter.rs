//! `cargo xtask bench controller --generation-filter N`: how many reconciles a controller
//! whose status is only a report makes per CronJob over a run, with the `GenerationChanged`
//! event filter and without it (every controller before the filter existed).
//!
//! On a fresh local control plane, for each setting in turn (each in a namespace of its
//! own, with N CronJobs of its own): a manager in this process runs a controller of the
//! CronJob kind, known to it only by group, version and kind, whose reconciler writes an
//! `Available` condition with the generation it saw, and writes it only when it changed
//! (the toolkit's `conditions::set_for`). The run: every CronJob created and reported;
//! then every spec changed once (a new schedule) and reported again; then a pause for
//! the reconciles that the reports themselves start. Printed: the reconciles, the status
//! writes, and both per CronJob.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _, stream};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt as _};
use kubebuilder_envtest::ControlPlane;
use kubebuilder_runtime::predicate::GenerationChanged;
use kubebuilder_runtime::prelude::*;
use kubebuilder_runtime::{BindAddress, ManagerArgs};
use serde_json::json;

use super::{
    CREATE_CONCURRENCY, CRONJOB_GROUP, CRONJOB_VERSION, cronjob_crd, cronjobs, new_cronjob,
};

/// How long each step of a run (every CronJob reported) may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the run waits, after the last report, for the reconciles its writes start.
const SETTLE: Duration = Duration::from_secs(3);
/// The condition the reconciler reports.
const AVAILABLE: &str = "Available";

/// What one setting measured.
struct Figures {
    setting: &'static str,
    reconciles: u64,
    status_writes: u64,
    took: Duration,
}

/// Measures both settings with `cronjobs` CronJobs each, on a control plane of their own.
pub(super) fn run(runtime: &tokio::runtime::Runtime, cronjobs: usize) -> Result<()> {
    let plane = ControlPlane::start()?;
    let figures = runtime.block_on(measure(&plane, cronjobs));
    plane.stop();
    super::super::publish(&table(cronjobs, &figures?), "controller-filter.md")
}

async fn measure(plane: &ControlPlane, cronjobs: usize) -> Result<Vec<Figures>> {
    plane.install_crds(&[cronjob_crd()?]).await?;
    let client = plane.client().await?;
    let mut figures = Vec::new();
    for filtered in [false, true] {
        let namespace = plane
            .create_namespace(if filtered {
                "bench-filtered"
            } else {
                "bench-unfiltered"
            })
            .await?;
        figures.push(one_run(&client, &namespace, cronjobs, filtered).await?);
    }
    Ok(figures)
}

/// One run of the reporting controller over `count` new CronJobs in `namespace`.
async fn one_run(
    client: &Client,
    namespace: &str,
    count: usize,
    filtered: bool,
) -> Result<Figures> {
    let api = cronjobs(client, namespace);
    eprintln!("xtask: creating {count} CronJobs in {namespace}");
    stream::iter(0..count)
        .map(|index| {
            let api = api.clone();
            async move {
                let cronjob = new_cronjob(index, "* * * * *")?;
                api.create(&Default::default(), &cronjob).await?;
                Ok::<_, anyhow::Error>(())
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await?;
    let reporter = Reporter::default();
    let args = ManagerArgs {
        namespaces: vec![namespace.to_owned()],
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        ..ManagerArgs::default()
    };
    let kind = GroupVersionKind::gvk(CRONJOB_GROUP, CRONJOB_VERSION, "CronJob");
    let mut builder = Manager::new(client.clone(), args)
        .controller_for_dynamic(&kind)
        .named("reporter");
    if filtered {
        builder = builder.with_event_filter(GenerationChanged);
    }
    let started = Instant::now();
    let running = builder.complete(reporter.clone()).start().await?;
    every_one_reported(&api, 1).await?;
    eprintln!("xtask: changing the spec of every CronJob in {namespace}");
    let new_schedule = json!({"spec": {"schedule": "*/5 * * * *"}});
    stream::iter(api.list(&ListParams::default()).await?.items)
        .map(|cronjob| {
            let (api, patch) = (api.clone(), Patch::Merge(new_schedule.clone()));
            async move {
                let name = cronjob.name_any();
                api.patch(&name, &PatchParams::default(), &patch).await?;
                Ok::<_, anyhow::Error>(())
            }
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await?;
    every_one_reported(&api, 2).await?;
    let took = started.elapsed();
    tokio::time::sleep(SETTLE).await;
    running.shutdown().await?;
    Ok(Figures {
        setting: if filtered {
            "with_event_filter(GenerationChanged)"
        } else {
            "no filter"
        },
        reconciles: reporter.reconciles.load(Ordering::Relaxed),
        status_writes: reporter.status_writes.load(Ordering::Relaxed),
        took,
    })
}

/// Waits until every CronJob of `api` reports `generation` in its condition.
async fn every_one_reported(api: &Api<DynamicObject>, generation: i64) -> Result<()> {
    let deadline = Instant::now() + STEP_TIMEOUT;
    loop {
        let cronjobs = api.list(&ListParams::default()).await?.items;
        let behind = cronjobs
            .iter()
            .filter(|cronjob| reported_generation(cronjob) != Some(generation))
            .count();
        if behind == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "{behind} CronJobs have not reported generation {generation} after {STEP_TIMEOUT:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The generation the CronJob's condition reports.
fn reported_generation(cronjob: &DynamicObject) -> Option<i64> {
    let conditions = status_conditions(cronjob);
    conditions::find(&conditions, AVAILABLE)?.observed_generation
}

fn status_conditions(cronjob: &DynamicObject) -> Vec<Condition> {
    serde_json::from_value(cronjob.data["status"]["conditions"].clone()).unwrap_or_default()
}

/// A reconciler whose status is only a report: the generation it last saw.
#[derive(Clone, Default)]
struct Reporter {
    reconciles: Arc<AtomicU64>,
    status_writes: Arc<AtomicU64>,
}

impl Reconciler<DynamicObject> for Reporter {
    type Error = Error;

    async fn reconcile(&self, cronjob: Arc<DynamicObject>, ctx: &Context) -> Result<Action, Error> {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
        let mut conditions = status_conditions(&cronjob);
        let available = conditions::new(AVAILABLE, Status::True, "Reported", "Seen");
        if conditions::set_for(&*cronjob, &mut conditions, available) {
            let namespace = cronjob
                .namespace()
                .context("a CronJob without a namespace")?;
            let api = cronjobs(ctx.client(), &namespace);
            let status = json!({
                "apiVersion": format!("{CRONJOB_GROUP}/{CRONJOB_VERSION}"),
                "kind": "CronJob",
                "status": {"conditions": conditions},
            });
            let apply = PatchParams::apply("reporter-controller").force();
            api.patch_status(&cronjob.name_any(), &apply, &Patch::Apply(status))
                .await?;
            self.status_writes.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Action::await_change())
    }
}

fn table(cronjobs: usize, figures: &[Figures]) -> String {
    let mut table = format!(
        "\n## A reporting controller over {cronjobs} CronJobs: created, then each spec changed once\n\n\
         | event filter | reconciles | per CronJob | status writes | per CronJob | both reports in |\n\
         |---|---:|---:|---:|---:|---:|\n"
    );
    #[expect(clippy::cast_precision_loss, reason = "counts far below 2^52")]
    let per = |total: u64| total as f64 / cronjobs.max(1) as f64;
    for figure in figures {
        table += &format!(
            "| {} | {} | {:.2} | {} | {:.2} | {:.2?} |\n",
            figure.setting,
            figure.reconciles,
            per(figure.reconciles),
            figure.status_writes,
            per(figure.status_writes),
            figure.took
        );
    }
    table
}

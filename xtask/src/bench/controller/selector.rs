//! `cargo xtask bench controller --selector-secrets N`: the cache of a kind watched with a
//! label selector among objects that do not match it, against an unfiltered watch.
//!
//! On a fresh local control plane, creates N Secrets labelled `app=other` in one
//! namespace, then, in this process, syncs the cache of Secrets of a manager watching
//! that namespace twice: first with the label selector `app=selected` (registered with
//! `Cache::by_object`), then with none. For each it prints the objects the cache holds,
//! their JSON (what the cache keeps of each object), how long the first list took, and
//! this process's RSS growth while the cache is held (after returning freed heap to the
//! system, so that the figure is what the cache keeps, not what its list passed through).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::{StreamExt as _, TryStreamExt as _, stream};
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::{Api, PostParams};
use kubebuilder_envtest::ControlPlane;
use kubebuilder_runtime::cache::{ByObject, CacheError, ListOptions};
use kubebuilder_runtime::{Manager, ManagerArgs};
use serde_json::json;

use super::process;

/// The selector of the filtered watch; no Secret created has this label.
const SELECTOR: &str = "app=selected";
/// Secrets created at once.
const CREATE_CONCURRENCY: usize = 32;
/// How long creating every Secret may take.
const CREATE_TIMEOUT: Duration = Duration::from_secs(900);
/// How many times a read waits out the cache's sync timeout before the bench gives up:
/// the first list of thousands of Secrets may outlast one.
const SYNC_ATTEMPTS: u32 = 12;
/// The data of each Secret: about a small TLS key's size.
const PAYLOAD_BYTES: usize = 1024;

/// What one watch's cache held.
struct CacheFigures {
    watch: String,
    objects: usize,
    json_bytes: usize,
    synced_in: Duration,
    rss_growth_kib: i64,
}

/// Measures both watches among `secrets` Secrets on a control plane of their own.
pub(super) fn run(runtime: &tokio::runtime::Runtime, secrets: usize) -> Result<()> {
    let plane = ControlPlane::start()?;
    let figures = runtime.block_on(measure(&plane, secrets));
    plane.stop();
    super::super::publish(&table(secrets, &figures?), "controller-selector.md")
}

async fn measure(plane: &ControlPlane, secrets: usize) -> Result<Vec<CacheFigures>> {
    let client = plane.client().await?;
    let namespace = plane.create_namespace("bench-secrets").await?;
    eprintln!("xtask: creating {secrets} Secrets labelled app=other");
    tokio::time::timeout(
        CREATE_TIMEOUT,
        create_secrets(&Api::namespaced(client.clone(), &namespace), secrets),
    )
    .await
    .with_context(|| format!("creating {secrets} Secrets took over {CREATE_TIMEOUT:?}"))??;
    // The filtered watch first: the heap the unfiltered one frees could be reused by a
    // later measurement, and would hide part of its growth.
    let mut figures = Vec::new();
    for selector in [Some(SELECTOR), None] {
        figures.push(cache_figures(&client, &namespace, selector).await?);
    }
    Ok(figures)
}

/// Creates `count` Secrets that [`SELECTOR`] does not match.
async fn create_secrets(secrets: &Api<Secret>, count: usize) -> Result<()> {
    stream::iter(0..count)
        .map(|index| async move {
            let secret: Secret = serde_json::from_value(json!({
                "metadata": {"name": format!("bench-{index:05}"), "labels": {"app": "other"}},
                "stringData": {"payload": "x".repeat(PAYLOAD_BYTES)},
            }))?;
            secrets.create(&PostParams::default(), &secret).await?;
            Ok::<_, anyhow::Error>(())
        })
        .buffer_unordered(CREATE_CONCURRENCY)
        .try_collect::<()>()
        .await
}

/// Syncs a manager's cache of Secrets in `namespace`, watched with `selector`, and
/// measures it while the manager holds it.
async fn cache_figures(
    client: &Client,
    namespace: &str,
    selector: Option<&str>,
) -> Result<CacheFigures> {
    let rss_before = settled_rss_kib()?;
    let manager = Manager::new(
        client.clone(),
        ManagerArgs {
            namespaces: vec![namespace.to_owned()],
            ..ManagerArgs::default()
        },
    );
    if let Some(selector) = selector {
        manager
            .cache()
            .by_object::<Secret>(ByObject::default().labels(selector)?)?;
    }
    let started = Instant::now();
    let cached = synced_secrets(&manager).await?;
    let synced_in = started.elapsed();
    let objects = cached.len();
    // What the cache keeps of each: its JSON, as the reader decoded it from.
    let json_bytes = cached
        .iter()
        .map(|secret| serde_json::to_vec(secret.as_ref()).map(|json| json.len()))
        .sum::<Result<usize, _>>()?;
    // The decoded copies are the reader's, not the cache's.
    drop(cached);
    let rss_after = settled_rss_kib()?;
    drop(manager);
    Ok(CacheFigures {
        watch: selector.map_or("unfiltered".to_owned(), |selector| {
            format!("labels `{selector}`")
        }),
        objects,
        json_bytes,
        synced_in,
        rss_growth_kib: i64::try_from(rss_after)? - i64::try_from(rss_before)?,
    })
}

/// Every cached Secret, once the cache has synced (waiting out several sync timeouts).
async fn synced_secrets(manager: &Manager) -> Result<Vec<std::sync::Arc<Secret>>> {
    for _ in 0..SYNC_ATTEMPTS {
        match manager
            .cache()
            .list::<Secret>(&ListOptions::default())
            .await
        {
            Err(CacheError::NotSynced {
                last_error: None, ..
            }) => {}
            other => return Ok(other?),
        }
    }
    bail!("the cache of Secrets has not synced after {SYNC_ATTEMPTS} read timeouts")
}

/// This process's RSS after giving the heap's free memory back to the system.
fn settled_rss_kib() -> Result<u64> {
    // SAFETY: glibc's malloc_trim only releases free memory of the heap; it touches no
    // live allocation.
    unsafe { libc::malloc_trim(0) };
    process::memory_of(std::process::id())
        .map(|(rss_kib, _)| rss_kib)
        .context("cannot read this process's memory from /proc")
}

fn table(secrets: usize, figures: &[CacheFigures]) -> String {
    let mut table = format!(
        "\n## The cache of Secrets among {secrets} Secrets labelled app=other\n\n\
         | watch | objects cached | their JSON | first list | RSS growth |\n\
         |---|---:|---:|---:|---:|\n"
    );
    for figure in figures {
        table += &format!(
            "| {} | {} | {:.1} KiB | {:.2?} | {} KiB |\n",
            figure.watch,
            figure.objects,
            figure.json_bytes as f64 / 1024.0,
            figure.synced_in,
            figure.rss_growth_kib
        );
    }
    table
}

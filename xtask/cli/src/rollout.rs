//! Waiting for the Deployments `deploy` applied to roll out (kubectl's `rollout status`),
//! failing at once, with the reason and the container's log, when a pod cannot start: an
//! image the node does not have, a crash loop, a bad container configuration.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ListParams, LogParams};
use kube::{Api, Client};
use serde_json::Value;

/// Waiting reasons after which a pod will not start without a change by the user.
const HOPELESS: [&str; 7] = [
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
];

/// Waits until every Deployment among `objects` has all its replicas updated and available.
pub async fn wait(client: &Client, objects: &[Value], timeout: Duration) -> Result<()> {
    for object in objects.iter().filter(|o| o["kind"] == "Deployment") {
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = object["metadata"]["namespace"]
            .as_str()
            .unwrap_or(client.default_namespace());
        wait_for_deployment(client, namespace, name, timeout).await?;
    }
    Ok(())
}

async fn wait_for_deployment(
    client: &Client,
    namespace: &str,
    name: &str,
    timeout: Duration,
) -> Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + timeout;
    loop {
        let deployment = deployments.get(name).await?;
        if let Some(available) = rolled_out(&deployment) {
            println!("deployment.apps/{name} rolled out ({available} available)");
            return Ok(());
        }
        // Only the current revision's pods: a previous one's (an image that failed before)
        // are on their way out.
        let selector = match current_template_hash(&replica_sets, &deployment).await? {
            Some(hash) => format!("{},pod-template-hash={hash}", selector_of(&deployment)),
            None => selector_of(&deployment),
        };
        let pod_list = pods.list(&ListParams::default().labels(&selector)).await?;
        for pod in &pod_list {
            if let Some(problem) = hopeless(pod) {
                let pod_name = pod.metadata.name.clone().unwrap_or_default();
                let log = container_log(&pods, &pod_name).await;
                bail!(
                    "deployment.apps/{name} cannot roll out: pod {pod_name}: {problem}{}{log}",
                    image_hint(&problem)
                );
            }
        }
        if Instant::now() > deadline {
            let states: Vec<String> = pod_list.iter().map(describe).collect();
            bail!(
                "deployment.apps/{name} did not roll out within {timeout:?}; its pods: {}",
                if states.is_empty() {
                    "none".to_owned()
                } else {
                    states.join("; ")
                }
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `ready/wanted` when the Deployment's current generation is fully rolled out.
fn rolled_out(deployment: &Deployment) -> Option<String> {
    let wanted = deployment.spec.replicas.unwrap_or(1);
    let status = deployment.status.as_ref()?;
    let current = status.observed_generation >= deployment.metadata.generation;
    let updated = status.updated_replicas.unwrap_or(0) == wanted;
    let available = status.available_replicas.unwrap_or(0) == wanted;
    let no_old = status.replicas.unwrap_or(0) == wanted;
    (current && updated && available && no_old).then(|| format!("{wanted}/{wanted}"))
}

/// The `pod-template-hash` of the Deployment's current ReplicaSet (the one of its revision).
async fn current_template_hash(
    replica_sets: &Api<ReplicaSet>,
    deployment: &Deployment,
) -> Result<Option<String>> {
    const REVISION: &str = "deployment.kubernetes.io/revision";
    let Some(revision) = deployment
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(REVISION))
    else {
        return Ok(None);
    };
    let list = replica_sets
        .list(&ListParams::default().labels(&selector_of(deployment)))
        .await?;
    Ok(list.items.into_iter().find_map(|set| {
        let annotations = set.metadata.annotations.as_ref()?;
        (annotations.get(REVISION) == Some(revision))
            .then(|| {
                set.metadata
                    .labels
                    .as_ref()?
                    .get("pod-template-hash")
                    .cloned()
            })
            .flatten()
    }))
}

fn selector_of(deployment: &Deployment) -> String {
    deployment
        .spec
        .selector
        .match_labels
        .as_ref()
        .map(|labels| {
            labels
                .iter()
                .map(|(key, value)| format!("{key}={value}"))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// `container: Reason: message` when a container of `pod` waits for a reason in [`HOPELESS`].
fn hopeless(pod: &Pod) -> Option<String> {
    let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
    statuses.iter().find_map(|status| {
        let waiting = status.state.as_ref()?.waiting.as_ref()?;
        let reason = waiting.reason.as_deref()?;
        HOPELESS.contains(&reason).then(|| {
            format!(
                "container {}: {reason}: {}",
                status.name,
                waiting.message.as_deref().unwrap_or("(no message)")
            )
        })
    })
}

fn image_hint(problem: &str) -> &'static str {
    if problem.contains("Image") {
        " (on the local node, images come from `cargo xtask docker-build --image IMG` and \
         `cargo xtask cluster load IMG`; nothing is pulled)"
    } else {
        ""
    }
}

/// The end of the pod's log (the previous container's, after a crash), as a suffix.
async fn container_log(pods: &Api<Pod>, name: &str) -> String {
    for previous in [true, false] {
        let params = LogParams {
            previous,
            tail_lines: Some(20),
            ..LogParams::default()
        };
        if let Ok(log) = pods.logs(name, &params).await
            && !log.trim().is_empty()
        {
            return format!("\nits log ends with:\n{}", log.trim_end());
        }
    }
    String::new()
}

/// `name: phase (container waiting: reason)`, for the timeout message.
fn describe(pod: &Pod) -> String {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let status = pod.status.as_ref();
    let phase = status.and_then(|s| s.phase.as_deref()).unwrap_or("Unknown");
    let waiting: Vec<String> = status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let waiting = c.state.as_ref()?.waiting.as_ref()?;
            Some(format!(
                "{} waiting: {}",
                c.name,
                waiting.reason.as_deref().unwrap_or("?")
            ))
        })
        .collect();
    if waiting.is_empty() {
        format!("{name}: {phase}")
    } else {
        format!("{name}: {phase} ({})", waiting.join(", "))
    }
}

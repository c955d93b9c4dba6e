//! `cargo xtask install|uninstall|deploy|undeploy`: the Makefile targets of the same names,
//! applied to the cluster of the current kubeconfig with server-side apply through
//! kube-rs. No kubectl or kustomize binary is needed (the kustomizations are rendered by
//! `kustomize.rs`), and server-side apply has no last-applied annotation, whose 256 KiB
//! limit large CRDs exceed with client-side apply.
//!
//! Objects go in kustomize's order (namespaces, CRDs, RBAC, ..., webhook configurations
//! last); CRDs are applied first and waited for until Established, so that objects of
//! their kinds can follow. Every object gets one line: `created`, `configured` or
//! `unchanged` (its resourceVersion before and after the apply are equal: the apiserver
//! wrote nothing). Deletion goes in the reverse order and waits for each object to go.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiCapabilities, ApiResource, Scope};
use kube::{Api, Client};
use serde_json::Value;

use crate::kustomize::{self, Overrides};
use crate::rollout;

/// The field manager of everything `cargo xtask` applies.
const FIELD_MANAGER: &str = "cargo-xtask";

/// How long CRDs may take to become Established, and objects to go when deleted.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The options of `cargo xtask deploy` (kubebuilder's `make deploy IMG=...`).
#[derive(clap::Args)]
pub struct DeployArgs {
    /// The manager image (replaces the `controller` image of config/manager).
    #[arg(long)]
    pub image: Option<String>,
    /// The kustomization to deploy, relative to the workspace root.
    #[arg(long, default_value = "config/default")]
    pub dir: PathBuf,
    /// Return once applied, without waiting for the Deployments to roll out.
    #[arg(long)]
    pub no_wait: bool,
    /// How long to wait for the Deployments to roll out, in seconds.
    #[arg(long, default_value_t = 180)]
    pub timeout: u64,
}

/// The options of `cargo xtask undeploy` (kubebuilder's `make undeploy`).
#[derive(clap::Args)]
pub struct UndeployArgs {
    /// The kustomization to remove, relative to the workspace root.
    #[arg(long, default_value = "config/default")]
    pub dir: PathBuf,
}

/// The kustomization holding the CRDs.
const CRD_DIR: &str = "config/crd";

/// `make install`: applies the CRDs of config/crd and waits until they are Established.
pub fn install() -> Result<()> {
    let objects = kustomize::build(
        &kustomize::in_workspace(CRD_DIR.as_ref()),
        &Overrides::default(),
    )?;
    run(apply_all(objects))
}

/// `make uninstall`: deletes the CRDs of config/crd (and so every object of their kinds),
/// waiting for each to go.
pub fn uninstall() -> Result<()> {
    let objects = kustomize::build(
        &kustomize::in_workspace(CRD_DIR.as_ref()),
        &Overrides::default(),
    )?;
    run(delete_all(objects))
}

/// `make deploy`: applies every object of the kustomization, with the manager image
/// replaced when one is given, then waits for its Deployments to roll out unless `--no-wait`.
pub fn deploy(args: DeployArgs) -> Result<()> {
    let overrides = Overrides::manager_image(args.image.as_deref());
    let objects = kustomize::build(&kustomize::in_workspace(&args.dir), &overrides)?;
    run(async {
        let client = connect().await?;
        apply_objects(&client, objects.clone()).await?;
        if args.no_wait {
            return Ok(());
        }
        rollout::wait(&client, &objects, Duration::from_secs(args.timeout)).await
    })
}

/// `make undeploy`: deletes every object of the kustomization, in reverse order, waiting
/// for each to go.
pub fn undeploy(args: UndeployArgs) -> Result<()> {
    let objects = kustomize::build(&kustomize::in_workspace(&args.dir), &Overrides::default())?;
    run(delete_all(objects))
}

fn run(work: impl Future<Output = Result<()>>) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(work)
}

/// A client for the current kubeconfig, checked to reach its apiserver.
async fn connect() -> Result<Client> {
    let config = kube::Config::infer()
        .await
        .context("no cluster configured: set KUBECONFIG or write ~/.kube/config")?;
    let url = config.cluster_url.clone();
    let client = Client::try_from(config)?;
    client
        .apiserver_version()
        .await
        .map_err(|error| anyhow!("cannot reach the cluster at {url}: {error}"))?;
    Ok(client)
}

/// `kind.group/name`, as kubectl names objects in its output.
fn display(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or_default().to_lowercase();
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match api_version.rsplit_once('/') {
        Some((group, _)) => format!("{kind}.{group}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

fn gvk(object: &Value) -> GroupVersionKind {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    GroupVersionKind::gvk(group, version, object["kind"].as_str().unwrap_or_default())
}

fn is_crd(object: &Value) -> bool {
    object["kind"] == "CustomResourceDefinition"
}

/// The API of each kind, discovered once.
struct Apis {
    client: Client,
    known: HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)>,
    /// Groups of the CRDs applied in this run: their kinds may take a moment to be served.
    new_groups: Vec<String>,
}

impl Apis {
    async fn for_object(&mut self, object: &Value) -> Result<Api<DynamicObject>> {
        let gvk = gvk(object);
        if !self.known.contains_key(&gvk) {
            let resolved = self.discover(&gvk).await?;
            self.known.insert(gvk.clone(), resolved);
        }
        let (resource, capabilities) = &self.known[&gvk];
        Ok(match capabilities.scope {
            Scope::Cluster => Api::all_with(self.client.clone(), resource),
            Scope::Namespaced => {
                let namespace = object["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or(self.client.default_namespace());
                Api::namespaced_with(self.client.clone(), namespace, resource)
            }
        })
    }

    async fn discover(&self, gvk: &GroupVersionKind) -> Result<(ApiResource, ApiCapabilities)> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match kube::discovery::pinned_kind(&self.client, gvk).await {
                Ok(resolved) => return Ok(resolved),
                Err(_) if self.new_groups.contains(&gvk.group) && Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(error) => {
                    return Err(anyhow!(
                        "the cluster does not serve {}/{} {} (are its CRDs installed?): {error}",
                        gvk.group,
                        gvk.version,
                        gvk.kind
                    ));
                }
            }
        }
    }
}

/// Server-side applies every object, CRDs first (waited for until Established). Refused
/// objects are reported and the rest still applied; any refusal fails the command.
async fn apply_all(objects: Vec<Value>) -> Result<()> {
    apply_objects(&connect().await?, objects).await
}

/// Applies `objects` (see [`apply_all`]) with `client`.
async fn apply_objects(client: &Client, objects: Vec<Value>) -> Result<()> {
    let (crds, others): (Vec<Value>, Vec<Value>) = objects.into_iter().partition(is_crd);
    let mut apis = Apis {
        client: client.clone(),
        known: HashMap::new(),
        new_groups: crds
            .iter()
            .filter_map(|crd| crd["spec"]["group"].as_str().map(str::to_owned))
            .collect(),
    };
    check_kinds_served(client, &crds, &others).await?;
    let mut failures = Vec::new();
    let mut applied_crds = Vec::new();
    for crd in &crds {
        match apply(&mut apis, crd).await {
            Ok(()) => applied_crds.push(crd),
            Err(error) => failures.push(format!("{}: {error:#}", display(crd))),
        }
    }
    let crd_api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in applied_crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        kubebuilder_envtest::wait_established(&crd_api, name, TIMEOUT)
            .await
            .with_context(|| format!("waiting for {} to be Established", display(crd)))?;
    }
    for object in &others {
        if let Err(error) = apply(&mut apis, object).await {
            failures.push(format!("{}: {error:#}", display(object)));
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} object(s) not applied:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(())
}

/// Where the kinds a bundle may use without defining them come from: the API group, the
/// component that serves it, and how to install that component.
const PROVIDERS: [(&str, &str, &str); 2] = [
    (
        "cert-manager.io",
        "cert-manager",
        "on the local node: `cargo xtask cluster up --cert-manager`; on another cluster: \
         https://cert-manager.io/docs/installation/",
    ),
    (
        "monitoring.coreos.com",
        "the Prometheus Operator",
        "https://prometheus-operator.dev/docs/getting-started/installation/, or leave \
         ../prometheus out of config/default",
    ),
];

/// Fails, before anything is applied, when the bundle holds objects of kinds that neither
/// the cluster serves nor the bundle's own CRDs define, naming the component to install.
async fn check_kinds_served(client: &Client, crds: &[Value], others: &[Value]) -> Result<()> {
    let defined: Vec<(String, String)> = crds
        .iter()
        .filter_map(|crd| {
            let spec = &crd["spec"];
            Some((
                spec["group"].as_str()?.to_owned(),
                spec["names"]["kind"].as_str()?.to_owned(),
            ))
        })
        .collect();
    let mut missing: Vec<(GroupVersionKind, Vec<String>)> = Vec::new();
    for object in others {
        let gvk = gvk(object);
        if defined
            .iter()
            .any(|(group, kind)| *group == gvk.group && *kind == gvk.kind)
        {
            continue;
        }
        if let Some((_, names)) = missing.iter_mut().find(|(known, _)| *known == gvk) {
            names.push(display(object));
            continue;
        }
        if kube::discovery::pinned_kind(client, &gvk).await.is_err() {
            missing.push((gvk, vec![display(object)]));
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = missing
        .iter()
        .map(|(gvk, names)| {
            let api = if gvk.group.is_empty() {
                gvk.version.clone()
            } else {
                format!("{}/{}", gvk.group, gvk.version)
            };
            let provider = PROVIDERS
                .iter()
                .find(|(group, _, _)| *group == gvk.group)
                .map(|(_, component, how)| format!(": install {component} ({how})"))
                .unwrap_or_default();
            format!("{api} {} (for {}){provider}", gvk.kind, names.join(", "))
        })
        .collect();
    bail!(
        "nothing was applied: the cluster does not serve\n  {}",
        lines.join("\n  ")
    )
}

/// What an apply did to an object.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Created,
    Configured,
    Unchanged,
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Outcome::Created => "created",
            Outcome::Configured => "configured",
            Outcome::Unchanged => "unchanged",
        })
    }
}

impl Outcome {
    fn of(before: Option<String>, after: Option<String>) -> Outcome {
        match before {
            None => Outcome::Created,
            Some(before) if Some(&before) == after.as_ref() => Outcome::Unchanged,
            Some(_) => Outcome::Configured,
        }
    }
}

async fn apply(apis: &mut Apis, object: &Value) -> Result<()> {
    let api = apis.for_object(object).await?;
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let before = api
        .get_opt(name)
        .await
        .map_err(refusal)?
        .and_then(|existing| existing.metadata.resource_version);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let applied = api
        .patch(name, &params, &Patch::Apply(object))
        .await
        .map_err(refusal)?;
    let outcome = Outcome::of(before, applied.metadata.resource_version);
    println!("{} {outcome}", display(object));
    Ok(())
}

/// The apiserver's own words when it refuses a request.
fn refusal(error: kube::Error) -> anyhow::Error {
    match error {
        kube::Error::Api(status) => anyhow!(
            "refused ({} {}): {}",
            status.code,
            status.reason,
            status.message
        ),
        other => anyhow!(other),
    }
}

/// Deletes every object, in the reverse of the apply order, each waited for until gone.
/// Objects already gone are reported as such; kinds the cluster no longer serves (their
/// CRD was deleted) have no objects left.
async fn delete_all(objects: Vec<Value>) -> Result<()> {
    let client = connect().await?;
    let mut apis = Apis {
        client,
        known: HashMap::new(),
        new_groups: Vec::new(),
    };
    let mut failures = Vec::new();
    for object in objects.iter().rev() {
        if let Err(error) = delete(&mut apis, object).await {
            failures.push(format!("{}: {error:#}", display(object)));
        }
    }
    if !failures.is_empty() {
        bail!(
            "{} object(s) not deleted:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(())
}

async fn delete(apis: &mut Apis, object: &Value) -> Result<()> {
    let Ok(api) = apis.for_object(object).await else {
        println!("{} not found (its kind is not served)", display(object));
        return Ok(());
    };
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match api.delete(name, &DeleteParams::background()).await {
        Err(kube::Error::Api(status)) if status.is_not_found() => {
            println!("{} not found", display(object));
            return Ok(());
        }
        Err(error) => return Err(refusal(error)),
        Ok(_) => {}
    }
    if object["kind"] == "Namespace" {
        // Emptying a namespace and removing it is the namespace controller's job (in
        // kube-controller-manager); once Terminating, it is on its way out.
        let namespaces: Api<Namespace> = Api::all(apis.client.clone());
        let phase = namespaces
            .get_opt(name)
            .await
            .map_err(refusal)?
            .and_then(|namespace| namespace.status.and_then(|status| status.phase));
        match phase.as_deref() {
            Some(phase) => println!("{} deleted ({phase})", display(object)),
            None => println!("{} deleted", display(object)),
        }
        return Ok(());
    }
    let deadline = Instant::now() + TIMEOUT;
    while api.get_opt(name).await.map_err(refusal)?.is_some() {
        if Instant::now() > deadline {
            bail!("still present {TIMEOUT:?} after its deletion (finalizers?)");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!("{} deleted", display(object));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn outcomes_compare_resource_versions() {
        assert_eq!(Outcome::of(None, Some("1".into())), Outcome::Created);
        assert_eq!(
            Outcome::of(Some("1".into()), Some("1".into())),
            Outcome::Unchanged
        );
        assert_eq!(
            Outcome::of(Some("1".into()), Some("2".into())),
            Outcome::Configured
        );
    }

    #[test]
    fn objects_are_named_as_kubectl_names_them() {
        let deployment =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        assert_eq!(display(&deployment), "deployment.apps/d");
        let account =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}});
        assert_eq!(display(&account), "serviceaccount/sa");
    }
}

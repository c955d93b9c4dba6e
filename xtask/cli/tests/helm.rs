//! `cargo xtask helm` checked with the real helm (`$HELM`, which `cargo xtask test` installs):
//! the chart lints clean; with default values it renders what `build-installer` writes, but
//! for the differences `src/helm_differences.md` lists; its values switch what they name;
//! `helm install` puts it on a real control plane; a regeneration keeps the user's values
//! and refuses to overwrite edited templates; and a project fresh from `init` gets a chart
//! as well, whose names fit 63 characters for any release name and whose values switch only
//! what it has. helm runs with its cache, config and data homes in a directory of its own, so
//! it knows no repository and downloads nothing.

mod common;

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject};
use kube::core::GroupVersionKind;
use kubebuilder_cli::Command;
use kubebuilder_cli::helm::{self, Args};
use kubebuilder_cli::kustomize::{self, Overrides};
use kubebuilder_cli::scaffold::{self, create_in, init};
use kubebuilder_envtest::ControlPlane;
use serde_json::{Value, json};

use common::{copy_tree, create_command, objects, parse, repo_root, snapshot};

/// helm itself, which `cargo xtask test` installs.
fn helm_binary() -> PathBuf {
    std::env::var_os("HELM")
        .expect("HELM must name helm v4 (`cargo xtask test` installs it and sets it)")
        .into()
}

/// `helm <args>`, which must succeed; its stdout.
fn helm<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> String {
    let home = tempfile::tempdir().unwrap();
    let mut command = Process::new(helm_binary());
    command
        .args(args)
        .env("HELM_CACHE_HOME", home.path().join("cache"))
        .env("HELM_CONFIG_HOME", home.path().join("config"))
        .env("HELM_DATA_HOME", home.path().join("data"))
        .env_remove("KUBECONFIG");
    let output = command.output().expect("running helm");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `cargo xtask helm` for the project at `root`, writing the chart to `chart`.
fn generate(root: &Path, chart: &Path) -> anyhow::Result<String> {
    helm::generate(
        root,
        &Args {
            dir: "config/default".into(),
            output: chart.to_owned(),
            force: false,
        },
    )
}

/// A chart of this repository in a temporary directory (`<dir>/chart`).
fn repo_chart() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart");
    generate(&repo_root(), &chart).unwrap();
    (dir, chart)
}

/// A project of this repository's PROJECT and config/ in a temporary directory, to change.
fn project_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(repo_root().join("PROJECT"), dir.path().join("PROJECT")).unwrap();
    copy_tree(&repo_root().join("config"), &dir.path().join("config"), &[]);
    dir
}

/// `helm template <release> <chart> --namespace <namespace> --set <set>...`'s objects.
fn template(chart: &Path, release: &str, namespace: &str, sets: &[&str]) -> Vec<Value> {
    let mut args: Vec<&OsStr> = vec!["template".as_ref(), release.as_ref(), chart.as_ref()];
    args.extend(["--namespace", namespace].map(OsStr::new));
    for set in sets {
        args.extend(["--set", set].map(OsStr::new));
    }
    serde_saphyr::from_multiple::<Value>(&helm(args))
        .unwrap()
        .into_iter()
        .filter(|object| !object.is_null())
        .collect()
}

/// `(kind, name)` of every object.
fn identities(objects: &[Value]) -> Vec<(String, String)> {
    let mut identities: Vec<_> = objects
        .iter()
        .map(|o| {
            let field = |value: &Value| value.as_str().unwrap().to_owned();
            (field(&o["kind"]), field(&o["metadata"]["name"]))
        })
        .collect();
    identities.sort();
    identities
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

// ---------------------------------------------------------------------------------------
// The differences list.
// ---------------------------------------------------------------------------------------

/// One row of `src/helm_differences.md`: a field (or `.`, the object) of a kind (or `*`).
struct Difference {
    kind: String,
    field: Vec<String>,
}

fn differences() -> Vec<Difference> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/helm_differences.md");
    let rows: Vec<Difference> = fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line
                .split('|')
                .map(|c| c.trim().trim_matches('`'))
                .collect();
            Difference {
                kind: cells[1].to_owned(),
                field: field_path(cells[2]),
            }
        })
        .collect();
    assert!(!rows.is_empty(), "helm_differences.md lists no difference");
    rows
}

/// `metadata.labels.[helm.sh/chart]` as its keys; `.` as none (the whole object).
fn field_path(field: &str) -> Vec<String> {
    if field == "." {
        return Vec::new();
    }
    let mut keys = Vec::new();
    let mut rest = field;
    while !rest.is_empty() {
        let (key, after) = match rest.strip_prefix('[') {
            Some(bracketed) => bracketed.split_once(']').expect("a closing bracket"),
            None => rest.split_once('.').map_or((rest, ""), |(k, r)| (k, r)),
        };
        keys.push(key.to_owned());
        rest = after.strip_prefix('.').unwrap_or(after);
    }
    keys
}

/// Removes the field at `path`, and the mappings it leaves empty; whether it was there.
fn remove(value: &mut Value, path: &[String]) -> bool {
    let Some((key, rest)) = path.split_first() else {
        return false;
    };
    let Some(map) = value.as_object_mut() else {
        return false;
    };
    let removed = if rest.is_empty() {
        map.remove(key).is_some()
    } else {
        map.get_mut(key).is_some_and(|child| remove(child, rest))
    };
    if map.get(key).is_some_and(|child| child == &json!({})) {
        map.remove(key);
    }
    removed
}

/// `objects` without the listed differences; marks in `seen` the rows that matched.
fn strip(objects: Vec<Value>, differences: &[Difference], seen: &mut [bool]) -> String {
    let mut kept = Vec::new();
    'objects: for mut object in objects {
        for (row, difference) in differences.iter().enumerate() {
            if difference.kind != "*" && object["kind"] != difference.kind.as_str() {
                continue;
            }
            if difference.field.is_empty() {
                seen[row] = true;
                continue 'objects;
            }
            seen[row] |= remove(&mut object, &difference.field);
        }
        kept.push(object);
    }
    kubebuilder::yaml::to_documents(&kept)
}

/// The chart of the project at `root`, rendered as release `project_name` in
/// `<project_name>-system`, against what `build-installer` renders of its config/default;
/// which rows of the differences list matched.
fn assert_chart_renders_the_installer(
    root: &Path,
    chart: &Path,
    project_name: &str,
) -> Vec<(Difference, bool)> {
    let installer = kustomize::build(&root.join("config/default"), &Overrides::default()).unwrap();
    let namespace = format!("{project_name}-system");
    let rendered = template(chart, project_name, &namespace, &[]);
    let differences = differences();
    let mut seen = vec![false; differences.len()];
    let ours = objects(&strip(installer, &differences, &mut seen));
    let theirs = objects(&strip(rendered, &differences, &mut seen));
    let only_installer: Vec<_> = ours.difference(&theirs).collect();
    let only_chart: Vec<_> = theirs.difference(&ours).collect();
    assert!(
        only_installer.is_empty() && only_chart.is_empty(),
        "chart and installer differ beyond helm_differences.md\nonly in the installer: \
         {only_installer:#?}\nonly in the chart: {only_chart:#?}"
    );
    differences.into_iter().zip(seen).collect()
}

// ---------------------------------------------------------------------------------------
// The tests.
// ---------------------------------------------------------------------------------------

/// `helm lint` output has no warning or error; the one note allowed is that the chart has
/// no icon (the project has none to give it).
fn assert_lints_clean(chart: &Path, sets: &[&str]) {
    let mut args: Vec<&OsStr> = vec!["lint".as_ref(), chart.as_ref()];
    for set in sets {
        args.extend(["--set", set].map(OsStr::new));
    }
    let output = helm(args);
    let findings: Vec<&str> = output
        .lines()
        .filter(|line| line.starts_with('['))
        .filter(|line| *line != "[INFO] Chart.yaml: icon is recommended")
        .collect();
    assert!(findings.is_empty(), "helm lint {sets:?}:\n{output}");
    assert!(
        output.contains("1 chart(s) linted, 0 chart(s) failed"),
        "{output}"
    );
}

#[test]
fn the_chart_lints_clean_with_every_switch_either_way() {
    let (_dir, chart) = repo_chart();
    assert_lints_clean(&chart, &[]);
    for set in [
        "webhook.enabled=false",
        "metrics.enabled=false",
        "certManager.enabled=false",
        "leaderElection.enabled=false",
        "prometheus.enabled=true",
        "networkPolicy.enabled=true",
        "crd.keep=false",
    ] {
        assert_lints_clean(&chart, &[set]);
    }
}

#[test]
fn default_values_render_what_build_installer_writes() {
    let (_dir, chart) = repo_chart();
    for (difference, seen) in assert_chart_renders_the_installer(&repo_root(), &chart, "project") {
        assert!(
            seen,
            "helm_differences.md lists `{}` of {}, which neither rendering has",
            difference.field.join("."),
            difference.kind
        );
    }
}

#[test]
fn the_chart_is_the_same_every_run() {
    let (first, second) = (repo_chart(), repo_chart());
    assert_eq!(snapshot(&first.1), snapshot(&second.1));
}

#[test]
fn webhooks_off_remove_their_objects_flags_and_the_crds_conversion() {
    let (_dir, chart) = repo_chart();
    let objects = template(
        &chart,
        "project",
        "project-system",
        &["webhook.enabled=false"],
    );
    let kinds = identities(&objects);
    for (kind, name) in [
        (
            "MutatingWebhookConfiguration",
            "project-mutating-webhook-configuration",
        ),
        (
            "ValidatingWebhookConfiguration",
            "project-validating-webhook-configuration",
        ),
        ("Service", "project-webhook-service"),
        ("Certificate", "project-serving-cert"),
    ] {
        assert!(
            !kinds.contains(&(kind.into(), name.into())),
            "{kind} {name} left"
        );
    }
    let crd = find(
        &objects,
        "CustomResourceDefinition",
        "cronjobs.batch.tutorial.kubebuilder.io",
    )
    .unwrap();
    assert_eq!(crd["spec"]["conversion"], Value::Null);
    assert_eq!(
        crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        Value::Null
    );
    let manager = &find(&objects, "Deployment", "project-controller-manager").unwrap()["spec"]["template"]
        ["spec"];
    let container = &manager["containers"][0];
    let webhook_args: Vec<&str> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .filter(|arg| arg.starts_with("--webhook-"))
        .collect();
    assert_eq!(webhook_args, ["--webhook-port=-1"]);
    assert_eq!(container["env"], Value::Null);
    assert_eq!(container["ports"], Value::Null);
    assert_eq!(
        manager["volumes"].as_array().unwrap().len(),
        1,
        "metrics-certs only"
    );
    // The metrics certificate and its Issuer stay.
    assert!(find(&objects, "Certificate", "project-metrics-certs").is_some());
    assert!(find(&objects, "Issuer", "project-selfsigned-issuer").is_some());
}

#[test]
fn metrics_cert_manager_and_leader_election_switch_their_objects() {
    let (_dir, chart) = repo_chart();
    let args_of = |objects: &[Value]| -> Vec<String> {
        let deployment = find(objects, "Deployment", "project-controller-manager").unwrap();
        serde_json::from_value(
            deployment["spec"]["template"]["spec"]["containers"][0]["args"].clone(),
        )
        .unwrap()
    };

    let objects = template(
        &chart,
        "project",
        "project-system",
        &["metrics.enabled=false"],
    );
    for (kind, name) in [
        ("Service", "project-controller-manager-metrics-service"),
        ("ClusterRole", "project-metrics-auth-role"),
        ("ClusterRoleBinding", "project-metrics-auth-rolebinding"),
        ("ClusterRole", "project-metrics-reader"),
        ("Certificate", "project-metrics-certs"),
    ] {
        assert!(find(&objects, kind, name).is_none(), "{kind} {name} left");
    }
    assert!(
        args_of(&objects)
            .iter()
            .all(|arg| !arg.starts_with("--metrics-"))
    );

    let objects = template(
        &chart,
        "project",
        "project-system",
        &["certManager.enabled=false"],
    );
    assert!(
        objects
            .iter()
            .all(|o| o["kind"] != "Certificate" && o["kind"] != "Issuer")
    );
    assert!(!helm_text(&objects).contains("inject-ca-from"));
    assert!(
        !args_of(&objects)
            .contains(&"--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs".into())
    );
    assert!(
        args_of(&objects)
            .contains(&"--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs".into())
    );

    let objects = template(
        &chart,
        "project",
        "project-system",
        &["leaderElection.enabled=false"],
    );
    assert!(find(&objects, "Role", "project-leader-election-role").is_none());
    assert!(
        find(
            &objects,
            "RoleBinding",
            "project-leader-election-rolebinding"
        )
        .is_none()
    );
    assert!(!args_of(&objects).contains(&"--leader-elect".into()));
}

fn helm_text(objects: &[Value]) -> String {
    serde_json::to_string(objects).unwrap()
}

#[test]
fn the_components_config_default_leaves_out_come_switched_off() {
    let (_dir, chart) = repo_chart();
    let default = template(&chart, "project", "project-system", &[]);
    assert!(
        default
            .iter()
            .all(|o| o["kind"] != "ServiceMonitor" && o["kind"] != "NetworkPolicy")
    );

    let objects = template(
        &chart,
        "project",
        "project-system",
        &["prometheus.enabled=true"],
    );
    let monitor = find(
        &objects,
        "ServiceMonitor",
        "project-controller-manager-metrics-monitor",
    )
    .expect("the ServiceMonitor of config/prometheus");
    assert_eq!(monitor["metadata"]["namespace"], "project-system");
    let sets = ["prometheus.enabled=true", "metrics.enabled=false"];
    let objects = template(&chart, "project", "project-system", &sets);
    assert!(
        objects.iter().all(|o| o["kind"] != "ServiceMonitor"),
        "no metrics, no monitor"
    );

    let objects = template(
        &chart,
        "project",
        "project-system",
        &["networkPolicy.enabled=true"],
    );
    assert!(find(&objects, "NetworkPolicy", "project-allow-metrics-traffic").is_some());
    assert!(find(&objects, "NetworkPolicy", "project-allow-webhook-traffic").is_some());
}

#[test]
fn the_managers_values_and_the_release_set_what_they_name() {
    let (_dir, chart) = repo_chart();
    let sets = [
        "manager.replicas=3",
        "manager.image.repository=registry.example.com/team/op",
        "manager.image.tag=v2.0.1",
        "manager.image.pullPolicy=Always",
        "manager.resources.limits.memory=1Gi",
        "crd.keep=false",
    ];
    let objects = template(&chart, "fleet", "operators", &sets);
    let deployment = find(&objects, "Deployment", "fleet-project-controller-manager").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "registry.example.com/team/op:v2.0.1");
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(container["resources"]["limits"]["memory"], "1Gi");
    assert_eq!(container["resources"]["requests"]["cpu"], "10m");
    // Every name carries the release's prefix and every reference follows it.
    let certificate = find(&objects, "Certificate", "fleet-project-serving-cert").unwrap();
    assert_eq!(
        certificate["spec"]["dnsNames"][0],
        "fleet-project-webhook-service.operators.svc"
    );
    let webhooks = find(
        &objects,
        "MutatingWebhookConfiguration",
        "fleet-project-mutating-webhook-configuration",
    )
    .unwrap();
    assert_eq!(
        webhooks["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "operators/fleet-project-serving-cert"
    );
    assert!(objects.iter().all(|o| {
        o["metadata"]["namespace"].is_null() || o["metadata"]["namespace"] == "operators"
    }));
    let crd = find(
        &objects,
        "CustomResourceDefinition",
        "cronjobs.batch.tutorial.kubebuilder.io",
    )
    .unwrap();
    assert_eq!(
        crd["metadata"]["annotations"]["helm.sh/resource-policy"],
        Value::Null
    );
    assert_eq!(
        crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"],
        json!({ "name": "fleet-project-webhook-service", "namespace": "operators", "path": "/convert" })
    );
}

/// Stand-ins for cert-manager's Certificate and Issuer CRDs (the kinds, unvalidated): the
/// chart's objects of those kinds need the kinds served, not cert-manager running.
fn cert_manager_crds() -> Vec<CustomResourceDefinition> {
    ["Certificate", "Issuer"]
        .iter()
        .map(|kind| {
            let plural = format!("{}s", kind.to_lowercase());
            serde_json::from_value(json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": { "name": format!("{plural}.cert-manager.io") },
                "spec": {
                    "group": "cert-manager.io",
                    "names": { "kind": kind, "listKind": format!("{kind}List"), "plural": plural,
                               "singular": kind.to_lowercase() },
                    "scope": "Namespaced",
                    "versions": [{ "name": "v1", "served": true, "storage": true,
                                   "schema": { "openAPIV3Schema": {
                                       "type": "object",
                                       "x-kubernetes-preserve-unknown-fields": true } } }],
                },
            }))
            .unwrap()
        })
        .collect()
}

/// The object as the apiserver has it, if it exists.
async fn get(client: &kube::Client, object: &Value) -> Option<DynamicObject> {
    let api_version = object["apiVersion"].as_str().unwrap();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, object["kind"].as_str().unwrap());
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk).await.ok()?;
    let api: Api<DynamicObject> = match capabilities.scope {
        kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &resource),
        kube::discovery::Scope::Namespaced => Api::namespaced_with(
            client.clone(),
            object["metadata"]["namespace"].as_str().unwrap(),
            &resource,
        ),
    };
    api.get_opt(object["metadata"]["name"].as_str().unwrap())
        .await
        .ok()
        .flatten()
}

#[test]
fn helm_installs_the_chart_on_a_control_plane() {
    let plane = ControlPlane::start().expect("a local control plane (KUBEBUILDER_ASSETS)");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime
        .block_on(plane.install_crds(&cert_manager_crds()))
        .unwrap();
    let (_dir, chart) = repo_chart();
    // No --wait: the control plane has no kubelet, so the manager's pod never runs.
    let mut args: Vec<&OsStr> = vec!["install".as_ref(), "project".as_ref(), chart.as_ref()];
    args.extend(
        [
            "--namespace",
            "project-system",
            "--create-namespace",
            "--kubeconfig",
        ]
        .map(OsStr::new),
    );
    args.push(plane.kubeconfig_path().as_os_str());
    let output = helm(args);
    assert!(output.contains("STATUS: deployed"), "{output}");

    let expected = template(&chart, "project", "project-system", &[]);
    let kinds: Vec<String> = identities(&expected)
        .into_iter()
        .map(|(kind, _)| kind)
        .collect();
    for kind in [
        "CustomResourceDefinition",
        "Deployment",
        "Certificate",
        "Issuer",
        "ValidatingWebhookConfiguration",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in {kinds:?}");
    }
    runtime.block_on(async {
        let client = plane.client().await.unwrap();
        for object in &expected {
            let created = get(&client, object).await;
            let created = created.unwrap_or_else(|| panic!("not created: {object:#}"));
            assert_eq!(
                created.metadata.labels.unwrap()["app.kubernetes.io/managed-by"],
                "Helm"
            );
        }
    });
}

#[test]
fn regeneration_keeps_the_users_values_and_adds_only_what_they_lack() {
    let project = project_copy();
    let chart = project.path().join("dist/chart");
    generate(project.path(), &chart).unwrap();
    let values = chart.join("values.yaml");
    let generated = fs::read_to_string(&values).unwrap();
    let edited = generated.replace("  replicas: 1\n", "  replicas: 3 # two spare\n");
    assert_ne!(edited, generated);
    fs::write(&values, &edited).unwrap();

    let summary = generate(project.path(), &chart).unwrap();
    assert!(summary.contains("values.yaml kept as it was"), "{summary}");
    assert_eq!(fs::read_to_string(&values).unwrap(), edited);
    let objects = template(&chart, "project", "project-system", &[]);
    let deployment = find(&objects, "Deployment", "project-controller-manager").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);

    // Keys the file lacks come back with their defaults; the rest stays as the user wrote it.
    let trimmed = edited
        .replace("    pullPolicy: IfNotPresent\n", "")
        .replace("crd:\n  keep: true\n", "");
    fs::write(&values, &trimmed).unwrap();
    let summary = generate(project.path(), &chart).unwrap();
    assert!(summary.contains("added the keys it lacked"), "{summary}");
    let merged = fs::read_to_string(&values).unwrap();
    assert!(merged.starts_with(&trimmed[..trimmed.find("  image:\n").unwrap()]));
    assert!(merged.contains("  replicas: 3 # two spare\n"));
    let merged: Value = serde_saphyr::from_str(&merged).unwrap();
    assert_eq!(merged["manager"]["image"]["pullPolicy"], "IfNotPresent");
    assert_eq!(merged["crd"]["keep"], true);
}

#[test]
fn a_value_of_the_wrong_shape_is_an_error_and_changes_nothing() {
    let project = project_copy();
    let chart = project.path().join("dist/chart");
    generate(project.path(), &chart).unwrap();
    let values = chart.join("values.yaml");
    let text = fs::read_to_string(&values).unwrap();
    fs::write(
        &values,
        text.replace("metrics:\n  enabled: true\n", "metrics: false\n"),
    )
    .unwrap();
    let before = snapshot(&chart);
    let error = generate(project.path(), &chart).unwrap_err().to_string();
    assert!(error.contains("`metrics` is false"), "{error}");
    assert_eq!(snapshot(&chart), before);
}

#[test]
fn an_edited_template_stops_regeneration_unless_forced() {
    let project = project_copy();
    let chart = project.path().join("dist/chart");
    generate(project.path(), &chart).unwrap();
    let role = chart.join("templates/rbac/manager-role.yaml");
    let generated = fs::read_to_string(&role).unwrap();
    fs::write(
        &role,
        generated.replace("- watch\n", "- watch\n- deletecollection\n"),
    )
    .unwrap();
    let own = chart.join("templates/extra/mine.yaml");
    fs::create_dir_all(own.parent().unwrap()).unwrap();
    fs::write(
        &own,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n",
    )
    .unwrap();

    // A kind's roles leave config/: their templates go, unless edited.
    let rbac = project.path().join("config/rbac/kustomization.yaml");
    let kustomization = fs::read_to_string(&rbac).unwrap();
    fs::write(
        &rbac,
        kustomization.replace("- cronjob_admin_role.yaml\n", ""),
    )
    .unwrap();
    let before = snapshot(&chart);
    let error = generate(project.path(), &chart).unwrap_err().to_string();
    assert!(
        error.contains("templates/rbac/manager-role.yaml (edited since"),
        "{error}"
    );
    assert!(!error.contains("mine.yaml"), "{error}");
    assert_eq!(snapshot(&chart), before, "nothing written");

    let forced = Args {
        dir: "config/default".into(),
        output: chart.clone(),
        force: true,
    };
    helm::generate(project.path(), &forced).unwrap();
    assert_eq!(fs::read_to_string(&role).unwrap(), generated);
    assert!(
        !chart
            .join("templates/rbac/cronjob-admin-role.yaml")
            .exists()
    );
    assert!(own.exists(), "a template of the user's own is left alone");
}

/// A project made by `init <root> --domain example.com`.
fn init_at(root: &Path) {
    let line = format!("init {} --domain example.com", root.display());
    let Command::Scaffold(scaffold::Command::Init(args)) = parse(&line) else {
        panic!("{line} is an init command");
    };
    init::plan(&args).unwrap().apply().unwrap();
}

#[test]
fn a_new_project_from_init_gets_a_chart_of_its_installer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("fleet");
    init_at(&root);
    let chart = root.join("dist/chart");
    generate(&root, &chart).unwrap();
    assert_lints_clean(&chart, &[]);
    assert_chart_renders_the_installer(&root, &chart, "fleet");
}

/// Every name fits 63 characters (a Service's name is a DNS label), and no two objects of a
/// kind share one.
fn assert_names_fit_and_differ(objects: &[Value]) {
    let identities = identities(objects);
    for (kind, name) in &identities {
        assert!(name.len() <= 63, "{kind} {name}: {} characters", name.len());
    }
    let mut distinct = identities.clone();
    distinct.dedup();
    assert_eq!(distinct, identities, "two objects of a kind share a name");
}

/// Every object a name refers to is one of `objects`: the manager's ServiceAccount, the
/// roles and subjects of the bindings, the webhooks' Service, the certificates' Issuer,
/// Services and the Certificate whose CA is injected.
fn assert_references_resolve(objects: &[Value], namespace: &str) {
    let exists = |kind: &str, name: &Value| {
        let name = name
            .as_str()
            .unwrap_or_else(|| panic!("a {kind}'s name: {name}"));
        assert!(find(objects, kind, name).is_some(), "no {kind} {name}");
    };
    for object in objects {
        let spec = &object["spec"];
        match object["kind"].as_str().unwrap() {
            "Deployment" => exists(
                "ServiceAccount",
                &spec["template"]["spec"]["serviceAccountName"],
            ),
            "RoleBinding" | "ClusterRoleBinding" => {
                exists(
                    object["roleRef"]["kind"].as_str().unwrap(),
                    &object["roleRef"]["name"],
                );
                for subject in object["subjects"].as_array().unwrap() {
                    exists("ServiceAccount", &subject["name"]);
                }
            }
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
                for webhook in object["webhooks"].as_array().unwrap() {
                    exists("Service", &webhook["clientConfig"]["service"]["name"]);
                }
                let injected = object["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
                    .as_str()
                    .unwrap();
                let certificate = injected.strip_prefix(&format!("{namespace}/")).unwrap();
                exists("Certificate", &json!(certificate));
            }
            "Certificate" => {
                exists("Issuer", &spec["issuerRef"]["name"]);
                let host = spec["dnsNames"][0].as_str().unwrap();
                let service = host.strip_suffix(&format!(".{namespace}.svc")).unwrap();
                exists("Service", &json!(service));
            }
            _ => {}
        }
    }
}

/// Helm's longest release names (53 characters), alike but for their last word.
const LONGEST_RELEASES: [&str; 2] = [
    "a-release-named-as-long-as-helm-allows-it-to-be-first",
    "a-release-named-as-long-as-helm-allows-it-to-be-other",
];

/// The chart, with every object it may hold, rendered as `release`.
fn everything(chart: &Path, release: &str) -> Vec<Value> {
    let sets = ["prometheus.enabled=true", "networkPolicy.enabled=true"];
    template(chart, release, "operators", &sets)
}

/// Rendered as a long release name and as each of the longest, every name fits and is its
/// kind's only one, and the references follow the names; two releases of the longest names
/// in one namespace share no name either (but the CRDs', which are not the release's).
fn assert_names_fit_any_release(chart: &Path) {
    assert!(LONGEST_RELEASES.iter().all(|release| release.len() == 53));
    for release in std::iter::once("test-release-memcached-operator").chain(LONGEST_RELEASES) {
        let objects = everything(chart, release);
        assert_names_fit_and_differ(&objects);
        assert_references_resolve(&objects, "operators");
    }
    let both: Vec<Value> = LONGEST_RELEASES
        .iter()
        .flat_map(|release| everything(chart, release))
        .filter(|object| object["kind"] != "CustomResourceDefinition")
        .collect();
    assert_names_fit_and_differ(&both);
}

/// The values of the chart's values.yaml.
fn values_of(chart: &Path) -> Value {
    serde_saphyr::from_str(&fs::read_to_string(chart.join("values.yaml")).unwrap()).unwrap()
}

#[test]
fn the_chart_of_a_project_switches_what_it_has_with_names_that_fit_any_release() {
    // kubebuilder's Getting Started operator, whose chart `helm lint` renders as release
    // `test-release`: names such as test-release-memcached-operator-controller-manager-...
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("memcached-operator");
    init_at(&root);
    let create = |line: &str| {
        create_in(&root, &create_command(line)).unwrap_or_else(|e| panic!("{line}: {e:#}"));
    };
    create("create api --group cache --version v1alpha1 --kind Memcached");
    let chart = root.join("dist/chart");
    generate(&root, &chart).unwrap();
    assert_lints_clean(&chart, &[]);
    let values = values_of(&chart);
    for switch in ["webhook", "certManager"] {
        assert_eq!(
            values[switch],
            Value::Null,
            "{switch} in values.yaml: {values:#}"
        );
    }
    assert_chart_renders_the_installer(&root, &chart, "memcached-operator");
    assert_names_fit_any_release(&chart);

    // Its first webhook brings the webhook Service and cert-manager, and their switches.
    create("create webhook --group cache --version v1alpha1 --kind Memcached --defaulting");
    generate(&root, &chart).unwrap();
    let values = values_of(&chart);
    for switch in ["webhook", "certManager"] {
        assert_eq!(values[switch]["enabled"], true, "{values:#}");
    }
    assert_lints_clean(&chart, &[]);
    assert_lints_clean(&chart, &["webhook.enabled=false"]);
    assert_chart_renders_the_installer(&root, &chart, "memcached-operator");
    assert_names_fit_any_release(&chart);
}

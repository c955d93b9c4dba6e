//! `cargo xtask create api` and `create webhook` run as a user runs them, in a copy of this
//! repository, then the result built and run against a real control plane: the scaffolded
//! reconciler records that it reconciled a Frigate (its `Available` condition), and the
//! apiserver calls the scaffolded webhooks (the defaulter fills in the example field, the
//! validator refuses an empty one with a 422 naming the field).
//!
//! Slow (it builds the copy; see `common` for how it shares the target directory):
//! `#[ignore]`d, and run by `cargo xtask test` in its last step.

mod common;

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kubebuilder_cli::run::{free_port, spawn_manager, stop_manager, wait_ready};
use serde_json::{Value, json};

use common::{
    artifacts_dir, cargo, cargo_ok, changed, copy_repo, scratch_dir, set_version, snapshot,
    with_placeholders,
};

const GROUP: &str = "ship.tutorial.kubebuilder.io";
const TIMEOUT: Duration = Duration::from_secs(60);

/// The copy is formatted, and the packages the scaffolds write are lint-clean (the rest of
/// the copy is this repository's, which its own test build lints).
fn assert_formatted_and_lint_clean(copy: &Path) {
    cargo_ok(copy, &["fmt", "--all", "--check"]);
    cargo_ok(
        copy,
        &[
            "clippy",
            "--package",
            "api",
            "--package",
            "controller",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    );
}

fn create(copy: &Path, what: &str, extra: &[&str]) {
    let mut args = vec![
        "xtask",
        "create",
        what,
        "--group",
        "ship",
        "--version",
        "v1beta1",
        "--kind",
        "Frigate",
    ];
    args.extend_from_slice(extra);
    cargo_ok(copy, &args);
}

/// Every `Cargo.toml` under `root`.
fn manifests(root: &Path) -> Vec<PathBuf> {
    snapshot(root)
        .into_keys()
        .filter(|path| path.file_name().is_some_and(|name| name == "Cargo.toml"))
        .map(|path| root.join(path))
        .collect()
}

/// Builds the copy's manager; its path.
fn build_manager(copy: &Path) -> PathBuf {
    cargo_ok(
        copy,
        &["build", "--package", "controller", "--bin", "controller"],
    );
    artifacts_dir(copy).join("debug/controller")
}

/// The copy's manager on the test control plane, scoped to `namespace`.
async fn start_manager(binary: &Path, kubeconfig: &Path, namespace: &str, webhooks: bool) -> Child {
    let probe_port = free_port().unwrap();
    let mut command = Command::new(binary);
    command
        .args(["--namespace", namespace, "--metrics-bind-address=0"])
        .arg(format!(
            "--health-probe-bind-address=127.0.0.1:{probe_port}"
        ))
        .env("KUBECONFIG", kubeconfig);
    if webhooks {
        command
            .arg("--register-webhooks-on-loopback")
            .arg(format!("--webhook-port={}", free_port().unwrap()));
    } else {
        command.env("ENABLE_WEBHOOKS", "false");
    }
    let mut manager = spawn_manager(command).unwrap();
    wait_ready(([127, 0, 0, 1], probe_port).into(), &mut manager)
        .await
        .unwrap();
    manager
}

fn frigates(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    frigates_in(client, namespace, "v1beta1")
}

fn frigates_in(client: &kube::Client, namespace: &str, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(GROUP, version, "Frigate");
    Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk_with_plural(&gvk, "frigates"),
    )
}

fn frigate(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{GROUP}/v1beta1"),
        "kind": "Frigate",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

/// Waits until the Frigate's status says its current generation is reconciled.
async fn wait_reconciled(api: &Api<DynamicObject>, name: &str) -> Value {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        let object = serde_json::to_value(api.get(name).await.unwrap()).unwrap();
        let generation = &object["metadata"]["generation"];
        let reconciled = object["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|condition| {
                condition["type"] == "Available"
                    && condition["status"] == "True"
                    && condition["reason"] == "Reconciled"
                    && condition["observedGeneration"] == *generation
            });
        if reconciled {
            return object;
        }
        assert!(
            Instant::now() < deadline,
            "{name} not reconciled within {TIMEOUT:?}: {object:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The apiserver's answer to creating `object`, retried while the webhooks it should go
/// through are not registered yet (`registered` tells from the answer).
async fn create_through_webhooks(
    api: &Api<DynamicObject>,
    object: &DynamicObject,
    registered: impl Fn(&Result<DynamicObject, kube::Error>) -> bool,
) -> Result<DynamicObject, kube::Error> {
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let deadline = Instant::now() + TIMEOUT;
    loop {
        // Dry runs go through the webhooks (they declare no side effects) and leave nothing.
        let answer = api.create(&dry_run, object).await;
        if registered(&answer) {
            return api.create(&PostParams::default(), object).await;
        }
        assert!(
            Instant::now() < deadline,
            "the webhooks are not called within {TIMEOUT:?}: {answer:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn is_invalid_foo(answer: &Result<DynamicObject, kube::Error>) -> bool {
    matches!(answer, Err(kube::Error::Api(status))
        if status.code == 422 && status.message.contains("spec.foo") && status.message.contains("must not be empty"))
}

#[test]
#[ignore = "slow (builds a copy of the workspace): `cargo xtask test` runs it in its last step"]
fn a_scaffolded_kind_is_reconciled_and_its_webhooks_are_called_by_the_apiserver() {
    let copy = &scratch_dir("copy");
    copy_repo(copy);
    set_version(copy, "0.1.0-scaffold-copy");
    // The framework crates require each other by version, in the workspace's table and
    // in members that name a path of their own: the copy's.
    for manifest in manifests(copy) {
        let text = std::fs::read_to_string(&manifest).unwrap().replace(
            "{ version = \"0.1.0\", path = ",
            "{ version = \"0.1.0-scaffold-copy\", path = ",
        );
        std::fs::write(&manifest, text).unwrap();
    }
    // The copy's own crates, built once (and its Cargo.lock updated to its version).
    cargo_ok(copy, &["build", "--package", "xtask"]);

    // Bad input through the real command line: a clear error, a non-zero exit, no change.
    let before = snapshot(copy);
    let refused = cargo(
        copy,
        &[
            "xtask",
            "create",
            "api",
            "--group",
            "ship",
            "--version",
            "v1beta1",
            "--kind",
            "frigate",
        ],
        &[],
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("Error: invalid --kind \"frigate\": a kind is UpperCamelCase"),
        "{stderr}"
    );
    assert!(snapshot(copy) == before);

    // With apply configurations (`--ssa`): the kind's generated twins build in a project.
    create(copy, "api", &["--ssa"]);
    let after_api = snapshot(copy);
    let written = changed(&before, &after_api);
    let expected: Vec<PathBuf> = [
        "PROJECT",
        "api/src/lib.rs",
        "api/src/v1beta1/frigate_types.rs",
        "api/src/v1beta1/mod.rs",
        "config/crd/bases/ship.tutorial.kubebuilder.io_frigates.yaml",
        "config/crd/kustomization.yaml",
        "config/rbac/frigate_admin_role.yaml",
        "config/rbac/frigate_editor_role.yaml",
        "config/rbac/frigate_viewer_role.yaml",
        "config/rbac/kustomization.yaml",
        "config/rbac/role.yaml",
        "config/samples/kustomization.yaml",
        "config/samples/ship_v1beta1_frigate.yaml",
        "controller/src/frigate/mod.rs",
        "controller/src/frigate/reconciler.rs",
        "controller/src/lib.rs",
        "controller/src/main.rs",
        "controller/tests/frigate_controller.rs",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect();
    assert_eq!(written, expected);
    assert_eq!(with_placeholders(copy, &written), Vec::<String>::new());
    let role = std::fs::read_to_string(copy.join("config/rbac/role.yaml")).unwrap();
    for resource in ["frigates", "frigates/finalizers", "frigates/status"] {
        assert!(role.contains(&format!("  - {resource}\n")), "{role}");
    }
    // Formatted and lint-clean as scaffolded, the manifests current, the scaffolded test
    // passing.
    assert_formatted_and_lint_clean(copy);
    // As read from the sources, and as a build of the declarations binary has them.
    cargo_ok(copy, &["xtask", "manifests", "--check"]);
    cargo_ok(copy, &["xtask", "manifests", "--check", "--build"]);
    cargo_ok(
        copy,
        &[
            "test",
            "--package",
            "controller",
            "--test",
            "frigate_controller",
        ],
    );
    let manager = build_manager(copy);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let plane = kubebuilder_envtest::shared();
    let (client, namespace) = runtime.block_on(async {
        let crds: Vec<CustomResourceDefinition> = [
            "batch.tutorial.kubebuilder.io_cronjobs",
            "ship.tutorial.kubebuilder.io_frigates",
        ]
        .iter()
        .map(|name| {
            let path = copy.join(format!("config/crd/bases/{name}.yaml"));
            serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        })
        .collect();
        plane.install_crds(&crds).await.unwrap();
        (
            plane.client().await.unwrap(),
            plane.create_namespace("scaffold").await.unwrap(),
        )
    });
    let api = frigates(&client, &namespace);

    runtime.block_on(async {
        // The sample, as `cargo xtask run` applies it, reconciled by the scaffolded reconciler.
        let sample: DynamicObject = serde_saphyr::from_str(
            &std::fs::read_to_string(copy.join("config/samples/ship_v1beta1_frigate.yaml"))
                .unwrap(),
        )
        .unwrap();
        api.create(&PostParams::default(), &sample).await.unwrap();
        let mut manager = start_manager(&manager, plane.kubeconfig_path(), &namespace, false).await;
        let reconciled = wait_reconciled(&api, "frigate-sample").await;
        assert_eq!(reconciled["spec"]["foo"], "bar");
        assert_eq!(reconciled["metadata"]["generation"], 1);
        // A change of the spec is a new generation, reconciled again.
        api.patch(
            "frigate-sample",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"foo": "baz"}})),
        )
        .await
        .unwrap();
        let reconciled = wait_reconciled(&api, "frigate-sample").await;
        assert_eq!(reconciled["metadata"]["generation"], 2);
        assert!(stop_manager(&mut manager).await.unwrap().success());
    });

    create(
        copy,
        "webhook",
        &["--defaulting", "--programmatic-validation"],
    );
    let written = changed(&after_api, &snapshot(copy));
    assert_eq!(
        written,
        [
            "PROJECT",
            "config/webhook/manifests.yaml",
            "controller/src/frigate/mod.rs",
            "controller/src/frigate/webhook.rs",
            "controller/src/main.rs",
            "controller/tests/frigate_webhook.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(copy, &written), Vec::<String>::new());
    let webhooks = std::fs::read_to_string(copy.join("config/webhook/manifests.yaml")).unwrap();
    for expected in [
        "name: mfrigate-v1beta1.kb.io",
        "path: /mutate-ship-tutorial-kubebuilder-io-v1beta1-frigate",
        "name: vfrigate-v1beta1.kb.io",
        "path: /validate-ship-tutorial-kubebuilder-io-v1beta1-frigate",
    ] {
        assert!(
            webhooks.contains(expected),
            "{expected} missing:\n{webhooks}"
        );
    }
    assert_formatted_and_lint_clean(copy);
    // The scaffolded webhook test: called directly and by its own apiserver.
    cargo_ok(
        copy,
        &[
            "test",
            "--package",
            "controller",
            "--test",
            "frigate_webhook",
        ],
    );
    let manager = build_manager(copy);

    runtime.block_on(async {
        let mut manager = start_manager(&manager, plane.kubeconfig_path(), &namespace, true).await;

        // The defaulter fills in `foo`...
        let defaulted = create_through_webhooks(&api, &frigate("defaulted", json!({})), |answer| {
            answer
                .as_ref()
                .is_ok_and(|object| object.data["spec"]["foo"] == "default")
        })
        .await
        .unwrap();
        assert_eq!(defaulted.data["spec"]["foo"], "default");
        wait_reconciled(&api, "defaulted").await;

        // ...the validator refuses it empty, on create and on update, naming the field.
        let refused =
            create_through_webhooks(&api, &frigate("empty", json!({"foo": ""})), is_invalid_foo)
                .await;
        assert!(is_invalid_foo(&refused), "{refused:?}");
        let update = api
            .patch(
                "defaulted",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"foo": ""}})),
            )
            .await;
        assert!(is_invalid_foo(&update), "{update:?}");

        assert!(stop_manager(&mut manager).await.unwrap().success());
    });

    run_installs_the_crds_of_the_current_sources(copy, &runtime);
    scaffold_a_converting_version(copy, &runtime, plane, &client, &namespace);
}

/// What `cargo xtask run` prints once the manager runs and the samples are applied.
const RUNNING: &str = "xtask: the samples are applied";

/// `cargo xtask run` renders the manifests before it installs the CRDs, as `make run`
/// depends on `manifests`: a field added since the last render reaches the apiserver with
/// its validation, instead of being pruned. The field goes again afterwards, with the
/// manifests rendered anew.
fn run_installs_the_crds_of_the_current_sources(copy: &Path, runtime: &tokio::runtime::Runtime) {
    let types = copy.join("api/src/v1beta1/frigate_types.rs");
    let spec = "pub struct FrigateSpec {\n";
    let text = std::fs::read_to_string(&types).unwrap();
    assert!(text.contains(spec), "{text}");
    let knob = "    /// A field added after the manifests were rendered.\n    \
                #[kubebuilder(optional, validation(max_length = 5))]\n    pub knob: Option<String>,\n";
    std::fs::write(&types, text.replacen(spec, &format!("{spec}{knob}"), 1)).unwrap();

    // A control plane of its own: `run` registers the copy's webhooks with it.
    let plane = kubebuilder_envtest::ControlPlane::start().unwrap();
    let mut run = kubebuilder_cli::cargo()
        .current_dir(copy)
        .args(["xtask", "run"])
        .env("KUBECONFIG", plane.kubeconfig_path())
        .env("CARGO_BUILD_BUILD_DIR", common::target_dir())
        .env("CARGO_TARGET_DIR", artifacts_dir(copy))
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(artifacts_dir(copy).join("run.stderr")).unwrap())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(run.stdout.take().unwrap()).lines();
    let mut printed = Vec::new();
    let mut running = false;
    for line in stdout.by_ref().map_while(Result::ok) {
        running = line.starts_with(RUNNING);
        printed.push(line);
        if running {
            break;
        }
    }
    let output = |printed: &[String]| {
        let stderr =
            std::fs::read_to_string(artifacts_dir(copy).join("run.stderr")).unwrap_or_default();
        format!("{}\n--- stderr ---\n{stderr}", printed.join("\n"))
    };
    if !running {
        let _ = run.wait();
        panic!(
            "`cargo xtask run` stopped before it ran the manager:\n{}",
            output(&printed)
        );
    }
    let knob_schema = runtime.block_on(async {
        let crds: Api<CustomResourceDefinition> = Api::all(plane.client().await.unwrap());
        let crd = crds
            .get("frigates.ship.tutorial.kubebuilder.io")
            .await
            .unwrap();
        let version = crd
            .spec
            .versions
            .iter()
            .find(|v| v.name == "v1beta1")
            .unwrap();
        let schema = serde_json::to_value(&version.schema).unwrap();
        schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["knob"].clone()
    });
    // SAFETY: signalling our own child, not yet reaped: xtask stops the manager and exits,
    // its output read to the end so that it can write it.
    unsafe { libc::kill(i32::try_from(run.id()).unwrap(), libc::SIGTERM) };
    printed.extend(stdout.map_while(Result::ok));
    let status = run.wait().unwrap();
    assert_eq!(
        (&knob_schema["type"], &knob_schema["maxLength"]),
        (&json!("string"), &json!(5)),
        "{knob_schema}\n{}",
        output(&printed)
    );
    assert!(status.success(), "{status}: {}", output(&printed));
    std::fs::write(&types, text).unwrap();
    cargo_ok(copy, &["xtask", "manifests"]);
}

/// A second version, `v1`, of the Frigate (`v1beta1` stays the storage version), then its
/// conversion: the scaffolded `Spoke` impl passes its own test, and the apiserver calls it
/// through the manager's `/convert` on loopback when a client reads either version.
fn scaffold_a_converting_version(
    copy: &Path,
    runtime: &tokio::runtime::Runtime,
    plane: &kubebuilder_envtest::ControlPlane,
    client: &kube::Client,
    namespace: &str,
) {
    let before = snapshot(copy);
    let kind = ["--group", "ship", "--kind", "Frigate"];
    cargo_ok(
        copy,
        &[&["xtask", "create", "api", "--version", "v1"][..], &kind].concat(),
    );
    let written = changed(&before, &snapshot(copy));
    assert_eq!(
        written,
        // (`api/src/lib.rs` declares v1 already: the CronJob's.)
        [
            "PROJECT",
            "api/src/v1/frigate_types.rs",
            "api/src/v1/mod.rs",
            "api/src/v1beta1/frigate_types.rs",
            "config/crd/bases/ship.tutorial.kubebuilder.io_frigates.yaml",
            "config/samples/kustomization.yaml",
            "config/samples/ship_v1_frigate.yaml",
        ]
        .map(PathBuf::from)
    );
    let read = |path: &str| std::fs::read_to_string(copy.join(path)).unwrap();
    assert!(read("api/src/v1beta1/frigate_types.rs").contains("    storageversion,\n"));
    assert!(read("api/src/v1/frigate_types.rs").contains("    unservedversion,\n"));

    let after_api = snapshot(copy);
    cargo_ok(
        copy,
        &[
            &["xtask", "create", "webhook", "--version", "v1beta1"][..],
            &kind,
            &["--conversion", "--spoke", "v1"],
        ]
        .concat(),
    );
    let written = changed(&after_api, &snapshot(copy));
    assert_eq!(
        written,
        [
            "PROJECT",
            "api/src/v1/frigate_conversion.rs",
            "api/src/v1/frigate_types.rs",
            "api/src/v1/mod.rs",
            "config/crd/bases/ship.tutorial.kubebuilder.io_frigates.yaml",
            "config/default/kustomization.yaml",
            "controller/src/main.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(copy, &written), Vec::<String>::new());
    let types = read("api/src/v1/frigate_types.rs");
    assert!(
        types.contains("    hub = crate::v1beta1::Frigate,\n")
            && !types.contains("unservedversion")
    );
    let crd_yaml = read("config/crd/bases/ship.tutorial.kubebuilder.io_frigates.yaml");
    assert!(crd_yaml.contains("      path: /convert\n"), "{crd_yaml}");
    assert_formatted_and_lint_clean(copy);
    cargo_ok(copy, &["test", "--package", "api", "--lib"]);
    let manager = build_manager(copy);

    runtime.block_on(async {
        let crd: CustomResourceDefinition = serde_saphyr::from_str(&crd_yaml).unwrap();
        plane.install_crds(&[crd]).await.unwrap();
        let mut manager = start_manager(&manager, plane.kubeconfig_path(), namespace, true).await;
        let v1beta1 = frigates(client, namespace);
        let v1 = frigates_in(client, namespace, "v1");
        // Read as v1, the objects stored as v1beta1 come through the conversion webhook
        // (retried while the apiserver picks up the CRD's new conversion).
        let deadline = Instant::now() + TIMEOUT;
        let converted = loop {
            match v1.get("defaulted").await {
                Ok(object) => break object,
                Err(err) => assert!(
                    Instant::now() < deadline,
                    "v1 is not converted within {TIMEOUT:?}: {err}"
                ),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(converted.types.unwrap().api_version, format!("{GROUP}/v1"));
        assert_eq!(converted.data["spec"]["foo"], "default");
        let mut written = frigate("written-as-v1", json!({"foo": "from v1"}));
        written.types.as_mut().unwrap().api_version = format!("{GROUP}/v1");
        v1.create(&PostParams::default(), &written).await.unwrap();
        let read_back = v1beta1.get("written-as-v1").await.unwrap();
        assert_eq!(read_back.data["spec"]["foo"], "from v1");
        assert!(stop_manager(&mut manager).await.unwrap().success());
    });
}

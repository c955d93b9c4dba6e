//! Differential tests of the kustomize subset against kustomize itself (`$KUSTOMIZE`, which
//! `cargo xtask test` installs): what `cargo xtask build-installer` writes must hold the same
//! set of objects as `kustomize build`, for every kustomization of this repository's
//! `config/` and the fixtures in `tests/kustomize/` (which use what `config/` does not);
//! and a new project's `config/default`, which needs cert-manager only once it has webhooks.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder_cli::kustomize::{self, Overrides};
use kubebuilder_cli::scaffold::create_in;
use serde_json::Value;

use common::{
    changed, copy_tree, create_command, init_project, kustomize, objects, repo_root, snapshot,
};

fn run(command: &mut Command) -> String {
    let output = command.output().expect("running a command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// What `cargo xtask build-installer [--image <image>]` writes for `dir`.
fn ours(dir: &Path, image: Option<&str>) -> String {
    let objects = kustomize::build(dir, &Overrides::manager_image(image)).unwrap();
    kubebuilder::yaml::to_documents(&objects)
}

fn theirs(dir: &Path) -> String {
    run(Command::new(kustomize()).arg("build").arg(dir))
}

fn assert_same_objects(dir: &Path, ours: &str, theirs: &str) {
    let (ours, theirs) = (objects(ours), objects(theirs));
    let only_ours: Vec<_> = ours.difference(&theirs).collect();
    let only_theirs: Vec<_> = theirs.difference(&ours).collect();
    assert!(
        only_ours.is_empty() && only_theirs.is_empty(),
        "{}: cargo xtask and kustomize differ\nonly ours: {only_ours:#?}\nonly kustomize: {only_theirs:#?}",
        dir.display()
    );
}

#[test]
fn every_kustomization_of_config_renders_as_kustomize_renders_it() {
    let config = repo_root().join("config");
    let mut checked = 0;
    for entry in std::fs::read_dir(&config).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("kustomization.yaml").is_file() {
            continue;
        }
        assert_same_objects(&dir, &ours(&dir, None), &theirs(&dir));
        checked += 1;
    }
    // default, crd, rbac, manager, webhook, certmanager, prometheus, network-policy, samples
    assert_eq!(checked, 9, "a kustomization of config/ was not found");
}

#[test]
fn dist_install_yaml_holds_what_kustomize_builds_from_config_default() {
    let dir = repo_root().join("config/default");
    let ours = ours(&dir, None);
    assert_same_objects(&dir, &ours, &theirs(&dir));
    assert!(
        ours.starts_with("---\napiVersion: v1\nkind: Namespace\n"),
        "namespaces come first"
    );
}

#[test]
fn the_fixtures_render_as_kustomize_renders_them() {
    for fixture in ["base", "overlay"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/kustomize")
            .join(fixture);
        assert_same_objects(&dir, &ours(&dir, None), &theirs(&dir));
    }
}

#[test]
fn image_sets_the_manager_image_as_kustomize_edit_set_image_does() {
    let image = "registry.example.com:5000/team/manager:v1.2.3";
    // kustomize's way edits config/manager/kustomization.yaml: do it on a copy.
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&repo_root().join("config"), copy.path(), &[]);
    run(Command::new(kustomize())
        .current_dir(copy.path().join("manager"))
        .args(["edit", "set", "image", &format!("controller={image}")]));
    let dir = repo_root().join("config/default");
    let ours = ours(&dir, Some(image));
    assert_same_objects(&dir, &ours, &theirs(&copy.path().join("default")));
    assert!(ours.contains(&format!("image: {image}")));
}

/// `kustomize build <dir>`'s objects, which must be those `build-installer` writes too.
fn rendered(dir: &Path) -> Vec<Value> {
    let theirs = theirs(dir);
    assert_same_objects(dir, &ours(dir, None), &theirs);
    serde_saphyr::from_multiple::<Value>(&theirs)
        .unwrap()
        .into_iter()
        .filter(|object| !object.is_null())
        .collect()
}

fn named<'a>(objects: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

/// The manager container's arguments.
fn manager_args(objects: &[Value]) -> Vec<String> {
    let manager = named(objects, "Deployment", "fleet-controller-manager").unwrap();
    serde_json::from_value(manager["spec"]["template"]["spec"]["containers"][0]["args"].clone())
        .unwrap()
}

/// A `create` command run in the project at `root` as `cargo xtask create` runs it (with
/// its manifests, rendered in-process).
fn create(root: &Path, line: &str) {
    create_in(root, &create_command(line)).unwrap_or_else(|e| panic!("{line}: {e:#}"));
}

#[test]
fn a_project_needs_cert_manager_only_once_it_has_a_webhook() {
    let (_dir, root) = init_project("");
    for kind in ["Memcached", "Backup"] {
        create(
            &root,
            &format!("create api --group cache --version v1alpha1 --kind {kind}"),
        );
    }
    let default = root.join("config/default");

    // kubebuilder's Getting Started operator: no webhook, so nothing of cert-manager's and
    // nothing that serves webhooks; metrics are served (with a self-signed certificate).
    let objects = rendered(&default);
    let of_cert_manager: Vec<String> = objects
        .iter()
        .filter(|o| {
            o["apiVersion"]
                .as_str()
                .unwrap()
                .starts_with("cert-manager.io/")
        })
        .map(|o| format!("{} {}", o["kind"], o["metadata"]["name"]))
        .collect();
    assert_eq!(of_cert_manager, Vec::<String>::new());
    let text = serde_json::to_string(&objects).unwrap();
    assert!(!text.contains("cert-manager.io/inject-ca-from"));
    assert!(named(&objects, "Service", "fleet-webhook-service").is_none());
    assert!(
        named(
            &objects,
            "Service",
            "fleet-controller-manager-metrics-service"
        )
        .is_some()
    );
    assert_eq!(
        manager_args(&objects),
        [
            "--metrics-bind-address=:8443",
            "--leader-elect",
            "--health-probe-bind-address=:8081"
        ]
    );
    let policies = root.join("config/network-policy");
    let policy_names = |objects: &[Value]| -> Vec<String> {
        objects
            .iter()
            .map(|o| {
                assert_eq!(o["kind"], "NetworkPolicy");
                o["metadata"]["name"].as_str().unwrap().to_owned()
            })
            .collect()
    };
    assert_eq!(
        policy_names(&rendered(&policies)),
        ["allow-metrics-traffic"]
    );

    // The first webhook turns on its Service, cert-manager's certificates and their wiring.
    create(
        &root,
        "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting",
    );
    let objects = rendered(&default);
    for (kind, name) in [
        ("Service", "fleet-webhook-service"),
        ("Issuer", "fleet-selfsigned-issuer"),
        ("Certificate", "fleet-metrics-certs"),
    ] {
        assert!(named(&objects, kind, name).is_some(), "no {kind} {name}");
    }
    let certificate = named(&objects, "Certificate", "fleet-serving-cert").unwrap();
    assert_eq!(
        certificate["spec"]["dnsNames"][0],
        "fleet-webhook-service.fleet-system.svc"
    );
    let webhooks = named(
        &objects,
        "MutatingWebhookConfiguration",
        "fleet-mutating-webhook-configuration",
    )
    .unwrap();
    assert_eq!(
        webhooks["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
        "fleet-system/fleet-serving-cert"
    );
    let args = manager_args(&objects);
    for arg in [
        "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs",
        "--webhook-port=9443",
    ] {
        assert!(args.contains(&arg.to_owned()), "{arg} missing: {args:?}");
    }
    assert_eq!(
        policy_names(&rendered(&policies)),
        ["allow-metrics-traffic", "allow-webhook-traffic"]
    );

    // Another webhook adds its configuration and changes nothing else of config/.
    let config = root.join("config");
    let before = snapshot(&config);
    create(
        &root,
        "create webhook --group cache --version v1alpha1 --kind Backup --programmatic-validation",
    );
    assert_eq!(
        changed(&before, &snapshot(&config)),
        [PathBuf::from("webhook/manifests.yaml")]
    );
}

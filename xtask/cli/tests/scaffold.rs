//! `cargo xtask init`, `create api` and `create webhook` as far as files go, without
//! building anything: what they write for each option, and bad input, which must leave the
//! tree byte-for-byte unchanged. (Building and running what they write against a real
//! control plane: `scaffold_in_copy.rs` and `scaffold_init.rs`.)

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use kubebuilder_cli::Command;
use kubebuilder_cli::scaffold::project::Project;
use kubebuilder_cli::scaffold::{self, create_in, init};

use common::{
    changed, copy_repo, create_command, parse, repo_root, scaffold, snapshot, with_placeholders,
};

/// `init`'s arguments from a command line.
fn init_args(line: &str) -> init::Args {
    match parse(line) {
        Command::Scaffold(scaffold::Command::Init(args)) => args,
        _ => panic!("{line} is not init"),
    }
}

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn bad_input_is_refused_naming_the_problem_and_leaves_the_tree_byte_for_byte_unchanged() {
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path();
    copy_repo(root);
    let before = snapshot(root);
    let cases = [
        (
            "create api --group Ship_Yard --version v1 --kind Frigate",
            "invalid --group \"Ship_Yard\": a group must be a DNS-1123 subdomain",
        ),
        (
            "create api --group ship. --version v1 --kind Frigate",
            "invalid --group \"ship.\"",
        ),
        (
            "create api --group ship --version 1.0 --kind Frigate",
            "invalid --version \"1.0\": a version is v<N>, optionally followed by alpha<N> or beta<N>",
        ),
        (
            "create api --group ship --version v1beta --kind Frigate",
            "invalid --version \"v1beta\"",
        ),
        (
            "create api --group ship --version v1 --kind frigate",
            "invalid --kind \"frigate\": a kind is UpperCamelCase",
        ),
        (
            "create api --group ship --version v1 --kind Frigate_Class",
            "invalid --kind \"Frigate_Class\": a kind is UpperCamelCase",
        ),
        (
            "create api --group ship --version v1 --kind Type",
            "invalid --kind \"Type\": its module `type` would be a Rust keyword",
        ),
        (
            "create api --group ship --version v1 --kind Frigate --plural Frigates",
            "invalid --plural \"Frigates\"",
        ),
        (
            "create api --group batch --version v1 --kind CronJob",
            "the API batch.tutorial.kubebuilder.io/v1 CronJob already exists (see PROJECT); \
             pass --force to scaffold it again",
        ),
        (
            // Not in PROJECT, but its file is there (`Cronjob` is `cronjob` too).
            "create api --group batch --version v1 --kind Cronjob",
            "api/src/v1/cronjob_types.rs already exists; pass --force to overwrite it",
        ),
        (
            "create api --group fleet --version v3 --kind Cronjob",
            "controller/src/cronjob/reconciler.rs already exists; pass --force to overwrite it",
        ),
        (
            "create api --group batch --version v1 --kind CronJob --resource=false",
            "a controller for CronJob (batch.tutorial.kubebuilder.io) already exists",
        ),
        (
            "create api --group ship --version v1 --kind Frigate --resource=false",
            "--resource=false adds a controller to an existing API, but PROJECT has no API \
             ship.tutorial.kubebuilder.io/v1 Frigate",
        ),
        (
            "create api --group ship --version v1 --kind Frigate --resource=false --controller=false",
            "nothing to scaffold: --resource=false and --controller=false",
        ),
        (
            "create api --group batch --version v1 --kind CronJob --resource=false --ssa",
            "--ssa gives the kind's types apply configurations, and --resource=false scaffolds \
             no types",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob --defaulting",
            "the defaulting webhook of batch.tutorial.kubebuilder.io/v1 CronJob already exists",
        ),
        (
            "create webhook --group ship --version v1 --kind Frigate --defaulting",
            "PROJECT has no API ship.tutorial.kubebuilder.io/v1 Frigate: create it first",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob",
            "nothing to scaffold: pass --defaulting, --programmatic-validation, --conversion or several",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob --conversion",
            "--conversion needs the versions that convert: --spoke <version>",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2",
            "v2 of CronJob converts already (see PROJECT)",
        ),
        (
            "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v3",
            "--spoke v3: CronJob has no other version v3 (it has v1, v2)",
        ),
        (
            "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
            "the hub of a conversion is the storage version: v1 for CronJob",
        ),
        (
            "create webhook --group batch --version v1 --kind cronjob --defaulting",
            "invalid --kind \"cronjob\"",
        ),
        // Kubernetes' kinds: not in k8s-openapi, or not as asked.
        (
            "create api --group apps --version v1 --kind Deploymnet --resource=false",
            "--resource=false: PROJECT has no API apps.tutorial.kubebuilder.io/v1 Deploymnet, and \
             k8s-openapi's v1_37 API has no kind Deploymnet in apps/v1 (its kinds: \
             ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet)",
        ),
        (
            // PROJECT's CronJob is `CronJob`.
            "create api --group batch --version v1 --kind Cronjob --resource=false",
            "k8s-openapi's v1_37 API has no kind Cronjob in batch/v1 (its kinds: CronJob, Job)",
        ),
        (
            "create api --group apps --version v2 --kind Deployment --resource=false",
            "apps has no GA version v2 in k8s-openapi's v1_37 API (it has v1)",
        ),
        (
            "create api --group networking --version v1beta1 --kind IPAddress --resource=false",
            "networking.k8s.io has no GA version v1beta1 in k8s-openapi's v1_37 API (it has v1); \
             for an alpha or beta version, pass --external-api-path \
             k8s_openapi::api::networking::v1beta1 --external-api-domain k8s.io --group networking",
        ),
        (
            "create api --group core --version v1 --kind Pod --resource=false --namespaced=false",
            "--namespaced=false: v1 Pod is namespaced",
        ),
        (
            "create api --group apps --version v1 --kind Deployment --resource=false --plural deploys",
            "--plural deploys: the resource of apps/v1 Deployment is deployments",
        ),
        // Another project's kinds.
        (
            "create api --group gadgets --version v1 --kind Widget --resource=false \
             --external-api-path widgets::v1-beta --external-api-domain example.org",
            "invalid --external-api-path \"widgets::v1-beta\": \"v1-beta\" is not a Rust identifier",
        ),
        (
            "create api --group gadgets --version v1 --kind Widget --resource=false \
             --external-api-path crate::v1 --external-api-domain example.org",
            "invalid --external-api-path \"crate::v1\": `crate` is a Rust keyword",
        ),
        (
            "create api --group gadgets --version v1 --kind Widget --resource=false \
             --external-api-path widgets::v1::Widget --external-api-domain example.org",
            "--external-api-path widgets::v1::Widget: the controller crate has no dependency \
             `widgets`; add the crate that defines Widget to controller/Cargo.toml",
        ),
        (
            "create api --group gadgets --version v1 --kind Widget \
             --external-api-path k8s_openapi::api::core::v1 --external-api-domain example.org",
            "--external-api-path scaffolds a controller for another project's kind, whose types \
             are that project's: pass --resource=false",
        ),
        (
            "create api --group gadgets --version v1 --kind Widget --resource=false \
             --external-api-path api::v1 --external-api-domain Example.org",
            "invalid --external-api-domain \"Example.org\": a domain must be a DNS-1123 subdomain",
        ),
        (
            "create api --group gadgets --version v1 --kind Widget --resource=false \
             --external-api-path api::v1 --external-api-domain tutorial.kubebuilder.io",
            "--external-api-domain tutorial.kubebuilder.io is this project's domain",
        ),
    ];
    for (line, expected) in cases {
        let error = create_in(root, &create_command(line)).unwrap_err();
        assert!(
            format!("{error:#}").contains(expected),
            "{line}: expected {expected:?}, got: {error:#}"
        );
        let after = snapshot(root);
        assert!(
            after == before,
            "{line} changed {:?}",
            changed(&before, &after)
        );
    }

    let elsewhere = tempfile::tempdir().unwrap();
    let new = elsewhere.path().join("new");
    let new_arg = new.to_str().unwrap();
    let root_arg = root.to_str().unwrap();
    for (line, expected) in [
        (
            format!("init {root_arg} --domain example.com --name copy"),
            "is not empty: `init` makes a project in a new or empty directory",
        ),
        (
            format!("init {new_arg} --domain Example.com"),
            "invalid --domain \"Example.com\": a domain must be a DNS-1123 subdomain",
        ),
        (
            format!("init {new_arg} --domain example.com --name My_Project"),
            "invalid project name \"My_Project\"",
        ),
        (
            format!("init {new_arg} --domain example.com --local {new_arg}-checkout"),
            "-checkout: No such file or directory",
        ),
        (
            format!("init {new_arg} --domain example.com --local {root_arg}/config"),
            "not a checkout of kubebuilder for Rust (it has no kubebuilder/Cargo.toml)",
        ),
    ] {
        let error = init::run(&init_args(&line)).unwrap_err();
        assert!(
            format!("{error:#}").contains(expected),
            "{line}: expected {expected:?}, got: {error:#}"
        );
        assert!(snapshot(root) == before, "{line} changed the copy");
        assert!(!new.exists(), "{line} created {new_arg}");
    }
}

/// A project made by `init`, in a temporary directory.
struct NewProject {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl NewProject {
    fn init() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        // Without the license header, which `scaffold_options.rs` tests, the files read
        // as their templates.
        let args = init_args(&format!(
            "init {} --domain example.com --license none --local {}",
            root.display(),
            repo_root().display()
        ));
        init::plan(&args).unwrap().apply().unwrap();
        Self { _dir: dir, root }
    }

    fn read(&self, path: &str) -> String {
        read(&self.root, path)
    }
}

/// The path a project's `manifest` gives the dependency `name` (`init --local`).
fn manifest_dependency_path(manifest: &str, name: &str) -> PathBuf {
    let line = manifest
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} = {{ version = \"0.1.0\", path = \"")))
        .unwrap_or_else(|| panic!("no path for {name} in:\n{manifest}"));
    PathBuf::from(line.strip_suffix("\" }").unwrap())
}

#[test]
fn init_writes_a_workspace_on_this_repositorys_crates_and_pins() {
    let project = NewProject::init();
    let files: Vec<PathBuf> = snapshot(&project.root).into_keys().collect();
    assert_eq!(
        with_placeholders(&project.root, &files),
        Vec::<String>::new()
    );
    for expected in [
        ".cargo/config.toml",
        ".gitignore",
        "Cargo.lock",
        "Cargo.toml",
        "PROJECT",
        "README.md",
        "api/Cargo.toml",
        "api/src/lib.rs",
        "config/crd/kustomization.yaml",
        "config/default/kustomization.yaml",
        "config/rbac/role.yaml",
        "config/samples/kustomization.yaml",
        "config/webhook/manifests.yaml",
        "controller/Cargo.toml",
        "controller/src/lib.rs",
        "controller/src/main.rs",
        "xtask/Cargo.toml",
        "xtask/declarations/Cargo.toml",
        "xtask/declarations/src/main.rs",
        "xtask/src/main.rs",
    ] {
        assert!(
            files.contains(&PathBuf::from(expected)),
            "{expected} missing"
        );
    }

    let project_file = Project::parse(&project.read("PROJECT")).unwrap();
    assert_eq!(
        (
            project_file.domain.as_str(),
            project_file.project_name.as_str()
        ),
        ("example.com", "fleet")
    );
    assert!(project_file.resources.is_empty());

    let manifest = project.read("Cargo.toml");
    let repo = repo_root();
    for name in [
        "kubebuilder",
        "kubebuilder-cli",
        "kubebuilder-envtest",
        "kubebuilder-runtime",
    ] {
        let line = format!("{name} = {{ version = \"0.1.0\", path = ");
        assert!(manifest.contains(&line), "{line} missing from:\n{manifest}");
    }
    // `--local`: the checkout by a relative path, from the project's directory.
    let local = std::path::absolute(
        project
            .root
            .join(manifest_dependency_path(&manifest, "kubebuilder-runtime")),
    )
    .unwrap();
    assert_eq!(
        local.canonicalize().unwrap(),
        repo.join("controller/runtime")
    );
    // No file names a directory of this machine (the relative paths climb with `../`).
    for (path, bytes) in snapshot(&project.root) {
        let text = String::from_utf8_lossy(&bytes).replace("../", "");
        for dir in [repo.to_str().unwrap(), project.root.to_str().unwrap()] {
            assert!(!text.contains(dir), "{} names {dir}", path.display());
        }
    }
    let ours = read(&repo, "Cargo.toml");
    let pin = |name: &str| {
        ours.lines()
            .find(|line| line.starts_with(&format!("{name} = ")))
            .unwrap()
            .to_owned()
    };
    for name in ["kube", "k8s-openapi", "tokio", "clap"] {
        assert!(manifest.contains(&pin(name)), "{name}'s pin differs");
    }

    let main = project.read("controller/src/main.rs");
    assert!(main.contains("const LEADER_ELECTION_ID: &str = \""));
    assert!(main.contains(".example.com\";"));
    assert!(main.contains(
        "    // +kubebuilder:scaffold:controllers\n    // +kubebuilder:scaffold:webhooks\n"
    ));
    assert_eq!(
        project
            .read("config/default/kustomization.yaml")
            .lines()
            .nth(6),
        Some("namespace: fleet-system")
    );
    assert!(
        project
            .read("config/crd/kustomization.yaml")
            .contains("\nresources: []\n")
    );
}

#[test]
fn a_new_project_resolves_from_its_lock_file_without_the_crates_io_index() {
    let project = NewProject::init();
    // Cargo's HTTP through a closed loopback port: a look at the index fails at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // The first run resolves from the lock file init copies (this repository's, which it
    // prunes), the second from the project's own.
    for _ in 0..2 {
        let output = kubebuilder_cli::cargo()
            .current_dir(&project.root)
            .args(["tree", "--edges", "normal", "--prefix", "none"])
            .env("CARGO_HTTP_PROXY", format!("http://{closed}"))
            .env("CARGO_NET_RETRY", "0")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success() && !stderr.contains("Updating"),
            "cargo tree in a new project ({}):\n{stderr}",
            output.status
        );
    }
}

#[test]
fn create_in_a_new_project_writes_its_manifests_without_building_it() {
    let project = NewProject::init();
    // A `cargo xtask` that fails at once: `create` must render the manifests itself, where
    // the project's own would first build its xtask (minutes, the first time).
    fs::write(
        project.root.join(".cargo/config.toml"),
        "[alias]\nxtask = \"no-such-subcommand\"\n",
    )
    .unwrap();
    for line in [
        "create api --group ship --version v1 --kind Frigate",
        "create webhook --group ship --version v1 --kind Frigate --defaulting",
    ] {
        create_in(&project.root, &create_command(line)).unwrap_or_else(|e| panic!("{line}: {e:#}"));
    }
    let crd = project.read("config/crd/bases/ship.example.com_frigates.yaml");
    assert!(crd.contains("\n    kind: Frigate\n"), "{crd}");
    assert!(
        project
            .read("config/rbac/role.yaml")
            .contains("- frigates\n")
    );
    assert!(
        project
            .read("config/webhook/manifests.yaml")
            .contains("name: mfrigate-v1.kb.io"),
    );
    assert!(
        project
            .read("config/crd/kustomization.yaml")
            .contains("- bases/ship.example.com_frigates.yaml")
    );
}

#[test]
fn create_api_ssa_gives_the_types_apply_configurations_and_a_forced_rerun_keeps_them() {
    let project = NewProject::init();
    let root = &project.root;
    let opted_in = |types: &str| {
        types.contains("    subresource(status),\n)]\n#[kubebuilder::schema(apply_configuration)]\npub struct FrigateSpec {")
            && types.contains("#[kubebuilder::schema(apply_configuration)]\n#[derive(Default)]\npub struct FrigateStatus {")
    };
    scaffold(
        root,
        "create api --group ship --version v1 --kind Frigate --ssa",
    );
    assert!(opted_in(&project.read("api/src/v1/frigate_types.rs")));
    assert!(
        project
            .read("PROJECT")
            .contains("- api:\n    crdVersion: v1\n    namespaced: true\n    ssa: true\n")
    );
    // Without --ssa, `--force` keeps PROJECT's opt-in (kubebuilder's #5936 kept the flag's).
    scaffold(
        root,
        "create api --group ship --version v1 --kind Frigate --force",
    );
    assert!(opted_in(&project.read("api/src/v1/frigate_types.rs")));
    assert!(project.read("PROJECT").contains("ssa: true"));
    // A kind without it has neither.
    scaffold(root, "create api --group ship --version v1 --kind Armada");
    let types = project.read("api/src/v1/armada_types.rs");
    assert!(!types.contains("apply_configuration"));
}

#[test]
fn create_api_and_webhook_write_each_option_at_the_markers() {
    let project = NewProject::init();
    let root = &project.root;
    let before = snapshot(root);
    scaffold(root, "create api --group ship --version v1 --kind Frigate");
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation",
    );
    // Cluster-scoped, with its own plural; a validating webhook only.
    scaffold(
        root,
        "create api --group ship --version v1 --kind Armada --namespaced=false --plural armadae",
    );
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Armada --programmatic-validation",
    );
    // Types without a controller, then a defaulting webhook, then the controller.
    scaffold(
        root,
        "create api --group fleet --version v2alpha1 --kind EscortShip --controller=false",
    );
    scaffold(
        root,
        "create webhook --group fleet --version v2alpha1 --kind EscortShip --defaulting",
    );
    let escort_webhooks_only = project.read("controller/src/escort_ship/mod.rs");
    scaffold(
        root,
        "create api --group fleet --version v2alpha1 --kind EscortShip --resource=false",
    );
    let written = changed(&before, &snapshot(root));
    assert_eq!(with_placeholders(root, &written), Vec::<String>::new());

    // The markers got one line per kind, in order.
    let main = project.read("controller/src/main.rs");
    let registrations: Vec<&str> = main
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("manager = ") || line.starts_with("// +kubebuilder"))
        .collect();
    assert_eq!(
        registrations,
        [
            "manager = controller::frigate::setup_with_manager(manager);",
            "manager = controller::armada::setup_with_manager(manager);",
            "manager = controller::escort_ship::setup_with_manager(manager);",
            "// +kubebuilder:scaffold:controllers",
            "manager = manager.webhooks(controller::frigate::webhook::webhooks());",
            "manager = manager.webhooks(controller::armada::webhook::webhooks());",
            "manager = manager.webhooks(controller::escort_ship::webhook::webhooks());",
            "// +kubebuilder:scaffold:webhooks",
            "manager = manager",
        ]
    );
    assert!(
        project
            .read("api/src/lib.rs")
            .ends_with("pub mod v1;\npub mod v2alpha1;\n// +kubebuilder:scaffold:versions\n")
    );
    assert!(project.read("api/src/v1/mod.rs").ends_with(
        "mod frigate_types;\npub use frigate_types::{Frigate, FrigateList, FrigateSpec, FrigateStatus};\n\
         mod armada_types;\npub use armada_types::{Armada, ArmadaList, ArmadaSpec, ArmadaStatus};\n\
         // +kubebuilder:scaffold:kinds\n"
    ));
    // (rustfmt sorts module declarations.)
    assert_eq!(
        project
            .read("controller/src/lib.rs")
            .lines()
            .skip_while(|line| !line.starts_with("pub mod"))
            .collect::<Vec<_>>(),
        [
            "pub mod armada;",
            "pub mod escort_ship;",
            "pub mod frigate;",
            "// +kubebuilder:scaffold:modules"
        ]
    );
    assert_eq!(
        project.read("config/samples/kustomization.yaml"),
        "# Example objects of each kind: `kubectl apply -k config/samples`.\nresources:\n\
         - ship_v1_frigate.yaml\n- ship_v1_armada.yaml\n- fleet_v2alpha1_escortship.yaml\n"
    );

    // The options show where they belong.
    let frigate_types = project.read("api/src/v1/frigate_types.rs");
    assert!(frigate_types.contains("    status = FrigateStatus,\n    subresource(status),\n"));
    let armada_types = project.read("api/src/v1/armada_types.rs");
    assert!(armada_types.contains(
        "    status = ArmadaStatus,\n    resource(path = \"armadae\", scope = \"Cluster\"),\n"
    ));
    // The reconcilers are the same whatever the scope (the Context finds each kind's API);
    // the controller tests read a cluster-scoped kind cluster-wide.
    let armada_reconciler = project.read("controller/src/armada/reconciler.rs");
    assert!(armada_reconciler.contains("ctx.apply_status(&*armada, &status).await?;"));
    assert!(armada_reconciler.contains("resources = [\"armadae/status\"],"));
    let frigate_reconciler = project.read("controller/src/frigate/reconciler.rs");
    assert!(frigate_reconciler.contains("ctx.apply_status(&*frigate, &status).await?;"));
    let armada_test = project.read("controller/tests/armada_controller.rs");
    assert!(armada_test.contains("let api: Api<Armada> = Api::all(client);"));
    let frigate_test = project.read("controller/tests/frigate_controller.rs");
    assert!(frigate_test.contains("let api: Api<Frigate> = Api::namespaced(client, &namespace);"));
    let armada_webhook = project.read("controller/src/armada/webhook.rs");
    assert!(armada_webhook.contains("Webhooks::new().validator(Validator)"));
    assert!(!armada_webhook.contains("Defaulter"));
    let frigate_webhook = project.read("controller/src/frigate/webhook.rs");
    assert!(frigate_webhook.contains("    for = Frigate,\n    mutating = true,"));
    assert!(frigate_webhook.contains("name = \"vfrigate-v1.kb.io\","));
    assert_eq!(
        escort_webhooks_only,
        "//! The EscortShip admission webhooks.\n\npub mod webhook;\n// +kubebuilder:scaffold:submodules\n"
    );
    assert!(
        project.read("controller/src/escort_ship/mod.rs").contains(
            "pub mod reconciler;\npub mod webhook;\n// +kubebuilder:scaffold:submodules\n"
        )
    );

    let recorded = Project::parse(&project.read("PROJECT")).unwrap();
    // kind, namespaced, controller, defaulting, validation, plural
    type Recorded<'a> = (&'a str, bool, bool, bool, bool, Option<&'a str>);
    let summary: Vec<Recorded> = recorded
        .resources
        .iter()
        .map(|r| {
            let webhooks = r.webhooks.clone().unwrap_or_default();
            (
                r.kind.as_str(),
                r.api.as_ref().is_some_and(|api| api.namespaced),
                r.controller,
                webhooks.defaulting,
                webhooks.validation,
                r.plural.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Frigate", true, true, true, true, None),
            ("Armada", false, true, false, true, Some("armadae")),
            ("EscortShip", true, true, true, false, None),
        ]
    );
}

#[test]
fn force_scaffolds_again_in_place() {
    let project = NewProject::init();
    let root = &project.root;
    let frigate = "create api --group ship --version v1 --kind Frigate";
    scaffold(root, frigate);
    let types = "api/src/v1/frigate_types.rs";
    fs::write(root.join(types), "// edited\n").unwrap();
    let before = snapshot(root);
    assert!(create_in(root, &create_command(frigate)).is_err());
    assert!(snapshot(root) == before);

    scaffold(root, &format!("{frigate} --force"));
    assert!(project.read(types).contains("pub struct FrigateSpec"));
    // Registrations and PROJECT entries are not repeated.
    assert_eq!(
        project
            .read("controller/src/main.rs")
            .matches("controller::frigate::setup_with_manager")
            .count(),
        1
    );
    assert_eq!(
        Project::parse(&project.read("PROJECT"))
            .unwrap()
            .resources
            .len(),
        1
    );
}

#[test]
fn a_new_version_of_a_kind_keeps_its_plural() {
    let project = NewProject::init();
    let root = &project.root;
    scaffold(
        root,
        "create api --group ship --version v1 --kind Armada --plural armadae",
    );
    scaffold(
        root,
        "create api --group ship --version v2 --kind Armada --controller=false",
    );
    assert!(
        project
            .read("api/src/v2/armada_types.rs")
            .contains("    resource(path = \"armadae\"),\n")
    );
    let recorded = Project::parse(&project.read("PROJECT")).unwrap();
    assert_eq!(
        recorded
            .resources
            .iter()
            .map(|r| (r.version.as_str(), r.plural.as_deref(), r.controller))
            .collect::<Vec<_>>(),
        [
            ("v1", Some("armadae"), true),
            ("v2", Some("armadae"), false)
        ]
    );
}

#[test]
fn a_new_version_is_served_once_it_converts_through_the_storage_version() {
    let project = NewProject::init();
    let root = &project.root;
    scaffold(root, "create api --group ship --version v1 --kind Frigate");
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Frigate --defaulting",
    );
    let before = snapshot(root);
    // No --controller: the kind has one already.
    scaffold(root, "create api --group ship --version v2 --kind Frigate");
    let written = changed(&before, &snapshot(root));
    assert_eq!(
        written,
        [
            "PROJECT",
            "api/src/lib.rs",
            "api/src/v1/frigate_types.rs",
            "api/src/v2/frigate_types.rs",
            "api/src/v2/mod.rs",
            "config/samples/kustomization.yaml",
            "config/samples/ship_v2_frigate.yaml",
        ]
        .map(PathBuf::from)
    );
    // The first version stays the storage version, marked now that there are two; the
    // new one is not served until it converts.
    let v1_types = project.read("api/src/v1/frigate_types.rs");
    assert!(v1_types.contains("    version = \"v1\",\n    storageversion,\n"));
    let v2_types = project.read("api/src/v2/frigate_types.rs");
    assert!(v2_types.contains(
        "    subresource(status),\n    // Not served until it converts to v1, the storage version: \
         `cargo xtask create webhook\n    // --group ship --version v1 --kind Frigate --conversion \
         --spoke v2`.\n    unservedversion,\n)]"
    ));

    let before = snapshot(root);
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Frigate --conversion --spoke v2",
    );
    let written = changed(&before, &snapshot(root));
    assert_eq!(
        written,
        [
            "PROJECT",
            "api/src/v2/frigate_conversion.rs",
            "api/src/v2/frigate_types.rs",
            "api/src/v2/mod.rs",
            "config/default/kustomization.yaml",
            "controller/src/main.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(root, &written), Vec::<String>::new());
    let v2_types = project.read("api/src/v2/frigate_types.rs");
    assert!(v2_types.contains("    subresource(status),\n    hub = crate::v1::Frigate,\n)]"));
    assert!(!v2_types.contains("unservedversion"));
    let conversion = project.read("api/src/v2/frigate_conversion.rs");
    assert!(conversion.contains("impl Spoke<v1::Frigate> for Frigate {"));
    assert!(
        project
            .read("api/src/v2/mod.rs")
            .contains("mod frigate_conversion;\n")
    );
    assert!(project.read("controller/src/main.rs").contains(
        "    manager = manager.conversion::<api::v1::Frigate>();\n    // +kubebuilder:scaffold:webhooks\n"
    ));
    let default = project.read("config/default/kustomization.yaml");
    for index in [0, 1] {
        assert!(default.contains(&format!(
            "  - {{select: {{kind: CustomResourceDefinition, name: frigates.ship.example.com}}, \
             fieldPaths: [\"metadata.annotations.[cert-manager.io/inject-ca-from]\"], \
             options: {{delimiter: /, index: {index}, create: true}}}}\n"
        )));
    }

    // The second version's admission webhooks get a module of their own.
    scaffold(
        root,
        "create webhook --group ship --version v2 --kind Frigate --programmatic-validation",
    );
    let webhook_v2 = project.read("controller/src/frigate/webhook_v2.rs");
    assert!(webhook_v2.contains("use api::v2::{Frigate, FrigateSpec};"));
    assert!(webhook_v2.contains("name = \"vfrigate-v2.kb.io\","));
    assert!(
        project
            .read("controller/src/frigate/mod.rs")
            .contains("pub mod webhook;\npub mod webhook_v2;\n")
    );
    assert!(
        project
            .read("controller/src/main.rs")
            .contains("manager = manager.webhooks(controller::frigate::webhook_v2::webhooks());")
    );

    let recorded = Project::parse(&project.read("PROJECT")).unwrap();
    let v1 = recorded.resource("ship", "v1", "Frigate").unwrap();
    let webhooks = v1.webhooks.as_ref().unwrap();
    assert!(webhooks.conversion && webhooks.defaulting);
    assert_eq!(webhooks.spoke, ["v2"]);
    let v2 = recorded.resource("ship", "v2", "Frigate").unwrap();
    assert!(!v2.controller);
    assert!(v2.webhooks.as_ref().unwrap().validation);
}

/// A kind named `Webhook` (external-secrets has one) keeps its admission webhooks in
/// `admission`: `webhook::webhook` would repeat the kind's module (clippy's
/// `module_inception`).
#[test]
fn a_kind_named_webhook_keeps_its_webhooks_in_admission() {
    let project = NewProject::init();
    let root = &project.root;
    scaffold(root, "create api --group ship --version v1 --kind Webhook");
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Webhook --programmatic-validation",
    );
    assert!(
        project
            .read("controller/src/webhook/mod.rs")
            .contains("pub mod admission;\n")
    );
    assert!(root.join("controller/src/webhook/admission.rs").is_file());
    assert!(
        project
            .read("controller/src/main.rs")
            .contains("manager = manager.webhooks(controller::webhook::admission::webhooks());")
    );
    assert!(
        project
            .read("controller/tests/webhook_admission.rs")
            .contains("use controller::webhook::admission::{Validator, webhooks};")
    );
}

#[test]
fn create_webhook_writes_a_test_of_the_webhooks_it_writes() {
    let project = NewProject::init();
    let root = &project.root;
    scaffold(root, "create api --group ship --version v1 --kind Frigate");
    let before = snapshot(root);
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation",
    );
    let written = changed(&before, &snapshot(root));
    assert!(written.contains(&PathBuf::from("controller/tests/frigate_webhook.rs")));
    assert_eq!(with_placeholders(root, &written), Vec::<String>::new());
    let both = project.read("controller/tests/frigate_webhook.rs");
    for expected in [
        "use controller::frigate::webhook::{Defaulter, Validator, webhooks};",
        // Called directly...
        "Defaulter.default(&context(), &mut defaulted).await.unwrap();",
        "Validator.validate_create(&context(), &empty).await;",
        "[FieldError::invalid(\"spec.foo\", \"\", \"must not be empty\")]",
        // ...and by the apiserver, once it calls both.
        "plane.install_crds(&[Frigate::crd()]).await.unwrap();",
        "LoopbackRegistration::new(&format!(\"{namespace}-frigate\")).only_namespace(namespace);",
        "[\n            \"/mutate-ship-example-com-v1-frigate\",\n            \"/validate-ship-example-com-v1-frigate\",\n        ]",
        "assert_eq!(created.spec.foo.as_deref(), Some(\"default\"));",
        "assert_eq!(admitted.spec, valid.spec);",
        "assert_refused_at(refused, \"spec.foo\");",
        "assert_refused_at(updated, \"spec.foo\");",
    ] {
        assert!(both.contains(expected), "{expected} missing:\n{both}");
    }

    // One webhook each: the other's cases are left out.
    scaffold(
        root,
        "create api --group ship --version v1 --kind Armada --namespaced=false",
    );
    scaffold(
        root,
        "create webhook --group ship --version v1 --kind Armada --programmatic-validation",
    );
    let validating = project.read("controller/tests/armada_webhook.rs");
    assert!(validating.contains("let api: Api<Armada> = Api::all(client);"));
    assert!(validating.contains("assert_refused_at(refused, \"spec.foo\");"));
    assert!(!validating.contains("Defaulter"));
    scaffold(
        root,
        "create api --group fleet --version v1 --kind EscortShip --controller=false",
    );
    scaffold(
        root,
        "create webhook --group fleet --version v1 --kind EscortShip --defaulting",
    );
    let defaulting = project.read("controller/tests/escort_ship_webhook.rs");
    assert!(defaulting.contains("use controller::escort_ship::webhook::{Defaulter, webhooks};"));
    assert!(defaulting.contains("[\"/mutate-fleet-example-com-v1-escortship\"]"));
    assert!(!defaulting.contains("Validator") && !defaulting.contains("FieldError"));

    // A second version's webhooks have a module and a test of their own.
    scaffold(
        root,
        "create api --group ship --version v2 --kind Frigate --controller=false",
    );
    scaffold(
        root,
        "create webhook --group ship --version v2 --kind Frigate --defaulting",
    );
    let v2 = project.read("controller/tests/frigate_webhook_v2.rs");
    assert!(v2.contains("use controller::frigate::webhook_v2::{Defaulter, webhooks};"));
    assert!(v2.contains("use api::v2::Frigate;"));

    // Scaffolded again with --force, the test follows the webhooks.
    let before = snapshot(root);
    assert!(
        create_in(
            root,
            &create_command(
                "create webhook --group fleet --version v1 --kind EscortShip --programmatic-validation"
            )
        )
        .is_err()
    );
    assert!(snapshot(root) == before);
    scaffold(
        root,
        "create webhook --group fleet --version v1 --kind EscortShip --programmatic-validation --force",
    );
    let both = project.read("controller/tests/escort_ship_webhook.rs");
    assert!(both.contains("Defaulter.default(") && both.contains("Validator.validate_create("));
}

/// `PROJECT`'s entry of `kind` in `domain`.
fn recorded(project: &NewProject, domain: &str, kind: &str) -> scaffold::project::Resource {
    let text = project.read("PROJECT");
    let parsed = Project::parse(&text).unwrap();
    assert_eq!(parsed.to_yaml(), text, "PROJECT round-trips");
    parsed
        .resources
        .into_iter()
        .find(|resource| resource.domain == domain && resource.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} in {domain}:\n{text}"))
}

#[test]
fn resource_false_for_a_kubernetes_kind_scaffolds_a_controller_on_its_k8s_openapi_type() {
    let project = NewProject::init();
    let root = &project.root;
    let before = snapshot(root);
    let deployment = "create api --group apps --version v1 --kind Deployment --resource=false";
    scaffold(root, deployment);
    let written = changed(&before, &snapshot(root));
    // No types, CRD or sample: Kubernetes has them.
    assert_eq!(
        written,
        [
            "PROJECT",
            "controller/src/deployment/mod.rs",
            "controller/src/deployment/reconciler.rs",
            "controller/src/lib.rs",
            "controller/src/main.rs",
            "controller/tests/deployment_controller.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(root, &written), Vec::<String>::new());
    let module = project.read("controller/src/deployment/mod.rs");
    assert!(module.contains("use k8s_openapi::api::apps::v1::Deployment;"));
    assert!(module.contains(".controller_for::<Deployment>()"));
    let reconciler = project.read("controller/src/deployment/reconciler.rs");
    for resource in [
        "deployments",
        "deployments/status",
        "deployments/finalizers",
    ] {
        assert!(
            reconciler.contains(&format!(
                "    groups = [\"apps\"],\n    resources = [\"{resource}\"],\n"
            )),
            "{resource}:\n{reconciler}"
        );
    }
    let test = project.read("controller/tests/deployment_controller.rs");
    assert!(test.contains("assert_eq!(Deployment::api_version(&()), \"apps/v1\");"));
    assert!(test.contains("\"selector\": {\"matchLabels\": {\"app\": \"test\"}},"));
    assert!(!test.contains("serve_deployments"));
    assert!(
        project
            .read("controller/src/main.rs")
            .contains("manager = controller::deployment::setup_with_manager(manager);")
    );
    let entry = recorded(&project, "", "Deployment");
    assert!(entry.core && !entry.external && entry.controller && entry.api.is_none());
    assert_eq!(
        (entry.group.as_str(), entry.version.as_str()),
        ("apps", "v1")
    );
    assert_eq!(entry.path.as_deref(), Some("k8s_openapi::api::apps::v1"));
    assert!(project.read("PROJECT").contains(
        "- controller: true\n  core: true\n  group: apps\n  kind: Deployment\n  path: k8s_openapi::api::apps::v1\n  version: v1\n"
    ));

    // Once only, unless --force.
    let before = snapshot(root);
    let error = create_in(root, &create_command(deployment)).unwrap_err();
    assert!(
        format!("{error:#}").contains(
            "a controller for apps/v1 Deployment already exists (see PROJECT); pass --force"
        ),
        "{error:#}"
    );
    assert!(snapshot(root) == before);
    scaffold(root, &format!("{deployment} --force"));
    let error = create_in(
        root,
        &create_command("create webhook --group apps --version v1 --kind Deployment --defaulting"),
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Deployment (apps v1) is one of Kubernetes' kinds, with a controller only (see PROJECT): \
         `create webhook` scaffolds the webhooks of this project's kinds"
    );
    assert_eq!(
        Project::parse(&project.read("PROJECT"))
            .unwrap()
            .resources
            .len(),
        1
    );

    // Cluster-scoped, of the core group; a group spelt in full.
    scaffold(
        root,
        "create api --group core --version v1 --kind Namespace --resource=false",
    );
    let module = project.read("controller/src/namespace/mod.rs");
    assert!(module.contains(".controller_for::<Namespace>()"));
    assert!(
        project
            .read("controller/src/namespace/reconciler.rs")
            .contains("    groups = [\"core\"],\n    resources = [\"namespaces\"],\n")
    );
    assert!(
        project
            .read("controller/tests/namespace_controller.rs")
            .contains("let api: Api<Namespace> = Api::all(client);")
    );
    let namespace = recorded(&project, "", "Namespace");
    assert_eq!(namespace.group, "core");
    scaffold(
        root,
        "create api --group networking.k8s.io --version v1 --kind Ingress --resource=false",
    );
    let ingress = recorded(&project, "k8s.io", "Ingress");
    assert_eq!(ingress.group, "networking");
    assert!(
        project
            .read("controller/src/ingress/reconciler.rs")
            .contains("    groups = [\"networking.k8s.io\"],\n")
    );
}

#[test]
fn an_external_api_path_scaffolds_a_controller_on_another_crates_type() {
    let project = NewProject::init();
    let root = &project.root;
    // The crate of the type is the user's to add.
    let manifest = root.join("controller/Cargo.toml");
    let text = fs::read_to_string(&manifest).unwrap().replace(
        "[dependencies]\n",
        "[dependencies]\nwidget-api = { path = \"../../widgets\" }\n",
    );
    fs::write(&manifest, text).unwrap();
    let before = snapshot(root);
    scaffold(
        root,
        "create api --group gadgets --version v1alpha1 --kind Widget --resource=false \
         --external-api-path widget_api::v1alpha1::Widget --external-api-domain example.org \
         --namespaced=false --plural widgetz",
    );
    let written = changed(&before, &snapshot(root));
    assert_eq!(
        written,
        [
            "PROJECT",
            "controller/src/lib.rs",
            "controller/src/main.rs",
            "controller/src/widget/mod.rs",
            "controller/src/widget/reconciler.rs",
            "controller/tests/widget_controller.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(root, &written), Vec::<String>::new());
    let module = project.read("controller/src/widget/mod.rs");
    assert!(module.contains("use widget_api::v1alpha1::Widget;"));
    assert!(module.contains("another project's kind, from the `widget_api` crate:\n"));
    assert!(module.contains(".controller_for::<Widget>()"));
    assert!(
        project
            .read("controller/src/widget/reconciler.rs")
            .contains("    groups = [\"gadgets.example.org\"],\n    resources = [\"widgetz\"],\n")
    );
    // Its test gives the apiserver a stand-in CRD, unless it serves the kind already.
    let test = project.read("controller/tests/widget_controller.rs");
    for expected in [
        "serve_widgets(&client).await;",
        ".list_api_group_resources(\"gadgets.example.org/v1alpha1\")",
        "\"metadata\": {\"name\": \"widgetz.gadgets.example.org\"},",
        "\"scope\": \"Cluster\",",
        "\"spec\": {},",
        "assert_eq!(Widget::plural(&()), \"widgetz\");",
    ] {
        assert!(test.contains(expected), "{expected} missing:\n{test}");
    }
    let entry = recorded(&project, "example.org", "Widget");
    assert!(entry.external && !entry.core && entry.controller && entry.api.is_none());
    assert_eq!(entry.group, "gadgets");
    assert_eq!(entry.path.as_deref(), Some("widget_api::v1alpha1"));
    assert_eq!(entry.plural.as_deref(), Some("widgetz"));

    // A k8s-openapi type named so gets the sample of Kubernetes' kind.
    scaffold(
        root,
        "create api --group networking --version v1 --kind Ingress --resource=false \
         --external-api-path k8s_openapi::api::networking::v1 --external-api-domain k8s.io",
    );
    let test = project.read("controller/tests/ingress_controller.rs");
    assert!(test.contains("\"defaultBackend\""), "{test}");
    let ingress = recorded(&project, "k8s.io", "Ingress");
    assert!(ingress.external && !ingress.core);
    // A k8s-openapi module of a version the table leaves out: the kind's scope and plural.
    scaffold(
        root,
        "create api --group networking --version v1beta1 --kind ServiceCIDR --resource=false \
         --external-api-path k8s_openapi::api::networking::v1beta1 --external-api-domain k8s.io",
    );
    let test = project.read("controller/tests/service_cidr_controller.rs");
    assert!(
        test.contains("let api: Api<ServiceCIDR> = Api::all(client);"),
        "{test}"
    );
}

#[test]
fn the_external_api_options_go_together() {
    use clap::Parser as _;
    for line in [
        "create api --group g --version v1 --kind Widget --resource=false --external-api-path w::v1",
        "create api --group g --version v1 --kind Widget --resource=false --external-api-domain w.io",
    ] {
        let error = kubebuilder_cli::Cli::try_parse_from(
            std::iter::once("cargo xtask").chain(line.split_whitespace()),
        )
        .err()
        .unwrap_or_else(|| panic!("{line} parsed"));
        assert!(
            error
                .to_string()
                .contains("required arguments were not provided"),
            "{error}"
        );
    }
}

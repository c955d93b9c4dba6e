//! `create api --plugins deploy-image/v1-alpha` (kubebuilder's Getting Started operator) as
//! far as files go, without building anything: what it writes with and without its
//! optional options, where it changes the project's files, what PROJECT records, the CRD
//! on a real apiserver, and bad input, which must leave the tree byte-for-byte unchanged.
//! (Building the result and passing its own tests: `scaffold_init.rs`.)

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser as _;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use kubebuilder_cli::scaffold::project::{DeployImageOptions, DeployImageResource, Project};
use kubebuilder_cli::scaffold::{self, CreateCommand, create_in, edit};
use kubebuilder_cli::{Cli, Command};
use serde_json::json;

use common::{changed, init_project, parse, scaffold, snapshot, with_placeholders};

/// The command of kubebuilder's Getting Started, in this CLI's spelling.
const GETTING_STARTED: &str = "create api --group cache --version v1alpha1 --kind Memcached \
     --image memcached:1.6.26-alpine3.19 --image-container-command \
     memcached,--memory-limit=64,-o,modern,-v --image-container-port 11211 --run-as-user 1001 \
     --plugins deploy-image/v1-alpha";

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn project(root: &Path) -> Project {
    Project::parse(&read(root, "PROJECT")).unwrap()
}

/// `create api` with `args`, parsed as `cargo xtask` parses its command line: the command,
/// or clap's refusal.
fn create_api(args: &[&str]) -> Result<CreateCommand, String> {
    let line = ["cargo xtask", "create", "api"].iter().chain(args);
    match Cli::try_parse_from(line)
        .map_err(|error| error.to_string())?
        .command
    {
        Command::Scaffold(scaffold::Command::Create { command }) => Ok(command),
        _ => panic!("create api is a create command"),
    }
}

/// The deploy-image plugin's record of each kind in PROJECT: (kind, options).
fn plugin_records(root: &Path) -> Vec<(String, DeployImageOptions)> {
    project(root)
        .plugins
        .deploy_image
        .map(|plugin| plugin.resources)
        .unwrap_or_default()
        .into_iter()
        .map(|DeployImageResource { kind, options, .. }| (kind, options))
        .collect()
}

#[test]
fn the_plugin_writes_the_getting_started_operator_and_records_it() {
    let (_dir, root) = init_project("--license none");
    let before = snapshot(&root);
    // As a user runs it: the manifests are rendered too (in-process, nothing is built).
    create_in(&root, &create_api_line(GETTING_STARTED)).unwrap();
    let written = changed(&before, &snapshot(&root));
    assert_eq!(
        written,
        [
            "PROJECT",
            "api/src/lib.rs",
            "api/src/v1alpha1/memcached_types.rs",
            "api/src/v1alpha1/mod.rs",
            "config/crd/bases/cache.example.com_memcacheds.yaml",
            "config/crd/kustomization.yaml",
            "config/manager/manager.yaml",
            "config/rbac/kustomization.yaml",
            "config/rbac/memcached_admin_role.yaml",
            "config/rbac/memcached_editor_role.yaml",
            "config/rbac/memcached_viewer_role.yaml",
            "config/rbac/role.yaml",
            "config/samples/cache_v1alpha1_memcached.yaml",
            "config/samples/kustomization.yaml",
            "controller/src/lib.rs",
            "controller/src/main.rs",
            "controller/src/memcached/mod.rs",
            "controller/src/memcached/reconciler.rs",
            "controller/tests/memcached_controller.rs",
        ]
        .map(PathBuf::from)
    );
    assert_eq!(with_placeholders(&root, &written), Vec::<String>::new());

    // The API: `size` from 1 to 3, `containerPort`, and the conditions.
    let types = read(&root, "api/src/v1alpha1/memcached_types.rs");
    assert!(types.contains(
        "    #[kubebuilder(required, validation(minimum = 1, maximum = 3))]\n    pub size: i32,\n"
    ));
    assert!(types.contains("    pub container_port: i32,\n"));
    assert!(types.contains("list_type = \"map\", list_map_key = \"type\""));
    let crd = read(&root, "config/crd/bases/cache.example.com_memcacheds.yaml");
    for property in [
        "containerPort:",
        "size:",
        "conditions:",
        "maximum: 3",
        "minimum: 1",
    ] {
        assert!(crd.contains(property), "{property} in\n{crd}");
    }
    let sample = read(&root, "config/samples/cache_v1alpha1_memcached.yaml");
    assert!(
        sample
            .ends_with("  size: 1\n  # The port the operand listens on.\n  containerPort: 11211\n")
    );

    // The controller: the options in the container, the image from the manager's
    // environment, and the rules for what it touches.
    let module = read(&root, "controller/src/memcached/mod.rs");
    assert!(module.contains("pub const IMAGE_VARIABLE: &str = \"MEMCACHED_IMAGE\";"));
    assert!(module.contains("pub const DEFAULT_IMAGE: &str = \"memcached:1.6.26-alpine3.19\";"));
    assert!(module.contains(".owns::<Deployment>()"));
    let reconciler = read(&root, "controller/src/memcached/reconciler.rs");
    for piece in [
        "pub const FINALIZER: &str = \"cache.example.com/finalizer\";",
        "command: Some(Vec::from(\n                [\"memcached\", \"--memory-limit=64\", \"-o\", \"modern\", \"-v\"]",
        "container_port: memcached.spec.container_port,",
        "name: Some(\"memcached\".to_owned()),",
        "run_as_user: Some(1001),",
        "allow_privilege_escalation: Some(false),",
        "type_: \"RuntimeDefault\".to_owned(),",
        "controllerutil::set_controller_reference(memcached, &mut deployment)?;",
        "ctx.apply(&deployment)",
        "ctx.warning(memcached, DELETING, note)",
    ] {
        assert!(reconciler.contains(piece), "{piece} in\n{reconciler}");
    }
    let role = read(&root, "config/rbac/role.yaml");
    for rule in ["- deployments\n", "- pods\n", "- memcacheds/finalizers\n"] {
        assert!(role.contains(rule), "{rule} in\n{role}");
    }
    let test = read(&root, "controller/tests/memcached_controller.rs");
    for piece in [
        "\"spec\": {\"size\": 1, \"containerPort\": 11211},",
        "assert_eq!(ports, [11211]);",
        "assert_eq!(security.run_as_user, Some(1001));",
    ] {
        assert!(test.contains(piece), "{piece} in\n{test}");
    }
    assert!(
        read(&root, "controller/src/main.rs")
            .contains("manager = controller::memcached::setup_with_manager(manager);")
    );
    let manager = read(&root, "config/manager/manager.yaml");
    assert!(manager.contains(
        "      - name: manager\n        env:\n        - name: MEMCACHED_IMAGE\n          \
         value: \"memcached:1.6.26-alpine3.19\"\n"
    ));

    // PROJECT: the kind, and the plugin with the options as given.
    let recorded = project(&root);
    let memcached = recorded.resource("cache", "v1alpha1", "Memcached").unwrap();
    assert!(memcached.controller && memcached.api.as_ref().is_some_and(|api| api.namespaced));
    assert_eq!(
        plugin_records(&root),
        [(
            "Memcached".to_owned(),
            DeployImageOptions {
                container_command: Some("memcached,--memory-limit=64,-o,modern,-v".to_owned()),
                container_port: Some("11211".to_owned()),
                image: "memcached:1.6.26-alpine3.19".to_owned(),
                run_as_user: Some("1001".to_owned()),
            }
        )]
    );
    let text = read(&root, "PROJECT");
    assert!(
        text.contains("\nplugins:\n  deploy-image.kubebuilder-rs/v1-alpha:\n    resources:\n"),
        "{text}"
    );
}

/// `create webhook` on the plugin's kind, which has no example field `foo`: the webhooks
/// are left to the user with TODOs, as kubebuilder leaves them, and their tests create the
/// kind's sample. (The project's own tests compile and run them: `scaffold_init.rs`.)
#[test]
fn webhooks_of_the_plugins_kind_check_nothing_yet_and_are_tested_with_its_sample() {
    let (_dir, root) = init_project("--license none");
    create_in(&root, &create_api_line(GETTING_STARTED)).unwrap();
    scaffold(
        &root,
        "create webhook --group cache --version v1alpha1 --kind Memcached --defaulting \
         --programmatic-validation",
    );
    let module = read(&root, "controller/src/memcached/webhook.rs");
    assert!(!module.contains("foo"), "{module}");
    assert!(module.contains("fn set_defaults(_spec: &mut MemcachedSpec) {\n    // TODO(user)"));
    assert!(module.contains("fn validate(_spec: &MemcachedSpec)"));
    assert!(!module.contains("FieldPath,"), "{module}");
    let test = read(&root, "controller/tests/memcached_webhook.rs");
    assert!(!test.contains("foo"), "{test}");
    let sample = r#"json!({"size":1,"containerPort":11211})"#;
    assert_eq!(test.matches(sample).count(), 4, "{test}");
}

/// `create api` of `line` (as `cargo xtask` splits it, at whitespace).
fn create_api_line(line: &str) -> CreateCommand {
    let args: Vec<&str> = line.split_whitespace().skip(2).collect();
    create_api(&args).unwrap_or_else(|error| panic!("{line}: {error}"))
}

#[test]
fn with_the_image_alone_the_container_runs_the_images_own_command_and_user() {
    let (_dir, root) = init_project("--license none");
    scaffold(
        &root,
        "create api --group cache --version v1alpha1 --kind Busybox --image busybox:1.36.1 \
         --plugins deploy-image/v1-alpha",
    );
    let types = read(&root, "api/src/v1alpha1/busybox_types.rs");
    assert!(!types.contains("container_port"), "{types}");
    let reconciler = read(&root, "controller/src/busybox/reconciler.rs");
    for absent in ["command:", "ports:", "run_as_user", "ContainerPort"] {
        assert!(!reconciler.contains(absent), "{absent} in\n{reconciler}");
    }
    let test = read(&root, "controller/tests/busybox_controller.rs");
    for piece in [
        "\"spec\": {\"size\": 1},",
        "assert_eq!(container.command, None);",
        "assert_eq!(ports, Vec::<i32>::new());",
        "assert_eq!(security.run_as_user, None);",
    ] {
        assert!(test.contains(piece), "{piece} in\n{test}");
    }
    assert!(read(&root, "config/samples/cache_v1alpha1_busybox.yaml").ends_with("  size: 1\n"));
    let files: Vec<PathBuf> = ["api", "controller", "config"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(with_placeholders(&root, &files), Vec::<String>::new());
    assert_eq!(
        plugin_records(&root),
        [(
            "Busybox".to_owned(),
            DeployImageOptions {
                container_command: None,
                container_port: None,
                image: "busybox:1.36.1".to_owned(),
                run_as_user: None,
            }
        )]
    );
}

#[test]
fn each_kind_gets_its_variable_and_record_and_force_replaces_them() {
    // A namespaced project: its manager has an `env` already, and the rules are its
    // namespace's.
    let (_dir, root) = init_project("--license none --namespaced");
    scaffold(&root, GETTING_STARTED);
    scaffold(
        &root,
        "create api --group cache --version v1alpha1 --kind Busybox --image busybox:1.36.1 \
         --plugins deploy-image/v1-alpha",
    );
    let manager = read(&root, "config/manager/manager.yaml");
    assert!(manager.contains(
        "        env:\n        - name: BUSYBOX_IMAGE\n          value: \"busybox:1.36.1\"\n        \
         - name: MEMCACHED_IMAGE\n          value: \"memcached:1.6.26-alpine3.19\"\n        \
         - name: WATCH_NAMESPACE\n"
    ));
    let reconciler = read(&root, "controller/src/memcached/reconciler.rs");
    assert!(reconciler.contains(
        "    groups = [\"apps\"],\n    namespace = \"fleet-system\",\n    resources = [\"deployments\"],"
    ));

    // Again with --force and another image: the variable and the record change in place.
    scaffold(
        &root,
        "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6.27 \
         --plugins deploy-image/v1-alpha --force",
    );
    let forced = read(&root, "config/manager/manager.yaml");
    assert_eq!(
        forced,
        manager.replace("memcached:1.6.26-alpine3.19", "memcached:1.6.27")
    );
    let records: Vec<(String, String)> = plugin_records(&root)
        .into_iter()
        .map(|(kind, options)| (kind, options.image))
        .collect();
    assert_eq!(
        records,
        [
            ("Busybox".to_owned(), "busybox:1.36.1".to_owned()),
            ("Memcached".to_owned(), "memcached:1.6.27".to_owned()),
        ]
    );

    // Under its group, in the multigroup layout, a kind's variable names the group too.
    let Command::Scaffold(scaffold::Command::Edit(multigroup)) = parse("edit --multigroup") else {
        panic!("edit --multigroup is edit");
    };
    edit::plan(&root, &multigroup).unwrap().apply().unwrap();
    scaffold(
        &root,
        "create api --group sea --version v1 --kind Memcached --image memcached:1.6.27 \
         --plugins deploy-image/v1-alpha",
    );
    assert!(
        read(&root, "controller/src/sea/memcached/mod.rs")
            .contains("pub const IMAGE_VARIABLE: &str = \"SEA_MEMCACHED_IMAGE\";")
    );
    assert!(
        read(&root, "config/manager/manager.yaml").contains(
            "        - name: SEA_MEMCACHED_IMAGE\n          value: \"memcached:1.6.27\"\n"
        )
    );
}

#[test]
fn bad_input_is_refused_naming_the_problem_and_leaves_the_tree_byte_for_byte_unchanged() {
    let (_dir, root) = init_project("--license none");
    scaffold(&root, GETTING_STARTED);
    let before = snapshot(&root);
    let plugin = ["--plugins", "deploy-image/v1-alpha"];
    let new_kind = [
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Busybox",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> { [&new_kind[..], extra].concat() };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            with(&[
                "--image",
                "Busybox:1.36",
                "--plugins",
                "deploy-image/v1-alpha",
            ]),
            "invalid --image \"Busybox:1.36\": the name component \"Busybox\" is not lower-case",
        ),
        (
            with(&["--image", "busybox:", "--plugins", "deploy-image/v1-alpha"]),
            "invalid --image \"busybox:\": the tag \"\"",
        ),
        (
            with(&["--image", "busy box", "--plugins", "deploy-image/v1-alpha"]),
            "invalid --image \"busy box\"",
        ),
        (
            with(&[
                "--image",
                "busybox",
                "--image-container-command",
                "",
                "--plugins",
                "deploy-image/v1-alpha",
            ]),
            "--image-container-command is empty",
        ),
        (
            with(&[
                "--image",
                "busybox",
                "--image-container-command",
                "sleep,,1",
                "--plugins",
                "deploy-image/v1-alpha",
            ]),
            "--image-container-command \"sleep,,1\": argument 2 is empty",
        ),
        (
            with(&[
                "--image",
                "busybox",
                "--namespaced=false",
                "--plugins",
                "deploy-image/v1-alpha",
            ]),
            "it does not take --namespaced=false",
        ),
        (
            with(&[
                "--image",
                "busybox",
                "--controller=false",
                "--plugins",
                "deploy-image/v1-alpha",
            ]),
            "it does not take --controller=false",
        ),
        (
            [
                &GETTING_STARTED_KIND[..],
                &["--image", "memcached", "--plugins", "deploy-image/v1-alpha"],
            ]
            .concat(),
            "the API cache.example.com/v1alpha1 Memcached already exists (see PROJECT); pass \
             --force to scaffold it again",
        ),
        (
            [
                &GETTING_STARTED_KIND[..],
                &[
                    "--image",
                    "memcached",
                    "--resource=false",
                    "--plugins",
                    "deploy-image/v1-alpha",
                ],
            ]
            .concat(),
            "it does not take --resource=false",
        ),
        (
            vec![
                "--group",
                "cache",
                "--version",
                "v1beta1",
                "--kind",
                "Memcached",
                "--image",
                "memcached",
                "--plugins",
                "deploy-image/v1-alpha",
            ],
            "--plugins deploy-image/v1-alpha scaffolds a new kind, and Memcached exists already \
             in v1alpha1 (see PROJECT)",
        ),
    ];
    for (args, expected) in cases {
        let command = create_api(&args).unwrap_or_else(|error| panic!("{args:?}: {error}"));
        let error = create_in(&root, &command).unwrap_err();
        assert!(
            format!("{error:#}").contains(expected),
            "{args:?}: expected {expected:?}, got: {error:#}"
        );
        let after = snapshot(&root);
        assert!(
            after == before,
            "{args:?} changed {:?}",
            changed(&before, &after)
        );
    }

    // What the command line refuses before anything is planned.
    for (extra, expected) in [
        (
            &["--image", "busybox", "--image-container-port", "0"][..],
            "invalid value '0' for '--image-container-port <PORT>': 0 is not in 1..=65535",
        ),
        (
            &["--image", "busybox", "--image-container-port", "65536"],
            "invalid value '65536' for '--image-container-port <PORT>': 65536 is not in 1..=65535",
        ),
        (
            &["--image", "busybox", "--run-as-user", "-1"],
            "invalid value '-1' for '--run-as-user <UID>': -1 is not in 0..",
        ),
        (
            &["--image", "busybox", "--plugins", "go/v4"],
            "invalid value 'go/v4' for '--plugins <PLUGIN>'",
        ),
    ] {
        let args = [&new_kind[..], extra, &plugin[..]].concat();
        let error = create_api(&args).unwrap_err();
        assert!(
            error.contains(expected),
            "{args:?}: expected {expected:?}, got: {error}"
        );
    }
    for (args, missing) in [
        (with(&["--image", "busybox"]), "--plugins <PLUGIN>"),
        (with(&plugin), "--image <IMAGE>"),
    ] {
        let error = create_api(&args).unwrap_err();
        assert!(
            error.contains("the following required arguments were not provided")
                && error.contains(missing),
            "{args:?}: expected {missing} to be required, got: {error}"
        );
    }
}

/// The kind of [`GETTING_STARTED`].
const GETTING_STARTED_KIND: [&str; 6] = [
    "--group",
    "cache",
    "--version",
    "v1alpha1",
    "--kind",
    "Memcached",
];

#[tokio::test]
async fn the_crd_admits_the_sample_and_refuses_a_size_out_of_range() {
    let (_dir, root) = init_project("--license none");
    create_in(&root, &create_api_line(GETTING_STARTED)).unwrap();
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&read(
        &root,
        "config/crd/bases/cache.example.com_memcacheds.yaml",
    ))
    .unwrap();
    let plane = kubebuilder_envtest::shared();
    plane.install_crds(&[crd]).await.unwrap();
    let namespace = plane.create_namespace("memcached").await.unwrap();
    let gvk = GroupVersionKind::gvk("cache.example.com", "v1alpha1", "Memcached");
    let api: Api<DynamicObject> = Api::namespaced_with(
        plane.client().await.unwrap(),
        &namespace,
        &ApiResource::from_gvk_with_plural(&gvk, "memcacheds"),
    );
    let sample: DynamicObject =
        serde_saphyr::from_str(&read(&root, "config/samples/cache_v1alpha1_memcached.yaml"))
            .unwrap();
    let created = api.create(&PostParams::default(), &sample).await.unwrap();
    assert_eq!(
        created.data["spec"],
        json!({"size": 1, "containerPort": 11211})
    );
    for (size, bound) in [
        (0, "should be greater than or equal to 1"),
        (4, "should be less than or equal to 3"),
    ] {
        let mut bad = sample.clone();
        bad.metadata.name = Some(format!("size-{size}"));
        bad.data["spec"]["size"] = json!(size);
        match api.create(&PostParams::default(), &bad).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!(status.code, 422, "{status:?}");
                assert!(status.message.contains(bound), "{}", status.message);
            }
            other => panic!("size {size} was not refused: {other:?}"),
        }
    }
}

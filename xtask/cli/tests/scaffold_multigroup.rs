//! `edit --multigroup` and the multigroup layout as far as files go, without building
//! anything: the same kind in two groups, each under its group; kinds made before staying
//! where they are; and the refusals, which leave the tree byte-for-byte unchanged.
//! (Building and testing such a project: `scaffold_init.rs`.)

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use kubebuilder_cli::Command;
use kubebuilder_cli::scaffold::project::Project;
use kubebuilder_cli::scaffold::{self, create_in, edit};

use common::{changed, create_command, init_project, parse, scaffold, snapshot, with_placeholders};

/// A project made by `init` without a license header, so that the files read as their
/// templates.
fn new_project() -> (tempfile::TempDir, PathBuf) {
    init_project("--license none")
}

/// `edit`'s arguments from a command line.
fn edit_args(line: &str) -> edit::Args {
    match parse(line) {
        Command::Scaffold(scaffold::Command::Edit(args)) => args,
        _ => panic!("{line} is not edit"),
    }
}

/// An `edit` command line planned and written in `root`.
fn edit(root: &Path, line: &str) {
    edit::plan(root, &edit_args(line))
        .unwrap_or_else(|e| panic!("{line}: {e:#}"))
        .apply()
        .unwrap();
}

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn project(root: &Path) -> Project {
    Project::parse(&read(root, "PROJECT")).unwrap()
}

fn recorded_path(root: &Path, group: &str, version: &str, kind: &str) -> Option<String> {
    project(root)
        .resource(group, version, kind)
        .unwrap_or_else(|| panic!("PROJECT has no {group} {version} {kind}"))
        .path
        .clone()
}

#[test]
fn edit_multigroup_records_it_in_project_alone() {
    let (_dir, root) = new_project();
    let before = snapshot(&root);
    edit(&root, "edit --multigroup");
    assert_eq!(
        changed(&before, &snapshot(&root)),
        [PathBuf::from("PROJECT")]
    );
    assert!(project(&root).multigroup);
    assert!(read(&root, "PROJECT").contains("\nmultigroup: true\n"));

    // Again: nothing to write. Off while no kind is under its group: as before.
    let on = snapshot(&root);
    edit(&root, "edit --multigroup=true");
    assert!(snapshot(&root) == on);
    edit(&root, "edit --multigroup=false");
    assert!(snapshot(&root) == before);
}

#[test]
fn the_same_kind_in_two_groups_goes_under_each_group() {
    let (_dir, root) = new_project();
    edit(&root, "edit --multigroup");
    let before = snapshot(&root);
    for group in ["ship", "sea"] {
        scaffold(
            &root,
            &format!("create api --group {group} --version v1 --kind Frigate"),
        );
        scaffold(
            &root,
            &format!(
                "create webhook --group {group} --version v1 --kind Frigate --defaulting \
                 --programmatic-validation"
            ),
        );
    }
    let after = snapshot(&root);
    let written = changed(&before, &after);
    assert_eq!(with_placeholders(&root, &written), Vec::<String>::new());
    for group in ["ship", "sea"] {
        for file in [
            format!("api/src/{group}/mod.rs"),
            format!("api/src/{group}/v1/mod.rs"),
            format!("api/src/{group}/v1/frigate_types.rs"),
            format!("controller/src/{group}/mod.rs"),
            format!("controller/src/{group}/frigate/mod.rs"),
            format!("controller/src/{group}/frigate/reconciler.rs"),
            format!("controller/src/{group}/frigate/webhook.rs"),
            format!("controller/tests/{group}_frigate_controller.rs"),
            format!("controller/tests/{group}_frigate_webhook.rs"),
            format!("config/samples/{group}_v1_frigate.yaml"),
        ] {
            assert!(written.contains(&PathBuf::from(&file)), "{file} missing");
        }
        assert!(read(&root, &format!("api/src/{group}/mod.rs")).contains("\npub mod v1;\n"));
        assert!(read(&root, "api/src/lib.rs").contains(&format!("\npub mod {group};\n")));
        assert!(
            read(&root, &format!("controller/src/{group}/mod.rs")).contains("\npub mod frigate;\n")
        );
        assert!(read(&root, "controller/src/lib.rs").contains(&format!("\npub mod {group};\n")));
        assert_eq!(
            recorded_path(&root, group, "v1", "Frigate").as_deref(),
            Some(format!("api::{group}::v1").as_str())
        );

        let controller = read(&root, &format!("controller/src/{group}/frigate/mod.rs"));
        assert!(controller.contains(&format!("use api::{group}::v1::Frigate;")));
        // The manager refuses two controllers of one name.
        assert!(controller.contains(&format!(
            "pub const CONTROLLER_NAME: &str = \"{group}-frigate\";"
        )));
        let webhook = read(&root, &format!("controller/src/{group}/frigate/webhook.rs"));
        assert!(webhook.contains(&format!("use api::{group}::v1::{{Frigate, FrigateSpec}};")));
        // The apiserver refuses two webhooks of one name in a configuration.
        assert!(webhook.contains(&format!("name = \"m{group}-frigate-v1.kb.io\"")));
        assert!(webhook.contains(&format!("name = \"v{group}-frigate-v1.kb.io\"")));
        let test = read(
            &root,
            &format!("controller/tests/{group}_frigate_webhook.rs"),
        );
        assert!(test.contains(&format!("use controller::{group}::frigate::webhook::{{")));

        let main = read(&root, "controller/src/main.rs");
        for line in [
            format!("manager = controller::{group}::frigate::setup_with_manager(manager);"),
            format!(
                "manager = manager.webhooks(controller::{group}::frigate::webhook::webhooks());"
            ),
        ] {
            assert!(main.contains(&line), "{line} missing from main.rs:\n{main}");
        }
    }
    assert!(!root.join("api/src/v1").exists());
    assert!(!root.join("controller/src/frigate").exists());
}

#[test]
fn a_kind_made_before_multigroup_stays_flat_and_both_take_versions_and_conversion() {
    let (_dir, root) = new_project();
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    edit(&root, "edit --multigroup");
    scaffold(&root, "create api --group sea --version v1 --kind Frigate");
    for group in ["ship", "sea"] {
        scaffold(
            &root,
            &format!("create api --group {group} --version v2 --kind Frigate"),
        );
        scaffold(
            &root,
            &format!(
                "create webhook --group {group} --version v1 --kind Frigate --conversion --spoke v2"
            ),
        );
    }

    // The flat kind: its new version beside its first, its conversion through `api::v1`.
    assert_eq!(
        recorded_path(&root, "ship", "v2", "Frigate").as_deref(),
        Some("api::v2")
    );
    assert!(read(&root, "api/src/v2/frigate_types.rs").contains("hub = crate::v1::Frigate,"));
    assert!(read(&root, "api/src/v2/frigate_conversion.rs").contains("use crate::v1;"));
    assert!(read(&root, "api/src/v1/frigate_types.rs").contains("\n    storageversion,\n"));
    assert!(root.join("controller/src/frigate/reconciler.rs").exists());
    assert!(root.join("controller/tests/frigate_controller.rs").exists());

    // The grouped one: the same, under its group.
    assert_eq!(
        recorded_path(&root, "sea", "v2", "Frigate").as_deref(),
        Some("api::sea::v2")
    );
    let sea_v2 = read(&root, "api/src/sea/v2/frigate_types.rs");
    assert!(
        sea_v2.contains("hub = crate::sea::v1::Frigate,"),
        "{sea_v2}"
    );
    assert!(!sea_v2.contains("unservedversion"));
    assert!(read(&root, "api/src/sea/v2/frigate_conversion.rs").contains("use crate::sea::v1;"));
    assert!(read(&root, "api/src/sea/v2/mod.rs").contains("\nmod frigate_conversion;\n"));
    assert!(read(&root, "api/src/sea/v1/frigate_types.rs").contains("\n    storageversion,\n"));
    assert!(read(&root, "api/src/sea/mod.rs").contains("\npub mod v1;\npub mod v2;\n"));
    assert!(!root.join("controller/src/sea/frigate/webhook.rs").exists());

    let main = read(&root, "controller/src/main.rs");
    for line in [
        "manager = controller::frigate::setup_with_manager(manager);",
        "manager = controller::sea::frigate::setup_with_manager(manager);",
        "manager = manager.conversion::<api::v1::Frigate>();",
        "manager = manager.conversion::<api::sea::v1::Frigate>();",
    ] {
        assert!(main.contains(line), "{line} missing from main.rs:\n{main}");
    }
    let files: Vec<PathBuf> = snapshot(&root).into_keys().collect();
    assert_eq!(with_placeholders(&root, &files), Vec::<String>::new());
}

/// Runs `line` (an `edit` or `create` command line) in `root`, which must fail saying
/// `expected` and write nothing.
fn assert_refused_unchanged(root: &Path, line: &str, expected: &str) {
    let before = snapshot(root);
    let error = if line.starts_with("edit") {
        edit::plan(root, &edit_args(line)).map(drop).unwrap_err()
    } else {
        create_in(root, &create_command(line)).unwrap_err()
    };
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

#[test]
fn without_multigroup_the_same_kind_in_another_group_is_refused_naming_the_fix() {
    let (_dir, root) = new_project();
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    for version in ["v1", "v2"] {
        assert_refused_unchanged(
            &root,
            &format!("create api --group sea --version {version} --kind Frigate"),
            "Frigate exists already in group ship.example.com (see PROJECT), and in this \
             project's layout the kinds of all groups share api/src/<version>/ and \
             controller/src/<kind>/: switch to the multigroup layout first with `cargo xtask \
             edit --multigroup`",
        );
    }
    assert_refused_unchanged(
        &root,
        "create api --group sea --version v1 --kind Frigate --force",
        "cargo xtask edit --multigroup",
    );
}

#[test]
fn edit_refuses_what_it_cannot_do_and_bad_groups_are_refused_in_the_multigroup_layout() {
    let (_dir, root) = new_project();
    assert_refused_unchanged(
        &root,
        "edit",
        "nothing to change: `edit` changes the layout with --multigroup",
    );
    edit(&root, "edit --multigroup");
    scaffold(&root, "create api --group ship --version v1 --kind Frigate");
    assert_refused_unchanged(
        &root,
        "edit --multigroup=false",
        "--multigroup=false: these kinds are in the multigroup layout (see PROJECT): ship v1 \
         Frigate",
    );
    for (group, why) in [
        (
            "3d",
            "invalid --group \"3d\" in the multigroup layout: its Rust module `3d` (api::3d::<version>, controller::3d::<kind>) would start with a digit",
        ),
        (
            "type",
            "its Rust module `type` (api::type::<version>, controller::type::<kind>) would be a Rust keyword",
        ),
        (
            "v2",
            "its Rust module `v2` (api::v2::<version>, controller::v2::<kind>) would read as a version module",
        ),
        (
            "kube",
            "its Rust module `kube` (api::kube::<version>, controller::kube::<kind>) is a name the scaffolded code uses itself",
        ),
        (
            "ship.other",
            "its Rust module `ship` (api::ship::<version>, controller::ship::<kind>) is group ship's already",
        ),
    ] {
        assert_refused_unchanged(
            &root,
            &format!("create api --group {group} --version v1 --kind Corvette"),
            why,
        );
    }
    // `-` becomes `_`; a second group with the same first label is refused then too.
    scaffold(
        &root,
        "create api --group sea-life --version v1 --kind Corvette",
    );
    assert!(root.join("api/src/sea_life/v1/corvette_types.rs").exists());
    assert_refused_unchanged(
        &root,
        "create api --group sea-life.other --version v1 --kind Corvette",
        "its Rust module `sea_life` (api::sea_life::<version>, controller::sea_life::<kind>) is \
         group sea-life's already",
    );
}

//! The reader on small crates: what it reads, and each thing that makes it defer to a build.
//! That it reads what a build registers is tested on the conformance fixtures and the
//! repository's crates (`kubebuilder-macros`' `conformance` and `source_reader` tests).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use super::*;

/// The declarations of a one-file crate with `source` as its `lib.rs`.
fn read_lib(source: &str) -> Result<Declarations, DeferToBuild> {
    read_files(&[("lib.rs", source)])
}

/// The declarations of a crate of these files, `lib.rs` its root.
fn read_files(files: &[(&str, &str)]) -> Result<Declarations, DeferToBuild> {
    let dir = tempfile::tempdir().unwrap();
    for (name, source) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, source).unwrap();
    }
    let root = dir.path().join("lib.rs");
    let externs = ["k8s_openapi", "kubebuilder", "serde", "serde_json"];
    let krate = Crate {
        name: "api".to_owned(),
        root,
        externs: externs
            .iter()
            .map(|name| ((*name).to_owned(), (*name).to_owned()))
            .collect(),
    };
    read_crates(&[krate], &crd::Options::default())
}

/// The reason the crate is not read.
fn deferred_reason(source: &str) -> String {
    match read_lib(source) {
        Ok(_) => panic!("read without a build:\n{source}"),
        Err(DeferToBuild(reason)) => reason,
    }
}

/// The spec's properties of the one CRD the crate declares.
fn spec_properties(source: &str) -> Value {
    let declarations = read_lib(source).unwrap_or_else(|e| panic!("{e}"));
    let crd = serde_json::to_value(&declarations.crds[0]).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        .clone()
}

const KIND: &str = r#"
#[kubebuilder::resource(group = "ship.example.com", version = "v1", kind = "Frigate")]
pub struct FrigateSpec {
    #[kubebuilder(validation(minimum = 1))]
    pub crew: i32,
}
"#;

#[test]
fn a_kind_reads_with_its_markers() {
    assert_eq!(
        spec_properties(KIND),
        json!({"crew": {"type": "integer", "format": "int32", "minimum": 1.0}})
    );
}

#[test]
fn a_schema_attribute_below_the_resource_holds_the_specs_markers() {
    let source = KIND.replace(
        "pub struct FrigateSpec",
        "#[kubebuilder::schema(validation(max_properties = 3))]\npub struct FrigateSpec",
    );
    let declarations = read_lib(&source).unwrap_or_else(|e| panic!("{e}"));
    let crd = serde_json::to_value(&declarations.crds[0]).unwrap();
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(spec["maxProperties"], 3);
    // Above it, the schema attribute would expand first, over the resource attribute.
    let above = format!("#[kubebuilder::schema]\n{}", KIND.trim_start());
    assert!(deferred_reason(&above).contains("kubebuilder :: resource"));
}

#[test]
fn types_resolve_through_modules_imports_aliases_and_globs() {
    let source = r#"
        mod names {
            pub type Crew = std::vec::Vec<String>;
            #[kubebuilder::schema]
            pub enum Class { Light, Heavy }
        }
        mod hull {
            pub use super::names::*;
        }
        use hull::{Class as Kind, Crew};
        use std::collections::BTreeMap;

        #[kubebuilder::resource(group = "ship.example.com", version = "v1", kind = "Frigate")]
        pub struct FrigateSpec {
            pub crew: Crew,
            pub class: Kind,
            pub cargo: Option<BTreeMap<String, crate::names::Class>>,
            pub raw: Vec<u8>,
        }
    "#;
    assert_eq!(
        spec_properties(source),
        json!({
            "cargo": {"type": "object", "additionalProperties": {"type": "string", "enum": ["Light", "Heavy"]}},
            "class": {"type": "string", "enum": ["Light", "Heavy"]},
            "crew": {"type": "array", "items": {"type": "string"}},
            "raw": {"type": "string", "format": "byte"},
        })
    );
}

#[test]
fn test_only_items_are_left_out() {
    let source = format!(
        "{KIND}\n#[cfg(test)]\nmod tests {{\n    #[kubebuilder::schema]\n    pub struct Broken {{ pub x: NotAType }}\n}}\n"
    );
    assert!(read_lib(&source).is_ok());
}

#[test]
fn module_files_load_as_rustc_finds_them_and_test_only_ones_are_left_out() {
    let test_only =
        "#![cfg(test)]\n#[kubebuilder::schema]\npub struct Broken { pub x: NotAType }\n";
    let files = [
        ("lib.rs", "mod v1;\nmod fixtures;\n"),
        ("v1.rs", "mod frigate_types;\n"),
        ("v1/frigate_types.rs", KIND),
        ("fixtures/mod.rs", test_only),
    ];
    let declarations = read_files(&files).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(declarations.crds.len(), 1);
    let reason = match read_files(&files[..3]) {
        Err(DeferToBuild(reason)) => reason,
        Ok(_) => panic!("a missing module file was read"),
    };
    assert!(reason.contains("fixtures/mod.rs"), "{reason}");
}

#[test]
fn another_cfg_defers_to_the_build() {
    let source = format!("#[cfg(feature = \"big\")]\n{KIND}");
    assert!(deferred_reason(&source).contains("`cfg` other than `test`"));
}

#[test]
fn item_macros_defer_to_the_build_but_macro_rules_without_attributes() {
    assert!(read_lib(&format!("{KIND}\nmacro_rules! nothing {{ () => {{}} }}")).is_ok());
    let reason = deferred_reason(&format!("{KIND}\nsome_crate::declare! {{ Frigate }}"));
    assert!(reason.contains("item macro `declare!`"), "{reason}");
    let reason = deferred_reason(&format!(
        "{KIND}\nmacro_rules! kind {{ () => {{ #[kubebuilder::schema] pub struct X; }} }}"
    ));
    assert!(reason.contains("macro_rules!"), "{reason}");
}

#[test]
fn attributes_where_the_reader_does_not_look_defer_to_the_build() {
    let reason = deferred_reason(&format!(
        "{KIND}\nfn f() {{ #[kubebuilder::schema] struct Local {{ a: i32 }} }}"
    ));
    assert!(
        reason.contains("where the source reader does not look"),
        "{reason}"
    );
}

#[test]
fn imports_of_the_attribute_macros_defer_to_the_build() {
    for import in [
        "use kubebuilder::schema;",
        "use kubebuilder::{rbac as r};",
        "use kubebuilder::*;",
    ] {
        let reason = deferred_reason(&format!("{import}\n{KIND}"));
        assert!(
            reason.contains("names a kubebuilder attribute"),
            "{import}: {reason}"
        );
    }
    // Modules of the same names are fine.
    assert!(read_lib(&format!("use kubebuilder::schema::Schema as _;\n{KIND}")).is_ok());
}

#[test]
fn attributes_that_could_change_an_api_type_defer_to_the_build() {
    for (from, to) in [
        ("pub struct", "#[some_crate::reshape]\npub struct"),
        ("pub crew", "#[cfg(feature = \"crew\")]\n    pub crew"),
        (
            "pub crew",
            "#[doc = include_str!(\"crew.md\")]\n    pub crew",
        ),
    ] {
        let reason = deferred_reason(&KIND.replacen(from, to, 1));
        assert!(
            reason.contains("which the reader does not follow"),
            "{to}: {reason}"
        );
    }
}

#[test]
fn a_type_the_reader_does_not_know_defers_to_the_build() {
    let source = KIND.replace("pub crew: i32", "pub crew: std::time::Duration");
    let reason = deferred_reason(&source.replace("#[kubebuilder(validation(minimum = 1))]", ""));
    assert!(reason.contains("std::time::Duration"), "{reason}");
    let reason = deferred_reason(&KIND.replace("pub crew: i32", "pub crew: Hull"));
    assert!(reason.contains("`Hull` is not in scope"), "{reason}");
}

#[test]
fn a_mistake_the_macros_refuse_defers_to_the_build() {
    let reason = deferred_reason(&KIND.replace("minimum = 1", "minimum = 1, minimum = 2"));
    assert!(
        reason.contains("an attribute the macros refuse"),
        "{reason}"
    );
    // A check the generated constants run: `minimum` on a string.
    let reason = deferred_reason(&KIND.replace("pub crew: i32", "pub crew: String"));
    assert!(
        reason.contains("must apply minimum to a numeric value, found string"),
        "{reason}"
    );
}

#[test]
fn an_optional_spec_without_default_defers_to_the_build() {
    let optional = KIND.replace(
        r#"kind = "Frigate")]"#,
        r#"kind = "Frigate", spec = "optional")]"#,
    );
    let reason = deferred_reason(&optional);
    assert!(reason.contains("no `Default` for FrigateSpec"), "{reason}");
    assert!(read_lib(&optional.replace("pub struct", "#[derive(Default)]\npub struct")).is_ok());
    let implemented = format!(
        "{optional}\nimpl Default for FrigateSpec {{ fn default() -> Self {{ todo!() }} }}"
    );
    assert!(read_lib(&implemented).is_ok());
}

/// A workspace like a scaffolded project's: `xtask/declarations` linking `api` through the
/// workspace's dependencies, and a lock file.
fn workspace(dir: &Path, api_dependencies: &str, lock_extra: &str) {
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        r#"[workspace]
members = ["api", "xtask/*"]

[workspace.dependencies]
api = { path = "api" }
kubebuilder = "0.1"
"#,
    );
    write(
        "xtask/declarations/Cargo.toml",
        "[package]\nname = \"declarations\"\n\n[dependencies]\napi.workspace = true\nkubebuilder.workspace = true\n",
    );
    write(
        "api/Cargo.toml",
        &format!("[package]\nname = \"api\"\n\n[dependencies]\n{api_dependencies}"),
    );
    write("api/src/lib.rs", KIND);
    write(
        "Cargo.lock",
        &format!(
            r#"version = 4

[[package]]
name = "declarations"
dependencies = ["api", "kubebuilder"]

[[package]]
name = "api"
dependencies = ["k8s-openapi", "kubebuilder"]
{lock_extra}"#
        ),
    );
}

#[test]
fn the_crates_of_the_declarations_binary_are_its_path_dependencies() {
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        "k8s = { package = \"k8s-openapi\", version = \"0.29\" }\nkubebuilder.workspace = true\n",
        "",
    );
    let crates = declarations_crates(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(crates.len(), 1);
    assert_eq!(crates[0].name, "api");
    assert_eq!(crates[0].root, dir.path().join("api/src/lib.rs"));
    assert_eq!(
        crates[0].externs,
        [
            ("k8s".to_owned(), "k8s_openapi".to_owned()),
            ("kubebuilder".to_owned(), "kubebuilder".to_owned())
        ]
    );
    assert!(read(dir.path(), &crd::Options::default()).is_ok());
}

#[test]
fn a_linked_crate_that_could_register_defers_to_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let shared = "\n[[package]]\nname = \"shared-types\"\ndependencies = [\"kubebuilder\"]\n";
    workspace(dir.path(), "shared-types = \"1\"\n", shared);
    // Linked through `api`: the lock file names it.
    let lock = fs::read_to_string(dir.path().join("Cargo.lock")).unwrap();
    let lock = lock.replace(
        "dependencies = [\"k8s-openapi\", \"kubebuilder\"]",
        "dependencies = [\"k8s-openapi\", \"kubebuilder\", \"shared-types\"]",
    );
    fs::write(dir.path().join("Cargo.lock"), lock).unwrap();
    let Err(DeferToBuild(reason)) = declarations_crates(dir.path()) else {
        panic!("shared-types may register declarations")
    };
    assert!(
        reason.contains("shared-types depends on kubebuilder"),
        "{reason}"
    );
}

#[test]
fn a_dependency_the_lock_file_lacks_defers_to_the_build() {
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), "serde = \"1\"\n", "");
    let Err(DeferToBuild(reason)) = declarations_crates(dir.path()) else {
        panic!("a dependency added since the last build may register declarations")
    };
    assert!(
        reason.contains("Cargo.lock does not lock serde, a dependency of api, yet"),
        "{reason}"
    );
}

/// A crate of another project's kinds (`import crd --external`), which `api` depends on by
/// path: read too, its `#[kubebuilder::skip]` kinds registering no CRD.
#[test]
fn a_path_crate_of_another_projects_kinds_is_read_and_registers_none() {
    let dir = tempfile::tempdir().unwrap();
    let crate_of_theirs = "\n[[package]]\nname = \"their-api\"\ndependencies = [\"kubebuilder\"]\n";
    workspace(
        dir.path(),
        "kubebuilder.workspace = true\ntheir-api = { path = \"../their-api\" }\n",
        crate_of_theirs,
    );
    let lock = fs::read_to_string(dir.path().join("Cargo.lock"))
        .unwrap()
        .replace(
            "dependencies = [\"k8s-openapi\", \"kubebuilder\"]",
            "dependencies = [\"k8s-openapi\", \"kubebuilder\", \"their-api\"]",
        );
    fs::write(dir.path().join("Cargo.lock"), lock).unwrap();
    fs::create_dir_all(dir.path().join("their-api/src")).unwrap();
    fs::write(
        dir.path().join("their-api/Cargo.toml"),
        "[package]\nname = \"their-api\"\n\n[dependencies]\nkubebuilder.workspace = true\n",
    )
    .unwrap();
    let theirs = KIND
        .replace("ship.example.com", "other.example.org")
        .replace("Frigate", "Tanker");
    fs::write(
        dir.path().join("their-api/src/lib.rs"),
        format!("#[kubebuilder::skip]\npub mod v1 {{\n//! Theirs.\n{theirs}}}\n"),
    )
    .unwrap();
    let crates = declarations_crates(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = crates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["api", "their_api"]);
    let declarations = read(dir.path(), &crd::Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let crds: Vec<&str> = declarations
        .crds
        .iter()
        .filter_map(|crd| crd.metadata.name.as_deref())
        .collect();
    assert_eq!(crds, ["frigates.ship.example.com"]);
}

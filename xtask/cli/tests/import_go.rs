//! `cargo kubebuilder import go`: `goimport` reads every marker of the conformance suite's Go
//! module with a Rust spelling; the module imports into a project whose CRDs are
//! controller-gen's for the Go original, descriptions included, but for the differences
//! listed in `import/DIFFERENCES.md`, and whose API crate builds; bad input is refused with
//! its file and line, and nothing is written.

mod common;
#[path = "../../../macros/tests/conformance/compare.rs"]
#[allow(dead_code)]
mod compare;
#[path = "import/support.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder_attributes::spellings::{self, Target};
use kubebuilder_cli::tools;
use serde_json::Value;

use self::compare::Descriptions;
use self::support::{conformance_module, controller_gen_crds_dir, crds_in, leaves};

/// Markers no argument spells, and what the importer writes for each instead.
const TRANSLATED_OTHERWISE: [(&str, &str); 5] = [
    (
        "kubebuilder:object:root",
        "the kind `#[kubebuilder::resource]` generates",
    ),
    (
        "kubebuilder:object:generate",
        "nothing: the attributes derive Clone",
    ),
    ("kubebuilder:rbac", "#[kubebuilder::rbac(...)]"),
    ("kubebuilder:webhook", "#[kubebuilder::webhook(...)]"),
    (
        "k8s:enum",
        "a unit enum of the type's constants (DIFFERENCES M3)",
    ),
];

#[test]
fn every_marker_of_the_conformance_module_has_a_rust_spelling() {
    let model = read_paths(&conformance_module(), &["./..."]);
    assert_eq!(model["unknownMarkers"], serde_json::json!([]));
    let spelled: BTreeSet<(String, Target)> = spellings::all()
        .into_iter()
        .map(|spelling| (spelling.go, spelling.target))
        .collect();
    let mut read_markers = BTreeSet::new();
    let mut unspelled = BTreeSet::new();
    let mut check = |markers: &Value, target: Target| {
        for name in markers.as_object().unwrap().keys() {
            read_markers.insert(name.clone());
            let other = TRANSLATED_OTHERWISE.iter().any(|(go, _)| go == name);
            if !other && !spelled.contains(&(name.clone(), target)) {
                unspelled.insert(format!("+{name} ({})", target.as_str()));
            }
        }
    };
    let packages = model["packages"].as_array().unwrap();
    for package in packages {
        check(&package["markers"], Target::Package);
        for typ in package["types"].as_array().unwrap() {
            check(&typ["markers"], Target::Type);
            for field in typ["fields"].as_array().into_iter().flatten() {
                check(&field["markers"], Target::Field);
            }
        }
    }
    assert!(unspelled.is_empty(), "no Rust spelling: {unspelled:?}");
    let types: usize = packages
        .iter()
        .map(|p| p["types"].as_array().unwrap().len())
        .sum();
    println!(
        "{} packages, {types} types, {} distinct markers, each with a spelling",
        packages.len(),
        read_markers.len()
    );
    assert!(read_markers.len() > 50, "{read_markers:?}");
}

/// `import go <go> <dir> <options>` as `cargo kubebuilder` runs it.
fn import(go: &Path, dir: &Path, options: &str) -> anyhow::Result<()> {
    support::import("go", go, dir, options)
}

/// controller-gen's CRDs for the Go packages `paths` of the module at `dir`, by name.
fn controller_gen_crds(dir: &Path, options: &str, paths: &str) -> BTreeMap<String, Value> {
    crds_in(controller_gen_crds_dir(dir, options, paths).path())
}

/// The CRDs of the YAML files in `dir` (documents of other kinds aside) of the groups of
/// `ours`, by name.
fn committed_crds(dir: &Path, ours: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    let groups: BTreeSet<&str> = ours
        .values()
        .filter_map(|crd| crd["spec"]["group"].as_str())
        .collect();
    yaml_files(dir)
        .iter()
        .flat_map(|file| support::yaml_documents(file))
        .filter(|doc| {
            doc["kind"] == "CustomResourceDefinition"
                && groups.contains(doc["spec"]["group"].as_str().unwrap_or_default())
        })
        .map(|crd| (crd["metadata"]["name"].as_str().unwrap().to_owned(), crd))
        .collect()
}

/// A list of differences: its file, text and the letter of its ids.
type Differences = (&'static str, &'static str, char);

/// The differences from controller-gen v0.23.0 on the same Go packages.
const FROM_CONTROLLER_GEN: Differences = (
    "import/DIFFERENCES.md",
    include_str!("import/DIFFERENCES.md"),
    'D',
);

/// The differences from the CRDs the Go projects commit.
const FROM_COMMITTED: Differences = (
    "import/COMMITTED.md",
    include_str!("import/COMMITTED.md"),
    'C',
);

/// Every CRD of `ours` is `theirs` but for the rows of the differences list; prints, per
/// CRD, the schema leaves equal of all.
fn assert_round_trip(
    theirs: &BTreeMap<String, Value>,
    ours: &BTreeMap<String, Value>,
    (file, rows, letter): Differences,
) {
    let exceptions =
        compare::parse_exceptions_with_ids(rows, letter).unwrap_or_else(|e| panic!("{file}: {e}"));
    let names: BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    // The rows about these CRDs: each project of the corpus is compared on its own.
    let exceptions: Vec<compare::Exception> = exceptions
        .into_iter()
        .filter(|e| names.iter().any(|name| e.is_about(name)))
        .collect();
    let mut found = Vec::new();
    for name in names {
        match (theirs.get(name), ours.get(name)) {
            (Some(theirs), Some(ours)) => {
                let differences = compare::differences(name, theirs, ours, Descriptions::Exact);
                println!(
                    "{name}: {} of {} leaves equal",
                    leaves(theirs) - differences.len().min(leaves(theirs)),
                    leaves(theirs)
                );
                found.extend(differences);
            }
            (theirs, ours) => found.push(compare::Difference {
                crd: name.clone(),
                path: Vec::new(),
                controller_gen: theirs.cloned(),
                ours: ours.cloned(),
            }),
        }
    }
    compare::judge(found, &exceptions).assert_clean(file);
}

#[test]
fn the_conformance_module_imports_to_controller_gens_crds_and_builds() {
    let dir = common::scratch_dir("import-conformance");
    let project = dir.join("imported");
    import(&conformance_module(), &project, "--allow-dangerous-types").unwrap();
    let theirs = controller_gen_crds(&conformance_module(), ":allowDangerousTypes=true", "./...");
    let ours = crds_in(&project.join("config/crd/bases"));
    assert_round_trip(&theirs, &ours, FROM_CONTROLLER_GEN);

    // The imported API is Rust that builds, as the manifests read it (with its tests, whose
    // dev-dependencies choose the Kubernetes version of k8s-openapi).
    common::set_version(&project, "0.0.0-import-conformance");
    let built = common::cargo(&project, &["test", "-p", "api", "--no-run"], &[]);
    assert!(
        built.status.success(),
        "the imported api crate does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// A Go module (the conformance module's `go.mod` and `go.sum`) with one API package
/// `bad/v1`: its doc file and `types.go` holding `types`.
fn module_with(types: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for file in ["go.mod", "go.sum"] {
        fs::copy(conformance_module().join(file), dir.path().join(file)).unwrap();
    }
    let package = dir.path().join("bad/v1");
    fs::create_dir_all(&package).unwrap();
    fs::write(
        package.join("doc.go"),
        "// +groupName=bad.example.com\npackage v1\n",
    )
    .unwrap();
    fs::write(
        package.join("types.go"),
        format!(
            "package v1\n\nimport (\n\t\"time\"\n\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n)\n\n\
             var _ time.Duration\n\n\
             // +kubebuilder:object:root=true\ntype Thing struct {{\n\tmetav1.TypeMeta   `json:\",inline\"`\n\t\
             metav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec ThingSpec `json:\"spec\"`\n}}\n\n{types}"
        ),
    )
    .unwrap();
    dir
}

/// The spec of kind Thing in the tests that are not about the types.
const THING_SPEC: &str = "type ThingSpec struct {\n\tSize string `json:\"size\"`\n}\n";

/// [`module_with`] `types` and one more Go file, at `path` in the module.
fn module_with_file(types: &str, path: &str, text: &str) -> tempfile::TempDir {
    let go = module_with(types);
    let file = go.path().join(path);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, text).unwrap();
    go
}

/// Imports `types` (the spec of kind Thing, and what it needs) and expects the import to
/// fail saying each of `said`, with nothing written.
fn refused(types: &str, options: &str, said: &[&str]) {
    let go = module_with(types);
    support::assert_refused("go", go.path(), options, said);
}

#[test]
fn bad_input_is_refused_with_its_place_and_nothing_is_written() {
    // A package that does not type-check where the types are.
    refused(
        "type ThingSpec struct {\n\tSize Missing `json:\"size\"`\n}\n",
        "",
        &[
            "bad/v1/types.go:19",
            "undefined: Missing",
            "nothing was written",
        ],
    );
    // A type the mapper does not know.
    refused(
        "type ThingSpec struct {\n\tAt time.Time `json:\"at\"`\n}\n",
        "",
        &[
            "bad/v1/types.go:19",
            "no Rust type for the Go type time.Time",
        ],
    );
    // A float, which controller-gen refuses unless allowed.
    refused(
        "type ThingSpec struct {\n\tRatio float64 `json:\"ratio\"`\n}\n",
        "",
        &["bad/v1/types.go:19", "--allow-dangerous-types"],
    );
    // A kind declared as a type of a package the import does not read (a kind declared as
    // an imported kind is that kind's fields: the corpus' Gateway API has them).
    refused(
        "type ThingSpec struct {\n\tSize string `json:\"size\"`\n}\n\n\
         // +kubebuilder:object:root=true\ntype Other metav1.Status\n",
        "",
        &[
            "bad/v1/types.go:23",
            "the kind Other is declared as the type k8s.io/apimachinery/pkg/apis/meta/v1.Status",
            "no imported kind",
        ],
    );
}

#[test]
fn a_directory_with_files_is_refused_and_kept() {
    let go = module_with(THING_SPEC);
    let parent = tempfile::tempdir().unwrap();
    let target = parent.path().join("imported");
    fs::create_dir(&target).unwrap();
    fs::write(target.join("notes.txt"), "mine").unwrap();
    let error = import(go.path(), &target, "").expect_err("a directory with files is refused");
    assert!(format!("{error:#}").contains("is not empty"), "{error:#}");
    assert_eq!(
        fs::read_to_string(target.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(fs::read_dir(&target).unwrap().count(), 1);
    assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 1);
}

#[test]
fn the_go_controllers_rbac_markers_are_the_reconcilers_rules() {
    let go = module_with_file(
        THING_SPEC,
        "internal/controller/thing_controller.go",
        "package controller\n\n\
         // +kubebuilder:rbac:groups=bad.example.com,resources=things,verbs=get;list;watch\n\
         // +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get;list\n\n\
         // Reconcile reconciles Things.\nfunc Reconcile() {}\n",
    );
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("imported");
    import(go.path(), &project, "").unwrap();
    let reconciler =
        fs::read_to_string(project.join("controller/src/thing/reconciler.rs")).unwrap();
    assert!(
        reconciler.contains(
            "// The RBAC markers of the Go controller `thing_controller.go`.\n\
             #[kubebuilder::rbac(groups = [\"bad.example.com\"], resources = [\"things\"], verbs = [\"get\", \"list\", \"watch\"])]\n\
             #[kubebuilder::rbac(groups = [\"\"], resources = [\"pods\"], verbs = [\"get\", \"list\"])]\n\
             pub struct ThingReconciler;"
        ),
        "{reconciler}"
    );
    let role = fs::read_to_string(project.join("config/rbac/role.yaml")).unwrap();
    assert!(role.contains("- pods"), "{role}");
    assert!(!role.contains("things/finalizers"), "{role}");
}

/// Go's zero values as the Go types write them: an optional spec (an object may have none)
/// is `Default`, so its required enum, which has no default (Go's `""` is none of its
/// values), is an `Option` marked `required`; an optional field Go writes when empty (no
/// `omitempty`, or a struct, which `omitempty` never omits) is defaulted and written as it
/// is; an optional named list that `omitempty` omits is left out when empty; `,string`
/// writes a number or a bool as a JSON string.
/// (The webhook test's project holds these types too, and builds them.)
#[test]
fn fields_are_written_as_go_writes_them() {
    let go = module_with(OTHER_KIND);
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("imported");
    import(go.path(), &project, "").unwrap();
    let types = fs::read_to_string(project.join("api/src/v1/types.rs")).unwrap();
    for expected in [
        "#[derive(Default)]\npub struct OtherSpec {",
        "    #[kubebuilder(required)]\n    pub mode: Option<Mode>,",
        "    #[kubebuilder(optional)]\n    #[serde(default)]\n    pub inner: Inner,",
        "    #[kubebuilder(optional)]\n    #[serde(default)]\n    pub note: String,",
        "    #[kubebuilder(optional)]\n    pub names: Names,",
        "    #[serde(with = \"kubebuilder::json_string\")]\n    pub replicas: i32,",
        "    #[kubebuilder(optional)]\n    #[serde(\n        default,\n        \
         skip_serializing_if = \"kubebuilder::json_string::is_zero\",\n        \
         with = \"kubebuilder::json_string\"\n    )]\n    pub paused: bool,",
    ] {
        assert!(types.contains(expected), "{expected:?} not in:\n{types}");
    }
}

/// [`THING_SPEC`] and a kind `Other` whose fields Go writes in each of its ways.
const OTHER_KIND: &str = "type ThingSpec struct {\n\tSize string `json:\"size\"`\n}\n\n\
         // +kubebuilder:validation:Enum=a;b\ntype Mode string\n\n\
         type Names []string\n\n\
         type Inner struct {\n\tName string `json:\"name,omitempty\"`\n}\n\n\
         type OtherSpec struct {\n\tMode Mode `json:\"mode\"`\n\t\
         // +optional\n\tInner Inner `json:\"inner,omitempty\"`\n\t\
         // +optional\n\tNote string `json:\"note\"`\n\t\
         // +optional\n\tNames Names `json:\"names,omitempty\"`\n\t\
         Replicas int32 `json:\"replicas,string\"`\n\t\
         // +optional\n\tPaused bool `json:\"paused,omitempty,string\"`\n}\n\n\
         // +kubebuilder:object:root=true\ntype Other struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\t\
         metav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec OtherSpec `json:\"spec,omitempty\"`\n}\n";

/// A project of the corpus: a Go module the Go module proxy serves (cached in Go's module
/// cache), the packages imported, and the options the project gives controller-gen.
struct Corpus {
    /// The Go module and its version.
    module: common::GoModule,
    /// controller-gen's `paths=` for the CRDs, and the import's `--paths` unless it reads
    /// its Makefile's (`controllers`).
    paths: &'static [&'static str],
    /// The project's role and webhooks, when the import reads them (from the packages of
    /// its Makefile's controller-gen lines, as it does without `--paths`).
    controllers: Option<Controllers>,
    /// The `crd` generator's options on the Makefile's controller-gen line, which the import
    /// reads there.
    crd_options: &'static str,
    /// The directory of the CRDs the project commits (those of its groups are compared).
    committed: Option<&'static str>,
    /// Directories of example objects the project ships (YAML: its samples, its tests'
    /// fixtures), those of an imported kind to round-trip through the Rust types.
    examples: &'static [&'static str],
}

/// Where a Go project's controllers are, and where it commits their role and webhooks.
struct Controllers {
    /// controller-gen's `paths=` for the `rbac` and `webhook` generators.
    paths: &'static str,
    /// The committed `role.yaml` (`rbac:roleName=manager-role`).
    role: &'static str,
    /// The committed webhook `manifests.yaml`.
    webhooks: &'static str,
}

/// Real operators, for breadth: the Gateway API (CEL rules everywhere, a large API, five
/// versions, kinds declared as other versions'), Kueue (three versions of a group,
/// conversion between two, Kubernetes' pod templates embedded) and external-secrets (two
/// groups, a package of types its versions share, dozens of providers' types, a kind
/// named `Webhook`).
const CORPUS: [Corpus; 3] = [
    Corpus {
        module: common::GATEWAY_API,
        paths: &["./apis/..."],
        controllers: None,
        crd_options: "",
        committed: Some("config/crd/experimental"),
        examples: &["examples"],
    },
    Corpus {
        module: common::KUEUE,
        paths: &["./apis/kueue/..."],
        controllers: Some(Controllers {
            paths: "./pkg/controller/...;./pkg/webhooks/...;./pkg/util/cert/...;./pkg/visibility/...",
            role: "config/components/rbac/role.yaml",
            webhooks: "config/components/webhook/manifests.yaml",
        }),
        crd_options: ":generateEmbeddedObjectMeta=true",
        committed: Some("config/components/crd/bases"),
        examples: &["cmd/kueueviz/examples"],
    },
    Corpus {
        module: common::EXTERNAL_SECRETS,
        paths: &["./apis/..."],
        controllers: None,
        crd_options: "",
        committed: Some("config/crds/bases"),
        examples: &["tests/__snapshot__", "docs/snippets"],
    },
];

/// `project`'s module, copied out of the read-only module cache without the `go.work`
/// that names modules the zip lacks.
fn corpus_module(project: &Corpus) -> tempfile::TempDir {
    let source = common::go_module_source(project.module);
    let copy = tempfile::tempdir().unwrap();
    common::copy_tree(&source, copy.path(), &["go.work"]);
    make_writable(copy.path());
    copy
}

/// The module cache's files are read-only; the copy is removed afterwards.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let mode = if path.is_dir() { 0o755 } else { 0o644 };
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        if path.is_dir() {
            make_writable(&path);
        }
    }
}

#[test]
#[ignore = "slow: imports real operators' APIs from the Go module proxy"]
fn the_corpus_imports_to_controller_gens_crds() {
    for project in &CORPUS {
        let go = corpus_module(project);
        let dir = common::scratch_dir(&format!("import-{}", project.module.0.replace('/', "-")));
        let imported = dir.join("imported");
        let options: Vec<String> = match project.controllers {
            Some(_) => Vec::new(),
            None => project
                .paths
                .iter()
                .map(|p| format!("--paths {p}"))
                .collect(),
        };
        import(go.path(), &imported, &options.join(" ")).unwrap();
        let model = read_paths(go.path(), project.paths);
        let packages = model["packages"].as_array().unwrap();
        let types: usize = packages
            .iter()
            .map(|p| p["types"].as_array().unwrap().len())
            .sum();
        let markers: usize = packages
            .iter()
            .flat_map(|p| p["types"].as_array().unwrap())
            .map(|t| {
                let own = t["markers"].as_object().unwrap().values();
                let fields = t["fields"].as_array().into_iter().flatten();
                own.chain(fields.flat_map(|f| f["markers"].as_object().unwrap().values()))
                    .map(|values| values.as_array().unwrap().len())
                    .sum::<usize>()
            })
            .sum();
        println!(
            "{}@{} ({}): {} packages, {types} types, {markers} markers",
            project.module.0,
            project.module.1,
            project.paths.join(" "),
            packages.len()
        );
        let theirs = controller_gen_crds(go.path(), project.crd_options, &project.paths.join(";"));
        let ours = crds_in(&imported.join("config/crd/bases"));
        assert_round_trip(&theirs, &ours, FROM_CONTROLLER_GEN);
        if let Some(committed) = project.committed {
            println!("{}: compared with {committed}", project.module.0);
            let theirs = committed_crds(&go.path().join(committed), &ours);
            assert_round_trip(&theirs, &ours, FROM_COMMITTED);
        }
        if let Some(controllers) = &project.controllers {
            assert_controllers_round_trip(project.module.0, go.path(), &imported, controllers);
        }
        common::set_version(
            &imported,
            &format!("0.0.0-import-{}", project.module.0.replace(['/', '.'], "-")),
        );
        let examples: Vec<PathBuf> = project.examples.iter().map(|e| go.path().join(e)).collect();
        assert_examples_round_trip(&imported, go.path(), project.paths, &examples);
        if project.controllers.is_some() {
            // The Go controllers' rules and webhooks build (Kueue's: about 150 rules on one
            // reconciler, 36 webhooks for other projects' kinds), on the API built above.
            common::cargo_ok(&imported, &["build", "-p", "controller", "--lib"]);
        }
    }
}

/// The imported project's role and webhooks are controller-gen's for the Go controllers
/// and those the Go project commits, but for the rows of the differences lists.
fn assert_controllers_round_trip(
    module: &str,
    go: &Path,
    imported: &Path,
    controllers: &Controllers,
) {
    let role = support::controller_gen(go, "rbac:roleName=manager-role", "rbac", controllers.paths);
    let webhooks = support::controller_gen(go, "webhook", "webhook", controllers.paths);
    let ours = [
        ("role", imported.join("config/rbac/role.yaml")),
        ("webhooks", imported.join("config/webhook/manifests.yaml")),
    ];
    for (differences, theirs) in [
        (
            FROM_CONTROLLER_GEN,
            [
                role.path().join("role.yaml"),
                webhooks.path().join("manifests.yaml"),
            ],
        ),
        (
            FROM_COMMITTED,
            [go.join(controllers.role), go.join(controllers.webhooks)],
        ),
    ] {
        let documents = |pairs: &mut dyn Iterator<Item = (&str, PathBuf)>| {
            pairs
                .flat_map(|(what, path)| {
                    support::yaml_documents(&path)
                        .into_iter()
                        .map(move |doc| (document_name(what, &doc), keyed_rules(doc)))
                })
                .collect::<BTreeMap<String, Value>>()
        };
        let theirs = documents(&mut ["role", "webhooks"].into_iter().zip(theirs));
        let ours = documents(&mut ours.iter().map(|(what, path)| (*what, path.clone())));
        println!(
            "{module}: role and webhooks compared with {}",
            differences.0
        );
        assert_round_trip(&theirs, &ours, differences);
    }
}

/// A role's or webhook configuration's name in the differences lists:
/// `role/ClusterRole/manager-role`, `webhooks/MutatingWebhookConfiguration/<name>`.
fn document_name(what: &str, document: &Value) -> String {
    format!(
        "{what}/{}/{}",
        document["kind"].as_str().unwrap_or_default(),
        document["metadata"]["name"].as_str().unwrap_or_default()
    )
}

/// A role with its rules by their groups and resources (`events.k8s.io:events`), so that a
/// rule one side lacks is one difference at its own path; other documents as they are.
fn keyed_rules(mut document: Value) -> Value {
    let Some(rules) = document.get("rules").and_then(Value::as_array).cloned() else {
        return document;
    };
    let list = |rule: &Value, name: &str| -> String {
        rule[name]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(",")
    };
    let keyed: serde_json::Map<String, Value> = rules
        .into_iter()
        .map(|rule| {
            let key = format!(
                "{}:{}:{}:{}",
                list(&rule, "apiGroups"),
                list(&rule, "resources"),
                list(&rule, "resourceNames"),
                list(&rule, "nonResourceURLs")
            );
            (key.trim_end_matches(':').to_owned(), rule)
        })
        .collect();
    document["rules"] = Value::Object(keyed);
    document
}

/// Every object of the YAML files below `examples` whose kind the project at `imported`
/// has reads into its Rust type and writes back as the Go types write it (the Go module
/// at `go`, its packages `paths`, reads and writes each first): a test written into the
/// imported `api` crate, over the objects as JSON.
fn assert_examples_round_trip(imported: &Path, go: &Path, paths: &[&str], examples: &[PathBuf]) {
    let types = imported_types(imported);
    let mut objects = Vec::new();
    for file in examples.iter().flat_map(|dir| yaml_files(dir)) {
        let text = fs::read_to_string(&file).unwrap();
        let Ok(documents) = serde_saphyr::from_multiple::<Value>(&text) else {
            continue; // a template with placeholders, no example object
        };
        for (index, object) in documents.into_iter().enumerate() {
            if types.contains_key(&api_version_kind(&object)) {
                let file = file.strip_prefix(go).unwrap().display();
                objects.push(serde_json::json!([
                    format!("{file}#{index}"),
                    without_nulls(object)
                ]));
            }
        }
    }
    assert!(
        !objects.is_empty(),
        "no example below {examples:?} is of an imported kind"
    );
    let written_by_go = go_round_trip(go, paths, &Value::Array(objects.clone()));
    for (entry, by_go) in objects.iter_mut().zip(written_by_go) {
        let place = entry[0].as_str().unwrap().to_owned();
        let excused: Vec<&str> = EXAMPLE_DIFFERENCES
            .iter()
            .filter(|(at, _, _)| *at == place)
            .map(|(_, what, _)| *what)
            .collect();
        let entry = entry.as_array_mut().unwrap();
        entry.push(by_go);
        entry.push(serde_json::json!(excused));
    }
    let tests = imported.join("api/tests");
    fs::create_dir_all(&tests).unwrap();
    fs::write(
        tests.join("examples.json"),
        Value::Array(objects).to_string(),
    )
    .unwrap();
    let arms: String = types
        .iter()
        .map(|((api_version, kind), ty)| {
            format!(
                "            ({api_version:?}, {kind:?}) => same!({ty}, object, by_go, excused),\n"
            )
        })
        .collect();
    fs::write(
        tests.join("examples.rs"),
        EXAMPLES_TEST.replace("{arms}", &arms),
    )
    .unwrap();
    let output = common::cargo(
        imported,
        &[
            "test",
            "-p",
            "api",
            "--test",
            "examples",
            "--",
            "--nocapture",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    for line in stdout.lines().filter(|l| l.contains("round-trip")) {
        println!("{examples:?}: {line}");
    }
    assert!(
        output.status.success(),
        "the examples of {examples:?} do not round-trip through the imported types:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `value` without its `null` fields, as the apiserver stores an object (a `key:` without
/// a value in YAML is `null`; no field of the corpus' APIs is `nullable`).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(fields) => fields
            .into_iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| (key, without_nulls(value)))
            .collect(),
        Value::Array(items) => items.into_iter().map(without_nulls).collect(),
        other => other,
    }
}

/// Why a Rust write or read of an example parts from Go's.
const K8S_OPENAPI_EMPTY: &str = "k8s-openapi's Kubernetes types keep what they read: an \
    empty map or list (`Option<Vec<_>>` is `Some(vec![])`), a name `\"\"` (a `String`), where \
    Go's `omitempty` leaves them out; the imported types follow Go, k8s-openapi's do not";
const REFUSED_BY_THE_CRD_TOO: &str = "the snippet misses a required field, or holds a \
    placeholder where the field's `enum` allows none: Go's type reads anything into its zero \
    value or its string, the Rust type refuses it, as the apiserver does with the CRD";

/// Where an example object's round trip through the imported types parts from Go's, and
/// why: (object, what, reason); `what` is a JSON pointer written otherwise, or `refused`
/// where the Rust type refuses an object Go's reads. An entry that excuses nothing fails.
const EXAMPLE_DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "tests/__snapshot__/externalsecret-v1.yaml#0",
        "/status/binding/name",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "tests/__snapshot__/externalsecret-v1beta1.yaml#0",
        "/status/binding/name",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "tests/__snapshot__/pushsecret-v1alpha1.yaml#0",
        "/spec/secretStoreRefs/0/labelSelector/matchLabels",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "tests/__snapshot__/pushsecret-v1alpha1.yaml#0",
        "/spec/secretStoreRefs/0/labelSelector/matchExpressions/0/values",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "tests/__snapshot__/pushsecret-v1alpha1.yaml#0",
        "/spec/selector/secret/selector/matchLabels",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "tests/__snapshot__/pushsecret-v1alpha1.yaml#0",
        "/spec/selector/secret/selector/matchExpressions/0/values",
        K8S_OPENAPI_EMPTY,
    ),
    (
        "docs/snippets/onboardbase-generic-secret-store.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
    (
        "docs/snippets/oracle-instance-principal.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
    (
        "docs/snippets/oracle-principal-type.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
    (
        "docs/snippets/oracle-secret-store-pushsecret.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
    (
        "docs/snippets/oracle-secret-store.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
    (
        "docs/snippets/oracle-workload-identity.yaml#0",
        "refused",
        REFUSED_BY_THE_CRD_TOO,
    ),
];

fn api_version_kind(object: &Value) -> (String, String) {
    (
        object["apiVersion"].as_str().unwrap_or_default().to_owned(),
        object["kind"].as_str().unwrap_or_default().to_owned(),
    )
}

/// The Rust type of each imported kind (`api::v1::Gateway`), by API version and kind.
fn imported_types(imported: &Path) -> BTreeMap<(String, String), String> {
    let project: Value =
        serde_saphyr::from_str(&fs::read_to_string(imported.join("PROJECT")).unwrap()).unwrap();
    let mut types = BTreeMap::new();
    for resource in project["resources"].as_array().unwrap() {
        let text = |key: &str| resource[key].as_str().unwrap().to_owned();
        let api_version = format!("{}.{}/{}", text("group"), text("domain"), text("version"));
        let kind = text("kind");
        types.insert(
            (api_version, kind.clone()),
            format!("{}::{kind}", text("path")),
        );
    }
    types
}

/// Each `[place, object]` of `objects` read into the Go type of its kind (the API
/// packages' `AddToScheme`, of those `paths` names) and written back by `encoding/json`, run
/// in the Go module at `go`.
fn go_round_trip(go: &Path, paths: &[&str], objects: &Value) -> Vec<Value> {
    let model = read_paths(go, paths);
    let module = fs::read_to_string(go.join("go.mod")).unwrap();
    let module = module
        .lines()
        .next()
        .unwrap()
        .trim_start_matches("module ")
        .trim();
    let packages: Vec<&str> = model["packages"]
        .as_array()
        .unwrap()
        .iter()
        // API packages with kinds (an API group's doc package registers none).
        .filter(|p| p["markers"].get("groupName").is_some())
        .filter(|p| {
            p["types"].as_array().unwrap().iter().any(|t| {
                t["markers"]
                    .get("kubebuilder:object:root")
                    .is_some_and(|v| v[0] == true)
            })
        })
        .map(|p| p["path"].as_str().unwrap())
        .filter(|path| path.starts_with(module))
        .collect();
    let imports: String = packages
        .iter()
        .enumerate()
        .map(|(i, path)| format!("\tapi{i} {path:?}\n"))
        .collect();
    let adds: String = (0..packages.len())
        .map(|i| format!("api{i}.AddToScheme, "))
        .collect();
    let program = go.join("kubebuilder_rs_round_trip");
    fs::create_dir_all(&program).unwrap();
    fs::write(
        program.join("main.go"),
        GO_ROUND_TRIP
            .replace("{imports}", &imports)
            .replace("{adds}", &adds),
    )
    .unwrap();
    let input = program.join("objects.json");
    fs::write(&input, objects.to_string()).unwrap();
    let output = Command::new("go")
        .current_dir(go)
        .args(["run", "./kubebuilder_rs_round_trip"])
        .env("GOWORK", "off")
        .stdin(fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the Go types do not read the examples:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Reads `[[place, object], ...]`, writes `{"written": <the object as its Go type writes
/// it>}` for each, or `{"refused": <why>}` for one the Go type does not read.
const GO_ROUND_TRIP: &str = r#"package main

import (
	"encoding/json"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
{imports})

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{{adds}} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	var objects [][2]json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&objects); err != nil {
		panic(err)
	}
	written := []json.RawMessage{}
	for _, pair := range objects {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(pair[1], &meta); err != nil {
			panic(err)
		}
		gv, err := schema.ParseGroupVersion(meta.APIVersion)
		if err != nil {
			panic(err)
		}
		object, err := scheme.New(gv.WithKind(meta.Kind))
		if err != nil {
			panic(err)
		}
		if err := json.Unmarshal(pair[1], object); err != nil {
			refused, _ := json.Marshal(map[string]string{"refused": err.Error()})
			written = append(written, refused)
			continue
		}
		bytes, err := json.Marshal(map[string]any{"written": object})
		if err != nil {
			panic(err)
		}
		written = append(written, bytes)
	}
	if err := json.NewEncoder(os.Stdout).Encode(written); err != nil {
		panic(err)
	}
}
"#;

/// The imported `api` crate's test of the examples (`{arms}`: a match arm per kind): each
/// `[place, object, as Go writes it, excused differences]` of `examples.json`.
const EXAMPLES_TEST: &str = r#"//! Written by kubebuilder-cli's import test: each example object of the Go project reads
//! into its kind's Rust type and writes back as the Go type writes it.

/// The object read as `$ty` and written back, or why that is not what Go does with it
/// (`$by_go`: `{"written": ...}`, or `{"refused": ...}` where Go does not read it), but
/// for the `$excused` differences (JSON pointers, or `refused`), each of which must be one.
macro_rules! same {
    ($ty:ty, $object:expr, $by_go:expr, $excused:expr) => {
        match (serde_json::from_value::<$ty>($object.clone()), $by_go.get("written")) {
            (Ok(typed), Some(written)) => {
                let back = comparable(serde_json::to_value(&typed).unwrap(), $object);
                let written = comparable(written.clone(), $object);
                let (back_left, written_left) =
                    (without(&back, $excused), without(&written, $excused));
                if back_left != written_left {
                    Err(format!("written back as\n{back}\nwhere Go writes\n{written}"))
                } else if $excused.iter().any(|what| back.pointer(what) == written.pointer(what)) {
                    Err(format!("an excused difference is none: {:?}", $excused))
                } else {
                    Ok(())
                }
            }
            // Neither reads it (a fixture of placeholders, such as `string` for a duration).
            (Err(_), None) => Ok(()),
            (Ok(_), None) => Err(format!("reads, where Go does not: {}", $by_go["refused"])),
            (Err(_), Some(_)) if $excused.iter().any(|what| what == "refused") => Ok(()),
            (Err(error), Some(_)) => Err(format!("does not read: {error}")),
        }
    };
}

/// `value` without the values at `pointers` (those that are JSON pointers).
fn without(value: &serde_json::Value, pointers: &[String]) -> serde_json::Value {
    let mut value = value.clone();
    for pointer in pointers.iter().filter(|p| p.starts_with('/')) {
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        match value.pointer_mut(parent) {
            Some(serde_json::Value::Object(fields)) => {
                fields.remove(last);
            }
            Some(serde_json::Value::Array(items)) => {
                if let Ok(index) = last.parse::<usize>() {
                    if index < items.len() {
                        items.remove(index);
                    }
                }
            }
            _ => {}
        }
    }
    value
}

/// An object written back as the apiserver takes it, `written` the example object it was
/// read from: without `null` fields, and without a `status` the example did not have. Go
/// writes a nil slice, map or pointer as `null`, which the apiserver prunes (no field of
/// these APIs is `nullable`), where serde's defaults leave the field out; and a Go kind's
/// `Status` is a struct, written whole (`{}`, zero counters) where the example has none,
/// the Rust kind's an `Option`, left out (the apiserver ignores a status sent with the
/// object, which has the status subresource).
fn comparable(object: serde_json::Value, written: &serde_json::Value) -> serde_json::Value {
    let mut object = without_nulls(object);
    if written.get("status").is_none() {
        object.as_object_mut().unwrap().remove("status");
    }
    object
}

fn without_nulls(value: serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(fields) => fields
            .into_iter()
            .filter(|(_, value)| !value.is_null())
            .map(|(key, value)| (key, without_nulls(value)))
            .collect(),
        serde_json::Value::Array(items) => items.into_iter().map(without_nulls).collect(),
        other => other,
    }
}

#[test]
fn the_examples_round_trip() {
    let objects: Vec<(String, serde_json::Value, serde_json::Value, Vec<String>)> =
        serde_json::from_str(include_str!("examples.json")).unwrap();
    let mut failures = Vec::new();
    for (place, object, by_go, excused) in &objects {
        let kind = (
            object["apiVersion"].as_str().unwrap(),
            object["kind"].as_str().unwrap(),
        );
        let same = match kind {
{arms}            _ => unreachable!("{place}: {kind:?} is no imported kind"),
        };
        if let Err(why) = same {
            failures.push(format!("{place} ({kind:?}): {why}"));
        }
    }
    let refused = objects
        .iter()
        .filter(|(_, _, by_go, _)| by_go.get("refused").is_some())
        .count();
    println!(
        "{} of {} example objects round-trip ({refused} read by neither Go nor Rust)",
        objects.len() - failures.len(),
        objects.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
"#;

/// The `.yaml` files below `dir`, in order.
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(yaml_files(&path));
        } else if path.extension().is_some_and(|e| e == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// goimport's model of the packages `paths` of the module at `dir`.
fn read_paths(dir: &Path, paths: &[&str]) -> Value {
    let output = Command::new(tools::GOIMPORT.install().unwrap())
        .current_dir(dir)
        .args(paths)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_go_webhook_markers_are_the_webhooks_controller_gen_writes() {
    // With the kind `Other` of `fields_are_written_as_go_writes_them`, which the controller's
    // build builds.
    let go = module_with_file(
        OTHER_KIND,
        "internal/webhook/v1/thing_webhook.go",
        "package v1\n\n\
         // +kubebuilder:webhook:path=/mutate-bad-example-com-v1-thing,mutating=true,failurePolicy=fail,sideEffects=None,groups=bad.example.com,resources=things,verbs=create;update,versions=v1,name=mthing-v1.kb.io,admissionReviewVersions=v1\n\
         // +kubebuilder:webhook:path=/validate-bad-example-com-v1-thing,mutating=false,failurePolicy=ignore,sideEffects=None,groups=bad.example.com,resources=things;things/status,verbs=create;update;delete,versions=v1,name=vthing-v1.kb.io,admissionReviewVersions=v1,matchPolicy=Exact,timeoutSeconds=5\n\n\
         // Setup registers the webhooks.\nfunc Setup() {}\n",
    );
    // A webhook for a kind the import does not make (Kubernetes' Job), as Kueue has dozens.
    fs::write(
        go.path().join("internal/webhook/v1/job_webhook.go"),
        "package v1\n\n\
         // +kubebuilder:webhook:path=/mutate-batch-v1-job,mutating=true,failurePolicy=ignore,sideEffects=None,groups=batch,resources=jobs,verbs=create,versions=v1,name=mjob.kb.io,admissionReviewVersions=v1,serviceName=jobs-webhook\n",
    )
    .unwrap();
    // The Go project's sample, which the webhooks' tests create: `size` is required.
    let samples = go.path().join("config/samples");
    fs::create_dir_all(&samples).unwrap();
    fs::write(
        samples.join("bad_v1_thing.yaml"),
        "apiVersion: bad.example.com/v1\nkind: Thing\nmetadata:\n  name: thing-sample\nspec:\n  size: large\n",
    )
    .unwrap();
    let dir = common::scratch_dir("import-webhooks");
    let project = dir.join("imported");
    import(go.path(), &project, "").unwrap();

    let output_dir = support::controller_gen(go.path(), "webhook", "webhook", "./...");
    assert_eq!(
        support::yaml_documents(&project.join("config/webhook/manifests.yaml")),
        support::yaml_documents(&output_dir.path().join("manifests.yaml"))
    );

    // The validator's rule (a subresource too) is the marker's own, not `for = Thing`'s;
    // the Job's webhook is declared, with what to do to serve it.
    let validator = fs::read_to_string(project.join("controller/src/thing/webhook.rs")).unwrap();
    assert!(
        validator.contains("resources = [\"things\", \"things/status\"]"),
        "{validator}"
    );
    let external = fs::read_to_string(project.join("controller/src/external_webhooks.rs")).unwrap();
    assert!(
        external.contains("implement `kubebuilder_runtime::webhook::Defaulter`")
            && external.contains("pub struct MutateBatchV1Job;"),
        "{external}"
    );

    // The imported webhooks build (the Job's too), and their tests that call them directly
    // pass with the Go project's sample (the scaffold's, without `size`, would not read).
    common::set_version(&project, "0.0.0-import-webhooks");
    let tested = common::cargo(
        &project,
        &[
            "test",
            "-p",
            "controller",
            "--test",
            "thing_webhook",
            "--",
            "the_defaulter_keeps_what_is_set",
            "the_validator_admits_a_valid_thing",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&tested.stdout);
    assert!(
        tested.status.success() && stdout.contains("test result: ok. 2 passed"),
        "the imported webhooks' tests fail:\n{stdout}\n{}",
        String::from_utf8_lossy(&tested.stderr)
    );
}

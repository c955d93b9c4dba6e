//! `cargo kubebuilder import go`: `goimport` reads every marker of the conformance suite's Go
//! module with a Rust spelling; the module imports into a project whose CRDs are
//! controller-gen's for the Go original, descriptions included, but for the differences
//! listed in `import/DIFFERENCES.md`, and whose API crate builds; bad input is refused with
//! its file and line, and nothing is written.

mod common;
#[path = "../../../macros/tests/conformance/compare.rs"]
#[allow(dead_code)]
mod compare;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use kubebuilder_attributes::spellings::{self, Target};
use kubebuilder_cli::tools;
use serde_json::Value;

use self::compare::Descriptions;

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

fn conformance_module() -> PathBuf {
    common::repo_root().join("macros/tests/conformance/go")
}

#[test]
fn every_marker_of_the_conformance_module_has_a_rust_spelling() {
    let model = read_paths(&conformance_module(), "./...");
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
    let line = format!(
        "import go {} {} --local {} {options}",
        go.display(),
        dir.display(),
        common::repo_root().display()
    );
    let kubebuilder_cli::Command::Scaffold(kubebuilder_cli::scaffold::Command::Import { command }) =
        common::parse(&line)
    else {
        panic!("{line} is not import");
    };
    kubebuilder_cli::import::run(&command)
}

/// controller-gen's CRDs for the Go packages `paths` of the module at `dir`, by name.
fn controller_gen_crds(dir: &Path, options: &str, paths: &str) -> BTreeMap<String, Value> {
    let output_dir = tempfile::tempdir().unwrap();
    let output = Command::new(tools::CONTROLLER_GEN.install().unwrap())
        .current_dir(dir)
        .arg(format!("crd{options}"))
        .arg(format!("paths={paths}"))
        .arg(format!("output:crd:dir={}", output_dir.path().display()))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "controller-gen failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    crds_in(output_dir.path())
}

/// The CRDs of the YAML files in `dir`, by name.
fn crds_in(dir: &Path) -> BTreeMap<String, Value> {
    let mut crds = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let text = fs::read_to_string(entry.unwrap().path()).unwrap();
        let crd: Value = serde_saphyr::from_str(&text).unwrap();
        crds.insert(crd["metadata"]["name"].as_str().unwrap().to_owned(), crd);
    }
    crds
}

/// The paths of `value`'s leaves (scalars, empty lists and maps).
fn leaves(value: &Value) -> usize {
    match value {
        Value::Object(map) if !map.is_empty() => map.values().map(leaves).sum(),
        Value::Array(items) if !items.is_empty() => items.iter().map(leaves).sum(),
        _ => 1,
    }
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
    let exceptions = compare::parse_exceptions_with_ids(rows, letter)
        .unwrap_or_else(|e| panic!("{file}: {e}"));
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

/// [`module_with`] `THING_SPEC` and one more Go file, at `path` in the module.
fn module_with_file(path: &str, text: &str) -> tempfile::TempDir {
    let go = module_with(THING_SPEC);
    let file = go.path().join(path);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, text).unwrap();
    go
}

/// Imports `types` (the spec of kind Thing, and what it needs) and expects the import to
/// fail saying each of `said`, with nothing written.
fn refused(types: &str, options: &str, said: &[&str]) {
    let go = module_with(types);
    let parent = tempfile::tempdir().unwrap();
    let target = parent.path().join("imported");
    let error = format!(
        "{:#}",
        import(go.path(), &target, options).expect_err("the import is refused")
    );
    for words in said {
        assert!(error.contains(words), "{words:?} not in:\n{error}");
    }
    assert!(
        fs::read_dir(parent.path()).unwrap().next().is_none(),
        "the import left something in {}",
        parent.path().display()
    );
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
    // An optional spec whose Go zero value Rust has not: an enum's is "", none of its values.
    refused(
        "type ThingSpec struct {\n\tSize string `json:\"size\"`\n}\n\n\
         // +kubebuilder:validation:Enum=a;b\ntype Mode string\n\n\
         type OtherSpec struct {\n\tMode Mode `json:\"mode\"`\n}\n\n\
         // +kubebuilder:object:root=true\ntype Other struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\t\
         metav1.ObjectMeta `json:\"metadata,omitempty\"`\n\tSpec OtherSpec `json:\"spec,omitempty\"`\n}\n",
        "",
        &["bad/v1/types.go:25", "OtherSpec needs a default", "Mode"],
    );
    // A kind declared as another type, which the import cannot spell yet.
    refused(
        "type ThingSpec struct {\n\tSize string `json:\"size\"`\n}\n\n\
         // +kubebuilder:object:root=true\ntype Other Thing\n",
        "",
        &[
            "bad/v1/types.go:23",
            "the kind Other is declared as the type",
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

/// A project of the corpus: a Go module the Go module proxy serves (cached in Go's module
/// cache), the packages imported, and the options the project gives controller-gen.
struct Corpus {
    module: &'static str,
    version: &'static str,
    /// controller-gen's `paths=` and the import's `--paths`.
    paths: &'static str,
    /// The `crd` generator's options on the Makefile's controller-gen line, which the import
    /// reads there.
    crd_options: &'static str,
    /// The directory of the CRDs the project commits, when they are those of `paths`.
    committed: Option<&'static str>,
}

/// Real operators, for breadth: the Gateway API (CEL rules everywhere, a large API) and
/// Kueue (three versions of a group, conversion between two, Kubernetes' pod templates
/// embedded).
const CORPUS: [Corpus; 2] = [
    Corpus {
        module: "sigs.k8s.io/gateway-api",
        version: "v1.6.3",
        paths: "./apis/v1",
        crd_options: "",
        committed: None,
    },
    Corpus {
        module: "sigs.k8s.io/kueue",
        version: "v0.17.0",
        paths: "./apis/kueue/...",
        crd_options: ":generateEmbeddedObjectMeta=true",
        committed: Some("config/components/crd/bases"),
    },
];

/// `project`'s module, copied out of the read-only module cache without the `go.work`
/// that names modules the zip lacks.
fn corpus_module(project: &Corpus) -> tempfile::TempDir {
    let source = kubebuilder_envtest::assets::go_module_source(
        &conformance_module(),
        project.module,
        project.version,
    )
    .unwrap();
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
        let dir = common::scratch_dir(&format!("import-{}", project.module.replace('/', "-")));
        let imported = dir.join("imported");
        import(go.path(), &imported, &format!("--paths {}", project.paths)).unwrap();
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
            project.module,
            project.version,
            project.paths,
            packages.len()
        );
        let theirs = controller_gen_crds(go.path(), project.crd_options, project.paths);
        let ours = crds_in(&imported.join("config/crd/bases"));
        assert_round_trip(&theirs, &ours, FROM_CONTROLLER_GEN);
        if let Some(committed) = project.committed {
            println!("{}: compared with {committed}", project.module);
            assert_round_trip(&crds_in(&go.path().join(committed)), &ours, FROM_COMMITTED);
        }
    }
}

/// goimport's model of the packages `paths` of the module at `dir`.
fn read_paths(dir: &Path, paths: &str) -> Value {
    let output = Command::new(tools::GOIMPORT.install().unwrap())
        .current_dir(dir)
        .arg(paths)
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
    let go = module_with_file(
        "internal/webhook/v1/thing_webhook.go",
        "package v1\n\n\
         // +kubebuilder:webhook:path=/mutate-bad-example-com-v1-thing,mutating=true,failurePolicy=fail,sideEffects=None,groups=bad.example.com,resources=things,verbs=create;update,versions=v1,name=mthing-v1.kb.io,admissionReviewVersions=v1\n\
         // +kubebuilder:webhook:path=/validate-bad-example-com-v1-thing,mutating=false,failurePolicy=ignore,sideEffects=None,groups=bad.example.com,resources=things,verbs=create;update;delete,versions=v1,name=vthing-v1.kb.io,admissionReviewVersions=v1,matchPolicy=Exact,timeoutSeconds=5\n\n\
         // Setup registers the webhooks.\nfunc Setup() {}\n",
    );
    let dir = common::scratch_dir("import-webhooks");
    let project = dir.join("imported");
    import(go.path(), &project, "").unwrap();

    let output_dir = tempfile::tempdir().unwrap();
    let output = Command::new(tools::CONTROLLER_GEN.install().unwrap())
        .current_dir(go.path())
        .arg("webhook")
        .arg("paths=./...")
        .arg(format!(
            "output:webhook:dir={}",
            output_dir.path().display()
        ))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let documents = |path: &Path| -> Vec<Value> {
        let text = fs::read_to_string(path).unwrap();
        serde_saphyr::from_multiple(&text).unwrap()
    };
    assert_eq!(
        documents(&project.join("config/webhook/manifests.yaml")),
        documents(&output_dir.path().join("manifests.yaml"))
    );

    // The imported webhooks build.
    common::set_version(&project, "0.0.0-import-webhooks");
    let built = common::cargo(&project, &["build", "-p", "controller"], &[]);
    assert!(
        built.status.success(),
        "the imported controller crate does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

//! `cargo kubebuilder import crd`: the CRDs of the corpus (the conformance module's as
//! controller-gen writes them, the Gateway API's, Kueue's and external-secrets' committed
//! ones) import into projects whose CRDs are the input, leaf by leaf and descriptions
//! included, but for the differences listed in `import/CRD_DIFFERENCES.md`, and whose API
//! crate builds; a CRD that is not structural is refused with its file and YAML path, and
//! nothing is written.

mod common;
#[path = "../../../macros/tests/conformance/compare.rs"]
#[allow(dead_code)]
mod compare;
#[path = "import/support.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::Value;

use self::compare::Descriptions;
use self::support::{conformance_module, controller_gen_crds_dir, crds_in, leaves};

/// `import crd <input> <dir> --local <this checkout> <options>` as `cargo kubebuilder` runs it.
fn import(input: &Path, dir: &Path, options: &str) -> anyhow::Result<()> {
    support::import("crd", input, dir, options)
}

/// controller-gen's CRDs for the conformance module, in a temporary directory.
fn conformance_crds() -> tempfile::TempDir {
    controller_gen_crds_dir(&conformance_module(), ":allowDangerousTypes=true", "./...")
}

/// The files of `dir` whose names start with `prefix`, copied to a temporary directory.
fn files_starting(dir: &Path, prefix: &str) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name.to_string_lossy().starts_with(prefix) {
            fs::write(copy.path().join(name), fs::read(&path).unwrap()).unwrap();
        }
    }
    copy
}

/// What one import of the corpus gives: the differences found, and its figures.
struct Outcome {
    differences: Vec<compare::Difference>,
    line: String,
}

/// Imports the CRDs of `input` as project `name`, and compares the project's CRDs with them.
fn round_trip(name: &str, input: &Path) -> Outcome {
    let dir = common::scratch_dir(&format!("import-crd-{name}"));
    let project = dir.join("imported");
    import(input, &project, "").unwrap();
    let theirs = crds_in(input);
    let ours = crds_in(&project.join("config/crd/bases"));
    let names: BTreeSet<&String> = theirs.keys().chain(ours.keys()).collect();
    let mut differences = Vec::new();
    for crd in names {
        match (theirs.get(crd), ours.get(crd)) {
            (Some(theirs), Some(ours)) => {
                differences.extend(compare::differences(crd, theirs, ours, Descriptions::Exact))
            }
            (theirs, ours) => differences.push(compare::Difference {
                crd: crd.clone(),
                path: Vec::new(),
                controller_gen: theirs.cloned(),
                ours: ours.cloned(),
            }),
        }
    }
    let versions: usize = theirs
        .values()
        .map(|crd| crd["spec"]["versions"].as_array().unwrap().len())
        .sum();
    let total: usize = theirs.values().map(leaves).sum();
    let line = format!(
        "{name}: {} CRDs, {versions} versions, {} types made, {} of {total} leaves equal",
        theirs.len(),
        types_made(&project.join("api/src")),
        total - differences.len().min(total),
    );
    Outcome { differences, line }
}

/// The Rust types declared in the imported API crate's sources.
fn types_made(dir: &Path) -> usize {
    let mut count = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            count += types_made(&path);
        } else {
            let text = fs::read_to_string(&path).unwrap();
            count += text
                .lines()
                .filter(|l| l.starts_with("pub struct "))
                .count();
        }
    }
    count
}

#[test]
#[ignore = "slow: imports every CRD of the corpus (the Gateway API, Kueue and external-secrets from the Go module proxy)"]
fn every_crd_of_the_corpus_imports_and_renders_back() {
    let conformance = conformance_crds();
    let gateway = common::go_module_source(common::GATEWAY_API).join("config/crd");
    // The experimental channel's two groups, gateway.networking.k8s.io and
    // gateway.networking.x-k8s.io, would be one Rust module (`gateway`) in one project.
    let experimental = gateway.join("experimental");
    let experimental_k8s = files_starting(&experimental, "gateway.networking.k8s.io_");
    let experimental_x = files_starting(&experimental, "gateway.networking.x-k8s.io_");
    let kueue = common::go_module_source(common::KUEUE).join("config/components/crd/bases");
    let external_secrets =
        common::go_module_source(common::EXTERNAL_SECRETS).join("config/crds/bases");
    let corpus: [(&str, &Path); 6] = [
        ("conformance", conformance.path()),
        ("gateway-api-standard", &gateway.join("standard")),
        ("gateway-api-experimental", experimental_k8s.path()),
        ("gateway-api-experimental-x", experimental_x.path()),
        ("kueue", &kueue),
        ("external-secrets", &external_secrets),
    ];
    let mut found = Vec::new();
    for (name, input) in corpus {
        let outcome = round_trip(name, input);
        println!("{}", outcome.line);
        found.extend(outcome.differences);
    }
    let exceptions = compare::parse_exceptions(include_str!("import/CRD_DIFFERENCES.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    let verdict = compare::judge(found, &exceptions);
    let mut by_row: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, _) in &verdict.excused {
        *by_row.entry(id).or_default() += 1;
    }
    println!("differences by row: {by_row:?}");
    for (id, difference) in &verdict.excused {
        if BLANK_LINE_RUNS.contains(&id.as_str()) {
            let text =
                |side: &Option<Value>| side.as_ref().and_then(Value::as_str).map(str::to_owned);
            let theirs = text(&difference.controller_gen).map(|t| without_blank_line_runs(&t));
            assert_eq!(theirs, text(&difference.ours), "{id} excuses {difference}");
        }
    }
    verdict.assert_clean("import/CRD_DIFFERENCES.md");
}

/// The rows of CRD_DIFFERENCES.md that excuse descriptions whose runs of blank lines are one.
const BLANK_LINE_RUNS: [&str; 2] = ["D7", "D8"];

/// `text` with each run of blank lines made one, as a doc comment gives it back.
fn without_blank_line_runs(text: &str) -> String {
    let mut out = text.to_owned();
    while out.contains("\n\n\n") {
        out = out.replace("\n\n\n", "\n\n");
    }
    out
}

#[test]
#[ignore = "slow: builds an imported project (Kueue's CRDs: quantities, pod templates, CEL)"]
fn an_imported_project_builds() {
    let kueue = common::go_module_source(common::KUEUE).join("config/components/crd/bases");
    let dir = common::scratch_dir("import-crd-build");
    let project = dir.join("imported");
    import(&kueue, &project, "").unwrap();
    common::set_version(&project, "0.0.0-import-crd");
    let built = common::cargo(&project, &["test", "-p", "api", "--no-run"], &[]);
    assert!(
        built.status.success(),
        "the imported api crate does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// A CRD `things.bad.example.com` whose version v1's `spec` is `spec` (YAML, indented to
/// sit under `properties:`).
fn crd_with_spec(spec: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata:\n  name: things.bad.example.com\nspec:\n  group: bad.example.com\n  \
         names:\n    kind: Thing\n    listKind: ThingList\n    plural: things\n    \
         singular: thing\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    \
         storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
         properties:\n          spec:\n{spec}"
    )
}

/// Imports a CRD file of `text` and expects the import to fail saying each of `said`, with
/// nothing written.
fn refused(text: &str, said: &[&str]) {
    let input = tempfile::tempdir().unwrap();
    let file = input.path().join("things.yaml");
    fs::write(&file, text).unwrap();
    support::assert_refused("crd", &file, "", said);
}

const SPEC: &str = "spec.versions[0].schema.openAPIV3Schema.properties.spec";

#[test]
fn a_crd_that_is_not_structural_is_refused_with_its_place_and_nothing_is_written() {
    // A property without a type.
    refused(
        &crd_with_spec(
            "            type: object\n            properties:\n              size:\n                \
             description: no type\n",
        ),
        &[
            "things.yaml",
            &format!("{SPEC}.properties.size: no `type`"),
            "not structural",
            "nothing was written",
        ],
    );
    // A junctor declaring types.
    refused(
        &crd_with_spec(
            "            type: object\n            properties:\n              size:\n                \
             type: string\n                anyOf:\n                - type: integer\n",
        ),
        &[&format!(
            "{SPEC}.properties.size.anyOf[0]: `type` inside anyOf[0]"
        )],
    );
    // An array without items, an object with properties and additionalProperties.
    refused(
        &crd_with_spec(
            "            type: object\n            properties:\n              list:\n                \
             type: array\n              both:\n                type: object\n                \
             properties:\n                  a:\n                    type: string\n                \
             additionalProperties:\n                  type: string\n",
        ),
        &[
            &format!("{SPEC}.properties.list: an array without `items`"),
            &format!("{SPEC}.properties.both: both `properties` and `additionalProperties`"),
        ],
    );
    // Metadata restricted beyond name and generateName.
    refused(
        &crd_with_spec("            type: object\n").replace(
            "        properties:\n",
            "        properties:\n          metadata:\n            type: object\n            \
             properties:\n              labels:\n                type: object\n",
        ),
        &["openAPIV3Schema.properties.metadata.properties.labels: metadata may restrict"],
    );
}

#[test]
fn what_is_no_v1_crd_is_refused() {
    refused(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        &["holds no CustomResourceDefinition"],
    );
    refused(
        &crd_with_spec("            type: object\n").replace(
            "apiextensions.k8s.io/v1\n",
            "apiextensions.k8s.io/v1beta1\n",
        ),
        &["not apiextensions.k8s.io/v1", "nothing was written"],
    );
}

#[test]
fn a_small_crd_imports_to_its_types_and_back() {
    let text = crd_with_spec(
        "            description: ThingSpec is what a thing should be.\n            \
         type: object\n            required:\n            - size\n            properties:\n              \
         size:\n                description: How big.\n                type: integer\n                \
         format: int32\n                minimum: 1\n              ports:\n                type: array\n                \
         x-kubernetes-list-type: map\n                x-kubernetes-list-map-keys:\n                - name\n                \
         items:\n                  type: object\n                  required:\n                  - name\n                  \
         properties:\n                    name:\n                      type: string\n                      \
         default: http\n",
    );
    let input = tempfile::tempdir().unwrap();
    fs::write(input.path().join("things.yaml"), &text).unwrap();
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("imported");
    import(input.path(), &project, "").unwrap();
    let source = fs::read_to_string(project.join("api/src/v1/things.rs")).unwrap();
    for item in [
        "pub struct ThingSpec {",
        "    /// How big.\n    #[kubebuilder(validation(minimum = 1))]\n    pub size: i32,",
        "#[kubebuilder(list_map_key = \"name\", list_type = \"map\", optional)]\n    pub ports: Vec<ThingSpecPorts>,",
        "pub struct ThingSpecPorts {",
        "#[kubebuilder(default = \"http\")]\n    pub name: String,",
    ] {
        assert!(source.contains(item), "{item:?} not in:\n{source}");
    }
    let theirs = crds_in(input.path());
    let ours = crds_in(&project.join("config/crd/bases"));
    let name = "things.bad.example.com";
    let differences: Vec<String> =
        compare::differences(name, &theirs[name], &ours[name], Descriptions::Exact)
            .iter()
            .map(|difference| difference.path.join("/"))
            .collect();
    // What every CRD the attributes write has and the input does not: the generator's
    // annotation (CRD_DIFFERENCES.md D1), and the root's apiVersion, kind and metadata.
    let root = "spec/versions/0/schema/openAPIV3Schema/properties";
    assert_eq!(
        differences,
        [
            "metadata/annotations".to_owned(),
            format!("{root}/apiVersion"),
            format!("{root}/kind"),
            format!("{root}/metadata"),
        ]
    );
}

/// `--external`: the kinds of another project's CRD as a crate of the project the import is
/// run in, which its controller crate depends on; outside a project, refused, nothing
/// written.
#[test]
fn another_projects_crd_imports_as_a_crate_of_the_project() {
    let theirs = tempfile::tempdir().unwrap();
    let file = theirs.path().join("tankers.yaml");
    let text = crd_with_spec("            type: object\n")
        .replace("bad.example.com", "other.example.org")
        .replace("things", "tankers")
        .replace("Thing", "Tanker")
        .replace("thing", "tanker");
    fs::write(&file, text).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let error = support::run_import(&format!(
        "crd {} {} --external",
        file.display(),
        outside.path().join("their-api").display()
    ))
    .expect_err("no project around the crate");
    assert!(
        format!("{error:#}").contains("--external makes a crate inside a kubebuilder-rs project"),
        "{error:#}"
    );
    assert!(fs::read_dir(outside.path()).unwrap().next().is_none());

    // Our project: a small CRD of our own, imported.
    let ours = tempfile::tempdir().unwrap();
    fs::write(
        ours.path().join("things.yaml"),
        crd_with_spec("            type: object\n"),
    )
    .unwrap();
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("imported");
    import(ours.path(), &project, "").unwrap();
    support::run_import(&format!(
        "crd {} {} --external",
        file.display(),
        project.join("their-api").display()
    ))
    .unwrap();
    let read = |path: &str| fs::read_to_string(project.join(path)).unwrap();
    assert!(read("Cargo.toml").contains(", \"their-api\"]\n"));
    assert!(read("Cargo.toml").contains("\ntheir-api = { path = \"their-api\" }\n"));
    assert!(read("controller/Cargo.toml").contains("[dependencies]\ntheir-api.workspace = true\n"));
    let version = read("their-api/src/v1/mod.rs");
    assert!(
        version.contains("#[kubebuilder::skip]\nmod tankers {"),
        "{version}"
    );
    assert!(read("their-api/src/lib.rs").contains("pub mod v1;\n"));
}

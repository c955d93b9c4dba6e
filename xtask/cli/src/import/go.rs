//! `import go`: a Go kubebuilder project as a new Rust project. `goimport` (a Go program
//! on controller-tools' own loader and marker registry) reads the Go packages; each API
//! package becomes a version module of the `api` crate (`project.rs`). A package that does
//! not type-check is reported with its file and line, and nothing is written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::model::{self, Model};
use super::project::{self, GoProject, Target};
use super::rust;
use crate::scaffold::project::CrdOptions;

/// The options of `import go`.
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The Go project: the directory of its `go.mod` (and `PROJECT`, when it has one).
    pub go_project: PathBuf,
    /// The new Rust project's directory (created; if it exists, it must be empty).
    pub dir: PathBuf,
    /// The project's name (default: the Go project's `projectName`, else the directory's
    /// name).
    #[arg(long)]
    pub name: Option<String>,
    /// Use the kubebuilder crates of the checkout at this path instead of crates.io.
    #[arg(long, value_name = "CHECKOUT")]
    pub local: Option<PathBuf>,
    /// The Go packages to read, as controller-gen's `paths=` (repeatable; default: those of
    /// the Makefile's controller-gen lines, else `./...`).
    #[arg(long = "paths", value_name = "PATTERN")]
    pub paths: Vec<String>,
    /// Allow float fields, as the Go project's `controller-gen crd:allowDangerousTypes=true`
    /// does: each gets `allow_dangerous_types` (also when the Makefile says so).
    #[arg(long)]
    pub allow_dangerous_types: bool,
}

/// Imports the Go project, then says what was made.
pub fn run(args: &Args) -> Result<()> {
    let (crd, allow_dangerous_types) = makefile_crd_options(&args.go_project)?;
    let options = rust::Options {
        allow_dangerous_types: args.allow_dangerous_types || allow_dangerous_types,
    };
    let project = GoProject::read(&args.go_project)?;
    let paths = if args.paths.is_empty() {
        makefile_paths(&args.go_project)?
    } else {
        args.paths.clone()
    };
    let model = goimport(&args.go_project, &paths)?;
    report_unrecognised(&model.unknown_markers);
    let imported = project::translate(model, project, options, &args.go_project)?
        .with_samples(&args.go_project.join("config/samples"))?;
    let made = project::write(
        &Target {
            dir: &args.dir,
            name: args.name.as_deref(),
            local: args.local.as_deref(),
            crd: &crd,
        },
        &imported,
    )?;
    eprintln!(
        "import go: {} kinds in {} group versions, in {}. Next:\n  cd {}\n  cargo xtask test",
        imported.kinds().count(),
        imported.version_count(),
        made.display(),
        args.dir.display()
    );
    Ok(())
}

/// The Go project's Makefile, or nothing when it has none.
fn makefile(dir: &Path) -> Result<String> {
    let path = dir.join("Makefile");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

/// The packages controller-gen reads for the Go project: every `paths=` of its Makefile
/// (Kueue's CRDs from `./apis/...`, its role and webhooks from `./pkg/controller/...;...`),
/// else `./...` (kubebuilder's Makefile).
fn makefile_paths(dir: &Path) -> Result<Vec<String>> {
    let mut paths: Vec<String> = Vec::new();
    let text = makefile(dir)?;
    let listed = text
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("paths="))
        .flat_map(|list| list.trim_matches(['"', '\'']).split(';'));
    for path in listed {
        if !path.is_empty() && !paths.iter().any(|known| known == path) {
            paths.push(path.to_owned());
        }
    }
    if paths.is_empty() {
        return Ok(vec!["./...".to_owned()]);
    }
    eprintln!(
        "import go: reading the packages of the Makefile's controller-gen lines: {}",
        paths.join(" ")
    );
    Ok(paths)
}

/// The options of the `crd` generator on the controller-gen lines of the Go project's
/// Makefile (`crd:generateEmbeddedObjectMeta=true`, `crd:maxDescLen=0,allowDangerousTypes=true`),
/// kubebuilder's place for them: those PROJECT records, and whether floats are allowed.
fn makefile_crd_options(dir: &Path) -> Result<(CrdOptions, bool)> {
    let path = dir.join("Makefile");
    let text = makefile(dir)?;
    let mut crd = CrdOptions::default();
    let mut allow_dangerous_types = false;
    let options = text
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("crd:"))
        .flat_map(|options| options.split(','));
    for option in options {
        let (name, value) = option.split_once('=').unwrap_or((option, "true"));
        let value = value.trim_matches(['"', '\'']);
        match (name, value) {
            ("generateEmbeddedObjectMeta", "true") => crd.generate_embedded_object_meta = true,
            ("omitToolVersion", "true") => crd.omit_tool_version = true,
            ("allowDangerousTypes", "true") => allow_dangerous_types = true,
            ("maxDescLen", length) => match length.parse() {
                Ok(length) => crd.max_desc_len = Some(length),
                Err(_) => bail!(
                    "{}: crd:maxDescLen={length} is not a length",
                    path.display()
                ),
            },
            _ => continue,
        }
        eprintln!("import go: the Makefile runs controller-gen with crd:{name}={value}: kept");
    }
    Ok((crd, allow_dangerous_types))
}

/// The markers of Kubernetes' other code generators (client-gen, openapi-gen, ...), which
/// controller-gen reads past: no CRD, role or webhook changes with them.
const OTHER_GENERATORS: &[(&str, &str)] = &[
    ("+genclient", "client-gen"),
    ("+groupGoName", "client-gen"),
    ("+k8s:openapi-gen", "openapi-gen"),
    ("+k8s:openapi-model-package", "openapi-gen"),
    ("+k8s:conversion-gen", "conversion-gen"),
    ("+k8s:defaulter-gen", "defaulter-gen"),
    ("+k8s:deepcopy-gen", "deepcopy-gen"),
    ("+k8s:prerelease-lifecycle-gen", "prerelease-lifecycle-gen"),
    ("+patchMergeKey", "strategic merge patch (openapi-gen)"),
    ("+patchStrategy", "strategic merge patch (openapi-gen)"),
    ("+unionDiscriminator", "openapi-gen"),
    ("+unionMember", "openapi-gen"),
    ("+enum", "openapi-gen"),
];

/// Says which `+` lines the import leaves, as controller-gen does: those of other
/// generators by count, every other one (a typo, prose) with its place.
fn report_unrecognised(unknown: &[model::Unknown]) {
    let mut others: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for line in unknown {
        let name = line.text.split(['=', ' ', ',']).next().unwrap_or_default();
        let generator = OTHER_GENERATORS
            .iter()
            .find(|(prefix, _)| name == *prefix || name.starts_with(&format!("{prefix}:")));
        match generator {
            Some((prefix, generator)) => others.entry(prefix).or_insert((generator, 0)).1 += 1,
            None => eprintln!(
                "import go: {}: `{}` is no marker controller-gen knows; it reads past it, and so \
                 does the import",
                line.position, line.text
            ),
        }
    }
    for (prefix, (generator, count)) in others {
        eprintln!(
            "import go: {count} × {prefix} ({generator}'s marker; no CRD, role or webhook \
             changes with it): left out"
        );
    }
}

/// Runs `goimport` on every package of the module at `dir`.
fn goimport(dir: &Path, paths: &[String]) -> Result<Model> {
    let binary = crate::tools::GOIMPORT.binary()?;
    let output = Command::new(&binary)
        .current_dir(dir)
        .args(paths)
        .output()
        .with_context(|| format!("running {}", binary.display()))?;
    if !output.status.success() {
        bail!(
            "the Go packages of {} do not load (nothing was written):\n{}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    serde_json::from_slice(&output.stdout).context("reading goimport's output")
}

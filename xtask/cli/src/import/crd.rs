//! `import crd`: CRD YAML as a new Rust project. Each CRD version becomes the types and
//! markers controller-gen would have read to write it (`crd/model.rs`: the model `import go`
//! reads from Go), and the shared pipeline (`project.rs`) makes the project of them. A CRD
//! whose schema is not structural is refused with its file and YAML path (`crd/structural.rs`),
//! and nothing is written.

mod model;
mod structural;

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::external;
use super::project::{self, GoProject, Target};
use super::rust;
use crate::scaffold::project::CrdOptions;

/// The options of `import crd`.
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// A CRD YAML file (several documents may follow each other), or a directory of them
    /// (`*.yaml`, `*.yml`; documents that are not CRDs, such as a `kustomization.yaml`, are
    /// passed over).
    pub input: PathBuf,
    /// The new Rust project's directory, or with `--external` the new crate's (created; if
    /// it exists, it must be empty).
    pub dir: PathBuf,
    /// The project's name, or the crate's (default: the directory's name).
    #[arg(long)]
    pub name: Option<String>,
    /// Use the kubebuilder crates of the checkout at this path instead of crates.io.
    #[arg(long, value_name = "CHECKOUT", conflicts_with = "external")]
    pub local: Option<PathBuf>,
    /// The project's domain (default: the longest suffix the CRDs' groups share that leaves
    /// each a name of its own).
    #[arg(long, conflicts_with = "external")]
    pub domain: Option<String>,
    /// The kinds are another project's, which a controller of the kubebuilder-rs project
    /// around DIR uses: their types as a crate of that project's workspace (a dependency of
    /// its controller crate) whose kinds register no CRD, for `create api --resource=false
    /// --external-api-path`, instead of a new project.
    #[arg(long)]
    pub external: bool,
}

/// One CRD document and the file it was read from.
pub struct Document {
    /// The file, as given or found in the directory given.
    pub file: PathBuf,
    /// The CRD as JSON.
    pub crd: Value,
}

/// Imports the CRDs, then says what was made.
pub fn run(args: &Args) -> Result<()> {
    let documents = read(&args.input)?;
    let not_structural: Vec<String> = documents.iter().flat_map(structural::problems).collect();
    if !not_structural.is_empty() {
        bail!(
            "{} holds CRDs that are not structural (every schema node needs a type, as the \
             apiserver requires of apiextensions.k8s.io/v1); nothing was written:\n{}",
            args.input.display(),
            not_structural.join("\n")
        );
    }
    let read = model::read(&documents)?;
    for note in &read.left_out {
        eprintln!("import crd: {note}");
    }
    let options = rust::Options {
        // A CRD with a `number` has floats already.
        allow_dangerous_types: true,
    };
    let project = args.domain.clone().map(GoProject::with_domain);
    let imported = project::translate(read.model, project, options, &args.input)?;
    if args.external {
        return write_external(args, &imported, read.types);
    }
    let made = project::write(
        &Target {
            dir: &args.dir,
            name: args.name.as_deref(),
            local: args.local.as_deref(),
            // A CRD says what controller-gen's options did to it already.
            crd: &CrdOptions::default(),
        },
        &imported,
    )?;
    eprintln!(
        "import crd: {} CRDs, {} kinds in {} group versions, {} types, in {}. Next:\n  cd {}\n  \
         cargo xtask test",
        documents.len(),
        imported.kinds().count(),
        imported.version_count(),
        read.types,
        made.display(),
        args.dir.display()
    );
    Ok(())
}

/// The crate of another project's kinds, then the `create api` line of each.
fn write_external(args: &Args, imported: &project::Imported, types: usize) -> Result<()> {
    let made = external::write(&args.dir, args.name.as_deref(), imported)?;
    let module = made.name.replace('-', "_");
    eprintln!(
        "import crd: {} kinds in {} group versions, {types} types, in the crate {} ({}), a \
         dependency of {}'s controller crate. A controller for one of them:",
        imported.kinds().count(),
        imported.version_count(),
        made.name,
        made.dir,
        made.root.display()
    );
    for (version, kind) in imported.kinds() {
        let (group, domain) = version
            .group
            .split_once('.')
            .unwrap_or((version.group.as_str(), ""));
        let path = project::version_module(&version.group, &version.version, imported.multigroup)
            .replacen("crate", &module, 1);
        eprintln!(
            "  cargo xtask create api --group {group} --version {} --kind {} --resource=false \
             --external-api-path {path} --external-api-domain {domain}",
            version.version, kind.kind
        );
    }
    Ok(())
}

/// The CRD documents of `input` (a file, or the YAML files of a directory in name order).
pub fn read(input: &Path) -> Result<Vec<Document>> {
    let files = if input.is_dir() {
        let mut files: Vec<PathBuf> = fs::read_dir(input)
            .with_context(|| format!("reading {}", input.display()))?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .with_context(|| format!("reading {}", input.display()))?;
        files.retain(|file| {
            file.extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml")
        });
        files.sort();
        files
    } else {
        vec![input.to_owned()]
    };
    let mut documents = Vec::new();
    for file in files {
        let text =
            fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let values: Vec<Value> = serde_saphyr::from_multiple(&text)
            .with_context(|| format!("{} is not YAML", file.display()))?;
        for value in values {
            if value.is_null() {
                continue;
            }
            if value["kind"] != "CustomResourceDefinition" {
                eprintln!(
                    "import crd: {}: a {} is no CRD: passed over",
                    file.display(),
                    value["kind"].as_str().unwrap_or("document without a kind")
                );
                continue;
            }
            if value["apiVersion"] != "apiextensions.k8s.io/v1" {
                bail!(
                    "{}: the CRD {} is {}, not apiextensions.k8s.io/v1; nothing was written",
                    file.display(),
                    value["metadata"]["name"],
                    value["apiVersion"]
                );
            }
            documents.push(Document {
                file: file.clone(),
                crd: value,
            });
        }
    }
    if documents.is_empty() {
        bail!("{} holds no CustomResourceDefinition", input.display());
    }
    Ok(documents)
}

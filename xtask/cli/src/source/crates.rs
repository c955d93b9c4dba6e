//! Which crates to read: the path dependencies of the project's declarations binary, found
//! in the manifests; and the check that no other crate it links could register
//! declarations (every crate that does depends on the `kubebuilder` crate).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::{Crate, DeferToBuild, defer_to_build};
use crate::FRAMEWORK_CRATES;
use crate::manifests::DECLARATIONS_PACKAGE;

/// The crate whose attributes declare: a crate depending on it may register.
const FACADE: &str = "kubebuilder";

/// The crates the declarations binary of the workspace at `root` links for their
/// declarations, with what their sources call their dependencies: its path dependencies
/// (`api`, `controller`), and theirs that depend on the `kubebuilder` crate (a crate of
/// another project's kinds that `import crd --external` made, which the controller uses).
pub fn declarations_crates(root: &Path) -> Result<Vec<Crate>, DeferToBuild> {
    let workspace = Manifest::read(&root.join("Cargo.toml"))?;
    let binary_dir = workspace.member(root, DECLARATIONS_PACKAGE)?;
    let binary = Manifest::read(&binary_dir.join("Cargo.toml"))?;
    let binary_dependencies = binary.dependencies(&binary_dir, &workspace, root)?;
    let mut declared = vec![(
        DECLARATIONS_PACKAGE.to_owned(),
        packages(&binary_dependencies),
    )];
    let mut crates = Vec::new();
    // Each with whether the binary names it (read whatever it depends on) or a crate read
    // does (read when it depends on the facade).
    let mut pending: Vec<(Dependency, bool)> = binary_dependencies
        .into_iter()
        .rev()
        .map(|dependency| (dependency, true))
        .collect();
    while let Some((dependency, direct)) = pending.pop() {
        let read = declared
            .iter()
            .any(|(package, _)| *package == dependency.package);
        if read || FRAMEWORK_CRATES.contains(&dependency.package.as_str()) {
            continue;
        }
        let Some(dir) = dependency.path else {
            return defer_to_build!(
                "{DECLARATIONS_PACKAGE} depends on {}, which is not a path dependency",
                dependency.package
            );
        };
        let manifest = Manifest::read(&dir.join("Cargo.toml"))?;
        let dependencies = manifest.dependencies(&dir, &workspace, root)?;
        if !direct && !dependencies.iter().any(|d| d.package == FACADE) {
            continue;
        }
        crates.push(manifest.library(&dir, &dependencies)?);
        declared.push((dependency.package, packages(&dependencies)));
        pending.extend(
            dependencies
                .into_iter()
                .filter(|d| d.path.is_some())
                .map(|d| (d, false)),
        );
    }
    check_lock(root, &declared)?;
    Ok(crates)
}

fn packages(dependencies: &[Dependency]) -> Vec<String> {
    dependencies.iter().map(|d| d.package.clone()).collect()
}

/// A `Cargo.toml`.
struct Manifest {
    path: PathBuf,
    table: Table,
}

/// A dependency as a manifest declares it.
struct Dependency {
    /// The name the depending crate's sources use (`k8s_openapi`).
    name: String,
    /// The package (`k8s-openapi`).
    package: String,
    /// Its directory, for a path dependency.
    path: Option<PathBuf>,
}

impl Manifest {
    fn read(path: &Path) -> Result<Manifest, DeferToBuild> {
        let text = match fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => return defer_to_build!("reading {}: {error}", path.display()),
        };
        match text.parse::<Table>() {
            Ok(table) => Ok(Manifest {
                path: path.to_owned(),
                table,
            }),
            Err(error) => defer_to_build!("{} is not TOML: {error}", path.display()),
        }
    }

    fn get(&self, dotted: &str) -> Option<&Value> {
        let mut parts = dotted.split('.');
        let first = self.table.get(parts.next()?)?;
        parts.try_fold(first, |value, part| value.get(part))
    }

    fn str(&self, dotted: &str) -> Option<&str> {
        self.get(dotted).and_then(Value::as_str)
    }

    /// The directory of the workspace member named `package`.
    fn member(&self, root: &Path, package: &str) -> Result<PathBuf, DeferToBuild> {
        let members = self
            .get("workspace.members")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str);
        for member in members {
            for dir in expand_member(root, member)? {
                let Ok(manifest) = Manifest::read(&dir.join("Cargo.toml")) else {
                    continue;
                };
                if manifest.str("package.name") == Some(package) {
                    return Ok(dir);
                }
            }
        }
        defer_to_build!("the workspace has no package {package}")
    }

    /// The normal dependencies (those of every target included), `dir` being this
    /// manifest's directory.
    fn dependencies(
        &self,
        dir: &Path,
        workspace: &Manifest,
        root: &Path,
    ) -> Result<Vec<Dependency>, DeferToBuild> {
        let mut tables = vec![self.get("dependencies")];
        if let Some(targets) = self.get("target").and_then(Value::as_table) {
            tables.extend(targets.values().map(|target| target.get("dependencies")));
        }
        let mut dependencies = Vec::new();
        for table in tables.into_iter().flatten() {
            let Some(table) = table.as_table() else {
                return defer_to_build!(
                    "{}: a dependency table is not a table",
                    self.path.display()
                );
            };
            for (key, spec) in table {
                dependencies.push(dependency(key, spec, dir, workspace, root)?);
            }
        }
        Ok(dependencies)
    }

    /// The library of the package at `dir`, with these dependencies, as a crate to read.
    fn library(&self, dir: &Path, dependencies: &[Dependency]) -> Result<Crate, DeferToBuild> {
        let Some(package) = self.str("package.name") else {
            return defer_to_build!("{} names no package", self.path.display());
        };
        if self.get("lib.proc-macro").and_then(Value::as_bool) == Some(true) {
            return defer_to_build!("{package} is a proc-macro crate");
        }
        let name = self
            .str("lib.name")
            .map_or_else(|| package.replace('-', "_"), str::to_owned);
        let root_file = dir.join(self.str("lib.path").unwrap_or("src/lib.rs"));
        let externs = dependencies
            .iter()
            .map(|dependency| {
                (
                    dependency.name.clone(),
                    dependency.package.replace('-', "_"),
                )
            })
            .collect();
        Ok(Crate {
            name,
            root: root_file,
            externs,
        })
    }
}

/// One `[dependencies]` entry; `workspace = true` takes the workspace's.
fn dependency(
    key: &str,
    spec: &Value,
    dir: &Path,
    workspace: &Manifest,
    root: &Path,
) -> Result<Dependency, DeferToBuild> {
    let inherited = spec.get("workspace").and_then(Value::as_bool) == Some(true);
    let (spec, base) = if inherited {
        match workspace
            .get("workspace.dependencies")
            .and_then(|d| d.get(key))
        {
            Some(spec) => (spec, root),
            None => return defer_to_build!("{key} has no entry in [workspace.dependencies]"),
        }
    } else {
        (spec, dir)
    };
    let package = spec
        .get("package")
        .and_then(Value::as_str)
        .unwrap_or(key)
        .to_owned();
    Ok(Dependency {
        name: key.replace('-', "_"),
        package,
        path: spec
            .get("path")
            .and_then(Value::as_str)
            .map(|path| base.join(path)),
    })
}

/// A `workspace.members` entry: a directory, or a glob whose last part is `*`.
fn expand_member(root: &Path, member: &str) -> Result<Vec<PathBuf>, DeferToBuild> {
    let Some(parent) = member.strip_suffix("/*") else {
        if member.contains(['*', '?', '[']) {
            return defer_to_build!(
                "the workspace member pattern {member} is not `dir` or `dir/*`"
            );
        }
        return Ok(vec![root.join(member)]);
    };
    let Ok(entries) = fs::read_dir(root.join(parent)) else {
        return Ok(Vec::new());
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// `Cargo.lock` locks every dependency the manifests declare (a dependency added since
/// the last build is not, and could register declarations), and every crate the
/// declarations binary may link (by the lock file, which lists more: the dev-dependencies
/// too) that depends on the `kubebuilder` crate is one read here or one of kubebuilder for
/// Rust's own, which declare nothing. `declared` are the packages whose manifests were
/// read, with their dependencies.
fn check_lock(root: &Path, declared: &[(String, Vec<String>)]) -> Result<(), DeferToBuild> {
    let lock = Manifest::read(&root.join("Cargo.lock"))?;
    let graph = lock_graph(&lock);
    for (package, dependencies) in declared {
        let locked = graph.get(package).map(Vec::as_slice).unwrap_or_default();
        if let Some(missing) = dependencies.iter().find(|d| !locked.contains(d)) {
            return defer_to_build!(
                "Cargo.lock does not lock {missing}, a dependency of {package}, yet"
            );
        }
    }
    let mut seen = BTreeSet::new();
    let mut pending = vec![DECLARATIONS_PACKAGE.to_owned()];
    while let Some(package) = pending.pop() {
        if !seen.insert(package.clone()) {
            continue;
        }
        let dependencies = graph.get(&package).map(Vec::as_slice).unwrap_or_default();
        let registers = dependencies.iter().any(|d| d == FACADE);
        let known = FRAMEWORK_CRATES.contains(&package.as_str())
            || declared.iter().any(|(read, _)| *read == package);
        if registers && !known {
            return defer_to_build!(
                "{package} depends on {FACADE}, so it may declare what only a build sees"
            );
        }
        pending.extend(dependencies.iter().cloned());
    }
    Ok(())
}

/// Each locked package's dependencies, by name.
fn lock_graph(lock: &Manifest) -> BTreeMap<String, Vec<String>> {
    let packages = lock
        .get("package")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let mut graph: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in packages {
        let Some(name) = package.get("name").and_then(Value::as_str) else {
            continue;
        };
        // An entry is `name`, or `name version` when several versions are locked.
        let dependencies = package
            .get("dependencies")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|entry| entry.split(' ').next())
            .map(str::to_owned);
        graph
            .entry(name.to_owned())
            .or_default()
            .extend(dependencies);
    }
    graph
}

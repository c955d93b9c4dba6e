//! A kind with several versions: which one is stored (and so the hub every other version
//! converts through), and the edits of the types files that `create api` and `create
//! webhook --conversion` make.
//!
//! How the storage version is picked, where kubebuilder asks for `+kubebuilder:storageversion`
//! by hand: the version a kind was created with stays the storage version (a new version is
//! never stored by surprise: that would need a migration of the stored objects), and gets
//! `storageversion` when a second version arrives. A new version is not served until it
//! converts: the CRD never serves a version the apiserver cannot convert.

use anyhow::{Context as _, Result, bail};

use super::layout::KindLayout;
use super::plan::Plan;

/// The types file of `version` of `kind` (whose files are in `layout`): the file in
/// `api/src/<version>/` (`api/src/<group>/<version>/`) that declares it (`kind = "<Kind>"`),
/// which `create api` names `<kind>_types.rs`.
pub fn types_path(plan: &Plan, layout: &KindLayout, version: &str, kind: &str) -> Result<String> {
    let dir = layout.api_dir(version);
    let declaration = format!("kind = \"{kind}\"");
    let mut files: Vec<String> = std::fs::read_dir(plan.root().join(&dir))
        .with_context(|| format!("reading {dir} (PROJECT lists version {version} of {kind})"))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".rs"))
        .map(|name| format!("{dir}/{name}"))
        .collect();
    files.sort();
    for path in files {
        if plan
            .read(&path)?
            .is_some_and(|text| text.contains(&declaration))
        {
            return Ok(path);
        }
    }
    bail!("no file in {dir} declares `{declaration}` (PROJECT lists version {version} of {kind})")
}

/// The storage version among `versions` (the kind's versions with types): the one whose
/// types say `storageversion`, else the only one, which is marked so. More than one
/// version and none marked is the user's to settle.
pub fn storage_version(
    plan: &mut Plan,
    layout: &KindLayout,
    kind: &str,
    versions: &[String],
) -> Result<String> {
    let mut marked = Vec::new();
    for version in versions {
        let path = types_path(plan, layout, version, kind)?;
        let types = read(plan, &path)?;
        if types
            .lines()
            .any(|line| is_argument(line, "storageversion"))
        {
            marked.push(version.clone());
        }
    }
    match (marked.as_slice(), versions) {
        ([storage], _) => Ok(storage.clone()),
        ([], [only]) => {
            let path = types_path(plan, layout, only, kind)?;
            insert_after_version(plan, &path, only, "    storageversion,")?;
            Ok(only.clone())
        }
        ([], _) => bail!(
            "none of the versions {} says `storageversion`: mark the one that is stored",
            versions.join(", ")
        ),
        (several, _) => bail!(
            "versions {} all say `storageversion`: only one can be stored",
            several.join(", ")
        ),
    }
}

/// Makes `spoke`'s types convert through `hub_argument` (`hub = crate::v1::Kind,`, `hub =
/// crate::ship::v1::Kind,`):
/// replaces the `unservedversion` `create api` wrote (with its comment), or adds the
/// argument when the user removed it.
pub fn make_spoke(plan: &mut Plan, path: &str, spoke: &str, hub_argument: &str) -> Result<()> {
    let types = read(plan, path)?;
    if types
        .lines()
        .any(|line| line.trim_start().starts_with("hub ="))
    {
        bail!("{path} names a hub already");
    }
    let lines: Vec<&str> = types.lines().collect();
    let Some(unserved) = lines
        .iter()
        .position(|line| is_argument(line, "unservedversion"))
    else {
        return insert_after_version(plan, path, spoke, hub_argument);
    };
    // The comment above it is the scaffold's note on how to serve the version.
    let comment_start = lines[..unserved]
        .iter()
        .rposition(|line| !line.trim_start().starts_with("//"))
        .map_or(0, |last_code| last_code + 1);
    let mut edited: Vec<&str> = lines[..comment_start].to_vec();
    edited.push(hub_argument);
    edited.extend(&lines[unserved + 1..]);
    plan.write(path, edited.join("\n") + "\n");
    Ok(())
}

/// Whether `line` is the resource argument `name` alone.
fn is_argument(line: &str, name: &str) -> bool {
    line.trim().trim_end_matches(',') == name
}

fn insert_after_version(plan: &mut Plan, path: &str, version: &str, line: &str) -> Result<()> {
    let types = read(plan, path)?;
    let version_argument = format!("version = \"{version}\",");
    let mut found = false;
    let mut edited = String::with_capacity(types.len() + line.len() + 1);
    for existing in types.lines() {
        edited.push_str(existing);
        edited.push('\n');
        if !found && existing.trim() == version_argument {
            edited.push_str(line);
            edited.push('\n');
            found = true;
        }
    }
    if !found {
        bail!(
            "{path} has no `{version_argument}` line in its resource attribute to add `{}` to",
            line.trim()
        );
    }
    plan.write(path, edited);
    Ok(())
}

fn read(plan: &Plan, path: &str) -> Result<String> {
    plan.read(path)?
        .with_context(|| format!("{path} is missing (PROJECT lists its version)"))
}

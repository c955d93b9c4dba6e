//! A kind with several versions: which one is stored (and so the hub every other version
//! converts through), and the edits of the types files that `create api` and `create
//! webhook --conversion` make.
//!
//! How the storage version is picked, where kubebuilder asks for `+kubebuilder:storageversion`
//! by hand: the version a kind was created with stays the storage version (a new version is
//! never stored by surprise: that would need a migration of the stored objects), and gets
//! `storageversion` when a second version arrives. A new version is not served until it
//! converts: the CRD never serves a version the apiserver cannot convert.
//!
//! The types files are read with syn and their `#[kubebuilder::resource(...)]` with the
//! attribute's own parser, as `cargo xtask manifests` reads them; an edit goes where the
//! parsed argument is, and leaves the rest of the file as the user wrote it.

use anyhow::{Context as _, Result, bail};
use kubebuilder_attributes::resource::{self, Written, WrittenArgument};

use super::layout::KindLayout;
use super::plan::Plan;

/// A version of a kind as its types file declares it.
pub struct Declaration {
    /// The file, relative to the project.
    pub path: String,
    text: String,
    written: Written,
}

impl Declaration {
    /// The declaration of `version` of `kind` (whose files are in `layout`): the
    /// `#[kubebuilder::resource(...)]` saying that kind and version, in a file of
    /// `api/src/<version>/` (`api/src/<group>/<version>/`), which `create api` names
    /// `<kind>_types.rs`.
    pub fn find(plan: &Plan, layout: &KindLayout, version: &str, kind: &str) -> Result<Self> {
        let dir = layout.api_dir(version);
        let mut files: Vec<String> = std::fs::read_dir(plan.root().join(&dir))
            .with_context(|| format!("reading {dir} (PROJECT lists version {version} of {kind})"))?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| name.ends_with(".rs"))
            .map(|name| format!("{dir}/{name}"))
            .collect();
        files.sort();
        let mut found = Vec::new();
        for path in files {
            let text = read(plan, &path)?;
            for written in resources(&path, &text)? {
                let declares =
                    |value: Option<String>, wanted: &str| value.as_deref() == Some(wanted);
                if declares(written.resource.written_kind(), kind)
                    && declares(written.resource.written_version(), version)
                {
                    found.push(Declaration {
                        path: path.clone(),
                        text: text.clone(),
                        written,
                    });
                }
            }
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => bail!(
                "no file in {dir} declares version {version} of {kind} (`#[kubebuilder::resource(version = \"{version}\", kind = \"{kind}\", ...)]`), which PROJECT lists"
            ),
            _ => bail!(
                "{} declare version {version} of {kind}: one declaration per version",
                found
                    .iter()
                    .map(|d| d.path.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        }
    }

    /// Says `storageversion`.
    pub fn is_storage(&self) -> bool {
        self.written.resource.storage
    }

    fn argument(&self, name: &str) -> Option<&WrittenArgument> {
        self.written.arguments.iter().find(|a| a.name == name)
    }

    /// The text with `argument` (`storageversion`, `hub = crate::v1::Kind`) added after
    /// the `version` argument: on a line of its own when `version` ends its line.
    fn with_argument_after_version(&self, argument: &str) -> Result<String> {
        let Some(version) = self.argument("version") else {
            bail!(
                "{} has no `version` argument to add `{argument}` after",
                self.path
            );
        };
        let (start, end) = self.byte_range(version)?;
        let text = &self.text;
        let has_comma = text[..end].ends_with(',');
        let rest_of_line = text[end..].split('\n').next().unwrap_or_default();
        let insertion = if !has_comma {
            format!(", {argument}")
        } else if rest_of_line.trim().is_empty() {
            format!("\n{}{argument},", indentation(text, start))
        } else {
            format!(" {argument},")
        };
        Ok(format!("{}{insertion}{}", &text[..end], &text[end..]))
    }

    /// The text with the argument `name` replaced by `argument`. An argument on lines of
    /// its own goes with the comment lines right above it (the scaffold's note on it).
    fn with_argument_replaced(&self, name: &str, argument: &str) -> Result<Option<String>> {
        let Some(replaced) = self.argument(name) else {
            return Ok(None);
        };
        let (start, end) = self.byte_range(replaced)?;
        let text = &self.text;
        let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |at| end + at);
        let alone =
            text[line_start..start].trim().is_empty() && text[end..line_end].trim().is_empty();
        if !alone {
            let comma = if text[..end].ends_with(',') { "," } else { "" };
            return Ok(Some(format!(
                "{}{argument}{comma}{}",
                &text[..start],
                &text[end..]
            )));
        }
        let mut from = line_start;
        while from > 0 {
            let above = text[..from - 1].rfind('\n').map_or(0, |at| at + 1);
            if !text[above..from].trim_start().starts_with("//") {
                break;
            }
            from = above;
        }
        let indent = indentation(text, start);
        Ok(Some(format!(
            "{}{indent}{argument},{}",
            &text[..from],
            &text[line_end..]
        )))
    }

    /// Where `argument` is in the text: from its name to its comma (or last token).
    fn byte_range(&self, argument: &WrittenArgument) -> Result<(usize, usize)> {
        let start = argument.first.byte_range().start;
        let end = argument.last.byte_range().end;
        match self.text.get(start..end) {
            Some(written) if written.starts_with(&argument.name) => Ok((start, end)),
            _ => bail!(
                "{}: the `{}` argument is not where its tokens say (a byte order mark?)",
                self.path,
                argument.name
            ),
        }
    }
}

/// The `#[kubebuilder::resource(...)]` attributes of a file's structs (in inline modules
/// too), read; a file or an attribute the parser refuses is an error naming it.
fn resources(path: &str, text: &str) -> Result<Vec<Written>> {
    let file = syn::parse_file(text).map_err(|error| {
        let at = error.span().start();
        anyhow::anyhow!("{path}:{}:{}: {error}", at.line, at.column + 1)
    })?;
    let mut found = Vec::new();
    collect_resources(path, &file.items, &mut found)?;
    Ok(found)
}

fn collect_resources(path: &str, items: &[syn::Item], found: &mut Vec<Written>) -> Result<()> {
    for item in items {
        match item {
            syn::Item::Struct(item) => {
                for attr in &item.attrs {
                    if !resource::is_resource_attribute(attr) {
                        continue;
                    }
                    let written = resource::read_written(attr).map_err(|errors| {
                        let at = attr.pound_token.span.start();
                        anyhow::anyhow!(
                            "{path}:{}: the `#[kubebuilder::resource]` of `{}` is refused: {}",
                            at.line,
                            item.ident,
                            errors.messages().join("; ")
                        )
                    })?;
                    found.push(written);
                }
            }
            syn::Item::Mod(module) => {
                if let Some((_, items)) = &module.content {
                    collect_resources(path, items, found)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The whitespace that begins the line of `at`.
fn indentation(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start().len()]
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
        if Declaration::find(plan, layout, version, kind)?.is_storage() {
            marked.push(version.clone());
        }
    }
    match (marked.as_slice(), versions) {
        ([storage], _) => Ok(storage.clone()),
        ([], [only]) => {
            let declaration = Declaration::find(plan, layout, only, kind)?;
            let edited = declaration.with_argument_after_version("storageversion")?;
            plan.write(&declaration.path, edited);
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

/// Makes a spoke's declaration convert through the hub (`hub_argument`: `hub =
/// crate::v1::Kind`, `hub = crate::ship::v1::Kind`): replaces the `unservedversion` `create
/// api` wrote (with its comment), or adds the argument when the user removed it.
pub fn make_spoke(plan: &mut Plan, declaration: &Declaration, hub_argument: &str) -> Result<()> {
    if declaration.written.resource.hub.is_some() {
        bail!("{} names a hub already", declaration.path);
    }
    let edited = match declaration.with_argument_replaced("unservedversion", hub_argument)? {
        Some(edited) => edited,
        None => declaration.with_argument_after_version(hub_argument)?,
    };
    plan.write(&declaration.path, edited);
    Ok(())
}

fn read(plan: &Plan, path: &str) -> Result<String> {
    plan.read(path)?
        .with_context(|| format!("{path} is missing (PROJECT lists its version)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MULTI_LINE: &str = r#"use kubebuilder::prelude::*;

/// FrigateSpec defines the desired state of Frigate.
#[kubebuilder::resource(
    group = "ship.example.com",
    version = "v2",
    kind = "Frigate",
    status = FrigateStatus,
    subresource(status),
    // Not served until it converts to v1, the storage version: `cargo xtask create webhook
    // --group ship --version v1 --kind Frigate --conversion --spoke v2`.
    unservedversion,
)]
pub struct FrigateSpec {}
"#;

    /// A project whose `api/src/v2/` holds `files`.
    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Plan) {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("api/src/v2")).unwrap();
        for (name, text) in files {
            std::fs::write(root.path().join("api/src/v2").join(name), text).unwrap();
        }
        let plan = Plan::new(root.path());
        (root, plan)
    }

    fn find(plan: &Plan) -> Result<Declaration> {
        Declaration::find(plan, &KindLayout::flat(), "v2", "Frigate")
    }

    #[test]
    fn the_declaring_file_is_found_by_its_parsed_arguments() {
        let other = MULTI_LINE.replace("Frigate", "Destroyer");
        let (_root, plan) = project(&[("a_types.rs", &other), ("frigate.rs", MULTI_LINE)]);
        assert_eq!(find(&plan).unwrap().path, "api/src/v2/frigate.rs");
        // A comment or a string that says `kind = "Frigate"` declares nothing.
        let mentions = "// kind = \"Frigate\"\nconst K: &str = r#\"kind = \"Frigate\"\"#;\n";
        let (_root, plan) = project(&[("mentions.rs", mentions)]);
        let error = find(&plan).err().unwrap().to_string();
        assert!(
            error.starts_with("no file in api/src/v2 declares version v2 of Frigate"),
            "{error}"
        );
    }

    #[test]
    fn an_unserved_version_becomes_a_spoke_with_its_comment_gone() {
        let (_root, mut plan) = project(&[("frigate.rs", MULTI_LINE)]);
        let declaration = find(&plan).unwrap();
        assert!(!declaration.is_storage());
        make_spoke(&mut plan, &declaration, "hub = crate::v1::Frigate").unwrap();
        let edited = plan.read("api/src/v2/frigate.rs").unwrap().unwrap();
        let expected = MULTI_LINE.replace(
            "    // Not served until it converts to v1, the storage version: `cargo xtask create webhook\n    // --group ship --version v1 --kind Frigate --conversion --spoke v2`.\n    unservedversion,\n",
            "    hub = crate::v1::Frigate,\n",
        );
        assert_eq!(edited, expected);
    }

    #[test]
    fn arguments_go_after_the_version_on_its_line_or_on_a_line_of_their_own() {
        let (_root, plan) = project(&[("frigate.rs", MULTI_LINE)]);
        let edited = find(&plan)
            .unwrap()
            .with_argument_after_version("storageversion")
            .unwrap();
        assert!(
            edited.contains("    version = \"v2\",\n    storageversion,\n    kind"),
            "{edited}"
        );

        let one_line = "#[kubebuilder::resource(group = \"ship.example.com\", version = \"v2\", kind = \"Frigate\")]\npub struct FrigateSpec {}\n";
        let (_root, mut plan) = project(&[("frigate.rs", one_line)]);
        let declaration = find(&plan).unwrap();
        assert_eq!(
            declaration
                .with_argument_after_version("storageversion")
                .unwrap(),
            one_line.replace("\"v2\",", "\"v2\", storageversion,")
        );
        make_spoke(&mut plan, &declaration, "hub = crate::v1::Frigate").unwrap();
        assert_eq!(
            plan.read("api/src/v2/frigate.rs").unwrap().unwrap(),
            one_line.replace("\"v2\",", "\"v2\", hub = crate::v1::Frigate,")
        );

        let version_last = "#[kubebuilder::resource(group = \"ship.example.com\", kind = \"Frigate\", version = \"v2\")]\npub struct FrigateSpec {}\n";
        let (_root, plan) = project(&[("frigate.rs", version_last)]);
        assert_eq!(
            find(&plan)
                .unwrap()
                .with_argument_after_version("storageversion")
                .unwrap(),
            version_last.replace("\"v2\"", "\"v2\", storageversion")
        );
    }

    #[test]
    fn a_spoke_names_its_hub_once() {
        let spoke = MULTI_LINE.replace("    unservedversion,\n", "    hub = crate::v1::Frigate,\n");
        let (_root, mut plan) = project(&[("frigate.rs", &spoke)]);
        let declaration = find(&plan).unwrap();
        let error = make_spoke(&mut plan, &declaration, "hub = crate::v1::Frigate").unwrap_err();
        assert_eq!(
            error.to_string(),
            "api/src/v2/frigate.rs names a hub already"
        );
    }

    #[test]
    fn a_file_or_attribute_that_does_not_parse_is_named() {
        let (_root, plan) = project(&[("broken.rs", "pub struct {"), ("frigate.rs", MULTI_LINE)]);
        let error = find(&plan).err().unwrap().to_string();
        assert!(error.starts_with("api/src/v2/broken.rs:1:"), "{error}");

        let refused = MULTI_LINE.replace("unservedversion", "unservedversoin");
        let (_root, plan) = project(&[("frigate.rs", &refused)]);
        let error = find(&plan).err().unwrap().to_string();
        assert!(
            error.starts_with("api/src/v2/frigate.rs:4: the `#[kubebuilder::resource]` of `FrigateSpec` is refused: "),
            "{error}"
        );
    }

    #[test]
    fn two_declarations_of_a_version_are_refused() {
        let (_root, plan) = project(&[("a.rs", MULTI_LINE), ("b.rs", MULTI_LINE)]);
        let error = find(&plan).err().unwrap().to_string();
        assert_eq!(
            error,
            "api/src/v2/a.rs and api/src/v2/b.rs declare version v2 of Frigate: one declaration per version"
        );
    }
}

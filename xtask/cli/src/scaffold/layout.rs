//! Where a kind's code goes: flat (`api/src/<version>/`, `controller/src/<kind>/`: Rust
//! paths `api::<version>`, `controller::<kind>`), or under its group in a multigroup project
//! (`edit --multigroup`: `api/src/<group>/<version>/`, `controller/src/<group>/<kind>/`),
//! so that the same kind in two groups does not collide, as kubebuilder's multi-group
//! layout.
//!
//! A kind keeps the layout it was created with: PROJECT records the module of each
//! version's types (`path`: `api::v1`, `api::ship::v1`), and its new versions and webhooks
//! go where that says. Only new kinds follow the project's `multigroup`.

use anyhow::{Result, bail};

use super::names::{self, RUST_KEYWORDS, TAKEN_SNAKE_NAMES};
use super::plan::Plan;
use super::project::{Project, Resource};

/// The layout of one kind's files and modules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindLayout {
    /// The group's module (`ship`), `None` in the flat layout.
    group_module: Option<String>,
}

impl KindLayout {
    /// `api::<version>`, `controller::<kind>`.
    pub fn flat() -> Self {
        Self { group_module: None }
    }

    /// `api::<group_module>::<version>`, `controller::<group_module>::<kind>`.
    pub fn grouped(group_module: &str) -> Self {
        Self {
            group_module: Some(group_module.to_owned()),
        }
    }

    /// The layout a recorded types module says (`api::v1`: flat, `api::ship::v1`: grouped);
    /// `None` for any other module (another crate's).
    pub fn from_recorded_path(path: &str) -> Option<Self> {
        let segments: Vec<&str> = path.strip_prefix("api::")?.split("::").collect();
        match segments.as_slice() {
            [_version] => Some(Self::flat()),
            [group_module, _version] => Some(Self::grouped(group_module)),
            _ => None,
        }
    }

    /// The group's module, in the multigroup layout.
    pub fn group_module(&self) -> Option<&str> {
        self.group_module.as_deref()
    }

    /// The module of `version`'s types inside the `api` crate: `v1`, `ship::v1`.
    pub fn api_module(&self, version: &str) -> String {
        self.prefixed("::", version)
    }

    /// The module of `version`'s types for other crates: `api::v1`, `api::ship::v1`.
    pub fn api_path(&self, version: &str) -> String {
        format!("api::{}", self.api_module(version))
    }

    /// The directory of `version`'s types: `api/src/v1`, `api/src/ship/v1`.
    pub fn api_dir(&self, version: &str) -> String {
        format!("api/src/{}", self.prefixed("/", version))
    }

    /// The file that declares the version modules: `api/src/lib.rs`, `api/src/ship/mod.rs`.
    pub fn api_parent_module_file(&self) -> String {
        self.parent_module_file("api")
    }

    /// The kind's module inside the `controller` crate: `frigate`, `ship::frigate`.
    pub fn controller_module(&self, kind_snake: &str) -> String {
        self.prefixed("::", kind_snake)
    }

    /// The kind's controller directory: `controller/src/frigate`, `controller/src/ship/frigate`.
    pub fn controller_dir(&self, kind_snake: &str) -> String {
        format!("controller/src/{}", self.prefixed("/", kind_snake))
    }

    /// The file that declares the kind modules: `controller/src/lib.rs`,
    /// `controller/src/ship/mod.rs`.
    pub fn controller_parent_module_file(&self) -> String {
        self.parent_module_file("controller")
    }

    /// The start of the kind's test files in `controller/tests/`: `frigate`, `ship_frigate`
    /// (one directory for all groups).
    pub fn test_stem(&self, kind_snake: &str) -> String {
        self.prefixed("_", kind_snake)
    }

    /// A name unique to the kind among the project's, for names the manager or the
    /// apiserver want unique (the controller's, the webhooks'): `frigate`, `ship-frigate`.
    pub fn unique_name(&self, group: &str, kind_lower: &str) -> String {
        match self.group_module {
            None => kind_lower.to_owned(),
            Some(_) => format!("{}-{kind_lower}", group.replace('.', "-")),
        }
    }

    fn prefixed(&self, separator: &str, name: &str) -> String {
        match &self.group_module {
            None => name.to_owned(),
            Some(group) => format!("{group}{separator}{name}"),
        }
    }

    fn parent_module_file(&self, krate: &str) -> String {
        match &self.group_module {
            None => format!("{krate}/src/lib.rs"),
            Some(group) => format!("{krate}/src/{group}/mod.rs"),
        }
    }
}

/// The Rust module of `group`: its first DNS label, `-` as `_` (`sea-life.fish`: `sea_life`).
pub fn group_module_name(group: &str) -> String {
    group.split('.').next().unwrap_or(group).replace('-', "_")
}

/// Where `group`/`kind` of this project goes: where its versions are already (recorded in
/// PROJECT), else under its group in a multigroup project, else flat.
pub fn kind_layout(project: &Project, group: &str, kind: &str) -> KindLayout {
    let mut versions = project
        .versions_of(group, kind)
        .filter(|resource| resource.api.is_some())
        .peekable();
    if versions.peek().is_some() {
        // Written before PROJECT recorded paths: flat, the only layout then.
        return versions
            .find_map(|resource| {
                resource
                    .path
                    .as_deref()
                    .and_then(KindLayout::from_recorded_path)
            })
            .unwrap_or_else(KindLayout::flat);
    }
    if project.multigroup {
        KindLayout::grouped(&group_module_name(group))
    } else {
        KindLayout::flat()
    }
}

/// The kinds (each version) of the project in the multigroup layout.
pub fn grouped_kinds(project: &Project) -> impl Iterator<Item = &Resource> {
    project.resources.iter().filter(|resource| {
        !resource.core
            && !resource.external
            && resource
                .path
                .as_deref()
                .and_then(KindLayout::from_recorded_path)
                .is_some_and(|layout| layout.group_module().is_some())
    })
}

/// Checks that `group`'s module (`layout`'s) can be added to the `api` and `controller`
/// crates: a Rust identifier, no keyword, no name the scaffolded code uses, and no module
/// either crate has already for something else (another group with the same first label,
/// a version, a kind).
pub fn validate_group_module(
    plan: &Plan,
    project: &Project,
    group: &str,
    layout: &KindLayout,
) -> Result<()> {
    let Some(module) = layout.group_module() else {
        return Ok(());
    };
    let recorded_for = |other_group: &str| {
        project.resources.iter().any(|resource| {
            resource.group == other_group
                && resource.domain == project.domain
                && resource
                    .path
                    .as_deref()
                    .and_then(KindLayout::from_recorded_path)
                    .is_some_and(|recorded| recorded == *layout)
        })
    };
    // The group has its module already: it was checked when it was made.
    if recorded_for(group) {
        return Ok(());
    }
    let invalid = |why: &str| -> Result<()> {
        bail!(
            "invalid --group {group:?} in the multigroup layout: its Rust module `{module}` \
             (api::{module}::<version>, controller::{module}::<kind>) {why}"
        )
    };
    if module.starts_with(|c: char| c.is_ascii_digit()) {
        return invalid("would start with a digit, which no Rust identifier does");
    }
    if RUST_KEYWORDS.contains(&module) {
        return invalid("would be a Rust keyword");
    }
    if TAKEN_SNAKE_NAMES.contains(&module) || CRATE_NAMES.contains(&module) {
        return invalid("is a name the scaffolded code uses itself");
    }
    if names::validate_version(module).is_ok() {
        return invalid("would read as a version module");
    }
    if let Some(other) = project.resources.iter().find(|resource| {
        resource.group != group
            && resource.domain == project.domain
            && group_module_name(&resource.group) == module
    }) {
        return invalid(&format!("is group {}'s already", other.group));
    }
    for parent in ["api/src/lib.rs", "controller/src/lib.rs"] {
        let declared = format!("pub mod {module};");
        let text = plan.read(parent)?.unwrap_or_default();
        if text.lines().any(|line| line.trim() == declared) {
            return invalid(&format!("is declared in {parent} already"));
        }
    }
    Ok(())
}

/// Crates the scaffolded code names at the start of paths (`kube::api::Api`), which a module
/// of the same name at a crate's root would make ambiguous.
const CRATE_NAMES: &[&str] = &[
    "alloc",
    "core",
    "k8s_openapi",
    "kube",
    "kubebuilder",
    "kubebuilder_envtest",
    "kubebuilder_runtime",
    "serde",
    "serde_json",
    "std",
    "thiserror",
    "tokio",
    "tracing",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouped_kinds_go_under_their_group_and_flat_ones_do_not() {
        let flat = KindLayout::flat();
        assert_eq!(flat.api_path("v1"), "api::v1");
        assert_eq!(flat.api_dir("v1"), "api/src/v1");
        assert_eq!(flat.controller_dir("frigate"), "controller/src/frigate");
        assert_eq!(flat.test_stem("frigate"), "frigate");
        assert_eq!(flat.unique_name("ship", "frigate"), "frigate");
        let grouped = KindLayout::grouped("sea_life");
        assert_eq!(grouped.api_path("v1"), "api::sea_life::v1");
        assert_eq!(grouped.api_dir("v1"), "api/src/sea_life/v1");
        assert_eq!(grouped.api_parent_module_file(), "api/src/sea_life/mod.rs");
        assert_eq!(grouped.controller_module("frigate"), "sea_life::frigate");
        assert_eq!(
            grouped.controller_parent_module_file(),
            "controller/src/sea_life/mod.rs"
        );
        assert_eq!(grouped.test_stem("frigate"), "sea_life_frigate");
        assert_eq!(
            grouped.unique_name("sea-life.fish", "frigate"),
            "sea-life-fish-frigate"
        );
    }

    #[test]
    fn recorded_paths_give_the_layout_back() {
        assert_eq!(
            KindLayout::from_recorded_path("api::v1"),
            Some(KindLayout::flat())
        );
        assert_eq!(
            KindLayout::from_recorded_path("api::ship::v1"),
            Some(KindLayout::grouped("ship"))
        );
        assert_eq!(
            KindLayout::from_recorded_path("k8s_openapi::api::apps::v1"),
            None
        );
        assert_eq!(group_module_name("sea-life.fish"), "sea_life");
    }
}

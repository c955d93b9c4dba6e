//! The Rust project an import makes from what it read (the model of `model.rs`, whatever
//! it was read from): each API version a module of the `api` crate (`rust.rs`), each
//! marker the argument that spells it (`markers.rs`), the project around them what `init`
//! and `create api` make, with the Go controllers' RBAC rules on the reconcilers, the Go
//! webhooks and conversions as `create webhook` makes them.
//!
//! Everything is made in a staging directory beside the new one and renamed into place at
//! the end: a problem anywhere (a type or marker the importer cannot spell) leaves nothing
//! behind, and is reported with its file and line.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;

use super::markers::{self, Translator, fields_of};
use super::model::{Field, Markers, Model, Package, TypeExpr};
use super::rust::{self, KindDecl, Problems, Version};
use super::webhooks;
use crate::scaffold::names::snake_case;
use crate::scaffold::plan::Plan;
use crate::scaffold::project::CrdOptions;
use crate::scaffold::{self, create_api, init, layout};
use crate::{manifests, source};

/// Where, and as what, the new project is made.
pub struct Target<'a> {
    /// Its directory (created; if it exists, it must be empty).
    pub dir: &'a Path,
    /// Its name (default: the Go project's `projectName`, else the directory's name).
    pub name: Option<&'a str>,
    /// The kubebuilder checkout whose crates it uses instead of crates.io.
    pub local: Option<&'a Path>,
    /// controller-gen's `crd` options the source's CRDs are made with (PROJECT's `crd:`).
    pub crd: &'a CrdOptions,
}

/// What the source declares, translated.
pub struct Imported {
    /// The API packages, by group and version.
    pub(super) versions: Vec<Version>,
    /// The packages that are no API version but whose types the API versions name, each
    /// with its module in the crate (`meta::v1`).
    shared: Vec<(String, Version)>,
    /// The module of the Kubernetes named types the API uses (`api/src/kubernetes.rs`).
    pub(super) kubernetes: Option<String>,
    /// The domain of the groups (`<group>.<domain>`).
    domain: String,
    /// Whether the versions go under their groups (`api/src/<group>/<version>/`).
    pub(super) multigroup: bool,
    /// The Go project's PROJECT file, when it has one.
    project: Option<GoProject>,
    /// The RBAC rules of each controller file (its stem), as Rust attributes.
    rbac: BTreeMap<String, Vec<String>>,
    /// The `+kubebuilder:webhook` markers, with the file each is written in.
    webhooks: Vec<webhooks::Marker>,
    /// The source's sample objects of the imported kinds, by file name
    /// (`<group>_<version>_<kind>.yaml`, kubebuilder's), in place of the scaffolded ones.
    samples: BTreeMap<String, String>,
}

impl Imported {
    /// The group versions.
    pub fn version_count(&self) -> usize {
        self.versions.len()
    }

    /// With the samples of the kinds found in `dir` (a Go project's `config/samples`, as
    /// kubebuilder names them): the scaffolded tests of the kinds' webhooks create them.
    pub fn with_samples(mut self, dir: &Path) -> Result<Self> {
        let names: Vec<String> = self
            .kinds()
            .map(|(version, kind)| {
                let group = short_group(&version.group, &self.domain);
                crate::scaffold::names::sample_name(&group, &version.version, &kind.kind)
            })
            .collect();
        for name in names {
            let path = dir.join(&name);
            match fs::read_to_string(&path) {
                Ok(text) => {
                    self.samples.insert(name, text);
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("reading {}", path.display()));
                }
            }
        }
        Ok(self)
    }

    /// Each kind with its version.
    pub fn kinds(&self) -> impl Iterator<Item = (&Version, &KindDecl)> {
        self.versions
            .iter()
            .flat_map(|version| version.kinds.iter().map(move |kind| (version, kind)))
    }

    /// Whether the imported types hold JSON as it is (Go's `interface{}`, types that
    /// marshal themselves): their crate depends on serde_json.
    pub(super) fn uses_json(&self) -> bool {
        self.versions
            .iter()
            .chain(self.shared.iter().map(|(_, version)| version))
            .flat_map(|v| &v.files)
            .any(|(_, source)| source.contains("serde_json::"))
    }

    /// The kinds, by the names a webhook rule matches.
    fn own_kinds(&self) -> Vec<webhooks::OwnKind> {
        self.kinds()
            .map(|(version, kind)| webhooks::OwnKind {
                group: version.group.clone(),
                version: version.version.clone(),
                kind: kind.kind.clone(),
                plural: kind
                    .plural
                    .clone()
                    .unwrap_or_else(|| kubebuilder_plural::plural(&kind.kind.to_lowercase())),
            })
            .collect()
    }
}

/// Translates what was read from `source` (with the Go project's PROJECT file, when it has
/// one); every problem at once, or the translation.
pub fn translate(
    mut model: Model,
    project: Option<GoProject>,
    options: rust::Options,
    source: &Path,
) -> Result<Imported> {
    share_crd_wide_markers(&mut model);
    adopt_declared_kinds(&mut model);
    report_skipped(&model);
    let api: BTreeMap<&str, (String, String)> = model
        .packages
        .iter()
        .filter_map(|package| Some((package.path.as_str(), rust::group_version(package)?)))
        .collect();
    if api.is_empty() {
        bail!(
            "{} has no API package (a Go package whose doc comment says `+groupName=...`)",
            source.display()
        );
    }
    let groups: std::collections::BTreeSet<&str> = api.values().map(|(g, _)| g.as_str()).collect();
    let domain = domain(&groups, project.as_ref())?;
    // Several groups' versions would share `api/src/<version>/` in the single-group layout.
    let multigroup = groups.len() > 1 || project.as_ref().is_some_and(|p| p.multigroup);
    let mut modules = version_modules(&api, multigroup);
    let shared = shared_modules(&model, &modules);
    for (path, module) in &shared {
        modules.insert(path.clone(), format!("crate::{module}"));
    }
    let translator = Translator::new();
    let none_yet = BTreeMap::new();
    let context = rust::Context {
        origin: model.origin,
        translator: &translator,
        options,
        modules: &modules,
        named: &model.named,
        defaults: &none_yet,
    };
    let mut problems = Problems::new();
    let translated = translate_packages(&model, &shared, context, &mut problems);
    let (rbac, webhooks) = controller_markers(&model);
    if !problems.is_empty() {
        problems.sort();
        bail!(
            "{} cannot be imported as it is; nothing was written:\n{}",
            source.display(),
            problems.join("\n")
        );
    }
    Ok(Imported {
        versions: translated.versions,
        shared: translated.shared,
        kubernetes: translated.kubernetes,
        domain,
        multigroup,
        project,
        rbac,
        webhooks,
        samples: BTreeMap::new(),
    })
}

/// Says which packages of an API group controller-gen makes no CRD of
/// (`+kubebuilder:skip`, or no kind).
fn report_skipped(model: &Model) {
    let skip = kubebuilder_attributes::skip::SPELLS;
    for package in model
        .packages
        .iter()
        .filter(|p| p.markers.contains_key("groupName"))
    {
        if package.markers.contains_key(skip) {
            eprintln!(
                "import: {} says +kubebuilder:skip (no CRD of it is generated): not imported",
                package.path
            );
        } else if !package.declares_kinds() {
            eprintln!(
                "import: {} declares no kind (no type embeds metav1.TypeMeta and \
                 metav1.ObjectMeta; controller-gen makes no CRD of it): not imported",
                package.path
            );
        }
    }
}

/// The module of each API package (`crate::v1`, or `crate::<group>::v1` in the multigroup
/// layout), by import path.
fn version_modules(api: &BTreeMap<&str, (String, String)>, multigroup: bool) -> rust::Modules {
    api.iter()
        .map(|(path, (group, version))| {
            (
                (*path).to_owned(),
                version_module(group, version, multigroup),
            )
        })
        .collect()
}

/// The module of `group`'s `version`: `crate::v1`, or `crate::<group>::v1` in the
/// multigroup layout.
pub(super) fn version_module(group: &str, version: &str, multigroup: bool) -> String {
    if multigroup {
        format!("crate::{}::{version}", layout::group_module_name(group))
    } else {
        format!("crate::{version}")
    }
}

/// The Rust of the model's packages.
struct Translated {
    versions: Vec<Version>,
    /// The shared packages', with their modules.
    shared: Vec<(String, Version)>,
    /// `api/src/kubernetes.rs`, when the API names Kubernetes' named types.
    kubernetes: Option<String>,
}

/// Translates the API packages and the `shared` ones (those first: the versions' types
/// need their defaults), then the Kubernetes named types they use; problems go to
/// `problems`.
fn translate_packages(
    model: &Model,
    shared: &BTreeMap<String, String>,
    context: rust::Context<'_>,
    problems: &mut Problems,
) -> Translated {
    let mut translated = Translated {
        versions: Vec::new(),
        shared: Vec::new(),
        kubernetes: None,
    };
    let mut used_named = BTreeMap::new();
    let mut defaults = BTreeMap::new();
    let mut packages: Vec<&Package> = model.packages.iter().collect();
    packages.sort_by_key(|package| !shared.contains_key(&package.path));
    for package in packages {
        let context = rust::Context {
            defaults: &defaults,
            ..context
        };
        let (module, version) = match rust::translate(package, &context, &mut used_named, problems)
        {
            Some(version) => (None, version),
            None => match shared.get(&package.path) {
                Some(module) => (
                    Some(module.clone()),
                    rust::translate_shared(package, &context, &mut used_named, problems),
                ),
                None => continue,
            },
        };
        defaults.insert(package.path.clone(), version.defaultable.clone());
        match module {
            None => translated.versions.push(version),
            Some(module) => translated.shared.push((module, version)),
        }
    }
    let context = rust::Context {
        defaults: &defaults,
        ..context
    };
    translated.kubernetes =
        (!used_named.is_empty()).then(|| rust::kubernetes_module(&used_named, &context, problems));
    translated
}

/// The RBAC rules of each Go file (its stem) as Rust attributes, and the webhook markers
/// with the file each is written in.
type ControllerMarkers = (BTreeMap<String, Vec<String>>, Vec<(Value, String)>);

/// The RBAC and webhook markers of the model's files.
fn controller_markers(model: &Model) -> ControllerMarkers {
    let mut rbac = BTreeMap::new();
    let mut webhooks = Vec::new();
    for package in &model.packages {
        for (file, markers) in &package.file_markers {
            let rules = rbac_rules(markers);
            if !rules.is_empty() {
                rbac.insert(stem(file), rules);
            }
            for webhook in markers.get("kubebuilder:webhook").into_iter().flatten() {
                webhooks.push((markers::unwrapped(webhook).clone(), file.clone()));
            }
        }
    }
    (rbac, webhooks)
}

/// The module (`meta::v1`) of each package of the model that is no API version but whose
/// types an API version names, directly or through another such package, by import path:
/// its path after its `apis` or `api` directory (else its last two segments), out of the
/// way of the API versions' modules (`modules`).
fn shared_modules(model: &Model, modules: &rust::Modules) -> BTreeMap<String, String> {
    let candidates: BTreeMap<&str, &Package> = model
        .packages
        .iter()
        .filter(|package| !modules.contains_key(&package.path))
        .map(|package| (package.path.as_str(), package))
        .collect();
    let mut shared: BTreeMap<String, String> = BTreeMap::new();
    let mut pending: Vec<&Package> = model
        .packages
        .iter()
        .filter(|package| modules.contains_key(&package.path))
        .collect();
    let taken: std::collections::BTreeSet<&str> = modules
        .values()
        .filter_map(|module| module.strip_prefix("crate::")?.split("::").next())
        .collect();
    while let Some(package) = pending.pop() {
        for referenced in referenced_packages(package) {
            if let Some(found) = candidates.get(referenced.as_str())
                && !shared.contains_key(&referenced)
            {
                shared.insert(referenced.clone(), shared_module(&referenced, &taken));
                pending.push(found);
            }
        }
    }
    shared
}

/// The packages whose named types `package`'s fields and declarations name.
fn referenced_packages(package: &Package) -> std::collections::BTreeSet<String> {
    fn visit(ty: &TypeExpr, found: &mut std::collections::BTreeSet<String>) {
        if ty.kind == "named" && !ty.package.is_empty() {
            found.insert(ty.package.clone());
        }
        for inner in [&ty.key, &ty.elem, &ty.underlying].into_iter().flatten() {
            visit(inner, found);
        }
    }
    let mut found = std::collections::BTreeSet::new();
    for ty in &package.types {
        visit(&ty.underlying, &mut found);
        for field in &ty.fields {
            visit(&field.ty, &mut found);
        }
    }
    found
}

/// The module of a shared package at `path`, whose first segment is none of `taken`.
fn shared_module(path: &str, taken: &std::collections::BTreeSet<&str>) -> String {
    let segments: Vec<&str> = path.split('/').collect();
    let after_api = segments
        .iter()
        .rposition(|segment| *segment == "apis" || *segment == "api")
        .map(|at| &segments[at + 1..])
        .filter(|rest| !rest.is_empty())
        .unwrap_or(&segments[segments.len().saturating_sub(2)..]);
    let mut names: Vec<String> = after_api.iter().map(|s| snake_case(s)).collect();
    if taken.contains(names[0].as_str()) {
        names[0] = format!("shared_{}", names[0]);
    }
    names.join("::")
}

/// The markers that say something of the whole CRD, not of one version.
const CRD_WIDE_MARKERS: [&str; 2] = ["kubebuilder:resource", "kubebuilder:metadata"];

/// Gives every version of a kind the CRD-wide markers (`+kubebuilder:resource`,
/// `+kubebuilder:metadata`) one of them carries: controller-gen reads them from whichever
/// version has them, the resource attribute of each version must say them.
fn share_crd_wide_markers(model: &mut Model) {
    let group_of = |package: &Package| {
        package
            .markers
            .get("groupName")
            .and_then(|v| v.first()?.as_str().map(str::to_owned))
    };
    let mut found: BTreeMap<(String, String, &str), Vec<Value>> = BTreeMap::new();
    for package in &model.packages {
        let Some(group) = group_of(package) else {
            continue;
        };
        for ty in package.types.iter().filter(|ty| ty.is_root()) {
            for marker in CRD_WIDE_MARKERS {
                if let Some(values) = ty.markers.get(marker) {
                    found
                        .entry((group.clone(), ty.name.clone(), marker))
                        .or_insert_with(|| values.clone());
                }
            }
        }
    }
    for package in &mut model.packages {
        let Some(group) = group_of(package) else {
            continue;
        };
        for ty in package.types.iter_mut().filter(|ty| ty.is_root()) {
            for marker in CRD_WIDE_MARKERS {
                if let Some(values) = found.get(&(group.clone(), ty.name.clone(), marker)) {
                    ty.markers
                        .entry(marker.to_owned())
                        .or_insert_with(|| values.clone());
                }
            }
        }
    }
}

/// Gives each kind declared as another imported kind (`type Gateway v1.Gateway`, as the
/// Gateway API's older versions declare theirs) that kind's fields, and its doc if it has
/// none: controller-gen's schema of it is the other kind's struct, under the kind's own
/// markers (its printer columns, storage version) and doc. Its spec and status are then
/// the other version's types, so the kind is a root of its own (`spec = "none"`) holding
/// them.
fn adopt_declared_kinds(model: &mut Model) {
    let structs: BTreeMap<(String, String), (Vec<Field>, String)> = model
        .packages
        .iter()
        .flat_map(|package| {
            package
                .types
                .iter()
                .filter(|ty| ty.is_root() && !ty.alias && ty.underlying.kind == "struct")
                .map(|ty| {
                    let key = (package.path.clone(), ty.name.clone());
                    (key, (ty.fields.clone(), ty.doc.clone()))
                })
        })
        .collect();
    for ty in model.packages.iter_mut().flat_map(|p| &mut p.types) {
        if !ty.is_root() || ty.alias || ty.underlying.kind != "named" {
            continue;
        }
        let declared_as = (ty.underlying.package.clone(), ty.underlying.name.clone());
        if let Some((fields, doc)) = structs.get(&declared_as) {
            ty.fields = fields.clone();
            ty.underlying = TypeExpr::structure();
            if ty.doc.trim().is_empty() {
                ty.doc = doc.clone();
            }
        }
    }
}

/// The `+kubebuilder:rbac` markers as `#[kubebuilder::rbac(...)]` attributes.
fn rbac_rules(markers: &Markers) -> Vec<String> {
    markers
        .get("kubebuilder:rbac")
        .into_iter()
        .flatten()
        .map(|rule| {
            let args = fields_of(
                markers::unwrapped(rule),
                &[
                    ("Groups", "groups"),
                    ("Resources", "resources"),
                    ("ResourceNames", "resource_names"),
                    ("Verbs", "verbs"),
                    ("URLs", "urls"),
                    ("Namespace", "namespace"),
                ],
            );
            format!("#[kubebuilder::rbac({args})]")
        })
        .collect()
}

/// The parts of a Go PROJECT file the importer reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoProject {
    #[serde(default)]
    domain: String,
    #[serde(default)]
    project_name: String,
    #[serde(default)]
    multigroup: bool,
    #[serde(default)]
    resources: Vec<GoResource>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GoResource {
    #[serde(default)]
    group: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    controller: bool,
}

impl GoProject {
    /// A PROJECT file saying only the domain.
    pub fn with_domain(domain: String) -> Self {
        Self {
            domain,
            ..Self::default()
        }
    }

    pub fn read(dir: &Path) -> Result<Option<Self>> {
        let path = dir.join("PROJECT");
        match fs::read_to_string(&path) {
            Ok(text) => serde_saphyr::from_str(&text)
                .map(Some)
                .with_context(|| format!("reading {}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }
}

/// The domain the groups share: PROJECT's when every group is under it, else the groups'
/// longest common suffix that leaves each a name of its own.
fn domain(
    groups: &std::collections::BTreeSet<&str>,
    project: Option<&GoProject>,
) -> Result<String> {
    let groups: Vec<&str> = groups.iter().copied().collect();
    if let Some(project) = project
        && !project.domain.is_empty()
        && groups
            .iter()
            .all(|g| g.ends_with(&format!(".{}", project.domain)))
    {
        return Ok(project.domain.clone());
    }
    let split: Vec<Vec<&str>> = groups.iter().map(|g| g.rsplit('.').collect()).collect();
    let shortest = split.iter().map(Vec::len).min().unwrap_or(0);
    let mut common = 0;
    while common + 1 < shortest
        && split
            .iter()
            .all(|labels| labels[common] == split[0][common])
    {
        common += 1;
    }
    if common == 0 {
        bail!(
            "the API groups {} share no domain: a project's groups are <group>.<domain>",
            groups.join(", ")
        );
    }
    let mut labels: Vec<&str> = split[0][..common].to_vec();
    labels.reverse();
    Ok(labels.join("."))
}

/// Makes the project in a staging directory beside `to.dir`, then renames it into
/// place.
pub fn write(to: &Target<'_>, imported: &Imported) -> Result<PathBuf> {
    let target = new_directory(to.dir)?;
    let name = match (to.name, &imported.project) {
        (Some(name), _) => name.to_owned(),
        (None, Some(project)) if !project.project_name.is_empty() => project.project_name.clone(),
        _ => target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let parent = target
        .parent()
        .context("the new project needs a parent directory")?;
    fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    let staging = parent.join(format!(
        ".{}.import-{}",
        target.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    let made = make(&staging, &name, to, imported);
    match made {
        Ok(()) => {
            if target.exists() {
                fs::remove_dir(&target)
                    .with_context(|| format!("replacing the empty {}", target.display()))?;
            }
            fs::rename(&staging, &target)
                .with_context(|| format!("moving the project to {}", target.display()))?;
            Ok(target)
        }
        Err(error) => {
            let _ = fs::remove_dir_all(&staging);
            Err(error)
        }
    }
}

/// `dir` as an absolute path, where an import may make something: it does not exist, or
/// it is empty.
pub(super) fn new_directory(dir: &Path) -> Result<PathBuf> {
    let target =
        std::path::absolute(dir).with_context(|| format!("resolving {}", dir.display()))?;
    if target.exists()
        && fs::read_dir(&target)
            .with_context(|| format!("reading {}", target.display()))?
            .next()
            .is_some()
    {
        bail!("{} exists and is not empty", target.display());
    }
    Ok(target)
}

/// `init`, `create api` for every kind, the imported types and RBAC, then `manifests`.
fn make(root: &Path, name: &str, to: &Target<'_>, imported: &Imported) -> Result<()> {
    let domain = imported.domain.clone();
    // Each step's files are written quietly: most are written again by a later step.
    init::plan(&init::Args {
        dir: root.to_owned(),
        domain: domain.clone(),
        name: Some(name.to_owned()),
        local: to.local.map(Path::to_owned),
        namespaced: false,
        license: init::License::None,
        owner: None,
    })?
    .apply()?;
    record_crd_options(root, to.crd)?;
    if imported.multigroup {
        scaffold::edit::plan(
            root,
            &scaffold::edit::Args {
                multigroup: Some(true),
            },
        )?
        .apply()?;
    }
    for (version, kind) in imported.kinds() {
        let group = short_group(&version.group, &domain);
        let controller = imported.project.as_ref().map(|project| {
            project.resources.iter().any(|r| {
                r.kind == kind.kind && r.controller && (r.group == group || r.group.is_empty())
            })
        });
        create_api::plan_with(
            root,
            &create_api::Args {
                kind: scaffold::KindArgs {
                    group: group.clone(),
                    version: version.version.clone(),
                    kind: kind.kind.clone(),
                },
                namespaced: Some(kind.namespaced),
                resource: true,
                controller: controller.filter(|c| !c),
                plural: kind.plural.clone(),
                external_api_path: None,
                external_api_domain: None,
                ssa: false,
                force: false,
                deploy_image: Default::default(),
            },
            &create_api::IMPORTED,
        )?
        .apply()?;
    }
    let project = scaffold::project::Project::parse(
        &fs::read_to_string(root.join(scaffold::project::FILE)).context("reading PROJECT")?,
    )?;
    let mut plan = Plan::new(root);
    for version in &imported.versions {
        write_version(&mut plan, &project, &domain, version)?;
    }
    for (module, version) in &imported.shared {
        write_shared(&mut plan, module, version)?;
    }
    if let Some(kubernetes) = &imported.kubernetes {
        write_kubernetes_module(&mut plan, kubernetes)?;
    }
    if imported.uses_json() {
        depend_on_serde_json(&mut plan)?;
    }
    write_rbac(&mut plan, &project, imported)?;
    for (name, text) in &imported.samples {
        plan.write(&format!("config/samples/{name}"), text.clone());
    }
    plan.format_rust()?;
    plan.apply()?;
    let external = webhooks::create(root, &domain, &imported.own_kinds(), &imported.webhooks)?;
    if external > 0 {
        eprintln!(
            "import: {external} webhooks are for kinds the import does not make: declared in \
             controller/src/external_webhooks.rs, and served by nothing until you implement \
             them there (the apiserver calls them once deployed)"
        );
    }
    create_conversions(root, &domain, imported)?;
    let declarations = source::read(root, &manifests::crd_options(root)?).map_err(|deferred| {
        anyhow::anyhow!("the imported sources do not read as the manifests need: {deferred}")
    })?;
    let outputs = manifests::outputs(root, &declarations, None)?;
    manifests::write(root, &outputs)
}

/// Records the CRD options in PROJECT, where `manifests` reads them.
fn record_crd_options(root: &Path, crd: &CrdOptions) -> Result<()> {
    let path = root.join(scaffold::project::FILE);
    let mut project =
        scaffold::project::Project::parse(&fs::read_to_string(&path).context("reading PROJECT")?)?;
    project.crd = crd.clone();
    fs::write(&path, project.to_yaml()).with_context(|| format!("writing {}", path.display()))
}

/// The conversions of the Go kinds with a hub (`Hub()`) and spokes (`ConvertTo`): `create
/// webhook --conversion` on the hub, whose spokes then name it (`hub = ...`) and get a
/// `Spoke` impl converting by field names, to be written as the Go `ConvertTo` and
/// `ConvertFrom` do.
fn create_conversions(root: &Path, domain: &str, imported: &Imported) -> Result<()> {
    let mut hubs: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut spokes: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (version, kind) in imported.kinds() {
        let key = (version.group.clone(), kind.kind.clone());
        if kind.hub {
            hubs.insert(key.clone(), version.version.clone());
        }
        if kind.spoke {
            spokes.entry(key).or_default().push(version.version.clone());
        }
    }
    for ((group, kind), spoke_versions) in spokes {
        let Some(hub) = hubs.get(&(group.clone(), kind.clone())) else {
            bail!(
                "{kind} ({group}) converts to a hub in versions {} (`ConvertTo`), but no \
                 version is the hub (`Hub()`)",
                spoke_versions.join(", ")
            );
        };
        let args = scaffold::create_webhook::Args {
            kind: scaffold::KindArgs {
                group: short_group(&group, domain),
                version: hub.clone(),
                kind: kind.clone(),
            },
            defaulting: false,
            programmatic_validation: false,
            conversion: true,
            spokes: spoke_versions,
            force: false,
        };
        scaffold::create_webhook::plan(root, &args)?.apply()?;
    }
    Ok(())
}

/// A shared package's files under `api/src/<module path>/`, each module of the path
/// declared in its parent (`lib.rs` declares the first).
fn write_shared(plan: &mut Plan, module: &str, version: &Version) -> Result<()> {
    let names: Vec<&str> = module.split("::").collect();
    let mut parent = "api/src/lib.rs".to_owned();
    for depth in 0..names.len() {
        let dir = format!("api/src/{}", names[..=depth].join("/"));
        let declaration = format!("pub mod {};\n", names[depth]);
        let text = plan.read(&parent)?.unwrap_or_default();
        if !text.lines().any(|line| line == declaration.trim_end()) {
            plan.write(&parent, format!("{text}\n{declaration}"));
        }
        parent = format!("{dir}/mod.rs");
    }
    let mut text = format!(
        "//! The types of `{}`, which the API versions name (no API version itself).\n\n",
        version.dir
    );
    for (stem, source) in &version.files {
        plan.write(
            &format!("api/src/{}/{stem}.rs", names.join("/")),
            source.clone(),
        );
        text.push_str(&format!("mod {stem};\npub use {stem}::*;\n"));
    }
    let existing = plan.read(&parent)?.unwrap_or_default();
    plan.write(&parent, format!("{text}{existing}"));
    Ok(())
}

/// `api/src/kubernetes.rs`, declared in `api/src/lib.rs`.
fn write_kubernetes_module(plan: &mut Plan, source: &str) -> Result<()> {
    let module = rust::KUBERNETES_MODULE;
    plan.write(&format!("api/src/{module}.rs"), source.to_owned());
    let lib = plan.read("api/src/lib.rs")?.unwrap_or_default();
    plan.write("api/src/lib.rs", format!("{lib}\npub mod {module};\n"));
    Ok(())
}

/// Adds serde_json (a workspace dependency already) to the api crate, whose imported types
/// hold JSON as it is (Go's `interface{}`, types that marshal themselves).
fn depend_on_serde_json(plan: &mut Plan) -> Result<()> {
    let manifest = plan.read("api/Cargo.toml")?.unwrap_or_default();
    let with = manifest.replacen(
        "[dependencies]\n",
        "[dependencies]\nserde_json.workspace = true\n",
        1,
    );
    plan.write("api/Cargo.toml", with);
    Ok(())
}

/// `batch` of `batch.tutorial.kubebuilder.io` in domain `tutorial.kubebuilder.io`.
pub(super) fn short_group(group: &str, domain: &str) -> String {
    group
        .strip_suffix(&format!(".{domain}"))
        .unwrap_or(group)
        .to_owned()
}

/// The version's files in place of the scaffolded types, and its module naming them.
fn write_version(
    plan: &mut Plan,
    project: &scaffold::project::Project,
    domain: &str,
    version: &Version,
) -> Result<()> {
    let group = short_group(&version.group, domain);
    let kind = &version
        .kinds
        .first()
        .map(|k| k.kind.clone())
        .unwrap_or_default();
    let layout = layout::kind_layout(project, &group, kind);
    let dir = layout.api_dir(&version.version);
    // The scaffolded types go: the staging directory is the import's alone.
    for kind in &version.kinds {
        let scaffolded = plan
            .root()
            .join(&dir)
            .join(format!("{}_types.rs", snake_case(&kind.kind)));
        if scaffolded.exists() {
            fs::remove_file(&scaffolded)
                .with_context(|| format!("removing {}", scaffolded.display()))?;
        }
    }
    let mut module = format!(
        "//! Version `{}` of the API group `{}`, imported from `{}`.\n\n",
        version.version, version.group, version.dir
    );
    for (stem, source) in &version.files {
        plan.write(&format!("{dir}/{stem}.rs"), source.clone());
        module.push_str(&format!("mod {stem};\npub use {stem}::*;\n"));
    }
    module.push_str("\n// +kubebuilder:scaffold:kinds\n");
    plan.write(&format!("{dir}/mod.rs"), module);
    Ok(())
}

/// Each reconciler's rules: the Go controller file's of the same kind (`<kind>_controller.go`)
/// instead of the scaffolded ones; rules of other files go to the first reconciler. When
/// the Go project has no RBAC marker at all (an API module), each reconciler keeps the
/// scaffolded rules on its own kind; when it has some, the role is theirs alone, and a
/// kind without a Go controller file gets none (the scaffolded ones would grant what the
/// Go project's role does not).
fn write_rbac(
    plan: &mut Plan,
    project: &scaffold::project::Project,
    imported: &Imported,
) -> Result<()> {
    let mut reconcilers: Vec<(String, String)> = Vec::new();
    for resource in project.resources.iter().filter(|r| r.controller) {
        let layout = layout::kind_layout(project, &resource.group, &resource.kind);
        let snake = snake_case(&resource.kind);
        let path = format!("{}/reconciler.rs", layout.controller_dir(&snake));
        reconcilers.push((format!("{}_controller", resource.kind.to_lowercase()), path));
    }
    if imported.rbac.is_empty() {
        return Ok(());
    }
    let mut leftover: Vec<String> = imported
        .rbac
        .iter()
        .filter(|(file, _)| !reconcilers.iter().any(|(stem, _)| stem == *file))
        .flat_map(|(_, rules)| rules.clone())
        .collect();
    for (stem, path) in &reconcilers {
        let mut rules = imported.rbac.get(stem).cloned().unwrap_or_default();
        let mut from = format!("the Go controller `{stem}.go`");
        if !leftover.is_empty() {
            from.push_str(" and of the Go files that are no kind's controller");
            rules.append(&mut leftover);
        }
        let comment = if rules.is_empty() {
            format!(
                "// No rules: the Go project has no `{stem}.go`, and its RBAC markers are on \
                 its other controllers.\n"
            )
        } else {
            format!("// The RBAC markers of {from}.\n{}\n", rules.join("\n"))
        };
        let text = plan.read(path)?.unwrap_or_default();
        plan.write(path, with_rules(&text, &comment));
    }
    Ok(())
}

/// The reconciler's text with its `#[kubebuilder::rbac(...)]` attributes, and the
/// comment lines above them, replaced by `rules` (the attributes under a comment saying
/// where they are from).
fn with_rules(text: &str, rules: &str) -> String {
    let Some(first) = text.find("#[kubebuilder::rbac(") else {
        return text.to_owned();
    };
    let Some(end) = text
        .find("pub struct ")
        .and_then(|at| text[..at].rfind(")]\n"))
        .map(|at| at + 3)
    else {
        return text.to_owned();
    };
    // Back over the plain comment lines that introduce the scaffolded rules.
    let mut start = first;
    while let Some(line_start) = text[..start.saturating_sub(1)].rfind('\n').map(|at| at + 1) {
        let line = &text[line_start..start];
        if !line.starts_with("// ") {
            break;
        }
        start = line_start;
    }
    format!("{}{rules}{}", &text[..start], &text[end..])
}

fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

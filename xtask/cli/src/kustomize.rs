//! The part of kustomize that `config/` uses, so that `cargo xtask deploy` and
//! `build-installer` need no kustomize binary: `resources` (files and directories),
//! `namespace`, `namePrefix`/`nameSuffix`, `labels` (metadata only), JSON 6902 `patches`,
//! `images`, `replacements` and `configurations` (nameReference). Anything else in a
//! kustomization is refused with a clear error rather than ignored.
//!
//! Semantics follow kustomize v5: each kustomization builds its resources (directories
//! recursively, fully transformed), then applies patches, namespace, name prefix and
//! suffix, labels, images and replacements, then points references (role bindings,
//! service accounts, webhook services, ...) at the renamed objects. The differential test
//! `xtask/cli/tests/kustomize.rs` compares the result with `kustomize build` for every
//! directory of `config/`.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};

/// What the command line changes in the kustomizations it builds.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--image`: replaces the `images` entry of the same name wherever one is declared
    /// (like `kustomize edit set image`, without editing the file), or adds one at the top.
    pub images: Vec<Image>,
}

/// An `images` entry.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Image {
    /// The image the containers name (its repository, without tag or digest), e.g. `controller`.
    pub name: String,
    /// The repository that replaces it; `None` keeps `name`.
    pub new_name: Option<String>,
    /// The tag to use; `None` keeps the container's own, unless `digest` is set.
    pub new_tag: Option<String>,
    /// The digest to use (`sha256:...`), which wins over any tag.
    pub digest: Option<String>,
}

/// The image name config/manager gives the manager (kubebuilder's convention), which
/// `--image` replaces.
pub const MANAGER_IMAGE: &str = "controller";

impl Overrides {
    /// `--image`, when given.
    pub fn manager_image(image: Option<&str>) -> Overrides {
        Overrides {
            images: image
                .map(|image| Image::set(MANAGER_IMAGE, image))
                .into_iter()
                .collect(),
        }
    }
}

impl Image {
    /// `--image <reference>` for the image named `name`: `registry/repo[:tag|@digest]`.
    pub fn set(name: &str, reference: &str) -> Image {
        let (repository, tag, digest) = split_image(reference);
        Image {
            name: name.to_owned(),
            new_name: Some(repository.to_owned()),
            new_tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        }
    }
}

/// Renders the kustomization in `dir` into its objects, in kustomize's output order.
pub fn build(dir: &Path, overrides: &Overrides) -> Result<Vec<Value>> {
    let mut resources = build_dir(dir, overrides, true)?.resources;
    resources.sort_by_key(|resource| output_order(&resource.value));
    Ok(resources.into_iter().map(|r| r.value).collect())
}

/// An object on its way through the kustomizations, with the names and namespaces it had
/// before (oldest first) so that selectors and references written against them still match.
#[derive(Clone, Debug)]
struct Resource {
    value: Value,
    previous_names: Vec<String>,
    previous_namespaces: Vec<Option<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Kustomization {
    #[serde(rename = "apiVersion")]
    _api_version: Option<String>,
    #[serde(rename = "kind")]
    _kind: Option<String>,
    #[serde(default)]
    resources: Vec<String>,
    namespace: Option<String>,
    name_prefix: Option<String>,
    name_suffix: Option<String>,
    #[serde(default)]
    labels: Vec<Labels>,
    #[serde(default)]
    patches: Vec<PatchEntry>,
    #[serde(default)]
    images: Vec<Image>,
    #[serde(default)]
    replacements: Vec<Replacement>,
    #[serde(default)]
    configurations: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Labels {
    pairs: Map<String, Value>,
    #[serde(default)]
    include_selectors: bool,
    #[serde(default)]
    include_templates: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchEntry {
    path: Option<String>,
    patch: Option<String>,
    target: Option<Selector>,
}

/// Which objects a patch or replacement applies to.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Selector {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Replacement {
    source: ReplacementSource,
    targets: Vec<ReplacementTarget>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReplacementSource {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    field_path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReplacementTarget {
    select: Selector,
    #[serde(default)]
    reject: Vec<Selector>,
    field_paths: Vec<String>,
    #[serde(default)]
    options: FieldOptions,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldOptions {
    delimiter: Option<String>,
    #[serde(default)]
    index: i64,
    #[serde(default)]
    create: bool,
}

/// A `configurations` file: extra name references (what kustomize calls transformer
/// configurations); only `nameReference` is supported.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Configuration {
    name_reference: Vec<NameReferenceConfig>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NameReferenceConfig {
    kind: String,
    group: Option<String>,
    field_specs: Vec<FieldSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FieldSpec {
    kind: Option<String>,
    group: Option<String>,
    path: String,
}

fn read_yaml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_saphyr::from_str(&text).with_context(|| {
        format!(
            "{}: not understood by cargo xtask's kustomize subset",
            path.display()
        )
    })
}

/// A built kustomization: its objects, and the name references its `configurations` (and
/// those of the kustomizations it includes) declare, which apply to the parents too.
struct Built {
    resources: Vec<Resource>,
    configured_references: Vec<NameReference>,
    /// The names of the `images` entries it and the kustomizations it includes declare.
    declared_images: Vec<String>,
}

/// The kustomization file of `dir`, under any of the names kustomize accepts.
fn kustomization_file(dir: &Path) -> Result<PathBuf> {
    ["kustomization.yaml", "kustomization.yml", "Kustomization"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
        .with_context(|| format!("no kustomization.yaml in {}", dir.display()))
}

fn build_dir(dir: &Path, overrides: &Overrides, top: bool) -> Result<Built> {
    let file = kustomization_file(dir)?;
    let kustomization: Kustomization = read_yaml(&file)?;
    let context = |what: &str| format!("{}: {what}", file.display());

    let mut resources = Vec::new();
    let mut configured_references = Vec::new();
    let mut declared_images: Vec<String> = kustomization
        .images
        .iter()
        .map(|image| image.name.clone())
        .collect();
    for entry in &kustomization.resources {
        let path = dir.join(entry);
        if path.is_dir() {
            let built = build_dir(&path, overrides, false)?;
            resources.extend(built.resources);
            configured_references.extend(built.configured_references);
            declared_images.extend(built.declared_images);
        } else {
            resources.extend(load_objects(&path)?);
        }
    }
    for configuration in &kustomization.configurations {
        configured_references.extend(read_configuration(&dir.join(configuration))?);
    }

    // kustomize's order of the built-in transformers.
    for entry in &kustomization.patches {
        apply_patch(dir, entry, &mut resources).with_context(|| context("patches"))?;
    }
    if let Some(namespace) = &kustomization.namespace {
        for resource in &mut resources {
            set_namespace(resource, namespace);
        }
    }
    add_affixes(
        &mut resources,
        kustomization.name_prefix.as_deref().unwrap_or_default(),
        kustomization.name_suffix.as_deref().unwrap_or_default(),
    );
    for labels in &kustomization.labels {
        add_labels(&mut resources, labels).with_context(|| context("labels"))?;
    }
    let images = images(&kustomization.images, &declared_images, overrides, top);
    for resource in &mut resources {
        set_images(&mut resource.value, &images);
    }
    for replacement in &kustomization.replacements {
        apply_replacement(replacement, &mut resources).with_context(|| context("replacements"))?;
    }

    let mut references = builtin_name_references();
    references.extend(configured_references.iter().cloned());
    fix_name_references(&mut resources, &references)?;
    Ok(Built {
        resources,
        configured_references,
        declared_images,
    })
}

/// The name references a `configurations` file declares.
fn read_configuration(path: &Path) -> Result<Vec<NameReference>> {
    let configuration: Configuration = read_yaml(path)?;
    let mut references = Vec::new();
    for reference in configuration.name_reference {
        for spec in reference.field_specs {
            references.push(NameReference {
                kind: reference.kind.clone(),
                group: reference.group.clone(),
                referrer_kinds: spec.kind.into_iter().collect(),
                referrer_group: spec.group,
                path: spec.path.split('/').map(str::to_owned).collect(),
                namespace_field: None,
                when_kind_field: None,
            });
        }
    }
    Ok(references)
}

/// `namePrefix` and `nameSuffix`, which kustomize never applies to CRDs, namespaces and
/// APIServices (their names are fixed by what they define).
fn add_affixes(resources: &mut [Resource], prefix: &str, suffix: &str) {
    if prefix.is_empty() && suffix.is_empty() {
        return;
    }
    for resource in resources {
        if !matches!(
            kind(&resource.value),
            "CustomResourceDefinition" | "Namespace" | "APIService"
        ) {
            let name = format!("{prefix}{}{suffix}", name(&resource.value));
            rename(resource, name);
        }
    }
}

/// `labels` on the objects' metadata (not on selectors or templates).
fn add_labels(resources: &mut [Resource], labels: &Labels) -> Result<()> {
    if labels.include_selectors || labels.include_templates {
        bail!(
            "includeSelectors and includeTemplates are not supported by cargo xtask's \
             kustomize subset"
        );
    }
    for resource in resources {
        let existing = object_at(&mut resource.value, &["metadata", "labels"]);
        for (key, value) in &labels.pairs {
            existing.insert(key.clone(), value.clone());
        }
    }
    Ok(())
}

/// The `images` entries of a kustomization with the command line's replacements; at the
/// top, the replacements that no kustomization of the tree declares (`declared_in_tree`
/// names those declared) are added.
fn images(
    entries: &[Image],
    declared_in_tree: &[String],
    overrides: &Overrides,
    top: bool,
) -> Vec<Image> {
    let mut images: Vec<Image> = entries
        .iter()
        .map(|image| {
            overrides
                .images
                .iter()
                .find(|set| set.name == image.name)
                .unwrap_or(image)
                .clone()
        })
        .collect();
    if top {
        images.extend(
            overrides
                .images
                .iter()
                .filter(|set| !declared_in_tree.contains(&set.name))
                .cloned(),
        );
    }
    images
}

fn load_objects(path: &Path) -> Result<Vec<Resource>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text)
        .with_context(|| format!("{}: invalid YAML", path.display()))?;
    documents
        .into_iter()
        .filter(|document| !document.is_null())
        .map(|value| {
            if !value.is_object() || name(&value).is_empty() || kind(&value).is_empty() {
                bail!(
                    "{}: every document must be an object with a kind and metadata.name",
                    path.display()
                );
            }
            Ok(Resource {
                previous_names: Vec::new(),
                previous_namespaces: Vec::new(),
                value,
            })
        })
        .collect()
}

fn kind(value: &Value) -> &str {
    value["kind"].as_str().unwrap_or_default()
}

fn name(value: &Value) -> &str {
    value["metadata"]["name"].as_str().unwrap_or_default()
}

fn namespace(value: &Value) -> Option<&str> {
    value["metadata"]["namespace"].as_str()
}

/// `(group, version)` of `apiVersion`.
fn group_version(value: &Value) -> (&str, &str) {
    let api_version = value["apiVersion"].as_str().unwrap_or_default();
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

impl Resource {
    fn names(&self) -> impl Iterator<Item = &str> {
        self.previous_names
            .iter()
            .map(String::as_str)
            .chain([name(&self.value)])
    }

    fn namespaces(&self) -> impl Iterator<Item = Option<&str>> {
        self.previous_namespaces
            .iter()
            .map(Option::as_deref)
            .chain([namespace(&self.value)])
    }

    fn describe(&self) -> String {
        format!("{}/{}", kind(&self.value), name(&self.value))
    }
}

fn rename(resource: &mut Resource, new_name: String) {
    let old = name(&resource.value).to_owned();
    resource.previous_names.push(old);
    resource.value["metadata"]["name"] = Value::String(new_name);
}

/// The kinds kustomize knows to be cluster-scoped (unknown kinds count as namespaced).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

fn is_cluster_scoped(value: &Value) -> bool {
    CLUSTER_SCOPED.contains(&kind(value))
}

/// kustomize's namespace transformer: namespaced objects move, Namespace objects are
/// renamed, `default` service accounts in bindings and CRD conversion services follow.
fn set_namespace(resource: &mut Resource, new_namespace: &str) {
    let old = namespace(&resource.value).map(str::to_owned);
    let value = &mut resource.value;
    match kind(value) {
        "Namespace" => {
            let new_name = new_namespace.to_owned();
            rename(resource, new_name);
            return;
        }
        "RoleBinding" | "ClusterRoleBinding" => {
            for subject in value["subjects"].as_array_mut().into_iter().flatten() {
                if subject["kind"] == "ServiceAccount" && subject["name"] == "default" {
                    subject["namespace"] = Value::String(new_namespace.to_owned());
                }
            }
        }
        "CustomResourceDefinition" => {
            let service = value
                .pointer_mut("/spec/conversion/webhook/clientConfig/service")
                .and_then(Value::as_object_mut);
            if let Some(service) = service {
                service.insert("namespace".into(), Value::String(new_namespace.to_owned()));
            }
        }
        _ => {}
    }
    if !is_cluster_scoped(&resource.value) {
        resource.previous_namespaces.push(old);
        resource.value["metadata"]["namespace"] = Value::String(new_namespace.to_owned());
    }
}

/// The object at `path` below `value`, created (as `{}`) where missing.
fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut current = value;
    for key in path {
        if !current.is_object() {
            *current = Value::Object(Map::new());
        }
        current = current
            .as_object_mut()
            .expect("just made an object")
            .entry(*key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !current.is_object() {
        *current = Value::Object(Map::new());
    }
    current.as_object_mut().expect("just made an object")
}

impl Selector {
    fn matches(&self, resource: &Resource) -> bool {
        let (group, version) = group_version(&resource.value);
        let same = |wanted: &Option<String>, actual: &str| {
            wanted.as_deref().is_none_or(|wanted| wanted == actual)
        };
        same(&self.group, group)
            && same(&self.version, version)
            && same(&self.kind, kind(&resource.value))
            && self
                .name
                .as_deref()
                .is_none_or(|wanted| resource.names().any(|name| name == wanted))
            && self.namespace.as_deref().is_none_or(|wanted| {
                resource
                    .namespaces()
                    .any(|namespace| namespace == Some(wanted))
            })
    }
}

fn apply_patch(dir: &Path, entry: &PatchEntry, resources: &mut [Resource]) -> Result<()> {
    let (text, origin) = match (&entry.path, &entry.patch) {
        (Some(path), None) => (
            fs::read_to_string(dir.join(path))
                .with_context(|| format!("reading {}", dir.join(path).display()))?,
            path.clone(),
        ),
        (None, Some(patch)) => (patch.clone(), "inline patch".to_owned()),
        _ => bail!("a patch needs exactly one of `path` and `patch`"),
    };
    let document: Value =
        serde_saphyr::from_str(&text).with_context(|| format!("{origin}: invalid YAML"))?;
    if !document.is_array() {
        bail!(
            "{origin}: strategic-merge patches are not supported by cargo xtask's kustomize \
             subset; write it as a JSON 6902 patch (a list of operations)"
        );
    }
    let operations: Vec<json_patch::PatchOperation> = serde_json::from_value(document)
        .with_context(|| format!("{origin}: not a list of JSON 6902 operations"))?;
    let target = entry
        .target
        .as_ref()
        .with_context(|| format!("{origin}: a JSON 6902 patch needs a `target`"))?;
    for resource in resources.iter_mut().filter(|r| target.matches(r)) {
        let described = resource.describe();
        for operation in &operations {
            let operation = replace_missing_as_add(&resource.value, operation);
            json_patch::patch(&mut resource.value, std::slice::from_ref(&operation))
                .with_context(|| format!("{origin}: applying to {described}"))?;
        }
    }
    Ok(())
}

/// kustomize's JSON patch library lets `replace` create a missing field, as `add` would;
/// RFC 6902 (and the json-patch crate) refuse it.
fn replace_missing_as_add(
    document: &Value,
    operation: &json_patch::PatchOperation,
) -> json_patch::PatchOperation {
    match operation {
        json_patch::PatchOperation::Replace(replace)
            if document.pointer(replace.path.as_str()).is_none() =>
        {
            json_patch::PatchOperation::Add(json_patch::AddOperation {
                path: replace.path.clone(),
                value: replace.value.clone(),
            })
        }
        other => other.clone(),
    }
}

/// `registry:5000/repo:tag@digest` → (`registry:5000/repo`, tag, digest).
fn split_image(reference: &str) -> (&str, Option<&str>, Option<&str>) {
    let (rest, digest) = match reference.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (reference, None),
    };
    let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[last_slash..].rfind(':') {
        Some(colon) => {
            let at = last_slash + colon;
            (&rest[..at], Some(&rest[at + 1..]), digest)
        }
        None => (rest, None, digest),
    }
}

/// kustomize's image transformer over every `containers` and `initContainers` list.
fn set_images(value: &mut Value, images: &[Image]) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if key == "containers" || key == "initContainers" {
                    for container in child.as_array_mut().into_iter().flatten() {
                        if let Some(Value::String(image)) = container.get_mut("image")
                            && let Some(new) = new_image(image, images)
                        {
                            *image = new;
                        }
                    }
                } else {
                    set_images(child, images);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| set_images(item, images)),
        _ => {}
    }
}

fn new_image(image: &str, images: &[Image]) -> Option<String> {
    let (repository, tag, digest) = split_image(image);
    let entry = images.iter().find(|entry| entry.name == repository)?;
    let repository = entry.new_name.as_deref().unwrap_or(repository);
    Some(match (&entry.digest, &entry.new_tag) {
        (Some(digest), _) => format!("{repository}@{digest}"),
        (None, Some(tag)) => format!("{repository}:{tag}"),
        (None, None) => match (tag, digest) {
            (_, Some(digest)) => format!("{repository}@{digest}"),
            (Some(tag), None) => format!("{repository}:{tag}"),
            (None, None) => repository.to_owned(),
        },
    })
}

/// One step of a replacement field path.
#[derive(Debug, PartialEq)]
enum PathSegment {
    Key(String),
    Index(usize),
    /// `[name=value]`: the list element whose `name` field is `value`.
    Match(String, String),
}

/// `metadata.annotations.[cert-manager.io/inject-ca-from]`, `spec.dnsNames.0`,
/// `spec.containers.[name=manager].image`.
fn parse_field_path(path: &str) -> Result<Vec<PathSegment>> {
    let mut segments = Vec::new();
    let mut rest = path.strip_prefix('.').unwrap_or(path);
    while !rest.is_empty() {
        let segment;
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner
                .find(']')
                .with_context(|| format!("field path {path:?}: unclosed '['"))?;
            let bracketed = &inner[..end];
            segment = match bracketed.split_once('=') {
                Some((key, value)) => PathSegment::Match(key.to_owned(), value.to_owned()),
                None => PathSegment::Key(bracketed.to_owned()),
            };
            rest = &inner[end + 1..];
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            let text = &rest[..end];
            segment = match text.parse::<usize>() {
                Ok(index) => PathSegment::Index(index),
                Err(_) => PathSegment::Key(text.to_owned()),
            };
            rest = &rest[end..];
        }
        segments.push(segment);
        rest = rest.strip_prefix('.').unwrap_or(rest);
    }
    Ok(segments)
}

fn get_path<'a>(value: &'a Value, path: &[PathSegment]) -> Option<&'a Value> {
    path.iter()
        .try_fold(value, |current, segment| match segment {
            PathSegment::Key(key) => current.get(key),
            PathSegment::Index(index) => current.get(index),
            PathSegment::Match(key, wanted) => current
                .as_array()?
                .iter()
                .find(|item| item[key.as_str()].as_str() == Some(wanted)),
        })
}

/// The field at `path`, created as an empty string (with its parents) when `create` is set.
fn field_mut<'a>(
    value: &'a mut Value,
    path: &[PathSegment],
    create: bool,
) -> Option<&'a mut Value> {
    let mut current = value;
    for (n, segment) in path.iter().enumerate() {
        let last = n + 1 == path.len();
        let empty = || {
            if last {
                Value::String(String::new())
            } else {
                Value::Object(Map::new())
            }
        };
        current = match segment {
            PathSegment::Key(key) => {
                if current.is_null() && create {
                    *current = Value::Object(Map::new());
                }
                let map = current.as_object_mut()?;
                if !map.contains_key(key) && !create {
                    return None;
                }
                map.entry(key.clone()).or_insert_with(empty)
            }
            PathSegment::Index(index) => current.as_array_mut()?.get_mut(*index)?,
            PathSegment::Match(key, wanted) => current
                .as_array_mut()?
                .iter_mut()
                .find(|item| item[key.as_str()].as_str() == Some(wanted))?,
        };
    }
    Some(current)
}

fn apply_replacement(replacement: &Replacement, resources: &mut [Resource]) -> Result<()> {
    let source = &replacement.source;
    let selector = Selector {
        group: source.group.clone(),
        version: source.version.clone(),
        kind: source.kind.clone(),
        name: source.name.clone(),
        namespace: source.namespace.clone(),
    };
    let sources: Vec<&Resource> = resources.iter().filter(|r| selector.matches(r)).collect();
    let [source_resource] = sources.as_slice() else {
        bail!(
            "replacement source {:?}/{:?} matches {} objects, expected one",
            source.kind,
            source.name,
            sources.len()
        );
    };
    let field_path = source.field_path.as_deref().unwrap_or("metadata.name");
    let value = get_path(&source_resource.value, &parse_field_path(field_path)?)
        .with_context(|| {
            format!(
                "replacement source {} has no field {field_path}",
                source_resource.describe()
            )
        })?
        .clone();

    for target in &replacement.targets {
        let paths = target
            .field_paths
            .iter()
            .map(|path| parse_field_path(path))
            .collect::<Result<Vec<_>>>()?;
        for resource in resources.iter_mut() {
            if !target.select.matches(resource) || target.reject.iter().any(|r| r.matches(resource))
            {
                continue;
            }
            for (path, text) in paths.iter().zip(&target.field_paths) {
                let Some(field) = field_mut(&mut resource.value, path, target.options.create)
                else {
                    bail!(
                        "replacement target {} has no field {text} (set `create: true` to add it)",
                        resource.describe()
                    );
                };
                *field = replaced(field, &value, &target.options)?;
            }
        }
    }
    Ok(())
}

/// The new value of a replaced field: the source value, or with a delimiter, the field's
/// text with one delimited part replaced (or added before/after when `index` is out of range).
fn replaced(field: &Value, value: &Value, options: &FieldOptions) -> Result<Value> {
    let Some(delimiter) = &options.delimiter else {
        return Ok(value.clone());
    };
    let (Some(current), Some(part)) = (field.as_str(), scalar_text(value)) else {
        bail!("the delimiter option needs scalar values");
    };
    let mut parts: Vec<String> = current
        .split(delimiter.as_str())
        .map(str::to_owned)
        .collect();
    match usize::try_from(options.index) {
        Err(_) => parts.insert(0, part),
        Ok(index) if index >= parts.len() => parts.push(part),
        Ok(index) => parts[index] = part,
    }
    Ok(Value::String(parts.join(delimiter)))
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// A field that names another object: when that object is renamed (or moved), the field
/// follows.
#[derive(Clone)]
struct NameReference {
    /// The referenced object's kind and group (`None` = any group).
    kind: String,
    group: Option<String>,
    /// The referring kinds (empty = any) and group.
    referrer_kinds: Vec<String>,
    referrer_group: Option<String>,
    /// The path to the name; a list on the way is walked element by element.
    path: Vec<String>,
    /// The sibling field holding the referenced object's namespace, if any.
    namespace_field: Option<&'static str>,
    /// A sibling `kind` field that must equal `kind` (role bindings name Roles and
    /// ClusterRoles in the same field).
    when_kind_field: Option<&'static str>,
}

/// kustomize's built-in name references, for the kinds this project's config uses.
fn builtin_name_references() -> Vec<NameReference> {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let reference = |kind: &str, group: &str, referrers: &[&str], path: &[&str]| NameReference {
        kind: kind.to_owned(),
        group: Some(group.to_owned()),
        referrer_kinds: strings(referrers),
        referrer_group: None,
        path: strings(path),
        namespace_field: None,
        when_kind_field: None,
    };
    let bindings = &["RoleBinding", "ClusterRoleBinding"][..];
    let rbac = "rbac.authorization.k8s.io";
    let webhook_configurations = &[
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ][..];
    let mut references = vec![
        NameReference {
            namespace_field: Some("namespace"),
            when_kind_field: Some("kind"),
            ..reference("ServiceAccount", "", bindings, &["subjects", "name"])
        },
        NameReference {
            when_kind_field: Some("kind"),
            ..reference("Role", rbac, &["RoleBinding"], &["roleRef", "name"])
        },
        NameReference {
            when_kind_field: Some("kind"),
            ..reference("ClusterRole", rbac, bindings, &["roleRef", "name"])
        },
        NameReference {
            namespace_field: Some("namespace"),
            ..reference(
                "Service",
                "",
                webhook_configurations,
                &["webhooks", "clientConfig", "service", "name"],
            )
        },
    ];
    // Where pod specs sit in the workload kinds.
    let pod_specs: [(&[&str], &[&str]); 3] = [
        (
            &[
                "Deployment",
                "StatefulSet",
                "DaemonSet",
                "ReplicaSet",
                "Job",
            ],
            &["spec", "template", "spec"],
        ),
        (
            &["CronJob"],
            &["spec", "jobTemplate", "spec", "template", "spec"],
        ),
        (&["Pod"], &["spec"]),
    ];
    for (kind, field) in [
        ("ServiceAccount", &["serviceAccountName"][..]),
        ("Secret", &["volumes", "secret", "secretName"][..]),
        ("ConfigMap", &["volumes", "configMap", "name"][..]),
    ] {
        for (referrers, pod_spec) in pod_specs {
            let path: Vec<&str> = pod_spec.iter().chain(field).copied().collect();
            references.push(reference(kind, "", referrers, &path));
        }
    }
    references
}

fn fix_name_references(resources: &mut [Resource], references: &[NameReference]) -> Result<()> {
    // The candidates are read while referrers are written: snapshot their identities.
    struct Candidate {
        kind: String,
        group: String,
        names: Vec<String>,
        namespaces: Vec<Option<String>>,
        name: String,
        namespace: Option<String>,
        cluster_scoped: bool,
    }
    let candidates: Vec<Candidate> = resources
        .iter()
        .map(|r| Candidate {
            kind: kind(&r.value).to_owned(),
            group: group_version(&r.value).0.to_owned(),
            names: r.names().map(str::to_owned).collect(),
            namespaces: r.namespaces().map(|n| n.map(str::to_owned)).collect(),
            name: name(&r.value).to_owned(),
            namespace: namespace(&r.value).map(str::to_owned),
            cluster_scoped: is_cluster_scoped(&r.value),
        })
        .collect();

    for resource in resources.iter_mut() {
        let referrer = resource.describe();
        let referrer_kind = kind(&resource.value).to_owned();
        let referrer_group = group_version(&resource.value).0.to_owned();
        let referrer_namespaces: Vec<Option<String>> = resource
            .namespaces()
            .map(|n| n.map(str::to_owned))
            .collect();
        // As kustomize: a cluster-scoped referrer (a CRD's conversion Service, say) may
        // refer to an object in any namespace.
        let any_namespace = is_cluster_scoped(&resource.value);
        for reference in references {
            if !reference.referrer_kinds.is_empty()
                && !reference.referrer_kinds.contains(&referrer_kind)
            {
                continue;
            }
            if reference
                .referrer_group
                .as_ref()
                .is_some_and(|g| *g != referrer_group)
            {
                continue;
            }
            let (parents, field) = reference.path.split_at(reference.path.len() - 1);
            let mut holders = Vec::new();
            collect_holders(&mut resource.value, parents, &mut holders);
            for holder in holders {
                if let Some(kind_field) = reference.when_kind_field
                    && holder.get(kind_field).and_then(Value::as_str)
                        != Some(reference.kind.as_str())
                {
                    continue;
                }
                let Some(current) = holder.get(&field[0]).and_then(Value::as_str) else {
                    continue;
                };
                let referenced_namespace = match reference.namespace_field {
                    Some(namespace_field) => vec![
                        holder
                            .get(namespace_field)
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    ],
                    None => referrer_namespaces.clone(),
                };
                let matching: Vec<&Candidate> = candidates
                    .iter()
                    .filter(|c| {
                        c.kind == reference.kind
                            && reference.group.as_ref().is_none_or(|g| *g == c.group)
                            && c.names.iter().any(|n| n == current)
                            && (c.cluster_scoped
                                || (any_namespace && reference.namespace_field.is_none())
                                || c.namespaces
                                    .iter()
                                    .any(|n| referenced_namespace.contains(n)))
                    })
                    .collect();
                match matching.as_slice() {
                    [] => {}
                    [candidate] => {
                        holder.insert(field[0].clone(), Value::String(candidate.name.clone()));
                        if let (Some(namespace_field), Some(namespace)) =
                            (reference.namespace_field, &candidate.namespace)
                        {
                            holder.insert(
                                namespace_field.to_owned(),
                                Value::String(namespace.clone()),
                            );
                        }
                    }
                    _ => bail!(
                        "{referrer} refers to {} {current:?}, which matches several objects",
                        reference.kind
                    ),
                }
            }
        }
    }
    Ok(())
}

/// The objects at `path` below `value`, walking into every element of the lists on the way.
fn collect_holders<'a>(
    value: &'a mut Value,
    path: &[String],
    out: &mut Vec<&'a mut Map<String, Value>>,
) {
    match value {
        Value::Array(items) => {
            for item in items {
                collect_holders(item, path, out);
            }
        }
        Value::Object(map) => match path.split_first() {
            None => out.push(map),
            Some((key, rest)) => {
                if let Some(child) = map.get_mut(key) {
                    collect_holders(child, rest, out);
                }
            }
        },
        _ => {}
    }
}

/// kustomize's legacy output order: namespaces, CRDs, accounts and RBAC, config, services,
/// workloads, then other kinds, and webhook configurations last; then by kind and name.
/// It is also an order the apiserver accepts (what a namespaced object needs exists first).
fn output_order(value: &Value) -> (usize, String, String, String) {
    const FIRST: &[&str] = &[
        "Namespace",
        "ResourceQuota",
        "StorageClass",
        "CustomResourceDefinition",
        "ServiceAccount",
        "PodSecurityPolicy",
        "Role",
        "ClusterRole",
        "RoleBinding",
        "ClusterRoleBinding",
        "ConfigMap",
        "Secret",
        "Endpoints",
        "Service",
        "LimitRange",
        "PriorityClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Deployment",
        "StatefulSet",
        "CronJob",
        "PodDisruptionBudget",
    ];
    const LAST: &[&str] = &[
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ];
    let kind = kind(value);
    let rank = match (
        FIRST.iter().position(|k| *k == kind),
        LAST.iter().position(|k| *k == kind),
    ) {
        (Some(first), _) => first,
        (None, Some(last)) => FIRST.len() + 1 + last,
        (None, None) => FIRST.len(),
    };
    (
        rank,
        kind.to_owned(),
        namespace(value).unwrap_or_default().to_owned(),
        name(value).to_owned(),
    )
}

/// A path given on the command line: relative ones are relative to the workspace root,
/// as the Makefile targets' paths are relative to the project.
pub fn in_workspace(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        crate::workspace_root().join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_references_split_at_the_last_colon_after_the_last_slash() {
        assert_eq!(
            split_image("controller:latest"),
            ("controller", Some("latest"), None)
        );
        assert_eq!(
            split_image("registry:5000/team/controller"),
            ("registry:5000/team/controller", None, None)
        );
        assert_eq!(
            split_image("registry:5000/controller:v1@sha256:abc"),
            ("registry:5000/controller", Some("v1"), Some("sha256:abc"))
        );
    }

    #[test]
    fn images_keep_or_replace_tags_and_digests() {
        let set = |reference| vec![Image::set("controller", reference)];
        assert_eq!(
            new_image("controller:latest", &set("example.com/ctl:v2")),
            Some("example.com/ctl:v2".into())
        );
        assert_eq!(
            new_image("controller@sha256:old", &set("example.com/ctl@sha256:new")),
            Some("example.com/ctl@sha256:new".into())
        );
        let rename_only = vec![Image {
            name: "controller".into(),
            new_name: Some("other".into()),
            ..Default::default()
        }];
        assert_eq!(
            new_image("controller:v1", &rename_only),
            Some("other:v1".into())
        );
        assert_eq!(new_image("unrelated:v1", &rename_only), None);
    }

    #[test]
    fn field_paths_take_bracketed_keys_indices_and_matches() {
        assert_eq!(
            parse_field_path("metadata.annotations.[cert-manager.io/inject-ca-from]").unwrap(),
            vec![
                PathSegment::Key("metadata".into()),
                PathSegment::Key("annotations".into()),
                PathSegment::Key("cert-manager.io/inject-ca-from".into()),
            ]
        );
        assert_eq!(
            parse_field_path(".spec.containers.[name=manager].args.0").unwrap(),
            vec![
                PathSegment::Key("spec".into()),
                PathSegment::Key("containers".into()),
                PathSegment::Match("name".into(), "manager".into()),
                PathSegment::Key("args".into()),
                PathSegment::Index(0),
            ]
        );
    }

    #[test]
    fn delimited_replacements_replace_or_append_parts() {
        let options = |index| FieldOptions {
            delimiter: Some("/".into()),
            index,
            create: true,
        };
        let created = replaced(&json!(""), &json!("ns"), &options(0)).unwrap();
        assert_eq!(created, json!("ns"));
        let appended = replaced(&created, &json!("cert"), &options(1)).unwrap();
        assert_eq!(appended, json!("ns/cert"));
        assert_eq!(
            replaced(&appended, &json!("x"), &options(-1)).unwrap(),
            json!("x/ns/cert")
        );
    }

    #[test]
    fn references_follow_renamed_and_moved_objects() {
        let mut resources: Vec<Resource> = [
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "system"}}),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "b"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
                   "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "system"},
                                {"kind": "ServiceAccount", "name": "other", "namespace": "system"}]}),
        ]
        .into_iter()
        .map(|value| Resource { value, previous_names: vec![], previous_namespaces: vec![] })
        .collect();
        for resource in &mut resources {
            set_namespace(resource, "project-system");
            let new_name = format!("project-{}", name(&resource.value));
            rename(resource, new_name);
        }
        fix_name_references(&mut resources, &builtin_name_references()).unwrap();
        let subjects = &resources[1].value["subjects"];
        assert_eq!(
            subjects[0],
            json!({"kind": "ServiceAccount", "name": "project-sa", "namespace": "project-system"})
        );
        // Not an object of this build: left alone.
        assert_eq!(subjects[1]["name"], "other");
        assert_eq!(resources[1].value["roleRef"]["name"], "r");
    }

    #[test]
    fn strategic_merge_patches_are_refused_clearly() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("patch.yaml"), "spec:\n  replicas: 2\n").unwrap();
        let entry = PatchEntry {
            path: Some("patch.yaml".into()),
            patch: None,
            target: None,
        };
        let error = apply_patch(dir.path(), &entry, &mut []).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("strategic-merge patches are not supported")
        );
    }
}

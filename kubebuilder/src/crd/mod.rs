//! CustomResourceDefinitions: what `#[kubebuilder::resource(...)]` declares for one version
//! of a kind ([`Version`], registered at link time), and how the versions of a kind merge
//! into one CRD as controller-gen assembles them ([`all`]). kube-derive kinds registered with
//! [`register_custom_resource!`](crate::register_custom_resource) ([`External`]) join them.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
    CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionVersion,
    CustomResourceSubresourceScale, CustomResourceSubresourceStatus, CustomResourceSubresources,
    CustomResourceValidation, JSONSchemaProps, SelectableField, ServiceReference,
    WebhookClientConfig, WebhookConversion,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kubebuilder_model::Text;

use crate::schema;
use crate::{conversion, webhook};

mod external;
pub(crate) mod root;

pub use external::{External, ExternalResource};

/// The controller-gen release whose output the attributes reproduce: every differential
/// test runs this release as the peer, and `cargo xtask` installs it.
pub const CONTROLLER_GEN_VERSION: &str = "v0.23.0";

/// The annotation controller-gen writes on every CRD. We write the same key with
/// [`CONTROLLER_GEN_VERSION`], so that tools and diffs that look for it see a CRD compatible
/// with that release.
pub const GENERATOR_ANNOTATION: (&str, &str) = (
    "controller-gen.kubebuilder.io/version",
    CONTROLLER_GEN_VERSION,
);

pub use kubebuilder_model::crd::{PrinterColumn, Scale};

/// One version of a kind, as its `#[kubebuilder::resource(...)]` declares it, with its root
/// object's schema.
pub type Version = kubebuilder_model::crd::Version<RootSchema>;

/// The root object's schema of a [`Version`].
#[derive(Clone)]
pub enum RootSchema {
    /// The function `#[kubebuilder::resource]` generates.
    Function(fn() -> JSONSchemaProps),
    /// The schema `cargo xtask manifests` built reading the sources.
    Value(Arc<JSONSchemaProps>),
}

impl RootSchema {
    /// The schema.
    pub fn get(&self) -> JSONSchemaProps {
        match self {
            RootSchema::Function(schema) => schema(),
            RootSchema::Value(schema) => JSONSchemaProps::clone(schema),
        }
    }
}

/// Implemented by `#[kubebuilder::resource(...)]` for the root object of a version.
pub trait CustomResource {
    /// This version of the kind, as the attribute declares it.
    const VERSION: Version;

    /// A CRD with this version alone, as declared (storage, since it is the only one;
    /// `skipversion` and `unservedversion` are not consulted).
    fn crd() -> CustomResourceDefinition {
        let mut only = definition(&Self::VERSION, &Options::default());
        only.storage = true;
        assemble(&Self::VERSION, vec![only], &Options::default())
    }
}

/// Options applied to every CRD.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// controller-gen's `crd:maxDescLen`: `Some(0)` drops descriptions, `Some(n)` cuts
    /// them to `n` bytes at a sentence or word boundary.
    pub max_desc_len: Option<usize>,
    /// controller-gen's `crd:omitToolVersion`: leave out [`GENERATOR_ANNOTATION`].
    pub omit_tool_version: bool,
    /// controller-gen's `crd:generateEmbeddedObjectMeta`: an `ObjectMeta` below the root
    /// (a pod template's `metadata`) has the properties a client may set in it (`name`,
    /// `namespace`, `labels`, `annotations`, `finalizers`) rather than none, so that the
    /// apiserver keeps them instead of pruning them.
    pub generate_embedded_object_meta: bool,
}

/// A kind whose versions do not merge into one CRD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Every CRD of the program: the registered versions grouped by kind, merged, in
/// controller-gen's order (by `Kind.group`), and the kube-derive kinds registered with
/// [`register_custom_resource!`](crate::register_custom_resource) in the same order. All
/// problems are reported together.
pub fn all(options: &Options) -> Result<Vec<CustomResourceDefinition>, Vec<Error>> {
    let versions: Vec<&Version> = inventory::iter::<root::Registration>
        .into_iter()
        .map(|r| r.0)
        .collect();
    merge_all_with(&versions, &external::registered(), options)
}

/// [`all`] over given versions.
pub fn merge_all(
    versions: &[&Version],
    options: &Options,
) -> Result<Vec<CustomResourceDefinition>, Vec<Error>> {
    merge_all_with(versions, &[], options)
}

/// [`all`] over given versions and kube-derive registrations. A kind is declared one way:
/// all its versions with `#[kubebuilder::resource]`, or all with kube-derive.
pub fn merge_all_with(
    versions: &[&Version],
    external: &[&External],
    options: &Options,
) -> Result<Vec<CustomResourceDefinition>, Vec<Error>> {
    type Kind<'a> = (
        Vec<&'a Version>,
        Vec<(&'a External, CustomResourceDefinition)>,
    );
    let mut kinds: BTreeMap<String, Kind<'_>> = BTreeMap::new();
    for version in versions {
        kinds
            .entry(group_kind(version))
            .or_default()
            .0
            .push(version);
    }
    for registration in external {
        let crd = (registration.crd)();
        let key = if crd.spec.group.is_empty() {
            crd.spec.names.kind.clone()
        } else {
            format!("{}.{}", crd.spec.names.kind, crd.spec.group)
        };
        kinds.entry(key).or_default().1.push((registration, crd));
    }
    let mut crds = Vec::new();
    let mut errors = Vec::new();
    for (group_kind, (ours, theirs)) in &kinds {
        let merged = match (ours.is_empty(), theirs.is_empty()) {
            (false, true) => merge(ours, options),
            (true, false) => external::merge(group_kind, theirs, options).map(Some),
            _ => Err(mixed(group_kind, ours, theirs)),
        };
        match merged {
            Ok(crd) => crds.extend(crd),
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() {
        Ok(crds)
    } else {
        Err(errors)
    }
}

/// A kind with versions declared both ways (or one of ours registered again).
fn mixed(
    group_kind: &str,
    ours: &[&Version],
    theirs: &[(&External, CustomResourceDefinition)],
) -> Error {
    let ours: Vec<&str> = ours.iter().map(|v| &*v.name).collect();
    let theirs: Vec<String> = theirs
        .iter()
        .map(|(registration, crd)| {
            let names: Vec<&str> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
            format!(
                "{} in register_custom_resource!({})",
                names.join(", "),
                registration.type_name
            )
        })
        .collect();
    Error(format!(
        "CRD for {group_kind}: version(s) {} come from #[kubebuilder::resource] and {}; a kind's \
         versions are declared one way (a #[kubebuilder::resource] kind registers itself, \
         register_custom_resource! is for kube-derive kinds)",
        ours.join(", "),
        theirs.join(" and ")
    ))
}

/// Go's `GroupKind.String()`.
fn group_kind(version: &Version) -> String {
    if version.group.is_empty() {
        version.kind.to_string()
    } else {
        format!("{}.{}", version.kind, version.group)
    }
}

/// The CRD of one kind from its versions; `None` when every version is skipped.
pub fn merge(
    versions: &[&Version],
    options: &Options,
) -> Result<Option<CustomResourceDefinition>, Error> {
    let Some(first) = versions.first() else {
        return Ok(None);
    };
    let group_kind = group_kind(first);
    // The CRD-level settings are repeated on every version; they must agree.
    for other in &versions[1..] {
        let differs = [
            ("resource(path)", first.plural != other.plural),
            ("resource(singular)", first.singular != other.singular),
            (
                "resource(short_name)",
                first.short_names != other.short_names,
            ),
            ("resource(categories)", first.categories != other.categories),
            ("resource(scope)", first.scope != other.scope),
            (
                "metadata(annotations)",
                first.annotations != other.annotations,
            ),
            ("metadata(labels)", first.labels != other.labels),
        ];
        if let Some((what, _)) = differs.iter().find(|(_, differs)| *differs) {
            return Err(Error(format!(
                "CRD for {group_kind}: versions {} and {} declare different {what}",
                first.name, other.name
            )));
        }
    }
    let mut names: Vec<&str> = versions.iter().map(|v| &*v.name).collect();
    names.sort();
    if let Some(duplicate) = names.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(Error(format!(
            "CRD for {group_kind}: version {} is declared twice",
            duplicate[0]
        )));
    }

    let mut kept: Vec<&Version> = versions.iter().copied().filter(|v| !v.skip).collect();
    if kept.is_empty() {
        return Ok(None);
    }
    // controller-gen sorts versions with a plain string compare (v1 < v1alpha1 < v2).
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    let mut definitions: Vec<CustomResourceDefinitionVersion> =
        kept.iter().map(|v| definition(v, options)).collect();
    if let [only] = definitions.as_mut_slice() {
        only.storage = true;
    }
    check_versions(&group_kind, &definitions, "")?;

    let mut crd = assemble(first, definitions, options);
    if kept.iter().any(|v| v.hub.is_some()) {
        crd.spec.conversion = Some(webhook_conversion());
    }
    Ok(Some(crd))
}

/// Conversion by the project's webhook server, at the Service the admission webhooks use
/// (kustomize renames and moves it, and cert-manager injects its CA through
/// `config/default`): what kubebuilder's `webhook_in_<plural>.yaml` patch adds.
fn webhook_conversion() -> CustomResourceConversion {
    CustomResourceConversion {
        strategy: "Webhook".to_owned(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    name: webhook::DEFAULT_SERVICE_NAME.to_owned(),
                    namespace: webhook::DEFAULT_SERVICE_NAMESPACE.to_owned(),
                    path: Some(conversion::CONVERT_PATH.to_owned()),
                    port: None,
                }),
                ..WebhookClientConfig::default()
            }),
            conversion_review_versions: vec!["v1".to_owned()],
        }),
    }
}

/// The CRD of `first`'s kind with these versions.
fn assemble(
    first: &Version,
    versions: Vec<CustomResourceDefinitionVersion>,
    options: &Options,
) -> CustomResourceDefinition {
    let pairs = |list: &[(Text, Text)]| -> Option<BTreeMap<String, String>> {
        (!list.is_empty()).then(|| {
            list.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
    };
    let mut annotations = pairs(&first.annotations).unwrap_or_default();
    if !options.omit_tool_version {
        annotations.insert(
            GENERATOR_ANNOTATION.0.to_owned(),
            GENERATOR_ANNOTATION.1.to_owned(),
        );
    }
    let strings = |list: &[Text]| -> Option<Vec<String>> {
        (!list.is_empty()).then(|| list.iter().map(Text::to_string).collect())
    };
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{}.{}", first.plural, first.group)),
            annotations: (!annotations.is_empty()).then_some(annotations),
            labels: pairs(&first.labels),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            group: first.group.to_string(),
            names: CustomResourceDefinitionNames {
                kind: first.kind.to_string(),
                list_kind: Some(format!("{}List", first.kind)),
                plural: first.plural.to_string(),
                singular: Some(first.singular.to_string()),
                short_names: strings(&first.short_names),
                categories: strings(&first.categories),
            },
            scope: first.scope.to_string(),
            versions,
            ..CustomResourceDefinitionSpec::default()
        },
        status: None,
    }
}

/// One entry of `spec.versions`.
fn definition(version: &Version, options: &Options) -> CustomResourceDefinitionVersion {
    let mut schema =
        schema::with_embedded_object_meta(options.generate_embedded_object_meta, || {
            version.schema.get()
        });
    if let Some(max_len) = options.max_desc_len {
        schema::truncate_descriptions(&mut schema, max_len);
    }
    // controller-gen creates an empty `subresources` whenever a version has printer
    // columns, even without the status subresource.
    let subresources = (version.status_subresource
        || version.scale.is_some()
        || !version.printer_columns.is_empty())
    .then(|| CustomResourceSubresources {
        status: version.status_subresource.then(|| {
            CustomResourceSubresourceStatus(serde_json::Value::Object(Default::default()))
        }),
        scale: version
            .scale
            .as_ref()
            .map(|scale| CustomResourceSubresourceScale {
                spec_replicas_path: scale.spec_path.to_string(),
                status_replicas_path: scale.status_path.to_string(),
                label_selector_path: scale.selector_path.as_ref().map(Text::to_string),
            }),
    });
    let columns: Vec<CustomResourceColumnDefinition> = version
        .printer_columns
        .iter()
        .map(|column| CustomResourceColumnDefinition {
            name: column.name.to_string(),
            type_: column.type_.to_string(),
            json_path: column.json_path.to_string(),
            description: column.description.as_ref().map(Text::to_string),
            format: column.format.as_ref().map(Text::to_string),
            priority: (column.priority != 0).then_some(column.priority),
        })
        .collect();
    let selectable: Vec<SelectableField> = version
        .selectable_fields
        .iter()
        .map(|path| SelectableField {
            json_path: path.to_string(),
        })
        .collect();
    CustomResourceDefinitionVersion {
        name: version.name.to_string(),
        served: version.served,
        storage: version.storage,
        deprecated: version.deprecated.as_ref().map(|_| true),
        deprecation_warning: version.deprecated.clone().flatten().map(String::from),
        schema: Some(CustomResourceValidation {
            open_api_v3_schema: Some(schema),
        }),
        subresources,
        additional_printer_columns: (!columns.is_empty()).then_some(columns),
        selectable_fields: (!selectable.is_empty()).then_some(selectable),
    }
}

/// Fails unless exactly one of a kind's CRD `versions` is stored and one is served; `hint`
/// ends the error for more than one stored (how to pick one where the versions come from).
fn check_versions(
    group_kind: &str,
    versions: &[CustomResourceDefinitionVersion],
    hint: &str,
) -> Result<(), Error> {
    let names = |keep: fn(&CustomResourceDefinitionVersion) -> bool| -> Vec<&str> {
        versions
            .iter()
            .filter(|v| keep(v))
            .map(|v| v.name.as_str())
            .collect()
    };
    let storage = names(|v| v.storage);
    match storage.len() {
        0 => {
            return Err(Error(format!(
                "CRD for {group_kind} has no storage version"
            )));
        }
        1 => {}
        _ => {
            return Err(Error(format!(
                "CRD for {group_kind} has more than one storage version: {}{hint}",
                storage.join(", ")
            )));
        }
    }
    if names(|v| v.served).is_empty() {
        return Err(Error(format!(
            "CRD for {group_kind} with version(s) {} does not serve any version",
            names(|_| true).join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

//! CRDs declared without `#[kubebuilder::resource]`: kube-derive's `#[derive(CustomResource)]`
//! (or any other `kube::CustomResourceExt`), registered with
//! [`register_custom_resource!`](crate::register_custom_resource) so that `cargo xtask
//! manifests` writes them beside ours. Their versions, registered one type each, merge into
//! one CRD per kind under the rules ours follow (one storage version, at least one served,
//! CRD-level settings that agree), and their CRDs are otherwise kept as kube-derive built them.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube_core::CustomResourceExt;

use super::{Error, Options, check_versions};
use crate::schema;

/// One registered kube-derive type: a version (or several) of a kind, as its `crd()` gives it.
#[derive(Clone, Copy, Debug)]
pub struct External {
    /// The type as [`register_custom_resource!`](crate::register_custom_resource) names it,
    /// for messages.
    pub type_name: &'static str,
    /// `<K as kube::CustomResourceExt>::crd`.
    pub crd: fn() -> CustomResourceDefinition,
}

impl External {
    /// The registration of `K` (what `register_custom_resource!(K)` submits).
    pub const fn of<K: ExternalResource>(type_name: &'static str) -> External {
        External {
            type_name,
            crd: <K as CustomResourceExt>::crd,
        }
    }
}

inventory::collect!(External);

/// The kinds [`register_custom_resource!`](crate::register_custom_resource) takes: kube's
/// `CustomResourceExt`, which `#[derive(CustomResource)]` implements on the root type it
/// generates (the one `#[kube(kind = "...")]` names, not the spec struct it sits on).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a kube custom resource: it does not implement `kube::CustomResourceExt`",
    label = "not a kube-derive root type",
    note = "`register_custom_resource!` takes the root type `#[derive(CustomResource)]` generates (named by `#[kube(kind = \"...\")]`), not the spec struct the derive sits on",
    note = "types with `#[kubebuilder::resource]` register themselves and need no `register_custom_resource!`"
)]
pub trait ExternalResource: CustomResourceExt {}

impl<K: CustomResourceExt> ExternalResource for K {}

/// Every kube-derive registration of the program.
pub fn registered() -> Vec<&'static External> {
    inventory::iter::<External>.into_iter().collect()
}

/// The CRD of one kind from its registered types, each with the CRD it built.
pub(super) fn merge(
    group_kind: &str,
    registrations: &[(&External, CustomResourceDefinition)],
    options: &Options,
) -> Result<CustomResourceDefinition, Error> {
    let Some(((first_registration, first), rest)) = registrations.split_first() else {
        return Err(Error(format!("CRD for {group_kind}: nothing registered")));
    };
    let first_type = first_registration.type_name;
    for (other_registration, other) in rest {
        let other_type = other_registration.type_name;
        let differs = [
            ("spec.names", first.spec.names != other.spec.names),
            ("spec.scope", first.spec.scope != other.spec.scope),
            (
                "metadata.annotations",
                first.metadata.annotations != other.metadata.annotations,
            ),
            (
                "metadata.labels",
                first.metadata.labels != other.metadata.labels,
            ),
            (
                "spec.preserveUnknownFields",
                first.spec.preserve_unknown_fields != other.spec.preserve_unknown_fields,
            ),
        ];
        if let Some((what, _)) = differs.iter().find(|(_, differs)| *differs) {
            return Err(Error(format!(
                "CRD for {group_kind}: {first_type} and {other_type} declare different {what}"
            )));
        }
    }
    let mut crd = first.clone();
    crd.spec.versions = Vec::new();
    let mut declared_by: Vec<(&str, &str)> = Vec::new();
    for (registration, registered) in registrations {
        let type_name = registration.type_name;
        for version in &registered.spec.versions {
            if let Some((_, earlier)) = declared_by.iter().find(|(name, _)| *name == version.name) {
                return Err(Error(format!(
                    "CRD for {group_kind}: version {} is declared twice, by {earlier} and \
                     {type_name}",
                    version.name
                )));
            }
            declared_by.push((&version.name, type_name));
            crd.spec.versions.push(version.clone());
        }
    }
    // As ours: versions in a plain string order (v1 < v1alpha1 < v2).
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    check_versions(
        group_kind,
        &crd.spec.versions,
        " (kube-derive stores every version unless told: mark all but one \
         `#[kube(storage = false)]`)",
    )?;
    if let Some(max_len) = options.max_desc_len {
        for version in &mut crd.spec.versions {
            let schema = version
                .schema
                .as_mut()
                .and_then(|validation| validation.open_api_v3_schema.as_mut());
            if let Some(schema) = schema {
                schema::truncate_descriptions(schema, max_len);
            }
        }
    }
    Ok(crd)
}

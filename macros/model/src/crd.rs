//! CustomResourceDefinitions: what `#[kubebuilder::resource(...)]` declares for one version
//! of a kind.

use std::borrow::Cow;
use std::fmt;

use crate::{Text, Texts};

/// One version of a kind, as its `#[kubebuilder::resource(...)]` declares it.
#[derive(Clone)]
pub struct Version<Schema> {
    /// The API group (`batch.tutorial.kubebuilder.io`; Go's `+groupName`).
    pub group: Text,
    /// The kind (`CronJob`).
    pub kind: Text,
    /// The version name (`v1`).
    pub name: Text,
    /// `spec.names.plural`: `resource(path)`, else controller-gen's default plural of the
    /// kind. The CRD is named `<plural>.<group>`.
    pub plural: Text,
    /// `spec.names.singular`: `resource(singular)`, else the kind lower-cased.
    pub singular: Text,
    /// `spec.names.shortNames`: `resource(short_name)`.
    pub short_names: Texts,
    /// `spec.names.categories`: `resource(categories)`; `kubectl get <category>` (such as
    /// `kubectl get all`) lists the kind.
    pub categories: Texts,
    /// `Namespaced` or `Cluster`.
    pub scope: Text,
    /// `storageversion`: objects are persisted in this version. A kind needs exactly one,
    /// unless it has a single version, which is then the storage version anyway.
    pub storage: bool,
    /// `false` with `unservedversion`: the apiserver no longer serves this version.
    pub served: bool,
    /// `Some` with `deprecatedversion`; the inner value is its warning.
    pub deprecated: Option<Option<Text>>,
    /// `skipversion`: declared, but left out of the CRD.
    pub skip: bool,
    /// `metadata(annotations)`: the CRD object's annotations, as (key, value).
    pub annotations: Cow<'static, [(Text, Text)]>,
    /// `metadata(labels)`: the CRD object's labels, as (key, value).
    pub labels: Cow<'static, [(Text, Text)]>,
    /// `subresource(status)`: `status` is written through `/status` only, and updates of
    /// the object leave it unchanged.
    pub status_subresource: bool,
    /// `subresource(scale(...))`; `None` without a scale subresource.
    pub scale: Option<Scale>,
    /// `printcolumn(...)`, in order: the version's `additionalPrinterColumns`.
    pub printer_columns: Cow<'static, [PrinterColumn]>,
    /// `selectablefield(json_path = ...)`: the JSON paths field selectors may use
    /// (`selectableFields`).
    pub selectable_fields: Texts,
    /// `hub = ...`: the name of the version this one converts through. A kind with such a
    /// version gets a `spec.conversion` to the webhook server.
    pub hub: Option<Text>,
    /// The root object's schema: what `kubebuilder::crd::Version` holds it as.
    pub schema: Schema,
}

impl<Schema> fmt::Debug for Version<Schema> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Version")
            .field("group", &self.group)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("storage", &self.storage)
            .field("served", &self.served)
            .field("skip", &self.skip)
            .field("hub", &self.hub)
            .finish_non_exhaustive()
    }
}

impl<Schema> Version<Schema> {
    /// The same declaration with `schema`.
    pub fn with_schema<Other>(self, schema: Other) -> Version<Other> {
        let Version {
            group,
            kind,
            name,
            plural,
            singular,
            short_names,
            categories,
            scope,
            storage,
            served,
            deprecated,
            skip,
            annotations,
            labels,
            status_subresource,
            scale,
            printer_columns,
            selectable_fields,
            hub,
            schema: _,
        } = self;
        Version {
            group,
            kind,
            name,
            plural,
            singular,
            short_names,
            categories,
            scope,
            storage,
            served,
            deprecated,
            skip,
            annotations,
            labels,
            status_subresource,
            scale,
            printer_columns,
            selectable_fields,
            hub,
            schema,
        }
    }

    /// `group/version` (`version` alone for the core group).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.name.to_string()
        } else {
            format!("{}/{}", self.group, self.name)
        }
    }
}

/// `subresource(scale(...))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// `specReplicasPath`: the JSON path of the desired replicas (`.spec.replicas`).
    pub spec_path: Text,
    /// `statusReplicasPath`: the JSON path of the observed replicas (`.status.replicas`).
    pub status_path: Text,
    /// `labelSelectorPath`: the JSON path of the pods' label selector in string form, which
    /// the HorizontalPodAutoscaler needs; `None` leaves it out.
    pub selector_path: Option<Text>,
}

/// `printcolumn(...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrinterColumn {
    /// The column's header.
    pub name: Text,
    /// `integer`, `number`, `string`, `boolean` or `date`.
    pub type_: Text,
    /// The JSON path of the value shown, from the object's root (`.spec.schedule`).
    pub json_path: Text,
    /// `description`; `None` leaves it out.
    pub description: Option<Text>,
    /// An OpenAPI format refining `type_` (`int32`, `date-time`, ...); `None` leaves it out.
    pub format: Option<Text>,
    /// `0` shows the column in `kubectl get`'s standard view, more only with `-o wide`.
    pub priority: i32,
}

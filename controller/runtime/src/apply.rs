//! Server-side apply as a reconciler's first way to write: controller-runtime's
//! `client.Apply` patches with a field manager, forced as its docs advise controllers.
//!
//! A reconciler sends only the fields it owns — a kind's apply configuration
//! (`<Kind>ApplyConfiguration`, which `apply_configuration` generates: every field
//! optional), a typed object whose unset `Option` fields are not serialized (k8s-openapi's
//! types), or a `serde_json::Value` — and the apiserver merges them with what other
//! managers own, and removes what this manager applied before and no longer sends.
//!
//! ```no_run
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kube::Api;
//! use kubebuilder_runtime::apply::Applier;
//! use serde_json::json;
//!
//! # async fn reconcile(api: Api<ConfigMap>) -> Result<(), kubebuilder_runtime::apply::ApplyError> {
//! let applier = Applier::new("memcached-controller");
//! let config: ConfigMap = applier
//!     .apply(&api, &json!({"metadata": {"name": "settings"}, "data": {"size": "3"}}))
//!     .await?;
//! # Ok(()) }
//! ```

use std::fmt::Debug;

use kube::api::{Patch, PatchParams};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Why an apply failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The object did not serialize to a JSON object.
    #[error("cannot encode the object to apply: {0}")]
    Encode(#[from] serde_json::Error),
    /// The object has no `metadata.name`.
    #[error("the object to apply has no metadata.name")]
    Unnamed,
    /// The apiserver refused the apply; a field owned by another manager, when not
    /// forced, is a conflict ([`crate::is_conflict`] tells).
    #[error("apply refused: {0}")]
    Kube(#[from] kube::Error),
}

/// Applies objects as one field manager.
#[derive(Clone, Debug)]
pub struct Applier {
    field_manager: String,
    force: bool,
}

impl Applier {
    /// Applies as `field_manager` (by convention the controller's name), forced: fields
    /// another manager set are taken over, as a controller that owns the desired state
    /// should (controller-runtime's advice; a conflict would only stall the reconcile).
    pub fn new(field_manager: impl Into<String>) -> Self {
        Self {
            field_manager: field_manager.into(),
            force: true,
        }
    }

    /// Applies without force: a field another manager owns is a conflict error instead
    /// of taken over (for tools and for managers that share fields deliberately).
    #[must_use]
    pub fn without_force(self) -> Self {
        Self {
            force: false,
            ..self
        }
    }

    /// Applies `object` (named by its `metadata.name`, in `api`'s namespace) and returns
    /// the object as the apiserver then holds it. `apiVersion` and `kind` are filled from
    /// `K` when `object` lacks them; `metadata.managedFields`, which an apply request must
    /// not carry (an object read from the cluster has them), are left out. An object read
    /// from the cluster also carries its `resourceVersion`, which makes the apply
    /// conditional (a conflict if the object changed since) and claims every field it
    /// holds: apply a new object with only the fields this manager owns.
    ///
    /// # Errors
    /// [`ApplyError`]: no name, or the apiserver's refusal (a conflict when not forced).
    pub async fn apply<K>(&self, api: &Api<K>, object: &impl Serialize) -> Result<K, ApplyError>
    where
        K: Resource + Clone + DeserializeOwned + Debug,
        K::DynamicType: Default,
    {
        let (name, body) = apply_body::<K>(object)?;
        Ok(api
            .patch(&name, &self.params(), &Patch::Apply(body))
            .await?)
    }

    /// Applies `status` as the status of the object `name` through the status subresource
    /// (what a reconciler reports, in one line): only the status fields it holds are
    /// this manager's.
    ///
    /// # Errors
    /// As [`Applier::apply`].
    pub async fn apply_status<K>(
        &self,
        api: &Api<K>,
        name: &str,
        status: &impl Serialize,
    ) -> Result<K, ApplyError>
    where
        K: Resource + Clone + DeserializeOwned + Debug,
        K::DynamicType: Default,
    {
        let object = serde_json::json!({"metadata": {"name": name}, "status": status});
        let (name, body) = apply_body::<K>(&object)?;
        Ok(api
            .patch_status(&name, &self.params(), &Patch::Apply(body))
            .await?)
    }

    fn params(&self) -> PatchParams {
        let params = PatchParams::apply(&self.field_manager);
        if self.force { params.force() } else { params }
    }
}

/// The object's name and the body to send: typed, without managed fields.
fn apply_body<K>(object: &impl Serialize) -> Result<(String, Value), ApplyError>
where
    K: Resource,
    K::DynamicType: Default,
{
    let mut body = serde_json::to_value(object)?;
    fill_type_meta::<K>(&mut body);
    let metadata = body.get_mut("metadata").and_then(Value::as_object_mut);
    let name = metadata.and_then(|metadata| {
        metadata.remove("managedFields");
        metadata.get("name")?.as_str().map(str::to_owned)
    });
    match name {
        Some(name) if !name.is_empty() => Ok((name, body)),
        _ => Err(ApplyError::Unnamed),
    }
}

/// Sets `apiVersion` and `kind` from `K` where `object` lacks them or has them empty (a
/// kind's struct with `String` fields left at their default): apply and create need them.
pub(crate) fn fill_type_meta<K>(object: &mut Value)
where
    K: Resource,
    K::DynamicType: Default,
{
    let Some(fields) = object.as_object_mut() else {
        return;
    };
    let dynamic_type = K::DynamicType::default();
    let type_meta = [
        ("apiVersion", K::api_version(&dynamic_type)),
        ("kind", K::kind(&dynamic_type)),
    ];
    for (field, value) in type_meta {
        let missing = fields
            .get(field)
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if missing {
            fields.insert(field.to_owned(), Value::String(value.into_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_body_has_type_meta_and_no_managed_fields() {
        let object = json!({
            "metadata": {"name": "settings", "managedFields": [{"manager": "x"}]},
            "kind": "",
            "data": {"a": "1"},
        });
        let (name, body) = apply_body::<ConfigMap>(&object).unwrap();
        assert_eq!(name, "settings");
        assert_eq!(
            body,
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings"},
                "data": {"a": "1"},
            })
        );
    }

    #[test]
    fn an_object_without_a_name_is_refused() {
        for object in [json!({"data": {}}), json!({"metadata": {"name": ""}})] {
            assert!(matches!(
                apply_body::<ConfigMap>(&object),
                Err(ApplyError::Unnamed)
            ));
        }
    }

    #[test]
    fn a_typed_object_sends_only_its_set_fields() {
        let mut object = ConfigMap::default();
        object.metadata.name = Some("settings".into());
        let (_, body) = apply_body::<ConfigMap>(&object).unwrap();
        assert_eq!(
            body,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}})
        );
    }
}

//! Owner references in one call: Go's `controllerutil.SetControllerReference` and
//! `SetOwnerReference`, with the same refusals.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;

/// Why an owner reference was refused; the object is left as it was.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OwnerReferenceError {
    /// The object has a controller already, another one (Go's `AlreadyOwnedError`).
    #[error("{object} is already controlled by {controller}; {owner} cannot become its controller")]
    AlreadyOwned {
        /// The object, as `Kind namespace/name`.
        object: String,
        /// Its present controller, as `Kind name`.
        controller: String,
        /// The refused owner.
        owner: String,
    },
    /// A namespaced owner in another namespace than the object: the garbage collector
    /// would treat the reference as dangling and delete the object.
    #[error(
        "cross-namespace owner references are disallowed: owner {owner} is not in the namespace of {object}"
    )]
    CrossNamespace {
        /// The object.
        object: String,
        /// The owner.
        owner: String,
    },
    /// A namespaced owner of an object without a namespace (cluster-scoped, or not given
    /// its namespace yet).
    #[error(
        "{object} has no namespace (it is cluster-scoped, or its namespace is not set yet), so namespaced {owner} cannot own it"
    )]
    NamespacedOwnerOfClusterScoped {
        /// The object.
        object: String,
        /// The owner.
        owner: String,
    },
    /// The owner has no uid or name: it was not read from or created in the cluster.
    #[error(
        "owner {owner} has no uid (create it, or read it from the cluster, before referring to it)"
    )]
    OwnerNotCreated {
        /// The owner.
        owner: String,
    },
}

/// Makes `owner` the controller of `object` (Go's `controllerutil.SetControllerReference`):
/// an owner reference with `controller` and `blockOwnerDeletion` set, replacing a
/// reference to the same owner (same group, kind and name). With `blockOwnerDeletion`, a
/// foreground deletion of the owner waits for the object; where the apiserver enforces
/// owner-reference permissions, setting it needs `update` on the owner's `finalizers`
/// subresource (`#[kubebuilder(rbac(..., resources = ["<plural>/finalizers"]))]`).
///
/// The owner's `apiVersion` and `kind` are its type's ([`Resource::api_version`]).
///
/// # Errors
/// The object already has another controller; the owner is namespaced and the object is
/// in another namespace or has none; the owner has no uid. The object is unchanged then.
pub fn set_controller_reference<O, K>(owner: &O, object: &mut K) -> Result<(), OwnerReferenceError>
where
    O: Resource,
    O::DynamicType: Default,
    K: Resource,
    K::DynamicType: Default,
{
    let reference = OwnerReference {
        controller: Some(true),
        block_owner_deletion: Some(true),
        ..reference_to(owner, object)?
    };
    if let Some(controller) = controller_of(object).filter(|c| !same_owner(c, &reference)) {
        return Err(OwnerReferenceError::AlreadyOwned {
            object: describe(object),
            controller: format!("{} {}", controller.kind, controller.name),
            owner: describe(owner),
        });
    }
    upsert(object, reference);
    Ok(())
}

/// Adds `owner` to the owners of `object`, not as its controller (Go's
/// `controllerutil.SetOwnerReference`): the garbage collector deletes the object once all
/// its owners are gone. A reference to the same owner is replaced (as Go's, which also
/// drops its `controller` flag).
///
/// # Errors
/// As [`set_controller_reference`], except that another controller does not matter.
pub fn set_owner_reference<O, K>(owner: &O, object: &mut K) -> Result<(), OwnerReferenceError>
where
    O: Resource,
    O::DynamicType: Default,
    K: Resource,
    K::DynamicType: Default,
{
    let reference = reference_to(owner, object)?;
    upsert(object, reference);
    Ok(())
}

/// The reference to the controller of `object`, if it has one (Go's
/// `metav1.GetControllerOf`).
pub fn controller_of(object: &impl Resource) -> Option<&OwnerReference> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|reference| reference.controller == Some(true))
}

/// Whether `object` has a controller (Go's `controllerutil.HasControllerReference`).
pub fn has_controller_reference(object: &impl Resource) -> bool {
    controller_of(object).is_some()
}

/// A reference to `owner` (no flags set), once `owner` may own `object`: the checks of
/// Go's `validateOwner`.
fn reference_to<O, K>(owner: &O, object: &K) -> Result<OwnerReference, OwnerReferenceError>
where
    O: Resource,
    O::DynamicType: Default,
    K: Resource,
    K::DynamicType: Default,
{
    let meta = owner.meta();
    let (Some(name), Some(uid)) = (&meta.name, &meta.uid) else {
        return Err(OwnerReferenceError::OwnerNotCreated {
            owner: describe(owner),
        });
    };
    if let Some(owner_namespace) = non_empty(&meta.namespace) {
        match non_empty(&object.meta().namespace) {
            None => {
                return Err(OwnerReferenceError::NamespacedOwnerOfClusterScoped {
                    object: describe(object),
                    owner: describe(owner),
                });
            }
            Some(namespace) if namespace != owner_namespace => {
                return Err(OwnerReferenceError::CrossNamespace {
                    object: describe(object),
                    owner: describe(owner),
                });
            }
            Some(_) => {}
        }
    }
    let dynamic_type = O::DynamicType::default();
    Ok(OwnerReference {
        api_version: O::api_version(&dynamic_type).into_owned(),
        kind: O::kind(&dynamic_type).into_owned(),
        name: name.clone(),
        uid: uid.clone(),
        ..OwnerReference::default()
    })
}

/// Replaces the reference to the same owner as `reference`, or adds it.
fn upsert(object: &mut impl Resource, reference: OwnerReference) {
    let references = object
        .meta_mut()
        .owner_references
        .get_or_insert_with(Vec::new);
    match references
        .iter_mut()
        .find(|existing| same_owner(existing, &reference))
    {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
}

/// Whether two references name the same object: group, kind and name, as Go's
/// `referSameObject` (the version does not matter; the uid is not compared, so a
/// reference to a re-created owner is replaced rather than added).
fn same_owner(a: &OwnerReference, b: &OwnerReference) -> bool {
    group(&a.api_version) == group(&b.api_version) && a.kind == b.kind && a.name == b.name
}

/// The group of an `apiVersion`: empty for the core group's `v1`.
fn group(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

fn non_empty(namespace: &Option<String>) -> Option<&str> {
    namespace
        .as_deref()
        .filter(|namespace| !namespace.is_empty())
}

/// `Kind namespace/name` (or `Kind name`), for error messages.
fn describe<R>(object: &R) -> String
where
    R: Resource,
    R::DynamicType: Default,
{
    let kind = R::kind(&R::DynamicType::default()).into_owned();
    let name = object.meta().name.as_deref().unwrap_or("<unnamed>");
    match non_empty(&object.meta().namespace) {
        Some(namespace) => format!("{kind} {namespace}/{name}"),
        None => format!("{kind} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::ObjectMeta;

    use super::*;

    fn deployment(namespace: &str, name: &str, uid: Option<&str>) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                namespace: Some(namespace.into()),
                name: Some(name.into()),
                uid: uid.map(Into::into),
                ..ObjectMeta::default()
            },
            ..Deployment::default()
        }
    }

    fn config_map(namespace: Option<&str>) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: namespace.map(Into::into),
                name: Some("settings".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_controller_reference_blocks_deletion_and_replaces_the_same_owner() {
        let mut object = config_map(Some("ns"));
        let owner = deployment("ns", "web", Some("uid-1"));
        set_owner_reference(&owner, &mut object).unwrap();
        set_controller_reference(&owner, &mut object).unwrap();
        let references = object.metadata.owner_references.as_deref().unwrap();
        assert_eq!(
            references,
            [OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: "web".into(),
                uid: "uid-1".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]
        );
        assert!(has_controller_reference(&object));
        assert_eq!(controller_of(&object), references.first());

        let other = deployment("ns", "api", Some("uid-2"));
        set_owner_reference(&other, &mut object).unwrap();
        assert_eq!(object.metadata.owner_references.as_ref().unwrap().len(), 2);
        assert_eq!(controller_of(&object).unwrap().name, "web");
    }

    #[test]
    fn a_second_controller_is_refused_and_nothing_changes() {
        let mut object = config_map(Some("ns"));
        set_controller_reference(&deployment("ns", "web", Some("1")), &mut object).unwrap();
        let before = object.clone();
        let error =
            set_controller_reference(&deployment("ns", "api", Some("2")), &mut object).unwrap_err();
        assert_eq!(
            error.to_string(),
            "ConfigMap ns/settings is already controlled by Deployment web; \
             Deployment ns/api cannot become its controller"
        );
        assert_eq!(object, before);
    }

    #[test]
    fn namespaced_owners_stay_in_the_object_namespace_and_owners_need_a_uid() {
        let owner = deployment("ns", "web", Some("1"));
        let mut elsewhere = config_map(Some("other"));
        assert!(matches!(
            set_owner_reference(&owner, &mut elsewhere),
            Err(OwnerReferenceError::CrossNamespace { .. })
        ));
        let mut cluster_scoped = Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let error = set_controller_reference(&owner, &mut cluster_scoped).unwrap_err();
        assert!(matches!(
            error,
            OwnerReferenceError::NamespacedOwnerOfClusterScoped { .. }
        ));
        assert!(error.to_string().contains("Namespace team"));
        assert_eq!(cluster_scoped.metadata.owner_references, None);

        let mut object = config_map(Some("ns"));
        let unsaved = deployment("ns", "web", None);
        assert!(matches!(
            set_controller_reference(&unsaved, &mut object),
            Err(OwnerReferenceError::OwnerNotCreated { .. })
        ));
    }

    #[test]
    fn a_cluster_scoped_owner_may_own_anything() {
        let owner = Namespace {
            metadata: ObjectMeta {
                name: Some("team".into()),
                uid: Some("u".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let mut object = config_map(Some("ns"));
        set_controller_reference(&owner, &mut object).unwrap();
        assert_eq!(controller_of(&object).unwrap().api_version, "v1");
    }
}

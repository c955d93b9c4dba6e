//! Go's `controllerutil.CreateOrUpdate` and `CreateOrPatch`: read an object, let a
//! closure set what the reconciler wants, and write only when that changed something.
//! Unlike Go's, a write conflict (the object changed between the read and the write) is
//! retried here: read again and mutate again, as `retry.RetryOnConflict` with client-go's
//! `retry.DefaultRetry` around Go's call would.

use std::error::Error as StdError;
use std::fmt::{self, Debug};
use std::time::Duration;

use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt as _};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::apply::fill_type_meta;

/// How many times a write is tried (client-go's `retry.DefaultRetry`: 5 steps).
const WRITE_ATTEMPTS: u32 = 5;
/// The wait before trying again (`retry.DefaultRetry`'s 10 ms, without its 10 % jitter).
const RETRY_INTERVAL: Duration = Duration::from_millis(10);

/// An error a mutation closure returned.
pub type MutateFailure = Box<dyn StdError + Send + Sync>;

/// What [`create_or_update`] or [`create_or_patch`] did (Go's
/// `controllerutil.OperationResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationResult {
    /// Nothing was written: the mutation changed nothing (Go's `OperationResultNone`).
    Unchanged,
    /// The object did not exist and was created.
    Created,
    /// The object was updated (for [`create_or_patch`]: all but its status).
    Updated,
    /// [`create_or_patch`] patched the object and its status.
    UpdatedStatus,
    /// [`create_or_patch`] patched only the status.
    UpdatedStatusOnly,
}

impl fmt::Display for OperationResult {
    /// Go's spelling, for logs read next to Go operators'.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OperationResult::Unchanged => "unchanged",
            OperationResult::Created => "created",
            OperationResult::Updated => "updated",
            OperationResult::UpdatedStatus => "updatedStatus",
            OperationResult::UpdatedStatusOnly => "updatedStatusOnly",
        })
    }
}

/// Why [`create_or_update`] or [`create_or_patch`] failed.
#[derive(Debug, thiserror::Error)]
pub enum CreateOrUpdateError {
    /// The mutation closure failed; nothing was written.
    #[error("the mutation failed: {0}")]
    Mutate(#[source] MutateFailure),
    /// The mutation changed the object's name or namespace (Go: "MutateFn cannot mutate
    /// object name and/or object namespace"); nothing was written.
    #[error("the mutation changed the object's name or namespace from {before} to {after}")]
    KeyChanged {
        /// `namespace/name` before the mutation.
        before: String,
        /// `namespace/name` after it.
        after: String,
    },
    /// The object did not serialize to JSON.
    #[error("cannot encode the object: {0}")]
    Encode(#[from] serde_json::Error),
    /// The apiserver refused a read or write; a conflict still there after the last
    /// attempt ends here too.
    #[error("{0}")]
    Kube(#[from] kube::Error),
}

/// Creates the object `name` in `api`'s namespace, or updates it, so that `mutate` holds
/// (Go's `controllerutil.CreateOrUpdate`). `mutate` gets the object as read (or, when
/// there is none, a default object with only name and namespace set) and sets the fields
/// the reconciler wants. Nothing is written when it changed nothing
/// ([`OperationResult::Unchanged`]); otherwise the object is created or replaced (an
/// update conditional on the resourceVersion read).
///
/// A write conflict — the object changed, or appeared, after it was read — is retried up
/// to 5 attempts 10 ms apart, reading again and calling `mutate` again, so `mutate` must
/// set fields rather than increment them. `apiVersion` and `kind` are filled from `K`.
///
/// ```no_run
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube::Api;
/// use kubebuilder_runtime::controllerutil::create_or_update;
///
/// # async fn reconcile(api: Api<ConfigMap>) -> Result<(), Box<dyn std::error::Error>> {
/// let (config, result) = create_or_update(&api, "settings", |config: &mut ConfigMap| {
///     config.data.get_or_insert_default().insert("size".into(), "3".into());
///     Ok::<_, std::convert::Infallible>(())
/// })
/// .await?;
/// tracing::info!(%result, "settings reconciled");
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`CreateOrUpdateError`]: the mutation's error, a changed name or namespace (nothing
/// written), or the apiserver's.
pub async fn create_or_update<K, E>(
    api: &Api<K>,
    name: &str,
    mut mutate: impl FnMut(&mut K) -> Result<(), E>,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Default + Serialize + DeserializeOwned + Debug,
    K::DynamicType: Default,
    E: Into<MutateFailure>,
{
    let mut mutate = |object: &mut K| mutate(object).map_err(Into::into);
    retry_write_conflicts(async || mutate_once(api, name, &mut mutate, Write::Update).await).await
}

/// As [`create_or_update`], but an existing object is patched with only what `mutate`
/// changed (a JSON merge patch conditional on the resourceVersion read), and a changed
/// `status` is patched through the status subresource (Go's `controllerutil.CreateOrPatch`).
/// The result tells which writes happened: [`OperationResult::Updated`],
/// [`OperationResult::UpdatedStatus`] (both), [`OperationResult::UpdatedStatusOnly`].
/// On creation the status is not written (the apiserver ignores it where status is a
/// subresource; patch it on the next reconcile). After a retried conflict the result
/// tells what the last attempt wrote.
///
/// # Errors
/// As [`create_or_update`].
pub async fn create_or_patch<K, E>(
    api: &Api<K>,
    name: &str,
    mut mutate: impl FnMut(&mut K) -> Result<(), E>,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Default + Serialize + DeserializeOwned + Debug,
    K::DynamicType: Default,
    E: Into<MutateFailure>,
{
    let mut mutate = |object: &mut K| mutate(object).map_err(Into::into);
    retry_write_conflicts(async || mutate_once(api, name, &mut mutate, Write::Patch).await).await
}

type Mutation<'a, K> = dyn FnMut(&mut K) -> Result<(), MutateFailure> + 'a;

/// Runs `attempt` again after a write conflict, up to [`WRITE_ATTEMPTS`] times in all.
async fn retry_write_conflicts<T>(
    mut attempt: impl AsyncFnMut() -> Result<T, CreateOrUpdateError>,
) -> Result<T, CreateOrUpdateError> {
    let mut attempts = 1;
    loop {
        match attempt().await {
            Err(CreateOrUpdateError::Kube(error))
                if is_write_conflict(&error) && attempts < WRITE_ATTEMPTS =>
            {
                tracing::debug!(%error, attempts, "write conflict; reading the object again");
                attempts += 1;
                tokio::time::sleep(RETRY_INTERVAL).await;
            }
            result => return result,
        }
    }
}

/// A conflict on update, or a create that found the object created meanwhile.
fn is_write_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_conflict() || status.is_already_exists())
}

/// How an existing object's changes are written.
#[derive(Clone, Copy)]
enum Write {
    /// The whole object ([`create_or_update`]).
    Update,
    /// A patch of what changed ([`create_or_patch`]).
    Patch,
}

/// Reads `name` and creates it (as `mutate` makes it) when missing; otherwise runs
/// `mutate` on a copy and writes what changed from the current version as `write` says.
async fn mutate_once<K>(
    api: &Api<K>,
    name: &str,
    mutate: &mut Mutation<'_, K>,
    write: Write,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Default + Serialize + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    let Some(current) = api.get_opt(name).await? else {
        return create(api, name, mutate).await;
    };
    let mut object = current.clone();
    mutate_in_place(&mut object, mutate)?;
    match write {
        Write::Update => update(api, name, current, object).await,
        Write::Patch => patch(api, name, current, object).await,
    }
}

/// Replaces `current` with `object` unless they are equal.
async fn update<K>(
    api: &Api<K>,
    name: &str,
    current: K,
    object: K,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    if serde_json::to_value(&object)? == serde_json::to_value(&current)? {
        return Ok((current, OperationResult::Unchanged));
    }
    let updated = api.replace(name, &PostParams::default(), &object).await?;
    Ok((updated, OperationResult::Updated))
}

/// Patches what differs between `current` and `object`: the status through its
/// subresource.
async fn patch<K>(
    api: &Api<K>,
    name: &str,
    current: K,
    object: K,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Serialize + DeserializeOwned + Debug,
{
    let mut before = serde_json::to_value(&current)?;
    let mut after = serde_json::to_value(&object)?;
    let status_before = split_status(&mut before);
    let status_after = split_status(&mut after);

    let params = PatchParams::default();
    let mut written = current;
    let main_patch = merge_patch(&before, &after);
    let updated = main_patch.is_some();
    if let Some(patch) = main_patch {
        let patch = conditional(patch, &written);
        written = api.patch(name, &params, &Patch::Merge(patch)).await?;
    }
    let Some(status_patch) = merge_patch(&status_before, &status_after) else {
        let result = if updated {
            OperationResult::Updated
        } else {
            OperationResult::Unchanged
        };
        return Ok((written, result));
    };
    let status_patch = conditional(status_patch, &written);
    written = api
        .patch_status(name, &params, &Patch::Merge(status_patch))
        .await?;
    let result = if updated {
        OperationResult::UpdatedStatus
    } else {
        OperationResult::UpdatedStatusOnly
    };
    Ok((written, result))
}

/// Creates the object `mutate` makes of a default one named `name` in `api`'s namespace.
async fn create<K>(
    api: &Api<K>,
    name: &str,
    mutate: &mut Mutation<'_, K>,
) -> Result<(K, OperationResult), CreateOrUpdateError>
where
    K: Resource + Clone + Default + Serialize + DeserializeOwned + Debug,
    K::DynamicType: Default,
{
    let mut object = K::default();
    object.meta_mut().name = Some(name.to_owned());
    object.meta_mut().namespace = api.namespace().map(str::to_owned);
    mutate_in_place(&mut object, mutate)?;
    let mut body = serde_json::to_value(&object)?;
    fill_type_meta::<K>(&mut body);
    // From text, as every decode of `K` (see the cache's module docs).
    let object: K = serde_json::from_str(&body.to_string())?;
    let created = api.create(&PostParams::default(), &object).await?;
    Ok((created, OperationResult::Created))
}

/// Runs `mutate` on `object` and refuses a changed name or namespace.
fn mutate_in_place<K: Resource>(
    object: &mut K,
    mutate: &mut Mutation<'_, K>,
) -> Result<(), CreateOrUpdateError> {
    let before = key(object);
    mutate(object).map_err(CreateOrUpdateError::Mutate)?;
    let after = key(object);
    if before != after {
        return Err(CreateOrUpdateError::KeyChanged { before, after });
    }
    Ok(())
}

fn key(object: &impl Resource) -> String {
    format!(
        "{}/{}",
        object.namespace().unwrap_or_default(),
        object.name_any()
    )
}

/// Moves `status` out of `object` into an object of its own (`{}` without one), so
/// that the two are compared, and patched, apart.
fn split_status(object: &mut Value) -> Value {
    let mut status_only = Map::new();
    if let Some(status) = object
        .as_object_mut()
        .and_then(|fields| fields.remove("status"))
    {
        status_only.insert("status".to_owned(), status);
    }
    Value::Object(status_only)
}

/// `patch` made conditional on the resourceVersion of `read`: the apiserver refuses it
/// with a conflict if the object changed since (Go's `MergeFromWithOptimisticLock`),
/// since a merge patch replaces whole lists, which another writer may have changed.
fn conditional(mut patch: Value, read: &impl Resource) -> Value {
    if let (Some(fields), Some(version)) = (patch.as_object_mut(), read.resource_version()) {
        let metadata = fields
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert("resourceVersion".to_owned(), Value::String(version));
        }
    }
    patch
}

/// The JSON merge patch (RFC 7386) that turns `before` into `after`, or `None` when they
/// are equal: changed and new fields as they are in `after`, removed ones as `null`,
/// lists whole.
fn merge_patch(before: &Value, after: &Value) -> Option<Value> {
    let (Value::Object(before), Value::Object(after)) = (before, after) else {
        return (before != after).then(|| after.clone());
    };
    let mut patch = Map::new();
    for (field, value) in after {
        let change = match before.get(field) {
            Some(old) => merge_patch(old, value),
            None => Some(value.clone()),
        };
        if let Some(change) = change {
            patch.insert(field.clone(), change);
        }
    }
    for field in before.keys().filter(|field| !after.contains_key(*field)) {
        patch.insert(field.clone(), Value::Null);
    }
    (!patch.is_empty()).then_some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_merge_patch_holds_only_the_changes() {
        let before = json!({"spec": {"size": 1, "color": "red", "tags": ["a"]}, "kept": 1});
        let after = json!({"spec": {"size": 2, "tags": ["a", "b"], "new": {"x": 1}}, "kept": 1});
        assert_eq!(
            merge_patch(&before, &after),
            Some(json!({"spec": {"size": 2, "color": null, "tags": ["a", "b"], "new": {"x": 1}}}))
        );
        assert_eq!(merge_patch(&before, &before), None);
    }

    #[test]
    fn the_status_is_compared_apart_and_removed_fields_are_nulled() {
        let mut before = json!({"spec": {"a": 1}, "status": {"ready": 1, "old": true}});
        let mut after = json!({"spec": {"a": 1}, "status": {"ready": 2}});
        let (status_before, status_after) = (split_status(&mut before), split_status(&mut after));
        assert_eq!(merge_patch(&before, &after), None);
        assert_eq!(
            merge_patch(&status_before, &status_after),
            Some(json!({"status": {"ready": 2, "old": null}}))
        );
        let mut unset = json!({"spec": {}});
        assert_eq!(split_status(&mut unset), json!({}));
    }

    #[test]
    fn a_patch_is_made_conditional_on_the_version_read() {
        let mut read = ConfigMap::default();
        read.metadata.resource_version = Some("42".into());
        assert_eq!(
            conditional(json!({"data": {"a": "1"}}), &read),
            json!({"data": {"a": "1"}, "metadata": {"resourceVersion": "42"}})
        );
        assert_eq!(
            conditional(json!({"metadata": {"labels": {"a": "b"}}}), &read),
            json!({"metadata": {"labels": {"a": "b"}, "resourceVersion": "42"}})
        );
    }

    #[test]
    fn a_mutation_may_not_rename_or_move_the_object() {
        let mut object = ConfigMap::default();
        object.metadata.name = Some("a".into());
        object.metadata.namespace = Some("ns".into());
        let mut rename = |object: &mut ConfigMap| {
            object.metadata.name = Some("b".into());
            Ok(())
        };
        let error = mutate_in_place(&mut object, &mut rename).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the mutation changed the object's name or namespace from ns/a to ns/b"
        );
        let mut fail = |_: &mut ConfigMap| Err("no".into());
        assert!(matches!(
            mutate_in_place(&mut object, &mut fail),
            Err(CreateOrUpdateError::Mutate(_))
        ));
    }

    fn api_error(reason: &str, code: u16) -> CreateOrUpdateError {
        let status = kube::core::Status::failure("refused", reason).with_code(code);
        CreateOrUpdateError::Kube(kube::Error::Api(Box::new(status)))
    }

    /// Runs `retry_write_conflicts` over attempts failing with `error` until `succeed_on`,
    /// and returns how many attempts ran and the outcome.
    async fn attempts_until(
        succeed_on: u32,
        error: impl Fn() -> CreateOrUpdateError,
    ) -> (u32, Result<(), CreateOrUpdateError>) {
        let mut attempts = 0;
        let result = retry_write_conflicts(async || {
            attempts += 1;
            if attempts == succeed_on {
                Ok(())
            } else {
                Err(error())
            }
        })
        .await;
        (attempts, result)
    }

    #[tokio::test(start_paused = true)]
    async fn write_conflicts_are_retried_five_attempts_in_all() {
        let (attempts, result) = attempts_until(3, || api_error("Conflict", 409)).await;
        assert_eq!((attempts, result.is_ok()), (3, true));
        let (attempts, result) = attempts_until(3, || api_error("AlreadyExists", 409)).await;
        assert_eq!((attempts, result.is_ok()), (3, true));

        let (attempts, result) = attempts_until(0, || api_error("Conflict", 409)).await;
        assert_eq!(attempts, WRITE_ATTEMPTS);
        assert!(matches!(result, Err(CreateOrUpdateError::Kube(_))));
    }

    #[tokio::test(start_paused = true)]
    async fn other_errors_are_not_retried() {
        let (attempts, result) = attempts_until(0, || api_error("Forbidden", 403)).await;
        assert_eq!(attempts, 1);
        assert!(result.is_err());
    }

    #[test]
    fn results_read_as_go_spells_them() {
        assert_eq!(OperationResult::Unchanged.to_string(), "unchanged");
        assert_eq!(
            OperationResult::UpdatedStatusOnly.to_string(),
            "updatedStatusOnly"
        );
    }
}

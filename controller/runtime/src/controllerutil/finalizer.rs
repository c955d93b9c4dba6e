//! Finalizers: the in-memory list edits of Go's `controllerutil.AddFinalizer` and friends,
//! and [`finalize`], the reconcile flow that runs a cleanup before an object goes.

use std::error::Error as StdError;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use kube::runtime::controller::Action;
use kube::runtime::finalizer::{Error as FinalizerError, Event as Finalizing, finalizer};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Whether `object` lists `finalizer` (Go's `controllerutil.ContainsFinalizer`).
pub fn contains_finalizer(object: &impl Resource, finalizer: &str) -> bool {
    object
        .meta()
        .finalizers
        .iter()
        .flatten()
        .any(|listed| listed == finalizer)
}

/// Adds `finalizer` to `object` unless it is listed already; returns whether the list
/// changed (Go's `controllerutil.AddFinalizer`). Only the object in memory changes: write
/// it, or use [`finalize`], which adds the finalizer in the cluster and checks its name.
pub fn add_finalizer(object: &mut impl Resource, finalizer: &str) -> bool {
    if contains_finalizer(object, finalizer) {
        return false;
    }
    object
        .meta_mut()
        .finalizers
        .get_or_insert_with(Vec::new)
        .push(finalizer.to_owned());
    true
}

/// Removes every occurrence of `finalizer` from `object`; returns whether the list changed
/// (Go's `controllerutil.RemoveFinalizer`). Only the object in memory changes.
pub fn remove_finalizer(object: &mut impl Resource, finalizer: &str) -> bool {
    let Some(finalizers) = object.meta_mut().finalizers.as_mut() else {
        return false;
    };
    let before = finalizers.len();
    finalizers.retain(|listed| listed != finalizer);
    finalizers.len() != before
}

/// A finalizer name that is not a domain-qualified name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "finalizer {name:?} is not a domain-qualified name such as \"example.com/cleanup\": {problem}"
)]
pub struct FinalizerNameError {
    name: String,
    problem: &'static str,
}

/// Checks that `name` is a qualified name with a domain prefix, `<DNS subdomain>/<name>`,
/// as finalizers of controllers should be. The apiserver accepts a name without prefix
/// with only a warning, but such names collide between controllers, which then remove
/// each other's finalizer: this crate refuses them.
///
/// # Errors
/// What is wrong with the name: no prefix, a prefix that is not a DNS subdomain, or a
/// name part that is empty, too long, or has characters a qualified name cannot have.
pub fn validate_finalizer_name(name: &str) -> Result<(), FinalizerNameError> {
    let refuse = |problem| {
        Err(FinalizerNameError {
            name: name.to_owned(),
            problem,
        })
    };
    let Some((prefix, local)) = name.split_once('/') else {
        return refuse("it has no domain prefix");
    };
    if local.contains('/') {
        return refuse("it has more than one '/'");
    }
    if crate::names::check_dns_subdomain(prefix).is_err() {
        return refuse(
            "its prefix is not a DNS subdomain (at most 253 lowercase letters, digits, '-' \
             and '.', each dot-separated label of at most 63 beginning and ending with a letter or \
             digit)",
        );
    }
    if crate::names::check_name_part(local).is_err() {
        return refuse(
            "the part after '/' must be 1 to 63 letters, digits, '-', '_' and '.', \
             beginning and ending with a letter or digit",
        );
    }
    Ok(())
}

/// Why [`finalize`] failed.
#[derive(Debug, thiserror::Error)]
pub enum FinalizeError {
    /// The finalizer name was refused before anything was written.
    #[error(transparent)]
    InvalidName(#[from] FinalizerNameError),
    /// The reconcile (`Apply` or `Cleanup`) failed; the finalizer stays.
    #[error("{0}")]
    Reconcile(#[source] Box<dyn StdError + Send + Sync>),
    /// Adding or removing the finalizer failed.
    #[error("cannot {0} the finalizer: {1}")]
    Write(&'static str, #[source] kube::Error),
    /// The object has no name, so no finalizer can be written on it.
    #[error("the object has no name")]
    Unnamed,
}

impl FinalizeError {
    /// kube-runtime's finalizer error for `finalizer_name`, as this crate reports it.
    fn of(error: FinalizerError<Boxed>, finalizer_name: &str) -> Self {
        match error {
            FinalizerError::ApplyFailed(Boxed(error))
            | FinalizerError::CleanupFailed(Boxed(error)) => Self::Reconcile(error),
            FinalizerError::AddFinalizer(error) => Self::Write("add", error),
            FinalizerError::RemoveFinalizer(error) => Self::Write("remove", error),
            FinalizerError::UnnamedObject => Self::Unnamed,
            FinalizerError::InvalidFinalizer => Self::InvalidName(FinalizerNameError {
                name: finalizer_name.to_owned(),
                problem: "kube-runtime refuses it",
            }),
        }
    }
}

/// A reconcile's error of any type, as kube-runtime's finalizer needs an error type.
#[derive(Debug)]
struct Boxed(Box<dyn StdError + Send + Sync>);

impl std::fmt::Display for Boxed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, formatter)
    }
}

impl StdError for Boxed {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source()
    }
}

/// Reconciles `object` so that its deletion is reconciled too: the flow Go operators write
/// by hand around `controllerutil.AddFinalizer`, `ContainsFinalizer` and `RemoveFinalizer`
/// (checking `DeletionTimestamp`), done by kube-runtime's [`finalizer`] once `finalizer`
/// is known to be a domain-qualified name.
///
/// - An object without the finalizer that is not being deleted: the finalizer is added
///   (a patch that fails if the list changed meanwhile) and the reconciler is not called;
///   the write triggers the next reconcile.
/// - An object with the finalizer: `reconcile` gets [`Finalizing::Apply`].
/// - A deleted object with the finalizer: `reconcile` gets [`Finalizing::Cleanup`]; when
///   it succeeds the finalizer is removed and the apiserver completes the deletion. A
///   failed cleanup keeps the finalizer, and the object, for the next attempt.
///
/// Both branches must be idempotent. `reconcile` should use the object its event carries.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # use kube::Api;
/// # use kube::runtime::controller::Action;
/// use kubebuilder_runtime::controllerutil::{self, Finalizing};
///
/// # async fn reconcile(api: Api<ConfigMap>, object: Arc<ConfigMap>) -> Result<(), Box<dyn std::error::Error>> {
/// let action = controllerutil::finalize(&api, "example.com/cleanup", object, |event| async move {
///     match event {
///         Finalizing::Apply(object) => { /* make the world match `object` */ }
///         Finalizing::Cleanup(object) => { /* release what `object` holds outside */ }
///     }
///     Ok::<_, std::io::Error>(Action::await_change())
/// })
/// .await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`FinalizeError::InvalidName`] before anything is written; the reconcile's error (of
/// any type: `?` works inside `reconcile`); or the failed write of the finalizer.
pub async fn finalize<K, F, E>(
    api: &Api<K>,
    finalizer_name: &str,
    object: Arc<K>,
    reconcile: impl FnOnce(Finalizing<K>) -> F,
) -> Result<Action, FinalizeError>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    F: Future<Output = Result<Action, E>>,
    E: Into<Box<dyn StdError + Send + Sync>>,
{
    validate_finalizer_name(finalizer_name)?;
    let reconcile = async |event| reconcile(event).await.map_err(|error| Boxed(error.into()));
    finalizer(api, finalizer_name, object, reconcile)
        .await
        .map_err(|error| FinalizeError::of(error, finalizer_name))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    #[test]
    fn add_and_remove_report_whether_the_list_changed() {
        let mut object = ConfigMap::default();
        assert!(!contains_finalizer(&object, "example.com/a"));
        assert!(!remove_finalizer(&mut object, "example.com/a"));
        assert!(add_finalizer(&mut object, "example.com/a"));
        assert!(!add_finalizer(&mut object, "example.com/a"));
        assert!(contains_finalizer(&object, "example.com/a"));
        object
            .metadata
            .finalizers
            .as_mut()
            .unwrap()
            .extend(["example.com/b".to_owned(), "example.com/a".to_owned()]);
        assert!(remove_finalizer(&mut object, "example.com/a"));
        assert_eq!(
            object.metadata.finalizers.as_deref(),
            Some(&["example.com/b".to_owned()][..])
        );
    }

    #[test]
    fn qualified_names_with_a_domain_prefix_pass() {
        for name in [
            "example.com/cleanup",
            "batch.tutorial.kubebuilder.io/finalizer",
            "a/b",
            "x-1.io/Clean_up.v2",
        ] {
            assert_eq!(validate_finalizer_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn other_names_are_refused_with_the_reason() {
        let problem = |name: &str| validate_finalizer_name(name).unwrap_err().problem;
        assert_eq!(problem("cleanup"), "it has no domain prefix");
        assert!(problem("a/b/c").contains("more than one"));
        let long_label = format!("{}.com/x", "a".repeat(64));
        for bad_prefix in [
            "/cleanup",
            "Example.com/cleanup",
            "-a.com/x",
            "a..com/x",
            &long_label,
        ] {
            assert!(
                problem(bad_prefix).contains("DNS subdomain"),
                "{bad_prefix}"
            );
        }
        let long_prefix = format!("{}.com/x", "a".repeat(250));
        assert!(problem(&long_prefix).contains("DNS subdomain"));
        let long_name = format!("example.com/{}", "a".repeat(64));
        for bad_name in [
            "example.com/",
            "example.com/-x",
            "example.com/a b",
            &long_name,
        ] {
            assert!(problem(bad_name).contains("after '/'"), "{bad_name}");
        }
        let message = validate_finalizer_name("cleanup").unwrap_err().to_string();
        assert!(message.contains("\"cleanup\"") && message.contains("example.com/cleanup"));
    }
}

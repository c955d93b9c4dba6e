//! Which changes start a reconcile (controller-runtime's `predicate` package): a
//! [`Predicate`] sees each change to a watched object, as its metadata before and after,
//! and lets it through or drops it before it reaches the workqueue.
//!
//! A controller without a predicate reconciles on every change, its own status writes
//! included. [`GenerationChanged`] is the usual filter for a kind with a status
//! subresource: the apiserver moves `metadata.generation` only when the spec changes (or
//! the object starts being deleted), so the reconciler's own status writes no longer
//! start it again.
//!
//! ```
//! use kubebuilder_runtime::predicate::{GenerationChanged, LabelsChanged, Predicate as _};
//!
//! // Reconcile when the spec or the labels change, and on creations and deletions.
//! let filter = GenerationChanged.or(LabelsChanged);
//! # let _ = filter;
//! ```
//!
//! Custom predicates are closures over a [`Change`]:
//!
//! ```
//! use kubebuilder_runtime::predicate::Change;
//!
//! // Only objects labelled `tier: frontend`.
//! let frontend = |change: &Change<'_>| {
//!     change.object().labels.as_ref().and_then(|labels| labels.get("tier"))
//!         .is_some_and(|tier| tier == "frontend")
//! };
//! # let _ = frontend;
//! ```

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// One change to a watched object, as a predicate sees it (controller-runtime's
/// `CreateEvent`, `UpdateEvent` and `DeleteEvent`).
#[derive(Clone, Copy, Debug)]
pub enum Change<'a> {
    /// The object is new to the controller: created, or there when the controller starts.
    Create(&'a ObjectMeta),
    /// The object changed, or was listed again after the watch reconnected (then `old`
    /// and `new` may be equal).
    Update {
        /// The object as the cache held it before.
        old: &'a ObjectMeta,
        /// The object as it is now.
        new: &'a ObjectMeta,
    },
    /// The object is gone.
    Delete(&'a ObjectMeta),
}

impl<'a> Change<'a> {
    /// The object as it is now (as it was last, when deleted).
    pub fn object(&self) -> &'a ObjectMeta {
        match *self {
            Self::Create(object) | Self::Delete(object) | Self::Update { new: object, .. } => {
                object
            }
        }
    }
}

/// Decides whether a change starts a reconcile (controller-runtime's `predicate.Predicate`).
/// Closures `Fn(&Change) -> bool` are predicates.
pub trait Predicate: Send + Sync + 'static {
    /// Whether `change` is let through.
    fn admits(&self, change: &Change<'_>) -> bool;

    /// Lets through what both predicates let through (controller-runtime's `predicate.And`).
    fn and<P: Predicate>(self, other: P) -> And<Self, P>
    where
        Self: Sized,
    {
        And(self, other)
    }

    /// Lets through what either predicate lets through (controller-runtime's `predicate.Or`).
    fn or<P: Predicate>(self, other: P) -> Or<Self, P>
    where
        Self: Sized,
    {
        Or(self, other)
    }

    /// Lets through what this predicate drops (controller-runtime's `predicate.Not`).
    fn not(self) -> Not<Self>
    where
        Self: Sized,
    {
        Not(self)
    }
}

impl<F> Predicate for F
where
    F: Fn(&Change<'_>) -> bool + Send + Sync + 'static,
{
    fn admits(&self, change: &Change<'_>) -> bool {
        self(change)
    }
}

/// Both predicates, from [`Predicate::and`].
#[derive(Clone, Copy, Debug)]
pub struct And<A, B>(A, B);

impl<A: Predicate, B: Predicate> Predicate for And<A, B> {
    fn admits(&self, change: &Change<'_>) -> bool {
        self.0.admits(change) && self.1.admits(change)
    }
}

/// Either predicate, from [`Predicate::or`].
#[derive(Clone, Copy, Debug)]
pub struct Or<A, B>(A, B);

impl<A: Predicate, B: Predicate> Predicate for Or<A, B> {
    fn admits(&self, change: &Change<'_>) -> bool {
        self.0.admits(change) || self.1.admits(change)
    }
}

/// The opposite of a predicate, from [`Predicate::not`].
#[derive(Clone, Copy, Debug)]
pub struct Not<P>(P);

impl<P: Predicate> Predicate for Not<P> {
    fn admits(&self, change: &Change<'_>) -> bool {
        !self.0.admits(change)
    }
}

/// Lets an update through only when one part of the metadata differs; creations and
/// deletions always pass.
fn update_changes<T: PartialEq>(change: &Change<'_>, part: impl Fn(&ObjectMeta) -> T) -> bool {
    match change {
        Change::Update { old, new } => part(old) != part(new),
        Change::Create(_) | Change::Delete(_) => true,
    }
}

/// Updates that change `metadata.generation` (controller-runtime's
/// `GenerationChangedPredicate`): spec changes and the start of a deletion, not status or
/// metadata writes. Creations and deletions pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct GenerationChanged;

impl Predicate for GenerationChanged {
    fn admits(&self, change: &Change<'_>) -> bool {
        update_changes(change, |meta| meta.generation)
    }
}

/// Updates that change the labels (controller-runtime's `LabelChangedPredicate`).
/// Creations and deletions pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct LabelsChanged;

impl Predicate for LabelsChanged {
    fn admits(&self, change: &Change<'_>) -> bool {
        update_changes(change, |meta| meta.labels.clone().unwrap_or_default())
    }
}

/// Updates that change the annotations (controller-runtime's
/// `AnnotationChangedPredicate`). Creations and deletions pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotationsChanged;

impl Predicate for AnnotationsChanged {
    fn admits(&self, change: &Change<'_>) -> bool {
        update_changes(change, |meta| meta.annotations.clone().unwrap_or_default())
    }
}

/// Updates that change `metadata.resourceVersion` (controller-runtime's
/// `ResourceVersionChangedPredicate`): every write, but not an object listed again
/// unchanged after the watch reconnected. Creations and deletions pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceVersionChanged;

impl Predicate for ResourceVersionChanged {
    fn admits(&self, change: &Change<'_>) -> bool {
        update_changes(change, |meta| meta.resource_version.clone())
    }
}

/// The predicates a watch applies, all of which must let a change through.
#[derive(Clone, Default)]
pub(crate) struct Filters(Vec<Arc<dyn Predicate>>);

impl Filters {
    pub(crate) fn with(mut self, predicate: Arc<dyn Predicate>) -> Self {
        self.0.push(predicate);
        self
    }

    pub(crate) fn extend(mut self, other: &Self) -> Self {
        self.0.extend(other.0.iter().cloned());
        self
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn admit(&self, change: &Change<'_>) -> bool {
        self.0.iter().all(|predicate| predicate.admits(change))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(generation: i64, label: &str, version: &str) -> ObjectMeta {
        ObjectMeta {
            generation: Some(generation),
            labels: Some([("tier".to_owned(), label.to_owned())].into()),
            resource_version: Some(version.to_owned()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn each_predicate_passes_updates_of_its_part_and_every_creation_and_deletion() {
        let old = meta(1, "web", "10");
        let status_write = meta(1, "web", "11");
        let relabelled = meta(1, "db", "12");
        let respecced = meta(2, "web", "13");
        let update = |new| Change::Update { old: &old, new };
        let cases: [(&dyn Predicate, [bool; 4]); 3] = [
            (&GenerationChanged, [false, false, true, false]),
            (&LabelsChanged, [false, true, false, false]),
            (&ResourceVersionChanged, [true, true, true, false]),
        ];
        for (predicate, expected) in cases {
            let seen = [
                predicate.admits(&update(&status_write)),
                predicate.admits(&update(&relabelled)),
                predicate.admits(&update(&respecced)),
                predicate.admits(&update(&old)),
            ];
            assert_eq!(seen, expected);
            assert!(predicate.admits(&Change::Create(&old)));
            assert!(predicate.admits(&Change::Delete(&old)));
        }
    }

    #[test]
    fn predicates_combine_and_closures_are_predicates() {
        let old = meta(1, "web", "10");
        let relabelled = meta(1, "db", "11");
        let update = Change::Update {
            old: &old,
            new: &relabelled,
        };
        assert!(GenerationChanged.or(LabelsChanged).admits(&update));
        assert!(!GenerationChanged.and(LabelsChanged).admits(&update));
        assert!(GenerationChanged.not().admits(&update));
        let database = |change: &Change<'_>| {
            change.object().labels.as_ref().and_then(|l| l.get("tier")) == Some(&"db".to_owned())
        };
        assert!(database.admits(&update));
        assert!(!database.admits(&Change::Create(&old)));
        let filters = Filters::default()
            .with(Arc::new(LabelsChanged))
            .with(Arc::new(database));
        assert!(filters.admit(&update));
        assert!(!filters.admit(&Change::Create(&old)));
    }
}

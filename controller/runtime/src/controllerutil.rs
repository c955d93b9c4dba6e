//! The everyday helpers of a reconciler, named after controller-runtime's
//! `controllerutil` package so that Go users find them:
//!
//! | Go | here |
//! |---|---|
//! | `controllerutil.ContainsFinalizer`, `AddFinalizer`, `RemoveFinalizer` | [`contains_finalizer`], [`add_finalizer`], [`remove_finalizer`] |
//! | the `DeletionTimestamp` / finalizer flow around them | [`finalize`] |
//! | `controllerutil.SetControllerReference`, `SetOwnerReference` | [`set_controller_reference`], [`set_owner_reference`] |
//! | `metav1.GetControllerOf`, `controllerutil.HasControllerReference` | [`controller_of`], [`has_controller_reference`] |
//! | `controllerutil.CreateOrUpdate`, `CreateOrPatch`, `OperationResult` | [`create_or_update`], [`create_or_patch`], [`OperationResult`] |
//! | `client.Apply` with `client.ForceOwnership` | [`crate::apply::Applier`] |
//!
//! Refusals happen before anything is written: a second controller, an owner in another
//! namespace, a finalizer name without a domain prefix.

mod create_or_update;
mod finalizer;
mod owner;

pub use create_or_update::{
    CreateOrUpdateError, MutateFailure, OperationResult, create_or_patch, create_or_update,
};
pub use finalizer::{
    FinalizeError, FinalizerNameError, add_finalizer, contains_finalizer, finalize,
    remove_finalizer, validate_finalizer_name,
};
pub use kube::runtime::finalizer::Event as Finalizing;
pub use owner::{
    OwnerReferenceError, controller_of, has_controller_reference, set_controller_reference,
    set_owner_reference,
};

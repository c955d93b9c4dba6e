//! What a controller's files use, in one import: `use kubebuilder_runtime::prelude::*;`
//! (the runtime's toolkit, kube's `Api`, `Client` and `Action`, and `Arc`, in which
//! reconcilers receive their objects).

pub use std::sync::Arc;

pub use kube::runtime::controller::Action;
pub use kube::{Api, Client, Resource, ResourceExt};

pub use crate::apply::Applier;
pub use crate::conditions::{self, Status};
pub use crate::controllerutil::{self, FinalizeError, Finalizing};
pub use crate::events::Recorder;
pub use crate::predicate::{self, Predicate};
pub use crate::{Context, Manager, Reconciler};

/// Any error, boxed: a [`Reconciler::Error`] for a reconciler that passes on what it calls
/// with `?` (as a Go reconciler returns any `error`).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A result whose error is [`Error`] unless named: `Result<Action>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

//! The runtime every operator built with this project links: the counterpart of
//! controller-runtime's manager, metrics server, probes and webhook server.
//!
//! - [`ManagerArgs`]: kubebuilder's manager flags, to flatten into a binary's CLI.
//! - [`Manager::controller_for`]: a controller of a kind, the kinds it owns and watches,
//!   its [`predicate`]s and its [`Reconciler`], in one expression.
//! - [`Manager`]: runs controllers and runnables (with leader election), probes and
//!   health checks, metrics and webhooks, and shuts down gracefully.
//! - [`cache`]: the manager's shared cache: one watch per kind, cached reads, field
//!   indexes.
//! - [`ControllerContext::run`]: kube-runtime controllers on the shared cache with
//!   per-object back-off, panic recovery, reconcile and workqueue metrics and readiness.
//! - [`webhook`]: typed defaulting and validating webhooks with the request's context,
//!   and raw admission handlers.
//! - [`events`]: Events about objects, their series in a cache bounded in size.
//! - [`healthz`]: liveness and readiness checks.
//! - [`Clock`]: "now" as reconcilers see it, settable in tests.
//! - [`conditions`]: status conditions as apimachinery's `meta` package sets and reads them.
//! - [`controllerutil`]: finalizers and the cleanup-on-delete flow, owner references,
//!   create-or-update and create-or-patch (controller-runtime's `controllerutil`).
//! - [`apply`]: server-side apply with a field manager, of objects and their status.
//! - [`prelude`]: what a controller's files use, in one import.

#![warn(missing_docs)]

pub mod apply;
mod backoff;
mod builder;
pub mod cache;
pub mod certs;
pub mod clock;
pub mod conditions;
mod context;
mod controller;
pub mod controllerutil;
pub mod events;
pub mod healthz;
mod http;
mod leader;
mod manager;
pub mod metrics;
mod names;
mod options;
pub mod predicate;
pub mod prelude;
mod rest_client;
pub mod webhook;

pub use backoff::RateLimiter;
pub use builder::{Builder, Reconciler};
pub use clock::{Clock, SystemClock, TestClock};
pub use context::Context;
pub use controller::{
    CachedController, ControllerContext, DEFAULT_MAX_CONCURRENT_RECONCILES, WatchScope, is_conflict,
};
pub use manager::{
    Manager, ManagerError, NeedLeaderElection, RunnableError, RunningManager, shutdown_signal,
};
pub use options::{BindAddress, LogFormat, LoggingError, ManagerArgs};

//! The runtime every operator built with this project links: the counterpart of
//! controller-runtime's manager, metrics server, probes and webhook server.
//!
//! - [`ManagerArgs`]: kubebuilder's manager flags, to flatten into a binary's CLI.
//! - [`Manager`]: runs controllers (with leader election), probes, metrics and
//!   webhooks, and shuts down gracefully.
//! - [`ControllerContext::run`]: kube-runtime controllers with per-object back-off,
//!   reconcile metrics and readiness.
//! - [`webhook`]: typed defaulting and validating webhooks.
//! - [`Clock`]: "now" as reconcilers see it, settable in tests.
//! - [`conditions`]: status conditions set as apimachinery's `meta.SetStatusCondition`.

pub mod backoff;
pub mod bench;
pub mod certs;
pub mod client;
pub mod clock;
pub mod conditions;
mod controller;
mod http;
mod leader;
mod manager;
pub mod metrics;
mod options;
mod probes;
pub mod webhook;

pub use clock::{Clock, SystemClock, TestClock};
pub use controller::{ControllerContext, Scope, is_conflict};
pub use manager::{Manager, ManagerError, RunningManager, shutdown_signal};
pub use options::{BindAddress, LogFormat, LoggingError, ManagerArgs};

//! A real Kubernetes control plane for tests and local runs, the way controller-runtime's
//! envtest provides one: kube-apiserver and etcd built from Go modules (see `go.mod` next
//! to this crate), started on free loopback ports with their own PKI, stopped on drop.
//! Asked for ([`Options::controller_manager`]), kube-controller-manager runs beside them,
//! so that Deployments get ReplicaSets and Pods (which stay Pending: there is no node) and
//! owned objects are garbage-collected.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let plane = kubebuilder_envtest::shared();
//! let namespace = plane.create_namespace("my-test").await?;
//! let client = plane.client().await?;
//! # Ok(()) }
//! ```
//!
//! Beside it, for tests and benchmarks of a manager: [`http_client`], an HTTP/1.1 client
//! for the manager's own servers (probes, metrics, webhooks), and [`load`], a webhook load
//! generator with its percentiles. They live here, not in the runtime, so that no build of
//! an operator links them.

#![warn(missing_docs)]

pub mod assets;
mod controller_manager;
pub mod faults;
pub mod http_client;
pub mod image;
pub mod load;
pub mod node;
mod plane;
mod process;
mod shared;
mod wait;
mod watches;

pub use controller_manager::ControllerManager;
pub use plane::{ControlPlane, Options, wait_established};
pub use shared::shared;
pub use wait::eventually;
pub use watches::open_watches;

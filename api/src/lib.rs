//! The CronJob API of kubebuilder's tutorial (group `batch.tutorial.kubebuilder.io`), one
//! module per version as kubebuilder lays out `api/<version>/`. The attributes generate the
//! root objects, their CRDs (registered for `cargo xtask manifests`) and the serde and kube
//! impls; see `docs/markers.md` for the attribute vocabulary.

pub mod v1;
pub mod v2;
// +kubebuilder:scaffold:versions

/// The API group of every kind in this crate.
pub const GROUP: &str = "batch.tutorial.kubebuilder.io";

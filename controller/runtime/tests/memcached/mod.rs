//! kubebuilder's Getting Started operator, at its smallest: a Memcached kind whose
//! controller keeps a Deployment of `size` memcached pods, reports an `Available`
//! condition, records Events and cleans up behind a finalizer. `controller.rs` is the
//! operator's controller as a user writes it (the note of the toolkit issue counts its
//! lines against controller-runtime's).

pub mod controller;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// MemcachedSpec defines the desired state of Memcached.
#[kubebuilder::resource(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    status = MemcachedStatus,
    subresource(status),
)]
pub struct MemcachedSpec {
    /// How many memcached pods run.
    #[kubebuilder(required, validation(minimum = 1))]
    pub size: i32,
}

/// MemcachedStatus defines the observed state of Memcached.
#[kubebuilder::schema]
#[derive(Default)]
pub struct MemcachedStatus {
    /// The state of the Memcached, one condition per aspect.
    #[kubebuilder(optional, list_type = "map", list_map_key = "type")]
    pub conditions: Vec<Condition>,
}

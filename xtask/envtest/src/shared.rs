//! One control plane per test binary, shared by its tests.
//!
//! Tests call [`shared`] and then make their own namespace with
//! [`ControlPlane::create_namespace`]. The first call starts the plane; if it cannot
//! start, every test that asks for it fails with the reason (never skips).

use std::sync::OnceLock;

use crate::plane::ControlPlane;

/// The control plane of this test binary, started on first use.
///
/// # Panics
/// When the control plane cannot start (binaries missing, a process failing): a cluster
/// test must fail loudly, not pass or skip.
pub fn shared() -> &'static ControlPlane {
    static PLANE: OnceLock<Result<ControlPlane, String>> = OnceLock::new();
    match PLANE.get_or_init(|| ControlPlane::start().map_err(|err| format!("{err:#}"))) {
        Ok(plane) => plane,
        Err(reason) => panic!("the envtest control plane could not start: {reason}"),
    }
}

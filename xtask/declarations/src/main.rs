//! Prints the declarations that the attributes of `api` and `controller` register (CRD
//! versions, RBAC rules, webhooks) as JSON, for `cargo xtask manifests`.

// Linked for those declarations, which they register at link time; nothing is called by name.
extern crate api as _;
extern crate controller as _;

fn main() -> std::process::ExitCode {
    kubebuilder::declarations::print_registered()
}

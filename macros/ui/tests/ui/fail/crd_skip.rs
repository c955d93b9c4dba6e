//! `#[kubebuilder::skip]` goes on a module and takes no arguments.
#[kubebuilder::skip(all)]
pub mod v1 {}

#[kubebuilder::skip]
pub struct NotAModule;

fn main() {
    // The item stays: one mistake, one message.
    let _ = NotAModule;
}

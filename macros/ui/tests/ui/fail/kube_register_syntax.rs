//! `register_custom_resource!` takes one or more types, separated by commas.
kubebuilder::register_custom_resource!();

kubebuilder::register_custom_resource!("Boat");

kubebuilder::register_custom_resource!(A; B);

fn main() {}

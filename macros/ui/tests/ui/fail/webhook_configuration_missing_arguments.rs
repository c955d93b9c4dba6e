#[kubebuilder::webhook_configuration(name = "my-config")]
mod a {}

#[kubebuilder::webhook_configuration(mutating = true)]
mod b {}

fn main() {}

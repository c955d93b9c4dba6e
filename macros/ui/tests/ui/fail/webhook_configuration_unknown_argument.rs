#[kubebuilder::webhook_configuration(mutating = true, nam = "my-config")]
mod a {}

fn main() {}

#[kubebuilder::webhook_configuration(mutating = true, name = "My Config")]
mod a {}

fn main() {}

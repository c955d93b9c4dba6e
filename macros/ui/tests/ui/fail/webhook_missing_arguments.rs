use kubebuilder::webhook::Declared;

// Every required argument is reported; code using the type sees a stub `Declared` impl
// and adds no error of its own.
#[kubebuilder::webhook()]
pub struct Defaulter;

fn main() {
    let _ = Defaulter::WEBHOOK.path;
}

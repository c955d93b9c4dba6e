//! Markers controller-gen deprecates warn (denied here, to show the warnings).
#![deny(deprecated)]

#[kubebuilder::schema]
pub struct Requirements {
    #[kubebuilder(validation(required))]
    pub named: Option<String>,
    #[kubebuilder(validation(optional))]
    pub count: i32,
}

fn main() {}

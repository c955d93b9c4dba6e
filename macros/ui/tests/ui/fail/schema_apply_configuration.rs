//! `apply_configuration` is a flag on a type.
#[kubebuilder::schema(apply_configuration = "yes")]
pub struct WithAValue {
    pub a: String,
}

#[kubebuilder::schema]
pub struct OnAField {
    #[kubebuilder(apply_configuration)]
    pub a: String,
}

fn main() {}

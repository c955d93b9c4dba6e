//! `immutable` is a bare flag on a field, given once.
#[kubebuilder::schema(immutable)]
pub struct OnAType {
    pub a: String,
}

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(immutable = true)]
    pub a: String,
    #[kubebuilder(immutable, immutable)]
    pub b: String,
    #[kubebuilder(validation(immutable))]
    pub c: String,
    #[kubebuilder(immutabel)]
    pub d: String,
}

fn main() {}

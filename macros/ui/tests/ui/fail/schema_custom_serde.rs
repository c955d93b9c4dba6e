//! `custom_serde` needs a type for the schema; its fields' markers would do nothing.
#[kubebuilder::schema(custom_serde)]
pub struct Untyped(pub String);

#[kubebuilder::schema(custom_serde, validation(type = "string"))]
pub struct Marked {
    #[kubebuilder(validation(max_length = 3))]
    pub inner: String,
}

#[kubebuilder::schema]
pub struct OnAField {
    #[kubebuilder(custom_serde)]
    pub a: String,
}

fn main() {}

//! Field markers on a type, type markers on a field.
#[kubebuilder::schema(default = 1, validation(optional, schemaless))]
pub struct Count(i32);

#[kubebuilder::schema(nullable, example = 1, required, default_json = "1", validation(embedded_resource, required))]
pub struct Other(i32);

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(validation(at_most_one_of = ["a", "b"], exactly_one_of = ["a"], at_least_one_of = ["a"]))]
    pub a: Option<i32>,
}

fn main() {}

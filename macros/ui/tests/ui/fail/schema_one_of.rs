//! OneOf groups: no nested names, only fields of the struct, members never required.
#[kubebuilder::schema(validation(at_most_one_of = ["a.b", "c"]))]
pub struct Nested {
    pub c: Option<i32>,
}

#[kubebuilder::schema(validation(exactly_one_of = ["a", "z"]))]
pub struct Unknown {
    pub a: Option<i32>,
}

#[kubebuilder::schema(validation(at_least_one_of = ["a", "b"]))]
pub struct Required {
    pub a: i32,
    #[kubebuilder(required)]
    pub b: Option<i32>,
}

#[kubebuilder::schema(validation(at_most_one_of = ["a"]))]
pub struct NotAStruct(i32);

fn main() {}

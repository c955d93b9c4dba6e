//! Markers on fields of a type they cannot apply to.
use std::collections::BTreeMap;

#[kubebuilder::schema]
pub struct Inner {
    pub x: i32,
}

#[kubebuilder::schema(validation(max_items = 1))]
pub struct Name(String);

#[kubebuilder::schema(validation(min_properties = 1))]
pub struct Flag(bool);

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(validation(minimum = 0))]
    pub a: String,
    #[kubebuilder(validation(maximum = 1.5))]
    pub b: i32,
    #[kubebuilder(validation(exclusive_maximum))]
    pub c: Vec<i32>,
    #[kubebuilder(validation(multiple_of = 2))]
    pub d: bool,
    #[kubebuilder(validation(max_length = 3))]
    pub e: i64,
    #[kubebuilder(validation(pattern = "^a$"))]
    pub f: Inner,
    #[kubebuilder(validation(min_items = 1))]
    pub g: Option<String>,
    #[kubebuilder(validation(max_properties = 1))]
    pub h: Vec<String>,
    #[kubebuilder(list_type = "set")]
    pub i: BTreeMap<String, String>,
    #[kubebuilder(map_type = "atomic")]
    pub j: Inner,
    #[kubebuilder(struct_type = "atomic")]
    pub k: String,
    #[kubebuilder(validation(items(max_length = 1)))]
    pub l: String,
    #[kubebuilder(validation(items(minimum = 1)))]
    pub m: Vec<String>,
    #[kubebuilder(list_type = "map", list_map_key = "x")]
    pub o: Inner,
    #[kubebuilder(validation(type = "integer", max_length = 2))]
    pub p: String,
}

fn main() {}

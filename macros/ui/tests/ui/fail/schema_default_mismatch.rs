//! Defaults that do not fit the field's type or enum.
use std::collections::BTreeMap;

#[kubebuilder::schema]
pub enum Policy {
    Allow,
    Forbid,
}

#[kubebuilder::schema]
pub struct Inner {
    pub x: i32,
}

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(default = "three")]
    pub a: Option<i32>,
    #[kubebuilder(default = "Never")]
    pub b: Option<Policy>,
    #[kubebuilder(default = ["a", 2])]
    pub c: Option<Vec<String>>,
    #[kubebuilder(default = {"y": 1})]
    pub d: Option<Inner>,
    #[kubebuilder(default_json = r#"{"x": "1"}"#)]
    pub e: Option<Inner>,
    #[kubebuilder(default = {"k": 1})]
    pub f: Option<BTreeMap<String, String>>,
    #[kubebuilder(default = 1.5)]
    pub g: Option<i32>,
    #[kubebuilder(validation(enum = ["a", "b"]), default = "c")]
    pub h: Option<String>,
    #[kubebuilder(default = true)]
    pub i: Option<String>,
}

fn main() {}

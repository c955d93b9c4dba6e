//! `#[kubebuilder::schema]` implements `schemars::JsonSchema` from the schema the type has in
//! CRDs; a derive of its own would describe another.
use schemars::JsonSchema;

#[kubebuilder::schema]
#[derive(JsonSchema)]
pub struct Engine {
    pub power: i32,
}

#[kubebuilder::schema]
#[derive(Default, schemars::JsonSchema)]
pub enum Fuel {
    #[default]
    Diesel,
}

fn main() {}

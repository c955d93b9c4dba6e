//! `register_custom_resource!` takes the root type kube-derive generates, not the spec
//! struct the derive sits on, nor any other type.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "fleet.example.com", version = "v1", kind = "Boat", namespaced)]
pub struct BoatSpec {
    pub length: i32,
}

kubebuilder::register_custom_resource!(BoatSpec);

pub struct Plain;

kubebuilder::register_custom_resource!(Boat, Plain);

fn main() {}

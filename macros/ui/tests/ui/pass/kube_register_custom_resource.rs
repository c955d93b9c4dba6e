//! `kubebuilder::register_custom_resource!`: kube-derive kinds registered for `cargo xtask
//! manifests` beside ours, one line each (or several types in one line); the versions of a
//! kind merge into one CRD, and our `#[kubebuilder::schema]` types embed in them.
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Ours, embedded below.
#[kubebuilder::schema]
pub struct Engine {
    #[kubebuilder(validation(minimum = 1))]
    pub power: i32,
}

/// Ours: registers itself.
#[kubebuilder::resource(group = "fleet.example.com", version = "v1", kind = "Frigate")]
pub struct FrigateSpec {
    pub engine: Engine,
}

pub mod v1 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "fleet.example.com", version = "v1", kind = "Boat", namespaced)]
    pub struct BoatSpec {
        pub engine: Engine,
    }
}

pub mod v2 {
    use super::*;

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "fleet.example.com", version = "v2", kind = "Boat", namespaced, storage = false)]
    pub struct BoatSpec {
        pub engine: Option<Engine>,
    }
}

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "fleet.example.com", version = "v1", kind = "Buoy")]
pub struct BuoySpec {
    pub light: bool,
}

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "fleet.example.com", version = "v1", kind = "Anchor")]
pub struct AnchorSpec {
    pub weight: i32,
}

kubebuilder::register_custom_resource!(v1::Boat);
kubebuilder::register_custom_resource!(crate::v2::Boat);
kubebuilder::register_custom_resource!(Buoy, Anchor,);

fn main() {
    let crds = kubebuilder::crd::all(&Default::default()).unwrap();
    let names: Vec<(&str, Vec<&str>)> = crds
        .iter()
        .map(|crd| {
            let versions = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
            (crd.metadata.name.as_deref().unwrap(), versions)
        })
        .collect();
    assert_eq!(
        names,
        [
            ("anchors.fleet.example.com", vec!["v1"]),
            ("boats.fleet.example.com", vec!["v1", "v2"]),
            ("buoys.fleet.example.com", vec!["v1"]),
            ("frigates.fleet.example.com", vec!["v1"]),
        ]
    );
    let boat = serde_json::to_value(&crds[1]).unwrap();
    let power = &boat["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["engine"]["properties"]["power"];
    assert_eq!(power["minimum"], 1.0);
}

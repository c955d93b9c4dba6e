//! Every `#[kubebuilder::schema]` type, and the spec and status of a kind, implements
//! `schemars::JsonSchema` with the schema a field of that type has in our CRDs: markers,
//! list and map types, defaults and CEL included, no `$ref` inside.
use std::collections::BTreeMap;

use kubebuilder::schema::Schema;
use schemars::JsonSchema;
use serde_json::{Value, json};

/// A port.
#[kubebuilder::schema(validation(minimum = 1, maximum = 65535))]
pub struct Port(i32);

/// A protocol.
#[kubebuilder::schema]
pub enum Protocol {
    Tcp,
    Udp,
}

/// One of two.
#[kubebuilder::schema]
pub enum Target {
    Host(String),
    Address { ip: String },
}

/// Written by hand.
#[kubebuilder::schema(custom_serde, validation(type = "string", pattern = "^[0-9]+s$"))]
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Seconds(String);

/// A listener.
#[kubebuilder::schema(validation(x_validation(rule = "self.port != 22", message = "not ssh")))]
pub struct Listener {
    pub port: Port,
    #[kubebuilder(default = "Tcp")]
    pub protocol: Option<Protocol>,
    #[kubebuilder(list_type = "set")]
    pub hosts: Vec<String>,
    #[kubebuilder(map_type = "atomic")]
    pub labels: Option<BTreeMap<String, String>>,
    pub target: Option<Target>,
    pub timeout: Option<Seconds>,
}

/// Observed.
#[kubebuilder::schema]
pub struct GateStatus {
    pub open: Option<bool>,
}

/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Gate", status = GateStatus)]
pub struct GateSpec {
    pub listeners: Vec<Listener>,
}

/// The JsonSchema, as JSON.
fn json_schema<T: JsonSchema>() -> Value {
    let mut generator = schemars::SchemaGenerator::default();
    T::json_schema(&mut generator).to_value()
}

/// The schema a field of `T` has in our CRDs.
fn field<T: Schema>() -> Value {
    serde_json::to_value(T::node().resolve()).unwrap()
}

fn same<T: Schema + JsonSchema>() -> Value {
    let schema = json_schema::<T>();
    assert_eq!(schema, field::<T>(), "{}", T::schema_name());
    assert!(!schema.to_string().contains("$ref"));
    schema
}

fn main() {
    assert_eq!(
        same::<Port>(),
        json!({"description": "A port.", "format": "int32", "maximum": 65535.0, "minimum": 1.0, "type": "integer"})
    );
    assert_eq!(same::<Protocol>()["enum"], json!(["Tcp", "Udp"]));
    assert!(same::<Target>()["x-kubernetes-validations"].is_array());
    assert_eq!(same::<Seconds>()["pattern"], "^[0-9]+s$");
    let listener = same::<Listener>();
    assert_eq!(listener["x-kubernetes-validations"][0]["rule"], "self.port != 22");
    assert_eq!(listener["properties"]["protocol"]["default"], "Tcp");
    assert_eq!(listener["properties"]["hosts"]["x-kubernetes-list-type"], "set");
    assert_eq!(listener["properties"]["labels"]["x-kubernetes-map-type"], "atomic");
    assert_eq!(listener["properties"]["port"]["minimum"], 1.0);
    assert!(listener["properties"]["protocol"].get("nullable").is_none());
    same::<GateSpec>();
    same::<GateStatus>();
    // The spec's JsonSchema is the `spec` of the CRD.
    let crd = serde_json::to_value(Gate::crd()).unwrap();
    assert_eq!(
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"],
        json_schema::<GateSpec>()
    );
    // Named after the type, identified by its path.
    assert_eq!(Listener::schema_name(), "Listener");
    assert_eq!(Listener::schema_id(), format!("{}::Listener", module_path!()));
    // A schemars generator with definitions refers to it by name.
    let root = schemars::schema_for!(Vec<Listener>).to_value();
    assert_eq!(root["items"]["$ref"], "#/$defs/Listener");
    assert_eq!(root["$defs"]["Listener"], field::<Listener>());
}

//! Printer columns, selectable fields and scale paths must name fields of the object.
/// Spec.
#[kubebuilder::resource(
    group = "example.kubebuilder.io",
    version = "v1",
    kind = "Thing",
    status = ThingStatus,
    subresource(scale(spec_path = ".spec.replica", status_path = ".status.replica", selector_path = ".status.selector")),
    printcolumn(name = "Size", type = "integer", json_path = ".spec.sise"),
    printcolumn(name = "First", type = "string", json_path = ".status.names.first"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestmp"),
    printcolumn(name = "Rel", type = "string", json_path = "spec.size"),
    selectablefield(json_path = ".spec.size.value"),
)]
pub struct ThingSpec {
    pub size: i32,
    pub replicas: i32,
}

#[kubebuilder::schema]
pub struct ThingStatus {
    pub replicas: i32,
    pub names: Vec<String>,
}

fn main() {}

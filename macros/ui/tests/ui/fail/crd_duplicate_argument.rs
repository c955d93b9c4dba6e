//! Arguments given twice in `#[kubebuilder::resource]` and in its nested lists.
/// Spec.
#[kubebuilder::resource(
    group = "example.kubebuilder.io",
    version = "v1",
    kind = "Thing",
    storageversion,
    storageversion,
    resource(path = "things"),
    resource(path = "thingz"),
    subresource(status),
    subresource(status),
    printcolumn(name = "N", type = "integer", json_path = ".spec.n", name = "M"),
    printcolumn(name = "M", type = "integer", json_path = ".spec.n"),
    validation(max_properties = 3),
    validation(max_properties = 4),
)]
pub struct ThingSpec {
    pub n: i32,
}

fn main() {}

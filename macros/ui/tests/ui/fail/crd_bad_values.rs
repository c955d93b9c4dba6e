//! Values the apiserver or the generated code could not use.
/// Spec.
#[kubebuilder::resource(
    group = "Example",
    version = "V1.0",
    kind = "thing",
    status = "ThingStatus",
    doc = 1,
    resource(path = 1, singular = ["x"], short_name = [1], categories = 2, scope = "Global"),
    subresource(status = true, scale(spec_path = ".spec.n")),
    printcolumn(name = "N", type = "int", json_path = ".spec.n", format = "uint", priority = 3000000000, description = 1),
    printcolumn(name = "M"),
    printcolumn(type = "string", json_path = ".spec.n"),
    metadata(annotations = ["no-equals"], labels = ["tier"]),
    selectablefield(json_path = 1),
    storageversion = true,
    unservedversion(x),
    deprecatedversion(warning = 1),
    skipversion = false,
    hub = "v2",
)]
pub struct ThingSpec {
    pub n: i32,
}

/// Spec.
#[kubebuilder::resource(kind = "Other", group = "example.kubebuilder.io", group = "again.kubebuilder.io")]
pub struct OtherSpec {
    pub n: i32,
}

/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Hubbed", storageversion, hub = Other)]
pub struct HubbedSpec {
    pub n: i32,
}

#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "NotAStruct")]
pub enum NotAStruct {
    A,
}

fn main() {}

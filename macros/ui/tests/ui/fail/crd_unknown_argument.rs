//! Unknown names in `#[kubebuilder::resource]`, with a did-you-mean where one is close.
/// Spec.
#[kubebuilder::resource(
    group = "example.kubebuilder.io",
    version = "v1",
    kind = "Thing",
    storagversion,
    resource(shortname = ["t"]),
    subresource(statuss),
    subresource(scale(spec_path = ".spec.n", status_path = ".spec.n", selectorpath = ".spec.s")),
    printcolumn(name = "N", type = "integer", json_path = ".spec.n", prio = 1),
    metadata(annotation = ["a=b"]),
    selectablefield(path = ".spec.s"),
    deprecatedversion(warn = "old"),
    validation(x_validaton(rule = "true")),
)]
pub struct ThingSpec {
    pub n: i32,
    pub s: String,
}

fn main() {}

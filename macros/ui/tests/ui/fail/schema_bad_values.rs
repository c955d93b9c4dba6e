//! Values of the wrong kind, or outside what the marker allows.
#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(list_type = "list")]
    pub a: Vec<String>,
    #[kubebuilder(map_type = "deep")]
    pub b: std::collections::BTreeMap<String, String>,
    #[kubebuilder(struct_type = "flat")]
    pub c: Inner,
    #[kubebuilder(validation(type = "strin"))]
    pub d: String,
    #[kubebuilder(validation(minimum = "zero", maximum = true, multiple_of = [1]))]
    pub e: i32,
    #[kubebuilder(validation(max_length = 1.5, min_length = "1", max_items = x))]
    pub f: String,
    #[kubebuilder(validation(enum = "a"))]
    pub g: String,
    #[kubebuilder(title = 3, nullable = true, optional = 1)]
    pub h: Option<String>,
    #[kubebuilder(validation(x_validation(rule = "true", reason = "Bad")))]
    pub i: i32,
    #[kubebuilder(validation(x_validation(message = "no rule")))]
    pub j: i32,
    #[kubebuilder(external_docs(url = "not a url"))]
    pub k: i32,
    #[kubebuilder(external_docs(description = "no url"))]
    pub l: i32,
    #[kubebuilder(default_json = "{not json")]
    pub m: i32,
    #[kubebuilder(default_json = "ref(k8s.io/x)")]
    pub n: i32,
    #[kubebuilder(validation(pattern = "^(unclosed"))]
    pub o: String,
    #[kubebuilder(validation(unique_items = true, format = 1, min_properties = "1", max_properties = 1.0))]
    pub p: Vec<String>,
    #[kubebuilder(example = Inner, default = some::path, required = true, allow_dangerous_types = 1)]
    pub q: i32,
    #[kubebuilder(validation(exclusive_minimum = 1, exclusive_maximum = "x", x_int_or_string = true, x_preserve_unknown_fields(x), x_embedded_resource = 1))]
    pub r: i32,
    #[kubebuilder(list_map_key = 1, validation(x_validation(rule = "true", optional_old_self = "yes", field_path = 1, message_expression = 2)))]
    pub s: Vec<String>,
    #[kubebuilder(validation = 1, pruning = 1, validation(items = 1))]
    pub t: Vec<String>,
    #[kubebuilder(validation(x_validation(rule = "true", message = 1)), external_docs(url = "/x", description = 2))]
    pub u: i32,
}

#[kubebuilder::schema]
pub struct Inner {
    pub x: i32,
}

fn main() {}

//! A marker given twice is an error, also across two `validation(...)` lists; the markers
//! that repeat by nature (CEL rules, list map keys, OneOf groups) may.
#[kubebuilder::schema(validation(max_properties = 3), validation(max_properties = 4), title = "a", title = "b")]
pub struct Twice {
    #[kubebuilder(validation(minimum = 1), validation(minimum = 2))]
    pub a: i32,
    #[kubebuilder(validation(items(max_length = 1), items(max_length = 2)))]
    pub b: Vec<String>,
    #[kubebuilder(optional, optional, pruning(preserve_unknown_fields), pruning(preserve_unknown_fields))]
    pub c: Option<serde_json::Value>,
    #[kubebuilder(
        list_type = "map",
        list_map_key = "name",
        list_map_key = "port",
        validation(x_validation(rule = "self.size() > 0"), x_validation(rule = "true", rule = "false"))
    )]
    pub d: Vec<Endpoint>,
}

#[kubebuilder::schema]
pub struct Endpoint {
    pub name: String,
    pub port: i32,
}

fn main() {}

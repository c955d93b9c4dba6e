//! `list_map_key` needs `list_type = "map"` on the same node.
#[kubebuilder::schema]
pub struct Port {
    pub name: String,
}

#[kubebuilder::schema]
pub struct Fields {
    #[kubebuilder(list_map_key = "name")]
    pub ports: Vec<Port>,
    #[kubebuilder(list_type = "atomic", list_map_key = "name")]
    pub more: Vec<Port>,
}

fn main() {}

//! min_items, max_items, unique_items, list_type, list_map_key, items(...).
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub struct Port {
    pub name: String,
    pub protocol: String,
}

/// Tags, at most five.
#[kubebuilder::schema(validation(max_items = 5, items(max_length = 8)), list_type = "set")]
pub struct Tags(Vec<String>);

#[kubebuilder::schema]
pub struct Lists {
    #[kubebuilder(
        validation(min_items = 1, max_items = 3, unique_items = false),
        list_type = "atomic"
    )]
    pub names: Vec<String>,
    #[kubebuilder(list_type = "map", list_map_key = "name", list_map_key = "protocol")]
    pub ports: Vec<Port>,
    #[kubebuilder(validation(items(min_items = 1)))]
    pub matrix: Vec<Vec<i32>>,
    #[kubebuilder(optional)]
    pub tags: Option<Tags>,
}

fn main() {
    let schema = serde_json::to_value(Lists::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(properties["names"]["minItems"], json!(1));
    assert_eq!(properties["names"]["maxItems"], json!(3));
    assert_eq!(properties["names"].get("uniqueItems"), None);
    assert_eq!(
        properties["names"]["x-kubernetes-list-type"],
        json!("atomic")
    );
    assert_eq!(properties["ports"]["x-kubernetes-list-type"], json!("map"));
    assert_eq!(
        properties["ports"]["x-kubernetes-list-map-keys"],
        json!(["name", "protocol"])
    );
    assert_eq!(
        properties["ports"]["items"]["required"],
        json!(["name", "protocol"])
    );
    assert_eq!(properties["matrix"]["items"]["minItems"], json!(1));
    assert_eq!(
        properties["tags"],
        json!({"type": "array", "description": "Tags, at most five.", "maxItems": 5,
               "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 8}})
    );
    assert_eq!(schema["required"], json!(["matrix", "names", "ports"]));
}

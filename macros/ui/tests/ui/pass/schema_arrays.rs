//! Fixed-size arrays `[T; N]`: lists of exactly N items, in the schema as for serde.
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub struct Arrays {
    pub triple: [i32; 3],
    #[kubebuilder(validation(items(max_length = 5)))]
    pub pair: Option<[String; 2]>,
    pub digest: [u8; 4],
    pub grid: [[bool; 2]; 2],
}

fn main() {
    let schema = serde_json::to_value(Arrays::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(
        properties["triple"],
        json!({"type": "array", "items": {"type": "integer", "format": "int32"}, "minItems": 3, "maxItems": 3})
    );
    assert_eq!(
        properties["pair"],
        json!({"type": "array", "items": {"type": "string", "maxLength": 5}, "minItems": 2, "maxItems": 2})
    );
    // Go's `[N]byte` is a list of integers, not base64.
    assert_eq!(properties["digest"]["items"], json!({"type": "integer"}));
    assert_eq!(properties["grid"]["items"]["maxItems"], 2);

    let value = Arrays {
        triple: [1, 2, 3],
        pair: Some(["a".into(), "b".into()]),
        digest: [0, 1, 2, 255],
        grid: [[true, false], [false, true]],
    };
    let wire = serde_json::to_value(&value).unwrap();
    assert_eq!(wire["digest"], json!([0, 1, 2, 255]));
    assert_eq!(serde_json::from_value::<Arrays>(wire.clone()).unwrap(), value);
    let mut short = wire;
    short["triple"] = json!([1, 2]);
    assert!(serde_json::from_value::<Arrays>(short).is_err());
}

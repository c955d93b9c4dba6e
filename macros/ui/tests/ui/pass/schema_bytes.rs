//! `Vec<u8>` is base64 bytes wherever it sits, in the schema and on the wire (Go's `[]byte`).
use std::collections::BTreeMap;

use kubebuilder::schema::Schema;
use serde_json::json;

/// A named byte string.
#[kubebuilder::schema]
pub struct Blob(pub Vec<u8>);

#[kubebuilder::schema]
pub struct Bytes {
    pub raw: Vec<u8>,
    pub maybe: Option<Vec<u8>>,
    pub by_name: BTreeMap<String, Vec<u8>>,
    pub chunks: Vec<Vec<u8>>,
    pub nested: Option<Vec<Option<Box<Vec<u8>>>>>,
    pub blob: Blob,
    pub blobs: Vec<Blob>,
    #[kubebuilder(optional)]
    pub empty: Vec<u8>,
}

fn main() {
    let bytes = json!({"type": "string", "format": "byte"});
    let schema = serde_json::to_value(Bytes::schema()).unwrap();
    let properties = &schema["properties"];
    assert_eq!(properties["raw"], bytes);
    assert_eq!(properties["maybe"], bytes);
    assert_eq!(properties["byName"], json!({"type": "object", "additionalProperties": bytes}));
    assert_eq!(properties["chunks"], json!({"type": "array", "items": bytes}));
    assert_eq!(properties["nested"], json!({"type": "array", "items": bytes}));
    assert_eq!(
        properties["blob"],
        json!({"type": "string", "format": "byte", "description": "A named byte string."})
    );
    assert_eq!(properties["blobs"]["items"]["format"], "byte");

    let value = Bytes {
        raw: b"hi".to_vec(),
        maybe: Some(vec![0, 255]),
        by_name: BTreeMap::from([("k".to_owned(), b"v".to_vec())]),
        chunks: vec![b"a".to_vec(), Vec::new()],
        nested: Some(vec![Some(Box::new(b"n".to_vec())), None]),
        blob: Blob(b"b".to_vec()),
        blobs: vec![Blob(b"c".to_vec())],
        empty: Vec::new(),
    };
    let wire = serde_json::to_value(&value).unwrap();
    assert_eq!(
        wire,
        json!({
            "raw": "aGk=", "maybe": "AP8=", "byName": {"k": "dg=="}, "chunks": ["YQ==", ""],
            "nested": ["bg==", null], "blob": "Yg==", "blobs": ["Yw=="]
        })
    );
    assert_eq!(serde_json::from_value::<Bytes>(wire).unwrap(), value);
    assert!(serde_json::from_value::<Blob>(json!("not base64!")).is_err());
}

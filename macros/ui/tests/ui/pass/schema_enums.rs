//! Rust enums with data: externally tagged (serde's default), internally tagged
//! (`#[serde(tag = "...")]`) and untagged, each as a structural schema.
use kubebuilder::schema::Schema;
use serde_json::json;

#[kubebuilder::schema]
pub struct Git {
    pub url: String,
}

/// Where from.
#[kubebuilder::schema]
pub enum Source {
    /// A repository.
    Git(Git),
    Image {
        #[kubebuilder(validation(min_length = 1))]
        name: String,
        tag: Option<String>,
    },
    #[serde(rename = "path")]
    Path(String),
}

#[kubebuilder::schema(validation(x_validation(rule = "self.type != 'Drop' || true")))]
#[serde(tag = "type")]
pub enum Action {
    Redirect { url: String, max_hops: Option<i32> },
    Drop,
    Forward(Git),
}

#[kubebuilder::schema(validation(max_length = 8))]
#[serde(untagged)]
pub enum PortRef {
    Number(i32),
    Name(String),
}

#[kubebuilder::schema]
#[serde(untagged)]
pub enum Endpoint {
    Host { host: String, port: Option<i32> },
    Pair { ip: String, mask: String },
}

#[kubebuilder::schema]
pub struct Uses {
    #[kubebuilder(default = {"type": "Drop"})]
    pub action: Option<Action>,
    pub port: Option<PortRef>,
}

fn main() {
    let source = serde_json::to_value(Source::schema()).unwrap();
    assert_eq!(source["type"], "object");
    assert_eq!(source["properties"]["Git"]["description"], "A repository.");
    assert_eq!(source["properties"]["Image"]["required"], json!(["name"]));
    assert_eq!(source["properties"]["Image"]["properties"]["name"]["minLength"], 1);
    assert_eq!(source["properties"]["path"], json!({"type": "string"}));
    assert_eq!(
        source["x-kubernetes-validations"],
        json!([{"rule": "(has(self.Git)?1:0)+(has(self.Image)?1:0)+(has(self.path)?1:0) == 1",
                "message": "exactly one of the fields in [Git Image path] must be set"}])
    );
    assert_eq!(serde_json::to_value(Source::Path("/p".into())).unwrap(), json!({"path": "/p"}));

    let action = serde_json::to_value(Action::schema()).unwrap();
    assert_eq!(action["required"], json!(["type"]));
    assert_eq!(
        action["properties"]["type"],
        json!({"type": "string", "enum": ["Redirect", "Drop", "Forward"]})
    );
    assert_eq!(action["properties"]["maxHops"]["format"], "int32");
    assert_eq!(
        action["x-kubernetes-validations"],
        json!([
            {"rule": "self.type != 'Drop' || true"},
            {"rule": "self.type != 'Redirect' || has(self.url)", "message": "type Redirect requires: url"},
            {"rule": "self.type != 'Forward' || has(self.url)", "message": "type Forward requires: url"}
        ])
    );
    assert_eq!(
        serde_json::to_value(Action::Redirect { url: "u".into(), max_hops: None }).unwrap(),
        json!({"type": "Redirect", "url": "u"})
    );

    let port = serde_json::to_value(PortRef::schema()).unwrap();
    assert_eq!(
        port,
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true, "maxLength": 8})
    );

    let endpoint = serde_json::to_value(Endpoint::schema()).unwrap();
    assert_eq!(
        endpoint["x-kubernetes-validations"],
        json!([{"rule": "has(self.host) || (has(self.ip) && has(self.mask))",
                "message": "must set the fields of one of: Host (host), Pair (ip, mask)"}])
    );
    assert_eq!(
        serde_json::from_value::<Endpoint>(json!({"ip": "1.2.3.4", "mask": "8"})).unwrap(),
        Endpoint::Pair { ip: "1.2.3.4".into(), mask: "8".into() }
    );

    let uses = serde_json::to_value(Uses::schema()).unwrap();
    assert_eq!(uses["properties"]["action"]["default"], json!({"type": "Drop"}));
}

//! Every argument of `#[kubebuilder::resource]`: the root object, its CRD, and the merge of
//! two versions of one kind.
use kubebuilder::__private::kube_core::{CustomResourceExt, Resource};
use kubebuilder::crd::{self, CustomResource};
use serde_json::json;

mod v1 {
    /// WidgetSpec is the desired state.
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Widget",
        status = WidgetStatus,
        doc = "Widget is a thing.",
        resource(path = "widgetz", short_name = ["wd", "wdg"], categories = ["all", "things"], singular = "widgy", scope = "Cluster"),
        subresource(status),
        subresource(scale(spec_path = ".spec.replicas", status_path = ".status.replicas", selector_path = ".status.selector")),
        printcolumn(name = "Replicas", type = "integer", json_path = ".spec.replicas", description = "Wanted.", format = "int32", priority = 1),
        printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp"),
        storageversion,
        metadata(annotations = ["example.com/owner=team-a"], labels = ["tier=api", "empty="]),
        selectablefield(json_path = ".spec.color"),
        validation(x_validation(rule = "self.metadata.name.size() < 20", message = "name too long")),
    )]
    pub struct WidgetSpec {
        pub replicas: i32,
        pub color: String,
    }

    #[kubebuilder::schema]
    #[derive(Default)]
    pub struct WidgetStatus {
        pub replicas: i32,
        pub selector: String,
    }
}

mod v2 {
    /// The v2 spec.
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v2",
        kind = "Widget",
        hub = super::v1::Widget,
        resource(path = "widgetz", short_name = ["wd", "wdg"], categories = ["all", "things"], singular = "widgy", scope = "Cluster"),
        metadata(annotations = ["example.com/owner=team-a"], labels = ["tier=api", "empty="]),
        deprecatedversion(warning = "use v1"),
        unservedversion,
    )]
    pub struct WidgetSpec {
        pub size: i32,
    }

    // `hub =` asks for the conversion.
    impl kubebuilder::conversion::Spoke<super::v1::Widget> for Widget {
        fn to_hub(self) -> Result<super::v1::Widget, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(self)
        }

        fn from_hub(hub: super::v1::Widget) -> Result<Self, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(hub)
        }
    }
}

mod v3 {
    /// Never in the CRD.
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v3alpha1",
        kind = "Widget",
        hub = super::v1::Widget,
        resource(path = "widgetz", short_name = ["wd", "wdg"], categories = ["all", "things"], singular = "widgy", scope = "Cluster"),
        metadata(annotations = ["example.com/owner=team-a"], labels = ["tier=api", "empty="]),
        skipversion,
        deprecatedversion,
    )]
    pub struct WidgetSpec {}

    impl kubebuilder::conversion::Spoke<super::v1::Widget> for Widget {
        fn to_hub(self) -> Result<super::v1::Widget, kubebuilder::conversion::ConversionError> {
            Err(kubebuilder::conversion::ConversionError::new("spec", "v3alpha1 has no replicas"))
        }

        fn from_hub(hub: super::v1::Widget) -> Result<Self, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(hub)
        }
    }
}

fn assert_cluster_resource<
    K: Resource<DynamicType = (), Scope = kubebuilder::__private::k8s_openapi::ClusterResourceScope>,
>() {
}

fn main() {
    assert_cluster_resource::<v1::Widget>();
    assert_eq!(v1::Widget::plural(&()), "widgetz");
    assert_eq!(v1::Widget::api_version(&()), "example.kubebuilder.io/v1");
    assert_eq!(v1::Widget::crd_name(), "widgetz.example.kubebuilder.io");
    assert_eq!(
        <v1::Widget as CustomResourceExt>::shortnames(),
        ["wd", "wdg"]
    );

    let widget = v1::Widget::new(
        "w",
        v1::WidgetSpec {
            replicas: 2,
            color: "red".into(),
        },
    );
    let json = serde_json::to_value(&widget).unwrap();
    assert_eq!(
        json,
        json!({"apiVersion": "example.kubebuilder.io/v1", "kind": "Widget", "metadata": {"name": "w"},
               "spec": {"replicas": 2, "color": "red"}})
    );
    let back: v1::Widget = serde_json::from_value(json).unwrap();
    assert_eq!(back, widget);
    let list: v1::WidgetList = serde_json::from_value(json!({"apiVersion": "example.kubebuilder.io/v1", "kind": "WidgetList", "metadata": {}, "items": []})).unwrap();
    assert!(list.items.is_empty());

    // One version alone.
    let single = serde_json::to_value(v2::Widget::crd()).unwrap();
    assert_eq!(single["spec"]["versions"][0]["storage"], json!(true));

    // Every registered version, merged.
    let crds = crd::all(&crd::Options::default()).unwrap();
    assert_eq!(crds.len(), 1);
    let crd = serde_json::to_value(&crds[0]).unwrap();
    assert_eq!(
        crd["metadata"],
        json!({"name": "widgetz.example.kubebuilder.io",
               "annotations": {"controller-gen.kubebuilder.io/version": "v0.23.0", "example.com/owner": "team-a"},
               "labels": {"tier": "api", "empty": ""}})
    );
    assert_eq!(
        crd["spec"]["names"],
        json!({"kind": "Widget", "listKind": "WidgetList", "plural": "widgetz", "singular": "widgy",
               "shortNames": ["wd", "wdg"], "categories": ["all", "things"]})
    );
    assert_eq!(crd["spec"]["scope"], json!("Cluster"));
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    let (v1, v2) = (&versions[0], &versions[1]);
    assert_eq!(
        (
            v1["name"].clone(),
            v1["served"].clone(),
            v1["storage"].clone()
        ),
        (json!("v1"), json!(true), json!(true))
    );
    assert_eq!(
        (
            v2["name"].clone(),
            v2["served"].clone(),
            v2["storage"].clone()
        ),
        (json!("v2"), json!(false), json!(false))
    );
    assert_eq!(
        (v2["deprecated"].clone(), v2["deprecationWarning"].clone()),
        (json!(true), json!("use v1"))
    );
    assert_eq!(
        v1["subresources"],
        json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                       "labelSelectorPath": ".status.selector"}})
    );
    assert_eq!(
        v1["additionalPrinterColumns"],
        json!([
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "description": "Wanted.", "format": "int32", "priority": 1},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ])
    );
    assert_eq!(v1["selectableFields"], json!([{"jsonPath": ".spec.color"}]));
    let root = &v1["schema"]["openAPIV3Schema"];
    assert_eq!(root["description"], json!("Widget is a thing."));
    assert_eq!(root["required"], json!(["spec"]));
    assert_eq!(root["properties"]["metadata"], json!({"type": "object"}));
    assert_eq!(
        root["properties"]["spec"]["description"],
        json!("WidgetSpec is the desired state.")
    );
    assert_eq!(
        root["x-kubernetes-validations"],
        json!([{"rule": "self.metadata.name.size() < 20", "message": "name too long"}])
    );
    assert_eq!(
        v2["schema"]["openAPIV3Schema"]["description"],
        json!("Widget is the Schema for the widgetz API.")
    );
    assert_eq!(<v2::Widget as CustomResource>::VERSION.storage, false);

    // A version with a hub makes the CRD convert through the webhook server...
    assert_eq!(
        crd["spec"]["conversion"],
        json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": "/convert"}},
            "conversionReviewVersions": ["v1"]}})
    );
    // ...which converts any version to any other through the hub, or says why not.
    let v2_widget = json!({"apiVersion": "example.kubebuilder.io/v2", "kind": "Widget",
                           "metadata": {"name": "w"}, "spec": {"size": 3}});
    let in_v1 = kubebuilder::conversion::convert(v2_widget.clone(), "example.kubebuilder.io/v1");
    let error = in_v1.unwrap_err();
    assert!(error.message.contains("cannot decode Widget v1"), "{error}");
    let v1_widget = serde_json::to_value(&widget).unwrap();
    let in_v3 = kubebuilder::conversion::convert(v1_widget.clone(), "example.kubebuilder.io/v3alpha1").unwrap();
    assert_eq!(in_v3["apiVersion"], json!("example.kubebuilder.io/v3alpha1"));
    let back = kubebuilder::conversion::convert(in_v3, "example.kubebuilder.io/v1").unwrap_err();
    assert_eq!(back.to_string(), "spec: v3alpha1 has no replicas");
}

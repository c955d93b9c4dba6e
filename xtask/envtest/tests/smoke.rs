//! Smoke tests: the control plane is a real kube-apiserver with RBAC, CRDs and storage.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DynamicObject, ObjectMeta, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubebuilder_envtest::assets::KUBERNETES_VERSION;
use kubebuilder_envtest::shared;
use serde_json::json;

fn widget_crd(schema: serde_json::Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.smoke.example.com"},
        "spec": {
            "group": "smoke.example.com",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}]
        }
    }))
    .unwrap()
}

#[tokio::test]
async fn version_is_the_pinned_release() {
    let client = shared().client().await.unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.git_version, KUBERNETES_VERSION);
    let major_minor = format!("v{}.{}.", version.major, version.minor);
    assert!(
        KUBERNETES_VERSION.starts_with(&major_minor),
        "{major_minor} for {KUBERNETES_VERSION}"
    );
}

#[tokio::test]
async fn stores_and_reads_back_a_config_map() {
    let plane = shared();
    let namespace = plane.create_namespace("smoke-cm").await.unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(plane.client().await.unwrap(), &namespace);
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some("greeting".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([("hello".to_string(), "world".to_string())])),
        ..Default::default()
    };
    config_maps
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
    let read = config_maps.get("greeting").await.unwrap();
    assert_eq!(read.data.unwrap()["hello"], "world");
    assert!(read.metadata.uid.is_some(), "the apiserver assigned a uid");
}

#[tokio::test]
async fn installs_a_crd_and_serves_its_objects() {
    let plane = shared();
    let crd = widget_crd(json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}}}
    }));
    plane.install_crds(&[crd]).await.unwrap();
    let namespace = plane.create_namespace("smoke-crd").await.unwrap();
    let gvk = GroupVersionKind::gvk("smoke.example.com", "v1", "Widget");
    let widgets: Api<DynamicObject> = Api::namespaced_with(
        plane.client().await.unwrap(),
        &namespace,
        &ApiResource::from_gvk(&gvk),
    );
    let mut widget = DynamicObject::new("big", &ApiResource::from_gvk(&gvk));
    widget.data = json!({"spec": {"size": 3}});
    widgets
        .create(&PostParams::default(), &widget)
        .await
        .unwrap();
    assert_eq!(widgets.get("big").await.unwrap().data["spec"]["size"], 3);

    // The schema is enforced: the apiserver refuses size 0.
    let mut small = DynamicObject::new("small", &ApiResource::from_gvk(&gvk));
    small.data = json!({"spec": {"size": 0}});
    let err = widgets
        .create(&PostParams::default(), &small)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("should be greater than or equal to 1"),
        "{err}"
    );
}

#[tokio::test]
async fn refuses_a_crd_whose_schema_is_not_structural() {
    let plane = shared();
    // `spec` has properties but no type: not a structural schema.
    let mut crd = widget_crd(json!({
        "type": "object",
        "properties": {"spec": {"properties": {"size": {"type": "integer"}}}}
    }));
    crd.metadata.name = Some("gadgets.smoke.example.com".into());
    crd.spec.names.plural = "gadgets".into();
    crd.spec.names.kind = "Gadget".into();
    crd.spec.names.list_kind = Some("GadgetList".into());
    crd.spec.names.singular = Some("gadget".into());
    let err = plane.install_crds(&[crd]).await.unwrap_err();
    let message = format!("{err:#}");
    assert!(
        message.contains(
            "properties[spec].type: Required value: must not be empty for specified object fields"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn rbac_refuses_a_service_account_without_roles() {
    let plane = shared();
    let namespace = plane.create_namespace("smoke-rbac").await.unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(plane.client().await.unwrap(), &namespace);
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some("nobody".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();

    let as_nobody = plane
        .client_as_service_account(&namespace, "nobody")
        .await
        .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(as_nobody, &namespace);
    match config_maps.list(&Default::default()).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403, "{status:?}");
            assert!(
                status.message.contains("system:serviceaccount"),
                "{}",
                status.message
            );
        }
        other => panic!("expected 403 Forbidden, got {other:?}"),
    }

    // A user authenticated by a client certificate, with no roles, is refused as well.
    let as_user = plane.client_as_user("alice", None).await.unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(as_user, &namespace);
    let err = config_maps.list(&Default::default()).await.unwrap_err();
    assert!(
        err.to_string().contains("User \"alice\" cannot list"),
        "{err}"
    );
}

#[tokio::test]
async fn the_roles_of_a_generated_file_are_granted_as_config_rbac_binds_them() {
    let plane = shared();
    let namespace = plane.create_namespace("smoke-grant").await.unwrap();
    // A ClusterRole and a Role of another namespace, as `config/rbac/role.yaml` has them.
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        file.path(),
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n\
         metadata:\n  name: manager-role\nrules:\n- apiGroups: [\"\"]\n  \
         resources: [configmaps]\n  verbs: [list]\n\
         ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n\
         metadata:\n  name: manager-role\n  namespace: system\nrules:\n\
         - apiGroups: [\"\"]\n  resources: [secrets]\n  verbs: [list]\n",
    )
    .unwrap();
    plane
        .grant_roles_in_file(file.path(), &namespace, "manager")
        .await
        .unwrap();

    let as_manager = plane
        .client_as_service_account(&namespace, "manager")
        .await
        .unwrap();
    // The ClusterRole everywhere; the Role in the account's namespace only.
    let allowed = |api: Api<DynamicObject>| async move { api.list(&Default::default()).await };
    let config_maps = ApiResource::erase::<ConfigMap>(&());
    let secrets = ApiResource::erase::<Secret>(&());
    kubebuilder_envtest::eventually("the bindings", Duration::from_secs(10), || async {
        let in_default = Api::namespaced_with(as_manager.clone(), "default", &config_maps);
        let own = Api::namespaced_with(as_manager.clone(), &namespace, &secrets);
        (allowed(in_default).await.is_ok() && allowed(own).await.is_ok()).then_some(())
    })
    .await;
    let elsewhere = Api::namespaced_with(as_manager.clone(), "default", &secrets);
    match allowed(elsewhere).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 403, "{status:?}"),
        other => panic!("expected 403 Forbidden, got {other:?}"),
    }
}

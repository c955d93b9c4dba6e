//! What the cluster tests of this crate share: a small custom kind, manager flags for
//! tests (loopback, free ports) and polling.

#![allow(dead_code)] // Each test binary uses its own part of this module.

use std::borrow::Cow;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::core::{NamespaceResourceScope, ObjectMeta};
use kubebuilder_runtime::{BindAddress, ManagerArgs};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The group of the test kind `Widget`.
pub const GROUP: &str = "runtime.kubebuilder.test";

/// A namespaced kind with a spec of optional fields and a status subresource, served as
/// `widgets.<GROUP>/v1`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
}

impl Widget {
    pub fn new(name: &str, spec: WidgetSpec) -> Self {
        Self {
            api_version: format!("{GROUP}/v1"),
            kind: "Widget".into(),
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            spec,
            status: None,
        }
    }
}

impl Resource for Widget {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Widget".into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "widgets".into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// The Widget CRD. `spec` keeps fields the Rust type does not know, so tests can see
/// that defaulting leaves them alone.
pub fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("widgets.{GROUP}")},
        "spec": {
            "group": GROUP,
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": true,
                            "properties": {"size": {"type": "integer"}, "color": {"type": "string"}}
                        },
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    }))
    .expect("a valid CRD")
}

/// Manager flags for a test: probes on a free loopback port, nothing else listening.
pub fn test_args() -> ManagerArgs {
    ManagerArgs {
        health_probe_bind_address: BindAddress::HostPort("127.0.0.1:0".into()),
        webhook_port: 0,
        ..ManagerArgs::default()
    }
}

pub use kubebuilder_envtest::eventually;

/// `promtool check metrics` on a scrape: Prometheus' own text parser and linter (client_golang's
/// promlint, at the versions promtool links), which must find nothing to say.
pub fn promlint_check(scrape: &str) {
    let output = promlint(scrape);
    assert!(
        output.status.success(),
        "promlint failed ({}):\n{}{}\n--- the scrape:\n{scrape}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// What promlint says of `scrape`: exit status 0 clean, 1 unparsable, 3 lint problems.
pub fn promlint(scrape: &str) -> std::process::Output {
    let promlint = std::env::var_os("PROMLINT")
        .expect("PROMLINT must name promlint (`cargo xtask test` installs it and sets it)");
    let mut child = std::process::Command::new(promlint)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promlint runs");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), scrape.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

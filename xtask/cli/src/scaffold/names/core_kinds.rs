//! Kubernetes' own kinds, as k8s-openapi has them: what `create api --resource=false`
//! scaffolds a controller for when `--group` is one of Kubernetes' groups and PROJECT has
//! no kind of that name (kubebuilder's core types, from `k8s.io/api`).
//!
//! The table holds every listable kind of the GA versions of k8s-openapi's [`K8S_OPENAPI`]
//! API (the one a project's `controller` crate enables), but `ComponentStatus`, which no
//! client can create. Alpha and beta versions are left out: clusters, envtest's included,
//! do not serve them by default (`--external-api-path` scaffolds a controller for one all
//! the same). Each kind has the fields its scaffolded test gives a new object, the least
//! the apiserver creates one with; a test of this module checks the table against
//! k8s-openapi's types and has the apiserver create each object.

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

/// The k8s-openapi API (its feature, a Kubernetes minor version) the table is taken from.
pub const K8S_OPENAPI: &str = "v1_37";

/// Where a sample names the namespace of its object (a JSON string of its own).
pub const NAMESPACE: &str = "$NAMESPACE";

/// One kind of Kubernetes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreKind {
    /// The API group, as k8s-openapi's `GROUP`: `""` (the core group), `apps`,
    /// `networking.k8s.io`.
    pub api_group: &'static str,
    /// The API version (`v1`).
    pub version: &'static str,
    /// The kind, also the name of its Rust type (`Deployment`).
    pub kind: &'static str,
    /// The resource name (`deployments`).
    pub plural: &'static str,
    /// `false` for a cluster-scoped kind.
    pub namespaced: bool,
    /// The Rust module of its type (`k8s_openapi::api::apps::v1`).
    pub module: &'static str,
    /// The fields a new object needs beside `apiVersion`, `kind` and `metadata` (a JSON
    /// object, `""` for none), and `metadata` itself when the name must have a form of its
    /// own. A [`NAMESPACE`] string stands for the object's namespace.
    pub sample: &'static str,
}

macro_rules! core_kinds {
    ($($group:literal $version:ident $kind:ident $plural:literal $scope:ident
       [$($module:ident)+] $sample:literal;)*) => {
        /// Kubernetes' kinds, by group (k8s-openapi's modules in order) and kind.
        pub const CORE_KINDS: &[CoreKind] = &[$(
            CoreKind {
                api_group: $group,
                version: stringify!($version),
                kind: stringify!($kind),
                plural: $plural,
                namespaced: core_kinds!(@namespaced $scope),
                module: concat!("k8s_openapi" $(, "::", stringify!($module))+),
                sample: $sample,
            },
        )*];

        /// Per row of [`CORE_KINDS`], in order: its check against its k8s-openapi type, and
        /// the JSON of an object after a round trip through that type.
        #[cfg(test)]
        const TYPES: &[(fn(&CoreKind), fn(Value) -> Value)] = &[$(
            (
                tests::check::<k8s_openapi $(::$module)+::$kind>,
                tests::round_trip::<k8s_openapi $(::$module)+::$kind>,
            ),
        )*];
    };
    (@namespaced Namespaced) => { true };
    (@namespaced Cluster) => { false };
}

core_kinds! {
    "admissionregistration.k8s.io" v1 MutatingAdmissionPolicy "mutatingadmissionpolicies" Cluster [api admissionregistration v1] r#"{
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: \"test\", path: \"/metadata/name\", value: object.metadata.name}]"}}],
            "reinvocationPolicy": "Never"
        }
    }"#;
    "admissionregistration.k8s.io" v1 MutatingAdmissionPolicyBinding "mutatingadmissionpolicybindings" Cluster [api admissionregistration v1] r#"{
        "spec": {"policyName": "test"}
    }"#;
    "admissionregistration.k8s.io" v1 MutatingWebhookConfiguration "mutatingwebhookconfigurations" Cluster [api admissionregistration v1] "";
    "admissionregistration.k8s.io" v1 ValidatingAdmissionPolicy "validatingadmissionpolicies" Cluster [api admissionregistration v1] r#"{
        "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "true"}]
        }
    }"#;
    "admissionregistration.k8s.io" v1 ValidatingAdmissionPolicyBinding "validatingadmissionpolicybindings" Cluster [api admissionregistration v1] r#"{
        "spec": {"policyName": "test", "validationActions": ["Warn"]}
    }"#;
    "admissionregistration.k8s.io" v1 ValidatingWebhookConfiguration "validatingwebhookconfigurations" Cluster [api admissionregistration v1] "";
    "apps" v1 ControllerRevision "controllerrevisions" Namespaced [api apps v1] r#"{"revision": 1, "data": {}}"#;
    "apps" v1 DaemonSet "daemonsets" Namespaced [api apps v1] r#"{
        "spec": {
            "selector": {"matchLabels": {"app": "test"}},
            "template": {"metadata": {"labels": {"app": "test"}}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        }
    }"#;
    "apps" v1 Deployment "deployments" Namespaced [api apps v1] r#"{
        "spec": {
            "selector": {"matchLabels": {"app": "test"}},
            "template": {"metadata": {"labels": {"app": "test"}}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        }
    }"#;
    "apps" v1 ReplicaSet "replicasets" Namespaced [api apps v1] r#"{
        "spec": {
            "selector": {"matchLabels": {"app": "test"}},
            "template": {"metadata": {"labels": {"app": "test"}}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        }
    }"#;
    "apps" v1 StatefulSet "statefulsets" Namespaced [api apps v1] r#"{
        "spec": {
            "selector": {"matchLabels": {"app": "test"}},
            "template": {"metadata": {"labels": {"app": "test"}}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        }
    }"#;
    "autoscaling" v1 HorizontalPodAutoscaler "horizontalpodautoscalers" Namespaced [api autoscaling v1] r#"{
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test"}, "maxReplicas": 2}
    }"#;
    "autoscaling" v2 HorizontalPodAutoscaler "horizontalpodautoscalers" Namespaced [api autoscaling v2] r#"{
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "test"}, "maxReplicas": 2}
    }"#;
    "batch" v1 CronJob "cronjobs" Namespaced [api batch v1] r#"{
        "spec": {
            "schedule": "*/1 * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}
        }
    }"#;
    "batch" v1 Job "jobs" Namespaced [api batch v1] r#"{
        "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox"}], "restartPolicy": "Never"}}}
    }"#;
    // The request is a fixed PEM certificate request (for CN=test), base64-encoded.
    "certificates.k8s.io" v1 CertificateSigningRequest "certificatesigningrequests" Cluster [api certificates v1] r#"{
        "spec": {
            "request": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISk1IRUNBUUF3RHpFTk1Bc0dBMVVFQXd3RWRHVnpkREJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSApBMElBQkNJanJHVVpENTVPMzJxMnRmUmxtaTJQa05ST2NaVzRndzRCWThWTi9WNXQzSlVFQjliM0RQcE9sdGVUCmF5Vit0SDdsMnBvUklSWHhVci92ZFU1L2dXYWdBREFLQmdncWhrak9QUVFEQWdOSUFEQkZBaUFIdEtWdEhaK0QKamdOemdhcHRsekZEUDRRank3YTdPRmEzR2Z3R281a0ViQUloQVBwR2FjTHU5WEhtRVpObFRoRDJCc1BoTHl1QwpiMEFQcDl3WGZYRGlqczl3Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=",
            "signerName": "example.com/test",
            "usages": ["digital signature"]
        }
    }"#;
    "coordination.k8s.io" v1 Lease "leases" Namespaced [api coordination v1] "";
    "" v1 ConfigMap "configmaps" Namespaced [api core v1] "";
    "" v1 Endpoints "endpoints" Namespaced [api core v1] "";
    "" v1 Event "events" Namespaced [api core v1] r#"{
        "involvedObject": {"kind": "Pod", "name": "test", "namespace": "$NAMESPACE"}
    }"#;
    "" v1 LimitRange "limitranges" Namespaced [api core v1] "";
    "" v1 Namespace "namespaces" Cluster [api core v1] "";
    "" v1 Node "nodes" Cluster [api core v1] "";
    "" v1 PersistentVolume "persistentvolumes" Cluster [api core v1] r#"{
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/test"}}
    }"#;
    "" v1 PersistentVolumeClaim "persistentvolumeclaims" Namespaced [api core v1] r#"{
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }"#;
    "" v1 Pod "pods" Namespaced [api core v1] r#"{
        "spec": {"containers": [{"name": "main", "image": "busybox"}]}
    }"#;
    "" v1 PodTemplate "podtemplates" Namespaced [api core v1] r#"{
        "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}
    }"#;
    "" v1 ReplicationController "replicationcontrollers" Namespaced [api core v1] r#"{
        "spec": {
            "selector": {"app": "test"},
            "template": {"metadata": {"labels": {"app": "test"}}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}}
        }
    }"#;
    "" v1 ResourceQuota "resourcequotas" Namespaced [api core v1] "";
    "" v1 Secret "secrets" Namespaced [api core v1] "";
    "" v1 Service "services" Namespaced [api core v1] r#"{
        "spec": {"ports": [{"port": 80}]}
    }"#;
    "" v1 ServiceAccount "serviceaccounts" Namespaced [api core v1] "";
    "discovery.k8s.io" v1 EndpointSlice "endpointslices" Namespaced [api discovery v1] r#"{
        "addressType": "IPv4",
        "endpoints": []
    }"#;
    "events.k8s.io" v1 Event "events" Namespaced [api events v1] r#"{
        "eventTime": "2025-01-01T00:00:00.000000Z",
        "reportingController": "example.com/test",
        "reportingInstance": "test",
        "action": "Test",
        "reason": "Test",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "test", "namespace": "$NAMESPACE"}
    }"#;
    "flowcontrol.apiserver.k8s.io" v1 FlowSchema "flowschemas" Cluster [api flowcontrol v1] r#"{
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}
    }"#;
    "flowcontrol.apiserver.k8s.io" v1 PriorityLevelConfiguration "prioritylevelconfigurations" Cluster [api flowcontrol v1] r#"{
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}
    }"#;
    "networking.k8s.io" v1 Ingress "ingresses" Namespaced [api networking v1] r#"{
        "spec": {"defaultBackend": {"service": {"name": "test", "port": {"number": 80}}}}
    }"#;
    "networking.k8s.io" v1 IngressClass "ingressclasses" Cluster [api networking v1] r#"{
        "spec": {"controller": "example.com/test"}
    }"#;
    // An IPAddress is named by its address.
    "networking.k8s.io" v1 IPAddress "ipaddresses" Cluster [api networking v1] r#"{
        "metadata": {"name": "192.168.100.100"},
        "spec": {"parentRef": {"group": "", "resource": "services", "name": "test", "namespace": "$NAMESPACE"}}
    }"#;
    "networking.k8s.io" v1 NetworkPolicy "networkpolicies" Namespaced [api networking v1] r#"{
        "spec": {"podSelector": {}}
    }"#;
    "networking.k8s.io" v1 ServiceCIDR "servicecidrs" Cluster [api networking v1] r#"{
        "spec": {"cidrs": ["10.100.0.0/24"]}
    }"#;
    "node.k8s.io" v1 RuntimeClass "runtimeclasses" Cluster [api node v1] r#"{"handler": "runc"}"#;
    "policy" v1 PodDisruptionBudget "poddisruptionbudgets" Namespaced [api policy v1] "";
    "rbac.authorization.k8s.io" v1 ClusterRole "clusterroles" Cluster [api rbac v1] "";
    "rbac.authorization.k8s.io" v1 ClusterRoleBinding "clusterrolebindings" Cluster [api rbac v1] r#"{
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    }"#;
    "rbac.authorization.k8s.io" v1 Role "roles" Namespaced [api rbac v1] "";
    "rbac.authorization.k8s.io" v1 RoleBinding "rolebindings" Namespaced [api rbac v1] r#"{
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
    }"#;
    "resource.k8s.io" v1 DeviceClass "deviceclasses" Cluster [api resource v1] r#"{"spec": {}}"#;
    "resource.k8s.io" v1 ResourceClaim "resourceclaims" Namespaced [api resource v1] r#"{"spec": {}}"#;
    "resource.k8s.io" v1 ResourceClaimTemplate "resourceclaimtemplates" Namespaced [api resource v1] r#"{
        "spec": {"spec": {}}
    }"#;
    "resource.k8s.io" v1 ResourceSlice "resourceslices" Cluster [api resource v1] r#"{
        "spec": {"driver": "example.com", "pool": {"name": "test", "generation": 1, "resourceSliceCount": 1}, "nodeName": "test"}
    }"#;
    "scheduling.k8s.io" v1 PriorityClass "priorityclasses" Cluster [api scheduling v1] r#"{"value": 1000}"#;
    "storage.k8s.io" v1 CSIDriver "csidrivers" Cluster [api storage v1] r#"{"spec": {}}"#;
    "storage.k8s.io" v1 CSINode "csinodes" Cluster [api storage v1] r#"{"spec": {"drivers": []}}"#;
    "storage.k8s.io" v1 CSIStorageCapacity "csistoragecapacities" Namespaced [api storage v1] r#"{
        "storageClassName": "test"
    }"#;
    "storage.k8s.io" v1 StorageClass "storageclasses" Cluster [api storage v1] r#"{
        "provisioner": "example.com/test"
    }"#;
    "storage.k8s.io" v1 VolumeAttachment "volumeattachments" Cluster [api storage v1] r#"{
        "spec": {"attacher": "example.com", "nodeName": "test", "source": {"persistentVolumeName": "test"}}
    }"#;
    "storage.k8s.io" v1 VolumeAttributesClass "volumeattributesclasses" Cluster [api storage v1] r#"{
        "driverName": "example.com",
        "parameters": {"test": "true"}
    }"#;
    // A CRD is named `<plural>.<group>`.
    "apiextensions.k8s.io" v1 CustomResourceDefinition "customresourcedefinitions" Cluster [apiextensions_apiserver pkg apis apiextensions v1] r#"{
        "metadata": {"name": "widgets.test.example.com"},
        "spec": {
            "group": "test.example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]
        }
    }"#;
    // An APIService is named `<version>.<group>`.
    "apiregistration.k8s.io" v1 APIService "apiservices" Cluster [kube_aggregator pkg apis apiregistration v1] r#"{
        "metadata": {"name": "v1.apiservice.example.com"},
        "spec": {
            "group": "apiservice.example.com",
            "version": "v1",
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
            "service": {"name": "test", "namespace": "$NAMESPACE"}
        }
    }"#;
}

impl CoreKind {
    /// The group as kubebuilder spells it, and PROJECT records it: `core`, `apps`,
    /// `networking` (the API group without `.k8s.io`).
    pub fn group(&self) -> &'static str {
        match self.api_group {
            "" => "core",
            group => group.strip_suffix(".k8s.io").unwrap_or(group),
        }
    }

    /// The domain PROJECT records with [`group`](Self::group): `k8s.io`, or none.
    pub fn domain(&self) -> &'static str {
        if self.api_group.ends_with(".k8s.io") {
            "k8s.io"
        } else {
            ""
        }
    }

    /// `apps/v1`, `v1` for the core group.
    pub fn api_version(&self) -> String {
        match self.api_group {
            "" => self.version.to_owned(),
            group => format!("{group}/{}", self.version),
        }
    }

    /// The group as RBAC attributes name it: `core` for the core group.
    pub fn rbac_group(&self) -> &'static str {
        match self.api_group {
            "" => "core",
            group => group,
        }
    }

    /// The Rust type: `k8s_openapi::api::apps::v1::Deployment`.
    pub fn type_path(&self) -> String {
        format!("{}::{}", self.module, self.kind)
    }

    /// The fields of [`sample`](Self::sample) a new object gets, `metadata` included: a
    /// `test-<kind>` name unless the sample names it.
    pub fn sample_fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        fields.insert(
            "metadata".to_owned(),
            json!({"name": format!("test-{}", self.kind.to_lowercase())}),
        );
        if !self.sample.is_empty() {
            match serde_json::from_str(self.sample) {
                Ok(Value::Object(sample)) => fields.extend(sample),
                _ => panic!("the sample of {} is not a JSON object", self.kind),
            }
        }
        fields
    }
}

/// Whether `--group` names one of Kubernetes' groups: kubebuilder's spelling (`core`,
/// `apps`, `networking`) or the API group (`networking.k8s.io`).
pub fn is_core_group(group: &str) -> bool {
    CORE_KINDS.iter().any(|kind| names_group(kind, group))
}

fn names_group(kind: &CoreKind, group: &str) -> bool {
    kind.group() == group || (!kind.api_group.is_empty() && kind.api_group == group)
}

/// The kind `--group`, `--version` and `--kind` name, or why k8s-openapi has none.
pub fn find(group: &str, version: &str, kind: &str) -> Result<&'static CoreKind> {
    let of_group: Vec<&CoreKind> = CORE_KINDS
        .iter()
        .filter(|candidate| names_group(candidate, group))
        .collect();
    let Some(first) = of_group.first() else {
        bail!("{group} is not one of Kubernetes' API groups");
    };
    let of_version: Vec<&CoreKind> = of_group
        .iter()
        .copied()
        .filter(|candidate| candidate.version == version)
        .collect();
    if of_version.is_empty() {
        let mut versions: Vec<&str> = of_group.iter().map(|candidate| candidate.version).collect();
        versions.dedup();
        let mut message = format!(
            "{} has no GA version {version} in k8s-openapi's {K8S_OPENAPI} API (it has {})",
            display_group(first),
            versions.join(", "),
        );
        // `--external-api-domain` names groups `<group>.<domain>`: Kubernetes' `*.k8s.io`.
        if !first.domain().is_empty() {
            let module = first
                .module
                .strip_suffix(first.version)
                .unwrap_or(first.module);
            message += &format!(
                "; for an alpha or beta version, pass --external-api-path {module}{version} \
                 --external-api-domain {} --group {}",
                first.domain(),
                first.group(),
            );
        }
        bail!("{message}");
    }
    match of_version.iter().find(|candidate| candidate.kind == kind) {
        Some(found) => Ok(found),
        None => bail!(
            "k8s-openapi's {K8S_OPENAPI} API has no kind {kind} in {} (its kinds: {})",
            first_api_version(&of_version),
            of_version
                .iter()
                .map(|candidate| candidate.kind)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The kind of API group `api_group` (`""` for the core group), if Kubernetes has it.
pub fn by_api_group(api_group: &str, version: &str, kind: &str) -> Option<&'static CoreKind> {
    CORE_KINDS.iter().find(|candidate| {
        candidate.api_group == api_group && candidate.version == version && candidate.kind == kind
    })
}

/// The kind whose Rust type is at `path` (`k8s_openapi::api::core::v1::Pod`), if the
/// table has it.
pub fn by_type_path(path: &str) -> Option<&'static CoreKind> {
    CORE_KINDS
        .iter()
        .find(|candidate| candidate.type_path() == path)
}

fn display_group(kind: &CoreKind) -> &'static str {
    match kind.api_group {
        "" => "the core group",
        group => group,
    }
}

fn first_api_version(kinds: &[&CoreKind]) -> String {
    kinds
        .first()
        .map(|kind| kind.api_version())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::any::TypeId;

    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    use kube::core::GroupVersionKind;
    use serde::Serialize;
    use serde::de::DeserializeOwned;

    use super::*;

    /// The row `kind` says what k8s-openapi's type `T` says.
    pub(super) fn check<T>(kind: &CoreKind)
    where
        T: k8s_openapi::Resource + k8s_openapi::ListableResource + 'static,
    {
        assert_eq!(
            (kind.api_group, kind.version, kind.kind, kind.plural),
            (T::GROUP, T::VERSION, T::KIND, T::URL_PATH_SEGMENT)
        );
        assert_eq!(kind.api_version(), T::API_VERSION);
        let namespaced =
            TypeId::of::<T::Scope>() == TypeId::of::<k8s_openapi::NamespaceResourceScope>();
        assert_eq!(kind.namespaced, namespaced, "{}", kind.kind);
    }

    /// `object` read as a `T` and written again, as the scaffolded test sends it.
    pub(super) fn round_trip<T: Serialize + DeserializeOwned>(object: Value) -> Value {
        let typed: T =
            serde_json::from_value(object.clone()).unwrap_or_else(|err| panic!("{object}: {err}"));
        serde_json::to_value(typed).unwrap()
    }

    /// The object the scaffolded test of `kind` creates, in `namespace`.
    fn object(kind: &CoreKind, namespace: &str) -> Value {
        let mut object = Map::new();
        object.insert("apiVersion".into(), kind.api_version().into());
        object.insert("kind".into(), kind.kind.into());
        object.extend(kind.sample_fields());
        let text = serde_json::to_string(&object)
            .unwrap()
            .replace(&format!("\"{NAMESPACE}\""), &format!("\"{namespace}\""));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn the_table_is_k8s_openapis_and_every_sample_is_a_value_of_its_type() {
        assert_eq!(TYPES.len(), CORE_KINDS.len());
        for (kind, (check, round_trip)) in CORE_KINDS.iter().zip(TYPES) {
            check(kind);
            round_trip(object(kind, "default"));
        }
    }

    #[test]
    fn groups_are_spelt_as_kubebuilder_spells_them() {
        let deployment = find("apps", "v1", "Deployment").unwrap();
        assert_eq!(
            deployment.type_path(),
            "k8s_openapi::api::apps::v1::Deployment"
        );
        assert_eq!((deployment.group(), deployment.domain()), ("apps", ""));
        let pod = find("core", "v1", "Pod").unwrap();
        assert_eq!((pod.api_version(), pod.rbac_group()), ("v1".into(), "core"));
        for group in ["networking", "networking.k8s.io"] {
            let ingress = find(group, "v1", "Ingress").unwrap();
            assert_eq!(
                (ingress.group(), ingress.domain()),
                ("networking", "k8s.io")
            );
            assert_eq!(ingress.rbac_group(), "networking.k8s.io");
        }
        assert!(is_core_group("rbac.authorization") && !is_core_group("ship"));
        assert_eq!(
            find("apps", "v1", "Deploymnet").unwrap_err().to_string(),
            "k8s-openapi's v1_37 API has no kind Deploymnet in apps/v1 (its kinds: \
             ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet)"
        );
        assert_eq!(
            find("resource", "v1beta2", "ResourceClaim")
                .unwrap_err()
                .to_string(),
            "resource.k8s.io has no GA version v1beta2 in k8s-openapi's v1_37 API (it has v1); \
             for an alpha or beta version, pass --external-api-path \
             k8s_openapi::api::resource::v1beta2 --external-api-domain k8s.io --group resource"
        );
        assert!(find("core", "v1", "ComponentStatus").is_err());
    }

    /// Every sample is an object the apiserver creates: the scaffolded tests' first step.
    #[test]
    fn the_apiserver_creates_every_sample() {
        let plane = kubebuilder_envtest::shared();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let client = plane.client().await.unwrap();
            let mut refused = Vec::new();
            for (kind, (_, round_trip)) in CORE_KINDS.iter().zip(TYPES) {
                // A namespace each: some kinds share their objects (HorizontalPodAutoscaler
                // v1 and v2, both Events).
                let namespace = plane.create_namespace("sample").await.unwrap();
                let resource = ApiResource::from_gvk_with_plural(
                    &GroupVersionKind::gvk(kind.api_group, kind.version, kind.kind),
                    kind.plural,
                );
                let api: Api<DynamicObject> = if kind.namespaced {
                    Api::namespaced_with(client.clone(), &namespace, &resource)
                } else {
                    Api::all_with(client.clone(), &resource)
                };
                let sent: DynamicObject =
                    serde_json::from_value(round_trip(object(kind, &namespace))).unwrap();
                if let Err(err) = api.create(&PostParams::default(), &sent).await {
                    refused.push(format!("{} {}: {err}", kind.api_version(), kind.kind));
                }
            }
            assert!(refused.is_empty(), "refused:\n{}", refused.join("\n"));
        });
    }
}

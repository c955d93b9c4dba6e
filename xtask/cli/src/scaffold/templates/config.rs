//! The hand-editable files of `config/` (kubebuilder's go/v4 layout) as `init` writes them.
//! This repository's `config/` is the same text rendered for its project name, with its
//! [`WEBHOOK_SECTION`]s turned on and the entries `manifests` and `create` add per kind; a
//! test keeps the two identical. The generated files (CRDs, `rbac/role.yaml`,
//! `webhook/manifests.yaml`, per-kind roles) are `manifests`' job.
//!
//! As in kubebuilder's go/v4 scaffold, a project without webhooks deploys on a cluster
//! without cert-manager: `config/default` leaves the webhooks, cert-manager's certificates
//! and their wiring commented out (the manager then serves its metrics with a self-signed
//! certificate), and `create webhook` turns them on with the first webhook.

/// Each file's path under `config/` and its template (placeholders: `project_name`, and
/// `manager_env` and `manager_namespace_arg`, empty unless the project is namespaced).
pub const FILES: &[(&str, &str)] = &[
    (
        "certmanager/certificate-metrics.yaml",
        r#"# The metrics endpoint's certificate; SERVICE_NAME and SERVICE_NAMESPACE are replaced by
# config/default with the metrics Service's final name and namespace.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: metrics-certs
  namespace: system
spec:
  dnsNames:
  - SERVICE_NAME.SERVICE_NAMESPACE.svc
  - SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: selfsigned-issuer
  secretName: metrics-server-cert
"#,
    ),
    (
        "certmanager/certificate-webhook.yaml",
        r#"# The webhook server's certificate. SERVICE_NAME and SERVICE_NAMESPACE are replaced by
# config/default with the webhook Service's final name and namespace.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: serving-cert
  namespace: system
spec:
  dnsNames:
  - SERVICE_NAME.SERVICE_NAMESPACE.svc
  - SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: selfsigned-issuer
  secretName: webhook-server-cert
"#,
    ),
    (
        "certmanager/issuer.yaml",
        r#"# A self-signed issuer: enough for the apiserver, which is given the CA through
# cert-manager's CA injection (see config/default).
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: selfsigned-issuer
  namespace: system
spec:
  selfSigned: {}
"#,
    ),
    (
        "certmanager/kustomization.yaml",
        r#"# cert-manager (https://cert-manager.io) issues the webhook and metrics serving
# certificates; it must be installed in the cluster before `cargo xtask deploy`.
resources:
- issuer.yaml
- certificate-webhook.yaml
- certificate-metrics.yaml

configurations:
- kustomizeconfig.yaml
"#,
    ),
    (
        "certmanager/kustomizeconfig.yaml",
        r#"# Certificates name their Issuer; keep the reference when namePrefix renames the Issuer.
nameReference:
- kind: Issuer
  group: cert-manager.io
  fieldSpecs:
  - kind: Certificate
    group: cert-manager.io
    path: spec/issuerRef/name
"#,
    ),
    (
        "crd/kustomization.yaml",
        r#"# The CustomResourceDefinitions of the project. `cargo xtask manifests` writes one file per
# kind into bases/ and adds it below when the kind is new; the rest of this file is yours.
resources: []

# The CRDs of kinds that convert call the webhook Service: keep the reference when
# namePrefix renames the Service.
configurations:
- kustomizeconfig.yaml
"#,
    ),
    (
        "crd/kustomizeconfig.yaml",
        r#"# A CRD's conversion webhook names the webhook Service; keep the reference when namePrefix
# renames the Service (kustomize's namespace transformer moves its namespace).
nameReference:
- kind: Service
  fieldSpecs:
  - kind: CustomResourceDefinition
    group: apiextensions.k8s.io
    path: spec/conversion/webhook/clientConfig/service/name
"#,
    ),
    (
        "default/cert_metrics_manager_patch.yaml",
        r#"# Serve metrics with the certificate cert-manager writes into the metrics-server-cert
# Secret instead of a self-signed one.
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs
- op: add
  path: /spec/template/spec/containers/0/volumeMounts/-
  value:
    mountPath: /tmp/k8s-metrics-server/metrics-certs
    name: metrics-certs
    readOnly: true
- op: add
  path: /spec/template/spec/volumes/-
  value:
    name: metrics-certs
    secret:
      secretName: metrics-server-cert
      optional: false
      items:
      - key: ca.crt
        path: ca.crt
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
"#,
    ),
    (
        "default/kustomization.yaml",
        r#"# Everything `cargo xtask deploy` applies and `cargo xtask build-installer` writes to
# dist/install.yaml. Both render it with the kustomize subset built into cargo xtask
# (resources, namespace, namePrefix, labels, JSON 6902 patches, images, replacements,
# nameReference configurations); `kustomize build config/default` gives the same objects.

# Every namespaced object goes to this namespace, every name gets this prefix.
namespace: {{project_name}}-system
namePrefix: {{project_name}}-

labels:
- pairs:
    app.kubernetes.io/name: {{project_name}}
    app.kubernetes.io/managed-by: kustomize

resources:
- ../crd
- ../rbac
- ../manager
# The webhooks' Service and configurations, and the certificates cert-manager issues for
# them and for the metrics endpoint (cert-manager must then run in the cluster).
# [WEBHOOK] `cargo xtask create webhook` uncomments the lines below with the first webhook.
#- ../webhook
#- ../certmanager
- metrics_service.yaml
# With the Prometheus Operator in the cluster:
#- ../prometheus
# Where NetworkPolicy is enforced:
#- ../network-policy

patches:
- path: manager_metrics_patch.yaml
  target:
    kind: Deployment
# The manager serves its metrics with the certificate cert-manager issues (without it, with
# a self-signed one), and the webhooks.
# [WEBHOOK] `cargo xtask create webhook` uncomments the lines below with the first webhook.
#- path: cert_metrics_manager_patch.yaml
#  target:
#    kind: Deployment
#- path: manager_webhook_patch.yaml
#  target:
#    kind: Deployment

# cert-manager wiring: the certificates name the Services they serve, and the webhook
# configurations and the CRDs of kinds that convert ask cert-manager to inject the webhook
# certificate's CA.
# [WEBHOOK] `cargo xtask create webhook` uncomments the lines below with the first webhook.
#replacements:
#- source:
#    kind: Service
#    version: v1
#    name: webhook-service
#    fieldPath: metadata.name
#  targets:
#  - select:
#      kind: Certificate
#      group: cert-manager.io
#      version: v1
#      name: serving-cert
#    fieldPaths:
#    - spec.dnsNames.0
#    - spec.dnsNames.1
#    options:
#      delimiter: .
#      index: 0
#      create: true
#- source:
#    kind: Service
#    version: v1
#    name: webhook-service
#    fieldPath: metadata.namespace
#  targets:
#  - select:
#      kind: Certificate
#      group: cert-manager.io
#      version: v1
#      name: serving-cert
#    fieldPaths:
#    - spec.dnsNames.0
#    - spec.dnsNames.1
#    options:
#      delimiter: .
#      index: 1
#      create: true
#- source:
#    kind: Service
#    version: v1
#    name: controller-manager-metrics-service
#    fieldPath: metadata.name
#  targets:
#  - select:
#      kind: Certificate
#      group: cert-manager.io
#      version: v1
#      name: metrics-certs
#    fieldPaths:
#    - spec.dnsNames.0
#    - spec.dnsNames.1
#    options:
#      delimiter: .
#      index: 0
#      create: true
#- source:
#    kind: Service
#    version: v1
#    name: controller-manager-metrics-service
#    fieldPath: metadata.namespace
#  targets:
#  - select:
#      kind: Certificate
#      group: cert-manager.io
#      version: v1
#      name: metrics-certs
#    fieldPaths:
#    - spec.dnsNames.0
#    - spec.dnsNames.1
#    options:
#      delimiter: .
#      index: 1
#      create: true
#- source:
#    kind: Certificate
#    group: cert-manager.io
#    version: v1
#    name: serving-cert
#    fieldPath: metadata.namespace
#  targets:
#  - select:
#      kind: MutatingWebhookConfiguration
#    fieldPaths:
#    - metadata.annotations.[cert-manager.io/inject-ca-from]
#    options:
#      delimiter: /
#      index: 0
#      create: true
#  - select:
#      kind: ValidatingWebhookConfiguration
#    fieldPaths:
#    - metadata.annotations.[cert-manager.io/inject-ca-from]
#    options:
#      delimiter: /
#      index: 0
#      create: true
#  # The CRDs of kinds that convert (`cargo xtask create webhook --conversion` adds them):
#  # +kubebuilder:scaffold:crd-ca-injection-namespace
#- source:
#    kind: Certificate
#    group: cert-manager.io
#    version: v1
#    name: serving-cert
#    fieldPath: metadata.name
#  targets:
#  - select:
#      kind: MutatingWebhookConfiguration
#    fieldPaths:
#    - metadata.annotations.[cert-manager.io/inject-ca-from]
#    options:
#      delimiter: /
#      index: 1
#      create: true
#  - select:
#      kind: ValidatingWebhookConfiguration
#    fieldPaths:
#    - metadata.annotations.[cert-manager.io/inject-ca-from]
#    options:
#      delimiter: /
#      index: 1
#      create: true
#  # The CRDs of kinds that convert (`cargo xtask create webhook --conversion` adds them):
#  # +kubebuilder:scaffold:crd-ca-injection-name
"#,
    ),
    (
        "default/manager_metrics_patch.yaml",
        r#"# Serve metrics over HTTPS on 8443 (the manager's default is off).
- op: add
  path: /spec/template/spec/containers/0/args/0
  value: --metrics-bind-address=:8443
"#,
    ),
    (
        "default/manager_webhook_patch.yaml",
        r#"# Serve the admission webhooks on 9443 with the certificate cert-manager writes into the
# webhook-server-cert Secret.
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --webhook-cert-path=/tmp/k8s-webhook-server/serving-certs
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --webhook-port=9443
- op: add
  path: /spec/template/spec/containers/0/volumeMounts/-
  value:
    mountPath: /tmp/k8s-webhook-server/serving-certs
    name: webhook-certs
    readOnly: true
- op: add
  path: /spec/template/spec/containers/0/ports/-
  value:
    containerPort: 9443
    name: webhook-server
    protocol: TCP
- op: add
  path: /spec/template/spec/volumes/-
  value:
    name: webhook-certs
    secret:
      secretName: webhook-server-cert
"#,
    ),
    (
        "default/metrics_service.yaml",
        r#"# The manager's metrics endpoint (HTTPS, authenticated and authorized).
apiVersion: v1
kind: Service
metadata:
  labels:
    control-plane: controller-manager
  name: controller-manager-metrics-service
  namespace: system
spec:
  ports:
  - name: https
    port: 8443
    protocol: TCP
    targetPort: 8443
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: {{project_name}}
"#,
    ),
    (
        "manager/kustomization.yaml",
        r#"resources:
- manager.yaml
# `cargo xtask deploy --image <image>` and `cargo xtask build-installer --image <image>`
# replace this image without editing the file.
images:
- name: controller
  newName: controller
  newTag: latest
"#,
    ),
    (
        "manager/manager.yaml",
        r#"apiVersion: v1
kind: Namespace
metadata:
  labels:
    control-plane: controller-manager
    # Pod Security Admission refuses any pod here that breaks the "restricted" standard
    # (the manager's pod below meets it), and warns when a Deployment's template would not.
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
    pod-security.kubernetes.io/warn: restricted
    pod-security.kubernetes.io/warn-version: latest
  name: system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
  labels:
    control-plane: controller-manager
spec:
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: {{project_name}}
  replicas: 1
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/default-container: manager
      labels:
        control-plane: controller-manager
        app.kubernetes.io/name: {{project_name}}
    spec:
      # Runs as a non-root user with the runtime's default seccomp profile (the
      # "restricted" Pod Security Standard).
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: manager
        image: controller:latest
        # Never pull an image the node already has (kind's and the local node's images
        # are loaded, not pulled; `:latest` would otherwise mean Always).
        imagePullPolicy: IfNotPresent{{manager_env}}
        command:
        - /manager
        args:
        - --leader-elect
        - --health-probe-bind-address=:8081{{manager_namespace_arg}}
        # The patches in config/default add ports, certificate mounts and their volumes.
        ports: []
        securityContext:
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - ALL
        livenessProbe:
          httpGet:
            path: /healthz
            port: 8081
          initialDelaySeconds: 15
          periodSeconds: 20
        readinessProbe:
          httpGet:
            path: /readyz
            port: 8081
          initialDelaySeconds: 5
          periodSeconds: 10
        resources:
          limits:
            cpu: 500m
            memory: 128Mi
          requests:
            cpu: 10m
            memory: 64Mi
        volumeMounts: []
      volumes: []
      serviceAccountName: controller-manager
      terminationGracePeriodSeconds: 10
"#,
    ),
    (
        "network-policy/allow-metrics-traffic.yaml",
        r#"# Metrics scrapers must run in a namespace labelled metrics: enabled.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-metrics-traffic
  namespace: system
spec:
  podSelector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: {{project_name}}
  policyTypes:
  - Ingress
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          metrics: enabled
    ports:
    - port: 8443
      protocol: TCP
"#,
    ),
    (
        "network-policy/allow-webhook-traffic.yaml",
        r#"# Admission requests come from the apiserver; label the namespaces it is allowed from
# with webhook: enabled. The policy applies to the pod's port (9443), which the webhook
# Service exposes as 443.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: allow-webhook-traffic
  namespace: system
spec:
  podSelector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: {{project_name}}
  policyTypes:
  - Ingress
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          webhook: enabled
    ports:
    - port: 9443
      protocol: TCP
"#,
    ),
    (
        "network-policy/kustomization.yaml",
        r#"# NetworkPolicies that admit only labelled namespaces to the manager's metrics and
# webhook ports; enable them in config/default when the cluster enforces NetworkPolicy.
resources:
- allow-metrics-traffic.yaml
# [WEBHOOK] `cargo xtask create webhook` uncomments the line below with the first webhook.
#- allow-webhook-traffic.yaml
"#,
    ),
    (
        "prometheus/kustomization.yaml",
        r#"# A ServiceMonitor for the Prometheus Operator; enable it in config/default when the
# cluster runs one.
resources:
- monitor.yaml
"#,
    ),
    (
        "prometheus/monitor.yaml",
        r#"# Scrapes the manager's metrics over HTTPS with the Prometheus service account's token,
# which the manager checks with a TokenReview and a SubjectAccessReview. Bind the
# metrics-reader ClusterRole to that service account.
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  labels:
    control-plane: controller-manager
  name: controller-manager-metrics-monitor
  namespace: system
spec:
  endpoints:
  - path: /metrics
    port: https
    scheme: https
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    tlsConfig:
      # The metrics certificate is self-signed unless cert-manager issues it; to verify
      # it, point `ca` at the metrics-server-cert Secret and drop this line.
      insecureSkipVerify: true
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: {{project_name}}
"#,
    ),
    (
        "rbac/kustomization.yaml",
        r#"# Who the manager runs as and what it may do.
resources:
# The manager's identity and the rules its reconcilers declare with #[kubebuilder::rbac]
# (role.yaml is written by `cargo xtask manifests`).
- service_account.yaml
- role.yaml
- role_binding.yaml
# Leader election among manager replicas.
- leader_election_role.yaml
- leader_election_role_binding.yaml
# The metrics endpoint authenticates and authorizes its scrapers.
- metrics_auth_role.yaml
- metrics_auth_role_binding.yaml
- metrics_reader_role.yaml
# Per kind, roles for cluster admins to hand out; the manager does not use them.
# `cargo xtask manifests` writes them and lists new kinds here.
"#,
    ),
    (
        "rbac/leader_election_role.yaml",
        r#"# Leader election: the manager replicas compete for a Lease in their own namespace.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: leader-election-role
  namespace: system
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - ""
  resources:
  - events
  verbs:
  - create
  - patch
"#,
    ),
    (
        "rbac/leader_election_role_binding.yaml",
        r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: leader-election-rolebinding
  namespace: system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: leader-election-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"#,
    ),
    (
        "rbac/metrics_auth_role.yaml",
        r#"# The metrics endpoint checks each scraper's token (TokenReview) and its right to read
# /metrics (SubjectAccessReview).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-auth-role
rules:
- apiGroups:
  - authentication.k8s.io
  resources:
  - tokenreviews
  verbs:
  - create
- apiGroups:
  - authorization.k8s.io
  resources:
  - subjectaccessreviews
  verbs:
  - create
"#,
    ),
    (
        "rbac/metrics_auth_role_binding.yaml",
        r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: metrics-auth-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: metrics-auth-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"#,
    ),
    (
        "rbac/metrics_reader_role.yaml",
        r#"# Bind this to whatever scrapes the manager's metrics (e.g. Prometheus's service account).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-reader
rules:
- nonResourceURLs:
  - /metrics
  verbs:
  - get
"#,
    ),
    (
        "rbac/role_binding.yaml",
        r#"apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"#,
    ),
    (
        "rbac/service_account.yaml",
        r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: controller-manager
  namespace: system
"#,
    ),
    (
        "samples/kustomization.yaml",
        r#"# Example objects of each kind: `kubectl apply -k config/samples`.
resources: []
"#,
    ),
    (
        "webhook/kustomization.yaml",
        r#"resources:
# Written by `cargo xtask manifests` from the #[kubebuilder::webhook] attributes.
- manifests.yaml
- service.yaml
"#,
    ),
    (
        "webhook/service.yaml",
        r#"# The apiserver calls the webhooks on port 443; the manager serves them on 9443.
apiVersion: v1
kind: Service
metadata:
  name: webhook-service
  namespace: system
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: 9443
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: {{project_name}}
"#,
    ),
];

/// `rbac/role_binding.yaml` of a namespaced project (`init --namespaced`): the manager's
/// rules are a Role in its own namespace (`create api` scopes them there), bound there.
pub const NAMESPACED_ROLE_BINDING: &str = r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: manager-rolebinding
  namespace: system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"#;

/// `manager_env` of a namespaced project: the pod's namespace, for `--namespace`.
pub const NAMESPACED_MANAGER_ENV: &str = "
        env:
        - name: WATCH_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace";

/// `manager_namespace_arg` of a namespaced project: watch only the pod's namespace.
pub const NAMESPACED_MANAGER_ARG: &str = "
        - --namespace=$(WATCH_NAMESPACE)";

/// The comment line (this text, then any) above each section of `config/` that `init` writes
/// commented out, one `#` before each line, and that `create webhook` turns on.
pub const WEBHOOK_SECTION: &str = "# [WEBHOOK]";

/// `text` with the lines of every [`WEBHOOK_SECTION`] uncommented. A section is the run of
/// commented-out YAML right below its comment line (`#` then the line: `#- ../webhook`,
/// `#  target:`); the first line that is none, such as a prose comment (`# ...`), ends it.
/// Uncommenting again changes nothing: a section turned on starts with a YAML line.
pub fn with_webhook_sections(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_section = false;
    for line in text.split_inclusive('\n') {
        match commented_out(line) {
            Some(yaml) if in_section => out.push_str(yaml),
            _ => {
                in_section = line.starts_with(WEBHOOK_SECTION);
                out.push_str(line);
            }
        }
    }
    out
}

/// The YAML line `line` comments out, if it is one: `#` directly before a key, a list item
/// or an indentation (of two spaces at least), where a prose comment has `# ` and a word.
fn commented_out(line: &str) -> Option<&str> {
    let yaml = line.strip_prefix('#')?;
    let prose = yaml.starts_with(' ') && !yaml.starts_with("  ");
    let blank = yaml.trim().is_empty();
    (!prose && !blank).then_some(yaml)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_sections_are_uncommented_once_up_to_the_first_line_of_no_yaml() {
        let text = "a:\n# [WEBHOOK] on with a webhook\n#- b\n#  c: d\n#  # e\n# prose\n#- f\n\
                    #- g\n";
        let on = with_webhook_sections(text);
        assert_eq!(
            on,
            "a:\n# [WEBHOOK] on with a webhook\n- b\n  c: d\n  # e\n# prose\n#- f\n#- g\n"
        );
        assert_eq!(with_webhook_sections(&on), on);
    }
}

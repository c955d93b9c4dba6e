// Package rbacwebhook holds the controller-gen markers that ../rbac_webhook_conformance.rs
// declares again as Rust attributes: controller-gen's role.yaml and manifests.yaml for
// these markers must equal what `kubebuilder::rbac` and `kubebuilder::webhook` render.
package rbacwebhook

// The tutorial's reconciler.
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get

// Normalisation: verbs of one resource united, resources with equal verbs merged, then
// groups with equal resources, `core` and "" both the core group, `*` collapsing verbs.
// +kubebuilder:rbac:groups=core,resources=pods;services,verbs=list;get
// +kubebuilder:rbac:groups=core,resources=pods,verbs=watch;get
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list
// +kubebuilder:rbac:groups=apps;extensions,resources=deployments,verbs=get
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get
// +kubebuilder:rbac:groups=extensions,resources=statefulsets,verbs=get
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;*
// +kubebuilder:rbac:groups=core,resources=configmaps,resourceNames=my-config;other-config,verbs=get;update
// +kubebuilder:rbac:urls=/metrics,verbs=get
// +kubebuilder:rbac:urls=/healthz;/readyz,verbs=get
// +kubebuilder:rbac:urls=/debug/*,verbs=get;post

// Roles per namespace and per role name.
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=get,namespace=infra
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,namespace=infra,roleName=leader-election
// +kubebuilder:rbac:groups=core,resources=events,verbs=create;patch,roleName=events-writer
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=list,namespace=apps

// The tutorial's webhooks.
// +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1

// Every other webhook argument.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=Ignore,matchPolicy=Equivalent,sideEffects=NoneOnDryRun,groups=core,resources=pods,verbs=create;update;delete;connect,versions=v1,name=mpod.example.com,admissionReviewVersions=v1;v1beta1,reinvocationPolicy=IfNeeded,timeoutSeconds=5,serviceName=hooks,serviceNamespace=hook-system,servicePort=8443
// +kubebuilder:webhook:url="https://hooks.example.com/validate",mutating=false,failurePolicy=ignore,matchPolicy=exact,sideEffects=none,groups=apps,resources=deployments;statefulsets,verbs=*,versions=v1;v1beta1,name=vapps.example.com,admissionReviewVersions=v1,timeoutSeconds=30,webhookVersions=v1
// +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=Fail,sideEffects=None,groups=apps,resources=deployments,verbs=CREATE,versions=v1,name=adeployment.example.com,admissionReviewVersions=v1,reinvocationPolicy=never
// +kubebuilder:webhookconfiguration:mutating=true,name=my-mutating-configuration

// patch (controller-gen v0.22 and later): the fields no argument sets, a null removing one,
// and a new name, which the entries are sorted by.
// +kubebuilder:webhook:path=/validate-apps-v1-replicaset,mutating=false,failurePolicy=Fail,sideEffects=None,groups=apps,resources=replicasets,verbs=create,versions=v1,name=vreplicaset.example.com,admissionReviewVersions=v1,timeoutSeconds=10,patch=`{"namespaceSelector":{"matchLabels":{"webhooks":"enabled"}},"objectSelector":{"matchExpressions":[{"key":"tier","operator":"In","values":["frontend","backend"]}]},"matchConditions":[{"name":"not-kube-system","expression":"request.namespace != 'kube-system'"}],"timeoutSeconds":null}`
// +kubebuilder:webhook:path=/mutate-apps-v1-replicaset,mutating=true,failurePolicy=Fail,sideEffects=None,groups=apps,resources=replicasets,verbs=create,versions=v1,name=mreplicaset.example.com,admissionReviewVersions=v1,patch=`{"name":"a-replicaset.example.com","clientConfig":{"service":{"port":9443}}}`

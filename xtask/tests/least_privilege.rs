//! Least privilege: the generated `config/rbac/role.yaml` (what the reconciler's
//! `#[kubebuilder::rbac]` attributes declare), bound to a service account, lets a client
//! impersonating that account make every call the CronJob controller makes, and nothing
//! the controller does not need.
//!
//! The controller's calls: get, list and watch CronJobs; update and patch them (and their
//! status subresource, read back with get); create Jobs owned by a CronJob with
//! `blockOwnerDeletion` (which needs update on `cronjobs/finalizers` where the
//! OwnerReferencesPermissionEnforcement admission plugin runs); get, list, watch and delete
//! Jobs (background propagation) and read their status; create and patch events.k8s.io
//! Events (kube-runtime's `events::Recorder`).

use std::path::{Path, PathBuf};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
    WatchEvent, WatchParams,
};
use serde_json::{Value, json};

const SERVICE_ACCOUNT: &str = "controller-manager";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn documents(path: &Path) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .into_iter()
        .filter(|document| !document.is_null())
        .collect()
}

fn is_forbidden(result: Result<impl std::fmt::Debug, kube::Error>) -> bool {
    matches!(result, Err(kube::Error::Api(status)) if status.code == 403)
}

fn allowed<T>(result: Result<T, kube::Error>, call: &str) -> T {
    result.unwrap_or_else(|error| panic!("the controller's role does not allow {call}: {error}"))
}

#[tokio::test]
async fn the_generated_role_allows_the_controllers_calls_and_nothing_else() {
    let plane = kubebuilder_envtest::shared();
    let admin = plane.client().await.unwrap();
    let namespace = plane.create_namespace("least-privilege").await.unwrap();

    let crds: Vec<CustomResourceDefinition> = documents(
        &workspace().join("config/crd/bases/batch.tutorial.kubebuilder.io_cronjobs.yaml"),
    )
    .into_iter()
    .map(|crd| serde_json::from_value(crd).unwrap())
    .collect();
    plane.install_crds(&crds).await.unwrap();

    // The generated ClusterRole, bound to the manager's service account.
    let roles = documents(&workspace().join("config/rbac/role.yaml"));
    assert_eq!(
        roles.len(),
        1,
        "the controller's rules all belong to one ClusterRole"
    );
    let role: ClusterRole = serde_json::from_value(roles[0].clone()).unwrap();
    let account = ServiceAccount {
        metadata: ObjectMeta {
            name: Some(SERVICE_ACCOUNT.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<ServiceAccount>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    plane
        .grant_cluster_role(&role, &namespace, SERVICE_ACCOUNT)
        .await
        .unwrap();

    let manager = plane
        .client_as_service_account(&namespace, SERVICE_ACCOUNT)
        .await
        .unwrap();
    let cronjob_resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("batch.tutorial.kubebuilder.io", "v1", "CronJob"),
        "cronjobs",
    );
    let job_resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("batch", "v1", "Job"),
        "jobs",
    );
    let event_resource = ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk("events.k8s.io", "v1", "Event"),
        "events",
    );
    let cronjobs: Api<DynamicObject> =
        Api::namespaced_with(manager.clone(), &namespace, &cronjob_resource);
    let all_cronjobs: Api<DynamicObject> = Api::all_with(manager.clone(), &cronjob_resource);
    let jobs: Api<DynamicObject> = Api::namespaced_with(manager.clone(), &namespace, &job_resource);
    let all_jobs: Api<DynamicObject> = Api::all_with(manager.clone(), &job_resource);
    let events: Api<DynamicObject> =
        Api::namespaced_with(manager.clone(), &namespace, &event_resource);

    // CronJobs: create (tests and users do; the role allows it), get, list, watch, update,
    // patch, and the status subresource.
    let cronjob: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "0 0 * * *",
            "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "job", "image": "busybox"}]
            }}}}
        }
    }))
    .unwrap();
    let created = allowed(
        cronjobs.create(&PostParams::default(), &cronjob).await,
        "create cronjobs",
    );
    let fetched = allowed(cronjobs.get("nightly").await, "get cronjobs");
    allowed(
        all_cronjobs.list(&ListParams::default()).await,
        "list cronjobs",
    );
    let mut watch = allowed(
        all_cronjobs
            .watch(&WatchParams::default().timeout(1), "0")
            .await,
        "watch cronjobs",
    )
    .boxed();
    match watch.next().await {
        Some(Ok(WatchEvent::Added(_))) => {}
        other => panic!("watch cronjobs: {other:?}"),
    }
    allowed(
        cronjobs
            .replace("nightly", &PostParams::default(), &fetched)
            .await,
        "update cronjobs",
    );
    let merge = |patch: Value| Patch::Merge(patch);
    allowed(
        cronjobs
            .patch(
                "nightly",
                &PatchParams::default(),
                &merge(json!({"metadata": {"labels": {"a": "b"}}})),
            )
            .await,
        "patch cronjobs",
    );
    let with_status = allowed(cronjobs.get_status("nightly").await, "get cronjobs/status");
    allowed(
        cronjobs
            .replace_status("nightly", &PostParams::default(), &with_status)
            .await,
        "update cronjobs/status",
    );
    allowed(
        cronjobs
            .patch_status(
                "nightly",
                &PatchParams::default(),
                &merge(json!({"status": {"lastScheduleTime": "2026-01-01T00:00:00Z"}})),
            )
            .await,
        "patch cronjobs/status",
    );

    // Jobs: create one owned by the CronJob (as the controller does), then get, list, watch,
    // update, patch, read the status and delete it.
    let job: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "nightly-1767225600",
            "ownerReferences": [{
                "apiVersion": "batch.tutorial.kubebuilder.io/v1",
                "kind": "CronJob",
                "name": "nightly",
                "uid": created.metadata.uid.clone().unwrap(),
                "controller": true,
                "blockOwnerDeletion": true
            }]
        },
        "spec": {"template": {"spec": {
            "restartPolicy": "OnFailure",
            "containers": [{"name": "job", "image": "busybox"}]
        }}}
    }))
    .unwrap();
    allowed(
        jobs.create(&PostParams::default(), &job).await,
        "create jobs",
    );
    let fetched_job = allowed(jobs.get("nightly-1767225600").await, "get jobs");
    allowed(all_jobs.list(&ListParams::default()).await, "list jobs");
    let _events = allowed(
        all_jobs
            .watch(&WatchParams::default().timeout(1), "0")
            .await,
        "watch jobs",
    );
    allowed(
        jobs.replace("nightly-1767225600", &PostParams::default(), &fetched_job)
            .await,
        "update jobs",
    );
    allowed(
        jobs.patch(
            "nightly-1767225600",
            &PatchParams::default(),
            &merge(json!({"metadata": {"annotations": {"x": "y"}}})),
        )
        .await,
        "patch jobs",
    );
    allowed(
        jobs.get_status("nightly-1767225600").await,
        "get jobs/status",
    );
    allowed(
        jobs.delete("nightly-1767225600", &DeleteParams::background())
            .await,
        "delete jobs",
    );

    // Events, as kube-runtime's Recorder writes them.
    let event: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "nightly.1"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "cronjob-controller",
        "reportingInstance": "cronjob-controller-1",
        "action": "Reconciling",
        "reason": "JobCreated",
        "type": "Normal",
        "regarding": {"apiVersion": "batch.tutorial.kubebuilder.io/v1", "kind": "CronJob", "name": "nightly", "namespace": namespace}
    }))
    .unwrap();
    allowed(
        events.create(&PostParams::default(), &event).await,
        "create events",
    );
    allowed(
        events
            .patch(
                "nightly.1",
                &PatchParams::default(),
                &merge(json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}})),
            )
            .await,
        "patch events",
    );
    allowed(
        cronjobs
            .delete("nightly", &DeleteParams::background())
            .await,
        "delete cronjobs",
    );

    // Outside the role: Secrets, Pods, core Events, other namespaces' configuration.
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("credentials".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    Api::<Secret>::namespaced(admin.clone(), &namespace)
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(manager.clone(), &namespace);
    assert!(is_forbidden(
        secrets
            .delete("credentials", &DeleteParams::default())
            .await
    ));
    assert!(is_forbidden(secrets.get("credentials").await));
    assert!(is_forbidden(secrets.list(&ListParams::default()).await));
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::all(manager.clone());
    assert!(is_forbidden(pods.list(&ListParams::default()).await));
    let core_events: Api<k8s_openapi::api::core::v1::Event> =
        Api::namespaced(manager.clone(), &namespace);
    assert!(is_forbidden(core_events.list(&ListParams::default()).await));
    let crds: Api<CustomResourceDefinition> = Api::all(manager.clone());
    assert!(is_forbidden(
        crds.delete(
            "cronjobs.batch.tutorial.kubebuilder.io",
            &DeleteParams::default()
        )
        .await
    ));
    // A Job's controller may delete Jobs, not collections of them.
    assert!(is_forbidden(
        jobs.delete_collection(&DeleteParams::default(), &ListParams::default())
            .await
    ));
}

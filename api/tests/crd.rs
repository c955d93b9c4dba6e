//! The CronJob CRD as `cargo xtask manifests` writes it: a checked-in snapshot (regenerate
//! with `UPDATE_SNAPSHOTS=1 cargo test -p api --test crd`), and the link-time registry.

use api::v1::{ConcurrencyPolicy, CronJob, CronJobSpec, CronJobStatus};
use k8s_openapi::api::batch::v1::JobTemplateSpec;
use serde_json::json;

const SNAPSHOT: &str = "tests/snapshots/batch.tutorial.kubebuilder.io_cronjobs.yaml";

fn rendered() -> String {
    let crds = kubebuilder::crd::all(&kubebuilder::crd::Options::default())
        .expect("the API's versions merge");
    let cronjob = crds
        .iter()
        .find(|crd| crd.metadata.name.as_deref() == Some("cronjobs.batch.tutorial.kubebuilder.io"))
        .expect("CronJob is registered");
    kubebuilder::yaml::to_documents([&serde_json::to_value(cronjob).unwrap()])
}

#[test]
fn the_cronjob_crd_matches_its_snapshot() {
    let yaml = rendered();
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(SNAPSHOT, &yaml).unwrap();
    }
    let expected = std::fs::read_to_string(SNAPSHOT).expect("the snapshot exists");
    assert!(
        yaml == expected,
        "the CRD differs from {SNAPSHOT}; rerun with UPDATE_SNAPSHOTS=1 and review the diff"
    );
}

#[test]
fn every_version_of_the_api_is_registered_with_one_storage_version() {
    let crds = kubebuilder::crd::all(&kubebuilder::crd::Options::default()).unwrap();
    let cronjob = crds
        .iter()
        .find(|crd| crd.spec.names.kind == "CronJob")
        .unwrap();
    let versions: Vec<(&str, bool)> = cronjob
        .spec
        .versions
        .iter()
        .map(|v| (v.name.as_str(), v.storage))
        .collect();
    // v2 converts through v1, the storage version.
    assert_eq!(versions, [("v1", true), ("v2", false)]);
    assert!(cronjob.spec.versions.iter().all(|v| v.served));
    assert_eq!(
        cronjob
            .spec
            .conversion
            .as_ref()
            .map(|c| c.strategy.as_str()),
        Some("Webhook")
    );
    assert_eq!(
        cronjob.spec.names.short_names.as_deref(),
        Some(&["cj".to_owned()][..])
    );
    assert_eq!(
        cronjob.spec.names.categories.as_deref(),
        Some(&["all".to_owned()][..])
    );
}

#[test]
fn max_desc_len_zero_drops_every_description() {
    let crds = kubebuilder::crd::all(&kubebuilder::crd::Options {
        max_desc_len: Some(0),
        ..Default::default()
    })
    .unwrap();
    let yaml = serde_json::to_string(&crds).unwrap();
    assert!(!yaml.contains("\"description\""));
}

#[test]
fn objects_serialize_with_kubernetes_conventions() {
    let mut cronjob = CronJob::new(
        "nightly",
        CronJobSpec {
            schedule: "0 0 * * *".into(),
            time_zone: None,
            starting_deadline_seconds: None,
            concurrency_policy: Some(ConcurrencyPolicy::Forbid),
            suspend: None,
            job_template: JobTemplateSpec::default(),
            successful_jobs_history_limit: Some(3),
            failed_jobs_history_limit: None,
        },
    );
    cronjob.status = Some(CronJobStatus::default());
    let value = serde_json::to_value(&cronjob).unwrap();
    assert_eq!(
        value,
        json!({
            "apiVersion": "batch.tutorial.kubebuilder.io/v1",
            "kind": "CronJob",
            "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 0 * * *", "concurrencyPolicy": "Forbid", "jobTemplate": {},
                     "successfulJobsHistoryLimit": 3},
            "status": {}
        })
    );
    let back: CronJob = serde_json::from_value(value).unwrap();
    assert_eq!(back, cronjob);
}

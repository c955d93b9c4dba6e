//! Apply configurations (`apply_configuration`, controller-gen's `+kubebuilder:ac:generate`)
//! sent by two field managers through the applier, on a real apiserver: each owns only the
//! fields it sets, a list of map type merges by key, a field dropped from one manager's
//! configuration is removed, and a field another manager owns is a conflict unless forced.

use kube::ResourceExt as _;
use kube::api::Api;
use kubebuilder::apply::ApplyConfiguration;
use kubebuilder_envtest::shared;
use kubebuilder_runtime::apply::Applier;
use kubebuilder_runtime::is_conflict;
use serde_json::json;

/// A rocket: where it goes, its crew and its stages.
#[kubebuilder::resource(
    group = "apply.kubebuilder.io",
    version = "v1",
    kind = "Rocket",
    status = RocketStatus,
    subresource(status),
)]
#[kubebuilder::schema(apply_configuration)]
pub struct RocketSpec {
    /// Where it goes.
    pub destination: String,
    /// How many fly.
    #[kubebuilder(optional)]
    pub crew: Option<i32>,
    /// Its stages, merged by name.
    #[kubebuilder(optional, list_type = "map", list_map_key = "name")]
    pub stages: Vec<Stage>,
    /// What it burns.
    #[kubebuilder(optional)]
    pub fuel: Option<Fuel>,
}

/// A stage.
#[kubebuilder::schema(apply_configuration)]
pub struct Stage {
    /// Its name.
    pub name: String,
    /// Its thrust.
    #[kubebuilder(optional)]
    pub thrust: Option<i64>,
}

/// A fuel.
#[kubebuilder::schema(apply_configuration)]
pub enum Fuel {
    /// Kerosene.
    Kerosene,
    /// Hydrogen.
    Hydrogen,
}

/// What the rocket does.
#[kubebuilder::schema(apply_configuration)]
#[derive(Default)]
pub struct RocketStatus {
    /// Its phase.
    #[kubebuilder(optional)]
    pub phase: Option<String>,
}

fn stage(name: &str, thrust: i64) -> StageApplyConfiguration {
    StageApplyConfiguration::default()
        .with_name(name)
        .with_thrust(thrust)
}

#[test]
fn an_apply_configuration_writes_only_what_is_set() {
    let rocket = RocketApplyConfiguration::new("r")
        .with_namespace("space")
        .with_spec(RocketSpecApplyConfiguration::default().with_crew(3));
    assert_eq!(
        serde_json::to_value(&rocket).unwrap(),
        json!({
            "apiVersion": "apply.kubebuilder.io/v1",
            "kind": "Rocket",
            "metadata": {"name": "r", "namespace": "space"},
            "spec": {"crew": 3},
        })
    );
    let status = RocketStatusApplyConfiguration::default().with_phase("Launched");
    assert_eq!(
        serde_json::to_value(&status).unwrap(),
        json!({"phase": "Launched"})
    );
    fn applies<A: ApplyConfiguration<Kind = Rocket>>(_: &A) {}
    applies(&rocket);
}

#[tokio::test]
async fn two_field_managers_apply_configurations_and_own_what_they_set() {
    let plane = shared();
    plane.install_crds(&[Rocket::crd()]).await.unwrap();
    let namespace = plane.create_namespace("ac").await.unwrap();
    let api: Api<Rocket> = Api::namespaced(plane.client().await.unwrap(), &namespace);
    let navigator = Applier::new("navigator");
    let engineer = Applier::new("engineer").without_force();

    let course = RocketSpecApplyConfiguration::default()
        .with_destination("moon")
        .with_stages(vec![stage("first", 10)]);
    navigator
        .apply(&api, &RocketApplyConfiguration::new("r").with_spec(course))
        .await
        .unwrap();
    let crew = RocketSpecApplyConfiguration::default()
        .with_crew(3)
        .with_fuel(Fuel::Hydrogen)
        .with_stages(vec![stage("second", 20)]);
    let rocket = engineer
        .apply(
            &api,
            &RocketApplyConfiguration::new("r").with_spec(crew.clone()),
        )
        .await
        .unwrap();
    assert_eq!(rocket.spec.destination, "moon");
    assert_eq!(
        (rocket.spec.crew, rocket.spec.fuel),
        (Some(3), Some(Fuel::Hydrogen))
    );
    let names: Vec<&str> = rocket.spec.stages.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["first", "second"], "merged by name");
    assert_eq!(
        owned_spec_fields(&rocket, "navigator"),
        ["f:destination", "f:stages"]
    );
    assert_eq!(
        owned_spec_fields(&rocket, "engineer"),
        ["f:crew", "f:fuel", "f:stages"]
    );

    // The navigator no longer sets its stage: it is removed, the engineer's stays.
    let course = RocketSpecApplyConfiguration::default().with_destination("moon");
    let rocket = navigator
        .apply(&api, &RocketApplyConfiguration::new("r").with_spec(course))
        .await
        .unwrap();
    let names: Vec<&str> = rocket.spec.stages.iter().map(|s| &*s.name).collect();
    assert_eq!(names, ["second"]);

    // The destination is the navigator's: a conflict for the engineer, unless forced.
    let detour = crew.with_destination("mars");
    let refused = engineer
        .apply(
            &api,
            &RocketApplyConfiguration::new("r").with_spec(detour.clone()),
        )
        .await
        .unwrap_err();
    assert!(is_conflict(&refused), "{refused}");
    assert_eq!(api.get("r").await.unwrap().spec.destination, "moon");
    let rocket = Applier::new("engineer")
        .apply(&api, &RocketApplyConfiguration::new("r").with_spec(detour))
        .await
        .unwrap();
    assert_eq!(rocket.spec.destination, "mars");

    // A status configuration through the status subresource.
    let launched = RocketStatusApplyConfiguration::default().with_phase("Launched");
    let rocket = Applier::new("reporter")
        .apply_status(&api, "r", &launched)
        .await
        .unwrap();
    assert_eq!(rocket.status.unwrap().phase.as_deref(), Some("Launched"));
}

/// The `f:` keys under `spec` of `manager`'s managed fields.
fn owned_spec_fields(rocket: &Rocket, manager: &str) -> Vec<String> {
    let entry = rocket
        .managed_fields()
        .iter()
        .find(|entry| entry.manager.as_deref() == Some(manager))
        .unwrap_or_else(|| panic!("{manager} owns nothing"));
    let fields = &entry.fields_v1.as_ref().unwrap().0;
    let mut keys: Vec<String> = fields["f:spec"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|key| key.starts_with("f:"))
        .cloned()
        .collect();
    keys.sort();
    keys
}

//! `apply_configuration` (`+kubebuilder:ac:generate`): a struct's twin with every field
//! optional and a `with_<field>` builder, written under the fields' JSON names (renames,
//! flattened fields and bytes as the struct itself writes them); a kind's with `apiVersion`,
//! `kind` and metadata; unit enums, enums with data and newtypes applied as themselves.
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use kubebuilder::apply::{ApplyConfiguration, Configure};
use serde_json::json;

/// A ship.
#[kubebuilder::resource(group = "ac.example.com", version = "v1", kind = "Ship", status = ShipStatus)]
#[kubebuilder::schema(apply_configuration)]
pub struct ShipSpec {
    /// Its name on the hull.
    pub hull_name: String,
    /// Renamed.
    #[serde(rename = "crewSize")]
    #[kubebuilder(optional)]
    pub crew: Option<i32>,
    /// Cabins by deck.
    #[kubebuilder(optional)]
    pub cabins: BTreeMap<String, Cabin>,
    /// Flattened.
    #[serde(flatten)]
    pub engine: Engine,
    /// Bytes, in base64.
    #[kubebuilder(optional)]
    pub logo: Option<Vec<u8>>,
    /// A Kubernetes type, applied as itself.
    #[kubebuilder(optional)]
    pub template: Option<PodTemplateSpec>,
    /// A unit enum.
    #[kubebuilder(optional)]
    pub flag: Option<Flag>,
    /// A newtype.
    #[kubebuilder(optional)]
    pub knots: Option<Knots>,
    /// Raw identifiers keep their name.
    #[kubebuilder(optional)]
    pub r#type: Option<String>,
    /// Schemaless, of a type that is no API type: applied whole.
    #[kubebuilder(optional, validation(schemaless))]
    pub cargo: Option<Cargo>,
}

/// No API type.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Cargo {
    /// Its weight.
    pub tons: i32,
}

/// A cabin.
#[kubebuilder::schema(apply_configuration)]
pub struct Cabin {
    /// Its berths.
    pub berths: i32,
    /// Without `apply_configuration`: applied whole.
    #[kubebuilder(optional)]
    pub door: Option<Door>,
}

/// A door.
#[kubebuilder::schema]
pub struct Door {
    /// Its width.
    pub width: i32,
    /// Its height.
    pub height: i32,
}

/// The engine, flattened into the spec.
#[kubebuilder::schema(apply_configuration)]
pub struct Engine {
    /// Its power.
    #[kubebuilder(optional)]
    pub power: Option<i64>,
}

/// A flag.
#[kubebuilder::schema(apply_configuration)]
pub enum Flag {
    /// Red.
    Red,
    /// Blue.
    Blue,
}

/// Speed.
#[kubebuilder::schema(apply_configuration)]
pub struct Knots(pub i32);

/// The observed state.
#[kubebuilder::schema(apply_configuration)]
#[derive(Default)]
pub struct ShipStatus {
    /// Where it is.
    #[kubebuilder(optional)]
    pub port: Option<String>,
}

fn configured<T: Configure<Configuration = C>, C>() {}

fn main() {
    configured::<Flag, Flag>();
    configured::<Knots, Knots>();
    configured::<Option<Cabin>, CabinApplyConfiguration>();
    configured::<Door, Door>();

    let spec = ShipSpecApplyConfiguration::default()
        .with_crew(12)
        .with_cabins([(
            "a".to_owned(),
            CabinApplyConfiguration::default()
                .with_berths(2)
                .with_door(Door { width: 1, height: 2 }),
        )])
        .with_engine(EngineApplyConfiguration::default().with_power(900))
        .with_logo(vec![1, 2, 3])
        .with_flag(Flag::Blue)
        .with_knots(Knots(20))
        .with_type("schooner")
        .with_cargo(Cargo { tons: 3 });
    let ship = ShipApplyConfiguration::new("s")
        .with_namespace("harbor")
        .with_spec(spec)
        .with_status(ShipStatusApplyConfiguration::default().with_port("Lisbon"));
    assert_eq!(
        serde_json::to_value(&ship).unwrap(),
        json!({
            "apiVersion": "ac.example.com/v1",
            "kind": "Ship",
            "metadata": {"name": "s", "namespace": "harbor"},
            "spec": {
                "crewSize": 12,
                "cabins": {"a": {"berths": 2, "door": {"width": 1, "height": 2}}},
                "power": 900,
                "logo": "AQID",
                "flag": "Blue",
                "knots": 20,
                "type": "schooner",
                "cargo": {"tons": 3},
            },
            "status": {"port": "Lisbon"},
        })
    );
    // Nothing set, nothing written (not even a flattened field's).
    assert_eq!(
        serde_json::to_value(ShipSpecApplyConfiguration::default()).unwrap(),
        json!({})
    );
    fn applies<A: ApplyConfiguration<Kind = Ship>>(_: &A) {}
    applies(&ship);
}

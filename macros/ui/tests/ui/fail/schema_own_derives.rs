//! `#[kubebuilder::schema]` derives Clone, Debug, PartialEq and serde (and Copy, Eq, Hash on
//! unit enums); deriving them again is refused, naming the derive. `Default` and others stay.
use serde::Serialize;

#[kubebuilder::schema]
#[derive(Clone, Default, Serialize)]
pub struct Twice {
    pub a: Option<String>,
}

#[kubebuilder::schema]
#[derive(Copy, std::hash::Hash, PartialOrd)]
pub enum Policy {
    Allow,
}

#[kubebuilder::schema(custom_serde, validation(type = "string"))]
#[derive(serde::Deserialize, Debug)]
pub struct Own(String);

fn main() {}

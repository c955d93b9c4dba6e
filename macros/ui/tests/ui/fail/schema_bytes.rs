//! A `Vec<u8>` the base64 adapter cannot reach would be integers on the wire and base64 in
//! the schema: refused.
pub type Data = Vec<u8>;

#[kubebuilder::schema]
pub struct Hidden {
    pub aliased: Data,
    pub in_array: [Vec<u8>; 2],
    pub aliased_in_map: Option<std::collections::BTreeMap<String, Data>>,
}

fn main() {}

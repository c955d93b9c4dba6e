//! What cannot be an API type.
#[kubebuilder::schema]
pub struct Generic<T> {
    pub value: T,
}

#[kubebuilder::schema]
pub enum WithData {
    A(i32),
    B,
}

#[kubebuilder::schema]
pub struct Pair(i32, i32);

#[kubebuilder::schema]
pub struct Unit;

#[kubebuilder::schema(validation(enum = ["A"]))]
pub enum Listed {
    A,
}

#[kubebuilder::schema]
#[serde(rename_all = "snake_case")]
pub struct Renamed {
    pub some_field: i32,
}

#[kubebuilder::schema]
pub fn not_a_type() {}

fn main() {}

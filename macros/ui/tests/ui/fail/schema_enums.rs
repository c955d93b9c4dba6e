//! Enums whose serde form no structural schema describes.
#[kubebuilder::schema]
#[serde(tag = "t", content = "c")]
pub enum Adjacent {
    A(i32),
}

#[kubebuilder::schema]
#[serde(untagged)]
pub enum UntaggedUnit {
    A(i32),
    B,
}

#[kubebuilder::schema]
pub enum Tuple {
    Point(i32, i32),
}

#[kubebuilder::schema]
pub struct Inner {
    pub t: String,
    pub n: Option<i32>,
}

#[kubebuilder::schema]
#[serde(tag = "kind")]
pub enum PrimitiveInside {
    Number(i32),
}

#[kubebuilder::schema]
#[serde(tag = "t")]
pub enum TagCollides {
    Inner(Inner),
}

#[kubebuilder::schema]
#[serde(untagged)]
pub enum Mixed {
    Flag(bool),
    Name(String),
}

#[kubebuilder::schema]
#[serde(untagged)]
pub enum AnyObject {
    Loose { n: Option<i32> },
    Other { x: String },
}

#[kubebuilder::schema]
#[serde(untagged)]
pub enum Unreachable {
    Short { a: String },
    Long { a: String, b: String },
}

#[kubebuilder::schema]
#[serde(tag = "type")]
pub enum Conflicting {
    A { size: String },
    B { size: i32 },
}

fn main() {}

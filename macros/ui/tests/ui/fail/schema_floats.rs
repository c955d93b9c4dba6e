//! Floats need `allow_dangerous_types`, as in controller-gen.
#[kubebuilder::schema]
pub struct Fields {
    pub ratio: f64,
    pub weights: Vec<Option<f32>>,
    #[kubebuilder(allow_dangerous_types)]
    pub allowed: f64,
}

#[kubebuilder::schema]
pub struct Ratio(f32);

fn main() {}

//! serde reads and writes arrays of at most 32 elements; array markers need an array.
#[kubebuilder::schema]
pub struct Long {
    pub long: [u8; 40],
    pub nested: Vec<[i32; 64]>,
}

#[kubebuilder::schema]
pub struct Marked {
    #[kubebuilder(validation(max_length = 3))]
    pub triple: [String; 3],
}

fn main() {}

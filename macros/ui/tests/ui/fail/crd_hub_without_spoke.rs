//! `hub` needs the version to convert to the hub: `Spoke<Hub>`.
mod v1 {
    /// Spec.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Thing", storageversion)]
    pub struct ThingSpec {
        pub n: i32,
    }
}

mod v2 {
    /// No conversion.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v2", kind = "Thing", hub = super::v1::Thing)]
    pub struct ThingSpec {
        pub n: i32,
    }
}

fn main() {}

//! `hub` names the storage version of the same kind.
mod v1 {
    /// Spec.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Thing")]
    pub struct ThingSpec {
        pub n: i32,
    }

    /// Spec.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Other", storageversion)]
    pub struct OtherSpec {
        pub n: i32,
    }
}

mod v2 {
    /// Not a storage version.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v2", kind = "Thing", hub = super::v1::Thing)]
    pub struct ThingSpec {
        pub n: i32,
    }

    /// Another kind.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v2", kind = "Thing2", hub = super::v1::Other)]
    pub struct Thing2Spec {
        pub n: i32,
    }

    // The conversions `hub =` asks for (crd_hub_without_spoke.rs: without them).
    impl kubebuilder::conversion::Spoke<super::v1::Thing> for Thing {
        fn to_hub(self) -> Result<super::v1::Thing, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(self)
        }

        fn from_hub(hub: super::v1::Thing) -> Result<Self, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(hub)
        }
    }

    impl kubebuilder::conversion::Spoke<super::v1::Other> for Thing2 {
        fn to_hub(self) -> Result<super::v1::Other, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(self)
        }

        fn from_hub(hub: super::v1::Other) -> Result<Self, kubebuilder::conversion::ConversionError> {
            kubebuilder::conversion::by_field_names(hub)
        }
    }
}

fn main() {}

//! `spec_field(...)` and `status_field(...)` hold the markers of the root's properties,
//! not how they are read; each needs its property; a marker's value must fit the type.

mod directive {
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Gadget",
        spec_field(optional),
    )]
    pub struct GadgetSpec {
        pub size: i32,
    }
}

mod old_requiredness {
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Gadget",
        spec_field(validation(required)),
    )]
    pub struct GadgetSpec {
        pub size: i32,
    }
}

mod no_status {
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Gadget",
        status_field(default = {}),
    )]
    pub struct GadgetSpec {
        pub size: i32,
    }
}

mod no_spec {
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Gadget",
        spec = "none",
        spec_field(validation(min_properties = 1)),
    )]
    pub struct Gadget {
        pub size: i32,
    }
}

mod misfit {
    #[kubebuilder::resource(
        group = "example.kubebuilder.io",
        version = "v1",
        kind = "Gadget",
        status = GadgetStatus,
        status_field(default = "Pending"),
    )]
    pub struct GadgetSpec {
        pub size: i32,
    }

    #[kubebuilder::schema]
    pub struct GadgetStatus {
        pub phase: Option<String>,
    }
}

fn main() {}

//! `#[kubebuilder::skip]` (`+kubebuilder:skip`): a version module whose kinds register no CRD
//! version, while their code works as usual.
#[kubebuilder::skip]
pub mod v1alpha1 {
    //! Documented inside, as a module of its own file is (its doc stays the module's).

    /// Spec.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1alpha1", kind = "Draft")]
    pub struct DraftSpec {
        pub size: String,
    }

    pub mod nested {
        /// Spec.
        #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1alpha1", kind = "Sketch")]
        pub struct SketchSpec {
            pub size: String,
        }
    }
}

pub mod v1 {
    /// Spec.
    #[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Draft")]
    pub struct DraftSpec {
        pub size: String,
    }
}

fn main() {
    let crds = kubebuilder::crd::all(&Default::default()).unwrap();
    let names: Vec<String> = crds
        .iter()
        .map(|crd| crd.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["drafts.example.kubebuilder.io"]);
    let versions: Vec<&str> = crds[0].spec.versions.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(versions, ["v1"]);
    // The skipped kinds are still types with their CRD.
    let draft = v1alpha1::Draft::new("d", v1alpha1::DraftSpec { size: "s".into() });
    assert_eq!(draft.spec.size, "s");
    assert_eq!(v1alpha1::nested::Sketch::crd().spec.names.kind, "Sketch");
}

//! `spec` is "required", "optional" or "none"; an optional spec needs `Default`; without a
//! spec the struct is the root object.
/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Odd", spec = "maybe")]
pub struct OddSpec {
    pub n: i32,
}

/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Typo", spec = "optinal")]
pub struct TypoSpec {
    pub n: i32,
}

/// Spec.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Lean", spec = "optional")]
pub struct LeanSpec {
    pub n: Option<i32>,
}

/// Root.
#[kubebuilder::resource(group = "example.kubebuilder.io", version = "v1", kind = "Settings", spec = "none", status = SettingsStatus)]
pub struct SettingsData {
    pub n: i32,
}

#[kubebuilder::schema]
pub struct SettingsStatus {
    pub ready: Option<bool>,
}

fn main() {}

//! Compile-time behaviour of `kubebuilder::register_custom_resource!` (kube-derive kinds
//! registered for `cargo xtask manifests`): the pass case also runs and asserts the CRDs it
//! registered; the mistakes are refused with their exact messages. (`schemars::JsonSchema`
//! of `#[kubebuilder::schema]` types is in `ui_crd.rs`'s `schema_*` cases.)

#[test]
#[ignore = "slow (builds a copy of the dependency tree): `cargo xtask test` runs it beside the other tests"]
fn register_custom_resource() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/kube_*.rs");
    cases.compile_fail("tests/ui/fail/kube_*.rs");
}

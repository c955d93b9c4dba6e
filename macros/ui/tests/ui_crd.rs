//! Compile-time behaviour of `#[kubebuilder::resource]`, `#[kubebuilder::schema]` and
//! `#[kubebuilder(...)]`: every argument accepted (the pass cases also run and assert the
//! schema or CRD they produce) and every mistake refused with its exact message.

#[test]
#[ignore = "slow (builds a copy of the dependency tree): `cargo xtask test` runs it beside the other tests"]
fn crd_and_schema_attributes() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/crd_*.rs");
    cases.pass("tests/ui/pass/schema_*.rs");
    cases.compile_fail("tests/ui/fail/crd_*.rs");
    cases.compile_fail("tests/ui/fail/schema_*.rs");
}

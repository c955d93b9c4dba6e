//! Registering a type whose `#[kubebuilder::webhook]` does not fit the registration is a
//! compile error (a constant evaluated where the registration is instantiated, so
//! `cargo build` reports it; `cargo check` does not evaluate it).

#[test]
#[ignore = "slow (builds a copy of the dependency tree): `cargo xtask test` runs it beside the other tests"]
fn mismatched_registrations_do_not_compile() {
    let cases = trybuild::TestCases::new();
    // A passing case makes trybuild build (not only check) every case.
    cases.pass("tests/ui/registrations_that_fit.rs");
    cases.compile_fail("tests/ui/defaulter_with_a_validating_declaration.rs");
    cases.compile_fail("tests/ui/validator_with_a_mutating_declaration.rs");
    cases.compile_fail("tests/ui/declaration_with_a_url.rs");
}

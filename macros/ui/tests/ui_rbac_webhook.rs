//! Compile-time behaviour of `#[kubebuilder::rbac]`, `#[kubebuilder::webhook]` and
//! `#[kubebuilder::webhook_configuration]`: every argument accepted (the pass cases also
//! run, asserting what was registered) and every mistake refused with its exact message.
//! Among them (`webhook_registered_*`), a type registered with kubebuilder-runtime's
//! `Webhooks` whose webhook does not fit the registration: a constant evaluated where the
//! registration is instantiated, so that `cargo build` reports it (`cargo check` does not
//! evaluate it; the pass cases make trybuild build every case). The runtime's UI cases live
//! here, in the package of every UI case, so that one trybuild project, one dependency
//! build, serves them all.

#[test]
#[ignore = "slow (builds a copy of the dependency tree): `cargo xtask test` runs it beside the other tests"]
fn rbac_and_webhook_attributes() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/rbac_*.rs");
    cases.pass("tests/ui/pass/webhook_*.rs");
    cases.compile_fail("tests/ui/fail/rbac_*.rs");
    cases.compile_fail("tests/ui/fail/webhook_*.rs");
}

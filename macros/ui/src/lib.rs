//! The compile-time behaviour of the attribute macros, tested with trybuild (`tests/`):
//! every argument accepted and every mistake refused with its exact message. A package of
//! its own so that trybuild's copy of the dependency tree holds only what the cases name.

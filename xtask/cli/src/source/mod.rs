//! The declarations read from the sources, without building them: what `manifests` writes
//! after an edit in the time controller-gen takes to read Go markers, where building the
//! declarations binary takes seconds.
//!
//! The crates the declarations binary links (`crates`) are parsed with syn, their
//! attributes read by the macros' own parsers (`kubebuilder-attributes`), each field's type
//! resolved through the modules' items and `use`s (`names`), and the schemas, CRD
//! versions, rules and webhooks built by the same `kubebuilder` functions the generated
//! code calls (`types`, `kinds`), with the same checks the generated `const`s run.
//!
//! The build stays the reference: wherever the reading could differ from what rustc
//! compiles (a `cfg` other than `test`, an item macro, a type the reader does not know, an
//! attribute where it does not look, a mistake the macros would report, a crate outside
//! the ones it reads that could register declarations), [`read`] gives the reason instead
//! and `manifests` builds. A compile error elsewhere in the crates (a function body) is not
//! the reader's to find; the next build reports it.

mod arena;
mod crates;
mod kinds;
mod modules;
mod names;
mod types;

use std::fmt;
use std::path::{Path, PathBuf};

use kubebuilder::crd;
use kubebuilder::declarations::Declarations;

pub use crates::declarations_crates;

/// A crate to read: the name other crates use it by, and its root file.
#[derive(Clone, Debug)]
pub struct Crate {
    /// The crate's name in paths (`api`).
    pub name: String,
    /// `src/lib.rs`, or the file `[lib] path` names.
    pub root: PathBuf,
    /// The names its sources may use for other crates (its dependencies, renamed as its
    /// manifest says), with the crate each names.
    pub externs: Vec<(String, String)>,
}

/// Why the sources were not read: the build decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeferToBuild(pub String);

impl fmt::Display for DeferToBuild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `Err(DeferToBuild)` with a formatted reason.
macro_rules! defer_to_build {
    ($($reason:tt)*) => {
        ::core::result::Result::Err($crate::source::DeferToBuild(::std::format!($($reason)*)))
    };
}
pub(crate) use defer_to_build;

/// The declarations of the workspace at `root`, read from the sources of the crates its
/// declarations binary links.
pub fn read(root: &Path, options: &crd::Options) -> Result<Declarations, DeferToBuild> {
    read_crates(&declarations_crates(root)?, options)
}

/// The declarations of `crates`, read from their sources.
pub fn read_crates(crates: &[Crate], options: &crd::Options) -> Result<Declarations, DeferToBuild> {
    kubebuilder::__private::schema::with_embedded_object_meta(
        options.generate_embedded_object_meta,
        || {
            let sources = modules::Sources::load(crates)?;
            let found = kinds::Found::collect(&sources)?;
            found.declarations(options)
        },
    )
}

#[cfg(test)]
mod tests;

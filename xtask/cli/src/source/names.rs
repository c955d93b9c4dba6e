//! Name resolution as rustc does it for the paths the attributes and fields name: a
//! module's own items first, then its imports (`use`, re-exports included), then its glob
//! imports, then the crates it depends on, then the standard prelude and the primitive
//! types. A path into another crate is kept as a path (`k8s_openapi::api::core::v1::PodSpec`),
//! the standard library's spelled one way (`std::...`), unless that crate is one of those
//! read.

use std::collections::BTreeMap;

use syn::{Item, UseTree};

use super::modules::{ModuleId, Sources};
use super::{DeferToBuild, defer_to_build};

/// What a path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// A module of the crates read.
    Module(ModuleId),
    /// A struct, enum, union or type alias defined in a module read, by name.
    Item(ModuleId, String),
    /// The root object a `#[kubebuilder::resource]` in the module generates (or its list).
    Kind(ModuleId, String),
    /// An item of another crate, at its canonical path.
    External(String),
    /// A primitive type (`i32`).
    Primitive(String),
}

/// The standard prelude's types (and the traits the reader looks for impls of), with their
/// canonical paths.
const PRELUDE: &[(&str, &str)] = &[
    ("Default", "std::default::Default"),
    ("Option", "std::option::Option"),
    ("Box", "std::boxed::Box"),
    ("Vec", "std::vec::Vec"),
    ("String", "std::string::String"),
];

const PRIMITIVES: &[&str] = &[
    "bool", "char", "str", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64",
    "u128", "usize", "f32", "f64",
];

/// Other spellings of the paths the reader knows, as their canonical ones.
const ALIASES: &[(&str, &str)] = &[
    (
        "std::collections::btree_map::BTreeMap",
        "std::collections::BTreeMap",
    ),
    (
        "std::collections::hash_map::HashMap",
        "std::collections::HashMap",
    ),
    ("serde_json::value::Value", "serde_json::Value"),
];

/// Resolution is nested no deeper (import chains, globs re-exporting globs).
const MAX_DEPTH: usize = 32;

/// What one module defines and imports.
#[derive(Default)]
struct Namespace {
    /// Items and child modules.
    defined: BTreeMap<String, Resolved>,
    /// `use a::b::C;` and `use a::b::X as C;`: the name, the path with where it is written.
    imports: BTreeMap<String, Vec<String>>,
    /// `use a::b::*;`.
    globs: Vec<Vec<String>>,
}

/// Resolves paths in the modules of [`Sources`].
pub struct Names<'a> {
    sources: &'a Sources,
    namespaces: Vec<Namespace>,
}

impl<'a> Names<'a> {
    /// The namespaces of every module; `kinds` are the `(module, kind)` root objects the
    /// `#[kubebuilder::resource]`s generate.
    pub fn new(sources: &'a Sources, kinds: &[(ModuleId, String)]) -> Names<'a> {
        let mut namespaces: Vec<Namespace> = sources
            .modules
            .iter()
            .enumerate()
            .map(|(id, module)| namespace(id, &module.items, &module.children))
            .collect();
        for (module, kind) in kinds {
            let defined = &mut namespaces[*module].defined;
            for name in [kind.clone(), format!("{kind}List")] {
                defined.insert(name, Resolved::Kind(*module, kind.clone()));
            }
        }
        Names {
            sources,
            namespaces,
        }
    }

    /// What `path` names in `module`.
    pub fn resolve(&self, module: ModuleId, path: &syn::Path) -> Result<Resolved, DeferToBuild> {
        let mut segments = Vec::new();
        if path.leading_colon.is_some() {
            segments.push("::".to_owned());
        }
        for segment in &path.segments {
            if !segment.arguments.is_none() && segment != path.segments.last().unwrap() {
                return defer_to_build!("the path `{}` has generic arguments inside", tokens(path));
            }
            segments.push(segment.ident.to_string());
        }
        self.resolve_segments(module, &segments, 0)
    }

    fn resolve_segments(
        &self,
        module: ModuleId,
        segments: &[String],
        depth: usize,
    ) -> Result<Resolved, DeferToBuild> {
        if depth > MAX_DEPTH {
            return defer_to_build!("the imports of {} go in circles", self.path_of(module));
        }
        let Some((first, rest)) = segments.split_first() else {
            return defer_to_build!("an empty path in {}", self.path_of(module));
        };
        let mut at = match first.as_str() {
            "::" => {
                let Some((name, rest)) = rest.split_first() else {
                    return defer_to_build!("`::` alone in {}", self.path_of(module));
                };
                return self.walk(self.extern_crate(module, name)?, rest, depth);
            }
            "crate" => Resolved::Module(self.sources.crate_root(module)),
            "self" => Resolved::Module(module),
            "super" => Resolved::Module(self.parent(module)?),
            name => self.in_scope(module, name, depth)?,
        };
        let mut rest = rest;
        // `super::super::x`.
        while let (Resolved::Module(current), Some(("super", tail))) =
            (&at, rest.split_first().map(|(s, t)| (s.as_str(), t)))
        {
            at = Resolved::Module(self.parent(*current)?);
            rest = tail;
        }
        self.walk(at, rest, depth)
    }

    /// Follows `rest` from `at`.
    fn walk(
        &self,
        mut at: Resolved,
        rest: &[String],
        depth: usize,
    ) -> Result<Resolved, DeferToBuild> {
        for segment in rest {
            at = match at {
                Resolved::Module(module) => match self.member(module, segment, depth)? {
                    Some(found) => found,
                    None => {
                        return defer_to_build!("{} has no item `{segment}`", self.path_of(module));
                    }
                },
                Resolved::External(path) => Resolved::External(format!("{path}::{segment}")),
                other => return defer_to_build!("`{segment}` is not an item of {other:?}"),
            };
        }
        Ok(match at {
            Resolved::External(path) => Resolved::External(canonical(&path)),
            other => other,
        })
    }

    /// A name at the start of a path in `module`: its items, imports and globs, then the
    /// crates it depends on, the prelude and the primitives.
    fn in_scope(
        &self,
        module: ModuleId,
        name: &str,
        depth: usize,
    ) -> Result<Resolved, DeferToBuild> {
        if let Some(found) = self.member(module, name, depth)? {
            return Ok(found);
        }
        if let Ok(found) = self.extern_crate(module, name) {
            return Ok(found);
        }
        if let Some((_, path)) = PRELUDE.iter().find(|(prelude, _)| *prelude == name) {
            return Ok(Resolved::External((*path).to_owned()));
        }
        if PRIMITIVES.contains(&name) {
            return Ok(Resolved::Primitive(name.to_owned()));
        }
        defer_to_build!("`{name}` is not in scope in {}", self.path_of(module))
    }

    /// A name `module` defines, imports or glob-imports (what a path through it reaches).
    fn member(
        &self,
        module: ModuleId,
        name: &str,
        depth: usize,
    ) -> Result<Option<Resolved>, DeferToBuild> {
        let namespace = &self.namespaces[module];
        if let Some(found) = namespace.defined.get(name) {
            return Ok(Some(found.clone()));
        }
        if let Some(path) = namespace.imports.get(name) {
            return self.resolve_segments(module, path, depth + 1).map(Some);
        }
        for glob in &namespace.globs {
            match self.resolve_segments(module, glob, depth + 1)? {
                Resolved::Module(target) => {
                    if let Some(found) = self.member(target, name, depth + 1)? {
                        return Ok(Some(found));
                    }
                }
                other => {
                    return defer_to_build!(
                        "a glob import of {other:?} in {}",
                        self.path_of(module)
                    );
                }
            }
        }
        Ok(None)
    }

    /// A crate `module`'s crate depends on, or the standard library; a crate read is
    /// resolved into its modules.
    fn extern_crate(&self, module: ModuleId, name: &str) -> Result<Resolved, DeferToBuild> {
        if ["std", "core", "alloc"].contains(&name) {
            return Ok(Resolved::External("std".to_owned()));
        }
        let krate = self.sources.krate(module);
        let Some((_, target)) = krate.externs.iter().find(|(local, _)| local == name) else {
            return defer_to_build!("`{name}` is not a crate {} depends on", krate.name);
        };
        match self.sources.crates.iter().find(|(c, _)| &c.name == target) {
            Some((_, root)) => Ok(Resolved::Module(*root)),
            None => Ok(Resolved::External(target.clone())),
        }
    }

    fn parent(&self, module: ModuleId) -> Result<ModuleId, DeferToBuild> {
        match self.sources.modules[module].parent {
            Some(parent) => Ok(parent),
            None => defer_to_build!("`super` at the root of {}", self.path_of(module)),
        }
    }

    fn path_of(&self, module: ModuleId) -> &str {
        &self.sources.modules[module].path
    }
}

/// The standard library under one name, and the other spellings of known paths as theirs.
fn canonical(path: &str) -> String {
    let path = match path.split_once("::") {
        Some(("core" | "alloc", rest)) => format!("std::{rest}"),
        _ => path.to_owned(),
    };
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == path)
        .map_or(path, |(_, canonical)| (*canonical).to_owned())
}

fn namespace(id: ModuleId, items: &[Item], children: &[(String, ModuleId)]) -> Namespace {
    let mut namespace = Namespace::default();
    for (name, child) in children {
        namespace
            .defined
            .insert(name.clone(), Resolved::Module(*child));
    }
    for item in items {
        let ident = match item {
            Item::Struct(i) => &i.ident,
            Item::Enum(i) => &i.ident,
            Item::Union(i) => &i.ident,
            Item::Type(i) => &i.ident,
            Item::Use(i) => {
                let mut prefix = Vec::new();
                if i.leading_colon.is_some() {
                    prefix.push("::".to_owned());
                }
                add_imports(&mut namespace, &i.tree, prefix);
                continue;
            }
            _ => continue,
        };
        namespace
            .defined
            .insert(ident.to_string(), Resolved::Item(id, ident.to_string()));
    }
    namespace
}

/// The names a use tree imports, with their paths (`prefix` so far).
fn add_imports(namespace: &mut Namespace, tree: &UseTree, mut prefix: Vec<String>) {
    match tree {
        UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            add_imports(namespace, &path.tree, prefix);
        }
        UseTree::Name(name) if name.ident == "self" => {
            if let Some(last) = prefix.last().cloned() {
                namespace.imports.insert(last, prefix);
            }
        }
        UseTree::Name(name) => {
            prefix.push(name.ident.to_string());
            namespace.imports.insert(name.ident.to_string(), prefix);
        }
        UseTree::Rename(rename) => {
            let alias = rename.rename.to_string();
            if rename.ident != "self" {
                prefix.push(rename.ident.to_string());
            }
            // `use x as _` imports traits for their methods only.
            if alias != "_" {
                namespace.imports.insert(alias, prefix);
            }
        }
        UseTree::Glob(_) => namespace.globs.push(prefix),
        UseTree::Group(group) => {
            for tree in &group.items {
                add_imports(namespace, tree, prefix.clone());
            }
        }
    }
}

fn tokens(path: &syn::Path) -> String {
    quote::ToTokens::to_token_stream(path).to_string()
}

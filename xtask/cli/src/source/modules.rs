//! The module trees of the crates, as rustc would load them: `mod x;` from `x.rs` or
//! `x/mod.rs` (or `#[path]`), inline modules, `cfg(test)` items left out. Anything whose
//! expansion the reader cannot know is refused here: a `cfg` other than `test` on an item
//! that could change what is declared, an item macro, a `kubebuilder` attribute where the
//! reader does not look for one, an import that renames the attributes.

use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens as _;
use syn::visit::Visit;
use syn::{Attribute, Item, Meta};

use super::{Crate, DeferToBuild, defer_to_build};

/// An index into [`Sources::modules`].
pub type ModuleId = usize;

/// Every module of the crates read.
pub struct Sources {
    /// The crates, with their root module.
    pub crates: Vec<(Crate, ModuleId)>,
    /// Every module, roots first.
    pub modules: Vec<Module>,
}

/// One module: its items as written (`cfg(test)` ones left out).
pub struct Module {
    /// The crate it belongs to, an index into [`Sources::crates`].
    pub krate: usize,
    /// The enclosing module; `None` for a crate root.
    pub parent: Option<ModuleId>,
    /// `api::v1::cronjob_types`, for messages.
    pub path: String,
    /// The file holding it.
    pub file: PathBuf,
    /// Inside a `#[kubebuilder::skip]` module: its kinds register no version.
    pub skipped: bool,
    /// The items; a `mod` item without its contents, which are in its own [`Module`].
    pub items: Vec<Item>,
    /// The child modules by name.
    pub children: Vec<(String, ModuleId)>,
}

impl Sources {
    /// Loads and screens every module of `crates`.
    pub fn load(crates: &[Crate]) -> Result<Sources, DeferToBuild> {
        let mut sources = Sources {
            crates: Vec::new(),
            modules: Vec::new(),
        };
        for (index, krate) in crates.iter().enumerate() {
            let root = sources.load_file(index, None, krate.name.clone(), &krate.root, false)?;
            sources.crates.push((krate.clone(), root));
        }
        Ok(sources)
    }

    /// Loads the module in `file`; `mod x;` in it is looked up beside it for a crate root or
    /// a `mod.rs`, else in the directory named after the file.
    fn load_file(
        &mut self,
        krate: usize,
        parent: Option<ModuleId>,
        path: String,
        file: &Path,
        skipped: bool,
    ) -> Result<ModuleId, DeferToBuild> {
        let text = match fs::read_to_string(file) {
            Ok(text) => text,
            Err(error) => return defer_to_build!("reading {}: {error}", file.display()),
        };
        let parsed = match syn::parse_file(&text) {
            Ok(parsed) => parsed,
            Err(error) => return defer_to_build!("{}: {error}", file.display()),
        };
        check_attributes(&parsed, file)?;
        // A file's own `#![cfg(...)]`: as the `mod` item's.
        let items = match cfg(&parsed.attrs) {
            Cfg::On => parsed.items,
            Cfg::Off => Vec::new(),
            Cfg::Unknown => {
                return defer_to_build!("{}: a `#![cfg]` other than `test`", file.display());
            }
        };
        let dir = file.parent().unwrap_or(Path::new("")).to_owned();
        let owns_dir = parent.is_none() || file.file_name().is_some_and(|name| name == "mod.rs");
        let children_dir = if owns_dir {
            dir
        } else {
            dir.join(file.file_stem().unwrap_or_default())
        };
        let location = Location {
            krate,
            file: file.to_owned(),
            children_dir,
        };
        self.add_module(&location, parent, path, items, skipped)
    }

    fn add_module(
        &mut self,
        location: &Location,
        parent: Option<ModuleId>,
        path: String,
        items: Vec<Item>,
        skipped: bool,
    ) -> Result<ModuleId, DeferToBuild> {
        let id = self.modules.len();
        self.modules.push(Module {
            krate: location.krate,
            parent,
            path: path.clone(),
            file: location.file.clone(),
            skipped,
            items: Vec::new(),
            children: Vec::new(),
        });
        let mut kept = Vec::new();
        for item in items {
            match cfg(item_attributes(&item)) {
                Cfg::Off => continue,
                Cfg::Unknown if declares(&item) => {
                    return defer_to_build!(
                        "{}: an item under a `cfg` other than `test` in {path}",
                        location.file.display()
                    );
                }
                _ => {}
            }
            match item {
                Item::Mod(mut module) => {
                    let items = module
                        .content
                        .as_mut()
                        .map(|(_, items)| std::mem::take(items));
                    // Its attributes stay among the items, read as any item's.
                    kept.push(Item::Mod(module.clone()));
                    if let (Some((_, contents)), Some(items)) = (module.content.as_mut(), items) {
                        *contents = items;
                    }
                    let child = self.child_module(location, id, &path, module, skipped)?;
                    let name = self.modules[child]
                        .path
                        .rsplit("::")
                        .next()
                        .unwrap_or_default()
                        .to_owned();
                    self.modules[id].children.push((name, child));
                }
                Item::Macro(item) => check_item_macro(&item, &location.file)?,
                other => kept.push(other),
            }
        }
        self.modules[id].items = kept;
        Ok(id)
    }

    fn child_module(
        &mut self,
        location: &Location,
        parent: ModuleId,
        parent_path: &str,
        module: syn::ItemMod,
        skipped: bool,
    ) -> Result<ModuleId, DeferToBuild> {
        let name = module.ident.to_string();
        let path = format!("{parent_path}::{name}");
        let skipped = skipped || module.attrs.iter().any(|a| is_kubebuilder(a, "skip"));
        let explicit = path_attribute(&module.attrs)?;
        match module.content {
            Some((_, items)) => {
                let children_dir = match &explicit {
                    Some(dir) => location.children_dir.join(dir),
                    None => location.children_dir.join(&name),
                };
                let inner = Location {
                    children_dir,
                    ..location.clone()
                };
                self.add_module(&inner, Some(parent), path, items, skipped)
            }
            None if skipped && module.attrs.iter().any(|a| is_kubebuilder(a, "skip")) => {
                defer_to_build!("`#[kubebuilder::skip]` on `mod {name};`, which rustc refuses")
            }
            None => {
                let file = match explicit {
                    // `#[path]` is relative to the directory of the file it is written in.
                    Some(relative) => location
                        .file
                        .parent()
                        .unwrap_or(Path::new(""))
                        .join(relative),
                    None => {
                        let flat = location.children_dir.join(format!("{name}.rs"));
                        if flat.is_file() {
                            flat
                        } else {
                            location.children_dir.join(&name).join("mod.rs")
                        }
                    }
                };
                self.load_file(location.krate, Some(parent), path, &file, skipped)
            }
        }
    }

    /// The crate a module belongs to.
    pub fn krate(&self, module: ModuleId) -> &Crate {
        &self.crates[self.modules[module].krate].0
    }

    /// The root module of the crate `module` belongs to.
    pub fn crate_root(&self, module: ModuleId) -> ModuleId {
        self.crates[self.modules[module].krate].1
    }
}

/// Where a module's items are, and where its `mod x;` files are.
#[derive(Clone)]
struct Location {
    krate: usize,
    file: PathBuf,
    children_dir: PathBuf,
}

/// What a `cfg` makes of an item, `test` being off (the declarations binary is no test).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Cfg {
    On,
    Off,
    Unknown,
}

/// The item's `#[cfg(...)]`s together.
pub fn cfg(attrs: &[Attribute]) -> Cfg {
    let mut result = Cfg::On;
    for attr in attrs.iter().filter(|a| a.path().is_ident("cfg")) {
        let value = match attr.parse_args::<Meta>() {
            Ok(meta) => predicate(&meta),
            Err(_) => Cfg::Unknown,
        };
        result = match (result, value) {
            (Cfg::Off, _) | (_, Cfg::Off) => Cfg::Off,
            (Cfg::Unknown, _) | (_, Cfg::Unknown) => Cfg::Unknown,
            _ => Cfg::On,
        };
    }
    result
}

fn predicate(meta: &Meta) -> Cfg {
    let nested = |list: &syn::MetaList| -> Option<Vec<Cfg>> {
        list.parse_args_with(syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated)
            .ok()
            .map(|metas| metas.iter().map(predicate).collect())
    };
    match meta {
        Meta::Path(path) if path.is_ident("test") => Cfg::Off,
        Meta::List(list) if list.path.is_ident("not") => match nested(list).as_deref() {
            Some([Cfg::On]) => Cfg::Off,
            Some([Cfg::Off]) => Cfg::On,
            _ => Cfg::Unknown,
        },
        Meta::List(list) if list.path.is_ident("all") => match nested(list) {
            Some(values) if values.contains(&Cfg::Off) => Cfg::Off,
            Some(values) if values.iter().all(|v| *v == Cfg::On) => Cfg::On,
            _ => Cfg::Unknown,
        },
        Meta::List(list) if list.path.is_ident("any") => match nested(list) {
            Some(values) if values.contains(&Cfg::On) => Cfg::On,
            Some(values) if values.iter().all(|v| *v == Cfg::Off) => Cfg::Off,
            _ => Cfg::Unknown,
        },
        _ => Cfg::Unknown,
    }
}

/// Items that can change what is declared when a `cfg` keeps or drops them: the ones that
/// name or define types and modules.
fn declares(item: &Item) -> bool {
    matches!(
        item,
        Item::Mod(_)
            | Item::Use(_)
            | Item::Struct(_)
            | Item::Enum(_)
            | Item::Union(_)
            | Item::Type(_)
            | Item::Macro(_)
            | Item::ExternCrate(_)
    ) || item_attributes(item).iter().any(|a| is_ours(a.path()))
}

/// An item's outer attributes.
pub fn item_attributes(item: &Item) -> &[Attribute] {
    match item {
        Item::Const(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::ExternCrate(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::ForeignMod(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Macro(i) => &i.attrs,
        Item::Mod(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::TraitAlias(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Union(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// `macro_rules!` definitions are read only to see that they write no `kubebuilder`
/// attribute; any other item macro could expand to declarations.
fn check_item_macro(item: &syn::ItemMacro, file: &Path) -> Result<(), DeferToBuild> {
    let name = item
        .mac
        .path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    if name == "macro_rules" {
        if mentions_kubebuilder(item.mac.tokens.clone()) {
            return defer_to_build!(
                "{}: a macro_rules! that writes `kubebuilder` attributes",
                file.display()
            );
        }
        return Ok(());
    }
    defer_to_build!(
        "{}: the item macro `{name}!`, whose expansion is only known to a build",
        file.display()
    )
}

fn mentions_kubebuilder(tokens: proc_macro2::TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "kubebuilder",
        proc_macro2::TokenTree::Group(group) => mentions_kubebuilder(group.stream()),
        _ => false,
    })
}

/// `#[path = "..."]` on a module.
fn path_attribute(attrs: &[Attribute]) -> Result<Option<String>, DeferToBuild> {
    let Some(attr) = attrs.iter().find(|a| a.path().is_ident("path")) else {
        return Ok(None);
    };
    match &attr.meta {
        Meta::NameValue(syn::MetaNameValue {
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(path),
                    ..
                }),
            ..
        }) => Ok(Some(path.value())),
        _ => defer_to_build!("a `#[path]` that is not a string"),
    }
}

/// An attribute path of this crate's attributes: `kubebuilder` (on a field) or
/// `kubebuilder::<name>`.
pub fn is_ours(path: &syn::Path) -> bool {
    path.segments
        .first()
        .is_some_and(|s| s.ident == "kubebuilder")
}

/// `#[kubebuilder::<name>]`.
pub fn is_kubebuilder(attr: &Attribute, name: &str) -> bool {
    let segments = &attr.path().segments;
    segments.len() == 2 && segments[0].ident == "kubebuilder" && segments[1].ident == name
}

/// The attribute macros of the `kubebuilder` crate, which an import could rename.
const ATTRIBUTE_MACROS: &[&str] = &[
    "resource",
    "schema",
    "rbac",
    "webhook",
    "webhook_configuration",
    "skip",
];

/// Every `kubebuilder` attribute in the file stands where the reader looks for them (the
/// outer attributes of module-level items, and the fields and variants of module-level
/// structs and enums), and no import makes them reachable by another name.
fn check_attributes(file: &syn::File, path: &Path) -> Result<(), DeferToBuild> {
    let mut everywhere = Counter::default();
    everywhere.visit_file(file);
    if let Some(reason) = everywhere.refused {
        return defer_to_build!("{}: {reason}", path.display());
    }
    let looked_at = looked_at(&file.items);
    if everywhere.attributes != looked_at {
        return defer_to_build!(
            "{}: a `kubebuilder` attribute inside a function, impl or other item, where the \
             source reader does not look",
            path.display()
        );
    }
    Ok(())
}

/// The `kubebuilder` attributes of module-level items (inline modules included), their
/// fields and variants: the ones the reader reads.
fn looked_at(items: &[Item]) -> usize {
    let ours = |attrs: &[Attribute]| attrs.iter().filter(|a| is_ours(a.path())).count();
    let fields = |fields: &syn::Fields| fields.iter().map(|f| ours(&f.attrs)).sum::<usize>();
    items
        .iter()
        .filter(|item| cfg(item_attributes(item)) != Cfg::Off)
        .map(|item| {
            ours(item_attributes(item))
                + match item {
                    Item::Struct(s) => fields(&s.fields),
                    Item::Enum(e) => e
                        .variants
                        .iter()
                        .map(|v| ours(&v.attrs) + fields(&v.fields))
                        .sum(),
                    Item::Mod(m) => m.content.as_ref().map_or(0, |(_, items)| looked_at(items)),
                    _ => 0,
                }
        })
        .sum()
}

/// Counts `kubebuilder` attributes anywhere outside `cfg(test)` items, and refuses imports
/// of the attribute macros.
#[derive(Default)]
struct Counter {
    attributes: usize,
    refused: Option<String>,
}

impl<'ast> Visit<'ast> for Counter {
    fn visit_item(&mut self, item: &'ast Item) {
        if cfg(item_attributes(item)) != Cfg::Off {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if is_ours(attr.path()) {
            self.attributes += 1;
        }
        if attr.path().is_ident("cfg_attr") && mentions_kubebuilder(attr.meta.to_token_stream()) {
            self.refused = Some("a `cfg_attr` with a `kubebuilder` attribute".to_owned());
        }
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        if item.ident == "kubebuilder" && item.rename.is_some() {
            self.refused = Some("`extern crate kubebuilder` under another name".to_owned());
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if imports_attribute_macro(&item.tree, 0) {
            self.refused = Some(format!(
                "`use {}`, which names a kubebuilder attribute otherwise than \
                 `#[kubebuilder::...]`",
                item.tree.to_token_stream()
            ));
        }
    }
}

/// Whether the use tree imports one of the attribute macros from the `kubebuilder` crate's
/// root, or all of them (`use kubebuilder::*`). `depth` is the segment count so far.
fn imports_attribute_macro(tree: &syn::UseTree, depth: usize) -> bool {
    match tree {
        syn::UseTree::Path(path) if depth == 0 => {
            path.ident == "kubebuilder" && imports_attribute_macro(&path.tree, 1)
        }
        syn::UseTree::Group(group) => group
            .items
            .iter()
            .any(|tree| imports_attribute_macro(tree, depth)),
        _ if depth != 1 => false,
        syn::UseTree::Name(name) => ATTRIBUTE_MACROS.contains(&name.ident.to_string().as_str()),
        syn::UseTree::Rename(rename) => {
            ATTRIBUTE_MACROS.contains(&rename.ident.to_string().as_str())
        }
        syn::UseTree::Glob(_) => true,
        syn::UseTree::Path(_) => false,
    }
}

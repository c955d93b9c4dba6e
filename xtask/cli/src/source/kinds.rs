//! Every attribute of the crates read, parsed by the macros' parsers, and what the
//! registrations they generate would hold: the CRD versions (as `kubebuilder-attributes`'
//! `resource/generate.rs` builds `CustomResource::VERSION`, checks included), the RBAC
//! rules, the webhooks and their configurations.

use std::collections::BTreeMap;
use std::sync::Arc;

use kubebuilder::__private::crd::{self as root, Spec};
use kubebuilder::__private::schema;
use kubebuilder::crd::{self, RootSchema, Version};
use kubebuilder::declarations::Declarations;
use kubebuilder::schema::Shape;
use kubebuilder::{rbac, webhook};
use kubebuilder_attributes::Errors;
use kubebuilder_attributes::resource::{self, KindNames, SpecKind};
use kubebuilder_attributes::schema::{self as parsed, ApiType};
use quote::ToTokens;
use syn::{Attribute, Item};

use super::arena::Arena;
use super::modules::{ModuleId, Sources, is_ours, item_attributes};
use super::names::{Names, Resolved};
use super::types::{Types, refused};
use super::{DeferToBuild, defer_to_build};
use crate::scaffold::names::core_kinds;

/// Attributes an API type, its fields and variants may carry beside ours: none of them
/// changes the item before the attribute macro reads it.
const INERT: &[&str] = &[
    "doc",
    "derive",
    "serde",
    "allow",
    "expect",
    "warn",
    "deny",
    "non_exhaustive",
    "must_use",
    "deprecated",
    "default",
];

/// A `#[kubebuilder::resource]`: its module, its arguments and its spec's name.
struct FoundKind {
    module: ModuleId,
    resource: resource::Resource,
    kind: syn::Ident,
    spec: String,
}

/// What the attributes of the crates read declare.
pub struct Found<'s> {
    sources: &'s Sources,
    api_types: BTreeMap<(ModuleId, String), ApiType>,
    kinds: Vec<FoundKind>,
    rules: Vec<rbac::Rule>,
    webhooks: Vec<(ModuleId, kubebuilder_attributes::webhook::Declaration)>,
    configurations: Vec<webhook::Configuration>,
}

impl<'s> Found<'s> {
    /// Reads every attribute of every module.
    pub fn collect(sources: &'s Sources) -> Result<Found<'s>, DeferToBuild> {
        let mut found = Found {
            sources,
            api_types: BTreeMap::new(),
            kinds: Vec::new(),
            rules: Vec::new(),
            webhooks: Vec::new(),
            configurations: Vec::new(),
        };
        for (module, contents) in sources.modules.iter().enumerate() {
            for item in &contents.items {
                found.item(module, item).map_err(|DeferToBuild(reason)| {
                    DeferToBuild(format!("{}: {reason}", contents.file.display()))
                })?;
            }
        }
        Ok(found)
    }

    /// The attributes of one module-level item, each read as the macro it names.
    fn item(&mut self, module: ModuleId, item: &Item) -> Result<(), DeferToBuild> {
        let attrs = item_attributes(item);
        let mut declares_type = false;
        let mut read_by_resource = false;
        for (at, attr) in attrs.iter().enumerate() {
            if !is_ours(attr.path()) {
                continue;
            }
            let args = arguments(attr);
            let seen = as_expanded(item, at);
            let name = attr.path().segments.last().map(|s| s.ident.to_string());
            match name.as_deref() {
                _ if attr.path().segments.len() != 2 => {
                    return defer_to_build!("`#[{}]` on an item", attr.path().to_token_stream());
                }
                Some("resource") if !declares_type => {
                    declares_type = true;
                    read_by_resource = true;
                    let kind = errors(resource::read(args, seen))?;
                    let spec = kind.spec.ident.to_string();
                    self.add_api_type(module, kind.spec)?;
                    self.kinds.push(FoundKind {
                        module,
                        resource: kind.resource,
                        kind: kind.kind,
                        spec,
                    });
                }
                // The spec's type-level markers, which `resource` read.
                Some("schema") if read_by_resource => {}
                Some("schema") if !declares_type => {
                    declares_type = true;
                    self.add_api_type(module, errors(parsed::read(args, seen))?)?;
                }
                Some("rbac") => {
                    let rule = kubebuilder_attributes::rbac::read(args, &seen.to_token_stream());
                    self.rules.push(errors(rule)?);
                }
                Some("webhook") => {
                    let read = kubebuilder_attributes::webhook::read(args, &seen.to_token_stream());
                    self.webhooks.push((module, errors(read)?));
                }
                // Read with the module tree.
                Some("skip") if matches!(item, Item::Mod(_)) => {}
                Some("webhook_configuration") => {
                    let read = kubebuilder_attributes::webhook::read_configuration(args);
                    self.configurations.push(errors(read)?);
                }
                _ => return defer_to_build!("`#[{}]` here", attr.path().to_token_stream()),
            }
        }
        if declares_type {
            check_inert(item)?;
        } else if has_field_attributes(item) {
            return defer_to_build!(
                "`#[kubebuilder(...)]` in a type without `#[kubebuilder::schema]`"
            );
        }
        Ok(())
    }

    fn add_api_type(&mut self, module: ModuleId, api_type: ApiType) -> Result<(), DeferToBuild> {
        let name = api_type.ident.to_string();
        if self
            .api_types
            .insert((module, name.clone()), api_type)
            .is_some()
        {
            return defer_to_build!("`{name}` is declared twice");
        }
        Ok(())
    }

    /// A kind's names, as its attribute gives them (the spec's doc is the root's default).
    fn names(&self, kind: &FoundKind) -> KindNames {
        let spec = &self.api_types[&(kind.module, kind.spec.clone())];
        kind.resource.names(&kind.kind, &spec.doc)
    }

    /// Evaluates every API type (their checks run whether a kind uses them or not) and
    /// every kind, and renders what they declare.
    pub fn declarations(&self, options: &crd::Options) -> Result<Declarations, DeferToBuild> {
        let kind_names: Vec<(ModuleId, String)> = self
            .kinds
            .iter()
            .map(|k| (k.module, k.kind.to_string()))
            .collect();
        let arena = Arena::default();
        let names = Names::new(self.sources, &kind_names);
        let types = Types::new(&arena, self.sources, &names, &self.api_types);
        for (module, name) in self.api_types.keys() {
            types.api_type(*module, name)?;
        }
        let versions = Versions {
            found: self,
            names: &names,
            types: &types,
        };
        let webhooks = versions.webhooks()?;
        let all = self
            .kinds
            .iter()
            .map(|kind| versions.version(kind))
            .collect::<Result<Vec<_>, _>>()?;
        for (kind, version) in self.kinds.iter().zip(&all) {
            versions.check_hub(kind, version, &all)?;
        }
        let versions: Vec<&Version> = self
            .kinds
            .iter()
            .zip(&all)
            .filter(|(kind, _)| !self.sources.modules[kind.module].skipped)
            .map(|(_, version)| version)
            .collect();
        let crds = crd::merge_all(&versions, options).map_err(|errors| {
            let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
            DeferToBuild(errors.join("; "))
        })?;
        Ok(Declarations {
            crds,
            roles: rbac::roles(&self.rules, rbac::DEFAULT_ROLE_NAME),
            webhooks: webhook::manifests(&webhooks, &self.configurations)
                .map_err(|error| DeferToBuild(error.to_string()))?,
        })
    }
}

/// The versions of the kinds found.
struct Versions<'f, 's> {
    found: &'f Found<'s>,
    names: &'f Names<'f>,
    types: &'f Types<'f>,
}

impl<'f> Versions<'f, '_> {
    /// `CustomResource::VERSION` as `resource/generate.rs` writes it, after its checks.
    fn version(&self, found: &FoundKind) -> Result<Version, DeferToBuild> {
        let resource = &found.resource;
        let names = self.found.names(found);
        let spec = self.types.api_type(found.module, &found.spec)?;
        let status = match &resource.status {
            Some(path) => Some(self.types.typed_path(found.module, path)?),
            None => None,
        };
        self.checks(
            found,
            &names,
            &spec.typed.shape,
            status.as_ref().map(|s| s.shape),
        )?;
        let (spec_own, spec_items) = self.types.render(&resource.spec_field)?;
        let spec_node = schema::field(spec.typed.node.clone(), "", spec_own, spec_items);
        let spec_schema = match resource.spec {
            SpecKind::Required => Spec::Required(spec_node),
            SpecKind::Optional => Spec::Optional(spec_node),
            SpecKind::None => Spec::TopLevel(spec.schema.clone()),
        };
        let (status_own, status_items) = self.types.render(&resource.status_field)?;
        let status_schema =
            status.map(|status| schema::field(status.node, "", status_own, status_items));
        let (root_markers, _) = self.types.render(&resource.root_markers)?;
        let root = root::root_schema(&names.doc, spec_schema, status_schema, root_markers);
        let hub = match &resource.hub {
            Some(hub) => {
                let target = &self.found.kinds[self.hub(found, &hub.value)?];
                Some(self.found.names(target).version.into())
            }
            None => None,
        };
        Ok(crd::Version {
            hub,
            ..resource
                .declared(&names)
                .with_schema(RootSchema::Value(Arc::new(root)))
        })
    }

    /// The webhooks, those declared `for` a kind with its names.
    fn webhooks(&self) -> Result<Vec<webhook::Webhook>, DeferToBuild> {
        let mut webhooks = Vec::new();
        for (module, declaration) in &self.found.webhooks {
            let webhook = match &declaration.for_kind {
                Some(path) => {
                    let [group, version, plural, kind] = self.target(*module, path)?;
                    declaration.for_kind(&group, &version, &plural, &kind)
                }
                None => declaration.webhook.clone(),
            };
            webhooks.push(webhook);
        }
        Ok(webhooks)
    }

    /// The group, version, plural and kind of the kind a webhook is declared `for`: one of
    /// the sources', or one of Kubernetes'.
    fn target(&self, module: ModuleId, path: &syn::Path) -> Result<[String; 4], DeferToBuild> {
        match self.names.resolve(module, path)? {
            Resolved::Kind(kind_module, kind) => {
                let Some(found) = self
                    .found
                    .kinds
                    .iter()
                    .find(|k| k.module == kind_module && k.kind == kind)
                else {
                    return defer_to_build!("`for` names no kind");
                };
                let names = self.found.names(found);
                Ok([names.group, names.version, names.plural, names.kind])
            }
            Resolved::External(path) => match core_kinds::by_type_path(&path) {
                Some(core) => {
                    Ok([core.api_group, core.version, core.plural, core.kind].map(str::to_owned))
                }
                None => {
                    defer_to_build!("a webhook is declared for {path}, not a kind the reader knows")
                }
            },
            _ => defer_to_build!("a webhook is declared `for` something that is not a kind"),
        }
    }

    /// The index of the kind `hub` names.
    fn hub(&self, found: &FoundKind, hub: &syn::Path) -> Result<usize, DeferToBuild> {
        let Resolved::Kind(module, kind) = self.names.resolve(found.module, hub)? else {
            return defer_to_build!("`hub` names no kind");
        };
        match self
            .found
            .kinds
            .iter()
            .position(|k| k.module == module && k.kind == kind)
        {
            Some(index) => Ok(index),
            None => defer_to_build!("`hub` names no kind"),
        }
    }

    /// A version naming a hub: the hub's checks (another version of the kind, the storage
    /// one) and the conversion its registration as a spoke needs. `versions` are every
    /// kind's, in order.
    fn check_hub(
        &self,
        found: &FoundKind,
        version: &Version,
        versions: &[Version],
    ) -> Result<(), DeferToBuild> {
        let Some(hub) = &found.resource.hub else {
            return Ok(());
        };
        let target = self.hub(found, &hub.value)?;
        refused(root::check_hub(
            versions[target].clone(),
            &version.group,
            &version.kind,
        ))?;
        let target = &self.found.kinds[target];
        if !self.found.sources.modules[found.module].skipped && !self.converts(found, target)? {
            return defer_to_build!(
                "{} names {} as its hub, and the sources hold no `impl Spoke<...> for {}`",
                found.kind,
                target.kind,
                found.kind
            );
        }
        Ok(())
    }

    /// The root markers' preconditions and the paths of the printer columns, selectable
    /// fields and scale subresource, as the generated `const`s check them (the hub's:
    /// [`Versions::check_hub`]).
    fn checks(
        &self,
        found: &FoundKind,
        names: &KindNames,
        spec: &Shape<'f>,
        status: Option<Shape<'f>>,
    ) -> Result<(), DeferToBuild> {
        let resource = &found.resource;
        if resource.spec == SpecKind::Optional && !self.has_default(found)? {
            return defer_to_build!(
                "{} has `spec = \"optional\"` and the sources hold no `Default` for {}",
                found.kind,
                found.spec
            );
        }
        self.types.check_markers(&resource.spec_field, *spec)?;
        if let Some(status) = status {
            self.types.check_markers(&resource.status_field, status)?;
        }
        let root = self.root_shape(resource.spec, names, spec, status);
        self.types.check_markers(&resource.root_markers, root)?;
        let paths = resource
            .printer_columns
            .iter()
            .map(|c| ("json_path", &c.json_path))
            .chain(resource.selectable_fields.iter().map(|p| ("json_path", p)))
            .chain(resource.scale.iter().flat_map(|scale| {
                [
                    Some(("spec_path", &scale.spec_path)),
                    Some(("status_path", &scale.status_path)),
                    scale.selector_path.as_ref().map(|p| ("selector_path", p)),
                ]
                .into_iter()
                .flatten()
            }));
        for (what, path) in paths {
            refused(schema::check_json_path(&root, what, &path.value()))?;
        }
        Ok(())
    }

    /// Whether a module of `found`'s crate implements `kubebuilder::conversion::Spoke<hub>`
    /// for it, which its registration as a spoke needs.
    fn converts(&self, found: &FoundKind, hub: &FoundKind) -> Result<bool, DeferToBuild> {
        self.implements(
            found.module,
            "kubebuilder::conversion::Spoke",
            Some(&Resolved::Kind(hub.module, hub.kind.to_string())),
            &Resolved::Kind(found.module, found.kind.to_string()),
        )
    }

    /// Whether the spec derives or implements `Default`, which `spec = "optional"` needs.
    fn has_default(&self, found: &FoundKind) -> Result<bool, DeferToBuild> {
        let derived =
            self.found.sources.modules[found.module]
                .items
                .iter()
                .any(|item| match item {
                    Item::Struct(spec) if spec.ident == found.spec => derives_default(&spec.attrs),
                    _ => false,
                });
        Ok(derived
            || self.implements(
                found.module,
                "std::default::Default",
                None,
                &Resolved::Item(found.module, found.spec.clone()),
            )?)
    }

    /// Whether a module of `module`'s crate holds `impl Trait<argument> for self_type`, the
    /// trait at the canonical path `trait_path`, each path as it resolves.
    fn implements(
        &self,
        module: ModuleId,
        trait_path: &str,
        argument: Option<&Resolved>,
        self_type: &Resolved,
    ) -> Result<bool, DeferToBuild> {
        let sources = self.found.sources;
        let krate = sources.modules[module].krate;
        let trait_name = trait_path.rsplit("::").next().unwrap_or_default();
        let resolve = |module, ty: &syn::Type| -> Result<Option<Resolved>, DeferToBuild> {
            match ty {
                syn::Type::Path(path) if path.qself.is_none() => {
                    self.names.resolve(module, &path.path).map(Some)
                }
                _ => Ok(None),
            }
        };
        for (at, contents) in sources.modules.iter().enumerate() {
            if contents.krate != krate {
                continue;
            }
            for item in &contents.items {
                let Item::Impl(implementation) = item else {
                    continue;
                };
                let Some((path, _)) = &implementation.trait_ else {
                    continue;
                };
                let Some(last) = path.segments.last() else {
                    continue;
                };
                if last.ident != trait_name
                    || self.names.resolve(at, path)? != Resolved::External(trait_path.to_owned())
                    || resolve(at, &implementation.self_ty)?.as_ref() != Some(self_type)
                {
                    continue;
                }
                let written = match &last.arguments {
                    syn::PathArguments::AngleBracketed(arguments) => match arguments.args.first() {
                        Some(syn::GenericArgument::Type(ty)) => resolve(at, ty)?,
                        _ => None,
                    },
                    _ => None,
                };
                if written.as_ref() == argument {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The root object's shape, for its paths and markers.
    fn root_shape(
        &self,
        spec_kind: SpecKind,
        names: &KindNames,
        spec: &Shape<'f>,
        status: Option<Shape<'f>>,
    ) -> Shape<'f> {
        let arena = self.types.arena;
        let kind = arena.text(&names.kind);
        let mut properties = vec![
            ("apiVersion", &root::STRING_FIELD),
            ("kind", &root::STRING_FIELD),
            ("metadata", &root::OBJECT_META),
        ];
        if spec_kind == SpecKind::None {
            return Shape {
                union: arena.shapes([*spec]),
                ..root::root_shape(kind, arena.properties(properties))
            };
        }
        properties.push(("spec", arena.shape(*spec)));
        if let Some(status) = status {
            properties.push(("status", arena.shape(status)));
        }
        root::root_shape(kind, arena.properties(properties))
    }
}

/// The tokens between an attribute's parentheses (none without them).
fn arguments(attr: &Attribute) -> proc_macro2::TokenStream {
    match &attr.meta {
        syn::Meta::List(list) => list.tokens.clone(),
        _ => proc_macro2::TokenStream::new(),
    }
}

/// The item as the attribute macro at `at` receives it: without that attribute, and
/// without the `kubebuilder` attributes before it (which expanded first and are gone).
fn as_expanded(item: &Item, at: usize) -> Item {
    let mut item = item.clone();
    let attrs = match &mut item {
        Item::Struct(i) => &mut i.attrs,
        Item::Enum(i) => &mut i.attrs,
        Item::Union(i) => &mut i.attrs,
        Item::Fn(i) => &mut i.attrs,
        Item::Const(i) => &mut i.attrs,
        Item::Static(i) => &mut i.attrs,
        Item::Impl(i) => &mut i.attrs,
        Item::Trait(i) => &mut i.attrs,
        Item::Type(i) => &mut i.attrs,
        Item::Use(i) => &mut i.attrs,
        _ => return item,
    };
    let mut index = 0;
    attrs.retain(|attr| {
        let keep = index > at || !is_ours(attr.path());
        index += 1;
        keep
    });
    item
}

/// The errors a macro reports: a build shows them.
fn errors<T>(read: Result<T, Errors>) -> Result<T, DeferToBuild> {
    read.map_err(|errors| {
        DeferToBuild(format!(
            "an attribute the macros refuse ({})",
            errors.messages().join("; ")
        ))
    })
}

/// An API type, its fields and its variants carry no attribute that could change them
/// before ours read them (another attribute macro, a `cfg`, a doc comment from a macro);
/// `kubebuilder` attributes stand on the type and its fields, not on variants.
fn check_inert(item: &Item) -> Result<(), DeferToBuild> {
    check_attributes_inert(item_attributes(item), true)?;
    let fields = |fields: &syn::Fields| -> Result<(), DeferToBuild> {
        fields
            .iter()
            .try_for_each(|field| check_attributes_inert(&field.attrs, true))
    };
    match item {
        Item::Struct(item) => fields(&item.fields),
        Item::Enum(item) => item.variants.iter().try_for_each(|variant| {
            check_attributes_inert(&variant.attrs, false)?;
            fields(&variant.fields)
        }),
        _ => Ok(()),
    }
}

fn check_attributes_inert(attrs: &[Attribute], ours_allowed: bool) -> Result<(), DeferToBuild> {
    for attr in attrs {
        let path = attr.path();
        let known = (ours_allowed && is_ours(path)) || INERT.iter().any(|name| path.is_ident(name));
        let literal_doc = !path.is_ident("doc")
            || matches!(
                &attr.meta,
                syn::Meta::NameValue(syn::MetaNameValue {
                    value: syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(_),
                        ..
                    }),
                    ..
                })
            );
        if !known || !literal_doc {
            return defer_to_build!(
                "`#[{}]` in an API type, which the reader does not follow",
                path.to_token_stream()
            );
        }
    }
    Ok(())
}

/// `#[derive(..., Default, ...)]`.
fn derives_default(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|attr| {
            let mut found = false;
            let _ = attr.parse_nested_meta(|meta| {
                found |= meta
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "Default");
                Ok(())
            });
            found
        })
}

/// `#[kubebuilder(...)]` on a field or variant of the item.
fn has_field_attributes(item: &Item) -> bool {
    let ours = |attrs: &[Attribute]| attrs.iter().any(|a| is_ours(a.path()));
    match item {
        Item::Struct(s) => s.fields.iter().any(|f| ours(&f.attrs)),
        Item::Enum(e) => e
            .variants
            .iter()
            .any(|v| ours(&v.attrs) || v.fields.iter().any(|f| ours(&f.attrs))),
        _ => false,
    }
}

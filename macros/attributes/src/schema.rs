//! `#[kubebuilder::schema(...)]`: an API type (struct, newtype, enum) gets the derives of a
//! Kubernetes API type (Clone, Debug, PartialEq, serde with camelCase fields and `None`
//! omitted), its `kubebuilder::schema::Schema` impl and a `schemars::JsonSchema` impl giving
//! the same schema (so that it embeds in kube-derive CRDs). Parse the item into an [`ApiType`]
//! (here), validate and generate (`schema/generate.rs`); on error the item and a stub impl are
//! still emitted, so one mistake gives one message.

mod apply;
mod code;
pub mod evaluate;
mod generate;
mod serde_attrs;

/// serde's `rename_all = "camelCase"` of a field name: the JSON name of a field without `rename`.
pub use serde_attrs::camel_case;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Attribute, Fields, Ident, Item};

use crate::args::{self, Errors};
use crate::docs;
use crate::markers::{self, Markers, Place};
use crate::types;
use serde_attrs::{Container, serde_options};

/// A parsed API type.
pub struct ApiType {
    /// The type's name.
    pub ident: Ident,
    /// Its doc comment, as the schema's description.
    pub doc: String,
    /// Its type-level markers.
    pub markers: Markers,
    /// What kind of schema it has.
    pub shape: Kind,
    /// The item as written, minus our field attributes.
    item: Item,
    /// The derives the user wrote that the attribute adds too (reported).
    own_derives: Vec<String>,
    /// The root object of a kind without a spec: it gets `metadata`, and its serde goes
    /// through the kind's own impls (which write `apiVersion` and `kind`).
    root: bool,
}

/// The kinds of API types, by the schema each gets.
pub enum Kind {
    /// A struct with named fields: an object.
    Struct(Vec<Field>),
    /// A newtype: its field's schema, under the type's name.
    Newtype(Box<Field>),
    /// A unit enum: a string enum of its variants.
    Enum(Vec<String>),
    /// An enum with data.
    Union(Union),
    /// `custom_serde`: the user's serde impls, the schema from the markers alone.
    Custom,
}

/// How serde writes an enum with data.
pub enum Tagging {
    /// serde's default: `{"<variant>": value}`.
    External,
    /// `#[serde(tag = "...")]`: the variant's name under this key, beside its fields.
    Internal(String),
    /// `#[serde(untagged)]`: the variant's value alone.
    Untagged,
}

/// An enum with data.
pub struct Union {
    /// How serde writes the variant.
    pub tagging: Tagging,
    /// The variants, in order.
    pub variants: Vec<Variant>,
}

/// A variant of an enum with data.
pub struct Variant {
    /// The name serde writes.
    pub name: String,
    /// Its doc comment.
    pub doc: String,
    /// What it holds.
    pub fields: VariantFields,
    /// Where it was written.
    pub span: Span,
}

/// What a variant holds.
pub enum VariantFields {
    /// Nothing.
    Unit,
    /// One unnamed field.
    Newtype(Box<Field>),
    /// Named fields.
    Struct(Vec<Field>),
}

/// A field of a struct or of a variant.
pub struct Field {
    /// The Rust name; `None` in a newtype or tuple variant.
    pub ident: Option<Ident>,
    /// The Rust type, as written.
    pub ty: syn::Type,
    /// The name serde writes.
    pub json_name: String,
    /// Its doc comment.
    pub doc: String,
    /// Its markers.
    pub markers: Markers,
    /// `#[serde(flatten)]`.
    pub inline: bool,
    /// The type is an `Option`.
    pub is_option: bool,
    /// `Vec<u8>` written out in the type, which the base64 adapter encodes.
    pub has_bytes: bool,
    /// The user's serde attributes already decide defaulting, skipping or encoding.
    pub serde_handles_absence: bool,
}

impl Field {
    /// Listed in its object's `required`.
    pub fn required(&self) -> bool {
        self.markers.is_required(!self.is_option && !self.inline)
    }
}

/// Entry point of `#[kubebuilder::schema(...)]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = match syn::parse2::<Item>(item) {
        Ok(item) => item,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    match parse_attribute(attr, item, &mut errors) {
        Ok(api_type) => api_type.generate(&errors),
        Err(item) => unusable(*item, &errors),
    }
}

/// Reads `#[kubebuilder::schema(attr)]` on `item` (without that attribute) into its API
/// type, or every mistake found.
pub fn read(attr: TokenStream, item: Item) -> Result<ApiType, Errors> {
    let mut errors = Errors::default();
    match parse_attribute(attr, item, &mut errors) {
        Ok(api_type) => errors.into_result(api_type),
        Err(_) => Err(errors),
    }
}

/// The attribute's type-level markers, then the item.
fn parse_attribute(
    attr: TokenStream,
    item: Item,
    errors: &mut Errors,
) -> Result<ApiType, Box<Item>> {
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let type_markers = markers::parse(&args, Place::Type, errors);
    parse(item, type_markers, errors)
}

/// The errors and the item as written (minus our field attributes), for an item that
/// cannot be an API type: code using it still resolves.
pub fn unusable(mut item: Item, errors: &Errors) -> TokenStream {
    strip_field_attributes(&mut item);
    let compile_errors = errors.to_compile_errors();
    quote!(#compile_errors #item)
}

fn strip_field_attributes(item: &mut Item) {
    let not_ours = |attr: &Attribute| !attr.path().is_ident("kubebuilder");
    match item {
        Item::Struct(s) => s.fields.iter_mut().for_each(|f| f.attrs.retain(not_ours)),
        Item::Enum(e) => e
            .variants
            .iter_mut()
            .flat_map(|v| v.fields.iter_mut())
            .for_each(|f| f.attrs.retain(not_ours)),
        _ => {}
    }
}

/// Reads the item; gives it back when it cannot be an API type at all.
pub fn parse(mut item: Item, markers: Markers, errors: &mut Errors) -> Result<ApiType, Box<Item>> {
    let (ident, attrs, generics) = match &item {
        Item::Struct(s) => (s.ident.clone(), &s.attrs, &s.generics),
        Item::Enum(e) => (e.ident.clone(), &e.attrs, &e.generics),
        other => {
            errors.push(
                other.span(),
                "`#[kubebuilder::schema]` applies to structs, newtypes and enums",
            );
            return Err(Box::new(item));
        }
    };
    if !generics.params.is_empty() {
        errors.push(
            generics.span(),
            "API types cannot be generic: a CRD schema is one concrete type",
        );
        return Err(Box::new(item));
    }
    let doc = docs::description(attrs);
    let container = Container::read(attrs, errors);
    let is_unit_enum =
        matches!(&item, Item::Enum(e) if e.variants.iter().all(|v| v.fields.is_empty()));
    let own_derives = own_derives(attrs, markers.custom_serde.is_some(), is_unit_enum, errors);
    let shape = if markers.custom_serde.is_some() {
        custom_kind(&mut item, errors)
    } else {
        match &mut item {
            Item::Struct(s) => match struct_kind(&mut s.fields, errors) {
                Some(kind) => kind,
                None => return Err(Box::new(item)),
            },
            Item::Enum(e) => enum_kind(e, &container, errors),
            _ => unreachable!("only structs and enums reach here"),
        }
    };
    let api_type = ApiType {
        ident,
        doc,
        markers,
        shape,
        item,
        own_derives,
        root: false,
    };
    api_type.validate(&container, errors);
    Ok(api_type)
}

/// The derives the attribute adds that the user wrote too: each is an error (the two would
/// conflict), and left out of the attribute's own.
fn own_derives(
    attrs: &[Attribute],
    custom_serde: bool,
    unit_enum: bool,
    errors: &mut Errors,
) -> Vec<String> {
    let mut own = Vec::new();
    // `JsonSchema`: the attribute implements it from the CRD schema (see `generate.rs`).
    let mut added = vec!["Clone", "Debug", "PartialEq", "JsonSchema"];
    if !custom_serde {
        added.extend(["Serialize", "Deserialize"]);
    }
    if unit_enum && !custom_serde {
        added.extend(["Copy", "Eq", "Hash"]);
    }
    for attr in attrs.iter().filter(|a| a.path().is_ident("derive")) {
        let _ = attr.parse_nested_meta(|meta| {
            let name = meta
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            if added.contains(&name.as_str()) {
                own.push(name.clone());
                errors.push(
                    meta.path.span(),
                    format!(
                        "`#[kubebuilder::schema]` already derives `{name}`{}; remove it from this `#[derive(...)]`",
                        match name.as_str() {
                            "Serialize" | "Deserialize" => {
                                " (with the serde attributes its schema describes)"
                            }
                            "JsonSchema" => " (from the schema it has in CRDs, markers included)",
                            _ => "",
                        }
                    ),
                );
            }
            Ok(())
        });
    }
    own
}

/// A struct: named fields, or a newtype; `None` for any other shape.
fn struct_kind(fields: &mut Fields, errors: &mut Errors) -> Option<Kind> {
    match fields {
        Fields::Named(fields) => Some(Kind::Struct(
            fields
                .named
                .iter_mut()
                .filter_map(|field| parse_field(field, errors))
                .collect(),
        )),
        Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
            let field = fields.unnamed.first_mut().expect("one field");
            parse_field(field, errors).map(|field| Kind::Newtype(Box::new(field)))
        }
        other => {
            errors.push(
                other.span(),
                "an API struct has named fields, or is a newtype with exactly one field",
            );
            None
        }
    }
}

/// A unit enum is a string enum; any other enum is a union.
fn enum_kind(item: &mut syn::ItemEnum, container: &Container, errors: &mut Errors) -> Kind {
    let all_unit = item
        .variants
        .iter()
        .all(|v| matches!(v.fields, Fields::Unit));
    if all_unit && container.tag.is_none() && !container.untagged {
        let values = item
            .variants
            .iter()
            .map(|v| {
                serde_options(&v.attrs, errors)
                    .rename
                    .unwrap_or_else(|| v.ident.to_string())
            })
            .collect();
        return Kind::Enum(values);
    }
    let tagging = match (&container.tag, container.untagged) {
        (Some(tag), _) => Tagging::Internal(tag.clone()),
        (None, true) => Tagging::Untagged,
        (None, false) => Tagging::External,
    };
    let variants = item
        .variants
        .iter_mut()
        .map(|variant| parse_variant(variant, errors))
        .collect();
    Kind::Union(Union { tagging, variants })
}

fn parse_variant(variant: &mut syn::Variant, errors: &mut Errors) -> Variant {
    let name = serde_options(&variant.attrs, errors)
        .rename
        .unwrap_or_else(|| variant.ident.to_string());
    let doc = docs::description(&variant.attrs);
    let span = variant.span();
    let fields = match &mut variant.fields {
        Fields::Unit => VariantFields::Unit,
        Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
            let field = fields.unnamed.first_mut().expect("one field");
            match parse_field(field, errors) {
                Some(field) => VariantFields::Newtype(Box::new(field)),
                None => VariantFields::Unit,
            }
        }
        Fields::Unnamed(_) => {
            errors.push(
                span,
                "a tuple variant with several fields is a JSON array of mixed types, which no structural schema describes; use a struct variant",
            );
            VariantFields::Unit
        }
        Fields::Named(fields) => VariantFields::Struct(
            fields
                .named
                .iter_mut()
                .filter_map(|field| parse_field(field, errors))
                .collect(),
        ),
    };
    Variant {
        name,
        doc,
        fields,
        span,
    }
}

/// `custom_serde`: the fields are the user's business; markers on them would do nothing.
fn custom_kind(item: &mut Item, errors: &mut Errors) -> Kind {
    let fields: Vec<&mut syn::Field> = match item {
        Item::Struct(s) => s.fields.iter_mut().collect(),
        Item::Enum(e) => e
            .variants
            .iter_mut()
            .flat_map(|v| v.fields.iter_mut())
            .collect(),
        _ => Vec::new(),
    };
    for field in fields {
        for attr in field
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("kubebuilder"))
        {
            errors.push(
                attr.span(),
                "a `custom_serde` type's schema comes from its own markers alone; `#[kubebuilder(...)]` on its fields has no effect",
            );
        }
    }
    strip_field_attributes(item);
    Kind::Custom
}

/// Reads a field and strips its `#[kubebuilder(...)]` attributes; `None` for skipped fields.
fn parse_field(field: &mut syn::Field, errors: &mut Errors) -> Option<Field> {
    let mut args = Vec::new();
    field.attrs.retain(|attr| {
        if !attr.path().is_ident("kubebuilder") {
            return true;
        }
        match args::attribute_args(attr) {
            Ok(parsed) => args.extend(parsed),
            Err(error) => errors.extend(error),
        }
        false
    });
    let markers = markers::parse(&args, Place::Field, errors);
    let serde = serde_options(&field.attrs, errors);
    if serde.skip {
        return None;
    }
    let json_name = serde
        .rename
        .or_else(|| {
            field
                .ident
                .as_ref()
                .map(|ident| camel_case(&ident.to_string()))
        })
        .unwrap_or_default();
    Some(Field {
        ident: field.ident.clone(),
        is_option: types::option_inner(&field.ty).is_some(),
        has_bytes: types::mentions_bytes(&field.ty),
        ty: field.ty.clone(),
        json_name,
        doc: docs::description(&field.attrs),
        markers,
        inline: serde.flatten,
        serde_handles_absence: serde.handles_absence,
    })
}

impl ApiType {
    /// Makes this struct the root object of a kind without a spec (`spec = "none"`).
    pub fn make_root(&mut self) {
        self.root = true;
    }

    /// Every field: of the struct, the newtype, or the enum's variants.
    pub fn fields(&self) -> Vec<&Field> {
        match &self.shape {
            Kind::Struct(fields) => fields.iter().collect(),
            Kind::Newtype(field) => vec![field],
            Kind::Union(union) => union
                .variants
                .iter()
                .flat_map(|v| match &v.fields {
                    VariantFields::Unit => Vec::new(),
                    VariantFields::Newtype(field) => vec![field.as_ref()],
                    VariantFields::Struct(fields) => fields.iter().collect(),
                })
                .collect(),
            Kind::Enum(_) | Kind::Custom => Vec::new(),
        }
    }

    fn validate(&self, container: &Container, errors: &mut Errors) {
        self.check_floats(errors);
        self.check_arrays(errors);
        match &self.shape {
            Kind::Enum(_) => {
                if let Some(marker) = self.markers.find("Enum") {
                    errors.push(
                        marker.span,
                        "a unit enum's allowed values are its variants; remove `enum`",
                    );
                }
            }
            Kind::Union(union) => check_union_syntax(&self.ident, union, container, errors),
            Kind::Custom => self.check_custom_markers(errors),
            Kind::Struct(_) | Kind::Newtype(_) => {}
        }
        if let Some(span) = container.rename_all {
            errors.push(
                span,
                "API types use camelCase JSON names; rename single fields or variants with `#[serde(rename = \"...\")]`",
            );
        }
        self.check_one_of_groups(errors);
    }

    fn check_floats(&self, errors: &mut Errors) {
        let type_allows_floats = self.markers.allow_dangerous_types;
        for field in self.fields() {
            if types::mentions_float(&field.ty)
                && !type_allows_floats
                && !field.markers.allow_dangerous_types
            {
                errors.push(
                    field.ty.span(),
                    "found float, the usage of which is highly discouraged, as support for them varies across languages; \
                     serialize it as a string instead, or add `allow_dangerous_types` to the field or the type",
                );
            }
        }
    }

    /// serde (de)serializes arrays of at most 32 elements.
    fn check_arrays(&self, errors: &mut Errors) {
        for field in self.fields() {
            if let Some((len, span)) = types::longest_array(&field.ty).filter(|(len, _)| *len > 32)
            {
                errors.push(
                    span,
                    format!(
                        "serde reads and writes arrays of at most 32 elements, not {len}; use a `Vec` with `validation(min_items = {len}, max_items = {len})`"
                    ),
                );
            }
        }
    }

    fn check_custom_markers(&self, errors: &mut Errors) {
        let typed = ["Type", "PreserveUnknownFields", "IntOrString"]
            .iter()
            .any(|variant| self.markers.find(variant).is_some());
        if let (false, Some(span)) = (typed, self.markers.custom_serde) {
            errors.push(
                span,
                "a `custom_serde` type's schema comes from its markers alone: give it a type with `validation(type = \"...\")`, or `x_preserve_unknown_fields` or `x_int_or_string`",
            );
        }
    }

    fn check_one_of_groups(&self, errors: &mut Errors) {
        for (marker, group) in self.markers.one_of_groups() {
            let Kind::Struct(fields) = &self.shape else {
                errors.push(marker.span, format!("`{}` applies to structs", marker.name));
                continue;
            };
            for name in group {
                match fields.iter().find(|f| &f.json_name == name) {
                    None => {
                        let known: Vec<&str> =
                            fields.iter().map(|f| f.json_name.as_str()).collect();
                        errors.push(
                            marker.span,
                            format!(
                                "`{}` names `{name}`, which is not a field of {} (fields: {})",
                                marker.name,
                                self.ident,
                                known.join(", ")
                            ),
                        );
                    }
                    Some(field) if field.required() => {
                        let span = field.markers.required_span.unwrap_or(marker.span);
                        errors.push(
                            span,
                            format!(
                                "field {name} is part of a OneOf constraint and cannot be required: make it an `Option` or mark it `optional`"
                            ),
                        );
                    }
                    Some(_) => {}
                }
            }
        }
    }
}

/// What serde writes for these enums has no structural schema whatever the variants hold.
fn check_union_syntax(ident: &Ident, union: &Union, container: &Container, errors: &mut Errors) {
    if let Some(span) = container.content {
        errors.push(
            span,
            format!("an adjacently tagged enum's content (`content = ...`) has a different type per variant, which no structural schema describes; drop `content` to tag {ident} internally"),
        );
    }
    let has_data = union
        .variants
        .iter()
        .any(|v| !matches!(v.fields, VariantFields::Unit));
    for variant in &union.variants {
        if !matches!(variant.fields, VariantFields::Unit) {
            continue;
        }
        let reason = match union.tagging {
            Tagging::External if has_data => {
                "serde writes it as a string and the variants with data as objects, and no structural schema describes both; tag the enum with `#[serde(tag = \"...\")]`"
            }
            Tagging::Untagged => {
                "an untagged enum writes it as null, which no structural schema describes"
            }
            _ => continue,
        };
        errors.push(
            variant.span,
            format!("unit variant `{}` of {ident}: {reason}", variant.name),
        );
    }
}

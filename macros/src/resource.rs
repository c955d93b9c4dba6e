//! `#[kubebuilder::resource(...)]` on the spec struct of a kind: the spec as an API type
//! (see `item.rs`), the root object `Kind { metadata, spec, status }` with its kube
//! `Resource` impl and list type, and the CRD version registered for `cargo xtask manifests`.

use kubebuilder_plural::plural;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, Item, LitStr};

use crate::args::{self, Arg, Errors, Once};
use crate::item;
use crate::k8s_values::is_dns_label;
use crate::markers::{self, Markers, Target};
use crate::tokens::optional;

/// The resource-level arguments.
#[derive(Default)]
struct Resource {
    group: Once<LitStr>,
    version: Once<LitStr>,
    kind: Once<LitStr>,
    status: Once<syn::Path>,
    doc: Once<LitStr>,
    names: Names,
    status_subresource: bool,
    scale: Option<Scale>,
    printer_columns: Vec<PrinterColumn>,
    storage: bool,
    unserved: bool,
    deprecated: Option<Option<LitStr>>,
    skip: bool,
    annotations: Vec<(String, String)>,
    labels: Vec<(String, String)>,
    selectable_fields: Vec<LitStr>,
    hub: Once<syn::Path>,
    root_markers: Markers,
    /// The argument names written, for "missing argument" errors.
    given: Vec<String>,
}

#[derive(Default)]
struct Names {
    plural: Option<LitStr>,
    singular: Option<LitStr>,
    short_names: Vec<LitStr>,
    categories: Vec<LitStr>,
    scope: Option<LitStr>,
}

struct Scale {
    spec_path: LitStr,
    status_path: LitStr,
    selector_path: Option<LitStr>,
}

struct PrinterColumn {
    name: LitStr,
    type_: LitStr,
    json_path: LitStr,
    description: Option<LitStr>,
    format: Option<LitStr>,
    priority: i32,
}

const ARGS: &[&str] = &[
    "group",
    "version",
    "kind",
    "status",
    "doc",
    "resource",
    "subresource",
    "printcolumn",
    "storageversion",
    "unservedversion",
    "deprecatedversion",
    "skipversion",
    "metadata",
    "selectablefield",
    "validation",
    "hub",
];

/// Entry point of `#[kubebuilder::resource(...)]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let mut item = match syn::parse2::<Item>(item) {
        Ok(Item::Struct(item)) => item,
        Ok(other) => {
            return syn::Error::new_spanned(
                other,
                "`#[kubebuilder::resource]` goes on the spec struct of a kind",
            )
            .to_compile_error();
        }
        Err(error) => return error.to_compile_error(),
    };
    let resource = parse(&args, &mut errors);
    // A `#[kubebuilder::schema(...)]` below this attribute holds the spec's type-level
    // markers; take it here so that the spec is expanded once.
    let mut spec_args = Vec::new();
    item.attrs.retain(|attr| {
        let is_schema = attr.path().segments.len() == 2
            && attr.path().segments[0].ident == "kubebuilder"
            && attr.path().segments[1].ident == "schema";
        if is_schema {
            match args::attribute_args(attr) {
                Ok(parsed) => spec_args.extend(parsed),
                Err(error) => errors.extend(error),
            }
        }
        !is_schema
    });
    let spec_markers = markers::parse(&spec_args, Target::Type, &mut errors);
    let vis = item.vis.clone();
    let spec = match item::parse(Item::Struct(item), spec_markers, &mut errors) {
        Ok(spec) => spec,
        Err(item) => return item::unusable(*item, &errors),
    };
    let Some(kind) = resource.kind_ident(&mut errors) else {
        // Without a kind there is no root type to emit: the spec alone, with its errors.
        return spec.generate(&errors);
    };
    // With errors, the root object is still generated (without the compile-time checks),
    // so that code using it type-checks: one mistake, one message.
    let generated = resource.generate(&vis, &kind, &spec.ident, errors.is_empty());
    let spec_tokens = spec.generate(&errors);
    quote!(#spec_tokens #generated)
}

fn parse(args: &[Arg], errors: &mut Errors) -> Resource {
    let mut resource = Resource::default();
    for arg in args {
        resource.given.push(arg.key());
        match arg.key().as_str() {
            "group" => resource
                .group
                .set(arg, checked(arg, errors, check_group), errors),
            "version" => resource
                .version
                .set(arg, checked(arg, errors, check_version), errors),
            "kind" => resource.kind.set(arg, arg.string(errors), errors),
            "status" => resource.status.set(arg, arg.path(errors), errors),
            "doc" => resource.doc.set(arg, arg.string(errors), errors),
            "resource" => {
                if let Some(nested) = arg.nested(errors) {
                    parse_names(nested, &mut resource.names, errors);
                }
            }
            "subresource" => {
                if let Some(nested) = arg.nested(errors) {
                    parse_subresource(nested, &mut resource, errors);
                }
            }
            "printcolumn" => {
                if let Some(column) = arg
                    .nested(errors)
                    .and_then(|nested| parse_column(arg, nested, errors))
                {
                    resource.printer_columns.push(column);
                }
            }
            "storageversion" => resource.storage |= arg.flag(errors),
            "unservedversion" => resource.unserved |= arg.flag(errors),
            "skipversion" => resource.skip |= arg.flag(errors),
            "deprecatedversion" => resource.deprecated = Some(parse_deprecated(arg, errors)),
            "metadata" => {
                if let Some(nested) = arg.nested(errors) {
                    parse_metadata(nested, &mut resource, errors);
                }
            }
            "selectablefield" => {
                if let Some(nested) = arg.nested(errors) {
                    for inner in nested {
                        if inner.key() == "json_path" {
                            resource.selectable_fields.extend(inner.string(errors));
                        } else {
                            errors.unknown_in(
                                &inner.name,
                                "argument",
                                "selectablefield",
                                &["json_path"],
                            );
                        }
                    }
                }
            }
            "validation" => {
                let markers = markers::parse(std::slice::from_ref(arg), Target::Type, errors);
                resource.root_markers.own.extend(markers.own);
                resource.root_markers.items.extend(markers.items);
            }
            "hub" => resource.hub.set(arg, arg.path(errors), errors),
            _ => errors.unknown(&arg.name, "argument", ARGS),
        }
    }
    let span = Span::call_site();
    for name in ["group", "version", "kind"] {
        if !resource.given.iter().any(|given| given == name) {
            errors.push(
                span,
                format!("`#[kubebuilder::resource]` needs `{name} = \"...\"`"),
            );
        }
    }
    if let (true, Some(span)) = (resource.storage, resource.hub.span()) {
        errors.push(span, "a storage version is the hub itself; `hub` names the storage version from the other versions");
    }
    resource
}

/// Reads a string argument and checks its value.
fn checked(
    arg: &Arg,
    errors: &mut Errors,
    check: fn(&str) -> Result<(), String>,
) -> Option<LitStr> {
    let value = arg.string(errors)?;
    match check(&value.value()) {
        Ok(()) => Some(value),
        Err(message) => {
            errors.push(value.span(), message);
            None
        }
    }
}

fn check_group(group: &str) -> Result<(), String> {
    if group.contains('.') && group.split('.').all(is_dns_label) {
        Ok(())
    } else {
        Err(format!(
            "group \"{group}\" must be a lower-case domain name with at least one dot, like `batch.tutorial.kubebuilder.io`"
        ))
    }
}

fn check_version(version: &str) -> Result<(), String> {
    let ok = version.starts_with(|c: char| c.is_ascii_lowercase())
        && version
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && version.len() <= 63;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "version \"{version}\" must be a lower-case name of letters and digits, like `v1` or `v1beta1`"
        ))
    }
}

fn parse_names(args: &[Arg], names: &mut Names, errors: &mut Errors) {
    const KNOWN: &[&str] = &["path", "short_name", "categories", "singular", "scope"];
    for arg in args {
        match arg.key().as_str() {
            "path" => names.plural = arg.string(errors),
            "singular" => names.singular = arg.string(errors),
            "short_name" => names.short_names = arg.strings(errors).unwrap_or_default(),
            "categories" => names.categories = arg.strings(errors).unwrap_or_default(),
            "scope" => {
                if let Some(scope) = arg.string(errors) {
                    if ["Namespaced", "Cluster"].contains(&scope.value().as_str()) {
                        names.scope = Some(scope);
                    } else {
                        errors.push(
                            scope.span(),
                            "`scope` must be \"Namespaced\" or \"Cluster\"",
                        );
                    }
                }
            }
            _ => errors.unknown_in(&arg.name, "argument", "resource", KNOWN),
        }
    }
}

fn parse_subresource(args: &[Arg], resource: &mut Resource, errors: &mut Errors) {
    for arg in args {
        match arg.key().as_str() {
            "status" => resource.status_subresource |= arg.flag(errors),
            "scale" => {
                let Some(nested) = arg.nested(errors) else {
                    continue;
                };
                let (mut spec_path, mut status_path, mut selector_path) = (None, None, None);
                for inner in nested {
                    match inner.key().as_str() {
                        "spec_path" => spec_path = inner.string(errors),
                        "status_path" => status_path = inner.string(errors),
                        "selector_path" => selector_path = inner.string(errors),
                        _ => errors.unknown_in(
                            &inner.name,
                            "argument",
                            "scale",
                            &["spec_path", "status_path", "selector_path"],
                        ),
                    }
                }
                match (spec_path, status_path) {
                    (Some(spec_path), Some(status_path)) => {
                        resource.scale = Some(Scale {
                            spec_path,
                            status_path,
                            selector_path,
                        });
                    }
                    _ => errors.push(arg.span(), "`scale` needs `spec_path` and `status_path`"),
                }
            }
            _ => errors.unknown(&arg.name, "subresource", &["status", "scale"]),
        }
    }
}

fn parse_column(arg: &Arg, args: &[Arg], errors: &mut Errors) -> Option<PrinterColumn> {
    const KNOWN: &[&str] = &[
        "name",
        "type",
        "json_path",
        "description",
        "format",
        "priority",
    ];
    const TYPES: &[&str] = &["integer", "number", "string", "boolean", "date"];
    const FORMATS: &[&str] = &[
        "int32",
        "int64",
        "float",
        "double",
        "byte",
        "date",
        "date-time",
        "password",
    ];
    let (mut name, mut type_, mut json_path, mut description, mut format) =
        (None, None, None, None, None);
    let mut given = Vec::new();
    let mut priority = 0;
    for inner in args {
        given.push(inner.key());
        match inner.key().as_str() {
            "name" => name = inner.string(errors),
            "type" => type_ = member(inner, TYPES, errors),
            "json_path" => json_path = inner.string(errors),
            "description" => description = inner.string(errors),
            "format" => format = member(inner, FORMATS, errors),
            "priority" => match inner.int(errors).map(i32::try_from) {
                Some(Ok(value)) => priority = value,
                Some(Err(_)) => errors.push(inner.span(), "`priority` must fit in an int32"),
                None => {}
            },
            _ => errors.unknown_in(&inner.name, "argument", "printcolumn", KNOWN),
        }
    }
    let missing: Vec<&str> = ["name", "type", "json_path"]
        .into_iter()
        .filter(|required| !given.iter().any(|g| g == required))
        .collect();
    if !missing.is_empty() {
        errors.push(
            arg.span(),
            format!("`printcolumn` needs {}", missing.join(", ")),
        );
    }
    Some(PrinterColumn {
        name: name?,
        type_: type_?,
        json_path: json_path?,
        description,
        format,
        priority,
    })
}

/// A string argument that must be one of `allowed` (what the apiserver accepts).
fn member(arg: &Arg, allowed: &[&str], errors: &mut Errors) -> Option<LitStr> {
    let value = arg.string(errors)?;
    if allowed.contains(&value.value().as_str()) {
        Some(value)
    } else {
        errors.push(
            value.span(),
            format!("`{}` must be one of: {}", arg.name, allowed.join(", ")),
        );
        None
    }
}

fn parse_deprecated(arg: &Arg, errors: &mut Errors) -> Option<LitStr> {
    let args::ArgValue::Nested(nested, _) = &arg.value else {
        arg.flag(errors);
        return None;
    };
    let mut warning = None;
    for inner in nested {
        if inner.key() == "warning" {
            warning = inner.string(errors);
        } else {
            errors.unknown_in(&inner.name, "argument", "deprecatedversion", &["warning"]);
        }
    }
    warning
}

fn parse_metadata(args: &[Arg], resource: &mut Resource, errors: &mut Errors) {
    for arg in args {
        let target = match arg.key().as_str() {
            "annotations" => &mut resource.annotations,
            "labels" => &mut resource.labels,
            _ => {
                errors.unknown_in(
                    &arg.name,
                    "argument",
                    "metadata",
                    &["annotations", "labels"],
                );
                continue;
            }
        };
        let singular = if arg.key() == "labels" {
            "label"
        } else {
            "annotation"
        };
        for entry in arg.strings(errors).unwrap_or_default() {
            match entry.value().split_once('=') {
                Some((key, value)) => target.push((key.to_owned(), value.to_owned())),
                None => errors.push(
                    entry.span(),
                    format!("{singular} {} is not in 'xxx=xxx' format", entry.value()),
                ),
            }
        }
    }
}

impl Resource {
    fn kind_ident(&self, errors: &mut Errors) -> Option<Ident> {
        let kind = self.kind.get()?;
        match syn::parse_str::<Ident>(&kind.value()) {
            Ok(_) if kind.value().starts_with(|c: char| c.is_ascii_uppercase()) => {
                Some(Ident::new(&kind.value(), kind.span()))
            }
            _ => {
                errors.push(
                    kind.span(),
                    format!(
                        "kind \"{}\" must be a CamelCase Rust identifier",
                        kind.value()
                    ),
                );
                None
            }
        }
    }

    fn generate(
        &self,
        vis: &syn::Visibility,
        kind: &Ident,
        spec: &Ident,
        with_checks: bool,
    ) -> TokenStream {
        let group = self.group.get().map(LitStr::value).unwrap_or_default();
        let version = self.version.get().map(LitStr::value).unwrap_or_default();
        let kind_name = kind.to_string();
        let api_version = format!("{group}/{version}");
        let plural = self
            .names
            .plural
            .as_ref()
            .map_or_else(|| plural(&kind_name), LitStr::value);
        let singular = self
            .names
            .singular
            .as_ref()
            .map_or_else(|| kind_name.to_lowercase(), LitStr::value);
        let short_names = &self.names.short_names;
        let categories = &self.names.categories;
        let scope = self
            .names
            .scope
            .as_ref()
            .map_or_else(|| "Namespaced".to_owned(), LitStr::value);
        let scope_type = if scope == "Cluster" {
            quote!(::kubebuilder::__private::k8s_openapi::ClusterResourceScope)
        } else {
            quote!(::kubebuilder::__private::k8s_openapi::NamespaceResourceScope)
        };
        let doc = self.doc.get().map_or_else(
            || format!("{kind_name} is the Schema for the {plural} API."),
            LitStr::value,
        );
        let list = format_ident!("{}List", kind);
        let meta = quote!(
            ::kubebuilder::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta
        );
        let kube = quote!(::kubebuilder::__private::kube_core);
        let schema = quote!(::kubebuilder::schema::Schema);

        let (status_field, status_init, status_serialize, status_schema, status_impl, status_shape) =
            match self.status.get() {
                Some(status) => (
                    quote! {
                        /// The observed state.
                        #[serde(default, skip_serializing_if = "::core::option::Option::is_none")]
                        pub status: ::core::option::Option<#status>,
                    },
                    quote!(status: ::core::option::Option::None,),
                    quote!(self.status.as_ref()),
                    quote!(::core::option::Option::Some(::kubebuilder::schema::field(<#status as #schema>::node(), "", &[], &[]))),
                    quote! {
                        impl #kube::object::HasStatus for #kind {
                            type Status = #status;
                            fn status(&self) -> ::core::option::Option<&#status> {
                                self.status.as_ref()
                            }
                            fn status_mut(&mut self) -> &mut ::core::option::Option<#status> {
                                &mut self.status
                            }
                        }
                    },
                    quote!(("status", &<#status as #schema>::SHAPE),),
                ),
                None => (
                    TokenStream::new(),
                    TokenStream::new(),
                    quote!(::core::option::Option::<&()>::None),
                    quote!(::core::option::Option::None),
                    TokenStream::new(),
                    TokenStream::new(),
                ),
            };

        let root_shape = quote! {
            ::kubebuilder::crd::root_shape(#kind_name, &[
                ("apiVersion", &::kubebuilder::crd::STRING_FIELD),
                ("kind", &::kubebuilder::crd::STRING_FIELD),
                ("metadata", &::kubebuilder::crd::OBJECT_META),
                ("spec", &<#spec as #schema>::SHAPE),
                #status_shape
            ])
        };
        let mut checks = TokenStream::new();
        if with_checks {
            checks.extend(self.root_markers.checks(&root_shape));
        }
        let paths = self
            .printer_columns
            .iter()
            .map(|c| ("json_path", &c.json_path))
            .chain(self.selectable_fields.iter().map(|p| ("json_path", p)))
            .chain(self.scale.iter().flat_map(|s| {
                [
                    Some(("spec_path", &s.spec_path)),
                    Some(("status_path", &s.status_path)),
                    s.selector_path.as_ref().map(|p| ("selector_path", p)),
                ]
                .into_iter()
                .flatten()
            }));
        for (what, path) in paths.filter(|_| with_checks) {
            checks.extend(quote_spanned! {path.span()=>
                const _: () = if let ::core::option::Option::Some(error) =
                    ::kubebuilder::schema::check_json_path(&#root_shape, #what, #path)
                {
                    ::core::panic!("{}", error.as_str())
                };
            });
        }
        if let Some(hub) = self.hub.get().filter(|_| with_checks) {
            let span = self.hub.span().unwrap_or_else(Span::call_site);
            checks.extend(quote_spanned! {span=>
                const _: () = if let ::core::option::Option::Some(error) = ::kubebuilder::crd::check_hub(
                    &<#hub as ::kubebuilder::crd::CustomResource>::VERSION, #group, #kind_name,
                ) {
                    ::core::panic!("{}", error.as_str())
                };
            });
        }

        let (root_own, _) = self.root_markers.render();
        let columns = self.printer_columns.iter().map(|c| {
            let PrinterColumn {
                name,
                type_,
                json_path,
                description,
                format,
                priority,
            } = c;
            let description = optional(description.as_ref());
            let format = optional(format.as_ref());
            quote!(::kubebuilder::crd::PrinterColumn {
                name: #name, type_: #type_, json_path: #json_path,
                description: #description, format: #format, priority: #priority,
            })
        });
        let scale = match &self.scale {
            Some(Scale {
                spec_path,
                status_path,
                selector_path,
            }) => {
                let selector_path = optional(selector_path.as_ref());
                quote!(::core::option::Option::Some(::kubebuilder::crd::Scale {
                    spec_path: #spec_path, status_path: #status_path, selector_path: #selector_path,
                }))
            }
            None => quote!(::core::option::Option::None),
        };
        let deprecated = match &self.deprecated {
            Some(warning) => {
                let warning = optional(warning.as_ref());
                quote!(::core::option::Option::Some(#warning))
            }
            None => quote!(::core::option::Option::None),
        };
        let pairs = |list: &[(String, String)]| {
            let entries = list.iter().map(|(k, v)| quote!((#k, #v)));
            quote!(&[#(#entries),*])
        };
        let annotations = pairs(&self.annotations);
        let labels = pairs(&self.labels);
        let selectable = &self.selectable_fields;
        let (storage, served, skip, status_subresource) = (
            self.storage,
            !self.unserved,
            self.skip,
            self.status_subresource,
        );

        quote! {
            #[doc = #doc]
            #[derive(
                ::core::clone::Clone,
                ::core::fmt::Debug,
                ::core::cmp::PartialEq,
                ::kubebuilder::__private::serde::Deserialize
            )]
            #[serde(crate = "::kubebuilder::__private::serde", rename_all = "camelCase")]
            #vis struct #kind {
                /// Standard object metadata.
                #[serde(default)]
                pub metadata: #meta,
                /// The desired state.
                pub spec: #spec,
                #status_field
            }

            /// A list of
            #[doc = #kind_name]
            /// objects, as the apiserver returns it.
            #vis type #list = #kube::ObjectList<#kind>;

            impl #kind {
                /// A new object with this name and spec.
                pub fn new(name: &str, spec: #spec) -> Self {
                    Self {
                        metadata: #meta {
                            name: ::core::option::Option::Some(::std::string::ToString::to_string(name)),
                            ..::core::default::Default::default()
                        },
                        spec,
                        #status_init
                    }
                }

                /// The CRD with this version alone; `kubebuilder::crd::all()` merges every version.
                pub fn crd() -> ::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                    <Self as ::kubebuilder::crd::CustomResource>::crd()
                }
            }

            impl ::kubebuilder::__private::serde::Serialize for #kind {
                fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
                where
                    S: ::kubebuilder::__private::serde::Serializer,
                {
                    ::kubebuilder::__private::serialize_object(
                        serializer, #api_version, #kind_name, &self.metadata, &self.spec, #status_serialize,
                    )
                }
            }

            impl #kube::Resource for #kind {
                type DynamicType = ();
                type Scope = #scope_type;

                fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed(#kind_name)
                }
                fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed(#group)
                }
                fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed(#version)
                }
                fn api_version(_: &()) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed(#api_version)
                }
                fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                    ::std::borrow::Cow::Borrowed(#plural)
                }
                fn meta(&self) -> &#meta {
                    &self.metadata
                }
                fn meta_mut(&mut self) -> &mut #meta {
                    &mut self.metadata
                }
            }

            impl #kube::object::HasSpec for #kind {
                type Spec = #spec;
                fn spec(&self) -> &#spec {
                    &self.spec
                }
                fn spec_mut(&mut self) -> &mut #spec {
                    &mut self.spec
                }
            }

            #status_impl

            impl ::kubebuilder::crd::CustomResource for #kind {
                const VERSION: ::kubebuilder::crd::Version = ::kubebuilder::crd::Version {
                    group: #group,
                    kind: #kind_name,
                    name: #version,
                    plural: #plural,
                    singular: #singular,
                    short_names: &[#(#short_names),*],
                    categories: &[#(#categories),*],
                    scope: #scope,
                    storage: #storage,
                    served: #served,
                    deprecated: #deprecated,
                    skip: #skip,
                    annotations: #annotations,
                    labels: #labels,
                    status_subresource: #status_subresource,
                    scale: #scale,
                    printer_columns: &[#(#columns),*],
                    selectable_fields: &[#(#selectable),*],
                    schema: {
                        fn schema() -> ::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps {
                            const MARKERS: &[::kubebuilder::schema::Marker] = #root_own;
                            ::kubebuilder::crd::root_schema(
                                #doc,
                                ::kubebuilder::schema::field(<#spec as #schema>::node(), "", &[], &[]),
                                #status_schema,
                                MARKERS,
                            )
                        }
                        schema
                    },
                };
            }

            impl #kube::CustomResourceExt for #kind {
                fn crd() -> ::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                    <Self as ::kubebuilder::crd::CustomResource>::crd()
                }
                fn crd_name() -> &'static str {
                    ::core::concat!(#plural, ".", #group)
                }
                fn api_resource() -> #kube::discovery::ApiResource {
                    #kube::discovery::ApiResource::erase::<Self>(&())
                }
                fn shortnames() -> &'static [&'static str] {
                    &[#(#short_names),*]
                }
            }

            ::kubebuilder::__private::inventory::submit! {
                ::kubebuilder::crd::Registration(&<#kind as ::kubebuilder::crd::CustomResource>::VERSION)
            }

            #checks
        }
    }
}

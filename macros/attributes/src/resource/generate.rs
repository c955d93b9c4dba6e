//! The code `#[kubebuilder::resource(...)]` generates around the spec: the root object and
//! its list type, its serde and kube impls, the `CustomResource` version, its registration
//! and the compile-time checks of its paths, hub and root markers.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitStr};

use kubebuilder_model::crd;

use super::{KindNames, Resource, Scale, SpecKind};
use crate::tokens::{Constant, optional};

/// What the root object is generated from.
pub struct Root<'a> {
    pub resource: &'a Resource,
    pub vis: &'a syn::Visibility,
    pub kind: &'a Ident,
    pub spec: &'a Ident,
    /// The spec struct's doc comment: the root's with `spec = "none"`.
    pub spec_doc: &'a str,
    /// Without errors only: the checks would repeat what is already reported.
    pub with_checks: bool,
    /// Registered for `cargo xtask manifests` (not in a `#[kubebuilder::skip]` module).
    pub registered: bool,
    /// `apply_configuration` on the spec: the kind gets one too.
    pub apply_configuration: bool,
}

impl Root<'_> {
    pub fn generate(&self) -> TokenStream {
        let names = self.names();
        let object = self.object(&names);
        let serialize = self.serialize_impl(&names);
        let resource = self.kube_resource(&names);
        let traits = self.kube_traits(&names);
        let custom_resource = self.custom_resource(&names);
        let registration = self.registered.then(|| {
            let kind = self.kind;
            quote! {
                ::kubebuilder::__private::inventory::submit! {
                    ::kubebuilder::__private::crd::Registration(&<#kind as ::kubebuilder::crd::CustomResource>::VERSION)
                }
            }
        });
        let checks = if self.with_checks {
            self.checks(&names)
        } else {
            TokenStream::new()
        };
        let apply_configuration = self.apply_configuration(&names);
        quote!(#object #serialize #resource #traits #custom_resource #registration #apply_configuration #checks)
    }

    /// `<Kind>ApplyConfiguration`: `apiVersion`, `kind` and metadata, and the spec and status
    /// a field manager sets (controller-gen's `+kubebuilder:ac:generate` of a kind). Without
    /// a spec, the struct's own apply configuration (from `#[kubebuilder::schema]`) serves,
    /// the applier filling in `apiVersion` and `kind`.
    fn apply_configuration(&self, names: &KindNames) -> TokenStream {
        if !self.apply_configuration || self.resource.spec == SpecKind::None {
            return TokenStream::new();
        }
        let Root {
            vis, kind, spec, ..
        } = *self;
        let twin = format_ident!("{kind}ApplyConfiguration");
        let meta = object_meta();
        let of = quote!(::kubebuilder::apply::Of);
        let kube = quote!(::kubebuilder::__private::kube_core);
        let (status_field, status_builder) = match &self.resource.status {
            Some(status) => (
                quote! {
                    /// The status this manager sets (through the status subresource).
                    #[serde(skip_serializing_if = "::core::option::Option::is_none")]
                    pub status: ::core::option::Option<#of<#status>>,
                },
                quote! {
                    /// Sets the status.
                    #[must_use]
                    pub fn with_status(mut self, status: impl ::core::convert::Into<#of<#status>>) -> Self {
                        self.status = ::core::option::Option::Some(status.into());
                        self
                    }
                },
            ),
            None => (TokenStream::new(), TokenStream::new()),
        };
        let doc = format!(
            "The apply configuration of a {}: the fields a field manager sets.",
            names.kind
        );
        quote! {
            #[doc = #doc]
            #[derive(
                ::core::clone::Clone,
                ::core::fmt::Debug,
                ::core::default::Default,
                ::core::cmp::PartialEq,
                ::kubebuilder::__private::serde::Serialize
            )]
            #[serde(crate = "::kubebuilder::__private::serde", rename_all = "camelCase")]
            #vis struct #twin {
                /// The kind's group and version.
                pub api_version: ::std::string::String,
                /// The kind.
                pub kind: ::std::string::String,
                /// The object's name, namespace, and the labels and annotations this manager sets.
                pub metadata: #meta,
                /// The spec fields this manager sets.
                #[serde(skip_serializing_if = "::core::option::Option::is_none")]
                pub spec: ::core::option::Option<#of<#spec>>,
                #status_field
            }

            impl #twin {
                /// The object `name`, with nothing set (in the namespace the API is for, or
                /// [`with_namespace`](Self::with_namespace)'s).
                pub fn new(name: impl ::core::convert::Into<::std::string::String>) -> Self {
                    Self {
                        api_version: <#kind as #kube::Resource>::api_version(&()).into_owned(),
                        kind: <#kind as #kube::Resource>::kind(&()).into_owned(),
                        metadata: #meta {
                            name: ::core::option::Option::Some(name.into()),
                            ..::core::default::Default::default()
                        },
                        ..::core::default::Default::default()
                    }
                }

                /// Sets the namespace.
                #[must_use]
                pub fn with_namespace(mut self, namespace: impl ::core::convert::Into<::std::string::String>) -> Self {
                    self.metadata.namespace = ::core::option::Option::Some(namespace.into());
                    self
                }

                /// Sets the spec.
                #[must_use]
                pub fn with_spec(mut self, spec: impl ::core::convert::Into<#of<#spec>>) -> Self {
                    self.spec = ::core::option::Option::Some(spec.into());
                    self
                }

                #status_builder
            }

            impl ::kubebuilder::apply::ApplyConfiguration for #twin {
                type Kind = #kind;
            }
        }
    }

    fn names(&self) -> KindNames {
        self.resource.names(self.kind, self.spec_doc)
    }

    /// The root struct, its list type, `new` and `crd`; without a spec, the struct is the
    /// user's and only the list type and `crd` are added.
    fn object(&self, names: &KindNames) -> TokenStream {
        if self.resource.spec == SpecKind::None {
            let Root { vis, kind, .. } = *self;
            let kind_name = &names.kind;
            let list = format_ident!("{}List", kind);
            let crd_type = crd_type();
            return quote! {
                /// A list of
                #[doc = #kind_name]
                /// objects, as the apiserver returns it.
                #vis type #list = ::kubebuilder::__private::kube_core::ObjectList<#kind>;

                impl #kind {
                    /// The CRD with this version alone; `kubebuilder::crd::all()` merges every version.
                    pub fn crd() -> #crd_type {
                        <Self as ::kubebuilder::crd::CustomResource>::crd()
                    }
                }
            };
        }
        let Root {
            vis, kind, spec, ..
        } = *self;
        let KindNames {
            kind: kind_name,
            doc,
            ..
        } = names;
        let list = format_ident!("{}List", kind);
        let meta = object_meta();
        // Spanned on `spec = "optional"`, where a spec without `Default` is reported.
        let spec_default = (self.resource.spec == SpecKind::Optional).then(|| {
            let span = self
                .resource
                .spec_span
                .unwrap_or_else(proc_macro2::Span::call_site);
            quote_spanned!(span=> #[serde(default = "::kubebuilder::__private::absent_spec")])
        });
        let kube = quote!(::kubebuilder::__private::kube_core);
        let crd_type = crd_type();
        let (status_field, status_init) = match &self.resource.status {
            Some(status) => (
                quote! {
                    /// The observed state.
                    #[serde(default, skip_serializing_if = "::core::option::Option::is_none")]
                    pub status: ::core::option::Option<#status>,
                },
                quote!(status: ::core::option::Option::None,),
            ),
            None => (TokenStream::new(), TokenStream::new()),
        };
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
                #spec_default
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
                pub fn crd() -> #crd_type {
                    <Self as ::kubebuilder::crd::CustomResource>::crd()
                }
            }
        }
    }

    /// `apiVersion` and `kind` first, as Kubernetes writes an object.
    fn serialize_impl(&self, names: &KindNames) -> TokenStream {
        let kind = self.kind;
        let api_version = format!("{}/{}", names.group, names.version);
        let kind_name = &names.kind;
        let serde = quote!(::kubebuilder::__private::serde);
        if self.resource.spec == SpecKind::None {
            // The struct's serde derive, `remote = "Self"`, is in inherent functions.
            return quote! {
                impl #serde::Serialize for #kind {
                    fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
                    where
                        S: #serde::Serializer,
                    {
                        ::kubebuilder::__private::serialize_root(
                            serializer, #api_version, #kind_name, |fields| #kind::serialize(self, fields),
                        )
                    }
                }

                impl<'de> #serde::Deserialize<'de> for #kind {
                    fn deserialize<D>(deserializer: D) -> ::core::result::Result<Self, D::Error>
                    where
                        D: #serde::Deserializer<'de>,
                    {
                        #kind::deserialize(deserializer)
                    }
                }
            };
        }
        let status = match &self.resource.status {
            Some(_) => quote!(self.status.as_ref()),
            None => quote!(::core::option::Option::<&()>::None),
        };
        quote! {
            impl ::kubebuilder::__private::serde::Serialize for #kind {
                fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
                where
                    S: ::kubebuilder::__private::serde::Serializer,
                {
                    ::kubebuilder::__private::serialize_object(
                        serializer, #api_version, #kind_name, &self.metadata, &self.spec, #status,
                    )
                }
            }
        }
    }

    /// kube's `Resource`.
    fn kube_resource(&self, names: &KindNames) -> TokenStream {
        let kind = self.kind;
        let KindNames {
            group,
            version,
            kind: kind_name,
            plural,
            scope,
            ..
        } = names;
        let api_version = format!("{group}/{version}");
        let meta = object_meta();
        let scope_type = if scope == "Cluster" {
            quote!(::kubebuilder::__private::k8s_openapi::ClusterResourceScope)
        } else {
            quote!(::kubebuilder::__private::k8s_openapi::NamespaceResourceScope)
        };
        quote! {
            impl ::kubebuilder::__private::kube_core::Resource for #kind {
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

            impl ::kubebuilder::webhook::Target for #kind {
                const GROUP: &'static str = #group;
                const VERSION: &'static str = #version;
                const KIND: &'static str = #kind_name;
                const PLURAL: &'static str = #plural;
            }
        }
    }

    /// kube's `HasSpec`, `HasStatus` and `CustomResourceExt`.
    fn kube_traits(&self, names: &KindNames) -> TokenStream {
        let Root { kind, spec, .. } = *self;
        let (group, plural) = (&names.group, &names.plural);
        let kube = quote!(::kubebuilder::__private::kube_core);
        let crd_type = crd_type();
        let short_names = &names.short_names;
        let status_impl = self.resource.status.as_ref().map(|status| {
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
            }
        });
        let spec_impl = (self.resource.spec != SpecKind::None).then(|| {
            quote! {
                impl #kube::object::HasSpec for #kind {
                    type Spec = #spec;
                    fn spec(&self) -> &#spec {
                        &self.spec
                    }
                    fn spec_mut(&mut self) -> &mut #spec {
                        &mut self.spec
                    }
                }
            }
        });
        quote! {
            #spec_impl

            #status_impl

            impl #kube::CustomResourceExt for #kind {
                fn crd() -> #crd_type {
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
        }
    }

    /// `kubebuilder::crd::CustomResource`: the version as `cargo xtask manifests` renders it.
    fn custom_resource(&self, names: &KindNames) -> TokenStream {
        let Root { kind, spec, .. } = *self;
        let resource = self.resource;
        let schema = quote!(::kubebuilder::schema::Schema);
        let (status_own, status_items) = resource.status_field.render();
        let status_schema = optional(resource.status.as_ref().map(|status| {
            quote!(::kubebuilder::__private::schema::field(<#status as #schema>::node(), "", #status_own, #status_items))
        }));
        let hub = optional(resource.hub.as_ref().map(|hub| {
            let path = &hub.value;
            quote!(::std::borrow::Cow::Borrowed(::kubebuilder::__private::version_name(
                <#path as ::kubebuilder::crd::CustomResource>::VERSION
            )))
        }));
        let (root_markers, _) = resource.root_markers.render();
        let (spec_own, spec_items) = resource.spec_field.render();
        let spec_node = quote!(::kubebuilder::__private::schema::field(<#spec as #schema>::node(), "", #spec_own, #spec_items));
        let spec_schema = match resource.spec {
            SpecKind::Required => quote!(::kubebuilder::__private::crd::Spec::Required(#spec_node)),
            SpecKind::Optional => quote!(::kubebuilder::__private::crd::Spec::Optional(#spec_node)),
            SpecKind::None => {
                quote!(::kubebuilder::__private::crd::Spec::TopLevel(<#spec as #schema>::schema()))
            }
        };
        let doc = &names.doc;
        let root_schema = quote! {
            ::kubebuilder::crd::RootSchema::Function({
                fn schema() -> ::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps {
                    const MARKERS: &[::kubebuilder::schema::Marker] = #root_markers;
                    ::kubebuilder::__private::crd::root_schema(
                        #doc,
                        #spec_schema,
                        #status_schema,
                        MARKERS,
                    )
                }
                schema
            })
        };
        let version = version_tokens(&resource.declared(names), hub, root_schema);
        quote! {
            impl ::kubebuilder::crd::CustomResource for #kind {
                const VERSION: ::kubebuilder::crd::Version = #version;
            }
        }
    }

    /// The root markers' preconditions, the paths of the printer columns, selectable fields
    /// and scale subresource, and the hub (which the version must convert to), checked at
    /// compile time; the conversion is registered beside them.
    fn checks(&self, names: &KindNames) -> TokenStream {
        let resource = self.resource;
        let root_shape = self.root_shape(names);
        let mut checks = resource.root_markers.checks(&root_shape);
        let schema = quote!(::kubebuilder::schema::Schema);
        let spec = self.spec;
        checks.extend(
            resource
                .spec_field
                .checks(&quote!(<#spec as #schema>::SHAPE)),
        );
        if let Some(status) = &resource.status {
            checks.extend(
                resource
                    .status_field
                    .checks(&quote!(<#status as #schema>::SHAPE)),
            );
        }
        let paths = resource
            .printer_columns
            .iter()
            .map(|c| ("json_path", &c.json_path))
            .chain(resource.selectable_fields.iter().map(|p| ("json_path", p)))
            .chain(resource.scale.iter().flat_map(Scale::paths));
        for (what, path) in paths {
            checks.extend(quote_spanned! {path.span()=>
                const _: () = if let ::core::option::Option::Some(error) =
                    ::kubebuilder::__private::schema::check_json_path(&#root_shape, #what, #path)
                {
                    ::core::panic!("{}", error.as_str())
                };
            });
        }
        if let Some(hub) = &resource.hub {
            let (path, group, kind) = (&hub.value, &names.group, &names.kind);
            checks.extend(quote_spanned! {hub.span=>
                const _: () = if let ::core::option::Option::Some(error) = ::kubebuilder::__private::crd::check_hub(
                    <#path as ::kubebuilder::crd::CustomResource>::VERSION, #group, #kind,
                ) {
                    ::core::panic!("{}", error.as_str())
                };
            });
            if self.registered {
                // Also the compile-time check that this version converts to its hub.
                // Spanned at `hub`, which the missing-conversion error then points at.
                let spoke = syn::Ident::new(&self.kind.to_string(), hub.span);
                checks.extend(quote_spanned! {hub.span=>
                    ::kubebuilder::__private::inventory::submit! {
                        ::kubebuilder::conversion::SpokeVersion::of::<#spoke, #path>()
                    }
                });
            }
        }
        checks
    }

    /// The compile-time shape of the root object, for its paths and markers.
    fn root_shape(&self, names: &KindNames) -> TokenStream {
        let (spec, kind) = (self.spec, &names.kind);
        let schema = quote!(::kubebuilder::schema::Schema);
        let status = self
            .resource
            .status
            .as_ref()
            .map(|status| quote!(("status", &<#status as #schema>::SHAPE),));
        let type_meta = quote! {
            ("apiVersion", &::kubebuilder::__private::crd::STRING_FIELD),
            ("kind", &::kubebuilder::__private::crd::STRING_FIELD),
            ("metadata", &::kubebuilder::__private::crd::OBJECT_META),
        };
        if self.resource.spec == SpecKind::None {
            // The struct's fields sit beside the type meta.
            return quote! {
                ::kubebuilder::schema::Shape {
                    union: &[&<#spec as #schema>::SHAPE],
                    ..::kubebuilder::__private::crd::root_shape(#kind, &[#type_meta])
                }
            };
        }
        quote! {
            ::kubebuilder::__private::crd::root_shape(#kind, &[
                #type_meta
                ("spec", &<#spec as #schema>::SHAPE),
                #status
            ])
        }
    }
}

impl Scale {
    /// The paths to check, with the argument each was written as.
    fn paths(&self) -> impl Iterator<Item = (&'static str, &LitStr)> {
        [
            Some(("spec_path", &self.spec_path)),
            Some(("status_path", &self.status_path)),
            self.selector_path.as_ref().map(|p| ("selector_path", p)),
        ]
        .into_iter()
        .flatten()
    }
}

/// A declared version as a constant of the generated code, with its hub and schema.
fn version_tokens(
    version: &crd::Version<()>,
    hub: TokenStream,
    schema: TokenStream,
) -> TokenStream {
    let crd::Version {
        group,
        kind,
        name,
        plural,
        singular,
        short_names,
        categories,
        scope,
        storage,
        served,
        deprecated,
        skip,
        annotations,
        labels,
        status_subresource,
        scale,
        printer_columns,
        selectable_fields,
        hub: _,
        schema: (),
    } = version;
    let [group, kind, name, plural, singular, scope] =
        [group, kind, name, plural, singular, scope].map(|t| t.constant());
    let [short_names, categories, selectable_fields] =
        [short_names, categories, selectable_fields].map(|l| l.constant());
    let deprecated = deprecated.constant();
    let (annotations, labels) = (annotations.constant(), labels.constant());
    let scale = optional(scale.as_ref().map(|scale| {
        let spec_path = scale.spec_path.constant();
        let status_path = scale.status_path.constant();
        let selector_path = scale.selector_path.constant();
        quote!(::kubebuilder::crd::Scale {
            spec_path: #spec_path, status_path: #status_path, selector_path: #selector_path,
        })
    }));
    let columns = printer_columns.iter().map(|column| {
        let [name, type_, json_path] =
            [&column.name, &column.type_, &column.json_path].map(|t| t.constant());
        let description = column.description.constant();
        let format = column.format.constant();
        let priority = column.priority;
        quote!(::kubebuilder::crd::PrinterColumn {
            name: #name, type_: #type_, json_path: #json_path,
            description: #description, format: #format, priority: #priority,
        })
    });
    quote!(::kubebuilder::crd::Version {
        group: #group,
        kind: #kind,
        name: #name,
        plural: #plural,
        singular: #singular,
        short_names: #short_names,
        categories: #categories,
        scope: #scope,
        storage: #storage,
        served: #served,
        deprecated: #deprecated,
        skip: #skip,
        annotations: #annotations,
        labels: #labels,
        status_subresource: #status_subresource,
        scale: #scale,
        printer_columns: ::std::borrow::Cow::Borrowed(&[#(#columns),*]),
        selectable_fields: #selectable_fields,
        hub: #hub,
        schema: #schema,
    })
}

fn object_meta() -> TokenStream {
    quote!(::kubebuilder::__private::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta)
}

fn crd_type() -> TokenStream {
    quote!(::kubebuilder::__private::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition)
}

//! `#[kubebuilder::webhook(...)]` (controller-gen's `+kubebuilder:webhook`) and
//! `#[kubebuilder::webhook_configuration(...)]` (`+kubebuilder:webhookconfiguration`):
//! parse the arguments, validate them into a [`Webhook`] with the values normalised as
//! controller-gen normalises them, generate the `Declared` impl and the link-time
//! registration (see `rbac.rs` for why registration rather than source scanning).
//!
//! controller-gen checks some rules only when it writes `manifests.yaml` (sideEffects,
//! timeoutSeconds, path xor url, admissionReviewVersions) and passes unknown values
//! through for the apiserver to refuse; here all of them are compile errors.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{Ident, Item, LitStr};

use crate::args::{self, Arg, Errors, Once, closest};
use crate::k8s_values::{DnsName, check_dns_name, did_you_mean, one_of, type_ident};
use crate::tokens::optional;

const ARGUMENTS: &[&str] = &[
    "path",
    "url",
    "mutating",
    "failure_policy",
    "match_policy",
    "side_effects",
    "timeout_seconds",
    "groups",
    "resources",
    "verbs",
    "versions",
    "name",
    "admission_review_versions",
    "reinvocation_policy",
    "webhook_versions",
    "service_name",
    "service_namespace",
    "service_port",
    "kind",
];

/// The operations a webhook rule matches, as written in the attribute (any case).
const OPERATIONS: &[&str] = &["create", "update", "delete", "connect", "*"];

/// The arguments as written, each given at most once. Policies are already matched
/// against their allowed values (in their API spelling).
#[derive(Default)]
struct Args {
    path: Once<LitStr>,
    url: Once<LitStr>,
    mutating: Once<bool>,
    failure_policy: Once<&'static str>,
    match_policy: Once<&'static str>,
    side_effects: Once<&'static str>,
    timeout_seconds: Once<(i64, Span)>,
    groups: Once<Vec<LitStr>>,
    resources: Once<Vec<LitStr>>,
    verbs: Once<Vec<LitStr>>,
    versions: Once<Vec<LitStr>>,
    name: Once<LitStr>,
    admission_review_versions: Once<Vec<LitStr>>,
    reinvocation_policy: Once<&'static str>,
    webhook_versions: Once<Vec<LitStr>>,
    service_name: Once<LitStr>,
    service_namespace: Once<LitStr>,
    service_port: Once<(i64, Span)>,
    /// Ours: the kind in the default path, when it is not the single resource singularised.
    kind: Once<LitStr>,
    /// The arguments written, with a bad value or mentioned too: if such an argument
    /// ends up absent, that mistake is already reported.
    mentioned: Vec<&'static str>,
}

/// A validated webhook, as `kubebuilder::webhook::Webhook` will hold it.
struct Webhook {
    name: String,
    mutating: bool,
    path: Option<String>,
    url: Option<String>,
    failure_policy: &'static str,
    match_policy: Option<&'static str>,
    side_effects: &'static str,
    groups: Vec<String>,
    resources: Vec<String>,
    verbs: Vec<String>,
    versions: Vec<String>,
    admission_review_versions: Vec<String>,
    reinvocation_policy: Option<&'static str>,
    timeout_seconds: Option<i32>,
    service_name: Option<String>,
    service_namespace: Option<String>,
    service_port: Option<i32>,
}

/// Entry point of `#[kubebuilder::webhook(...)]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let ident = webhook_type(&item, &mut errors);
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let webhook = validate(read(&args, &mut errors), &mut errors);
    if !errors.is_empty() {
        // The stub keeps `<T as Declared>::WEBHOOK` resolving, so the only messages are
        // about the attribute.
        let stub = ident.map(|ident| {
            quote! {
                impl ::kubebuilder::webhook::Declared for #ident {
                    const WEBHOOK: ::kubebuilder::webhook::Webhook = ::kubebuilder::webhook::INVALID;
                }
            }
        });
        let errors = errors.to_compile_errors();
        return quote! { #item #stub #errors };
    }
    let generated = ident.map(|ident| generate(&ident, &webhook));
    quote! { #item #generated }
}

/// The defaulter or validator type the attribute sits on.
fn webhook_type(item: &TokenStream, errors: &mut Errors) -> Option<Ident> {
    let item: Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(error) => {
            errors.extend(error);
            return None;
        }
    };
    let Some((ident, generics)) = type_ident(&item) else {
        errors.push(
            item.span(),
            "`#[kubebuilder::webhook]` goes on the defaulter or validator type (a struct or an \
             enum) that serves the webhook",
        );
        return None;
    };
    if !generics.params.is_empty() {
        errors.push(
            generics.span(),
            "a webhook type cannot be generic: the webhook server needs one concrete type per path",
        );
        return None;
    }
    Some(ident.clone())
}

fn read(args: &[Arg], errors: &mut Errors) -> Args {
    let mut read = Args::default();
    let with_span =
        |arg: &Arg, errors: &mut Errors| arg.int(errors).map(|n| (n, arg_value_span(arg)));
    for arg in args {
        read.mentioned
            .extend(ARGUMENTS.iter().find(|known| **known == arg.key()));
        match arg.key().as_str() {
            "path" => read.path.set(arg, arg.string(errors), errors),
            "url" => read.url.set(arg, arg.string(errors), errors),
            "mutating" => read.mutating.set(arg, arg.boolean(errors), errors),
            "failure_policy" => {
                let policy = one_of(arg, &["Fail", "Ignore"], errors);
                read.failure_policy.set(arg, policy, errors);
            }
            "match_policy" => {
                let policy = one_of(arg, &["Exact", "Equivalent"], errors);
                read.match_policy.set(arg, policy, errors);
            }
            "side_effects" => {
                let side_effects = side_effects(arg, errors);
                read.side_effects.set(arg, side_effects, errors);
            }
            "timeout_seconds" => {
                let seconds = with_span(arg, errors);
                read.timeout_seconds.set(arg, seconds, errors);
            }
            "groups" => read.groups.set(arg, arg.strings(errors), errors),
            "resources" => read.resources.set(arg, arg.strings(errors), errors),
            "verbs" => read.verbs.set(arg, arg.strings(errors), errors),
            "versions" => read.versions.set(arg, arg.strings(errors), errors),
            "name" => read.name.set(arg, arg.string(errors), errors),
            "admission_review_versions" => {
                let versions = arg.strings(errors);
                read.admission_review_versions.set(arg, versions, errors);
            }
            "reinvocation_policy" => {
                let policy = one_of(arg, &["Never", "IfNeeded"], errors);
                read.reinvocation_policy.set(arg, policy, errors);
            }
            "webhook_versions" => read.webhook_versions.set(arg, arg.strings(errors), errors),
            "service_name" => read.service_name.set(arg, arg.string(errors), errors),
            "service_namespace" => read.service_namespace.set(arg, arg.string(errors), errors),
            "service_port" => {
                let port = with_span(arg, errors);
                read.service_port.set(arg, port, errors);
            }
            "kind" => read.kind.set(arg, arg.string(errors), errors),
            _ => {
                errors.unknown(&arg.name, "argument", ARGUMENTS);
                read.mentioned.extend(closest(&arg.key(), ARGUMENTS));
            }
        }
    }
    read
}

/// Where an argument's value is written, for errors about the value.
fn arg_value_span(arg: &Arg) -> Span {
    match &arg.value {
        args::ArgValue::Value(value) => value.span(),
        _ => arg.span(),
    }
}

/// v1 configurations require `None` or `NoneOnDryRun`; controller-gen accepts `Some` and
/// `Unknown` in the marker and fails when it writes the file.
fn side_effects(arg: &Arg, errors: &mut Errors) -> Option<&'static str> {
    let literal = arg.string(errors)?;
    let value = literal.value();
    if ["some", "unknown"].contains(&value.to_lowercase().as_str()) {
        errors.push(
            literal.span(),
            format!(
                "side_effects \"{value}\" is not allowed in v1 webhook configurations: use \
                 \"None\" or \"NoneOnDryRun\""
            ),
        );
        return None;
    }
    one_of(arg, &["None", "NoneOnDryRun"], errors)
}

/// Reports a required argument as missing, unless it was written with a bad value or
/// misspelled (`mentioned`): that mistake is reported already.
fn missing(errors: &mut Errors, mentioned: &[&str], argument: &str, hint: &str) {
    if !mentioned.contains(&argument) {
        errors.push(
            Span::call_site(),
            format!("missing argument `{argument}`{hint}"),
        );
    }
}

/// A required list: absent and empty are the same mistake.
fn required_list(
    mentioned: &[&str],
    list: &Once<Vec<LitStr>>,
    argument: &str,
    hint: &str,
    errors: &mut Errors,
) -> Vec<LitStr> {
    match list.get() {
        Some(list) if !list.is_empty() => list.clone(),
        // Written as `[]`: missing, whatever else was mentioned.
        Some(_) => {
            missing(errors, &[], argument, hint);
            Vec::new()
        }
        None => {
            missing(errors, mentioned, argument, hint);
            Vec::new()
        }
    }
}

fn validate(args: Args, errors: &mut Errors) -> Webhook {
    let mutating = args.mutating.get().copied();
    if mutating.is_none() {
        missing(
            errors,
            &args.mentioned,
            "mutating",
            ": `mutating = true` for a defaulter, `mutating = false` for a validator",
        );
    }
    if args.failure_policy.span().is_none() {
        missing(
            errors,
            &args.mentioned,
            "failure_policy",
            ": \"Fail\" or \"Ignore\"",
        );
    }
    if args.side_effects.span().is_none() {
        missing(
            errors,
            &args.mentioned,
            "side_effects",
            ": SideEffects is required for creating v1 {Mutating,Validating}WebhookConfiguration; \
             use \"None\" or \"NoneOnDryRun\"",
        );
    }
    let timeout_seconds = args.timeout_seconds.get().and_then(|&(seconds, span)| {
        let valid = (1..=30).contains(&seconds);
        if !valid {
            errors.push(span, "timeout_seconds must be between 1 and 30 seconds");
        }
        valid.then_some(seconds as i32)
    });

    let groups = required_list(
        &args.mentioned,
        &args.groups,
        "groups",
        ": the API groups of the resources, e.g. `groups = [\"batch.tutorial.kubebuilder.io\"]` \
         (`\"core\"` for the core group)",
        errors,
    );
    let resources = required_list(
        &args.mentioned,
        &args.resources,
        "resources",
        ": the resources the webhook admits, e.g. `resources = [\"cronjobs\"]`",
        errors,
    );
    let versions = required_list(
        &args.mentioned,
        &args.versions,
        "versions",
        ": the API versions, e.g. `versions = [\"v1\"]`",
        errors,
    );
    let verbs = required_list(
        &args.mentioned,
        &args.verbs,
        "verbs",
        ": the operations, e.g. `verbs = [\"create\", \"update\"]`",
        errors,
    );
    let mut operations = Vec::new();
    for verb in &verbs {
        let value = verb.value();
        if OPERATIONS.contains(&value.to_lowercase().as_str()) {
            operations.push(value.to_uppercase());
        } else {
            errors.push(
                verb.span(),
                format!(
                    "unknown verb \"{value}\"{}; webhook rules match create, update, delete, \
                     connect or *",
                    did_you_mean(&value, OPERATIONS)
                ),
            );
        }
    }

    let name = match args.name.get() {
        Some(name) => {
            let value = name.value();
            if value.split('.').count() < 3 {
                errors.push(
                    name.span(),
                    format!(
                        "webhook name \"{value}\" should be a domain with at least three segments \
                         separated by dots, e.g. \"mcronjob-v1.kb.io\""
                    ),
                );
            } else {
                check_dns_name(name, "webhook name", DnsName::Subdomain, errors);
            }
            value
        }
        None => {
            missing(
                errors,
                &args.mentioned,
                "name",
                ": a domain with at least three segments, e.g. `name = \"mcronjob-v1.kb.io\"`",
            );
            String::new()
        }
    };

    let admission_review_versions = required_list(
        &args.mentioned,
        &args.admission_review_versions,
        "admission_review_versions",
        ": AdmissionReviewVersions is mandatory for v1 {Mutating,Validating}WebhookConfiguration, \
         e.g. `admission_review_versions = [\"v1\"]`",
        errors,
    );
    for version in &admission_review_versions {
        if !["v1", "v1beta1"].contains(&version.value().as_str()) {
            errors.push(
                version.span(),
                format!(
                    "unknown AdmissionReview version \"{}\": expected \"v1\" or \"v1beta1\"",
                    version.value()
                ),
            );
        }
    }
    for version in args.webhook_versions.get().into_iter().flatten() {
        if version.value() != "v1" {
            errors.push(
                version.span(),
                format!(
                    "unsupported webhook version: {} (only admissionregistration.k8s.io/v1 is \
                     served since Kubernetes 1.22)",
                    version.value()
                ),
            );
        }
    }

    let reinvocation_policy = args.reinvocation_policy.get().copied();
    if let (Some(false), Some(span)) = (mutating, args.reinvocation_policy.span()) {
        errors.push(
            span,
            "`reinvocation_policy` applies to mutating webhooks only",
        );
    }

    let (path, url) = match (args.path.get(), args.url.get()) {
        (Some(_), Some(url)) => {
            errors.push(
                url.span(),
                "`url` and `path` are mutually exclusive: a webhook is reached either through \
                 the webhook Service (`path`) or at a URL",
            );
            (None, None)
        }
        (Some(path), None) => {
            if !path.value().starts_with('/') {
                errors.push(path.span(), "`path` must start with a '/'");
            }
            (Some(path.value()), None)
        }
        (None, Some(url)) => {
            if !url.value().starts_with("https://") {
                errors.push(url.span(), "'https' is the only allowed URL scheme");
            }
            for (argument, span) in [
                ("service_name", args.service_name.span()),
                ("service_namespace", args.service_namespace.span()),
                ("service_port", args.service_port.span()),
            ] {
                if let Some(span) = span {
                    errors.push(
                        span,
                        format!(
                            "`{argument}` applies to `path` webhooks (reached through a Service), \
                             not to `url` ones"
                        ),
                    );
                }
            }
            (None, Some(url.value()))
        }
        (None, None) => {
            let path = mutating.and_then(|mutating| {
                derive_path(
                    mutating,
                    &groups,
                    &versions,
                    &resources,
                    args.kind.get(),
                    errors,
                )
            });
            (path, None)
        }
    };
    if let (Some(kind), true) = (
        args.kind.get(),
        args.path.get().or(args.url.get()).is_some(),
    ) {
        errors.push(
            kind.span(),
            "`kind` only names the kind in the default path; remove it, or `path` and `url`",
        );
    }

    if let Some(service) = args.service_name.get() {
        check_dns_name(service, "service_name", DnsName::Label, errors);
    }
    if let Some(namespace) = args.service_namespace.get() {
        check_dns_name(namespace, "service_namespace", DnsName::Label, errors);
    }
    let service_port = args.service_port.get().and_then(|&(port, span)| {
        let valid = (1..=65535).contains(&port);
        if !valid {
            errors.push(span, "service_port must be between 1 and 65535");
        }
        valid.then_some(port as i32)
    });

    let values = |literals: &[LitStr]| literals.iter().map(LitStr::value).collect::<Vec<_>>();
    Webhook {
        name,
        mutating: mutating.unwrap_or_default(),
        path,
        url,
        failure_policy: args.failure_policy.get().copied().unwrap_or_default(),
        match_policy: args.match_policy.get().copied(),
        side_effects: args.side_effects.get().copied().unwrap_or_default(),
        groups: values(&groups)
            .into_iter()
            .map(|group| {
                if group == "core" {
                    String::new()
                } else {
                    group
                }
            })
            .collect(),
        resources: values(&resources),
        verbs: operations,
        versions: values(&versions),
        admission_review_versions: values(&admission_review_versions),
        reinvocation_policy,
        timeout_seconds,
        service_name: args.service_name.get().map(LitStr::value),
        service_namespace: args.service_namespace.get().map(LitStr::value),
        service_port,
    }
}

/// The default path when neither `path` nor `url` is given. It needs one group, one
/// version and a kind: `kind`, or else the only resource, singularised.
fn derive_path(
    mutating: bool,
    groups: &[LitStr],
    versions: &[LitStr],
    resources: &[LitStr],
    kind: Option<&LitStr>,
    errors: &mut Errors,
) -> Option<String> {
    // Missing lists were reported already.
    if groups.is_empty() || versions.is_empty() || resources.is_empty() {
        return None;
    }
    let kind = match (kind, resources) {
        (Some(kind), _) => Some(kind.value()),
        (None, [resource]) if !resource.value().contains('/') => Some(singular(&resource.value())),
        _ => None,
    };
    match (groups, versions, kind) {
        ([group], [version], Some(kind)) => {
            let group = group.value();
            let group = if group == "core" { "" } else { &group };
            Some(default_path(mutating, group, &version.value(), &kind))
        }
        _ => {
            errors.push(
                Span::call_site(),
                "cannot derive the default path: it needs exactly one group, one version and one \
                 resource (or `kind = \"...\"`); set `path` or `url` instead",
            );
            None
        }
    }
}

/// kubebuilder's default path: `/mutate-` or `/validate-`, then the group with dots as
/// dashes, the version and the kind, all lower-cased.
fn default_path(mutating: bool, group: &str, version: &str, kind: &str) -> String {
    let prefix = if mutating { "mutate" } else { "validate" };
    format!(
        "/{prefix}-{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// English plural → singular for resource names, as far as Kubernetes resources need:
/// `policies` → `policy`, `ingresses` → `ingress`, `cronjobs` → `cronjob`.
fn singular(plural: &str) -> String {
    if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|suffix| plural.ends_with(suffix))
    {
        plural[..plural.len() - 2].to_owned()
    } else {
        plural.strip_suffix('s').unwrap_or(plural).to_owned()
    }
}

fn generate(ident: &Ident, webhook: &Webhook) -> TokenStream {
    let Webhook {
        name,
        mutating,
        path,
        url,
        failure_policy,
        match_policy,
        side_effects,
        groups,
        resources,
        verbs,
        versions,
        admission_review_versions,
        reinvocation_policy,
        timeout_seconds,
        service_name,
        service_namespace,
        service_port,
    } = webhook;
    let path = optional(path.as_deref());
    let url = optional(url.as_deref());
    let match_policy = optional(*match_policy);
    let reinvocation_policy = optional(*reinvocation_policy);
    let timeout_seconds = optional(*timeout_seconds);
    let service_port = optional(*service_port);
    let service_name = match service_name {
        Some(name) => quote!(#name),
        None => quote!(::kubebuilder::webhook::DEFAULT_SERVICE_NAME),
    };
    let service_namespace = match service_namespace {
        Some(namespace) => quote!(#namespace),
        None => quote!(::kubebuilder::webhook::DEFAULT_SERVICE_NAMESPACE),
    };
    quote! {
        impl ::kubebuilder::webhook::Declared for #ident {
            const WEBHOOK: ::kubebuilder::webhook::Webhook = ::kubebuilder::webhook::Webhook {
                name: #name,
                mutating: #mutating,
                path: #path,
                url: #url,
                failure_policy: #failure_policy,
                match_policy: #match_policy,
                side_effects: #side_effects,
                groups: &[#(#groups),*],
                resources: &[#(#resources),*],
                verbs: &[#(#verbs),*],
                versions: &[#(#versions),*],
                admission_review_versions: &[#(#admission_review_versions),*],
                reinvocation_policy: #reinvocation_policy,
                timeout_seconds: #timeout_seconds,
                service_name: #service_name,
                service_namespace: #service_namespace,
                service_port: #service_port,
            };
        }
        ::kubebuilder::__private::inventory::submit! {
            <#ident as ::kubebuilder::webhook::Declared>::WEBHOOK
        }
    }
}

const CONFIGURATION_ARGUMENTS: &[&str] = &["mutating", "name"];

/// Entry point of `#[kubebuilder::webhook_configuration(mutating = …, name = …)]`, which
/// goes on any item.
pub fn expand_configuration(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let mut mutating = Once::default();
    let mut name = Once::<LitStr>::default();
    let mut mentioned = Vec::new();
    for arg in &args {
        match arg.key().as_str() {
            "mutating" => mutating.set(arg, arg.boolean(&mut errors), &mut errors),
            "name" => name.set(arg, arg.string(&mut errors), &mut errors),
            _ => {
                errors.unknown(&arg.name, "argument", CONFIGURATION_ARGUMENTS);
                mentioned.extend(closest(&arg.key(), CONFIGURATION_ARGUMENTS));
            }
        }
    }
    if mutating.get().is_none() {
        missing(
            &mut errors,
            &mentioned,
            "mutating",
            ": `true` names the MutatingWebhookConfiguration, `false` the Validating one",
        );
    }
    match name.get() {
        Some(name) => check_dns_name(name, "configuration name", DnsName::Subdomain, &mut errors),
        None => missing(
            &mut errors,
            &mentioned,
            "name",
            ": the configuration object's name",
        ),
    }
    if !errors.is_empty() {
        let errors = errors.to_compile_errors();
        return quote! { #item #errors };
    }
    let mutating = mutating.take().unwrap_or_default();
    let name = name.take().map(|name| name.value()).unwrap_or_default();
    quote! {
        #item
        ::kubebuilder::__private::inventory::submit! {
            ::kubebuilder::webhook::Configuration { mutating: #mutating, name: #name }
        }
    }
}

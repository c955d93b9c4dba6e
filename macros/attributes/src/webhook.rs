//! `#[kubebuilder::webhook(...)]` (controller-gen's `+kubebuilder:webhook`) and
//! `#[kubebuilder::webhook_configuration(...)]` (`+kubebuilder:webhookconfiguration`):
//! parse the arguments, validate them into a [`Webhook`] with the values normalised as
//! controller-gen normalises them, generate the `Declared` impl and the link-time
//! registration (see `rbac.rs` for why registration rather than source scanning).
//!
//! controller-gen checks some rules only when it writes `manifests.yaml` (sideEffects,
//! timeoutSeconds, path xor url, admissionReviewVersions) and passes unknown values
//! through for the apiserver to refuse; here all of them are compile errors.

use kubebuilder_model::webhook::{
    Configuration, DEFAULT_SERVICE_NAME, DEFAULT_SERVICE_NAMESPACE, DefaultPath, Webhook,
};
use kubebuilder_model::{self as model, Text};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Ident, Item, LitStr};

use crate::args::{self, Arg, Argument, Errors, Given};
use crate::k8s_values::{DnsName, check_dns_name, did_you_mean, one_of, type_ident};
use crate::tokens::{Constant, optional};

/// The operations a webhook rule matches, as written in the attribute (any case).
const OPERATIONS: &[&str] = &["create", "update", "delete", "connect", "*"];

/// The arguments as written. Policies are already matched against their allowed values
/// (in their API spelling).
#[derive(Default)]
struct Args {
    path: Option<LitStr>,
    url: Option<LitStr>,
    mutating: Option<bool>,
    failure_policy: Option<&'static str>,
    match_policy: Option<&'static str>,
    side_effects: Option<&'static str>,
    timeout_seconds: Option<(i64, Span)>,
    groups: Option<Vec<LitStr>>,
    resources: Option<Vec<LitStr>>,
    verbs: Option<Vec<LitStr>>,
    versions: Option<Vec<LitStr>>,
    name: Option<LitStr>,
    admission_review_versions: Option<Vec<LitStr>>,
    reinvocation_policy: Option<Given<&'static str>>,
    webhook_versions: Option<Vec<LitStr>>,
    service_name: Option<Given<LitStr>>,
    service_namespace: Option<Given<LitStr>>,
    service_port: Option<Given<(i64, Span)>>,
    /// Ours: the kind in the default path, when it is not the single resource singularised.
    kind: Option<LitStr>,
    /// Ours: `for = path::Kind`, the kind whose group, version, resource and path the
    /// webhook takes.
    for_kind: Option<Given<syn::Path>>,
    patch: Option<LitStr>,
    /// The arguments written, with a bad value or mentioned too: if such an argument
    /// ends up absent, that mistake is already reported.
    mentioned: Vec<&'static str>,
}

const ARGUMENTS: &[Argument<Args>] = &[
    Argument::once("path", |arg, a: &mut Args, errors| {
        a.path = arg.string(errors)
    }),
    Argument::once("url", |arg, a: &mut Args, errors| {
        a.url = arg.string(errors)
    }),
    Argument::once("mutating", |arg, a: &mut Args, errors| {
        a.mutating = arg.boolean(errors)
    }),
    Argument::once("failure_policy", |arg, a: &mut Args, errors| {
        a.failure_policy = one_of(arg, &["Fail", "Ignore"], errors)
    }),
    Argument::once("match_policy", |arg, a: &mut Args, errors| {
        a.match_policy = one_of(arg, &["Exact", "Equivalent"], errors)
    }),
    Argument::once("side_effects", |arg, a: &mut Args, errors| {
        a.side_effects = side_effects(arg, errors)
    }),
    Argument::once("timeout_seconds", |arg, a: &mut Args, errors| {
        a.timeout_seconds = int_with_span(arg, errors)
    }),
    Argument::once("groups", |arg, a: &mut Args, errors| {
        a.groups = arg.strings(errors)
    }),
    Argument::once("resources", |arg, a: &mut Args, errors| {
        a.resources = arg.strings(errors)
    }),
    Argument::once("verbs", |arg, a: &mut Args, errors| {
        a.verbs = arg.strings(errors)
    }),
    Argument::once("versions", |arg, a: &mut Args, errors| {
        a.versions = arg.strings(errors)
    }),
    Argument::once("name", |arg, a: &mut Args, errors| {
        a.name = arg.string(errors)
    }),
    Argument::once("admission_review_versions", |arg, a: &mut Args, errors| {
        a.admission_review_versions = arg.strings(errors)
    }),
    Argument::once("reinvocation_policy", |arg, a: &mut Args, errors| {
        a.reinvocation_policy = Given::of(arg, one_of(arg, &["Never", "IfNeeded"], errors))
    }),
    Argument::once("webhook_versions", |arg, a: &mut Args, errors| {
        a.webhook_versions = arg.strings(errors)
    }),
    Argument::once("service_name", |arg, a: &mut Args, errors| {
        a.service_name = Given::of(arg, arg.string(errors))
    }),
    Argument::once("service_namespace", |arg, a: &mut Args, errors| {
        a.service_namespace = Given::of(arg, arg.string(errors))
    }),
    Argument::once("service_port", |arg, a: &mut Args, errors| {
        a.service_port = Given::of(arg, int_with_span(arg, errors))
    }),
    Argument::once("patch", |arg, a: &mut Args, errors| {
        a.patch = arg.string(errors)
    }),
    Argument::once("kind", |arg, a: &mut Args, errors| {
        a.kind = arg.string(errors)
    }),
    Argument::once("for", |arg, a: &mut Args, errors| {
        a.for_kind = Given::of(arg, arg.path(errors))
    }),
];

/// Entry point of `#[kubebuilder::webhook(...)]`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    match read(attr, &item) {
        Ok(declaration) => {
            let generated = generate(&declaration);
            quote! { #item #generated }
        }
        Err(errors) => {
            // The stub keeps `<T as Declared>::WEBHOOK` resolving, so the only messages are
            // about the attribute.
            let stub = webhook_type(&item, &mut Errors::default()).map(|ident| {
                quote! {
                    impl ::kubebuilder::webhook::Declared for #ident {
                        const WEBHOOK: ::kubebuilder::webhook::Webhook = ::kubebuilder::__private::webhook::INVALID;
                    }
                }
            });
            let errors = errors.to_compile_errors();
            quote! { #item #stub #errors }
        }
    }
}

/// A `#[kubebuilder::webhook(...)]`, read.
pub struct Declaration {
    /// The defaulter or validator type the attribute sits on.
    pub ty: Ident,
    /// The webhook. Declared `for` a kind, its rule's group, version and resource and its
    /// default path are the kind's: left empty here, for whoever knows the kind to fill in
    /// ([`Declaration::for_kind`]).
    pub webhook: Webhook,
    /// `for = path::Kind`.
    pub for_kind: Option<syn::Path>,
}

impl Declaration {
    /// The webhook of a declaration `for` a kind, given that kind's names.
    pub fn for_kind(&self, group: &str, version: &str, plural: &str, kind: &str) -> Webhook {
        let mut webhook = self.webhook.clone();
        webhook.groups = model::texts([group]);
        webhook.versions = model::texts([version]);
        webhook.resources = model::texts([plural]);
        if webhook.url.is_none() {
            let path = DefaultPath::new(webhook.mutating, group, version, kind);
            webhook.path = Some(path.as_str().to_owned().into());
        }
        webhook
    }
}

/// Reads `#[kubebuilder::webhook(attr)]` on `item`: the type serving it and the webhook,
/// or every mistake found.
pub fn read(attr: TokenStream, item: &TokenStream) -> Result<Declaration, Errors> {
    let mut errors = Errors::default();
    let ident = webhook_type(item, &mut errors);
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let mut read = Args::default();
    read.mentioned = args::read(&args, ARGUMENTS, "", &mut read, &mut errors);
    let for_kind = read.for_kind.as_ref().map(|given| given.value.clone());
    let webhook = validate(read, &mut errors);
    match ident {
        Some(ty) => errors.into_result(Declaration {
            ty,
            webhook,
            for_kind,
        }),
        // `webhook_type` reported why.
        None => Err(errors),
    }
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

/// An integer with where its value is written, for errors about the value.
fn int_with_span(arg: &Arg, errors: &mut Errors) -> Option<(i64, Span)> {
    arg.int(errors).map(|n| (n, arg_value_span(arg)))
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
    list: &Option<Vec<LitStr>>,
    argument: &str,
    hint: &str,
    errors: &mut Errors,
) -> Vec<LitStr> {
    match list {
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

/// The rule lists of a webhook, as written.
struct Rules {
    groups: Vec<LitStr>,
    resources: Vec<LitStr>,
    versions: Vec<LitStr>,
    verbs: Vec<LitStr>,
}

fn validate(args: Args, errors: &mut Errors) -> Webhook {
    check_required_policies(&args, errors);
    let mutating = args.mutating;
    let timeout_seconds = args.timeout_seconds.and_then(|(seconds, span)| {
        let valid = (1..=30).contains(&seconds);
        if !valid {
            errors.push(span, "timeout_seconds must be between 1 and 30 seconds");
        }
        valid.then_some(seconds as i32)
    });
    let rules = rules(&args, errors);
    let operations = operations(&rules.verbs, errors);
    let name = webhook_name(&args, errors);
    let admission_review_versions = admission_review_versions(&args, errors);
    check_webhook_versions(&args, errors);
    if let (Some(false), Some(policy)) = (mutating, &args.reinvocation_policy) {
        errors.push(
            policy.span,
            "`reinvocation_policy` applies to mutating webhooks only",
        );
    }
    let (path, url) = client_config(&args, &rules, errors);
    let service_port = check_service(&args, errors);
    let patch = args
        .patch
        .as_ref()
        .and_then(|patch| check_patch(patch, mutating.unwrap_or_default(), errors));

    let values = |literals: &[LitStr]| model::texts(literals.iter().map(LitStr::value));
    // The core group is `""` in the API (controller-gen rewrites it too).
    let groups = rules.groups.iter().map(|group| match group.value() {
        core if core == "core" => String::new(),
        group => group,
    });
    Webhook {
        name: name.into(),
        mutating: mutating.unwrap_or_default(),
        path: path.map(Text::from),
        url: url.map(Text::from),
        failure_policy: args.failure_policy.unwrap_or_default().into(),
        match_policy: args.match_policy.map(Text::from),
        side_effects: args.side_effects.unwrap_or_default().into(),
        groups: model::texts(groups),
        resources: values(&rules.resources),
        verbs: model::texts(operations),
        versions: values(&rules.versions),
        admission_review_versions: values(&admission_review_versions),
        reinvocation_policy: args.reinvocation_policy.map(|policy| policy.value.into()),
        timeout_seconds,
        service_name: args
            .service_name
            .map_or(Text::Borrowed(DEFAULT_SERVICE_NAME), |name| {
                name.value.value().into()
            }),
        service_namespace: args
            .service_namespace
            .map_or(Text::Borrowed(DEFAULT_SERVICE_NAMESPACE), |namespace| {
                namespace.value.value().into()
            }),
        service_port,
        patch: patch.map(Text::from),
    }
}

/// The fields of a MutatingWebhook (a ValidatingWebhook's are the same but
/// `reinvocationPolicy`), which `patch` may set.
const WEBHOOK_FIELDS: &[&str] = &[
    "admissionReviewVersions",
    "clientConfig",
    "failurePolicy",
    "matchConditions",
    "matchPolicy",
    "name",
    "namespaceSelector",
    "objectSelector",
    "reinvocationPolicy",
    "rules",
    "sideEffects",
    "timeoutSeconds",
];

/// `patch`: a JSON object of the webhook entry's fields, without strategic merge
/// directives (a `null` removes a field; nothing generated needs `$patch` or
/// `$retainKeys`). What each field holds is checked against the API types when the
/// manifests are rendered. Returns the patch as written.
fn check_patch(patch: &LitStr, mutating: bool, errors: &mut Errors) -> Option<String> {
    let text = patch.value();
    let object = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(object)) => object,
        Ok(_) => {
            errors.push(
                patch.span(),
                "`patch` is a JSON object of the webhook's fields, e.g. `r#\"{\"namespaceSelector\": {\"matchLabels\": {\"env\": \"prod\"}}}\"#`",
            );
            return None;
        }
        Err(error) => {
            errors.push(patch.span(), format!("`patch` is not valid JSON: {error}"));
            return None;
        }
    };
    let fields: Vec<&str> = WEBHOOK_FIELDS
        .iter()
        .copied()
        .filter(|field| mutating || *field != "reinvocationPolicy")
        .collect();
    let kind = if mutating {
        "a mutating"
    } else {
        "a validating"
    };
    let mut valid = true;
    for key in object.keys() {
        if key == "reinvocationPolicy" && !mutating {
            valid = false;
            errors.push(
                patch.span(),
                "`patch` sets `reinvocationPolicy`, which applies to mutating webhooks only",
            );
        } else if !fields.contains(&key.as_str()) {
            valid = false;
            errors.push(
                patch.span(),
                format!(
                    "`patch` sets `{key}`, which is not a field of {kind} webhook{}",
                    did_you_mean(key, &fields)
                ),
            );
        }
    }
    if let Some(directive) = directive_in(&serde_json::Value::Object(object)) {
        valid = false;
        errors.push(
            patch.span(),
            format!(
                "`patch` uses the strategic merge directive `{directive}`, which is not supported: \
                 write the fields themselves (`null` removes one)"
            ),
        );
    }
    valid.then_some(text)
}

/// The first `$...` key of a patch, at any depth.
fn directive_in(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Object(object) => object.iter().find_map(|(key, value)| {
            if key.starts_with('$') {
                Some(key.clone())
            } else {
                directive_in(value)
            }
        }),
        serde_json::Value::Array(items) => items.iter().find_map(directive_in),
        _ => None,
    }
}

/// `mutating`, `failure_policy` and `side_effects` have no default.
fn check_required_policies(args: &Args, errors: &mut Errors) {
    if args.mutating.is_none() {
        missing(
            errors,
            &args.mentioned,
            "mutating",
            ": `mutating = true` for a defaulter, `mutating = false` for a validator",
        );
    }
    if args.failure_policy.is_none() {
        missing(
            errors,
            &args.mentioned,
            "failure_policy",
            ": \"Fail\" or \"Ignore\"",
        );
    }
    if args.side_effects.is_none() {
        missing(
            errors,
            &args.mentioned,
            "side_effects",
            ": SideEffects is required for creating v1 {Mutating,Validating}WebhookConfiguration; \
             use \"None\" or \"NoneOnDryRun\"",
        );
    }
}

/// A type path as written, without the spaces of its tokens (`k8s_openapi::api::core::v1::Pod`).
fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string().replace(' ', "")
}

/// Where a list was written: its first item.
fn first_span(list: &[LitStr]) -> Span {
    list.first().map_or_else(Span::call_site, LitStr::span)
}

/// The four lists of the webhook's rule, each required; declared `for` a kind, the verbs
/// alone (the kind has the rest).
fn rules(args: &Args, errors: &mut Errors) -> Rules {
    let mentioned = &args.mentioned;
    // Last in either case, so that the missing lists are reported in the order written.
    let verbs = |errors: &mut Errors| {
        required_list(
            mentioned,
            &args.verbs,
            "verbs",
            ": the operations, e.g. `verbs = [\"create\", \"update\"]`",
            errors,
        )
    };
    if let Some(for_kind) = &args.for_kind {
        let taken = [
            ("groups", args.groups.as_deref().map(first_span)),
            ("resources", args.resources.as_deref().map(first_span)),
            ("versions", args.versions.as_deref().map(first_span)),
            ("path", args.path.as_ref().map(LitStr::span)),
            ("kind", args.kind.as_ref().map(LitStr::span)),
        ];
        for (argument, span) in taken {
            if let Some(span) = span {
                errors.push(
                    span,
                    format!(
                        "`{argument}` comes from the kind the webhook is declared `for` ({}): \
                         remove it",
                        path_text(&for_kind.value)
                    ),
                );
            }
        }
        return Rules {
            groups: Vec::new(),
            resources: Vec::new(),
            versions: Vec::new(),
            verbs: verbs(errors),
        };
    }
    Rules {
        groups: required_list(
            mentioned,
            &args.groups,
            "groups",
            ": the API groups of the resources, e.g. `groups = [\"batch.tutorial.kubebuilder.io\"]` \
             (`\"core\"` for the core group)",
            errors,
        ),
        resources: required_list(
            mentioned,
            &args.resources,
            "resources",
            ": the resources the webhook admits, e.g. `resources = [\"cronjobs\"]`",
            errors,
        ),
        versions: required_list(
            mentioned,
            &args.versions,
            "versions",
            ": the API versions, e.g. `versions = [\"v1\"]`",
            errors,
        ),
        verbs: verbs(errors),
    }
}

/// The verbs as the API's operations (`CREATE`, ...).
fn operations(verbs: &[LitStr], errors: &mut Errors) -> Vec<String> {
    let mut operations = Vec::new();
    for verb in verbs {
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
    operations
}

/// The webhook's name: a domain of at least three segments.
fn webhook_name(args: &Args, errors: &mut Errors) -> String {
    let Some(name) = &args.name else {
        missing(
            errors,
            &args.mentioned,
            "name",
            ": a domain with at least three segments, e.g. `name = \"mcronjob-v1.kb.io\"`",
        );
        return String::new();
    };
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

fn admission_review_versions(args: &Args, errors: &mut Errors) -> Vec<LitStr> {
    let versions = required_list(
        &args.mentioned,
        &args.admission_review_versions,
        "admission_review_versions",
        ": AdmissionReviewVersions is mandatory for v1 {Mutating,Validating}WebhookConfiguration, \
         e.g. `admission_review_versions = [\"v1\"]`",
        errors,
    );
    for version in &versions {
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
    versions
}

fn check_webhook_versions(args: &Args, errors: &mut Errors) {
    for version in args.webhook_versions.iter().flatten() {
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
}

/// How the apiserver reaches the webhook: `path` (through the Service), `url`, or the
/// default path.
fn client_config(
    args: &Args,
    rules: &Rules,
    errors: &mut Errors,
) -> (Option<String>, Option<String>) {
    let config = path_or_url(args, rules, errors);
    // Declared `for` a kind, `kind` is refused already.
    let explicit = args.path.is_some() || args.url.is_some();
    if let (Some(kind), true, None) = (&args.kind, explicit, &args.for_kind) {
        errors.push(
            kind.span(),
            "`kind` only names the kind in the default path; remove it, or `path` and `url`",
        );
    }
    config
}

fn path_or_url(
    args: &Args,
    rules: &Rules,
    errors: &mut Errors,
) -> (Option<String>, Option<String>) {
    match (&args.path, &args.url) {
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
            let service = [
                ("service_name", args.service_name.as_ref().map(|g| g.span)),
                (
                    "service_namespace",
                    args.service_namespace.as_ref().map(|g| g.span),
                ),
                ("service_port", args.service_port.as_ref().map(|g| g.span)),
            ];
            for (argument, span) in service {
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
        // The kind's default path, which who knows the kind fills in.
        (None, None) if args.for_kind.is_some() => (None, None),
        (None, None) => {
            let path = args.mutating.and_then(|mutating| {
                derive_path(
                    mutating,
                    &rules.groups,
                    &rules.versions,
                    &rules.resources,
                    args.kind.as_ref(),
                    errors,
                )
            });
            (path, None)
        }
    }
}

/// The Service's name and namespace are DNS labels, its port a port.
fn check_service(args: &Args, errors: &mut Errors) -> Option<i32> {
    if let Some(service) = &args.service_name {
        check_dns_name(&service.value, "service_name", DnsName::Label, errors);
    }
    if let Some(namespace) = &args.service_namespace {
        check_dns_name(
            &namespace.value,
            "service_namespace",
            DnsName::Label,
            errors,
        );
    }
    args.service_port.as_ref().and_then(|given| {
        let (port, span) = given.value;
        let valid = (1..=65535).contains(&port);
        if !valid {
            errors.push(span, "service_port must be between 1 and 65535");
        }
        valid.then_some(port as i32)
    })
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
            let path = DefaultPath::new(mutating, group, &version.value(), &kind);
            Some(path.as_str().to_owned())
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

fn generate(declaration: &Declaration) -> TokenStream {
    let Declaration {
        ty,
        webhook,
        for_kind,
    } = declaration;
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
        patch,
    } = webhook;
    let [
        name,
        failure_policy,
        side_effects,
        service_name,
        service_namespace,
    ] = [
        name,
        failure_policy,
        side_effects,
        service_name,
        service_namespace,
    ]
    .map(|t| t.constant());
    let [path, url_tokens, match_policy, reinvocation_policy] =
        [path, url, match_policy, reinvocation_policy].map(|t| t.constant());
    let [
        groups,
        resources,
        verbs,
        versions,
        admission_review_versions,
    ] = [
        groups,
        resources,
        verbs,
        versions,
        admission_review_versions,
    ]
    .map(|l| l.constant());
    let timeout_seconds = optional(*timeout_seconds);
    let service_port = optional(*service_port);
    let patch = patch.constant();
    let rule = Rule {
        groups,
        resources,
        versions,
        path,
        statics: TokenStream::new(),
    };
    let (rule, served) = match for_kind {
        Some(kind) => (
            kind_rule(kind, *mutating, url.is_none()),
            quote!(impl ::kubebuilder::webhook::Serves<#kind> for #ty {}),
        ),
        None => (
            rule,
            quote!(impl<K: ?::core::marker::Sized> ::kubebuilder::webhook::Serves<K> for #ty {}),
        ),
    };
    let Rule {
        groups,
        resources,
        versions,
        path,
        statics,
    } = rule;
    quote! {
        impl ::kubebuilder::webhook::Declared for #ty {
            const WEBHOOK: ::kubebuilder::webhook::Webhook = {
                #statics
                ::kubebuilder::webhook::Webhook {
                    name: #name,
                    mutating: #mutating,
                    path: #path,
                    url: #url_tokens,
                    failure_policy: #failure_policy,
                    match_policy: #match_policy,
                    side_effects: #side_effects,
                    groups: #groups,
                    resources: #resources,
                    verbs: #verbs,
                    versions: #versions,
                    admission_review_versions: #admission_review_versions,
                    reinvocation_policy: #reinvocation_policy,
                    timeout_seconds: #timeout_seconds,
                    service_name: #service_name,
                    service_namespace: #service_namespace,
                    service_port: #service_port,
                    patch: #patch,
                }
            };
        }
        #served
        ::kubebuilder::__private::inventory::submit! {
            <#ty as ::kubebuilder::webhook::Declared>::WEBHOOK
        }
    }
}

/// The generated rule of a webhook and its path, and the statics they borrow.
struct Rule {
    groups: TokenStream,
    resources: TokenStream,
    versions: TokenStream,
    path: TokenStream,
    statics: TokenStream,
}

/// The rule and default path of a webhook declared `for` a kind: the constants of the kind's
/// `Target` impl, and the path built from them at compile time (unless a `url` replaces it).
fn kind_rule(kind: &syn::Path, mutating: bool, with_path: bool) -> Rule {
    let target = quote!(<#kind as ::kubebuilder::webhook::Target>);
    let one = |name: TokenStream| quote!(::std::borrow::Cow::Borrowed(&[::std::borrow::Cow::Borrowed(#target::#name)]));
    let (path, statics) = if with_path {
        (
            quote!(::core::option::Option::Some(::std::borrow::Cow::Borrowed(
                PATH.as_str()
            ))),
            quote! {
                static PATH: ::kubebuilder::__private::DefaultPath =
                    ::kubebuilder::__private::DefaultPath::new(
                        #mutating, #target::GROUP, #target::VERSION, #target::KIND,
                    );
            },
        )
    } else {
        (quote!(::core::option::Option::None), TokenStream::new())
    };
    Rule {
        groups: one(quote!(GROUP)),
        resources: one(quote!(PLURAL)),
        versions: one(quote!(VERSION)),
        path,
        statics,
    }
}

#[derive(Default)]
struct ConfigurationArgs {
    mutating: Option<bool>,
    name: Option<LitStr>,
}

const CONFIGURATION_ARGUMENTS: &[Argument<ConfigurationArgs>] = &[
    Argument::once("mutating", |arg, c: &mut ConfigurationArgs, errors| {
        c.mutating = arg.boolean(errors)
    }),
    Argument::once("name", |arg, c: &mut ConfigurationArgs, errors| {
        c.name = arg.string(errors)
    }),
];

/// Entry point of `#[kubebuilder::webhook_configuration(mutating = …, name = …)]`, which
/// goes on any item.
pub fn expand_configuration(attr: TokenStream, item: TokenStream) -> TokenStream {
    match read_configuration(attr) {
        Ok(Configuration { mutating, name }) => {
            let name = name.constant();
            quote! {
                #item
                ::kubebuilder::__private::inventory::submit! {
                    ::kubebuilder::webhook::Configuration { mutating: #mutating, name: #name }
                }
            }
        }
        Err(errors) => {
            let errors = errors.to_compile_errors();
            quote! { #item #errors }
        }
    }
}

/// Reads the arguments of `#[kubebuilder::webhook_configuration(attr)]`, or every mistake
/// found.
pub fn read_configuration(attr: TokenStream) -> Result<Configuration, Errors> {
    let mut errors = Errors::default();
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let mut configuration = ConfigurationArgs::default();
    let mentioned = args::read(
        &args,
        CONFIGURATION_ARGUMENTS,
        "",
        &mut configuration,
        &mut errors,
    );
    let ConfigurationArgs { mutating, name } = configuration;
    if mutating.is_none() {
        missing(
            &mut errors,
            &mentioned,
            "mutating",
            ": `true` names the MutatingWebhookConfiguration, `false` the Validating one",
        );
    }
    match &name {
        Some(name) => check_dns_name(name, "configuration name", DnsName::Subdomain, &mut errors),
        None => missing(
            &mut errors,
            &mentioned,
            "name",
            ": the configuration object's name",
        ),
    }
    errors.into_result(Configuration {
        mutating: mutating.unwrap_or_default(),
        name: name.map(|name| name.value()).unwrap_or_default().into(),
    })
}

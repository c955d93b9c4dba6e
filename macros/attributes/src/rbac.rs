//! `#[kubebuilder::rbac(...)]` (controller-gen's `+kubebuilder:rbac`): parse the arguments,
//! validate them into a [`Rule`], generate its link-time registration.
//!
//! Registration uses `inventory`: the CRD attributes register the same way, and a rule
//! exists exactly when the code declaring it compiles. `cargo xtask manifests` reads the
//! sources first ([`read`], the same parser), and builds the registrations wherever its
//! reading of `cfg`s, modules or types could disagree with rustc's.

use kubebuilder_model as model;
use kubebuilder_model::rbac::Rule;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::spanned::Spanned;
use syn::{Item, LitStr};

use crate::args::{self, Argument, Errors, Given};
use crate::k8s_values::{DnsName, check_dns_name, did_you_mean, type_ident};
use crate::tokens::Constant;

/// The verbs the Kubernetes authorizer checks on API resources (`*` = all). Custom verbs
/// of aggregated APIs are not accepted: a typo would otherwise silently grant nothing.
const RESOURCE_VERBS: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "impersonate",
    "bind",
    "escalate",
    "approve",
    "sign",
    "use",
    "*",
];

/// Non-resource URLs are authorised with the request's lower-cased HTTP method.
const URL_VERBS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "head", "options", "*",
];

/// The arguments as written.
#[derive(Default)]
struct Args {
    groups: Option<Vec<LitStr>>,
    resources: Option<Vec<LitStr>>,
    resource_names: Option<Vec<LitStr>>,
    verbs: Option<Given<Vec<LitStr>>>,
    urls: Option<Vec<LitStr>>,
    namespace: Option<LitStr>,
    role_name: Option<LitStr>,
    /// The arguments written, with a bad value or mentioned too: if such an argument
    /// ends up absent, that mistake is already reported.
    mentioned: Vec<&'static str>,
}

const ARGUMENTS: &[Argument<Args>] = &[
    Argument::once("groups", |arg, a: &mut Args, errors| {
        a.groups = arg.strings(errors)
    }),
    Argument::once("resources", |arg, a: &mut Args, errors| {
        a.resources = arg.strings(errors)
    }),
    Argument::once("resource_names", |arg, a: &mut Args, errors| {
        a.resource_names = arg.strings(errors)
    }),
    Argument::once("verbs", |arg, a: &mut Args, errors| {
        a.verbs = Given::of(arg, arg.strings(errors))
    }),
    Argument::once("urls", |arg, a: &mut Args, errors| {
        a.urls = arg.strings(errors)
    }),
    Argument::once("namespace", |arg, a: &mut Args, errors| {
        a.namespace = arg.string(errors)
    }),
    Argument::once("role_name", |arg, a: &mut Args, errors| {
        a.role_name = arg.string(errors)
    }),
];

/// Entry point of `#[kubebuilder::rbac(...)]`: this rule's registration, and those of the
/// `#[kubebuilder::rbac(...)]` attributes below it on the same item. Each attribute would
/// otherwise expand the next inside its own expansion, and a reconciler with as many rules
/// as Kueue's controllers have (about 150) would pass the compiler's recursion limit.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let (item, below) = without_rules_below(item);
    let mut registrations = TokenStream::new();
    for attr in std::iter::once(attr).chain(below) {
        registrations.extend(match read(attr, &item) {
            Ok(rule) => generate(&rule),
            // The item stays as written, so code using the type compiles and the rule's
            // mistakes are the only messages.
            Err(errors) => errors.to_compile_errors(),
        });
    }
    quote! { #item #registrations }
}

/// The item without its `#[kubebuilder::rbac(...)]` attributes, and their arguments in
/// order; the item as it is when it is no type (its one error is [`read`]'s).
fn without_rules_below(item: TokenStream) -> (TokenStream, Vec<TokenStream>) {
    let mut parsed = match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) => parsed,
        Err(_) => return (item, Vec::new()),
    };
    let attrs = match &mut parsed {
        Item::Struct(item) => &mut item.attrs,
        Item::Enum(item) => &mut item.attrs,
        Item::Union(item) => &mut item.attrs,
        _ => return (item, Vec::new()),
    };
    let mut below = Vec::new();
    attrs.retain(|attr| match &attr.meta {
        syn::Meta::List(list) if is_rbac_path(&list.path) => {
            below.push(list.tokens.clone());
            false
        }
        _ => true,
    });
    (parsed.into_token_stream(), below)
}

/// `kubebuilder::rbac` or `::kubebuilder::rbac`: this attribute, as the facade exports it.
fn is_rbac_path(path: &syn::Path) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments == ["kubebuilder", "rbac"]
}

/// Reads `#[kubebuilder::rbac(attr)]` on `item` into its rule, or every mistake found.
pub fn read(attr: TokenStream, item: &TokenStream) -> Result<Rule, Errors> {
    let mut errors = Errors::default();
    match syn::parse2::<Item>(item.clone()) {
        Ok(parsed) if type_ident(&parsed).is_some() => {}
        Ok(other) => errors.push(
            other.span(),
            "`#[kubebuilder::rbac]` goes on the reconciler type (a struct or an enum) whose \
             controller needs the permissions",
        ),
        Err(error) => errors.extend(error),
    }
    let args = args::parse(attr).unwrap_or_else(|error| {
        errors.extend(error);
        Vec::new()
    });
    let mut read = Args::default();
    read.mentioned = args::read(&args, ARGUMENTS, "", &mut read, &mut errors);
    let rule = validate(read, &mut errors);
    errors.into_result(rule)
}

impl Args {
    /// Whether an empty list argument still needs a "missing argument" error: it was
    /// written empty, or not written at all (a bad value or a misspelling is reported).
    fn unreported(&self, written: bool, name: &str) -> bool {
        written || !self.mentioned.contains(&name)
    }
}

fn validate(args: Args, errors: &mut Errors) -> Rule {
    let list = |given: &Option<Vec<LitStr>>| given.clone().unwrap_or_default();
    let (groups, resources, resource_names, urls) = (
        list(&args.groups),
        list(&args.resources),
        list(&args.resource_names),
        list(&args.urls),
    );

    let is_url_rule = !urls.is_empty();
    if is_url_rule {
        for (name, given) in [
            ("resources", &resources),
            ("groups", &groups),
            ("resource_names", &resource_names),
        ] {
            if let Some(first) = given.first() {
                errors.push(
                    first.span(),
                    format!(
                        "`urls` and `{name}` are mutually exclusive: a rule covers either API \
                         resources or non-resource URLs; declare two rules"
                    ),
                );
            }
        }
        if let Some(namespace) = args.namespace.as_ref() {
            errors.push(
                namespace.span(),
                "non-resource URLs can only be granted by a ClusterRole: remove `namespace`",
            );
        }
    } else if resources.is_empty() && args.unreported(args.resources.is_some(), "resources") {
        errors.push(
            Span::call_site(),
            "missing argument `resources` (or `urls` for non-resource URLs such as \"/metrics\")",
        );
    } else if groups.is_empty() && args.unreported(args.groups.is_some(), "groups") {
        errors.push(
            Span::call_site(),
            "missing argument `groups`: resource rules need their API groups; write \
             `groups = [\"core\"]` for the core group",
        );
    }

    let verbs = args
        .verbs
        .as_ref()
        .map(|given| given.value.clone())
        .unwrap_or_default();
    if verbs.is_empty() && args.unreported(args.verbs.is_some(), "verbs") {
        errors.push(
            args.verbs
                .as_ref()
                .map_or_else(Span::call_site, |given| given.span),
            "missing argument `verbs`: list what the rule allows, e.g. \
             `verbs = [\"get\", \"list\", \"watch\"]`",
        );
    }
    let (allowed, what) = if is_url_rule {
        (URL_VERBS, "non-resource URLs (HTTP methods)")
    } else {
        (RESOURCE_VERBS, "resources")
    };
    for verb in &verbs {
        let value = verb.value();
        if !allowed.contains(&value.as_str()) {
            errors.push(
                verb.span(),
                format!(
                    "unknown verb \"{value}\"{}; the verbs for {what} are: {}",
                    did_you_mean(&value, allowed),
                    allowed.join(", ")
                ),
            );
        }
    }

    if let Some(namespace) = args.namespace.as_ref() {
        check_dns_name(namespace, "namespace", DnsName::Label, errors);
    }
    if let Some(role_name) = args.role_name.as_ref() {
        let name = role_name.value();
        if name.is_empty() || name == "." || name == ".." || name.contains(['/', '%']) {
            errors.push(
                role_name.span(),
                format!(
                    "invalid role_name \"{name}\": a role name may not be empty, \".\" or \"..\", \
                     nor contain '/' or '%'"
                ),
            );
        }
    }

    let values = |literals: Vec<LitStr>| model::texts(literals.iter().map(LitStr::value));
    Rule {
        groups: values(groups),
        resources: values(resources),
        resource_names: values(resource_names),
        urls: values(urls),
        verbs: values(verbs),
        namespace: args.namespace.map(|n| n.value().into()),
        role_name: args.role_name.map(|n| n.value().into()),
    }
}

fn generate(rule: &Rule) -> TokenStream {
    let Rule {
        groups,
        resources,
        resource_names,
        urls,
        verbs,
        namespace,
        role_name,
    } = rule;
    let [groups, resources, resource_names, urls, verbs] =
        [groups, resources, resource_names, urls, verbs].map(|list| list.constant());
    let namespace = namespace.constant();
    let role_name = role_name.constant();
    quote! {
        ::kubebuilder::__private::inventory::submit! {
            ::kubebuilder::rbac::Rule {
                groups: #groups,
                resources: #resources,
                resource_names: #resource_names,
                urls: #urls,
                verbs: #verbs,
                namespace: #namespace,
                role_name: #role_name,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rules of one reconciler are registered by its first `#[kubebuilder::rbac]`, however
    /// many there are: the expansion holds the type without them, once.
    #[test]
    fn the_first_rule_registers_those_below_it() {
        let rules: String = (0..200)
            .map(|i| format!("#[kubebuilder::rbac(groups = [\"\"], resources = [\"r{i}\"], verbs = [\"get\"])]\n"))
            .collect();
        let item: TokenStream = format!("{rules}#[doc = \"kept\"]\npub struct Reconciler;")
            .parse()
            .unwrap();
        let attr: TokenStream = "groups = [\"\"], resources = [\"first\"], verbs = [\"get\"]"
            .parse()
            .unwrap();
        let expanded = expand(attr, item).to_string();
        assert_eq!(expanded.matches("inventory :: submit").count(), 201);
        assert!(!expanded.contains("rbac ("), "{expanded}");
        assert_eq!(expanded.matches("pub struct Reconciler").count(), 1);
        assert!(expanded.contains("\"kept\""));
        assert!(expanded.find("\"first\"") < expanded.find("\"r0\""));
    }
}

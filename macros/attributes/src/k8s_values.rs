//! Checks of Kubernetes values shared by `#[kubebuilder::rbac]`, `#[kubebuilder::webhook]` and
//! `#[kubebuilder::resource]`: what the apiserver or controller-gen would refuse later is
//! refused at compile time.

use syn::LitStr;

use crate::args::{Arg, Errors, closest};

/// ` (did you mean "get"?)` when one of `allowed` is close to `value`, else `""`.
pub fn did_you_mean(value: &str, allowed: &[&str]) -> String {
    closest(value, allowed)
        .map(|candidate| format!(" (did you mean \"{candidate}\"?)"))
        .unwrap_or_default()
}

/// A string argument matched case-insensitively against `allowed`, as controller-gen
/// matches policy names; returns the API spelling.
pub fn one_of(arg: &Arg, allowed: &[&'static str], errors: &mut Errors) -> Option<&'static str> {
    let literal = arg.string(errors)?;
    let value = literal.value();
    let found = allowed
        .iter()
        .find(|candidate| candidate.eq_ignore_ascii_case(&value))
        .copied();
    if found.is_none() {
        let expected: Vec<_> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
        errors.push(
            literal.span(),
            format!(
                "unknown value \"{value}\" for `{}`: expected {}",
                arg.name,
                expected.join(" or ")
            ),
        );
    }
    found
}

/// The two shapes of Kubernetes object names checked here (RFC 1123).
#[derive(Clone, Copy)]
pub enum DnsName {
    /// Namespaces and Services: at most 63 characters, no dots.
    Label,
    /// Most object names: at most 253 characters, dot-separated labels.
    Subdomain,
}

/// An RFC 1123 label: at most 63 lower-case alphanumerics or '-', starting and ending with
/// an alphanumeric.
pub fn is_dns_label(label: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !label.is_empty()
        && label.len() <= 63
        && label.chars().all(|c| alphanumeric(c) || c == '-')
        && label.starts_with(alphanumeric)
        && label.ends_with(alphanumeric)
}

/// Refuses a name the apiserver would refuse, spelling out the rule.
pub fn check_dns_name(literal: &LitStr, what: &str, shape: DnsName, errors: &mut Errors) {
    let value = literal.value();
    let (valid, rule) = match shape {
        DnsName::Label => (
            is_dns_label(&value),
            "lower-case alphanumerics or '-', starting and ending with an alphanumeric, \
             at most 63 characters",
        ),
        DnsName::Subdomain => (
            value.len() <= 253 && value.split('.').all(is_dns_label),
            "dot-separated labels of lower-case alphanumerics or '-', each starting and \
             ending with an alphanumeric, at most 253 characters",
        ),
    };
    if !valid {
        errors.push(
            literal.span(),
            format!("invalid {what} \"{value}\": must be {rule}"),
        );
    }
}

/// The item an attribute for types sits on must be a struct, an enum or a union.
pub fn type_ident(item: &syn::Item) -> Option<(&syn::Ident, &syn::Generics)> {
    match item {
        syn::Item::Struct(item) => Some((&item.ident, &item.generics)),
        syn::Item::Enum(item) => Some((&item.ident, &item.generics)),
        syn::Item::Union(item) => Some((&item.ident, &item.generics)),
        _ => None,
    }
}

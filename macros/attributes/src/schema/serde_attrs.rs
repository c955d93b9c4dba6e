//! The serde attributes `#[kubebuilder::schema]` reads, so that the schema describes what
//! serde writes: on the container `tag`, `content`, `untagged` (and `rename_all`, refused);
//! on fields and variants `rename`, `flatten`, `skip` and those that decide absence.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, LitStr};

use crate::args::Errors;

/// The container's serde attributes.
#[derive(Default)]
pub struct Container {
    pub tag: Option<String>,
    pub content: Option<Span>,
    pub untagged: bool,
    pub rename_all: Option<Span>,
}

impl Container {
    pub fn read(attrs: &[Attribute], errors: &mut Errors) -> Container {
        let mut container = Container::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("tag") && meta.input.peek(syn::Token![=]) {
                    container.tag = Some(meta.value()?.parse::<LitStr>()?.value());
                    return Ok(());
                }
                if meta.path.is_ident("content") {
                    container.content = Some(meta.path.span());
                } else if meta.path.is_ident("untagged") {
                    container.untagged = true;
                } else if meta.path.is_ident("rename_all") {
                    container.rename_all = Some(meta.path.span());
                }
                skip_meta_value(&meta)
            });
            if let Err(error) = result {
                errors.extend(error);
            }
        }
        container
    }
}

/// A field's or variant's serde attributes.
#[derive(Default)]
pub struct SerdeOptions {
    pub rename: Option<String>,
    pub flatten: bool,
    pub skip: bool,
    /// `default`, `skip_serializing_if` or a `with`: the user's serde decides absence (and
    /// the encoding).
    pub handles_absence: bool,
}

pub fn serde_options(attrs: &[Attribute], errors: &mut Errors) -> SerdeOptions {
    let mut options = SerdeOptions::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = &meta.path;
            if path.is_ident("rename") && meta.input.peek(syn::Token![=]) {
                options.rename = Some(meta.value()?.parse::<LitStr>()?.value());
                return Ok(());
            }
            if path.is_ident("flatten") {
                options.flatten = true;
            } else if path.is_ident("skip") {
                options.skip = true;
            } else if [
                "default",
                "skip_serializing_if",
                "with",
                "serialize_with",
                "deserialize_with",
            ]
            .iter()
            .any(|name| path.is_ident(name))
            {
                options.handles_absence = true;
            }
            skip_meta_value(&meta)
        });
        if let Err(error) = result {
            errors.extend(error);
        }
    }
    options
}

pub fn is_serde_skipped(attrs: &[Attribute]) -> bool {
    let mut errors = Errors::default();
    serde_options(attrs, &mut errors).skip
}

fn skip_meta_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

/// serde's `rename_all = "camelCase"` of a Rust field name.
pub fn camel_case(name: &str) -> String {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::camel_case;

    #[test]
    fn camel_cases_like_serde() {
        assert_eq!(
            camel_case("starting_deadline_seconds"),
            "startingDeadlineSeconds"
        );
        assert_eq!(camel_case("r#type"), "type");
        assert_eq!(camel_case("schedule"), "schedule");
    }
}

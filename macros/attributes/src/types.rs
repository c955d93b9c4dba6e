//! What the macros read from a field's Rust type without resolving it.

use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

/// `T` of `Option<T>` (any path ending in `Option`).
pub fn option_inner(ty: &Type) -> Option<&Type> {
    single_argument(ty, "Option")
}

/// Whether the type spells out a `Vec<u8>` (base64 bytes, as Go's `[]byte`) where the base64
/// adapter reaches it: itself, or inside `Option`, `Box`, `Vec` and the values of
/// `BTreeMap`/`HashMap`.
pub fn mentions_bytes(ty: &Type) -> bool {
    if let Some(item) = single_argument(ty, "Vec") {
        return matches!(item, Type::Path(p) if p.path.is_ident("u8")) || mentions_bytes(item);
    }
    if let Some(inner) = single_argument(ty, "Option").or_else(|| single_argument(ty, "Box")) {
        return mentions_bytes(inner);
    }
    map_value(ty).is_some_and(mentions_bytes)
}

/// The longest fixed-size array with a literal length anywhere in the type, and where.
pub fn longest_array(ty: &Type) -> Option<(u64, proc_macro2::Span)> {
    let mut longest: Option<(u64, proc_macro2::Span)> = None;
    let mut consider = |found: Option<(u64, proc_macro2::Span)>| {
        if let Some(found) = found
            && longest.is_none_or(|(len, _)| found.0 > len)
        {
            longest = Some(found);
        }
    };
    match ty {
        Type::Array(array) => {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(len),
                ..
            }) = &array.len
            {
                consider(len.base10_parse().ok().map(|len| (len, array.span())));
            }
            consider(longest_array(&array.elem));
        }
        Type::Path(path) => {
            for segment in &path.path.segments {
                if let PathArguments::AngleBracketed(args) = &segment.arguments {
                    for arg in &args.args {
                        if let GenericArgument::Type(inner) = arg {
                            consider(longest_array(inner));
                        }
                    }
                }
            }
        }
        _ => {}
    }
    longest
}

/// Whether `f32` or `f64` appears anywhere in the type.
pub fn mentions_float(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.path.segments.iter().any(|segment| {
            segment.ident == "f32"
                || segment.ident == "f64"
                || match &segment.arguments {
                    PathArguments::AngleBracketed(args) => args.args.iter().any(|arg| match arg {
                        GenericArgument::Type(inner) => mentions_float(inner),
                        _ => false,
                    }),
                    _ => false,
                }
        }),
        Type::Array(array) => mentions_float(&array.elem),
        Type::Slice(slice) => mentions_float(&slice.elem),
        Type::Reference(reference) => mentions_float(&reference.elem),
        Type::Paren(paren) => mentions_float(&paren.elem),
        Type::Group(group) => mentions_float(&group.elem),
        Type::Tuple(tuple) => tuple.elems.iter().any(mentions_float),
        _ => false,
    }
}

/// `V` of `BTreeMap<String, V>` or `HashMap<String, V, ...>`.
fn map_value(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "BTreeMap" && last.ident != "HashMap" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().nth(1) {
        Some(GenericArgument::Type(value)) => Some(value),
        _ => None,
    }
}

fn single_argument<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(GenericArgument::Type(inner)) if args.args.len() == 1 => Some(inner),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        syn::parse_str(text).unwrap()
    }

    #[test]
    fn reads_options_bytes_and_floats() {
        assert!(option_inner(&ty("Option<i32>")).is_some());
        assert!(option_inner(&ty("std::option::Option<i32>")).is_some());
        assert!(option_inner(&ty("Vec<i32>")).is_none());
        assert!(mentions_bytes(&ty("Vec<u8>")));
        assert!(mentions_bytes(&ty("Option<Vec<u8>>")));
        assert!(mentions_bytes(&ty("Vec<Vec<u8>>")));
        assert!(mentions_bytes(&ty(
            "Option<BTreeMap<String, Box<Vec<u8>>>>"
        )));
        assert!(!mentions_bytes(&ty("Vec<u16>")));
        assert!(!mentions_bytes(&ty("[Vec<u8>; 2]")));
        assert!(!mentions_bytes(&ty("Payload")));
        assert_eq!(
            longest_array(&ty("Option<[[u8; 4]; 40]>")).map(|(n, _)| n),
            Some(40)
        );
        assert!(longest_array(&ty("Vec<String>")).is_none());
        assert!(mentions_float(&ty("Option<BTreeMap<String, f64>>")));
        assert!(!mentions_float(&ty("Vec<i64>")));
    }
}

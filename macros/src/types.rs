//! What the macros read from a field's Rust type without resolving it.

use syn::{GenericArgument, PathArguments, Type};

/// `T` of `Option<T>` (any path ending in `Option`).
pub fn option_inner(ty: &Type) -> Option<&Type> {
    single_argument(ty, "Option")
}

/// `Vec<u8>` (or `Option<Vec<u8>>`): base64 bytes, as Go's `[]byte`.
pub fn is_bytes(ty: &Type) -> bool {
    let ty = option_inner(ty).unwrap_or(ty);
    single_argument(ty, "Vec")
        .is_some_and(|item| matches!(item, Type::Path(p) if p.path.is_ident("u8")))
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
        assert!(is_bytes(&ty("Vec<u8>")));
        assert!(is_bytes(&ty("Option<Vec<u8>>")));
        assert!(!is_bytes(&ty("Vec<Vec<u8>>")));
        assert!(mentions_float(&ty("Option<BTreeMap<String, f64>>")));
        assert!(!mentions_float(&ty("Vec<i64>")));
    }
}

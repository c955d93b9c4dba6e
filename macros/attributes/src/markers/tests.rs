//! Parsing markers into the values the generated code holds, and the parsers' robustness
//! against any input.

use proc_macro2::TokenStream;
use proptest::prelude::*;
use quote::quote;

use super::*;
use crate::args;

fn parse_at(place: Place, tokens: TokenStream) -> (Markers, Vec<String>) {
    let mut errors = Errors::default();
    let args = args::parse(tokens).expect("valid syntax");
    let markers = match place {
        Place::Resource => parse_root(&args, &mut errors),
        _ => parse(&args, place, &mut errors),
    };
    (markers, messages(&errors))
}

fn messages(errors: &Errors) -> Vec<String> {
    errors
        .to_compile_errors()
        .to_string()
        .split("compile_error !")
        .skip(1)
        .map(|part| part.trim().to_owned())
        .collect()
}

fn parse_field(tokens: TokenStream) -> (Markers, Vec<String>) {
    parse_at(Place::Field, tokens)
}

/// `Variant(value)` of each marker, as the generated code writes it.
fn shown(markers: &[Spanned]) -> Vec<String> {
    markers
        .iter()
        .map(|m| {
            m.tokens()
                .to_string()
                .replace(' ', "")
                .replace("::kubebuilder::schema::", "")
                .replace("::std::borrow::", "")
                .replace("Marker::", "")
        })
        .collect()
}

fn own(tokens: TokenStream) -> Vec<String> {
    let (markers, errors) = parse_field(tokens);
    assert!(errors.is_empty(), "{errors:?}");
    shown(&markers.own)
}

#[test]
fn validation_markers_parse_by_their_value_kind() {
    assert_eq!(
        own(quote!(validation(
            minimum = -1,
            maximum = 2.5,
            exclusive_minimum,
            exclusive_maximum = false,
            multiple_of = 3
        ))),
        [
            "Minimum(-1f64)",
            "Maximum(2.5f64)",
            "ExclusiveMinimum(true)",
            "ExclusiveMaximum(false)",
            "MultipleOf(3f64)"
        ]
    );
    assert_eq!(
        own(
            quote!(validation(min_length = 1, max_length = 2, pattern = "^a$", format = "f", type = "string"))
        ),
        [
            "MinLength(1i64)",
            "MaxLength(2i64)",
            "Pattern(Cow::Borrowed(\"^a$\"))",
            "Format(Cow::Borrowed(\"f\"))",
            "Type(Cow::Borrowed(\"string\"))"
        ]
    );
    assert_eq!(
        own(
            quote!(validation(enum = ["a", 1, true], x_int_or_string, x_embedded_resource, x_preserve_unknown_fields))
        ),
        [
            "Enum(Cow::Borrowed(&[Literal::String(Cow::Borrowed(\"a\")),Literal::Int(1i64),Literal::Bool(true)]))",
            "IntOrString",
            "EmbeddedResource",
            "PreserveUnknownFields"
        ]
    );
}

#[test]
fn items_markers_go_to_the_items() {
    let (markers, errors) =
        parse_field(quote!(validation(max_items = 3, items(max_length = 4, enum = ["a"]))));
    assert!(errors.is_empty());
    assert_eq!(shown(&markers.own), ["MaxItems(3i64)"]);
    assert_eq!(
        shown(&markers.items),
        [
            "MaxLength(4i64)",
            "Enum(Cow::Borrowed(&[Literal::String(Cow::Borrowed(\"a\"))]))"
        ]
    );
}

#[test]
fn values_defaults_and_topology() {
    assert_eq!(
        own(
            quote!(default = {"a": [1, 2.5]}, default_json = r#"{"b": null}"#, example = "e", title = "t", nullable)
        ),
        [
            "Default(Literal::Map(Cow::Borrowed(&[(Cow::Borrowed(\"a\"),Literal::List(Cow::Borrowed(&[Literal::Int(1i64),Literal::Float(2.5f64)])))])))",
            "DefaultJson(Literal::Map(Cow::Borrowed(&[(Cow::Borrowed(\"b\"),Literal::Null)])))",
            "Example(Literal::String(Cow::Borrowed(\"e\")))",
            "Title(Cow::Borrowed(\"t\"))",
            "Nullable"
        ]
    );
    assert_eq!(
        own(quote!(
            list_type = "map",
            list_map_key = "a",
            list_map_key = "b",
            map_type = "atomic",
            struct_type = "granular",
            pruning(preserve_unknown_fields)
        )),
        [
            "ListType(Cow::Borrowed(\"map\"))",
            "ListMapKey(Cow::Borrowed(\"a\"))",
            "ListMapKey(Cow::Borrowed(\"b\"))",
            "MapType(Cow::Borrowed(\"atomic\"))",
            "StructType(Cow::Borrowed(\"granular\"))",
            "PreserveUnknownFields"
        ]
    );
}

#[test]
fn required_follows_controller_gen_precedence() {
    let required =
        |tokens: TokenStream, by_default: bool| parse_field(tokens).0.is_required(by_default);
    assert!(required(quote!(), true));
    assert!(!required(quote!(), false));
    assert!(!required(quote!(optional), true));
    assert!(required(quote!(required), false));
    assert!(!required(quote!(validation(optional), required), true));
    assert!(required(quote!(validation(required), optional), false));
    assert!(!required(
        quote!(validation(optional), validation(required)),
        true
    ));
}

#[test]
fn the_same_mistakes_are_reported_once_each() {
    let (_, errors) = parse_field(quote!(list_map_key = "a", validation(minimun = 1), bogus));
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("did you mean `minimum`"), "{errors:?}");
}

#[test]
fn a_marker_given_twice_is_an_error_even_across_lists() {
    let (markers, errors) = parse_field(quote!(
        validation(minimum = 1),
        validation(
            minimum = 2,
            x_validation(rule = "a"),
            x_validation(rule = "b")
        ),
        title = "a",
        title = "b"
    ));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("duplicate argument `minimum`"),
        "{errors:?}"
    );
    assert!(
        errors[1].contains("duplicate argument `title`"),
        "{errors:?}"
    );
    // The repeatable CEL rules stay.
    assert_eq!(
        markers.own.iter().filter(|m| m.is("XValidation")).count(),
        2
    );
}

#[test]
fn markers_stand_where_their_row_says() {
    let (_, errors) = parse_at(Place::Type, quote!(optional, validation(embedded_resource)));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("`optional` applies to fields"),
        "{errors:?}"
    );
    let (_, errors) = parse_field(quote!(validation(at_most_one_of = ["a", "b"])));
    assert!(errors[0].contains("applies to types"), "{errors:?}");
    let (root, errors) = parse_at(
        Place::Resource,
        quote!(x_validation(rule = "r"), max_properties = 3, optional),
    );
    assert_eq!(
        shown(&root.own),
        [
            "XValidation(Rule{rule:Cow::Borrowed(\"r\"),message:::core::option::Option::None,message_expression:::core::option::Option::None,reason:::core::option::Option::None,field_path:::core::option::Option::None,optional_old_self:::core::option::Option::None,})",
            "MaxProperties(3i64)"
        ]
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[test]
fn every_name_is_spelled_once_per_list() {
    for group in [Group::Top, Group::Validation, Group::Pruning] {
        let mut names: Vec<&str> = DEFINITIONS
            .iter()
            .filter(|d| d.group == group)
            .map(|d| d.name)
            .collect();
        let written = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(written, names.len(), "a name twice in {group:?}");
    }
}

/// Token soup from the attribute grammar's alphabet, including broken nesting.
fn tokens() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("validation".to_owned()),
        Just("items".to_owned()),
        Just("x_validation".to_owned()),
        Just("default".to_owned()),
        Just("enum".to_owned()),
        Just("type".to_owned()),
        Just("resource".to_owned()),
        Just("printcolumn".to_owned()),
        Just("subresource".to_owned()),
        Just("scale".to_owned()),
        Just("metadata".to_owned()),
        Just("hub".to_owned()),
        Just("rule".to_owned()),
        "[a-z_]{1,12}",
        "-?[0-9]{1,20}",
        "-?[0-9]{1,5}\\.[0-9]{1,5}",
        "\"[ -~]{0,10}\"".prop_map(|s| s.replace('\\', "")),
        Just("true".to_owned()),
        Just("=".to_owned()),
        Just(",".to_owned()),
        Just(":".to_owned()),
        Just("-".to_owned()),
        Just("::".to_owned()),
    ];
    let leaf = prop::collection::vec(atom, 0..8).prop_map(|atoms| atoms.join(" "));
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop::collection::vec(
            prop_oneof![
                inner.clone(),
                inner.clone().prop_map(|s| format!("({s})")),
                inner.clone().prop_map(|s| format!("[{s}]")),
                inner.prop_map(|s| format!("{{{s}}}")),
            ],
            0..6,
        )
        .prop_map(|parts| parts.join(" "))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Whatever the tokens, the parsers and the expansions return (errors or code); they
    /// never panic.
    #[test]
    fn parsers_never_panic(text in tokens()) {
        let Ok(tokens) = text.parse::<TokenStream>() else { return Ok(()) };
        let mut errors = Errors::default();
        if let Ok(args) = args::parse(tokens.clone()) {
            parse(&args, Place::Field, &mut errors);
            parse(&args, Place::Type, &mut errors);
            parse_root(&args, &mut errors);
        }
        let spec = quote!(pub struct S { #[kubebuilder(#tokens)] pub a: Option<i32> });
        crate::schema::expand(tokens.clone(), spec.clone());
        crate::resource::expand(tokens, spec);
    }
}

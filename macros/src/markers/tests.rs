//! Parsing markers into the model, and the parsers' robustness against any input.

use proc_macro2::TokenStream;
use proptest::prelude::*;
use quote::quote;

use super::*;
use crate::args;

fn parse_field(tokens: TokenStream) -> (Markers, Vec<String>) {
    let mut errors = Errors::default();
    let args = args::parse(tokens).expect("valid syntax");
    let markers = parse(&args, Target::Field, &mut errors);
    let messages = errors
        .to_compile_errors()
        .to_string()
        .split("compile_error !")
        .skip(1)
        .map(|part| part.trim().to_owned())
        .collect();
    (markers, messages)
}

fn own(tokens: TokenStream) -> Vec<Marker> {
    let (markers, errors) = parse_field(tokens);
    assert!(errors.is_empty(), "{errors:?}");
    markers.own.into_iter().map(|m| m.marker).collect()
}

#[test]
fn validation_markers_parse_into_the_model() {
    assert_eq!(
        own(quote!(validation(
            minimum = -1,
            maximum = 2.5,
            exclusive_minimum,
            exclusive_maximum = false,
            multiple_of = 3
        ))),
        [
            Marker::Minimum(-1.0),
            Marker::Maximum(2.5),
            Marker::ExclusiveMinimum(true),
            Marker::ExclusiveMaximum(false),
            Marker::MultipleOf(3.0)
        ]
    );
    assert_eq!(
        own(
            quote!(validation(min_length = 1, max_length = 2, pattern = "^a$", format = "f", type = "string"))
        ),
        [
            Marker::MinLength(1),
            Marker::MaxLength(2),
            Marker::Pattern("^a$".into()),
            Marker::Format("f".into()),
            Marker::Type("string".into())
        ]
    );
    assert_eq!(
        own(
            quote!(validation(enum = ["a", 1, true], x_int_or_string, x_embedded_resource, x_preserve_unknown_fields))
        ),
        [
            Marker::Enum(vec![
                Literal::String("a".into()),
                Literal::Int(1),
                Literal::Bool(true)
            ]),
            Marker::IntOrString,
            Marker::EmbeddedResource,
            Marker::PreserveUnknownFields
        ]
    );
}

#[test]
fn items_markers_go_to_the_items() {
    let (markers, errors) =
        parse_field(quote!(validation(max_items = 3, items(max_length = 4, enum = ["a"]))));
    assert!(errors.is_empty());
    assert_eq!(
        markers.own.iter().map(|m| &m.marker).collect::<Vec<_>>(),
        [&Marker::MaxItems(3)]
    );
    assert_eq!(
        markers.items.iter().map(|m| &m.marker).collect::<Vec<_>>(),
        [
            &Marker::MaxLength(4),
            &Marker::Enum(vec![Literal::String("a".into())])
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
            Marker::Default(Literal::Map(vec![(
                "a".into(),
                Literal::List(vec![Literal::Int(1), Literal::Float(2.5)])
            )])),
            Marker::DefaultJson(Literal::Map(vec![("b".into(), Literal::Null)])),
            Marker::Example(Literal::String("e".into())),
            Marker::Title("t".into()),
            Marker::Nullable
        ]
    );
    assert_eq!(
        own(quote!(
            list_type = "map",
            list_map_key = "a",
            map_type = "atomic",
            struct_type = "granular",
            pruning(preserve_unknown_fields)
        )),
        [
            Marker::ListType("map".into()),
            Marker::ListMapKey("a".into()),
            Marker::MapType("atomic".into()),
            Marker::StructType("granular".into()),
            Marker::PreserveUnknownFields
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
            parse(&args, Target::Field, &mut errors);
            parse(&args, Target::Type, &mut errors);
        }
        let spec = quote!(pub struct S { #[kubebuilder(#tokens)] pub a: Option<i32> });
        crate::item::expand(tokens.clone(), spec.clone());
        crate::resource::expand(tokens, spec);
    }
}

#[test]
fn items_accepts_the_validation_markers_before_embedded_resource() {
    assert_eq!(VALIDATION[ITEMS_LEN], "embedded_resource");
    assert_eq!(ITEMS.last(), Some(&"x_validation"));
}

//! Schema-level tests: one marker at a time on a field, the merge with named types, and
//! the Rust type mapping.

use std::borrow::Cow;

use serde_json::{Value, json};

use super::build::{field, string_enum};
use super::*;

fn to_json(schema: &JSONSchemaProps) -> Value {
    serde_json::to_value(schema).unwrap()
}

/// The schema of a field of type `T` with these markers.
fn field_of<T: Schema>(own: &[Marker], items: &[Marker]) -> Value {
    to_json(&field(T::node(), "", own, items))
}

/// A named type with its own markers, as `#[kubebuilder::schema]` generates for
/// `struct Name(String)` with `validation(max_length = 10)` and a doc comment.
struct Name;

impl Schema for Name {
    fn schema() -> JSONSchemaProps {
        field(String::node(), "A name.", &[Marker::MaxLength(10)], &[])
    }

    fn node() -> Node {
        Node::named_like(Self::schema(), &String::node())
    }
}

/// A struct type with a CEL rule of its own.
struct Pair;

impl Schema for Pair {
    fn schema() -> JSONSchemaProps {
        let rule = Rule {
            rule: Cow::Borrowed("type rule"),
            message: None,
            message_expression: None,
            reason: None,
            field_path: None,
            optional_old_self: None,
        };
        object(
            "A pair.",
            vec![Property {
                name: "a",
                schema: field(i32::node(), "", &[], &[]),
                required: true,
                inline: false,
                markers: &[],
            }],
            &[Marker::XValidation(rule)],
        )
    }
}

#[test]
fn rust_types_map_as_go_types() {
    assert_eq!(
        to_json(&i32::schema()),
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        to_json(&u32::schema()),
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        to_json(&i64::schema()),
        json!({"type": "integer", "format": "int64"})
    );
    assert_eq!(to_json(&u16::schema()), json!({"type": "integer"}));
    assert_eq!(to_json(&f64::schema()), json!({"type": "number"}));
    assert_eq!(to_json(&bool::schema()), json!({"type": "boolean"}));
    assert_eq!(
        to_json(&Option::<String>::schema()),
        json!({"type": "string"})
    );
    assert_eq!(
        to_json(&Vec::<Box<String>>::schema()),
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        to_json(&BTreeMap::<String, i64>::schema()),
        json!({"type": "object", "additionalProperties": {"type": "integer", "format": "int64"}})
    );
    assert_eq!(
        to_json(&HashMap::<String, bool>::schema()),
        json!({"type": "object", "additionalProperties": {"type": "boolean"}})
    );
    assert_eq!(
        to_json(&serde_json::Value::schema()),
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        to_json(&Vec::<u8>::schema()),
        json!({"type": "string", "format": "byte"})
    );
}

#[test]
fn bytes_are_base64_strings_wherever_they_are() {
    let bytes = json!({"type": "string", "format": "byte"});
    assert_eq!(
        to_json(&BTreeMap::<String, Vec<u8>>::schema()),
        json!({"type": "object", "additionalProperties": bytes})
    );
    assert_eq!(
        to_json(&Vec::<Option<Vec<u8>>>::schema()),
        json!({"type": "array", "items": bytes})
    );
    const {
        assert!(Vec::<u8>::SHAPE.raw_bytes && BTreeMap::<String, Vec<u8>>::SHAPE.raw_bytes);
        assert!(!Vec::<u16>::SHAPE.raw_bytes);
    }
}

#[test]
fn fixed_size_arrays_are_lists_of_exactly_their_length() {
    assert_eq!(
        to_json(&<[i32; 3]>::schema()),
        json!({"type": "array", "items": {"type": "integer", "format": "int32"}, "minItems": 3, "maxItems": 3})
    );
    // Go's `[N]byte` is a list of integers too.
    assert_eq!(
        to_json(&<[u8; 2]>::schema()),
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2})
    );
}

#[test]
fn numeric_markers() {
    assert_eq!(
        field_of::<i32>(
            &[
                Marker::Minimum(-1.0),
                Marker::Maximum(5.0),
                Marker::ExclusiveMinimum(true),
                Marker::ExclusiveMaximum(false),
                Marker::MultipleOf(2.0),
            ],
            &[]
        ),
        json!({"type": "integer", "format": "int32", "minimum": -1.0, "maximum": 5.0,
               "exclusiveMinimum": true, "multipleOf": 2.0})
    );
}

#[test]
fn string_markers() {
    assert_eq!(
        field_of::<String>(
            &[
                Marker::MinLength(1),
                Marker::MaxLength(63),
                Marker::Pattern(Cow::Borrowed("^[a-z]+$"))
            ],
            &[]
        ),
        json!({"type": "string", "minLength": 1, "maxLength": 63, "pattern": "^[a-z]+$"})
    );
}

#[test]
fn array_markers_and_items_markers() {
    assert_eq!(
        field_of::<Vec<String>>(
            &[
                Marker::MinItems(1),
                Marker::MaxItems(3),
                Marker::UniqueItems(true)
            ],
            &[
                Marker::MaxLength(5),
                Marker::Enum(Cow::Borrowed(&[Literal::String(Cow::Borrowed("a"))]))
            ]
        ),
        json!({"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true,
               "items": {"type": "string", "maxLength": 5, "enum": ["a"]}})
    );
}

#[test]
fn object_markers() {
    assert_eq!(
        field_of::<BTreeMap<String, String>>(
            &[
                Marker::MinProperties(1),
                Marker::MaxProperties(2),
                Marker::MapType(Cow::Borrowed("atomic"))
            ],
            &[]
        ),
        json!({"type": "object", "minProperties": 1, "maxProperties": 2,
               "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}})
    );
}

#[test]
fn type_format_and_extensions() {
    assert_eq!(
        field_of::<i64>(
            &[
                Marker::Format(Cow::Borrowed("date-time")),
                Marker::Type(Cow::Borrowed("string"))
            ],
            &[]
        ),
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(
        field_of::<serde_json::Value>(
            &[
                Marker::EmbeddedResource,
                Marker::PreserveUnknownFields,
                Marker::IntOrString
            ],
            &[]
        ),
        json!({"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
               "x-kubernetes-int-or-string": true})
    );
}

#[test]
fn x_validation_keeps_every_argument() {
    let rule = Rule {
        rule: Cow::Borrowed("self.size() > 1"),
        message: Some(Cow::Borrowed("too short")),
        message_expression: Some(Cow::Borrowed("'x'")),
        reason: Some(Cow::Borrowed("FieldValueInvalid")),
        field_path: Some(Cow::Borrowed(".x")),
        optional_old_self: Some(true),
    };
    assert_eq!(
        field_of::<String>(&[Marker::XValidation(rule)], &[]),
        json!({"type": "string", "x-kubernetes-validations": [{
            "rule": "self.size() > 1", "message": "too short", "messageExpression": "'x'",
            "reason": "FieldValueInvalid", "fieldPath": ".x", "optionalOldSelf": true}]})
    );
}

#[test]
fn one_of_rules_are_controller_gen_v0_21_cel() {
    let schema = object(
        "",
        vec![],
        &[
            Marker::AtLeastOneOf(Cow::Borrowed(&[Cow::Borrowed("b"), Cow::Borrowed("c")])),
            Marker::AtMostOneOf(Cow::Borrowed(&[Cow::Borrowed("a"), Cow::Borrowed("b")])),
        ],
    );
    let rules = to_json(&schema)["x-kubernetes-validations"].clone();
    // AtMostOneOf (priority 11) runs before AtLeastOneOf (13) whatever the source order.
    assert_eq!(
        rules,
        json!([
            {"rule": "(has(self.a)?1:0)+(has(self.b)?1:0) <= 1",
             "message": "at most one of the fields in [a b] may be set"},
            {"rule": "has(self.b)||has(self.c)",
             "message": "at least one of the fields in [b c] must be set"}
        ])
    );
    let exactly = object(
        "",
        vec![],
        &[Marker::ExactlyOneOf(Cow::Borrowed(&[
            Cow::Borrowed("a"),
            Cow::Borrowed("b"),
        ]))],
    );
    assert_eq!(
        to_json(&exactly)["x-kubernetes-validations"][0]["message"],
        json!("exactly one of the fields in [a b] must be set")
    );
}

#[test]
fn defaults_examples_titles_and_docs() {
    assert_eq!(
        field_of::<Vec<String>>(&[Marker::Default(Literal::Map(Cow::Borrowed(&[])))], &[]),
        json!({"type": "array", "items": {"type": "string"}, "default": []})
    );
    // `default` (priority 10) wins over `default_json` (9), whatever the source order.
    assert_eq!(
        field_of::<i32>(
            &[
                Marker::Default(Literal::Int(3)),
                Marker::DefaultJson(Literal::Int(4))
            ],
            &[]
        ),
        json!({"type": "integer", "format": "int32", "default": 3})
    );
    assert_eq!(
        field_of::<BTreeMap<String, String>>(
            &[
                Marker::Example(Literal::Map(Cow::Borrowed(&[(
                    Cow::Borrowed("k"),
                    Literal::String(Cow::Borrowed("v"))
                )]))),
                Marker::Title(Cow::Borrowed("T")),
                Marker::ExternalDocs(Docs {
                    url: Cow::Borrowed("https://x.io"),
                    description: Cow::Borrowed("")
                }),
                Marker::Nullable,
            ],
            &[]
        ),
        json!({"type": "object", "additionalProperties": {"type": "string"}, "example": {"k": "v"},
               "title": "T", "externalDocs": {"url": "https://x.io"}, "nullable": true})
    );
}

#[test]
fn list_types_and_struct_type() {
    assert_eq!(
        field_of::<Vec<String>>(
            &[
                Marker::ListMapKey(Cow::Borrowed("name")),
                Marker::ListType(Cow::Borrowed("map"))
            ],
            &[]
        ),
        json!({"type": "array", "items": {"type": "string"},
               "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})
    );
    // structType is written as the map type: there is no struct-type extension.
    assert_eq!(
        to_json(&field(
            Pair::node(),
            "",
            &[Marker::StructType(Cow::Borrowed("atomic"))],
            &[]
        ))["x-kubernetes-map-type"],
        json!("atomic")
    );
}

#[test]
fn field_markers_tighten_a_named_type_through_all_of() {
    let schema = to_json(&field(
        Name::node(),
        "The field.",
        &[Marker::MaxLength(5)],
        &[],
    ));
    assert_eq!(
        schema,
        json!({"type": "string", "description": "The field.",
               "allOf": [{"maxLength": 10}, {"maxLength": 5}]})
    );
    // Without a field doc, the type's doc is the description.
    let schema = to_json(&field(Name::node(), "", &[], &[]));
    assert_eq!(
        schema,
        json!({"type": "string", "description": "A name.", "maxLength": 10})
    );
}

#[test]
fn field_rules_come_before_type_rules() {
    let rule = Rule {
        rule: Cow::Borrowed("field rule"),
        message: None,
        message_expression: None,
        reason: None,
        field_path: None,
        optional_old_self: None,
    };
    let schema = to_json(&field(Pair::node(), "", &[Marker::XValidation(rule)], &[]));
    assert_eq!(
        schema["x-kubernetes-validations"],
        json!([{"rule": "field rule"}, {"rule": "type rule"}])
    );
    assert_eq!(schema["required"], json!(["a"]));
    assert_eq!(schema["description"], json!("A pair."));
}

#[test]
fn items_markers_apply_to_named_items_before_the_merge() {
    let schema = to_json(&field(
        Vec::<Name>::node(),
        "",
        &[],
        &[Marker::MaxLength(3)],
    ));
    assert_eq!(
        schema["items"],
        json!({"type": "string", "description": "A name.", "allOf": [{"maxLength": 10}, {"maxLength": 3}]})
    );
}

#[test]
fn objects_sort_required_and_merge_flattened_fields() {
    let schema = object(
        "Doc.",
        vec![
            Property {
                name: "z",
                schema: String::schema(),
                required: true,
                inline: false,
                markers: &[],
            },
            Property {
                name: "pair",
                schema: Pair::schema(),
                required: false,
                inline: true,
                markers: &[],
            },
            Property {
                name: "b",
                schema: String::schema(),
                required: true,
                inline: false,
                markers: &[],
            },
        ],
        &[],
    );
    let schema = to_json(&schema);
    assert_eq!(schema["required"], json!(["a", "b", "z"]));
    assert_eq!(schema["description"], json!("Doc."));
    assert!(schema["properties"]["a"].is_object());
}

#[test]
fn unit_enums_are_string_enums() {
    assert_eq!(
        to_json(&string_enum(
            "Doc.",
            Cow::Borrowed(&[
                Literal::String(Cow::Borrowed("A")),
                Literal::String(Cow::Borrowed("B"))
            ]),
            &[]
        )),
        json!({"type": "string", "description": "Doc.", "enum": ["A", "B"]})
    );
}

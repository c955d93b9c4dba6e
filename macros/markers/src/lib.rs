//! The schema markers of kubebuilder for Rust: one row per marker, the single definition
//! that both sides of a marker read.
//!
//! - The attribute macros (`kubebuilder-macros`) read the name, the value kind, where the
//!   marker may stand, whether it may repeat and whether its precondition needs the node's
//!   type; they parse the value by its kind and emit `kubebuilder::schema::Marker::<Row>(value)`.
//! - The `kubebuilder` crate turns the rows into its `Marker` enum: the value kind gives the
//!   variant's payload, `needs` the precondition checked at compile time against the node's
//!   shape, `priority` controller-gen's apply order, and `apply` what the marker does to the
//!   schema node (`schema`, a `JSONSchemaProps`; the helpers it calls live in
//!   `kubebuilder::schema::marker`).
//! - The registry test compares the `controller_gen` names with the markers the pinned
//!   controller-gen registers (the `items:` twins of the rows that stand in `items` included).
//!
//! The table is a `macro_rules!` so that the `apply` code sits in its row but is compiled only
//! in the crate that owns `JSONSchemaProps`. Each consumer defines a callback macro and calls
//! [`markers!`] with its name.
//!
//! Rows, in the order their names are listed in error messages:
//!
//! - `marker Variant { ... }`: a schema marker.
//! - `alias Variant { ... }`: another spelling of `Variant` (controller-gen registers both).
//! - `directive Variant { ... }`: read by the attribute itself (requiredness, floats, ...).
//! - `group Variant { ... }`: a nested argument list (`validation(...)`).
//!
//! Columns: `name: "rust_name" in <Group>` (`Top` is the attribute's own argument list, the
//! others are `group` rows); `value:` one of `Flag` (a bare name), `Bool` (a bare name or
//! `= true|false`), `Number`, `Integer`, `String`, `Choice("a", "b")`, `Pattern` (a regular
//! expression), `Literal` (any value), `Json` (a string holding JSON), `Literals` (a list of
//! values), `Rule` (`x_validation(...)`), `Fields` (a list of field names) or `Docs`
//! (`external_docs(...)`), the rows of `kubebuilder_model::value_kinds!`; `stands:` any of
//! `field`, `type`, `items` (inside `validation(items(...))`) and `resource` (in the
//! `validation(...)` of `#[kubebuilder::resource]`); `repeatable:`; `needs:` the node the
//! marker must sit on (`Nothing`, `Numeric`, `Bound(value)` — numeric, and integral on
//! integers —, `Textual`, `Array`, `Object`, `Map`, `ObjectLike`, `Fits(value)` — a value of
//! the node's type —); `priority:` lower applies first; `controller_gen:` the Go marker names,
//! each followed by the places controller-gen registers it at when fewer than the row's
//! (`"k8s:maxItems" (field)`); `deprecated:` (a directive's) the compile-time warning that
//! controller-gen deprecates it, and what to write instead; `apply:` what the
//! marker does to its node; and, for a field marker that also changes the struct holding an
//! optional field, `object:` what it does to that struct (as controller-gen's struct pass).

#![warn(missing_docs)]

/// Expands to `$callback! { rows }`; see the crate documentation for the row format.
#[macro_export]
macro_rules! markers {
    ($callback:ident) => {
        $callback! {
            /// `+kubebuilder:validation:*`, one nested list per `validation(...)`.
            group Validation {
                name: "validation" in Top,
                stands: [field, type, resource],
                repeatable: true,
            }
            /// `+optional`, `+k8s:optional`: the field may be absent.
            directive Optional {
                name: "optional" in Top,
                value: Flag,
                stands: [field],
                repeatable: false,
                controller_gen: ["optional", "k8s:optional"],
            }
            /// `+required`: the field must be present.
            directive Required {
                name: "required" in Top,
                value: Flag,
                stands: [field],
                repeatable: false,
                controller_gen: ["required"],
            }
            /// `+k8s:required`: the field must be present, and not empty as Kubernetes'
            /// declarative validation means it: a string of one character or more, a list of
            /// one item or more, an object of one field or more, unless the field's own
            /// markers set those bounds.
            marker NonEmpty {
                name: "non_empty" in Top,
                value: Flag,
                stands: [field],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["k8s:required"],
                apply: |schema| at_least_one(schema),
            }
            /// `+nullable`: `null` is kept rather than pruned.
            marker Nullable {
                name: "nullable" in Top,
                value: Flag,
                stands: [field],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["nullable"],
                apply: |schema| schema.nullable = Some(true),
            }
            /// `+k8s:immutable`: the field cannot change once set.
            marker Immutable {
                name: "immutable" in Top,
                value: Flag,
                stands: [field],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["k8s:immutable"],
                apply: |schema| push_rule(schema, ValidationRule {
                    rule: "self == oldSelf".into(),
                    message: Some("field is immutable".into()),
                    ..ValidationRule::default()
                }),
                // The field's rule does not run when the field is removed.
                object: |object, field| push_rule(object, ValidationRule {
                    rule: format!("!has(oldSelf.{field}) || has(self.{field})"),
                    message: Some(format!("field {field} is immutable once set")),
                    ..ValidationRule::default()
                }),
            }
            /// `+kubebuilder:default`: the value the apiserver fills in when absent.
            marker Default {
                name: "default" in Top,
                value: Literal,
                stands: [field],
                repeatable: false,
                needs: Fits(value),
                priority: 10,
                controller_gen: ["kubebuilder:default"],
                apply: |schema, value| schema.default = Some(JSON(default_value(schema, value))),
            }
            /// `+default`: the same, written as JSON.
            marker DefaultJson {
                name: "default_json" in Top,
                value: Json,
                stands: [field],
                repeatable: false,
                needs: Fits(value),
                priority: 9,
                controller_gen: ["default"],
                apply: |schema, value| schema.default = Some(JSON(json(value))),
            }
            /// `+kubebuilder:example`.
            marker Example {
                name: "example" in Top,
                value: Literal,
                stands: [field],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:example"],
                apply: |schema, value| schema.example = Some(JSON(json(value))),
            }
            /// `+kubebuilder:title`.
            marker Title {
                name: "title" in Top,
                value: String,
                stands: [field, type],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:title"],
                apply: |schema, value| schema.title = non_empty(value),
            }
            /// `+kubebuilder:externalDocs`.
            marker ExternalDocs {
                name: "external_docs" in Top,
                value: Docs,
                stands: [field, type],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:externalDocs"],
                apply: |schema, value| schema.external_docs = Some(external_documentation(value)),
            }
            /// `+listType`: how server-side apply merges the list.
            marker ListType {
                name: "list_type" in Top,
                value: Choice("map", "set", "atomic"),
                stands: [field, type],
                repeatable: false,
                needs: Array,
                priority: 9,
                controller_gen: ["listType", "k8s:listType"],
                apply: |schema, value| schema.x_kubernetes_list_type = Some(value.to_string()),
            }
            /// `+listMapKey`: a key of a `list_type = "map"` list.
            marker ListMapKey {
                name: "list_map_key" in Top,
                value: String,
                stands: [field, type],
                repeatable: true,
                needs: Array,
                priority: 10,
                controller_gen: ["listMapKey", "k8s:listMapKey"],
                apply: |schema, value| add_list_map_key(schema, value),
            }
            /// `+mapType`: how server-side apply merges the map.
            marker MapType {
                name: "map_type" in Top,
                value: Choice("granular", "atomic"),
                stands: [field, type],
                repeatable: false,
                needs: Map,
                priority: 10,
                controller_gen: ["mapType"],
                apply: |schema, value| schema.x_kubernetes_map_type = Some(value.to_string()),
            }
            /// `+structType`: written as the map type, as controller-gen writes it (there is no
            /// struct-type extension).
            marker StructType {
                name: "struct_type" in Top,
                value: Choice("granular", "atomic"),
                stands: [field, type],
                repeatable: false,
                needs: ObjectLike,
                priority: 10,
                controller_gen: ["structType"],
                apply: |schema, value| schema.x_kubernetes_map_type = Some(value.to_string()),
            }
            /// `+kubebuilder:pruning:*`.
            group Pruning {
                name: "pruning" in Top,
                stands: [field, type],
                repeatable: true,
            }
            /// `crd:allowDangerousTypes=true` for one field or type: floats are accepted.
            directive AllowDangerousTypes {
                name: "allow_dangerous_types" in Top,
                value: Flag,
                stands: [field, type],
                repeatable: false,
                controller_gen: [],
            }
            /// A type with serde impls of its own (Go: one with `MarshalJSON`): the attribute
            /// derives no serde, and the schema comes from the type's markers alone.
            directive CustomSerde {
                name: "custom_serde" in Top,
                value: Flag,
                stands: [type],
                repeatable: false,
                controller_gen: [],
            }
            /// `+kubebuilder:ac:generate` (the applyconfiguration generator's, not a CRD
            /// marker): the type gets an apply configuration, `<Type>ApplyConfiguration`,
            /// every field optional, for server-side apply.
            directive ApplyConfiguration {
                name: "apply_configuration" in Top,
                value: Flag,
                stands: [type],
                repeatable: false,
                controller_gen: [],
            }
            /// `+kubebuilder:pruning:PreserveUnknownFields`.
            alias PreserveUnknownFields {
                name: "preserve_unknown_fields" in Pruning,
                value: Flag,
                stands: [field, type],
                repeatable: false,
                needs: Nothing,
                controller_gen: ["kubebuilder:pruning:PreserveUnknownFields"],
            }
            /// `+kubebuilder:validation:Minimum`.
            marker Minimum {
                name: "minimum" in Validation,
                value: Number,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Bound(value),
                priority: 10,
                controller_gen: ["kubebuilder:validation:Minimum", "k8s:minimum" (field)],
                apply: |schema, value| schema.minimum = Some(*value),
            }
            /// `+kubebuilder:validation:Maximum`.
            marker Maximum {
                name: "maximum" in Validation,
                value: Number,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Bound(value),
                priority: 10,
                controller_gen: ["kubebuilder:validation:Maximum", "k8s:maximum" (field)],
                apply: |schema, value| schema.maximum = Some(*value),
            }
            /// `+kubebuilder:validation:ExclusiveMinimum`.
            marker ExclusiveMinimum {
                name: "exclusive_minimum" in Validation,
                value: Bool,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Numeric,
                priority: 10,
                controller_gen: ["kubebuilder:validation:ExclusiveMinimum"],
                apply: |schema, value| schema.exclusive_minimum = flag(*value),
            }
            /// `+kubebuilder:validation:ExclusiveMaximum`.
            marker ExclusiveMaximum {
                name: "exclusive_maximum" in Validation,
                value: Bool,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Numeric,
                priority: 10,
                controller_gen: ["kubebuilder:validation:ExclusiveMaximum"],
                apply: |schema, value| schema.exclusive_maximum = flag(*value),
            }
            /// `+kubebuilder:validation:MultipleOf`.
            marker MultipleOf {
                name: "multiple_of" in Validation,
                value: Number,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Bound(value),
                priority: 10,
                controller_gen: ["kubebuilder:validation:MultipleOf"],
                apply: |schema, value| schema.multiple_of = Some(*value),
            }
            /// `+kubebuilder:validation:MinLength`.
            marker MinLength {
                name: "min_length" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Textual,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MinLength"],
                apply: |schema, value| schema.min_length = Some(*value),
            }
            /// `+kubebuilder:validation:MaxLength`.
            marker MaxLength {
                name: "max_length" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Textual,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MaxLength"],
                apply: |schema, value| schema.max_length = Some(*value),
            }
            /// `+kubebuilder:validation:Pattern`.
            marker Pattern {
                name: "pattern" in Validation,
                value: Pattern,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Textual,
                priority: 10,
                controller_gen: ["kubebuilder:validation:Pattern"],
                apply: |schema, value| schema.pattern = Some(value.to_string()),
            }
            /// `+kubebuilder:validation:MinItems`.
            marker MinItems {
                name: "min_items" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Array,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MinItems"],
                apply: |schema, value| schema.min_items = Some(*value),
            }
            /// `+kubebuilder:validation:MaxItems`.
            marker MaxItems {
                name: "max_items" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Array,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MaxItems", "k8s:maxItems" (field)],
                apply: |schema, value| schema.max_items = Some(*value),
            }
            /// `+kubebuilder:validation:UniqueItems` (`true` is refused: the apiserver rejects it).
            marker UniqueItems {
                name: "unique_items" in Validation,
                value: Bool,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Array,
                priority: 10,
                controller_gen: ["kubebuilder:validation:UniqueItems"],
                apply: |schema, value| schema.unique_items = flag(*value),
            }
            /// `+kubebuilder:validation:MinProperties`.
            marker MinProperties {
                name: "min_properties" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Object,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MinProperties"],
                apply: |schema, value| schema.min_properties = Some(*value),
            }
            /// `+kubebuilder:validation:MaxProperties`.
            marker MaxProperties {
                name: "max_properties" in Validation,
                value: Integer,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Object,
                priority: 10,
                controller_gen: ["kubebuilder:validation:MaxProperties"],
                apply: |schema, value| schema.max_properties = Some(*value),
            }
            /// `+kubebuilder:validation:Enum`.
            marker Enum {
                name: "enum" in Validation,
                value: Literals,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:validation:Enum"],
                apply: |schema, value| schema.enum_ = Some(value.iter().map(|v| JSON(json(v))).collect()),
            }
            /// `+kubebuilder:validation:Format`.
            marker Format {
                name: "format" in Validation,
                value: String,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:validation:Format"],
                apply: |schema, value| schema.format = non_empty(value),
            }
            /// `+kubebuilder:validation:Type`.
            marker Type {
                name: "type" in Validation,
                value: Choice("array", "boolean", "integer", "number", "object", "string"),
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 9,
                controller_gen: ["kubebuilder:validation:Type"],
                apply: |schema, value| schema.type_ = non_empty(value),
            }
            /// `+kubebuilder:validation:XPreserveUnknownFields`.
            marker PreserveUnknownFields {
                name: "x_preserve_unknown_fields" in Validation,
                value: Flag,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:validation:XPreserveUnknownFields"],
                apply: |schema| schema.x_kubernetes_preserve_unknown_fields = Some(true),
            }
            /// `+kubebuilder:validation:XEmbeddedResource`.
            marker EmbeddedResource {
                name: "x_embedded_resource" in Validation,
                value: Flag,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:validation:XEmbeddedResource"],
                apply: |schema| schema.x_kubernetes_embedded_resource = Some(true),
            }
            /// `+kubebuilder:validation:XIntOrString`.
            marker IntOrString {
                name: "x_int_or_string" in Validation,
                value: Flag,
                stands: [field, type, items, resource],
                repeatable: false,
                needs: Nothing,
                priority: 9,
                controller_gen: ["kubebuilder:validation:XIntOrString"],
                apply: |schema| schema.x_kubernetes_int_or_string = Some(true),
            }
            /// `+kubebuilder:validation:XValidation`: a CEL rule.
            marker XValidation {
                name: "x_validation" in Validation,
                value: Rule,
                stands: [field, type, items, resource],
                repeatable: true,
                needs: Nothing,
                priority: 10,
                controller_gen: ["kubebuilder:validation:XValidation"],
                apply: |schema, value| push_rule(schema, validation_rule(value)),
            }
            /// `+kubebuilder:validation:EmbeddedResource` (fields only).
            alias EmbeddedResource {
                name: "embedded_resource" in Validation,
                value: Flag,
                stands: [field],
                repeatable: false,
                needs: Nothing,
                controller_gen: ["kubebuilder:validation:EmbeddedResource"],
            }
            /// `+kubebuilder:validation:Schemaless`: the field's schema is left empty.
            directive Schemaless {
                name: "schemaless" in Validation,
                value: Flag,
                stands: [field],
                repeatable: false,
                controller_gen: ["kubebuilder:validation:Schemaless"],
            }
            /// `+kubebuilder:validation:Optional`, which beats `required`.
            directive ValidationOptional {
                name: "optional" in Validation,
                value: Flag,
                stands: [field],
                repeatable: false,
                controller_gen: ["kubebuilder:validation:Optional"],
                deprecated: "`validation(optional)` is deprecated: write `optional`",
            }
            /// `+kubebuilder:validation:Required`, which beats `optional`.
            directive ValidationRequired {
                name: "required" in Validation,
                value: Flag,
                stands: [field],
                repeatable: false,
                controller_gen: ["kubebuilder:validation:Required"],
                deprecated: "`validation(required)` is deprecated: write `required`",
            }
            /// `+kubebuilder:validation:AtMostOneOf`: a CEL rule counting the fields set.
            marker AtMostOneOf {
                name: "at_most_one_of" in Validation,
                value: Fields,
                stands: [type, resource],
                repeatable: true,
                needs: Nothing,
                priority: 11,
                controller_gen: ["kubebuilder:validation:AtMostOneOf"],
                apply: |schema, value| push_rule(schema, one_of_rule(value, OneOf::AtMost)),
            }
            /// `+kubebuilder:validation:ExactlyOneOf`.
            marker ExactlyOneOf {
                name: "exactly_one_of" in Validation,
                value: Fields,
                stands: [type, resource],
                repeatable: true,
                needs: Nothing,
                priority: 12,
                controller_gen: ["kubebuilder:validation:ExactlyOneOf"],
                apply: |schema, value| push_rule(schema, one_of_rule(value, OneOf::Exactly)),
            }
            /// `+kubebuilder:validation:AtLeastOneOf`.
            marker AtLeastOneOf {
                name: "at_least_one_of" in Validation,
                value: Fields,
                stands: [type, resource],
                repeatable: true,
                needs: Nothing,
                priority: 13,
                controller_gen: ["kubebuilder:validation:AtLeastOneOf"],
                apply: |schema, value| push_rule(schema, one_of_rule(value, OneOf::AtLeast)),
            }
            /// `+kubebuilder:validation:items:*`: the markers of the array's items.
            group Items {
                name: "items" in Validation,
                stands: [field, type, resource],
                repeatable: true,
            }
        }
    };
}

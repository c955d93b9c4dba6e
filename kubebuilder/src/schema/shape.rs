//! What the attribute macros know about a type at compile time, and the checks they run
//! with it. A proc macro sees one item at a time, so the facts about other types (is this
//! field numeric? which values does this enum allow? which fields does the spec have?)
//! travel as `const` data ([`Schema::SHAPE`](super::Schema::SHAPE)); the generated code
//! evaluates the checks below in `const` items, so a mistake is a compile error whose
//! message is built here and whose span is the offending attribute.

use kubebuilder_model::{as_slice, as_str};

use super::marker::{Literal, Marker, Needs};

/// The compile-time outline of a type's schema. The generated constants are
/// `Shape<'static>`; the source reader of `cargo xtask manifests` makes its own, which refer
/// to what it read.
#[derive(Clone, Copy, Debug)]
pub struct Shape<'a> {
    /// Rust type name, for messages.
    pub name: &'a str,
    /// `false` for types without a declared shape: nothing is checked against them.
    pub known: bool,
    /// The OpenAPI type; empty when the schema has none.
    pub type_: &'a str,
    /// `x-kubernetes-int-or-string`: an integer or a string, in a schema without a type.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`: fields the schema does not declare are kept,
    /// so JSON paths and defaults may name any field below the node.
    pub preserve_unknown_fields: bool,
    /// The values `enum` allows; empty for any.
    pub enum_: &'a [Literal],
    /// Elements of an array.
    pub items: Option<&'a Shape<'a>>,
    /// Fields of a struct, by JSON name.
    pub properties: &'a [(&'a str, &'a Shape<'a>)],
    /// The required fields of a struct, by JSON name.
    pub required: &'a [&'a str],
    /// More fields, from the variants of an enum with data (their fields sit beside each
    /// other in its schema).
    pub union: &'a [&'a Shape<'a>],
    /// Values of a map.
    pub additional_properties: Option<&'a Shape<'a>>,
    /// A `Vec<u8>` (base64 on the wire) is this value or sits in it, not below a named type
    /// (which has serde of its own): the field needs the base64 adapter.
    pub raw_bytes: bool,
}

impl<'a> Shape<'a> {
    /// A type nothing is known about.
    pub const UNKNOWN: Shape<'a> = Shape {
        name: "",
        known: false,
        type_: "",
        int_or_string: false,
        preserve_unknown_fields: false,
        enum_: &[],
        items: None,
        properties: &[],
        required: &[],
        union: &[],
        additional_properties: None,
        raw_bytes: false,
    };

    /// A known type with `type_` and nothing else.
    pub const fn typed(name: &'a str, type_: &'a str) -> Shape<'a> {
        Shape {
            name,
            known: true,
            type_,
            ..Shape::UNKNOWN
        }
    }

    /// The shape after a node's type-changing markers (`type`, `x_int_or_string`, `enum`).
    pub const fn with_markers(self, markers: &'a [Marker]) -> Shape<'a> {
        let mut shape = self;
        let mut i = 0;
        while i < markers.len() {
            match &markers[i] {
                Marker::Type(type_) => {
                    shape.type_ = as_str(type_);
                    shape.known = true;
                }
                Marker::IntOrString => shape.int_or_string = true,
                Marker::Enum(values) => shape.enum_ = as_slice(values),
                Marker::PreserveUnknownFields => shape.preserve_unknown_fields = true,
                _ => {}
            }
            i += 1;
        }
        shape
    }

    /// The shape of an untagged enum from its variants' ([`check_union`](super::union::check_union)
    /// refuses the others): an int-or-string, or an object with the variants' fields.
    pub const fn untagged(name: &'a str, variants: &'a [&'a Shape<'a>]) -> Shape<'a> {
        match variants.first() {
            Some(first) if !first.is("object") => Shape {
                int_or_string: true,
                ..Shape::typed(name, "")
            },
            _ => Shape {
                union: variants,
                ..Shape::typed(name, "object")
            },
        }
    }

    pub(crate) const fn is(&self, type_: &str) -> bool {
        str_eq(self.type_, type_)
    }

    const fn found(&self) -> &'a str {
        if self.int_or_string {
            "int-or-string"
        } else if self.type_.is_empty() {
            "a schema without a type"
        } else {
            self.type_
        }
    }
}

/// A compile error message assembled in a `const` context.
#[derive(Clone, Copy)]
pub struct Message {
    buf: [u8; 1024],
    len: usize,
}

impl Message {
    pub(crate) const fn new(text: &str) -> Message {
        Message {
            buf: [0; 1024],
            len: 0,
        }
        .push(text)
    }

    pub(crate) const fn push(mut self, text: &str) -> Message {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() && self.len < self.buf.len() {
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn push_int(self, value: i64) -> Message {
        let mut digits = [0u8; 20];
        let mut n = value.unsigned_abs();
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let this = if value < 0 { self.push("-") } else { self };
        let (_, tail) = digits.split_at(at);
        match core::str::from_utf8(tail) {
            Ok(text) => this.push(text),
            Err(_) => this,
        }
    }

    /// A float as its integer part and up to six decimals (enough for a message).
    const fn push_float(self, value: f64) -> Message {
        let this = if value < 0.0 { self.push("-") } else { self };
        let value = if value < 0.0 { -value } else { value };
        let whole = value as i64;
        let mut this = this.push_int(whole);
        let mut fraction = value - whole as f64;
        if fraction > 0.0 {
            this = this.push(".");
            let mut digits = 0;
            while fraction > 0.0 && digits < 6 {
                fraction *= 10.0;
                let digit = fraction as i64;
                this = this.push_int(digit);
                fraction -= digit as f64;
                digits += 1;
            }
        }
        this
    }

    const fn push_literal(self, value: &Literal) -> Message {
        match value {
            Literal::Null => self.push("null"),
            Literal::Bool(true) => self.push("true"),
            Literal::Bool(false) => self.push("false"),
            Literal::Int(i) => self.push_int(*i),
            Literal::Float(f) => self.push_float(*f),
            Literal::String(s) => self.push("\"").push(as_str(s)).push("\""),
            Literal::List(_) => self.push("a list"),
            Literal::Map(_) => self.push("a map"),
        }
    }

    /// The message, for the `panic!` of the `const` check that found the mistake.
    pub const fn as_str(&self) -> &str {
        let (text, _) = self.buf.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => text,
            // Truncation inside a multi-byte character: drop the message tail.
            Err(error) => {
                let (valid, _) = text.split_at(error.valid_up_to());
                match core::str::from_utf8(valid) {
                    Ok(text) => text,
                    Err(_) => "",
                }
            }
        }
    }
}

pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Checks that `marker` (written as `name` in the attribute) fits a node of `shape`, as
/// controller-gen's `ApplyToSchema` preconditions do. `shape` must already carry the
/// node's type-changing markers (see [`Shape::with_markers`]).
pub const fn check_marker(shape: &Shape, name: &str, marker: &Marker) -> Option<Message> {
    if !shape.known {
        return None;
    }
    let numeric = shape.is("integer") || shape.is("number");
    let textual = shape.is("string") || shape.int_or_string;
    let wants = match marker.needs() {
        Needs::Nothing => return None,
        Needs::Bound(v) => {
            if !numeric {
                "a numeric value"
            } else if shape.is("integer") && !is_integral(*v) {
                return Some(
                    Message::new("cannot apply a non-integral ")
                        .push(name)
                        .push(" to an integer value"),
                );
            } else {
                return None;
            }
        }
        Needs::Numeric if !numeric => "a numeric value",
        Needs::Textual if !textual => "a textual value",
        Needs::Array if !shape.is("array") => "an array",
        Needs::Object | Needs::Map if !shape.is("object") => "an object",
        // A map is an object with values and no fields; a struct is an object with fields.
        Needs::Map if shape.additional_properties.is_none() && !shape.preserve_unknown_fields => {
            "a map"
        }
        Needs::ObjectLike if !(shape.is("object") || shape.type_.is_empty()) => "an object",
        Needs::Fits(value) => return check_value(shape, value, Message::new("default")),
        _ => return None,
    };
    Some(
        Message::new("must apply ")
            .push(name)
            .push(" to ")
            .push(wants)
            .push(", found ")
            .push(shape.found()),
    )
}

/// Checks that a field whose type holds a `Vec<u8>` spells it out (`written`), so that the
/// attribute gave it the base64 adapter: behind a type alias or in an array, serde would
/// write integers where the schema says base64.
pub const fn check_bytes(shape: &Shape, written: bool) -> Option<Message> {
    if shape.raw_bytes && !written {
        Some(Message::new(
            "this field's type holds a `Vec<u8>` out of the base64 adapter's reach (behind a type alias, or in an array): \
             write `Vec<u8>` out, inside `Option`, `Vec`, `Box` or a map with `String` keys, or wrap it in a newtype with `#[kubebuilder::schema]`",
        ))
    } else {
        None
    }
}

/// Checks an `items(...)` marker: the node must be an array.
pub const fn check_items_marker(shape: &Shape, name: &str, marker: &Marker) -> Option<Message> {
    if !shape.known {
        return None;
    }
    match shape.items {
        Some(items) => check_marker(
            &items.with_markers(core::slice::from_ref(marker)),
            name,
            marker,
        ),
        None => Some(
            Message::new("must apply items(")
                .push(name)
                .push(") to an array, found ")
                .push(shape.found()),
        ),
    }
}

const fn is_integral(value: f64) -> bool {
    value.is_finite() && value == (value as i64) as f64
}

/// Does a literal (a default) fit the schema? Reports the first mismatch, prefixed with
/// `what` (e.g. `default.spec`).
const fn check_value(shape: &Shape, value: &Literal, what: Message) -> Option<Message> {
    if !shape.known || shape.preserve_unknown_fields && shape.type_.is_empty() {
        return None;
    }
    if !shape.enum_.is_empty() {
        let mut i = 0;
        while i < shape.enum_.len() {
            if literal_eq(&shape.enum_[i], value) {
                return None;
            }
            i += 1;
        }
        let mut message = what
            .push(" ")
            .push_literal(value)
            .push(" is not one of the allowed values: ");
        let mut i = 0;
        while i < shape.enum_.len() {
            if i > 0 {
                message = message.push(", ");
            }
            message = message.push_literal(&shape.enum_[i]);
            i += 1;
        }
        return Some(message);
    }
    let fits = match value {
        Literal::Null => false,
        Literal::Bool(_) => shape.is("boolean"),
        Literal::Int(_) => shape.is("integer") || shape.is("number") || shape.int_or_string,
        Literal::Float(f) => shape.is("number") || shape.is("integer") && is_integral(*f),
        Literal::String(_) => shape.is("string") || shape.int_or_string,
        Literal::List(items) => {
            let items = as_slice(items);
            if !shape.is("array") {
                false
            } else {
                let mut i = 0;
                while i < items.len() {
                    if let Some(item_shape) = shape.items
                        && let Some(error) = check_value(
                            item_shape,
                            &items[i],
                            what.push("[").push_int(i as i64).push("]"),
                        )
                    {
                        return Some(error);
                    }
                    i += 1;
                }
                true
            }
        }
        Literal::Map(entries) => {
            let entries = as_slice(entries);
            if shape.is("array") && entries.is_empty() {
                // `{}` on a list means the empty list (controller-gen writes `[]`).
                true
            } else if !shape.is("object") {
                false
            } else {
                let mut i = 0;
                while i < entries.len() {
                    let (key, entry) = &entries[i];
                    let key = as_str(key);
                    let field_shape = match shape.additional_properties {
                        Some(values) => Some(values),
                        None => property(shape, key),
                    };
                    match field_shape {
                        Some(field_shape) => {
                            if let Some(error) =
                                check_value(field_shape, entry, what.push(".").push(key))
                            {
                                return Some(error);
                            }
                        }
                        None if !(shape.preserve_unknown_fields
                            || shape.properties.is_empty() && shape.union.is_empty()) =>
                        {
                            return Some(
                                what.push(" has a key `")
                                    .push(key)
                                    .push("` that is not a field of ")
                                    .push(shape.name),
                            );
                        }
                        None => {}
                    }
                    i += 1;
                }
                true
            }
        }
    };
    if fits {
        None
    } else {
        Some(
            what.push(" ")
                .push_literal(value)
                .push(" does not fit a value of type ")
                .push(shape.found()),
        )
    }
}

/// The field `name` of a struct, or of one of an enum's variants.
pub(crate) const fn property<'a>(shape: &Shape<'a>, name: &str) -> Option<&'a Shape<'a>> {
    let mut i = 0;
    while i < shape.properties.len() {
        if str_eq(shape.properties[i].0, name) {
            return Some(shape.properties[i].1);
        }
        i += 1;
    }
    let mut i = 0;
    while i < shape.union.len() {
        if let Some(found) = property(shape.union[i], name) {
            return Some(found);
        }
        i += 1;
    }
    None
}

const fn literal_eq(a: &Literal, b: &Literal) -> bool {
    match (a, b) {
        (Literal::Null, Literal::Null) => true,
        (Literal::Bool(x), Literal::Bool(y)) => *x == *y,
        (Literal::Int(x), Literal::Int(y)) => *x == *y,
        (Literal::Float(x), Literal::Float(y)) => *x == *y,
        (Literal::Int(x), Literal::Float(y)) | (Literal::Float(y), Literal::Int(x)) => {
            (*x as f64) == *y
        }
        (Literal::String(x), Literal::String(y)) => str_eq(as_str(x), as_str(y)),
        (Literal::List(x), Literal::List(y)) => {
            let (x, y) = (as_slice(x), as_slice(y));
            if x.len() != y.len() {
                return false;
            }
            let mut i = 0;
            while i < x.len() {
                if !literal_eq(&x[i], &y[i]) {
                    return false;
                }
                i += 1;
            }
            true
        }
        (Literal::Map(x), Literal::Map(y)) => {
            let (x, y) = (as_slice(x), as_slice(y));
            if x.len() != y.len() {
                return false;
            }
            let mut i = 0;
            while i < x.len() {
                if !str_eq(as_str(&x[i].0), as_str(&y[i].0)) || !literal_eq(&x[i].1, &y[i].1) {
                    return false;
                }
                i += 1;
            }
            true
        }
        _ => false,
    }
}

/// Checks that a printer column's or selectable field's JSONPath names a field of the
/// object (`root`). Parts the check cannot follow (types without a shape, filters,
/// recursive descent) are accepted.
pub const fn check_json_path(root: &Shape, what: &str, path: &str) -> Option<Message> {
    let bytes = path.as_bytes();
    if bytes.is_empty() || bytes[0] != b'.' {
        return Some(
            Message::new(what)
                .push(" `")
                .push(path)
                .push("` must start with `.`"),
        );
    }
    let mut shape = root;
    let mut at = 0;
    while at < bytes.len() {
        if !shape.known || shape.preserve_unknown_fields {
            return None;
        }
        if bytes[at] == b'[' {
            // An index or wildcard steps into the items of a list.
            let mut end = at;
            while end < bytes.len() && bytes[end] != b']' {
                end += 1;
            }
            let quoted = at + 1 < bytes.len() && (bytes[at + 1] == b'\'' || bytes[at + 1] == b'"');
            if quoted || end == bytes.len() {
                return None;
            }
            match shape.items {
                Some(items) => shape = items,
                None => {
                    let (walked, _) = bytes.split_at(at);
                    return Some(
                        Message::new(what)
                            .push(" `")
                            .push(path)
                            .push("`: `")
                            .push(utf8(walked))
                            .push("` is not a list"),
                    );
                }
            }
            at = end + 1;
            continue;
        }
        if bytes[at] != b'.' {
            return None;
        }
        at += 1;
        if at < bytes.len() && bytes[at] == b'.' {
            return None; // recursive descent
        }
        let start = at;
        while at < bytes.len() && bytes[at] != b'.' && bytes[at] != b'[' {
            at += 1;
        }
        let (head, _) = bytes.split_at(at);
        let (_, name) = head.split_at(start);
        let name = utf8(name);
        if shape.is("array") {
            let (walked, _) = bytes.split_at(start - 1);
            return Some(
                Message::new(what)
                    .push(" `")
                    .push(path)
                    .push("`: `")
                    .push(utf8(walked))
                    .push("` is a list; select its items with `[*]` or `[0]`"),
            );
        }
        if let Some(values) = shape.additional_properties {
            shape = values;
            continue;
        }
        match property(shape, name) {
            Some(next) => shape = next,
            None => {
                let mut message = Message::new(what)
                    .push(" `")
                    .push(path)
                    .push("` does not resolve: ")
                    .push(shape.name)
                    .push(" has no field `")
                    .push(name)
                    .push("`");
                if let Some(closest) = closest_property(shape, name) {
                    message = message.push("; did you mean `").push(closest).push("`?");
                }
                return Some(message);
            }
        }
    }
    None
}

const fn utf8(bytes: &[u8]) -> &str {
    match core::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => "",
    }
}

/// The field name nearest to `name` (edit distance at most a third of its length).
const fn closest_property<'a>(shape: &Shape<'a>, name: &str) -> Option<&'a str> {
    let mut best: Option<&'a str> = None;
    let mut best_distance = name.len() / 3 + 1;
    let mut i = 0;
    while i < shape.properties.len() {
        let candidate = shape.properties[i].0;
        let distance = edit_distance(candidate.as_bytes(), name.as_bytes());
        if distance < best_distance {
            best = Some(candidate);
            best_distance = distance;
        }
        i += 1;
    }
    best
}

/// Levenshtein distance over bytes; names longer than 63 bytes are never "close".
const fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    const MAX: usize = 64;
    if a.len() >= MAX || b.len() >= MAX {
        return usize::MAX;
    }
    let mut previous = [0usize; MAX];
    let mut current = [0usize; MAX];
    let mut j = 0;
    while j <= b.len() {
        previous[j] = j;
        j += 1;
    }
    let mut i = 1;
    while i <= a.len() {
        current[0] = i;
        let mut j = 1;
        while j <= b.len() {
            let substitution = previous[j - 1] + if a[i - 1] == b[j - 1] { 0 } else { 1 };
            let deletion = previous[j] + 1;
            let insertion = current[j - 1] + 1;
            let mut best = substitution;
            if deletion < best {
                best = deletion;
            }
            if insertion < best {
                best = insertion;
            }
            current[j] = best;
            j += 1;
        }
        previous = current;
        i += 1;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    const STRING: Shape = Shape::typed("String", "string");
    const INTEGER: Shape = Shape::typed("i32", "integer");
    const POLICY: Shape = Shape {
        enum_: &[
            Literal::String(Cow::Borrowed("Allow")),
            Literal::String(Cow::Borrowed("Forbid")),
        ],
        ..Shape::typed("Policy", "string")
    };
    const LIST: Shape = Shape {
        items: Some(&STRING),
        ..Shape::typed("Vec<String>", "array")
    };
    const SPEC: Shape = Shape {
        properties: &[("schedule", &STRING), ("names", &LIST), ("policy", &POLICY)],
        ..Shape::typed("Spec", "object")
    };
    const ROOT: Shape = Shape {
        properties: &[("spec", &SPEC), ("metadata", &Shape::UNKNOWN)],
        ..Shape::typed("Root", "object")
    };

    fn text(message: Option<Message>) -> Option<String> {
        message.map(|m| m.as_str().to_owned())
    }

    #[test]
    fn numeric_markers_need_numbers() {
        assert_eq!(
            text(check_marker(&STRING, "minimum", &Marker::Minimum(0.0))),
            Some("must apply minimum to a numeric value, found string".into())
        );
        assert_eq!(
            check_marker(&INTEGER, "minimum", &Marker::Minimum(0.0)).map(|_| ()),
            None
        );
        assert_eq!(
            text(check_marker(&INTEGER, "maximum", &Marker::Maximum(1.5))),
            Some("cannot apply a non-integral maximum to an integer value".into())
        );
        // A `type` marker on the same node changes what the others are checked against.
        let retyped = INTEGER.with_markers(&[Marker::Type(Cow::Borrowed("string"))]);
        assert!(check_marker(&retyped, "max_length", &Marker::MaxLength(3)).is_none());
    }

    #[test]
    fn items_markers_need_a_list() {
        assert!(check_items_marker(&LIST, "max_length", &Marker::MaxLength(3)).is_none());
        assert_eq!(
            text(check_items_marker(
                &STRING,
                "max_length",
                &Marker::MaxLength(3)
            )),
            Some("must apply items(max_length) to an array, found string".into())
        );
    }

    #[test]
    fn defaults_must_fit_the_type_and_the_enum() {
        assert!(
            check_marker(
                &POLICY,
                "default",
                &Marker::Default(Literal::String(Cow::Borrowed("Allow")))
            )
            .is_none()
        );
        assert_eq!(
            text(check_marker(
                &POLICY,
                "default",
                &Marker::Default(Literal::String(Cow::Borrowed("Never")))
            )),
            Some(
                "default \"Never\" is not one of the allowed values: \"Allow\", \"Forbid\"".into()
            )
        );
        assert_eq!(
            text(check_marker(
                &INTEGER,
                "default",
                &Marker::Default(Literal::String(Cow::Borrowed("x")))
            )),
            Some("default \"x\" does not fit a value of type integer".into())
        );
        assert_eq!(
            text(check_marker(
                &SPEC,
                "default",
                &Marker::Default(Literal::Map(Cow::Borrowed(&[(
                    Cow::Borrowed("names"),
                    Literal::List(Cow::Borrowed(&[Literal::Int(1)]))
                )])))
            )),
            Some("default.names[0] 1 does not fit a value of type string".into())
        );
        assert_eq!(
            text(check_marker(
                &SPEC,
                "default",
                &Marker::Default(Literal::Map(Cow::Borrowed(&[(
                    Cow::Borrowed("nope"),
                    Literal::Null
                )])))
            )),
            Some("default has a key `nope` that is not a field of Spec".into())
        );
        assert!(
            check_marker(
                &LIST,
                "default",
                &Marker::Default(Literal::Map(Cow::Borrowed(&[])))
            )
            .is_none()
        );
    }

    #[test]
    fn json_paths_resolve_through_fields_and_lists() {
        assert!(check_json_path(&ROOT, "json_path", ".spec.schedule").is_none());
        assert!(check_json_path(&ROOT, "json_path", ".spec.names[*]").is_none());
        assert!(check_json_path(&ROOT, "json_path", ".metadata.creationTimestamp").is_none());
        assert_eq!(
            text(check_json_path(&ROOT, "json_path", ".spec.schedul")),
            Some("json_path `.spec.schedul` does not resolve: Spec has no field `schedul`; did you mean `schedule`?".into())
        );
        assert_eq!(
            text(check_json_path(&ROOT, "json_path", ".spec.names.x")),
            Some("json_path `.spec.names.x`: `.spec.names` is a list; select its items with `[*]` or `[0]`".into())
        );
        assert_eq!(
            text(check_json_path(&ROOT, "json_path", "spec")),
            Some("json_path `spec` must start with `.`".into())
        );
    }

    #[test]
    fn messages_render_integers() {
        assert_eq!(Message::new("n=").push_int(-120).as_str(), "n=-120");
        assert_eq!(Message::new("").push_int(0).as_str(), "0");
        assert_eq!(Message::new("").push_float(-1.5).as_str(), "-1.5");
        assert_eq!(Message::new("").push_float(2.0).as_str(), "2");
    }
}

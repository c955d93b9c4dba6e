//! YAML output in the shape controller-gen writes (Go's yaml.v2 behind sigs.k8s.io/yaml):
//! map keys in yaml.v2's natural order, sequences not indented under their key, 2-space
//! indentation, `|-` blocks for multi-line strings, and quotes only where a plain scalar
//! would read back as something else. Long plain scalars are not folded (yaml.v2 folds at
//! 80 columns); the documents mean the same.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::Value;

/// Renders documents, each introduced by `---`, as controller-gen does.
pub fn to_documents<'a>(documents: impl IntoIterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    for document in documents {
        out.push_str("---\n");
        out.push_str(&to_yaml(document));
    }
    out
}

/// Renders one document (no `---`).
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_mapping(&mut out, value, 0),
        Value::Array(items) if !items.is_empty() => write_sequence(&mut out, items, 0),
        scalar => {
            write_scalar(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

/// yaml.v2's key order: letters by code point, any non-letter before a letter, and runs of
/// digits compared as numbers (so `v2` < `v10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (a_letter, b_letter) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if a_letter && b_letter {
            return a[i].cmp(&b[i]);
        }
        if a_letter || b_letter {
            return if b_letter {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        // Both non-letters: compare the digit runs starting here numerically.
        let digits = |s: &[char]| -> (u128, usize) {
            let mut n = 0u128;
            let mut end = i;
            while end < s.len() && s[end].is_ascii_digit() {
                n = n
                    .saturating_mul(10)
                    .saturating_add(u128::from(s[end] as u8 - b'0'));
                end += 1;
            }
            (n, end)
        };
        let ((an, aend), (bn, bend)) = (digits(&a), digits(&b));
        // A leading zero inside a number run makes the run compare as text, as in yaml.v2.
        let zero_prefixed = (a[i] == '0' || b[i] == '0')
            && a[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .all(|c| *c == '0');
        if !zero_prefixed && an != bn {
            return an.cmp(&bn);
        }
        if aend != bend {
            return aend.cmp(&bend);
        }
        return a[i].cmp(&b[i]);
    }
    a.len().cmp(&b.len())
}

fn sorted_entries(map: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|(a, _), (b, _)| natural_cmp(a, b));
    entries
}

fn indent(out: &mut String, level: usize) {
    out.extend(std::iter::repeat_n(' ', level));
}

/// A non-empty mapping, each key on its own line at `level`.
fn write_mapping(out: &mut String, value: &Value, level: usize) {
    let Value::Object(map) = value else {
        unreachable!("only called with objects")
    };
    for (n, (key, value)) in sorted_entries(map).into_iter().enumerate() {
        if n > 0 {
            indent(out, level);
        }
        write_string(out, key, level);
        out.push(':');
        write_value_after_key(out, value, level);
    }
}

/// The value of a mapping entry, after `key:`.
fn write_value_after_key(out: &mut String, value: &Value, level: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            indent(out, level + 2);
            write_mapping(out, value, level + 2);
        }
        // Sequences sit at the key's own indentation, as yaml.v2 writes them.
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            indent(out, level);
            write_sequence(out, items, level);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, level + 2);
            out.push('\n');
        }
    }
}

/// A non-empty sequence whose first `- ` is already indented to `level`.
fn write_sequence(out: &mut String, items: &[Value], level: usize) {
    for (n, item) in items.iter().enumerate() {
        if n > 0 {
            indent(out, level);
        }
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => write_mapping(out, item, level + 2),
            Value::Array(inner) if !inner.is_empty() => write_sequence(out, inner, level + 2),
            scalar => {
                write_scalar(out, scalar, level + 2);
                out.push('\n');
            }
        }
    }
}

/// A scalar, or an empty collection in flow style; `block_indent` is where the lines of a
/// literal block go.
fn write_scalar(out: &mut String, value: &Value, block_indent: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s, block_indent),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else {
        let f = n.as_f64().unwrap_or_default();
        // Go's strconv 'g' formatting: integral floats print without a fraction.
        if f.fract() == 0.0 && f.abs() < 1e21 {
            let _ = write!(out, "{f:.0}");
        } else {
            let _ = write!(out, "{f}");
        }
    }
}

fn write_string(out: &mut String, s: &str, block_indent: usize) {
    if s.contains('\n') && literal_allowed(s) {
        write_literal(out, s, block_indent);
    } else if s.contains('\n') || has_special_characters(s) || reads_as_other_type(s) {
        write_double_quoted(out, s);
    } else if plain_allowed(s) {
        out.push_str(s);
    } else {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    }
}

/// `|-` (no final newline), `|` (one) or `|+` (more), the lines indented to `block_indent`.
fn write_literal(out: &mut String, s: &str, block_indent: usize) {
    let trailing = s.len() - s.trim_end_matches('\n').len();
    out.push('|');
    if s.starts_with(' ') {
        out.push('2'); // indentation indicator: the first line's spaces are content
    }
    out.push_str(match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    });
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, block_indent);
            out.push_str(line);
        }
    }
    // The caller ends the entry with its own newline.
}

fn write_double_quoted(out: &mut String, s: &str) {
    // JSON string escapes are valid YAML double-quoted escapes.
    out.push_str(&serde_json::to_string(s).expect("strings serialise"));
}

fn has_special_characters(s: &str) -> bool {
    s.chars()
        .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
}

/// A literal block cannot carry a space right before a line break, nor tabs at line
/// starts, nor control characters (libyaml falls back to double quotes then).
fn literal_allowed(s: &str) -> bool {
    !has_special_characters(s) && !s.contains(" \n") && !s.contains("\n\t") && !s.starts_with('\t')
}

/// Would the plain scalar resolve to a non-string (bool, null, number, timestamp)?
fn reads_as_other_type(s: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "yes",
        "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N",
        ".nan", ".NaN", ".NAN", "<<",
    ];
    if KEYWORDS.contains(&s) {
        return true;
    }
    // Infinity, signed or not.
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    is_number(unsigned) || is_timestamp(s)
}

fn is_number(s: &str) -> bool {
    let t = s.replace('_', "");
    if t.is_empty() {
        return false;
    }
    if let Some(hex) = t.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(oct) = t.strip_prefix("0o") {
        return !oct.is_empty() && oct.chars().all(|c| c.is_digit(8));
    }
    if let Some(bin) = t.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    // Sexagesimal (190:20:30) as yaml.v2 still reads it.
    if t.contains(':') {
        return t
            .split(':')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()));
    }
    t.parse::<f64>().is_ok() && t.chars().any(|c| c.is_ascii_digit()) && !t.ends_with(['f', 'F'])
}

fn is_timestamp(s: &str) -> bool {
    // yaml.v2 resolves YYYY-MM-DD (optionally with a time) to a timestamp.
    let bytes = s.as_bytes();
    bytes.len() >= 10
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[5..7].iter().all(u8::is_ascii_digit)
        && bytes[7] == b'-'
        && bytes[8..10].iter().all(u8::is_ascii_digit)
        && (bytes.len() == 10 || matches!(bytes[10], b'T' | b't' | b' '))
}

/// libyaml's rules for a plain scalar in block context.
fn plain_allowed(s: &str) -> bool {
    let first = s.chars().next().expect("empty strings are quoted earlier");
    let last = s.chars().last().expect("non-empty");
    if first.is_whitespace() || last.is_whitespace() {
        return false;
    }
    let second_is_space = s.chars().nth(1).is_none_or(char::is_whitespace);
    if matches!(first, '-' | '?' | ':') && second_is_space {
        return false;
    }
    if matches!(
        first,
        ',' | '['
            | ']'
            | '{'
            | '}'
            | '#'
            | '&'
            | '*'
            | '!'
            | '|'
            | '>'
            | '\''
            | '"'
            | '%'
            | '@'
            | '`'
    ) {
        return false;
    }
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    !(s.contains(": ") || s.contains(" #") || s.ends_with(':') || s.contains('\t'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sort_naturally() {
        let mut keys = vec![
            "v10",
            "v2",
            "b",
            "B",
            "a1",
            "a",
            "_x",
            "x-kubernetes-list-type",
            "xa",
        ];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            keys,
            [
                "_x",
                "B",
                "a",
                "a1",
                "b",
                "v2",
                "v10",
                "x-kubernetes-list-type",
                "xa"
            ]
        );
    }

    #[test]
    fn renders_like_controller_gen() {
        let value = json!({
            "spec": {
                "versions": [{"name": "v1", "served": true, "storage": false}],
                "names": {"shortNames": ["cj"], "kind": "CronJob"},
                "empty": {},
                "none": []
            },
            "apiVersion": "v1",
            "description": "first line\nsecond line",
            "default": "",
            "enum": ["*", "true", "Allow", "123", "{}", "!(has(self.a))", "a: b"]
        });
        let expected = "\
apiVersion: v1
default: \"\"
description: |-
  first line
  second line
enum:
- '*'
- \"true\"
- Allow
- \"123\"
- '{}'
- '!(has(self.a))'
- 'a: b'
spec:
  empty: {}
  names:
    kind: CronJob
    shortNames:
    - cj
  none: []
  versions:
  - name: v1
    served: true
    storage: false
";
        assert_eq!(to_yaml(&value), expected);
    }

    #[test]
    fn documents_start_with_three_dashes() {
        let out = to_documents([&json!({"a": 1}), &json!({"b": [{"c": [1, 2]}]})]);
        assert_eq!(out, "---\na: 1\n---\nb:\n- c:\n  - 1\n  - 2\n");
    }

    #[test]
    fn literal_blocks_keep_their_final_newlines_and_indentation() {
        let out = to_yaml(&json!({"a": {"b": "x\n\ny\n"}}));
        assert_eq!(out, "a:\n  b: |\n    x\n\n    y\n");
        // A space before a line break cannot be written in a literal block.
        assert_eq!(to_yaml(&json!({"a": "x \ny"})), "a: \"x \\ny\"\n");
    }
}

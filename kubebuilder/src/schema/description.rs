//! controller-gen's `crd:maxDescLen`: descriptions longer than the limit are cut to it, then
//! back to the last sentence terminator (Unicode `Sentence_Terminal`), else to the last
//! white space plus `...`, else kept hard-cut plus `...`; a limit of 0 drops them all.
//! Go cuts at a byte offset and may split a character; here the cut moves back to the
//! previous character boundary.

use std::sync::OnceLock;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, JSONSchemaPropsOrStringArray,
};
use regex_syntax::hir::{Class, HirKind};

/// Applies `maxDescLen` to every description in `schema`.
pub fn truncate_descriptions(schema: &mut JSONSchemaProps, max_len: usize) {
    if let Some(description) = schema.description.take() {
        schema.description = match max_len {
            0 => None,
            _ => Some(truncate(description, max_len)),
        };
    }
    for_each_child(schema, &mut |child| truncate_descriptions(child, max_len));
}

fn truncate(description: String, max_len: usize) -> String {
    if description.len() <= max_len {
        return description;
    }
    let mut cut = max_len;
    while !description.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &description[..cut];
    if let Some((at, terminal)) = head
        .char_indices()
        .rev()
        .find(|(_, c)| is_sentence_terminal(*c))
        && at > 0
    {
        return head[..at + terminal.len_utf8()].to_owned();
    }
    if let Some((at, _)) = head.char_indices().rev().find(|(_, c)| c.is_whitespace())
        && at > 0
    {
        return format!("{}...", &head[..at]);
    }
    format!("{head}...")
}

/// Unicode's `Sentence_Terminal` property (Go's `unicode.STerm`), from regex-syntax's tables.
fn is_sentence_terminal(c: char) -> bool {
    static RANGES: OnceLock<Vec<(char, char)>> = OnceLock::new();
    let ranges = RANGES.get_or_init(|| {
        let hir = regex_syntax::parse(r"\p{Sentence_Terminal}").expect("a known Unicode property");
        match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect(),
            other => unreachable!("a property class parses to a class, not {other:?}"),
        }
    });
    ranges
        .iter()
        .any(|(start, end)| (*start..=*end).contains(&c))
}

/// Calls `visit` on every direct sub-schema, as controller-gen's `EditSchema` walks them.
fn for_each_child(schema: &mut JSONSchemaProps, visit: &mut dyn FnMut(&mut JSONSchemaProps)) {
    let maps = [
        schema.properties.as_mut(),
        schema.pattern_properties.as_mut(),
        schema.definitions.as_mut(),
    ];
    for map in maps.into_iter().flatten() {
        map.values_mut().for_each(&mut *visit);
    }
    for list in [
        schema.all_of.as_mut(),
        schema.any_of.as_mut(),
        schema.one_of.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        list.iter_mut().for_each(&mut *visit);
    }
    if let Some(not) = schema.not.as_mut() {
        visit(not);
    }
    match schema.items.as_mut() {
        Some(JSONSchemaPropsOrArray::Schema(item)) => visit(item),
        Some(JSONSchemaPropsOrArray::Schemas(items)) => items.iter_mut().for_each(&mut *visit),
        None => {}
    }
    for or_bool in [
        schema.additional_properties.as_mut(),
        schema.additional_items.as_mut(),
    ]
    .into_iter()
    .flatten()
    {
        if let JSONSchemaPropsOrBool::Schema(inner) = or_bool {
            visit(inner);
        }
    }
    for dependency in schema.dependencies.iter_mut().flat_map(|d| d.values_mut()) {
        if let JSONSchemaPropsOrStringArray::Schema(inner) = dependency {
            visit(inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_back_to_a_sentence_then_a_word_then_hard() {
        assert_eq!(truncate("One. Two three four.".into(), 12), "One.");
        assert_eq!(truncate("One two three".into(), 9), "One two...");
        assert_eq!(truncate("Onetwothree".into(), 5), "Onetw...");
        assert_eq!(truncate("Short.".into(), 6), "Short.");
        // A terminal at the very start does not count (Go: index > 0).
        assert_eq!(truncate("!abc def".into(), 6), "!abc...");
    }

    #[test]
    fn cuts_on_character_boundaries_and_knows_non_ascii_terminals() {
        assert_eq!(truncate("文一。文二文三".into(), 10), "文一。");
        assert_eq!(truncate("éé".into(), 3), "é...");
    }

    #[test]
    fn zero_drops_every_description_in_the_tree() {
        let child = JSONSchemaProps {
            description: Some("child".into()),
            ..Default::default()
        };
        let mut schema = JSONSchemaProps {
            description: Some("root".into()),
            properties: Some([("a".to_owned(), child.clone())].into()),
            items: Some(JSONSchemaPropsOrArray::Schema(Box::new(child))),
            ..Default::default()
        };
        truncate_descriptions(&mut schema, 0);
        assert_eq!(schema.description, None);
        assert_eq!(schema.properties.unwrap()["a"].description, None);
        match schema.items {
            Some(JSONSchemaPropsOrArray::Schema(item)) => assert_eq!(item.description, None),
            _ => unreachable!(),
        }
    }
}

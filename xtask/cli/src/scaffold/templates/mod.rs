//! The scaffolds' templates: Rust string constants with `{{name}}` placeholders, and the one
//! function that fills them in.

pub mod config;
pub mod deploy_image;
pub mod external;
pub mod imported;
pub mod kind;
pub mod workspace;

/// Placeholder values, by name.
#[derive(Clone, Debug, Default)]
pub struct Values(Vec<(&'static str, String)>);

impl Values {
    /// The values with `name` set to `value` (replacing an earlier value of `name`).
    #[must_use]
    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.0.retain(|(existing, _)| *existing != name);
        self.0.push((name, value.into()));
        self
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(candidate, _)| *candidate == name)
            .map(|(_, value)| value.as_str())
    }
}

/// `template` with every `{{name}}` replaced by its value.
///
/// # Panics
/// When `template` names a placeholder `values` lacks: a template and its caller
/// disagree, which the scaffolding tests catch.
pub fn render(template: &str, values: &Values) -> String {
    let mut rendered = String::with_capacity(template.len());
    let mut rest = template;
    while let Some((before, name, after)) = next_placeholder(rest) {
        let value = values
            .get(name)
            .unwrap_or_else(|| panic!("the template placeholder `{name}` has no value"));
        rendered.push_str(before);
        rendered.push_str(value);
        rest = after;
    }
    rendered.push_str(rest);
    rendered
}

/// The first `{{name}}` of `text`: the text before it, the name and the text after it.
fn next_placeholder(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(offset) = text[from..].find("{{") {
        let start = from + offset;
        let name_start = start + 2;
        let name_len = text[name_start..]
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(text.len() - name_start);
        if name_len > 0 && text[name_start + name_len..].starts_with("}}") {
            let end = name_start + name_len;
            return Some((&text[..start], &text[name_start..end], &text[end + 2..]));
        }
        // Not a placeholder (`{{{name}}` has one a brace further on).
        from = start + 1;
    }
    None
}

/// The placeholders left in `text` (none, in anything the scaffolds write).
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some((_, name, after)) = next_placeholder(rest) {
        names.push(name);
        rest = after;
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_and_other_braces_kept() {
        let values = Values::default()
            .with("kind", "Frigate")
            .with("plural", "frigates");
        assert_eq!(
            render(
                "{{kind}}s are {{plural}}: format!(\"{}\", x); {{ not_one }}",
                &values
            ),
            "Frigates are frigates: format!(\"{}\", x); {{ not_one }}"
        );
        assert_eq!(
            placeholders("a {{kind}} b {{x}} {{Not}} {{}}"),
            ["kind", "x"]
        );
        assert_eq!(
            render("use api::{{{kind}}, {{kind}}List};", &values),
            "use api::{Frigate, FrigateList};"
        );
    }

    #[test]
    #[should_panic(expected = "the template placeholder `version` has no value")]
    fn a_placeholder_without_value_is_a_bug() {
        render("{{version}}", &Values::default());
    }
}

//! Doc comments become descriptions as controller-gen extracts Go doc comments: one
//! leading space and trailing white space removed per line, leading and trailing blank
//! lines dropped, runs of blank lines reduced to one, lines starting with `TODO` dropped,
//! and everything from a line starting with `---` on cut (outside fenced code blocks).

use syn::{Attribute, Expr, Lit, Meta};

/// The description from `#[doc = "..."]` attributes (`///` comments).
pub fn description(attrs: &[Attribute]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        let Expr::Lit(lit) = &nv.value else { continue };
        let Lit::Str(text) = &lit.lit else { continue };
        for line in text.value().split('\n') {
            let line = line.strip_prefix(' ').unwrap_or(line);
            lines.push(line.trim_end().to_owned());
        }
    }
    extract(&lines)
}

fn extract(lines: &[String]) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for line in lines {
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence {
            if line.starts_with("TODO") {
                continue;
            }
            if line.starts_with("---") {
                break;
            }
        }
        // Blank-line runs collapse into one.
        if line.is_empty() && out.last().is_none_or(|last| last.is_empty()) {
            continue;
        }
        out.push(line);
    }
    while out.last().is_some_and(|last| last.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(item: &str) -> String {
        let item: syn::ItemStruct = syn::parse_str(item).unwrap();
        description(&item.attrs)
    }

    #[test]
    fn joins_lines_and_keeps_paragraphs() {
        assert_eq!(
            doc("///  Indented\n/// one\n///\n///\n/// two  \nstruct A;"),
            " Indented\none\n\ntwo"
        );
    }

    #[test]
    fn drops_todo_lines_and_cuts_at_three_dashes_outside_fences() {
        assert_eq!(
            doc("/// a\n/// TODO: later\n/// b\n/// ---\n/// hidden\nstruct A;"),
            "a\nb"
        );
        assert_eq!(
            doc("/// ```\n/// ---\n/// ```\n/// c\nstruct A;"),
            "```\n---\n```\nc"
        );
    }

    #[test]
    fn no_docs_is_empty() {
        assert_eq!(doc("struct A;"), "");
        assert_eq!(doc("///\n/// x\n///\nstruct A;"), "x");
    }
}

//! What the cache watches of one kind (controller-runtime's `cache.Options.ByObject`): a
//! label selector, a field selector and the namespaces, each checked when it is given so
//! that a typo is an error at the call, not a watch that fails or silently finds nothing.

use crate::names::{check_dns_label, check_dns_subdomain, check_name_part};

/// The watch of one kind, registered with [`Cache::by_object`](super::Cache::by_object)
/// before the kind's informer starts (controller-runtime's `cache.ByObject`).
///
/// ```
/// # use kubebuilder_runtime::cache::ByObject;
/// let only_app_secrets = ByObject::default()
///     .labels("app.kubernetes.io/name=shop, tier in (web, api)")?
///     .fields("type=Opaque")?
///     .namespaces(["shop", "shop-staging"])?;
/// # Ok::<_, kubebuilder_runtime::cache::ByObjectError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByObject {
    pub(crate) labels: Option<String>,
    pub(crate) fields: Option<String>,
    pub(crate) namespaces: Option<Vec<String>>,
}

/// Why [`ByObject`] or [`Cache::by_object`](super::Cache::by_object) refused its input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ByObjectError {
    /// A label selector that Kubernetes would not parse.
    #[error("the label selector {selector:?} is invalid: {reason}")]
    Labels {
        /// The selector given.
        selector: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A field selector that Kubernetes would not parse.
    #[error("the field selector {selector:?} is invalid: {reason}")]
    Fields {
        /// The selector given.
        selector: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A namespace list that names no namespace, or a name that is not one.
    #[error("the namespaces {namespaces:?} are invalid: {reason}")]
    Namespaces {
        /// The namespaces given.
        namespaces: Vec<String>,
        /// What is wrong with them.
        reason: String,
    },
    /// The kind given by group, version and kind cannot be watched
    /// ([`CacheError::NotServed`](super::CacheError::NotServed)).
    #[error(transparent)]
    Kind(#[from] super::CacheError),
    /// Namespaces given for a kind whose objects live in none.
    #[error("{kind} is cluster-scoped: its objects are in no namespace, so none can be chosen")]
    ClusterScoped {
        /// The kind.
        kind: String,
    },
}

impl ByObject {
    /// Caches only the objects whose labels match `selector`, in Kubernetes' syntax
    /// (`app=web`, `tier!=db`, `env in (a, b)`, `env notin (c)`, `release`, `!canary`,
    /// `replicas>1`, comma-separated; controller-runtime's `ByObject.Label`). The
    /// apiserver filters the watch: objects that do not match never reach the process,
    /// and reads and controllers of the kind see only the matching ones.
    ///
    /// # Errors
    /// When the selector is empty (it would select everything: leave it out) or does not
    /// parse.
    pub fn labels(mut self, selector: &str) -> Result<Self, ByObjectError> {
        check_label_selector(selector).map_err(|reason| ByObjectError::Labels {
            selector: selector.to_owned(),
            reason,
        })?;
        self.labels = Some(selector.trim().to_owned());
        Ok(self)
    }

    /// Caches only the objects whose fields match `selector` (`metadata.name=x`,
    /// `type!=kubernetes.io/tls`, comma-separated; `\` escapes `,`, `=` and `\` in a
    /// value; controller-runtime's `ByObject.Field`). Which fields a kind can be selected
    /// by is the apiserver's to say: an unsupported one fails the kind's watch, and its
    /// reads say why.
    ///
    /// # Errors
    /// When the selector is empty or a term is not `key=value`, `key==value` or
    /// `key!=value`.
    pub fn fields(mut self, selector: &str) -> Result<Self, ByObjectError> {
        check_field_selector(selector).map_err(|reason| ByObjectError::Fields {
            selector: selector.to_owned(),
            reason,
        })?;
        self.fields = Some(selector.trim().to_owned());
        Ok(self)
    }

    /// Caches the kind in these namespaces only, one watch each, whatever `--namespace`
    /// says (controller-runtime's `ByObject.Namespaces`). A controller scoped to a
    /// namespace outside them sees no object of the kind; see
    /// [`Cache::by_object`](super::Cache::by_object).
    ///
    /// # Errors
    /// When no namespace is given, or one is not a valid namespace name.
    pub fn namespaces<I>(mut self, namespaces: I) -> Result<Self, ByObjectError>
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        let mut namespaces: Vec<String> = namespaces.into_iter().map(Into::into).collect();
        let invalid = |reason: String| ByObjectError::Namespaces {
            namespaces: namespaces.clone(),
            reason,
        };
        if namespaces.is_empty() {
            return Err(invalid(
                "no namespace given (leave the namespaces out to follow --namespace)".into(),
            ));
        }
        if let Some(reason) = namespaces
            .iter()
            .find_map(|name| check_dns_label(name).err())
        {
            return Err(invalid(reason));
        }
        namespaces.sort();
        namespaces.dedup();
        self.namespaces = Some(namespaces);
        Ok(self)
    }
}

/// Checks a label selector as Kubernetes' `labels.Parse` reads it.
fn check_label_selector(selector: &str) -> Result<(), String> {
    if selector.trim().is_empty() {
        return Err("it is empty, which selects every object; leave the selector out".into());
    }
    split_outside_parentheses(selector)?
        .into_iter()
        .try_for_each(check_label_requirement)
}

/// The requirements of a selector: split at the commas that are not inside a value set.
fn split_outside_parentheses(selector: &str) -> Result<Vec<&str>, String> {
    let mut requirements = Vec::new();
    let (mut depth, mut start) = (0_u32, 0);
    for (at, character) in selector.char_indices() {
        match character {
            '(' if depth == 0 => depth = 1,
            '(' => return Err("a value set inside a value set".into()),
            ')' if depth == 0 => return Err("a `)` with no `(`".into()),
            ')' => depth = 0,
            ',' if depth == 0 => {
                requirements.push(&selector[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err("a `(` with no `)`".into());
    }
    requirements.push(&selector[start..]);
    Ok(requirements)
}

/// Checks one requirement: `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (..)`,
/// `key notin (..)`, `key>n` or `key<n`.
fn check_label_requirement(requirement: &str) -> Result<(), String> {
    let requirement = requirement.trim();
    if requirement.is_empty() {
        return Err("an empty requirement (two commas in a row, or one at an end)".into());
    }
    if let Some(key) = requirement.strip_prefix('!') {
        return check_label_key(key.trim());
    }
    let key_end = requirement
        .find(|c: char| c.is_whitespace() || "=!<>(".contains(c))
        .unwrap_or(requirement.len());
    let (key, rest) = requirement.split_at(key_end);
    check_label_key(key)?;
    let rest = rest.trim_start();
    if rest.is_empty() {
        return Ok(());
    }
    if let Some(value) = ["!=", "==", "="]
        .iter()
        .find_map(|operator| rest.strip_prefix(operator))
    {
        return check_label_value(value.trim());
    }
    if let Some(number) = rest.strip_prefix(['<', '>']) {
        return number.trim().parse::<i64>().map(drop).map_err(|_| {
            format!(
                "{key}: `<` and `>` compare with an integer, not {:?}",
                number.trim()
            )
        });
    }
    for operator in ["notin", "in"] {
        if let Some(set) = rest.strip_prefix(operator)
            && set.starts_with(|c: char| c.is_whitespace() || c == '(')
        {
            return check_value_set(key, set.trim());
        }
    }
    Err(format!(
        "after the key {key:?}, {rest:?} is not one of =, ==, !=, in, notin, <, >"
    ))
}

/// Checks `(a, b, ...)`: one value at least.
fn check_value_set(key: &str, set: &str) -> Result<(), String> {
    let values = set
        .strip_prefix('(')
        .and_then(|set| set.strip_suffix(')'))
        .ok_or_else(|| format!("{key}: in and notin take a set of values in parentheses"))?;
    if values.trim().is_empty() {
        return Err(format!("{key}: the set of values is empty"));
    }
    values
        .split(',')
        .try_for_each(|value| check_label_value(value.trim()))
}

/// A label key: a name, optionally prefixed by a DNS subdomain and `/`.
fn check_label_key(key: &str) -> Result<(), String> {
    let name = match key.split_once('/') {
        Some((prefix, name)) => {
            check_dns_subdomain(prefix).map_err(|reason| format!("the key {key:?}: {reason}"))?;
            name
        }
        None => key,
    };
    if name.is_empty() {
        return Err(format!("the key {key:?} has no name"));
    }
    check_name_part(name).map_err(|reason| format!("the key {key:?}: {reason}"))
}

/// A label value: empty, or a label name.
fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    check_name_part(value).map_err(|reason| format!("the value {value:?}: {reason}"))
}

/// Checks a field selector as Kubernetes' `fields.ParseSelector` reads it.
fn check_field_selector(selector: &str) -> Result<(), String> {
    if selector.trim().is_empty() {
        return Err("it is empty, which selects every object; leave the selector out".into());
    }
    split_unescaped_commas(selector)?
        .into_iter()
        .try_for_each(check_field_term)
}

/// The terms of a field selector: split at the commas no `\` escapes; an escape of
/// anything but `\`, `,` and `=` is an error.
fn split_unescaped_commas(selector: &str) -> Result<Vec<&str>, String> {
    let mut terms = Vec::new();
    let mut start = 0;
    let mut characters = selector.char_indices();
    while let Some((at, character)) = characters.next() {
        match character {
            '\\' => match characters.next() {
                Some((_, '\\' | ',' | '=')) => {}
                Some((_, other)) => return Err(format!("`\\{other}` escapes nothing")),
                None => return Err("it ends with a lone `\\`".into()),
            },
            ',' => {
                terms.push(&selector[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    terms.push(&selector[start..]);
    Ok(terms)
}

/// One term: `key=value`, `key==value` or `key!=value`; the key a dotted path.
fn check_field_term(term: &str) -> Result<(), String> {
    let term = term.trim();
    let key_end = term
        .find(['=', '!'])
        .ok_or_else(|| format!("{term:?} is not key=value, key==value or key!=value"))?;
    let (key, rest) = term.split_at(key_end);
    if !rest.starts_with('=') && !rest.starts_with("!=") {
        return Err(format!(
            "{term:?} is not key=value, key==value or key!=value"
        ));
    }
    let key_is_a_path = !key.is_empty()
        && key.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    if key_is_a_path {
        Ok(())
    } else {
        Err(format!(
            "the key {key:?} is not a field path such as metadata.name"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_selectors_that_kubernetes_parses_are_taken() {
        for selector in [
            "app=web",
            "app==web",
            "app!=web",
            "app.kubernetes.io/name=shop",
            "tier in (web, api),env notin(dev)",
            " release , !canary ",
            "replicas>1,replicas < 10",
            "empty=",
        ] {
            assert_eq!(
                ByObject::default()
                    .labels(selector)
                    .unwrap()
                    .labels
                    .as_deref(),
                Some(selector.trim()),
                "{selector}"
            );
        }
    }

    #[test]
    fn a_bad_label_selector_is_refused_saying_what_is_wrong() {
        for (selector, reason) in [
            (
                "",
                "it is empty, which selects every object; leave the selector out",
            ),
            (
                "app=web,,tier=db",
                "an empty requirement (two commas in a row, or one at an end)",
            ),
            (
                "app=web poo",
                "the value \"web poo\": must be letters, digits, `-`, `_` or `.`, beginning and ending with a letter or digit",
            ),
            ("app in (web", "a `(` with no `)`"),
            ("app in ()", "app: the set of values is empty"),
            (
                "app in web",
                "app: in and notin take a set of values in parentheses",
            ),
            (
                "app~web",
                "the key \"app~web\": must be letters, digits, `-`, `_` or `.`, beginning and ending with a letter or digit",
            ),
            (
                "Example.com/app=x",
                "the key \"Example.com/app\": \"Example\" is not a DNS label (1 to 63 lowercase letters, digits or `-`, beginning and ending with a letter or digit)",
            ),
            ("example.com/=x", "the key \"example.com/\" has no name"),
            (
                "replicas>one",
                "replicas: `<` and `>` compare with an integer, not \"one\"",
            ),
            (
                "app ~= web",
                "after the key \"app\", \"~= web\" is not one of =, ==, !=, in, notin, <, >",
            ),
        ] {
            let error = ByObject::default().labels(selector).unwrap_err();
            assert_eq!(
                error,
                ByObjectError::Labels {
                    selector: selector.into(),
                    reason: reason.into()
                },
                "{selector}"
            );
        }
        let long = format!("app={}", "x".repeat(64));
        assert!(
            ByObject::default()
                .labels(&long)
                .unwrap_err()
                .to_string()
                .ends_with(": longer than 63 characters")
        );
    }

    #[test]
    fn field_selectors_are_key_operator_value_terms_with_escapes() {
        for selector in [
            "metadata.name=x",
            "metadata.name==x,type!=kubernetes.io/tls",
            "metadata.name=a\\,b",
            "status.phase=",
        ] {
            assert!(ByObject::default().fields(selector).is_ok(), "{selector}");
        }
        for (selector, reason) in [
            (
                "",
                "it is empty, which selects every object; leave the selector out",
            ),
            (
                "metadata.name",
                "\"metadata.name\" is not key=value, key==value or key!=value",
            ),
            (
                "=x",
                "the key \"\" is not a field path such as metadata.name",
            ),
            (
                "metadata..name=x",
                "the key \"metadata..name\" is not a field path such as metadata.name",
            ),
            (
                "a!b=c",
                "\"a!b=c\" is not key=value, key==value or key!=value",
            ),
            ("name=a\\b", "`\\b` escapes nothing"),
            ("name=a\\", "it ends with a lone `\\`"),
        ] {
            assert_eq!(
                ByObject::default().fields(selector).unwrap_err(),
                ByObjectError::Fields {
                    selector: selector.into(),
                    reason: reason.into()
                },
                "{selector}"
            );
        }
    }

    #[test]
    fn namespaces_must_be_namespace_names_and_at_least_one() {
        let options = ByObject::default().namespaces(["b", "a", "b"]).unwrap();
        assert_eq!(options.namespaces, Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            ByObject::default()
                .namespaces(Vec::<String>::new())
                .unwrap_err()
                .to_string(),
            "the namespaces [] are invalid: no namespace given (leave the namespaces out to follow --namespace)"
        );
        assert_eq!(
            ByObject::default()
                .namespaces(["shop", "Shop"])
                .unwrap_err()
                .to_string(),
            "the namespaces [\"shop\", \"Shop\"] are invalid: \"Shop\" is not a DNS label (1 to 63 lowercase letters, digits or `-`, beginning and ending with a letter or digit)"
        );
    }
}

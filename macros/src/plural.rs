//! The default plural of a kind, as controller-gen derives it (`flect.Pluralize`, lower-cased)
//! for the common English patterns. Irregular words beyond these take `resource(path = ...)`.

/// `CronJob` → `cronjobs`, `Policy` → `policies`, `Ingress` → `ingresses`.
pub fn plural(kind: &str) -> String {
    let word = kind.to_lowercase();
    const IRREGULAR: &[(&str, &str)] = &[
        ("person", "people"),
        ("child", "children"),
        ("man", "men"),
        ("woman", "women"),
        ("mouse", "mice"),
        ("goose", "geese"),
        ("foot", "feet"),
        ("tooth", "teeth"),
        ("ox", "oxen"),
        ("quiz", "quizzes"),
    ];
    const UNCOUNTABLE: &[&str] = &[
        "equipment",
        "information",
        "rice",
        "money",
        "species",
        "series",
        "fish",
        "sheep",
        "deer",
        "news",
        "metadata",
    ];
    if let Some((_, plural)) = IRREGULAR.iter().find(|(singular, _)| *singular == word) {
        return (*plural).to_owned();
    }
    if UNCOUNTABLE.contains(&word.as_str()) {
        return word;
    }
    let consonant_before = |suffix_len: usize| {
        word[..word.len() - suffix_len]
            .chars()
            .last()
            .is_some_and(|c| !"aeiou".contains(c))
    };
    if word.ends_with('y') && consonant_before(1) {
        return format!("{}ies", &word[..word.len() - 1]);
    }
    if word.ends_with("is") {
        return format!("{}es", &word[..word.len() - 2]);
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| word.ends_with(end))
    {
        return format!("{word}es");
    }
    if let Some(stem) = word.strip_suffix("fe").or_else(|| word.strip_suffix("lf")) {
        let stem = if word.ends_with("lf") {
            format!("{stem}l")
        } else {
            stem.to_owned()
        };
        return format!("{stem}ves");
    }
    format!("{word}s")
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn pluralizes_like_flect_for_common_kinds() {
        for (kind, expected) in [
            ("CronJob", "cronjobs"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Batch", "batches"),
            ("Analysis", "analyses"),
            ("Shelf", "shelves"),
            ("Knife", "knives"),
            ("Person", "people"),
            ("Sheep", "sheep"),
        ] {
            assert_eq!(plural(kind), expected, "{kind}");
        }
    }
}

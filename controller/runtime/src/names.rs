//! The shapes of names the apiserver checks, checked before anything is sent.

/// The name part of a Kubernetes qualified name (a label key's or a finalizer's, after any
/// prefix), which a label value also is: at most 63 characters, alphanumeric at both ends,
/// `-`, `_`, `.` inside.
pub(crate) fn check_name_part(name: &str) -> Result<(), String> {
    if name.len() > 63 {
        return Err("longer than 63 characters".into());
    }
    let alphanumeric_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let allowed = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if alphanumeric_ends && allowed {
        Ok(())
    } else {
        Err(
            "must be letters, digits, `-`, `_` or `.`, beginning and ending with a letter or digit"
                .into(),
        )
    }
}

/// A DNS subdomain (RFC 1123): dot-separated labels, at most 253 characters.
pub(crate) fn check_dns_subdomain(name: &str) -> Result<(), String> {
    if name.len() > 253 {
        return Err(format!("{name:?} is longer than 253 characters"));
    }
    name.split('.').try_for_each(check_dns_label)
}

/// A DNS label (RFC 1123), as namespace names are: at most 63 lowercase letters, digits
/// and `-`, alphanumeric at both ends.
pub(crate) fn check_dns_label(name: &str) -> Result<(), String> {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let valid = (1..=63).contains(&name.len())
        && name.starts_with(alphanumeric)
        && name.ends_with(alphanumeric)
        && name.chars().all(|c| alphanumeric(c) || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a DNS label (1 to 63 lowercase letters, digits or `-`, beginning and ending with a letter or digit)"
        ))
    }
}

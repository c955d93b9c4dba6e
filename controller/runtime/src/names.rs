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

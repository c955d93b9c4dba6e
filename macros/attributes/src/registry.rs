//! The registry test: every CRD marker the pinned controller-gen registers has a Rust spelling
//! here (a row of `kubebuilder-markers`, an argument of `#[kubebuilder::resource]`, or
//! `#[kubebuilder::skip]`), or a row of `tests/conformance/DIFFERENCES.md` saying why not;
//! every marker we claim to spell is one controller-gen registers; and the README's marker
//! tables name each of them.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// A marker and what it describes (`package`, `type` or `field`), as controller-gen prints
/// its registry.
type Registered = (String, String);

/// `controller-gen crd -www`: a header line `+<name> <target>` per marker and target.
fn controller_gen_registry() -> BTreeSet<Registered> {
    let binary: PathBuf = std::env::var_os("CONTROLLER_GEN")
        .filter(|path| !path.is_empty())
        .expect(
            "CONTROLLER_GEN is not set: run `cargo xtask test`, or export the path of \
             the pinned controller-gen (`cargo xtask test` installs it)",
        )
        .into();
    let output = Command::new(&binary)
        .args(["crd", "-www"])
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", binary.display()));
    assert!(
        output.status.success(),
        "controller-gen crd -www failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // controller-gen prints its help on stderr.
    let help = String::from_utf8(output.stderr).expect("controller-gen prints UTF-8");
    let registry: BTreeSet<Registered> = help
        .lines()
        .filter_map(|line| line.strip_prefix('+'))
        .filter_map(|line| line.split_once(' '))
        .map(|(name, target)| (name.to_owned(), target.trim().to_owned()))
        .collect();
    assert!(
        registry.len() > 100,
        "controller-gen's registry reads as {} markers: the help format changed?",
        registry.len()
    );
    registry
}

/// Every marker we spell, with its target.
fn spelled() -> BTreeSet<Registered> {
    crate::spellings::all()
        .into_iter()
        .map(|spelling| (spelling.go, spelling.target.as_str().to_owned()))
        .collect()
}

/// The rows `| M<n> | `+marker` | target | reason |` of DIFFERENCES.md.
fn excused() -> Vec<(String, Registered)> {
    include_str!("../../tests/conformance/DIFFERENCES.md")
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let [id, marker, target, reason] = cells[..] else {
                return None;
            };
            let is_row =
                id.len() > 1 && id.starts_with('M') && id[1..].chars().all(|c| c.is_ascii_digit());
            if !is_row {
                return None;
            }
            assert!(!reason.is_empty(), "DIFFERENCES.md row {id} has no reason");
            let marker = marker.trim_matches('`').trim_start_matches('+');
            Some((id.to_owned(), (marker.to_owned(), target.to_owned())))
        })
        .collect()
}

#[test]
fn every_controller_gen_crd_marker_has_a_rust_spelling_or_a_listed_reason() {
    let registry = controller_gen_registry();
    let spelled = spelled();
    let excused = excused();
    let mut report = Vec::new();
    for marker in &registry {
        let excuse = excused.iter().find(|(_, excused)| excused == marker);
        match (spelled.contains(marker), excuse) {
            (false, None) => report.push(format!(
                "+{} ({}) has no Rust spelling and no row in DIFFERENCES.md",
                marker.0, marker.1
            )),
            (true, Some((id, _))) => report.push(format!(
                "+{} ({}) is spelled, yet {id} in DIFFERENCES.md excuses it: remove the row",
                marker.0, marker.1
            )),
            _ => {}
        }
    }
    for marker in spelled.difference(&registry) {
        report.push(format!(
            "we claim to spell +{} ({}), which controller-gen does not register",
            marker.0, marker.1
        ));
    }
    for (id, marker) in &excused {
        if !registry.contains(marker) {
            report.push(format!(
                "{id} in DIFFERENCES.md excuses +{} ({}), which controller-gen does not register",
                marker.0, marker.1
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The README's marker tables list every controller-gen marker we spell.
#[test]
fn the_readme_lists_every_spelled_marker() {
    let readme = include_str!("../../../README.md");
    let missing: Vec<String> = spelled()
        .into_iter()
        .map(|(name, _)| name)
        // The `items:` twins are one row, `+kubebuilder:validation:items:<X>`.
        .filter(|name| !name.contains(":items:"))
        .filter(|name| !readme.contains(&format!("+{name}")))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's marker tables lack: {}",
        missing.join(", ")
    );
}

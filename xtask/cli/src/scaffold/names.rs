//! The arguments `init`, `create api` and `create webhook` validate, and the names a kind
//! gets in the scaffolded code and files.

pub mod core_kinds;

use anyhow::{Result, bail};

pub use kubebuilder_plural::plural;

/// One kind of the project, as the scaffolds name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The short group (`ship`); the API group is `<group>.<domain>`.
    pub group: String,
    /// The project's domain (`example.com`).
    pub domain: String,
    /// The API version (`v1`).
    pub version: String,
    /// UpperCamelCase (`Frigate`).
    pub kind: String,
    /// The resource name (`frigates`).
    pub plural: String,
    /// `false` for a cluster-scoped kind.
    pub namespaced: bool,
}

/// The name of a kind's sample in `config/samples`, as kubebuilder names it:
/// `<group>_<version>_<kind in lower case>.yaml` (`group` the short group).
pub fn sample_name(group: &str, version: &str, kind: &str) -> String {
    format!("{group}_{version}_{}.yaml", kind.to_lowercase())
}

/// The webhook path kubebuilder derives for `kind` of API group `api_group`:
/// `/<mutate|validate>-<group with dashes>-<version>-<kind in lower case>`.
pub fn webhook_path(mutating: bool, api_group: &str, version: &str, kind: &str) -> String {
    format!(
        "/{}-{}-{version}-{}",
        if mutating { "mutate" } else { "validate" },
        api_group.replace('.', "-"),
        kind.to_lowercase()
    )
}

impl Kind {
    /// The API group: `ship.example.com`.
    pub fn full_group(&self) -> String {
        format!("{}.{}", self.group, self.domain)
    }

    /// The kind's Rust module and file stem: `frigate`, `network_policy`.
    pub fn snake(&self) -> String {
        snake_case(&self.kind)
    }

    /// The kind in lower case, as kubebuilder names files and webhooks: `networkpolicy`.
    pub fn lower(&self) -> String {
        self.kind.to_lowercase()
    }

    /// The name of the kind's sample in `config/samples`: `<group>_<version>_<kind>.yaml`.
    pub fn sample_name(&self) -> String {
        sample_name(&self.group, &self.version, &self.kind)
    }

    /// The webhook path kubebuilder derives ([`webhook_path`]).
    pub fn webhook_path(&self, mutating: bool) -> String {
        webhook_path(mutating, &self.full_group(), &self.version, &self.kind)
    }
}

/// A DNS-1123 label: lower-case letters, digits and `-`, starting and ending with a letter
/// or digit, at most 63 characters.
fn is_dns_label(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 63
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// A DNS-1123 subdomain: DNS-1123 labels joined by dots, at most 253 characters.
fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= 253 && text.split('.').all(is_dns_label)
}

const LABEL_RULE: &str =
    "lower-case letters, digits and '-', starting and ending with a letter or digit";

/// `--domain`: the suffix of every API group of the project.
pub fn validate_domain(domain: &str) -> Result<()> {
    if !is_dns_subdomain(domain) {
        bail!(
            "invalid --domain {domain:?}: a domain must be a DNS-1123 subdomain \
             (dot-separated labels of {LABEL_RULE})"
        );
    }
    Ok(())
}

/// `--name` of `init`: the project's name prefixes its namespace and objects.
pub fn validate_project_name(name: &str) -> Result<()> {
    if !is_dns_label(name) {
        bail!(
            "invalid project name {name:?}: it must be a DNS-1123 label ({LABEL_RULE}, \
             at most 63 characters); pass --name"
        );
    }
    Ok(())
}

/// `--group`: with the domain, it must make a DNS-1123 subdomain.
pub fn validate_group(group: &str, domain: &str) -> Result<()> {
    if !is_dns_subdomain(group) {
        bail!(
            "invalid --group {group:?}: a group must be a DNS-1123 subdomain \
             (dot-separated labels of {LABEL_RULE})"
        );
    }
    let full = format!("{group}.{domain}");
    if full.len() > 253 {
        bail!("invalid --group {group:?}: the API group {full} is longer than 253 characters");
    }
    Ok(())
}

/// `--version`: `v<N>`, optionally followed by `alpha<N>` or `beta<N>` (`v1`, `v1beta1`,
/// `v2alpha3`): kubebuilder's rule, the versions Kubernetes sorts by maturity.
pub fn validate_version(version: &str) -> Result<()> {
    let is_number = |digits: &str| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    let valid = version.strip_prefix('v').is_some_and(|rest| {
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (major, qualifier) = rest.split_at(digits_end);
        is_number(major)
            && (qualifier.is_empty()
                || ["alpha", "beta"]
                    .iter()
                    .any(|stage| qualifier.strip_prefix(stage).is_some_and(is_number)))
    });
    if !valid {
        bail!(
            "invalid --version {version:?}: a version is v<N>, optionally followed by alpha<N> \
             or beta<N> (v1, v1beta1, v2alpha3)"
        );
    }
    Ok(())
}

/// Names of the scaffolded code that a kind must not take, or the code would not compile:
/// the types the templates name (theirs and the prelude's)...
const TAKEN_TYPE_NAMES: &[&str] = &[
    "Action",
    "AdmissionContext",
    "Api",
    "Arc",
    "BindAddress",
    "Box",
    "Client",
    "Condition",
    "Controller",
    "ControllerContext",
    "Default",
    "Defaulter",
    "Duration",
    "Err",
    "Error",
    "FieldError",
    "FieldPath",
    "Instant",
    "LoopbackRegistration",
    "Manager",
    "ManagerArgs",
    "None",
    "Ok",
    "Option",
    "PostParams",
    "Reconciler",
    "Result",
    "Some",
    "String",
    "Time",
    "Timestamp",
    "Validator",
    "Vec",
    "Warnings",
    "Webhooks",
];
/// ...and the modules and locals the kind's own module or variable would clash with.
pub(crate) const TAKEN_SNAKE_NAMES: &[&str] = &[
    "admission",
    "api",
    "changed",
    "conditions",
    "controller",
    "errors",
    "reconciler",
    "status",
];

/// Rust's keywords (strict, reserved and edition-2024 ones): no module may be named so.
pub(crate) const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// `--kind`: UpperCamelCase ASCII (a Rust type name whose lower case is a DNS-1035 label),
/// and not a name the scaffolded code already uses.
pub fn validate_kind(kind: &str) -> Result<()> {
    let camel = kind.len() <= 63
        && kind.starts_with(|c: char| c.is_ascii_uppercase())
        && kind.bytes().all(|b| b.is_ascii_alphanumeric());
    if !camel {
        bail!(
            "invalid --kind {kind:?}: a kind is UpperCamelCase: an upper-case ASCII letter, \
             then ASCII letters and digits, at most 63 characters (CronJob, Frigate)"
        );
    }
    let module = snake_case(kind);
    if RUST_KEYWORDS.contains(&module.as_str()) {
        bail!("invalid --kind {kind:?}: its module `{module}` would be a Rust keyword");
    }
    if TAKEN_TYPE_NAMES.contains(&kind) || TAKEN_SNAKE_NAMES.contains(&module.as_str()) {
        bail!(
            "invalid --kind {kind:?}: the scaffolded code uses that name itself; choose \
             another kind"
        );
    }
    Ok(())
}

/// `--external-api-domain`: the domain of another project's API group, which is
/// `<group>.<domain>`.
pub fn validate_external_domain(domain: &str, group: &str) -> Result<()> {
    if !is_dns_subdomain(domain) {
        bail!(
            "invalid --external-api-domain {domain:?}: a domain must be a DNS-1123 subdomain \
             (dot-separated labels of {LABEL_RULE})"
        );
    }
    let full = format!("{group}.{domain}");
    if full.len() > 253 {
        bail!(
            "invalid --external-api-domain {domain:?}: the API group {full} is longer than 253 characters"
        );
    }
    Ok(())
}

/// `--external-api-path`: a Rust path from a crate name (`other_crate::v1`), identifiers
/// joined by `::`; no `crate`, `self` or `super`, which would mean another crate in each
/// file the path is written in.
pub fn validate_rust_path(path: &str) -> Result<()> {
    let problem = path.split("::").find_map(|segment| {
        let identifier = segment
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            && segment != "_";
        if !identifier {
            Some(format!("{segment:?} is not a Rust identifier"))
        } else if RUST_KEYWORDS.contains(&segment) {
            Some(format!("`{segment}` is a Rust keyword"))
        } else {
            None
        }
    });
    if let Some(problem) = problem {
        bail!(
            "invalid --external-api-path {path:?}: {problem}; the path is the Rust module of \
             the type, from the crate's name (`other_crate::v1`; crate `other-crate` is \
             `other_crate` in Rust)"
        );
    }
    Ok(())
}

/// `--plural`: the resource name, a DNS-1123 label.
pub fn validate_plural(plural: &str) -> Result<()> {
    if !is_dns_label(plural) {
        bail!("invalid --plural {plural:?}: a resource name is a DNS-1123 label ({LABEL_RULE})");
    }
    Ok(())
}

/// `CronJob` → `cron_job`, `DNSRecord` → `dns_record`, `V1Policy` → `v1_policy`: a word
/// starts at an upper-case letter after a lower-case letter or digit, and at the last
/// capital of a run of capitals followed by a lower-case letter.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut snake = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let previous = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if previous.is_ascii_lowercase()
                || previous.is_ascii_digit()
                || (previous.is_ascii_uppercase() && next_is_lower)
            {
                snake.push('_');
            }
        }
        snake.push(c.to_ascii_lowercase());
    }
    snake
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(result: Result<()>) -> String {
        result.unwrap_err().to_string()
    }

    #[test]
    fn kinds_become_snake_case_module_names() {
        for (kind, snake) in [
            ("Frigate", "frigate"),
            ("CronJob", "cron_job"),
            ("NetworkPolicy", "network_policy"),
            ("DNSRecord", "dns_record"),
            ("HTTPSProxy", "https_proxy"),
            ("V1Policy", "v1_policy"),
            ("Policy2", "policy2"),
            ("ID", "id"),
        ] {
            assert_eq!(snake_case(kind), snake, "{kind}");
        }
    }

    #[test]
    fn plurals_are_the_macros_plurals() {
        // The same function the resource attribute uses, so RBAC rules and CRD agree.
        assert_eq!(plural("Frigate"), "frigates");
        assert_eq!(plural("Policy"), "policies");
        assert_eq!(plural("Gizmo"), "gizmoes");
    }

    #[test]
    fn webhook_paths_follow_kubebuilder() {
        let kind = Kind {
            group: "batch".into(),
            domain: "tutorial.kubebuilder.io".into(),
            version: "v1".into(),
            kind: "CronJob".into(),
            plural: "cronjobs".into(),
            namespaced: true,
        };
        assert_eq!(kind.full_group(), "batch.tutorial.kubebuilder.io");
        assert_eq!(
            kind.webhook_path(true),
            "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
        assert_eq!(
            kind.webhook_path(false),
            "/validate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
    }

    #[test]
    fn groups_are_dns_subdomains() {
        for group in ["ship", "ship.fleet", "a-1", "x"] {
            validate_group(group, "example.com").unwrap();
        }
        for group in [
            "",
            "Ship",
            "ship_yard",
            "-ship",
            "ship-",
            "ship..x",
            ".ship",
            "sh!p",
        ] {
            assert!(
                error(validate_group(group, "example.com")).starts_with(&format!(
                    "invalid --group {group:?}: a group must be a DNS-1123 subdomain"
                )),
                "{group:?}"
            );
        }
        let long = "a".repeat(60);
        let group = [long.as_str(); 4].join(".");
        assert!(
            error(validate_group(&group, "example.com")).ends_with("is longer than 253 characters")
        );
    }

    #[test]
    fn versions_are_kubernetes_versions() {
        for version in ["v1", "v1beta1", "v2alpha3", "v10", "v1beta12", "v0"] {
            validate_version(version).unwrap();
        }
        for version in [
            "",
            "1",
            "v",
            "V1",
            "v1beta",
            "v1gamma1",
            "v1.2",
            "v1-beta1",
            "v1alpha1beta1",
            "v1 ",
        ] {
            assert!(
                error(validate_version(version))
                    .starts_with(&format!("invalid --version {version:?}: a version is v<N>")),
                "{version:?}"
            );
        }
    }

    #[test]
    fn kinds_are_upper_camel_case_and_free() {
        for kind in ["Frigate", "CronJob", "DNSRecord", "V1"] {
            validate_kind(kind).unwrap();
        }
        for kind in [
            "",
            "frigate",
            "Frigate_Class",
            "Frigate-Class",
            "Frégate",
            "1Frigate",
        ] {
            assert!(
                error(validate_kind(kind)).starts_with(&format!(
                    "invalid --kind {kind:?}: a kind is UpperCamelCase"
                )),
                "{kind:?}"
            );
        }
        assert_eq!(
            error(validate_kind("Type")),
            "invalid --kind \"Type\": its module `type` would be a Rust keyword"
        );
        for taken in [
            "Reconciler",
            "Error",
            "Condition",
            "Status",
            "Api",
            "Option",
            "Changed",
        ] {
            assert!(
                error(validate_kind(taken))
                    .ends_with("the scaffolded code uses that name itself; choose another kind"),
                "{taken}"
            );
        }
    }

    #[test]
    fn external_api_paths_are_rust_paths_from_a_crate() {
        for path in [
            "other_crate::v1",
            "widgets",
            "k8s_openapi::api::apps::v1",
            "_private::V2",
        ] {
            validate_rust_path(path).unwrap();
        }
        for (path, problem) in [
            ("", "\"\" is not a Rust identifier"),
            (
                "other-crate::v1",
                "\"other-crate\" is not a Rust identifier",
            ),
            ("other::::v1", "\"\" is not a Rust identifier"),
            ("::other::v1", "\"\" is not a Rust identifier"),
            ("other::1v", "\"1v\" is not a Rust identifier"),
            ("self::v1", "`self` is a Rust keyword"),
            ("other::type", "`type` is a Rust keyword"),
        ] {
            assert!(
                error(validate_rust_path(path)).starts_with(&format!(
                    "invalid --external-api-path {path:?}: {problem}; "
                )),
                "{path:?}: {}",
                error(validate_rust_path(path))
            );
        }
        validate_external_domain("cert-manager.io", "certmanager").unwrap();
        assert!(
            error(validate_external_domain("Cert.io", "x"))
                .starts_with("invalid --external-api-domain")
        );
    }

    #[test]
    fn domains_plurals_and_project_names_are_dns_names() {
        validate_domain("tutorial.kubebuilder.io").unwrap();
        assert!(error(validate_domain("Example.COM")).starts_with("invalid --domain"));
        validate_plural("frigates").unwrap();
        assert!(error(validate_plural("Frigates")).starts_with("invalid --plural"));
        validate_project_name("my-operator").unwrap();
        assert!(error(validate_project_name("my.operator")).starts_with("invalid project name"));
        assert!(error(validate_project_name(&"a".repeat(64))).starts_with("invalid project name"));
    }
}

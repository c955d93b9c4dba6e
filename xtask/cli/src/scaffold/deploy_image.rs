//! The deploy-image/v1-alpha plugin of `create api` (kubebuilder's `--plugins
//! deploy-image/v1-alpha`): a new kind whose controller runs a container image (the
//! operand) as a Deployment of the `size` its objects ask for, kubebuilder's Getting
//! Started operator. Its files take the place of the kind's usual ones (see
//! [`templates::deploy_image`]); besides them it sets the image in the manager's
//! environment (`config/manager/manager.yaml`) and records itself in PROJECT's `plugins`.

use anyhow::{Context as _, Result, bail};

use super::create_api::{self, KindTemplates};
use super::layout::KindLayout;
use super::names::Kind;
use super::plan::Plan;
use super::project::{DeployImageOptions, DeployImageResource, Project};
use super::templates::{self, Values, deploy_image as template};

/// The manifest of the manager, whose container gets the image's environment variable.
const MANAGER_YAML: &str = "config/manager/manager.yaml";

/// The plugins `create api --plugins` takes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plugin {
    /// A controller that runs `--image` as a Deployment (kubebuilder's deploy-image plugin).
    #[value(
        name = "deploy-image/v1-alpha",
        alias = "deploy-image.kubebuilder-rs/v1-alpha"
    )]
    DeployImage,
}

/// The options of `create api` that choose a plugin and configure it.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PluginArgs {
    /// Scaffold the kind with a plugin: `deploy-image/v1-alpha`, a controller that runs
    /// `--image` as a Deployment of the kind's `size` (kubebuilder's Getting Started
    /// operator).
    #[arg(long, value_name = "PLUGIN", requires = "image")]
    pub plugins: Option<Plugin>,
    /// deploy-image: the operand's container image (`memcached:1.6.26-alpine3.19`), which
    /// the manager's environment variable `<KIND>_IMAGE` passes to the controller.
    #[arg(long, requires = "plugins")]
    pub image: Option<String>,
    /// deploy-image: the container's command and its arguments, separated by commas
    /// (`memcached,--memory-limit=64,-o,modern,-v`); the image's own without it.
    #[arg(long, value_name = "COMMAND", requires = "plugins")]
    pub image_container_command: Option<String>,
    /// deploy-image: the port the container listens on, which becomes the kind's
    /// `containerPort` field.
    #[arg(long, value_name = "PORT", requires = "plugins",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub image_container_port: Option<u16>,
    /// deploy-image: the user ID the container runs as (`securityContext.runAsUser`); the
    /// image's own, which must not be root, without it.
    #[arg(long, value_name = "UID", requires = "plugins", allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(0..))]
    pub run_as_user: Option<i64>,
}

/// The container the plugin's controller runs: its options, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    image: String,
    /// `--image-container-command` as given, and split into its arguments.
    command: Option<(String, Vec<String>)>,
    port: Option<u16>,
    run_as_user: Option<i64>,
}

impl PluginArgs {
    /// The operand to scaffold a controller for, if the plugin is asked for; an image that
    /// is no image reference or an empty command is an error.
    pub fn operand(&self) -> Result<Option<Operand>> {
        let Some(Plugin::DeployImage) = self.plugins else {
            return Ok(None);
        };
        let image = self
            .image
            .clone()
            .context("--plugins deploy-image/v1-alpha needs --image")?;
        validate_image(&image)?;
        let command = match &self.image_container_command {
            Some(given) => Some((given.clone(), split_command(given)?)),
            None => None,
        };
        Ok(Some(Operand {
            image,
            command,
            port: self.image_container_port,
            run_as_user: self.run_as_user,
        }))
    }
}

/// The templates of the plugin's kind.
pub const TEMPLATES: KindTemplates = KindTemplates {
    types: template::TYPES_RS,
    sample: template::SAMPLE_YAML,
    controller_mod: template::CONTROLLER_MOD_RS,
    reconciler: template::RECONCILER_RS,
    controller_test: template::CONTROLLER_TEST_RS,
};

/// Refuses what the plugin cannot scaffold: it makes a new namespaced kind with its types
/// and controller, in this project's domain (the Deployment it runs is namespaced, and
/// in its object's namespace).
pub fn check_fits(args: &create_api::Args, project: &Project) -> Result<()> {
    let refused = if !args.resource {
        Some("--resource=false")
    } else if args.controller == Some(false) {
        Some("--controller=false")
    } else if args.namespaced == Some(false) {
        Some("--namespaced=false")
    } else if args.external_api_path.is_some() {
        Some("--external-api-path")
    } else {
        None
    };
    if let Some(option) = refused {
        bail!(
            "--plugins deploy-image/v1-alpha scaffolds a new namespaced kind with its types and \
             controller: it does not take {option}"
        );
    }
    let create_api::Args { kind, .. } = args;
    let others: Vec<&str> = project
        .versions_of(&kind.group, &kind.kind)
        .filter(|resource| resource.version != kind.version)
        .map(|resource| resource.version.as_str())
        .collect();
    if !others.is_empty() {
        bail!(
            "--plugins deploy-image/v1-alpha scaffolds a new kind, and {} exists already in \
             {} (see PROJECT)",
            kind.kind,
            others.join(", ")
        );
    }
    Ok(())
}

impl Operand {
    /// The manager's environment variable that names the image: `MEMCACHED_IMAGE`
    /// (`SHIP_MEMCACHED_IMAGE` under its group in the multigroup layout, where kinds of
    /// several groups may share a name).
    fn image_variable(kind: &Kind, layout: &KindLayout) -> String {
        let name = layout.unique_name(&kind.group, &kind.lower());
        format!("{}_IMAGE", name.to_uppercase().replace('-', "_"))
    }

    /// `values` (the kind's) with the placeholders of the plugin's templates.
    pub fn values(&self, values: Values, kind: &Kind, layout: &KindLayout) -> Values {
        let lower = kind.lower();
        // A port name is at most 15 characters (IANA's service names); a kind's lower-case
        // name has letters and digits only, starting with a letter, so its start is one.
        let port_name: String = lower.chars().take(15).collect();
        let values = values
            .with("image", self.image.as_str())
            .with("image_variable", Self::image_variable(kind, layout))
            .with("finalizer", format!("{}/finalizer", kind.full_group()))
            .with("container_name", lower.as_str())
            .with("port_name", port_name);
        let (container_port_field, sample_port, port_import, container_ports, test_spec, ports) =
            match self.port {
                Some(port) => {
                    let with_port = values.clone().with("port", port.to_string());
                    (
                        template::CONTAINER_PORT_FIELD.to_owned(),
                        templates::render(template::SAMPLE_PORT, &with_port),
                        " ContainerPort,",
                        templates::render(template::CONTAINER_PORTS, &values),
                        format!("\"size\": 1, \"containerPort\": {port}"),
                        format!("[{port}]"),
                    )
                }
                None => (
                    String::new(),
                    String::new(),
                    "",
                    String::new(),
                    "\"size\": 1".to_owned(),
                    "Vec::<i32>::new()".to_owned(),
                ),
            };
        let (container_command, expected_command) = match &self.command {
            Some((_, arguments)) => {
                let literals = rust_string_literals(arguments);
                let with_command = values.clone().with("command", literals.as_str());
                (
                    templates::render(template::CONTAINER_COMMAND, &with_command),
                    format!("Some(Vec::from([{literals}].map(str::to_owned)))"),
                )
            }
            None => (String::new(), "None".to_owned()),
        };
        let (run_as_user, expected_run_as_user) = match self.run_as_user {
            Some(user) => {
                let with_user = values.clone().with("user", user.to_string());
                (
                    templates::render(template::RUN_AS_USER, &with_user),
                    format!("Some({user})"),
                )
            }
            None => (String::new(), "None".to_owned()),
        };
        values
            .with("container_port_field", container_port_field)
            .with("sample_port", sample_port)
            .with("port_import", port_import)
            .with("container_ports", container_ports)
            .with("test_spec", test_spec)
            .with("expected_ports", ports)
            .with("container_command", container_command)
            .with("expected_command", expected_command)
            .with("run_as_user", run_as_user)
            .with("expected_run_as_user", expected_run_as_user)
    }

    /// Plans what the plugin adds beside the kind's files: the image in the manager's
    /// environment, and the plugin's record of the kind in PROJECT.
    pub fn plan(
        &self,
        plan: &mut Plan,
        project: &mut Project,
        kind: &Kind,
        layout: &KindLayout,
    ) -> Result<()> {
        let manager = plan
            .read(MANAGER_YAML)?
            .with_context(|| format!("{MANAGER_YAML} does not exist"))?;
        let variable = Self::image_variable(kind, layout);
        let updated = with_manager_env(&manager, &variable, &self.image)
            .with_context(|| format!("setting {variable} in {MANAGER_YAML}"))?;
        plan.write(MANAGER_YAML, updated);
        self.record(project, kind);
        Ok(())
    }

    /// Records the kind and the options in PROJECT's `plugins`, as kubebuilder does (the
    /// options as the strings given), replacing an earlier record of the kind.
    fn record(&self, project: &mut Project, kind: &Kind) {
        let resources = &mut project
            .plugins
            .deploy_image
            .get_or_insert_with(Default::default)
            .resources;
        resources.retain(|resource| {
            let same_kind = resource.domain == kind.domain
                && resource.group == kind.group
                && resource.version == kind.version
                && resource.kind == kind.kind;
            !same_kind
        });
        resources.push(DeployImageResource {
            domain: kind.domain.clone(),
            group: kind.group.clone(),
            kind: kind.kind.clone(),
            options: DeployImageOptions {
                container_command: self.command.as_ref().map(|(given, _)| given.clone()),
                container_port: self.port.map(|port| port.to_string()),
                image: self.image.clone(),
                run_as_user: self.run_as_user.map(|user| user.to_string()),
            },
            version: kind.version.clone(),
        });
    }
}

/// `--image-container-command`'s arguments: split at commas, each trimmed, none empty.
fn split_command(command: &str) -> Result<Vec<String>> {
    if command.trim().is_empty() {
        bail!(
            "--image-container-command is empty: give the command and its arguments separated \
             by commas (`memcached,--memory-limit=64`), or leave the option out to run the \
             image's own"
        );
    }
    let arguments: Vec<String> = command
        .split(',')
        .map(|argument| argument.trim().to_owned())
        .collect();
    if let Some(empty) = arguments.iter().position(String::is_empty) {
        bail!(
            "--image-container-command {command:?}: argument {} is empty (the arguments are \
             separated by commas)",
            empty + 1
        );
    }
    Ok(arguments)
}

/// `arguments` as Rust string literals, separated by commas.
fn rust_string_literals(arguments: &[String]) -> String {
    arguments
        .iter()
        .map(|argument| format!("{argument:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `--image`: a container image reference, as Docker and containerd read one:
/// `[registry[:port]/]path[:tag][@digest]`.
fn validate_image(image: &str) -> Result<()> {
    match image_reference_problem(image) {
        None => Ok(()),
        Some(problem) => bail!(
            "invalid --image {image:?}: {problem}; an image reference is \
             `[registry[:port]/]name[:tag][@digest]`, as `memcached:1.6.26-alpine3.19` or \
             `registry.example.com:5000/cache/memcached@sha256:<64 hex digits>`"
        ),
    }
}

/// What is wrong with `image` as an image reference (the grammar of
/// github.com/distribution/reference), if anything.
fn image_reference_problem(image: &str) -> Option<String> {
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest.filter(|digest| !is_digest(digest)) {
        return Some(format!(
            "the digest {digest:?} is not `<algorithm>:<at least 32 hex digits>`"
        ));
    }
    // A tag follows the last `:` after the last `/` (a `:` before it is a registry's port).
    let last_component = rest.rfind('/').map_or(0, |slash| slash + 1);
    let (name, tag) = match rest[last_component..].rfind(':') {
        Some(colon) => {
            let colon = last_component + colon;
            (&rest[..colon], Some(&rest[colon + 1..]))
        }
        None => (rest, None),
    };
    if let Some(tag) = tag.filter(|tag| !is_tag(tag)) {
        return Some(format!(
            "the tag {tag:?} is not 1 to 128 letters, digits, `_`, `.` and `-`, not starting \
             with `.` or `-`"
        ));
    }
    if name.len() > 255 {
        return Some("the name is longer than 255 characters".to_owned());
    }
    let mut components: Vec<&str> = name.split('/').collect();
    // The first of several components is a registry when it looks like a host.
    let first = components[0];
    if components.len() > 1 && (first.contains(['.', ':']) || first == "localhost") {
        if !is_registry(first) {
            return Some(format!(
                "the registry {first:?} is not a host name or address with an optional port"
            ));
        }
        components.remove(0);
    }
    components
        .into_iter()
        .find(|component| !is_path_component(component))
        .map(|component| {
            format!(
                "the name component {component:?} is not lower-case letters and digits \
                 separated by `.`, `_`, `__` or dashes"
            )
        })
}

/// A path component of a repository name: runs of `[a-z0-9]` separated by one `.`, one
/// `_`, two `_` or any number of `-`.
fn is_path_component(component: &str) -> bool {
    let is_alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let separators_valid = component
        .split(is_alphanumeric)
        .filter(|separator| !separator.is_empty())
        .all(|separator| {
            [".", "_", "__"].contains(&separator) || separator.chars().all(|c| c == '-')
        });
    component.starts_with(is_alphanumeric)
        && component.ends_with(is_alphanumeric)
        && separators_valid
}

/// A registry: a host name (labels of letters, digits and inner `-`, separated by `.`) or
/// a bracketed IPv6 address, with an optional port.
fn is_registry(registry: &str) -> bool {
    let (host, port) = if let Some(address) = registry.strip_prefix('[') {
        match address.split_once(']') {
            Some((address, after)) if is_ipv6(address) => (None, after.strip_prefix(':')),
            _ => return false,
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    let host_valid = host.is_none_or(|host| host.split('.').all(is_host_label));
    let port_valid =
        port.is_none_or(|port| !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()));
    host_valid && port_valid
}

fn is_host_label(label: &str) -> bool {
    !label.is_empty()
        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

fn is_ipv6(address: &str) -> bool {
    address.contains(':') && address.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
}

/// A tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn is_tag(tag: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    tag.len() <= 128
        && tag.starts_with(is_word)
        && tag.chars().all(|c| is_word(c) || c == '.' || c == '-')
}

/// A digest: `<algorithm>:<hex>`, the algorithm lower-case letters and digits joined by
/// `+`, `.`, `_` or `-`, at least 32 hex digits.
fn is_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_valid = algorithm.split(['+', '.', '_', '-']).all(|component| {
        !component.is_empty()
            && component
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    });
    algorithm_valid && encoded.len() >= 32 && encoded.chars().all(|c| c.is_ascii_hexdigit())
}

/// `manager_yaml` with the environment variable `name` of the manager's container (the
/// one named `manager`) set to `value`: changed in place if it is there, else put first in
/// its `env`, which is made below the container's name if it has none.
fn with_manager_env(manager_yaml: &str, name: &str, value: &str) -> Result<String> {
    let mut lines: Vec<String> = manager_yaml.lines().map(str::to_owned).collect();
    let container = lines
        .iter()
        .position(|line| line.trim() == "- name: manager")
        .context("it has no container `- name: manager`")?;
    // The container's keys are indented past its `- `.
    let keys = indentation(&lines[container]) + 2;
    let end = (container + 1..lines.len())
        .find(|&at| !lines[at].trim().is_empty() && indentation(&lines[at]) < keys)
        .unwrap_or(lines.len());
    // JSON's quoting is YAML's: the value stays a string whatever it looks like.
    let quoted = serde_json::Value::from(value).to_string();
    let env = (container + 1..end)
        .find(|&at| indentation(&lines[at]) == keys && lines[at].trim() == "env:");
    let Some(env) = env else {
        let pad = " ".repeat(keys);
        let entry = [
            format!("{pad}env:"),
            format!("{pad}- name: {name}"),
            format!("{pad}  value: {quoted}"),
        ];
        lines.splice(container + 1..container + 1, entry);
        return Ok(lines.join("\n") + "\n");
    };
    let items_end = (env + 1..end)
        .find(|&at| {
            let line = &lines[at];
            let within = indentation(line) > keys
                || (indentation(line) == keys && line.trim_start().starts_with("- "));
            !line.trim().is_empty() && !within
        })
        .unwrap_or(end);
    let existing = (env + 1..items_end).find(|&at| lines[at].trim() == format!("- name: {name}"));
    match existing {
        Some(at) => {
            let value_line = lines
                .get(at + 1)
                .filter(|line| line.trim_start().starts_with("value: "))
                .with_context(|| format!("{name} has no `value:` right below its name"))?;
            let pad = " ".repeat(indentation(value_line));
            lines[at + 1] = format!("{pad}value: {quoted}");
        }
        None => {
            let item = lines
                .get(env + 1)
                .filter(|line| line.trim_start().starts_with("- "))
                .map_or(keys, |line| indentation(line));
            let pad = " ".repeat(item);
            let entry = [
                format!("{pad}- name: {name}"),
                format!("{pad}  value: {quoted}"),
            ];
            lines.splice(env + 1..env + 1, entry);
        }
    }
    Ok(lines.join("\n") + "\n")
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_are_checked_as_docker_reads_them() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for valid in [
            "memcached",
            "memcached:1.6.26-alpine3.19",
            "library/memcached:latest",
            "registry.example.com:5000/cache/memcached",
            "localhost/memcached:v1",
            "localhost:5000/a__b/c-d.e_f",
            "[::1]:5000/memcached:dev",
            &format!("memcached@{digest}"),
            &format!("example.com/memcached:1.6@{digest}"),
            "1234",
        ] {
            assert_eq!(image_reference_problem(valid), None, "{valid}");
        }
        for (invalid, problem) in [
            ("", "the name component \"\""),
            ("Memcached:1.6", "the name component \"Memcached\""),
            ("memcached:", "the tag \"\""),
            ("memcached:-rc", "the tag \"-rc\""),
            ("memcached::1", "the name component \"memcached:\""),
            ("cache//memcached", "the name component \"\""),
            ("cache/memcached_", "the name component \"memcached_\""),
            ("cache/mem___cached", "the name component \"mem___cached\""),
            ("memcached 1.6", "the name component \"memcached 1.6\""),
            (
                "-bad.example.com/memcached",
                "the registry \"-bad.example.com\"",
            ),
            (
                "example.com:port/memcached",
                "the registry \"example.com:port\"",
            ),
            ("memcached@sha256:abc", "the digest \"sha256:abc\""),
            ("memcached@", "the digest \"\""),
        ] {
            let found = image_reference_problem(invalid);
            assert!(
                found
                    .as_deref()
                    .is_some_and(|found| found.starts_with(problem)),
                "{invalid}: expected {problem:?}, got {found:?}"
            );
        }
        let long = format!("{}:1", "a".repeat(256));
        assert_eq!(
            image_reference_problem(&long).as_deref(),
            Some("the name is longer than 255 characters")
        );
    }

    #[test]
    fn a_command_is_split_at_commas_and_may_have_no_empty_argument() {
        assert_eq!(
            split_command("memcached, --memory-limit=64,-o,modern,-v").unwrap(),
            ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
        );
        assert!(
            split_command(" ")
                .unwrap_err()
                .to_string()
                .starts_with("--image-container-command is empty")
        );
        assert_eq!(
            split_command("memcached,,-v").unwrap_err().to_string(),
            "--image-container-command \"memcached,,-v\": argument 2 is empty (the arguments \
             are separated by commas)"
        );
        assert_eq!(
            rust_string_literals(&["say \"hi\"".to_owned(), "a\\b".to_owned()]),
            r#""say \"hi\"", "a\\b""#
        );
    }

    const MANAGER: &str = "\
spec:
  template:
    spec:
      containers:
      - name: manager
        image: controller:latest
        args:
        - --leader-elect
      - name: sidecar
        image: sidecar
";

    #[test]
    fn the_image_variable_goes_into_the_managers_env_made_if_missing() {
        let once = with_manager_env(MANAGER, "MEMCACHED_IMAGE", "memcached:1.6").unwrap();
        assert_eq!(
            once,
            MANAGER.replace(
                "      - name: manager\n",
                "      - name: manager\n        env:\n        - name: MEMCACHED_IMAGE\n          \
                 value: \"memcached:1.6\"\n"
            )
        );
        // A second variable goes first; one that is there changes in place.
        let twice = with_manager_env(&once, "BUSYBOX_IMAGE", "busybox").unwrap();
        assert!(twice.contains(
            "        env:\n        - name: BUSYBOX_IMAGE\n          value: \"busybox\"\n        \
             - name: MEMCACHED_IMAGE\n          value: \"memcached:1.6\"\n        image: "
        ));
        let changed = with_manager_env(&twice, "MEMCACHED_IMAGE", "memcached:1.7").unwrap();
        assert_eq!(changed, twice.replace("memcached:1.6", "memcached:1.7"));
        // The sidecar is left alone.
        assert!(changed.ends_with("      - name: sidecar\n        image: sidecar\n"));
    }

    #[test]
    fn an_env_with_other_variables_keeps_them_and_their_indentation() {
        let namespaced = MANAGER.replace(
            "        args:\n",
            "        env:\n          - name: WATCH_NAMESPACE\n            valueFrom:\n              \
             fieldRef:\n                fieldPath: metadata.namespace\n        args:\n",
        );
        let updated = with_manager_env(&namespaced, "MEMCACHED_IMAGE", "memcached").unwrap();
        assert!(updated.contains(
            "        env:\n          - name: MEMCACHED_IMAGE\n            value: \"memcached\"\n          \
             - name: WATCH_NAMESPACE\n"
        ));
        let error = with_manager_env("kind: Deployment\n", "X", "y").unwrap_err();
        assert_eq!(error.to_string(), "it has no container `- name: manager`");
    }
}

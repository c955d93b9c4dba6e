//! `cargo xtask helm`: a Helm chart in `dist/chart/` holding what `config/default` renders,
//! as kubebuilder's `helm/v2-alpha` plugin makes one from `make build-installer`'s bundle.
//!
//! The chart is derived, not written by hand: `config/default` is rendered with the
//! kustomize subset ([`crate::kustomize`]) that `build-installer` uses, and every object
//! becomes a template (`templates/<section>/<name>.yaml`), so a project's new kinds, roles
//! and webhooks appear in its chart at the next run. The components `config/default` leaves
//! commented out (`../prometheus`, `../network-policy`) are rendered too, in a scratch copy
//! of `config/` with them enabled, and come in switched off.
//!
//! What a template changes in its object:
//! - the namespace (as a whole value or a part of one, `<service>.<namespace>.svc`) becomes
//!   `{{ .Release.Namespace }}`, and every name `namePrefix` gave becomes the release's
//!   prefix and the object's name in config/ (`<chart>.resourceName`): installed as release
//!   `<project>` into namespace `<project>-system`, the chart makes the objects of
//!   `dist/install.yaml`. Every such name fits 63 characters, whatever the release's name:
//!   a prefix too long for an object's name is cut, and a hash of the whole prefix keeps
//!   apart the objects of releases whose names begin alike;
//! - Helm's labels (`<chart>.labels`) replace `app.kubernetes.io/managed-by: kustomize`;
//! - the values switch objects and the manager's flags, ports and volumes on and off by
//!   kubebuilder's conventional names (`webhook-service`, `serving-cert`, `--webhook-port`,
//!   `metrics-certs`, ...), and set the manager's replicas, image and resources. values.yaml
//!   holds only the switches of what the chart has: a project without webhooks (whose
//!   config/default has no webhook Service and no cert-manager) gets no `webhook` or
//!   `certManager` switch.
//!
//! With the default values the chart renders the installer's objects except for the
//! differences listed, with their reasons, in `helm_differences.md` beside this file; the
//! tests strip exactly those and fail on any other. The main one: the chart holds no
//! Namespace, since Helm records a release in its namespace before creating anything, so
//! it is installed with `helm install <project> dist/chart --namespace <project>-system
//! --create-namespace`. The CRDs are templates rather than files of `crds/` (which Helm
//! neither templates nor upgrades): their conversion webhook names the release's Service.
//!
//! What a run keeps of an existing chart:
//! - `values.yaml` is the user's: a run leaves it byte for byte as it is when it has every
//!   key the chart reads, and otherwise only inserts the missing keys with their defaults
//!   (in place, keeping comments and order). A key deleted comes back with its default; to
//!   turn something off, set it. A value of the wrong shape is an error.
//! - `Chart.yaml` is rewritten, keeping the value of every key but `apiVersion`, `name` and
//!   `type` (so a bumped `version`, an `icon` or `maintainers` stay).
//! - templates are regenerated. Each carries the checksum of what was written; a template
//!   edited since (or a file of the user's at a template's path) stops the run before
//!   anything is written, naming the files, unless `--force`. Templates of objects that are
//!   gone are deleted under the same rule; other files in `templates/` are left alone.
//!   Changes belong in `config/`, where they reach the installer and the chart alike.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::kustomize::{self, Overrides};
use crate::scaffold::project::{self, Project};

/// The options of `cargo xtask helm` (kubebuilder's `kubebuilder edit --plugins=helm/v2-alpha`).
#[derive(clap::Args, Clone, Debug)]
pub struct Args {
    /// The kustomization the chart is made from, relative to the workspace root.
    #[arg(long, default_value = "config/default")]
    pub dir: PathBuf,
    /// The chart's directory, relative to the workspace root.
    #[arg(long, default_value = "dist/chart")]
    pub output: PathBuf,
    /// Overwrite (or delete) templates edited since the last run, and files of yours at a
    /// template's path.
    #[arg(long)]
    pub force: bool,
}

/// Writes the chart of the workspace `cargo xtask` runs in.
pub fn run(args: Args) -> Result<()> {
    let summary = generate(&crate::workspace_root(), &args)?;
    eprintln!("{summary}");
    Ok(())
}

/// Writes the chart of the project at `root` (the paths of `args` are relative to it) and
/// says what it did. Everything is computed and checked before the first write, so an
/// error leaves the chart as it was.
pub fn generate(root: &Path, args: &Args) -> Result<String> {
    let chart = make_chart(root, &args.dir)?;
    let chart_dir = root.join(&args.output);
    let stale = check_templates(&chart_dir, &chart.templates, args.force)?;
    let values = update_values(&chart_dir.join("values.yaml"), &chart.values)?;
    let existing_chart_yaml = read_if_exists(&chart_dir.join("Chart.yaml"))?;
    let chart_yaml = chart_yaml(&chart.name, &chart.manager, existing_chart_yaml.as_deref())?;

    for (path, text) in &chart.templates {
        write(&chart_dir.join(path), text)?;
    }
    for path in &stale {
        fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    write(&chart_dir.join("Chart.yaml"), &chart_yaml)?;
    let values_note = match &values {
        ValuesUpdate::New(text) | ValuesUpdate::Merged(text) => {
            write(&chart_dir.join("values.yaml"), text)?;
            if matches!(values, ValuesUpdate::New(_)) {
                "values.yaml written"
            } else {
                "values.yaml: added the keys it lacked"
            }
        }
        ValuesUpdate::Kept => "values.yaml kept as it was",
    };
    Ok(format!(
        "wrote {} ({} templates, {} stale removed; {values_note})",
        args.output.display(),
        chart.templates.len(),
        stale.len()
    ))
}

/// Everything the chart is made of, before anything is written.
struct Chart {
    name: String,
    /// Each template's text by its path in the chart.
    templates: BTreeMap<PathBuf, String>,
    manager: ManagerDefaults,
    values: Vec<Section>,
}

/// The chart of the kustomization `dir` of the project at `root`.
fn make_chart(root: &Path, dir: &Path) -> Result<Chart> {
    let name = chart_name(root)?;
    let dir = fs::canonicalize(root.join(dir))
        .with_context(|| format!("no kustomization at {}", dir.display()))?;
    let layout = Layout::read(&dir)?;
    let rendered = render(&dir, &layout)?;
    let names = Names::new(&name, &layout, &rendered.objects);
    names.check_lengths()?;
    let mut templates = BTreeMap::new();
    templates.insert(
        PathBuf::from("templates/_helpers.tpl"),
        with_checksum(&helpers(&names)),
    );
    for object in &rendered.objects {
        let (dir, stem, text) = template_file(object, &names)?;
        // Two objects of one name (a Role and its ClusterRole, say) share a directory.
        let mut path = dir.join(format!("{stem}.yaml"));
        if templates.contains_key(&path) {
            path = dir.join(format!("{stem}-{}.yaml", kind(object).to_lowercase()));
        }
        if templates.insert(path.clone(), text).is_some() {
            bail!("two objects of config/default make {}", path.display());
        }
    }
    let manager = ManagerDefaults::of(&rendered.objects)?;
    let read = values_read(&templates);
    let values = default_values(&manager, &rendered)
        .into_iter()
        .filter(|section| read.contains(section.key))
        .collect();
    Ok(Chart {
        name,
        templates,
        manager,
        values,
    })
}

/// The chart's name: the project's (`PROJECT`'s `projectName`), as kubebuilder names it.
fn chart_name(root: &Path) -> Result<String> {
    let path = root.join(project::FILE);
    let text = fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (the chart is named after the project)",
            path.display()
        )
    })?;
    Ok(Project::parse(&text)?.project_name)
}

fn read_if_exists(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

// ---------------------------------------------------------------------------------------
// What config/default renders.
// ---------------------------------------------------------------------------------------

/// What the chart needs of the kustomization file itself: the namespace and name prefix it
/// gives every object (which the release's namespace and name replace), and its resources.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Layout {
    namespace: Option<String>,
    name_prefix: Option<String>,
    #[serde(default)]
    resources: Vec<String>,
}

impl Layout {
    fn read(dir: &Path) -> Result<Layout> {
        let path = dir.join("kustomization.yaml");
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let layout: Layout = serde_saphyr::from_str(&text)
            .with_context(|| format!("{}: not a kustomization", path.display()))?;
        if layout.namespace.is_none() {
            bail!(
                "{} sets no `namespace`: the chart puts every object into the release's \
                 namespace in place of that one",
                path.display()
            );
        }
        Ok(layout)
    }

    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }

    fn includes(&self, resource: &str) -> bool {
        self.resources
            .iter()
            .any(|entry| entry.trim_end_matches('/') == resource)
    }
}

/// A kubebuilder component `config/default` may leave commented out, switched by a value.
struct Component {
    /// The key of its switch in values.yaml (`<key>.enabled`).
    key: &'static str,
    /// Its kustomization, relative to config/default.
    dir: &'static str,
    /// The kinds it adds.
    kinds: &'static [&'static str],
}

const COMPONENTS: [Component; 2] = [
    Component {
        key: "prometheus",
        dir: "../prometheus",
        kinds: &["ServiceMonitor"],
    },
    Component {
        key: "networkPolicy",
        dir: "../network-policy",
        kinds: &["NetworkPolicy"],
    },
];

/// The objects of the chart, and which components config/default itself includes.
struct Rendered {
    objects: Vec<Value>,
    included: BTreeSet<&'static str>,
}

/// config/default's objects (its Namespace aside: `helm install --create-namespace` makes
/// the release's), then those of the components it leaves out.
fn render(dir: &Path, layout: &Layout) -> Result<Rendered> {
    let mut objects = kustomize::build(dir, &Overrides::default())?;
    let mut included = BTreeSet::new();
    let mut left_out = Vec::new();
    for component in &COMPONENTS {
        if layout.includes(component.dir) {
            included.insert(component.key);
        } else if dir.join(component.dir).join("kustomization.yaml").is_file() {
            left_out.push(component);
        }
    }
    if !left_out.is_empty() {
        let extra: Vec<Value> = render_with(dir, &left_out)?
            .into_iter()
            .filter(|object| {
                !objects.contains(object)
                    && left_out
                        .iter()
                        .any(|component| component.kinds.contains(&kind(object)))
            })
            .collect();
        objects.extend(extra);
    }
    objects.retain(|object| kind(object) != "Namespace");
    Ok(Rendered { objects, included })
}

/// What config/default renders with `components` added to its resources, rendered in a
/// scratch copy of its parent directory (config/ itself is not touched).
fn render_with(dir: &Path, components: &[&Component]) -> Result<Vec<Value>> {
    let (Some(config), Some(name)) = (dir.parent(), dir.file_name()) else {
        bail!("{} has no parent directory to copy", dir.display());
    };
    let scratch = Scratch::new()?;
    copy_tree(config, &scratch.0)?;
    let file = scratch.0.join(name).join("kustomization.yaml");
    let mut kustomization: Value = serde_saphyr::from_str(&fs::read_to_string(&file)?)
        .with_context(|| format!("{}: not a kustomization", dir.display()))?;
    let resources = kustomization
        .as_object_mut()
        .context("a kustomization is a mapping")?
        .entry("resources")
        .or_insert_with(|| json!([]));
    for component in components {
        resources
            .as_array_mut()
            .context("`resources` is a list")?
            .push(json!(component.dir));
    }
    fs::write(&file, kubebuilder::yaml::to_yaml(&kustomization))?;
    kustomize::build(&scratch.0.join(name), &Overrides::default()).with_context(|| {
        let dirs: Vec<&str> = components.iter().map(|c| c.dir).collect();
        format!("rendering {} with {}", dir.display(), dirs.join(", "))
    })
}

/// A directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let base = std::env::temp_dir();
        for attempt in 0u32.. {
            let dir = base.join(format!("cargo-xtask-helm-{}-{attempt}", std::process::id()));
            match fs::create_dir(&dir) {
                Ok(()) => return Ok(Scratch(dir)),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("creating {}", dir.display()));
                }
            }
        }
        unreachable!("some attempt number is free")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

fn kind(object: &Value) -> &str {
    object["kind"].as_str().unwrap_or_default()
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Templates: objects with placeholders, spliced with template text after YAML rendering.
// ---------------------------------------------------------------------------------------

/// How every generated file starts (a template comment, which renders to nothing).
const GENERATED: &str = "{{/* Generated by `cargo xtask helm`";

/// What a placeholder in an object's YAML stands for. Placeholders are plain strings
/// (`zz_helm_<n>__`) that the YAML writer leaves unquoted and, as keys, sorts after the
/// others (so that a list item's map starts with a key of its own); rendering the object
/// and then replacing them keeps the YAML writer's output for everything else.
enum Splice {
    /// A string value holding template actions: written double-quoted.
    Text(String),
    /// A scalar written as the action's output (a number).
    Action(String),
    /// A mapping value written by `toYaml` of a values subtree.
    ToYaml(String),
    /// A mapping entry (the placeholder is its key) standing for a named template's lines.
    Include(String),
    /// A mapping entry (`{key: value}`) or list item (`[item]`) present only when the
    /// condition holds.
    If { condition: String, content: Value },
}

#[derive(Default)]
struct Splices(Vec<Splice>);

const PLACEHOLDER: &str = "zz_helm_";

impl Splices {
    fn add(&mut self, splice: Splice) -> String {
        self.0.push(splice);
        format!("{PLACEHOLDER}{}__", self.0.len() - 1)
    }

    /// The splice `text` is the placeholder of.
    fn get(&self, text: &str) -> Option<&Splice> {
        let index = text.strip_prefix(PLACEHOLDER)?.strip_suffix("__")?;
        self.0.get(index.parse::<usize>().ok()?)
    }

    /// The condition of a guarded entry's key or item.
    fn condition(&self, text: &str) -> Option<&str> {
        match self.get(text)? {
            Splice::If { condition, .. } => Some(condition),
            _ => None,
        }
    }

    /// `value` as YAML with every placeholder replaced by its template text.
    fn render(&self, value: &Value) -> String {
        self.render_at(value, 0)
    }

    /// [`Splices::render`] with every line indented by `indent` spaces.
    fn render_at(&self, value: &Value, indent: usize) -> String {
        let mut out = String::new();
        for line in kubebuilder::yaml::to_yaml(value).lines() {
            let pad = if line.is_empty() { 0 } else { indent };
            let line = format!("{}{}", " ".repeat(pad), escape_actions(line));
            self.splice_line(&line, &mut out);
        }
        out
    }

    fn splice_line(&self, line: &str, out: &mut String) {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let (pad, rest) = line.split_at(indent);
        // A list item whose first key is a guarded entry: the dash goes on a line of its own.
        if let Some(first) = rest.strip_prefix("- ")
            && let Some(Splice::If { .. } | Splice::Include(_)) =
                first.strip_suffix(": null").and_then(|key| self.get(key))
        {
            let _ = writeln!(out, "{pad}-");
            return self.splice_line(&format!("{pad}  {first}"), out);
        }
        let entry = rest
            .strip_prefix("- ")
            .or_else(|| rest.strip_suffix(": null"));
        match entry.and_then(|text| self.get(text)) {
            Some(Splice::Include(template)) => {
                let _ = writeln!(
                    out,
                    "{pad}{{{{- include \"{template}\" . | nindent {indent} }}}}"
                );
            }
            Some(Splice::If { condition, content }) => {
                let _ = writeln!(out, "{pad}{{{{- if {condition} }}}}");
                out.push_str(&self.render_at(content, indent));
                let _ = writeln!(out, "{pad}{{{{- end }}}}");
            }
            _ => {
                out.push_str(&self.splice_value(line, indent));
                out.push('\n');
            }
        }
    }

    /// `line` with the placeholder of a scalar value replaced.
    fn splice_value(&self, line: &str, indent: usize) -> String {
        let Some(start) = line.find(PLACEHOLDER) else {
            return line.to_owned();
        };
        let after = &line[start + PLACEHOLDER.len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let end = start + PLACEHOLDER.len() + digits + "__".len();
        let text = match self.get(&line[start..end]) {
            Some(Splice::Text(text)) => format!("\"{text}\""),
            Some(Splice::Action(action)) => action.clone(),
            Some(Splice::ToYaml(values)) => {
                format!("{{{{- toYaml {values} | nindent {} }}}}", indent + 2)
            }
            _ => return line.to_owned(),
        };
        format!("{}{text}{}", &line[..start], &line[end..])
    }
}

/// Literal text with `{{` written so that Helm's template engine outputs it as is.
fn escape_actions(text: &str) -> String {
    text.replace("{{", "{{ \"{{\" }}")
}

/// `text` as the inside of a YAML double-quoted string, safe from the template engine.
fn quoted_literal(text: &str) -> String {
    let json = serde_json::to_string(text).expect("strings serialise");
    escape_actions(&json[1..json.len() - 1])
}

/// Replaces `map[key]` by an entry present only when `condition` holds.
fn guard_entry(map: &mut Map<String, Value>, key: &str, condition: &str, splices: &mut Splices) {
    if let Some(value) = map.remove(key) {
        let content = json!({ key: value });
        let placeholder = splices.add(Splice::If {
            condition: condition.to_owned(),
            content,
        });
        map.insert(placeholder, Value::Null);
    }
}

/// Guards the items of the list `map[key]` that `condition_of` gives a condition.
fn guard_items(
    map: &mut Map<String, Value>,
    key: &str,
    condition_of: impl Fn(&Value) -> Option<String>,
    splices: &mut Splices,
) {
    let Some(Value::Array(items)) = map.get_mut(key) else {
        return;
    };
    for item in items.iter_mut() {
        if let Some(condition) = condition_of(item) {
            let content = Value::Array(vec![item.take()]);
            *item = Value::String(splices.add(Splice::If { condition, content }));
        }
    }
    lift_if_all_guarded(map, key, splices);
}

/// Guards `map[key]` itself when every entry or item of it is guarded, so that it is
/// absent rather than empty (null) when none holds.
fn lift_if_all_guarded(map: &mut Map<String, Value>, key: &str, splices: &mut Splices) {
    let conditions: Option<BTreeSet<&str>> = match map.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().and_then(|text| splices.condition(text)))
            .collect(),
        Some(Value::Object(entries)) => entries.keys().map(|key| splices.condition(key)).collect(),
        _ => None,
    };
    let Some(conditions) = conditions.filter(|c| !c.is_empty()) else {
        return;
    };
    let single = conditions.len() == 1;
    let condition = any_of(conditions);
    if single && let Some(value) = map.get_mut(key) {
        unguard(value, splices);
    }
    guard_entry(map, key, &condition, splices);
}

/// `value` (a list or map of guarded items or entries) with its guards dropped: the guard
/// of `value` itself takes their place.
fn unguard(value: &mut Value, splices: &Splices) {
    let content = |placeholder: &str| match splices.get(placeholder) {
        Some(Splice::If { content, .. }) => content.clone(),
        _ => Value::Null,
    };
    match value {
        Value::Array(items) => {
            for item in items.iter_mut() {
                let unguarded = item.as_str().map(content);
                if let Some(Value::Array(mut inner)) = unguarded {
                    *item = inner.pop().unwrap_or_default();
                }
            }
        }
        Value::Object(entries) => {
            let guarded = std::mem::take(entries);
            for (placeholder, _) in guarded {
                if let Value::Object(inner) = content(&placeholder) {
                    entries.extend(inner);
                }
            }
        }
        _ => {}
    }
}

/// The condition that holds when any of `conditions` does.
fn any_of(conditions: BTreeSet<&str>) -> String {
    if conditions.len() == 1 {
        return conditions.into_iter().collect();
    }
    let terms: Vec<String> = conditions.iter().map(|c| format!("({c})")).collect();
    format!("or {}", terms.join(" "))
}

// ---------------------------------------------------------------------------------------
// Names and namespaces.
// ---------------------------------------------------------------------------------------

/// The chart's name and what the templates put in place of config/default's namespace and
/// of the names its `namePrefix` made.
struct Names {
    chart: String,
    namespace: String,
    /// `namePrefix` without its final `-`: the release name that keeps every name.
    base: Option<String>,
    prefix: String,
    prefixed: BTreeSet<String>,
}

impl Names {
    fn new(chart: &str, layout: &Layout, objects: &[Value]) -> Names {
        let prefix = layout.name_prefix.clone().unwrap_or_default();
        let prefixed = objects
            .iter()
            .filter(|object| {
                !matches!(
                    kind(object),
                    "CustomResourceDefinition" | "Namespace" | "APIService"
                )
            })
            .map(|object| name(object).to_owned())
            .filter(|name| !prefix.is_empty() && name.starts_with(&prefix))
            .collect();
        Names {
            chart: chart.to_owned(),
            namespace: layout.namespace().to_owned(),
            base: Some(prefix.trim_end_matches('-').to_owned()).filter(|b| !b.is_empty()),
            prefix,
            prefixed,
        }
    }

    /// Fails when an object's name in config/ is too long to fit 63 characters behind the
    /// shortest part of the release's name that `<chart>.resourceName` keeps.
    fn check_lengths(&self) -> Result<()> {
        let long: Vec<&str> = self
            .prefixed
            .iter()
            .map(|name| &name[self.prefix.len()..])
            .filter(|suffix| suffix.len() > MAX_SUFFIX)
            .collect();
        if !long.is_empty() {
            bail!(
                "config/ names objects {}: longer than {MAX_SUFFIX} characters, they leave no \
                 room for the release's name in a name of 63; shorten them in config/",
                long.join(", ")
            );
        }
        Ok(())
    }

    /// The name without config/default's prefix: what the object is called in config/.
    fn base_name<'a>(&self, name: &'a str) -> &'a str {
        if self.prefixed.contains(name) {
            &name[self.prefix.len()..]
        } else {
            name
        }
    }

    /// `text` as template text when a part of it (between `.`, `/` and `:`) is the
    /// namespace or a prefixed name.
    fn template(&self, text: &str) -> Option<String> {
        let mut out = String::new();
        let mut replaced = false;
        for part in text.split_inclusive(['.', '/', ':']) {
            let (segment, delimiter) = match part.char_indices().last() {
                Some((at, '.' | '/' | ':')) => part.split_at(at),
                _ => (part, ""),
            };
            if segment == self.namespace {
                out.push_str("{{ .Release.Namespace }}");
                replaced = true;
            } else if self.prefixed.contains(segment) {
                let suffix = &segment[self.prefix.len()..];
                let _ = write!(
                    out,
                    "{{{{ include \"{}.resourceName\" (dict \"suffix\" \"{suffix}\" \"context\" $) }}}}",
                    self.chart
                );
                replaced = true;
            } else {
                out.push_str(&quoted_literal(segment));
            }
            out.push_str(&quoted_literal(delimiter));
        }
        replaced.then_some(out)
    }

    /// Templates every string of `value` that holds the namespace or a prefixed name.
    fn template_strings(&self, value: &mut Value, splices: &mut Splices) {
        match value {
            Value::String(text) => {
                if let Some(template) = self.template(text) {
                    *text = splices.add(Splice::Text(template));
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|item| self.template_strings(item, splices)),
            Value::Object(map) => map
                .values_mut()
                .for_each(|item| self.template_strings(item, splices)),
            _ => {}
        }
    }
}

/// What a name cut by `<chart>.resourceName` has for the part of the prefix it keeps and the
/// object's name in config/: 63 characters, less 8 hex digits of the hash and two dashes.
const CUT_NAME_ROOM: usize = 63 - 8 - 2;

/// The longest object name in config/ (after config/default's prefix) that
/// `<chart>.resourceName` fits into 63 characters: it keeps one character of the prefix.
const MAX_SUFFIX: usize = CUT_NAME_ROOM - 1;

/// The named templates: the release's name prefix, object names and Helm's labels.
fn helpers(names: &Names) -> String {
    let chart = &names.chart;
    let mut out = String::new();
    if let Some(base) = &names.base {
        let _ = write!(
            out,
            r#"{{{{/* The prefix of every name: the release's name when it holds "{base}" (config/default's
namePrefix without its dash), else "<release>-{base}"; at most 63 characters. */}}}}
{{{{- define "{chart}.fullname" -}}}}
{{{{- if contains "{base}" .Release.Name -}}}}
{{{{- .Release.Name | trunc 63 | trimSuffix "-" -}}}}
{{{{- else -}}}}
{{{{- printf "%s-{base}" .Release.Name | trunc 63 | trimSuffix "-" -}}}}
{{{{- end -}}}}
{{{{- end }}}}

{{{{/* An object's name: the prefix, then its name in config/ (.suffix), in at most 63
characters (a Service's name is a DNS label). When they are longer, the prefix is cut to
leave room for the whole name in config/ and, between the two, 8 hex digits of the whole
prefix's SHA-256: the names of two releases whose prefixes begin alike stay apart, and an
object's name depends on the release and that object only. */}}}}
{{{{- define "{chart}.resourceName" -}}}}
{{{{- $prefix := include "{chart}.fullname" .context -}}}}
{{{{- $name := printf "%s-%s" $prefix .suffix -}}}}
{{{{- if le (len $name) 63 -}}}}
{{{{- $name -}}}}
{{{{- else -}}}}
{{{{- $kept := trunc (sub {CUT_NAME_ROOM} (len .suffix) | int) $prefix | trimSuffix "-" -}}}}
{{{{- printf "%s-%s-%s" $kept (sha256sum $prefix | trunc 8) .suffix -}}}}
{{{{- end -}}}}
{{{{- end }}}}

"#
        );
    }
    let _ = write!(
        out,
        r#"{{{{/* Helm's labels, on every object beside config/default's own. */}}}}
{{{{- define "{chart}.labels" -}}}}
helm.sh/chart: {{{{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}}}
app.kubernetes.io/instance: {{{{ .Release.Name }}}}
app.kubernetes.io/managed-by: {{{{ .Release.Service }}}}
{{{{- with .Chart.AppVersion }}}}
app.kubernetes.io/version: {{{{ . | quote }}}}
{{{{- end }}}}
{{{{- end }}}}
"#
    );
    out
}

/// The labels `<chart>.labels` sets, which an object's own labels must not repeat.
const HELM_LABELS: [&str; 4] = [
    "helm.sh/chart",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/version",
];

fn add_helm_labels(object: &mut Value, names: &Names, splices: &mut Splices) {
    let Some(metadata) = object["metadata"].as_object_mut() else {
        return;
    };
    let labels = metadata.entry("labels").or_insert_with(|| json!({}));
    if let Some(labels) = labels.as_object_mut() {
        HELM_LABELS.iter().for_each(|label| {
            labels.remove(*label);
        });
        let placeholder = splices.add(Splice::Include(format!("{}.labels", names.chart)));
        labels.insert(placeholder, Value::Null);
    }
}

// ---------------------------------------------------------------------------------------
// Which values switch what.
// ---------------------------------------------------------------------------------------

// The conditions (template pipelines over the values) under which things are rendered.
const LEADER_ELECTION: &str = ".Values.leaderElection.enabled";
const METRICS: &str = ".Values.metrics.enabled";
const WEBHOOK: &str = ".Values.webhook.enabled";
const CERT_MANAGER: &str = ".Values.certManager.enabled";
const KEEP_CRDS: &str = ".Values.crd.keep";
const METRICS_CERTIFICATE: &str = "and .Values.metrics.enabled .Values.certManager.enabled";
const WEBHOOK_CERTIFICATE: &str = "and .Values.webhook.enabled .Values.certManager.enabled";
/// The Issuer serves the certificates: it goes when neither is issued.
const ISSUER: &str =
    "and .Values.certManager.enabled (or .Values.webhook.enabled .Values.metrics.enabled)";
const SERVICE_MONITOR: &str = "and .Values.prometheus.enabled .Values.metrics.enabled";
const NETWORK_POLICY: &str = ".Values.networkPolicy.enabled";
const METRICS_POLICY: &str = "and .Values.networkPolicy.enabled .Values.metrics.enabled";
const WEBHOOK_POLICY: &str = "and .Values.networkPolicy.enabled .Values.webhook.enabled";

/// Where an object's template goes and when it is rendered, by kind and by its name in
/// config/ (`None`: any name); the first rule that matches applies.
struct Rule {
    kind: &'static str,
    name: Option<&'static str>,
    section: &'static str,
    condition: Option<&'static str>,
}

const fn rule(
    kind: &'static str,
    name: Option<&'static str>,
    section: &'static str,
    condition: Option<&'static str>,
) -> Rule {
    Rule {
        kind,
        name,
        section,
        condition,
    }
}

#[rustfmt::skip]
const RULES: &[Rule] = &[
    rule("CustomResourceDefinition", None, "crd", None),
    rule("Deployment", None, "manager", None),
    rule("Service", Some("controller-manager-metrics-service"), "metrics", Some(METRICS)),
    rule("Service", Some("webhook-service"), "webhook", Some(WEBHOOK)),
    rule("MutatingWebhookConfiguration", None, "webhook", Some(WEBHOOK)),
    rule("ValidatingWebhookConfiguration", None, "webhook", Some(WEBHOOK)),
    rule("Certificate", Some("serving-cert"), "cert-manager", Some(WEBHOOK_CERTIFICATE)),
    rule("Certificate", Some("metrics-certs"), "cert-manager", Some(METRICS_CERTIFICATE)),
    rule("Certificate", None, "cert-manager", Some(CERT_MANAGER)),
    rule("Issuer", None, "cert-manager", Some(ISSUER)),
    rule("ClusterRole", Some("metrics-auth-role"), "rbac", Some(METRICS)),
    rule("ClusterRoleBinding", Some("metrics-auth-rolebinding"), "rbac", Some(METRICS)),
    rule("ClusterRole", Some("metrics-reader"), "rbac", Some(METRICS)),
    rule("Role", Some("leader-election-role"), "rbac", Some(LEADER_ELECTION)),
    rule("RoleBinding", Some("leader-election-rolebinding"), "rbac", Some(LEADER_ELECTION)),
    rule("ServiceAccount", None, "rbac", None),
    rule("Role", None, "rbac", None),
    rule("ClusterRole", None, "rbac", None),
    rule("RoleBinding", None, "rbac", None),
    rule("ClusterRoleBinding", None, "rbac", None),
    rule("ServiceMonitor", None, "prometheus", Some(SERVICE_MONITOR)),
    rule("NetworkPolicy", Some("allow-metrics-traffic"), "network-policy", Some(METRICS_POLICY)),
    rule("NetworkPolicy", Some("allow-webhook-traffic"), "network-policy", Some(WEBHOOK_POLICY)),
    rule("NetworkPolicy", None, "network-policy", Some(NETWORK_POLICY)),
];

/// The manager's flags, ports and volumes (by name) that a value switches.
const MANAGER_ARGS: [(&str, &str); 5] = [
    ("--leader-elect", LEADER_ELECTION),
    ("--metrics-bind-address", METRICS),
    ("--metrics-cert-path", METRICS_CERTIFICATE),
    ("--webhook-cert-path", WEBHOOK),
    ("--webhook-port", WEBHOOK),
];
const MANAGER_VOLUMES: [(&str, &str); 2] = [
    ("webhook-certs", WEBHOOK),
    ("metrics-certs", METRICS_CERTIFICATE),
];
const MANAGER_PORTS: [(&str, &str); 1] = [("webhook-server", WEBHOOK)];

/// The manager's container name (kubebuilder's), in the Deployment the values configure.
const MANAGER_CONTAINER: &str = "manager";

fn arg_condition(arg: &Value) -> Option<String> {
    let arg = arg.as_str()?;
    MANAGER_ARGS
        .iter()
        .find(|(flag, _)| {
            arg.strip_prefix(flag)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
        })
        .map(|(_, condition)| (*condition).to_owned())
}

fn named_condition(table: &[(&str, &str)]) -> impl Fn(&Value) -> Option<String> {
    move |item| {
        let name = item["name"].as_str()?;
        table
            .iter()
            .find(|(named, _)| *named == name)
            .map(|(_, condition)| (*condition).to_owned())
    }
}

// ---------------------------------------------------------------------------------------
// One object's template.
// ---------------------------------------------------------------------------------------

/// The template of `object`: its directory in the chart, its file name's stem (its name in
/// config/) and its text.
fn template_file(object: &Value, names: &Names) -> Result<(PathBuf, String, String)> {
    let object_kind = kind(object).to_owned();
    let base_name = names.base_name(name(object)).to_owned();
    let rule = RULES
        .iter()
        .find(|rule| rule.kind == object_kind && rule.name.is_none_or(|n| n == base_name));
    let section = rule.map_or_else(|| object_kind.to_lowercase(), |r| r.section.to_owned());

    let mut object = object.clone();
    let mut splices = Splices::default();
    template_names(&mut object, names, &mut splices);
    add_helm_labels(&mut object, names, &mut splices);
    match object_kind.as_str() {
        "CustomResourceDefinition" => template_crd(&mut object, &mut splices),
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            guard_annotation(&mut object, CA_INJECTION, CERT_MANAGER, &mut splices);
        }
        "Deployment" if manager_container(&mut object).is_some() => {
            template_manager(&mut object, &mut splices)?;
        }
        _ => {}
    }
    let body = splices.render(&object);
    let text = match rule.and_then(|r| r.condition) {
        Some(condition) => format!("{{{{- if {condition} }}}}\n{body}{{{{- end }}}}\n"),
        None => body,
    };
    Ok((
        PathBuf::from("templates").join(section),
        base_name,
        with_checksum(&text),
    ))
}

/// Templates the namespace and prefixed names everywhere but in a CRD's schemas (whose
/// descriptions are documentation, not references).
fn template_names(object: &mut Value, names: &Names, splices: &mut Splices) {
    let schemas = match kind(object) {
        "CustomResourceDefinition" => object["spec"]
            .as_object_mut()
            .and_then(|spec| spec.remove("versions")),
        _ => None,
    };
    names.template_strings(object, splices);
    if let Some(versions) = schemas {
        object["spec"]["versions"] = versions;
    }
}

/// The annotation by which cert-manager's cainjector fills in the webhook CA.
const CA_INJECTION: &str = "cert-manager.io/inject-ca-from";

/// A CRD's conversion webhook exists only with the webhooks; cert-manager injects its CA;
/// and `helm uninstall` keeps the CRD (and so every object of its kind) unless told not to.
fn template_crd(crd: &mut Value, splices: &mut Splices) {
    if crd["spec"]["conversion"]["strategy"] == "Webhook"
        && let Some(spec) = crd["spec"].as_object_mut()
    {
        guard_entry(spec, "conversion", WEBHOOK, splices);
    }
    let Some(metadata) = crd["metadata"].as_object_mut() else {
        return;
    };
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(KEEP_ANNOTATION.into(), json!("keep"));
        guard_entry(annotations, KEEP_ANNOTATION, KEEP_CRDS, splices);
        guard_entry(annotations, CA_INJECTION, WEBHOOK_CERTIFICATE, splices);
    }
    lift_if_all_guarded(metadata, "annotations", splices);
}

/// Helm's annotation for objects `helm uninstall` leaves in place.
const KEEP_ANNOTATION: &str = "helm.sh/resource-policy";

/// Guards one annotation (webhook configurations have nothing else to guard there).
fn guard_annotation(object: &mut Value, annotation: &str, condition: &str, splices: &mut Splices) {
    let Some(metadata) = object["metadata"].as_object_mut() else {
        return;
    };
    if let Some(annotations) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        guard_entry(annotations, annotation, condition, splices);
        lift_if_all_guarded(metadata, "annotations", splices);
    }
}

fn manager_container(deployment: &mut Value) -> Option<&mut Map<String, Value>> {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array_mut()?
        .iter_mut()
        .find(|container| container["name"] == MANAGER_CONTAINER)?
        .as_object_mut()
}

/// The manager's replicas, image and resources from the values; its flags, ports and
/// volumes switched with the features they serve; `--webhook-port=-1` with the webhooks
/// off (which switches its webhook server off, as in kubebuilder v4.16's chart), if it
/// serves any.
fn template_manager(deployment: &mut Value, splices: &mut Splices) -> Result<()> {
    let replicas = splices.add(Splice::Action("{{ .Values.manager.replicas }}".into()));
    deployment["spec"]["replicas"] = json!(replicas);
    if let Some(pod) = deployment["spec"]["template"]["spec"].as_object_mut() {
        guard_items(pod, "volumes", named_condition(&MANAGER_VOLUMES), splices);
    }
    let container = manager_container(deployment).context("the manager's container")?;
    let image = "{{ .Values.manager.image.repository }}\
                 {{ with .Values.manager.image.tag }}:{{ . }}{{ end }}";
    container.insert(
        "image".into(),
        json!(splices.add(Splice::Text(image.into()))),
    );
    let pull_policy = splices.add(Splice::Text(
        "{{ .Values.manager.image.pullPolicy }}".into(),
    ));
    container.insert("imagePullPolicy".into(), json!(pull_policy));
    guard_entry(
        container,
        "imagePullPolicy",
        ".Values.manager.image.pullPolicy",
        splices,
    );
    let resources = splices.add(Splice::ToYaml(".Values.manager.resources".into()));
    container.insert("resources".into(), json!(resources));
    guard_entry(container, "resources", ".Values.manager.resources", splices);
    let serves_webhooks = container
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|args| {
            args.iter()
                .any(|arg| arg_condition(arg).as_deref() == Some(WEBHOOK))
        });
    guard_items(container, "args", arg_condition, splices);
    guard_items(container, "ports", named_condition(&MANAGER_PORTS), splices);
    let mounts = named_condition(&MANAGER_VOLUMES);
    guard_items(container, "volumeMounts", mounts, splices);
    if serves_webhooks {
        webhook_server_off_in_args(container, splices)?;
    }
    Ok(())
}

/// `--webhook-port=-1` among the manager's flags when the webhooks are off.
fn webhook_server_off_in_args(
    container: &mut Map<String, Value>,
    splices: &mut Splices,
) -> Result<()> {
    let server_off = splices.add(Splice::If {
        condition: format!("not {WEBHOOK}"),
        content: json!(["--webhook-port=-1"]),
    });
    container
        .get_mut("args")
        .and_then(Value::as_array_mut)
        .context("the manager's `args` is a list")?
        .push(json!(server_off));
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Generated files: checksums, and what a run may overwrite.
// ---------------------------------------------------------------------------------------

/// FNV-1a (64 bits): a stable fingerprint of what was written, to tell an edit.
fn checksum(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `body` under the first line every generated template has, with the body's checksum.
fn with_checksum(body: &str) -> String {
    format!(
        "{GENERATED} from config/: change config/ instead. This file is regenerated; \
         once edited, the next run stops unless --force. checksum {:016x} */}}}}\n{body}",
        checksum(body)
    )
}

/// Whether a file is a template this command wrote, and if so whether it is unedited.
enum Origin {
    Ours { unedited: bool },
    Theirs,
}

fn origin(text: &str) -> Origin {
    let (first, body) = text.split_once('\n').unwrap_or((text, ""));
    let recorded = first
        .strip_prefix(GENERATED)
        .and_then(|rest| rest.rsplit_once("checksum "))
        .and_then(|(_, hex)| u64::from_str_radix(hex.trim_end_matches(" */}}"), 16).ok());
    match recorded {
        Some(recorded) => Origin::Ours {
            unedited: recorded == checksum(body),
        },
        None => Origin::Theirs,
    }
}

/// Checks what the new templates would replace, and returns the stale templates to
/// delete: the unedited (or, with `force`, any) generated ones no object makes any more.
/// Fails, naming them, when a template was edited or a file of the user's is in the way.
fn check_templates(
    chart_dir: &Path,
    templates: &BTreeMap<PathBuf, String>,
    force: bool,
) -> Result<Vec<PathBuf>> {
    let mut stale = Vec::new();
    let mut conflicts = Vec::new();
    for path in files_under(&chart_dir.join("templates"))? {
        let relative = path.strip_prefix(chart_dir)?.to_owned();
        let text = fs::read_to_string(&path).unwrap_or_default();
        let new = templates.get(&relative);
        let conflict = match (origin(&text), new) {
            (_, Some(new)) if *new == text => None,
            (Origin::Ours { unedited: true }, Some(_)) | (Origin::Theirs, None) => None,
            (Origin::Ours { unedited: true }, None) => {
                stale.push(path);
                None
            }
            (Origin::Ours { unedited: false }, new) if force => {
                if new.is_none() {
                    stale.push(path);
                }
                None
            }
            (Origin::Ours { unedited: false }, _) => Some("edited since cargo xtask helm wrote it"),
            (Origin::Theirs, Some(_)) => (!force).then_some("not written by cargo xtask helm"),
        };
        if let Some(reason) = conflict {
            conflicts.push(format!("{} ({reason})", relative.display()));
        }
    }
    if !conflicts.is_empty() {
        bail!(
            "nothing written: these files of {} would be overwritten or deleted:\n  {}\n\
             Make the change in config/ (it then reaches the installer and the chart), move \
             a template of your own elsewhere, or run again with --force to overwrite them.",
            chart_dir.display(),
            conflicts.join("\n  ")
        );
    }
    Ok(stale)
}

/// Every file below `dir` (none when it does not exist).
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error).with_context(|| format!("reading {}", dir.display())),
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

// ---------------------------------------------------------------------------------------
// values.yaml and Chart.yaml.
// ---------------------------------------------------------------------------------------

/// What the values of the manager default to: what config/default gives its container.
struct ManagerDefaults {
    replicas: Value,
    repository: String,
    tag: String,
    pull_policy: String,
    resources: Value,
}

impl ManagerDefaults {
    fn of(objects: &[Value]) -> Result<ManagerDefaults> {
        let managers: Vec<(Value, Map<String, Value>)> = objects
            .iter()
            .filter(|object| kind(object) == "Deployment")
            .filter_map(|deployment| {
                let mut deployment = deployment.clone();
                let replicas = deployment["spec"]["replicas"].take();
                manager_container(&mut deployment).map(|container| (replicas, container.clone()))
            })
            .collect();
        let [(replicas, container)] = managers.as_slice() else {
            bail!(
                "config/default must render exactly one Deployment with a `{MANAGER_CONTAINER}` \
                 container: the chart's values configure it"
            );
        };
        let image = container["image"].as_str().unwrap_or_default();
        let (repository, tag) = split_image(image);
        Ok(ManagerDefaults {
            replicas: if replicas.is_null() {
                json!(1)
            } else {
                replicas.clone()
            },
            repository: repository.to_owned(),
            tag: tag.to_owned(),
            pull_policy: container["imagePullPolicy"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            resources: container.get("resources").cloned().unwrap_or(json!({})),
        })
    }
}

/// `repository[:tag]`: the tag is what follows the last `:` after the last `/`; an image
/// by digest (`repo@sha256:...`) keeps it all as the repository.
fn split_image(image: &str) -> (&str, &str) {
    let name_start = image.rfind('/').map_or(0, |at| at + 1);
    match image[name_start..].rfind(':') {
        Some(at) if !image.contains('@') => {
            let at = name_start + at;
            (&image[..at], &image[at + 1..])
        }
        _ => (image, ""),
    }
}

/// The top-level keys of the values that `templates` read (`.Values.<key>`): values.yaml
/// offers those sections only.
fn values_read(templates: &BTreeMap<PathBuf, String>) -> BTreeSet<&str> {
    templates
        .values()
        .flat_map(|text| text.split(".Values.").skip(1))
        .filter_map(|after| after.split(|c: char| !c.is_ascii_alphanumeric()).next())
        .collect()
}

/// A top-level section of values.yaml: its comment, key and defaults.
struct Section {
    comment: &'static str,
    key: &'static str,
    value: Value,
}

/// Values kept whole (not merged key by key): a user may set them to anything.
const OPAQUE: &[&[&str]] = &[&["manager", "resources"]];

fn default_values(manager: &ManagerDefaults, rendered: &Rendered) -> Vec<Section> {
    let included = |key| json!({ "enabled": rendered.included.contains(key) });
    vec![
        Section {
            comment: "The manager Deployment: its replicas, image and container resources.",
            key: "manager",
            value: json!({
                "replicas": manager.replicas,
                "image": {
                    "repository": manager.repository,
                    "tag": manager.tag,
                    "pullPolicy": manager.pull_policy,
                },
                "resources": manager.resources,
            }),
        },
        Section {
            comment: "Leader election: the manager's --leader-elect, and the Role it needs.",
            key: "leaderElection",
            value: json!({ "enabled": true }),
        },
        Section {
            comment: "The metrics endpoint: --metrics-bind-address, its Service, and the roles\n\
                      # that authenticate and authorize scrapers.",
            key: "metrics",
            value: json!({ "enabled": true }),
        },
        Section {
            comment: "The admission and conversion webhooks: their configurations, Service and\n\
                      # server flags, and the CRDs' conversion. Off, the manager runs with\n\
                      # --webhook-port=-1, which switches its webhook server off.",
            key: "webhook",
            value: json!({ "enabled": true }),
        },
        Section {
            comment: "cert-manager issues the webhook and metrics certificates and injects the\n\
                      # webhook CA. Off, provide the webhook-server-cert Secret and the CA bundles;\n\
                      # metrics are then served with a self-signed certificate.",
            key: "certManager",
            value: json!({ "enabled": true }),
        },
        Section {
            comment: "A ServiceMonitor for the Prometheus Operator (config/prometheus).",
            key: "prometheus",
            value: included("prometheus"),
        },
        Section {
            comment: "NetworkPolicies for the metrics and webhook ports (config/network-policy).",
            key: "networkPolicy",
            value: included("networkPolicy"),
        },
        Section {
            comment: "Keep the CRDs on `helm uninstall` (helm.sh/resource-policy: keep): deleting\n\
                      # a CRD deletes every object of its kind.",
            key: "crd",
            value: json!({ "keep": true }),
        },
    ]
}

const VALUES_HEADER: &str = "# The chart's default values. `cargo xtask helm` keeps what you set \
                             here: it only adds\n# the keys that are missing.\n";

fn section_text(section: &Section) -> String {
    format!(
        "# {}\n{}",
        section.comment,
        kubebuilder::yaml::to_yaml(&json!({ section.key: section.value }))
    )
}

fn values_text(sections: &[Section]) -> String {
    let sections: Vec<String> = sections.iter().map(section_text).collect();
    format!("{VALUES_HEADER}\n{}", sections.join("\n"))
}

/// The paths of the values the chart reads, with their defaults.
fn leaves(sections: &[Section]) -> Vec<(Vec<String>, Value)> {
    fn walk(path: Vec<String>, value: &Value, out: &mut Vec<(Vec<String>, Value)>) {
        let opaque = OPAQUE.iter().any(|opaque| *opaque == path.as_slice());
        match value {
            Value::Object(map) if !opaque => {
                for (key, value) in map {
                    walk([path.clone(), vec![key.clone()]].concat(), value, out);
                }
            }
            _ => out.push((path, value.clone())),
        }
    }
    let mut out = Vec::new();
    for section in sections {
        walk(vec![section.key.to_owned()], &section.value, &mut out);
    }
    out
}

/// What a run does to values.yaml.
enum ValuesUpdate {
    /// There was none: the defaults, with their comments.
    New(String),
    /// The user's file with the keys it lacked inserted.
    Merged(String),
    /// The user's file has every key: left byte for byte.
    Kept,
}

fn update_values(path: &Path, sections: &[Section]) -> Result<ValuesUpdate> {
    Ok(match read_if_exists(path)? {
        None => ValuesUpdate::New(values_text(sections)),
        Some(existing) => match merge_values(&existing, sections)? {
            Some(merged) => ValuesUpdate::Merged(merged),
            None => ValuesUpdate::Kept,
        },
    })
}

/// `existing` with the values it lacks added, or `None` when it lacks none (it is kept
/// byte for byte). Fails on a value of the wrong shape or a mapping it cannot add to.
fn merge_values(existing: &str, sections: &[Section]) -> Result<Option<String>> {
    let user: Value = serde_saphyr::from_str(existing).context("values.yaml is not valid YAML")?;
    let user = if user.is_null() { json!({}) } else { user };
    let mut missing: Vec<(Vec<String>, String)> = Vec::new();
    for (path, _) in leaves(sections) {
        if let Some(gap) = first_missing(&user, &path)?
            && !missing.contains(&gap)
        {
            missing.push(gap);
        }
    }
    if missing.is_empty() {
        return Ok(None);
    }
    let mut text = existing.to_owned();
    for (parent, key) in &missing {
        let top = parent.first().unwrap_or(key);
        let section = sections.iter().find(|s| s.key == top.as_str());
        let section = section.context("every value belongs to a section")?;
        text = insert_value(&text, parent, key, section)?;
    }
    let merged: Value = serde_saphyr::from_str(&text).context("values.yaml after merging")?;
    for (path, _) in leaves(sections) {
        if first_missing(&merged, &path)?.is_some() {
            bail!("values.yaml: could not add `{}`", path.join("."));
        }
    }
    Ok(Some(text))
}

/// The deepest mapping on `path` that exists in `values` and the key it lacks, if any.
fn first_missing(values: &Value, path: &[String]) -> Result<Option<(Vec<String>, String)>> {
    let mut at = values;
    for (depth, key) in path.iter().enumerate() {
        let Some(map) = at.as_object() else {
            bail!(
                "values.yaml: `{}` is {}, where the chart expects a mapping holding `{key}`",
                if depth == 0 {
                    "the document".to_owned()
                } else {
                    path[..depth].join(".")
                },
                serde_json::to_string(at)?
            );
        };
        match map.get(key) {
            Some(value) => at = value,
            None => return Ok(Some((path[..depth].to_owned(), key.clone()))),
        }
    }
    Ok(None)
}

/// `text` with `key` (and its defaults from `section`) inserted into the block mapping
/// at `parent` (at the end of the file for a top-level section).
fn insert_value(text: &str, parent: &[String], key: &str, section: &Section) -> Result<String> {
    if parent.is_empty() {
        let separator = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        return Ok(format!("{text}{separator}\n{}", section_text(section)));
    }
    let default = parent[1..]
        .iter()
        .fold(&section.value, |value, step| &value[step.as_str()]);
    let default = &default[key];
    let entry = kubebuilder::yaml::to_yaml(&json!({ key: default }));
    let lines: Vec<&str> = text.lines().collect();
    let Some((line, indent)) = find_block(&lines, parent) else {
        bail!(
            "values.yaml lacks `{}.{key}`, and `{}` is not a block mapping to add it to; add it \
             by hand:\n{entry}",
            parent.join("."),
            parent.join(".")
        );
    };
    let mut out: Vec<String> = lines[..=line].iter().map(|l| (*l).to_owned()).collect();
    out.extend(entry.lines().map(|l| format!("{}{l}", " ".repeat(indent))));
    out.extend(lines[line + 1..].iter().map(|l| (*l).to_owned()));
    Ok(out.join("\n") + "\n")
}

/// The line of the block mapping at `path` and the indentation of its entries.
fn find_block(lines: &[&str], path: &[String]) -> Option<(usize, usize)> {
    let content = |line: &str| !line.trim().is_empty() && !line.trim_start().starts_with('#');
    let indent_of = |line: &str| line.len() - line.trim_start().len();
    let (mut start, mut end, mut indent, mut found) = (0, lines.len(), 0, None);
    for key in path {
        let at = (start..end).find(|&i| {
            content(lines[i])
                && indent_of(lines[i]) == indent
                && lines[i]
                    .trim_start()
                    .strip_prefix(key.as_str())
                    .is_some_and(|rest| {
                        let rest = rest.strip_prefix(':').map(str::trim);
                        rest.is_some_and(|rest| rest.is_empty() || rest.starts_with('#'))
                    })
        })?;
        let block_end = (at + 1..end)
            .find(|&i| content(lines[i]) && indent_of(lines[i]) <= indent)
            .unwrap_or(end);
        let child = (at + 1..block_end).find(|&i| content(lines[i]))?;
        (start, end, indent) = (at + 1, block_end, indent_of(lines[child]));
        found = Some((at, indent));
    }
    found
}

/// Chart.yaml: the chart's identity rewritten, every other key as the user left it.
fn chart_yaml(name: &str, manager: &ManagerDefaults, existing: Option<&str>) -> Result<String> {
    let mut chart = json!({
        "description": format!("A Helm chart to deploy {name}, made from its config/default"),
        "version": "0.1.0",
    });
    if !manager.tag.is_empty() {
        chart["appVersion"] = json!(manager.tag);
    }
    if let Some(existing) = existing {
        let user: Value =
            serde_saphyr::from_str(existing).context("Chart.yaml is not valid YAML")?;
        let user = user.as_object().context("Chart.yaml is not a mapping")?;
        for (key, value) in user {
            chart[key] = value.clone();
        }
    }
    chart["apiVersion"] = json!("v2");
    chart["name"] = json!(name);
    chart["type"] = json!("application");
    Ok(format!(
        "# Written by `cargo xtask helm`, which rewrites apiVersion, name and type on every run\n\
         # and keeps the other keys as you set them.\n{}",
        kubebuilder::yaml::to_yaml(&chart)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_template_text_at_their_indentation() {
        let mut splices = Splices::default();
        let name = splices.add(Splice::Text("{{ .Release.Namespace }}".into()));
        let guarded = splices.add(Splice::If {
            condition: ".Values.on".into(),
            content: json!([{ "a": name.clone() }]),
        });
        let object = json!({ "list": [guarded, "kept {{"], "ns": name });
        assert_eq!(
            splices.render(&object),
            "list:\n{{- if .Values.on }}\n- a: \"{{ .Release.Namespace }}\"\n{{- end }}\n\
             - kept {{ \"{{\" }}\nns: \"{{ .Release.Namespace }}\"\n"
        );
    }

    #[test]
    fn namespaces_and_prefixed_names_are_templated_inside_strings() {
        let layout = Layout {
            namespace: Some("p-system".into()),
            name_prefix: Some("p-".into()),
            resources: vec![],
        };
        let objects = [json!({ "kind": "Service", "metadata": { "name": "p-svc" } })];
        let names = Names::new("p", &layout, &objects);
        assert_eq!(
            names.template("p-svc.p-system.svc").unwrap(),
            "{{ include \"p.resourceName\" (dict \"suffix\" \"svc\" \"context\" $) }}\
             .{{ .Release.Namespace }}.svc"
        );
        assert_eq!(names.template("p-other.p-systems"), None);
    }

    #[test]
    fn a_name_that_leaves_no_room_for_the_release_is_refused() {
        let layout = Layout {
            namespace: Some("p-system".into()),
            name_prefix: Some("p-".into()),
            resources: vec![],
        };
        let fits = format!("p-{}", "a".repeat(MAX_SUFFIX));
        let too_long = format!("p-{}", "b".repeat(MAX_SUFFIX + 1));
        let objects = [fits, too_long.clone()]
            .map(|name| json!({ "kind": "ClusterRole", "metadata": { "name": name } }));
        assert!(
            Names::new("p", &layout, &objects[..1])
                .check_lengths()
                .is_ok()
        );
        let error = Names::new("p", &layout, &objects)
            .check_lengths()
            .unwrap_err();
        assert!(error.to_string().contains(&too_long[2..]), "{error}");
        assert!(
            !error.to_string().contains(&"a".repeat(MAX_SUFFIX)),
            "{error}"
        );
    }

    #[test]
    fn an_edit_is_told_from_a_generated_file() {
        let text = with_checksum("kind: Service\n");
        assert!(matches!(origin(&text), Origin::Ours { unedited: true }));
        let edited = text.replace("Service", "ConfigMap");
        assert!(matches!(origin(&edited), Origin::Ours { unedited: false }));
        assert!(matches!(origin("kind: Service\n"), Origin::Theirs));
    }

    #[test]
    fn images_split_into_repository_and_tag() {
        assert_eq!(split_image("controller:latest"), ("controller", "latest"));
        assert_eq!(
            split_image("host:5000/team/ctl"),
            ("host:5000/team/ctl", "")
        );
        assert_eq!(split_image("ctl@sha256:abc"), ("ctl@sha256:abc", ""));
    }

    fn sections() -> Vec<Section> {
        vec![
            Section {
                comment: "m",
                key: "manager",
                value: json!({ "replicas": 1, "image": { "tag": "v1" }, "resources": { "a": 1 } }),
            },
            Section {
                comment: "w",
                key: "webhook",
                value: json!({ "enabled": true }),
            },
        ]
    }

    #[test]
    fn missing_values_are_inserted_keeping_the_rest_of_the_file() {
        let existing = "manager:\n  # mine\n  replicas: 3\n  resources: {}\n";
        let merged = merge_values(existing, &sections()).unwrap().unwrap();
        assert_eq!(
            merged,
            "manager:\n  image:\n    tag: v1\n  # mine\n  replicas: 3\n  resources: {}\n\
             \n# w\nwebhook:\n  enabled: true\n"
        );
        assert_eq!(merge_values(&merged, &sections()).unwrap(), None);
    }

    #[test]
    fn values_of_the_wrong_shape_are_refused() {
        let error = merge_values("manager: 3\n", &sections()).unwrap_err();
        assert!(error.to_string().contains("`manager` is 3"), "{error}");
        let error = merge_values("manager: {replicas: 2}\n", &sections()).unwrap_err();
        assert!(error.to_string().contains("add it by hand"), "{error}");
    }
}

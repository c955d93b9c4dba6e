//! The `PROJECT` file at the workspace root, kubebuilder's record of a project: its domain
//! and name, and per kind what was scaffolded (API, controller, webhooks). `create api` and
//! `create webhook` read it to know the domain and what exists, and record what they add.

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::names::{Kind, plural};

/// The file's name, at the workspace root.
pub const FILE: &str = "PROJECT";

/// The layout (kubebuilder: the plugin) that scaffolded the project.
pub const LAYOUT: &str = "kubebuilder-rs/v1";

/// The version of kubebuilder's PROJECT format these fields follow.
const FORMAT_VERSION: &str = "3";

const HEADER: &str = "\
# The project as `cargo xtask init`, `create api` and `create webhook` record it, in the
# format of kubebuilder's PROJECT file: they read it for the domain and the kinds that
# exist, and add to it what they scaffold.
";

/// The whole file; field names are kubebuilder's (camelCase in the file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Project {
    /// The options of controller-gen's `crd` generator the manifests are rendered with
    /// (kubebuilder keeps them on the Makefile's controller-gen line); `cargo xtask
    /// manifests`' flags add to them.
    #[serde(default, skip_serializing_if = "CrdOptions::is_default")]
    pub crd: CrdOptions,
    /// The domain every API group is under (`init --domain`): group `batch` of domain
    /// `tutorial.kubebuilder.io` is `batch.tutorial.kubebuilder.io`.
    pub domain: String,
    /// The plugins that scaffolded the project: [`LAYOUT`] alone (kubebuilder:
    /// `go.kubebuilder.io/v4`).
    pub layout: Vec<String>,
    /// Whether new kinds go under their group (`edit --multigroup`, kubebuilder's
    /// multi-group layout): `api/src/<group>/<version>/` and `controller/src/<group>/<kind>/`,
    /// so that the same kind may exist in several groups. Kinds created before keep their
    /// place (each version's `path` says where it is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multigroup: bool,
    /// Whether the manager watches and is granted only its own namespace (`init
    /// --namespaced`): its RBAC is a Role, and `create api` scopes the reconciler's rules
    /// to that namespace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub namespaced: bool,
    /// What the plugins of `create api --plugins` record, by plugin (kubebuilder's
    /// `plugins`).
    #[serde(default, skip_serializing_if = "Plugins::is_empty")]
    pub plugins: Plugins,
    /// The project's name (`init --name`), a DNS label: config/ deploys into namespace
    /// `<name>-system`, with `<name>-` as the name prefix and `app.kubernetes.io/name: <name>`.
    pub project_name: String,
    /// Every kind in every version, in the order they were scaffolded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// The PROJECT format's version: `"3"`, kubebuilder's current one.
    pub version: String,
}

/// controller-gen's `crd:` options, as PROJECT records them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdOptions {
    /// `crd:generateEmbeddedObjectMeta=true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub generate_embedded_object_meta: bool,
    /// `crd:maxDescLen=N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_desc_len: Option<usize>,
    /// `crd:omitToolVersion=true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub omit_tool_version: bool,
}

impl CrdOptions {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// The options the CRDs are rendered with.
    pub fn rendering(&self) -> kubebuilder::crd::Options {
        kubebuilder::crd::Options {
            max_desc_len: self.max_desc_len,
            omit_tool_version: self.omit_tool_version,
            generate_embedded_object_meta: self.generate_embedded_object_meta,
        }
    }
}

/// One kind (group, version, kind) and what exists for it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Resource {
    /// `None` when `create api` scaffolded no types for this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<Api>,
    /// Whether `create api` scaffolded a controller for this kind (at this version).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub controller: bool,
    /// One of Kubernetes' kinds (k8s-openapi's), with a controller only
    /// (`create api --resource=false`, as kubebuilder's core types).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub core: bool,
    /// The domain of the kind's group (the project's, for the kinds it scaffolds; none for
    /// Kubernetes' groups without one, such as `apps`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Another project's kind, with a controller only (`create api --external-api-path`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// The API group without the domain (`batch`).
    pub group: String,
    /// The kind, in PascalCase (`CronJob`).
    pub kind: String,
    /// The Rust module of the API types (`api::v1`, `api::ship::v1` in the multigroup
    /// layout, `k8s_openapi::api::apps::v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Set only when `--plural` overrode the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plural: Option<String>,
    /// The API version (`v1`).
    pub version: String,
    /// `None` until `create webhook` scaffolds one for this version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhooks: Option<Webhooks>,
}

/// The API types `create api` scaffolded for a version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Api {
    /// The `apiextensions.k8s.io` version of the CRD: always `v1`.
    pub crd_version: String,
    /// Whether the kind is namespaced (`false`: cluster-scoped, `create api --namespaced=false`).
    pub namespaced: bool,
    /// `create api --ssa`: the kind's types have apply configurations.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ssa: bool,
}

/// The plugins' records, each under its key as kubebuilder keys them (`<name>/<version>`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugins {
    /// The kinds `create api --plugins deploy-image/v1-alpha` scaffolded, with its options
    /// (kubebuilder's `deploy-image.go.kubebuilder.io/v1-alpha`).
    #[serde(
        rename = "deploy-image.kubebuilder-rs/v1-alpha",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub deploy_image: Option<DeployImage>,
}

impl Plugins {
    fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// The deploy-image plugin's record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeployImage {
    /// The kinds it scaffolded, in the order it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<DeployImageResource>,
}

/// A kind the deploy-image plugin scaffolded, and how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeployImageResource {
    /// The domain of the kind's group.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// The API group without the domain.
    pub group: String,
    /// The kind, in PascalCase.
    pub kind: String,
    /// The options of `create api`.
    pub options: DeployImageOptions,
    /// The API version.
    pub version: String,
}

/// The options a kind was scaffolded with, as given (kubebuilder keeps them as strings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeployImageOptions {
    /// `--image-container-command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_command: Option<String>,
    /// `--image-container-port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_port: Option<String>,
    /// `--image`.
    pub image: String,
    /// `--run-as-user`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_as_user: Option<String>,
}

/// The webhooks `create webhook` scaffolded for a version.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Webhooks {
    /// A mutating (defaulting) webhook (`--defaulting`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defaulting: bool,
    /// A validating webhook (`--programmatic-validation`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub validation: bool,
    /// Conversion through this version (the hub) from each of `spoke`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conversion: bool,
    /// The versions that convert through this one (`--spoke`); empty without `conversion`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spoke: Vec<String>,
    /// The `admissionregistration.k8s.io` version of the configurations: always `v1`.
    pub webhook_version: String,
}

impl Project {
    /// A project with no kinds yet, as `init` records it.
    pub fn new(domain: &str, project_name: &str) -> Self {
        Self {
            crd: CrdOptions::default(),
            domain: domain.to_owned(),
            layout: vec![LAYOUT.to_owned()],
            multigroup: false,
            namespaced: false,
            plugins: Plugins::default(),
            project_name: project_name.to_owned(),
            resources: Vec::new(),
            version: FORMAT_VERSION.to_owned(),
        }
    }

    /// Reads and checks a PROJECT file's text.
    pub fn parse(text: &str) -> Result<Self> {
        let project: Project =
            serde_saphyr::from_str(text).context("PROJECT is not a valid project file")?;
        if project.layout != [LAYOUT] {
            bail!(
                "PROJECT has layout {:?}; cargo xtask scaffolds the {LAYOUT} layout only",
                project.layout
            );
        }
        Ok(project)
    }

    /// The namespace a namespaced project's manager is granted its rules in (its Roles'):
    /// `<name>-system`, where config/ deploys it. `None` unless the project is namespaced.
    pub fn manager_namespace(&self) -> Option<String> {
        self.namespaced
            .then(|| format!("{}-system", self.project_name))
    }

    /// The file's text, keys sorted as the manifests are.
    pub fn to_yaml(&self) -> String {
        let value = serde_json::to_value(self).expect("a project always serialises");
        format!("{HEADER}{}", kubebuilder::yaml::to_yaml(&value))
    }

    /// The entries of `group`/`kind` in this project's domain, one per version.
    pub fn versions_of<'a>(
        &'a self,
        group: &str,
        kind: &str,
    ) -> impl Iterator<Item = &'a Resource> {
        self.resources.iter().filter(move |resource| {
            resource.domain == self.domain && resource.group == group && resource.kind == kind
        })
    }

    /// The entry of `group`/`version`/`kind` in this project's domain.
    pub fn resource(&self, group: &str, version: &str, kind: &str) -> Option<&Resource> {
        self.versions_of(group, kind)
            .find(|resource| resource.version == version)
    }

    /// The entry of `group`/`version`/`kind`, added if missing.
    pub fn resource_mut(&mut self, group: &str, version: &str, kind: &str) -> &mut Resource {
        let position = self.resources.iter().position(|resource| {
            resource.domain == self.domain
                && resource.group == group
                && resource.version == version
                && resource.kind == kind
        });
        let index = position.unwrap_or_else(|| {
            self.resources.push(Resource {
                api: None,
                controller: false,
                core: false,
                domain: self.domain.clone(),
                external: false,
                group: group.to_owned(),
                kind: kind.to_owned(),
                path: None,
                plural: None,
                version: version.to_owned(),
                webhooks: None,
            });
            self.resources.len() - 1
        });
        &mut self.resources[index]
    }
}

impl Resource {
    /// The kind as the scaffolds name it.
    pub fn kind(&self) -> Kind {
        Kind {
            group: self.group.clone(),
            domain: self.domain.clone(),
            version: self.version.clone(),
            kind: self.kind.clone(),
            plural: self.plural.clone().unwrap_or_else(|| plural(&self.kind)),
            namespaced: self.api.as_ref().is_none_or(|api| api.namespaced),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This repository's own PROJECT file.
    const OURS: &str = include_str!("../../../../PROJECT");

    #[test]
    fn this_repositorys_project_file_is_written_as_the_scaffolds_write_it() {
        let project = Project::parse(OURS).unwrap();
        assert_eq!(project.to_yaml(), OURS);
        let cronjob = project.resource("batch", "v1", "CronJob").unwrap();
        assert_eq!(cronjob.kind().full_group(), "batch.tutorial.kubebuilder.io");
        assert_eq!(cronjob.kind().plural, "cronjobs");
        assert!(cronjob.controller);
        assert_eq!(
            cronjob.webhooks,
            Some(Webhooks {
                defaulting: true,
                validation: true,
                conversion: true,
                spoke: vec!["v2".into()],
                webhook_version: "v1".into()
            })
        );
        let v2 = project.resource("batch", "v2", "CronJob").unwrap();
        assert!(!v2.controller);
        assert_eq!(v2.path.as_deref(), Some("api::v2"));
    }

    #[test]
    fn resources_are_added_once() {
        let mut project = Project::new("example.com", "fleet");
        project.resource_mut("ship", "v1", "Frigate").controller = true;
        project.resource_mut("ship", "v1", "Frigate").plural = Some("frigatten".into());
        assert_eq!(project.resources.len(), 1);
        let frigate = project.resource("ship", "v1", "Frigate").unwrap();
        assert!(frigate.controller);
        assert_eq!(frigate.kind().plural, "frigatten");
        assert!(frigate.kind().namespaced);
        assert_eq!(Project::parse(&project.to_yaml()).unwrap(), project);
    }

    #[test]
    fn plugin_records_are_kept_under_their_key_with_the_options_as_strings() {
        let mut project = Project::new("example.com", "fleet");
        assert!(!project.to_yaml().contains("plugins"));
        let memcached = DeployImageResource {
            domain: "example.com".into(),
            group: "cache".into(),
            kind: "Memcached".into(),
            options: DeployImageOptions {
                container_command: Some("memcached,-v".into()),
                container_port: Some("11211".into()),
                image: "memcached:1.6.26-alpine3.19".into(),
                run_as_user: Some("1001".into()),
            },
            version: "v1alpha1".into(),
        };
        project.plugins.deploy_image = Some(DeployImage {
            resources: vec![memcached],
        });
        let yaml = project.to_yaml();
        assert!(
            yaml.contains("\nplugins:\n  deploy-image.kubebuilder-rs/v1-alpha:\n    resources:\n"),
            "{yaml}"
        );
        assert_eq!(Project::parse(&yaml).unwrap(), project);
        // A plugin this version does not know is refused, as a field it does not know.
        let unknown = yaml.replace("deploy-image.kubebuilder-rs", "grafana.kubebuilder.io");
        assert!(Project::parse(&unknown).is_err());
    }

    #[test]
    fn other_layouts_and_unknown_fields_are_refused() {
        let go = OURS.replace(LAYOUT, "go.kubebuilder.io/v4");
        assert_eq!(
            Project::parse(&go).unwrap_err().to_string(),
            "PROJECT has layout [\"go.kubebuilder.io/v4\"]; cargo xtask scaffolds the \
             kubebuilder-rs/v1 layout only"
        );
        let typo = OURS.replace("projectName:", "projectname:");
        assert!(Project::parse(&typo).is_err());
    }
}

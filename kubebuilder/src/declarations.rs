//! Everything the attributes of a program's crates register, as the objects `cargo xtask
//! manifests` writes: the CRDs, the RBAC roles and the webhook configurations.
//!
//! The declarations are registered at link time, so only a binary that links the project's
//! `api` and `controller` crates sees them. A project keeps one such binary, small on
//! purpose (`xtask/declarations`: its `main` calls [`print_registered`]), and `cargo xtask
//! manifests` runs it and reads [`Declarations`] from its output. The xtask binary then
//! links neither crate: an edit to the API rebuilds them and that small binary, not xtask.

use std::fmt;
use std::io::Write as _;
use std::process::ExitCode;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::{Deserialize, Serialize};

use crate::{crd, rbac, webhook};

/// What the attributes declare, rendered: what the manifests are written from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Declarations {
    /// One CRD per kind, its API versions merged ([`crd::all`]).
    pub crds: Vec<CustomResourceDefinition>,
    /// The roles of the `#[kubebuilder::rbac]` rules under [`rbac::DEFAULT_ROLE_NAME`]
    /// ([`rbac::roles`]); none when no rule is declared.
    pub roles: Vec<rbac::GeneratedRole>,
    /// The configurations of the `#[kubebuilder::webhook]` declarations, named by the
    /// `#[kubebuilder::webhook_configuration]` ones ([`webhook::manifests`]).
    pub webhooks: webhook::Manifests,
}

/// Registered declarations that render no manifests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// Some kinds' versions do not merge into one CRD.
    Crds(Vec<crd::Error>),
    /// Two names for the same webhook configuration, or a webhook's patch that leaves no
    /// webhook.
    Webhook(webhook::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Crds(errors) => {
                f.write_str("the registered API versions do not merge into CRDs:")?;
                for error in errors {
                    write!(f, "\n{error}")?;
                }
                Ok(())
            }
            Error::Webhook(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl Declarations {
    /// The declarations registered by the crates linked into this binary.
    pub fn registered(options: &crd::Options) -> Result<Self, Error> {
        Ok(Self {
            crds: crd::all(options).map_err(Error::Crds)?,
            roles: rbac::roles(&rbac::registered(), rbac::DEFAULT_ROLE_NAME),
            webhooks: webhook::manifests(
                &webhook::registered(),
                &webhook::registered_configurations(),
            )
            .map_err(Error::Webhook)?,
        })
    }
}

/// The flag that passes [`crd::Options::max_desc_len`] (controller-gen's `crd:maxDescLen`).
pub const MAX_DESC_LEN_FLAG: &str = "--max-desc-len";

/// The flag that sets [`crd::Options::omit_tool_version`] (controller-gen's
/// `crd:omitToolVersion`).
pub const OMIT_TOOL_VERSION_FLAG: &str = "--omit-tool-version";

/// The flag that sets [`crd::Options::generate_embedded_object_meta`] (controller-gen's
/// `crd:generateEmbeddedObjectMeta`).
pub const GENERATE_EMBEDDED_OBJECT_META_FLAG: &str = "--generate-embedded-object-meta";

/// The `main` of a project's declarations binary: prints [`Declarations::registered`] as
/// JSON on standard output, or the reason there are none on standard error (and fails).
/// Its arguments, [`MAX_DESC_LEN_FLAG`] with a number, [`OMIT_TOOL_VERSION_FLAG`] and
/// [`GENERATE_EMBEDDED_OBJECT_META_FLAG`], are optional.
pub fn print_registered() -> ExitCode {
    let printed = options(std::env::args().skip(1)).and_then(|options| {
        let declarations = Declarations::registered(&options).map_err(|e| e.to_string())?;
        let mut stdout = std::io::stdout().lock();
        serde_json::to_writer(&mut stdout, &declarations)
            .map_err(|e| e.to_string())
            .and_then(|()| stdout.flush().map_err(|e| e.to_string()))
            .map_err(|e| format!("writing the declarations: {e}"))
    });
    match printed {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

/// The CRD options given on the declarations binary's command line.
fn options(mut args: impl Iterator<Item = String>) -> Result<crd::Options, String> {
    let mut options = crd::Options::default();
    while let Some(flag) = args.next() {
        match flag.as_str() {
            MAX_DESC_LEN_FLAG if options.max_desc_len.is_none() => {
                let value = args.next().ok_or_else(usage)?;
                let length = value
                    .parse()
                    .map_err(|_| format!("{MAX_DESC_LEN_FLAG} {value}: not a length"))?;
                options.max_desc_len = Some(length);
            }
            OMIT_TOOL_VERSION_FLAG if !options.omit_tool_version => {
                options.omit_tool_version = true;
            }
            GENERATE_EMBEDDED_OBJECT_META_FLAG if !options.generate_embedded_object_meta => {
                options.generate_embedded_object_meta = true;
            }
            _ => return Err(usage()),
        }
    }
    Ok(options)
}

fn usage() -> String {
    format!(
        "usage: declarations [{MAX_DESC_LEN_FLAG} N] [{OMIT_TOOL_VERSION_FLAG}] \
         [{GENERATE_EMBEDDED_OBJECT_META_FLAG}]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn args(line: &str) -> impl Iterator<Item = String> {
        line.split_whitespace().map(str::to_owned)
    }

    #[test]
    fn the_command_line_takes_each_crd_option_or_nothing() {
        assert_eq!(options(args("")).unwrap().max_desc_len, None);
        assert!(!options(args("")).unwrap().omit_tool_version);
        assert!(!options(args("")).unwrap().generate_embedded_object_meta);
        let all = options(args(
            "--omit-tool-version --max-desc-len 3 --generate-embedded-object-meta",
        ))
        .unwrap();
        assert_eq!(
            (
                all.max_desc_len,
                all.omit_tool_version,
                all.generate_embedded_object_meta
            ),
            (Some(3), true, true)
        );
        assert_eq!(
            options(args("--max-desc-len 40")).unwrap().max_desc_len,
            Some(40)
        );
        assert_eq!(
            options(args("--max-desc-len x")).unwrap_err(),
            "--max-desc-len x: not a length"
        );
        let wrongs = [
            "--max-desc-len",
            "--max-desc-len 1 2",
            "--other 1",
            "--omit-tool-version --omit-tool-version",
            "--generate-embedded-object-meta --generate-embedded-object-meta",
            "--max-desc-len 1 --max-desc-len 2",
        ];
        for wrong in wrongs {
            assert_eq!(
                options(args(wrong)).unwrap_err(),
                "usage: declarations [--max-desc-len N] [--omit-tool-version] \
                 [--generate-embedded-object-meta]",
                "{wrong}"
            );
        }
    }

    #[test]
    fn declarations_read_back_as_they_were_written() {
        let cluster = rbac::Rule {
            groups: Cow::Borrowed(&[Cow::Borrowed("batch")]),
            resources: Cow::Borrowed(&[Cow::Borrowed("jobs")]),
            resource_names: Cow::Borrowed(&[]),
            urls: Cow::Borrowed(&[]),
            verbs: Cow::Borrowed(&[Cow::Borrowed("get")]),
            namespace: None,
            role_name: None,
        };
        let namespaced = rbac::Rule {
            namespace: Some(Cow::Borrowed("watched")),
            ..cluster.clone()
        };
        let webhook = webhook::Webhook {
            name: Cow::Borrowed("mcronjob-v1.kb.io"),
            mutating: true,
            path: Some(Cow::Borrowed("/mutate")),
            failure_policy: Cow::Borrowed("Fail"),
            side_effects: Cow::Borrowed("None"),
            admission_review_versions: Cow::Borrowed(&[Cow::Borrowed("v1")]),
            ..crate::__private::webhook::INVALID
        };
        let declarations = Declarations {
            crds: Vec::new(),
            roles: rbac::roles(&[cluster, namespaced], rbac::DEFAULT_ROLE_NAME),
            webhooks: webhook::manifests(&[webhook], &[]).unwrap(),
        };
        let json = serde_json::to_string(&declarations).unwrap();
        assert_eq!(
            serde_json::from_str::<Declarations>(&json).unwrap(),
            declarations
        );
    }
}

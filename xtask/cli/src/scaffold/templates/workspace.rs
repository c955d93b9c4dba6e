//! The files of a new project (`cargo xtask init`), besides `config/`, the workspace
//! `Cargo.toml` (derived from this repository's, see `init.rs`) and `PROJECT`.
//!
//! Placeholders: `project_name`, `domain`, `leader_election_id`.

use std::collections::BTreeSet;

/// Each file's path and template.
pub const FILES: &[(&str, &str)] = &[
    (".gitignore", GITIGNORE),
    (".cargo/config.toml", CARGO_CONFIG),
    ("README.md", README),
    ("api/Cargo.toml", API_CARGO_TOML),
    ("api/src/lib.rs", API_LIB_RS),
    ("controller/Cargo.toml", CONTROLLER_CARGO_TOML),
    ("controller/src/lib.rs", CONTROLLER_LIB_RS),
    ("controller/src/main.rs", MAIN_RS),
    ("xtask/Cargo.toml", XTASK_CARGO_TOML),
    ("xtask/src/main.rs", XTASK_MAIN_RS),
    ("xtask/declarations/Cargo.toml", DECLARATIONS_CARGO_TOML),
    ("xtask/declarations/src/main.rs", DECLARATIONS_MAIN_RS),
    ("Dockerfile", DOCKERFILE),
    (".github/workflows/test.yml", TEST_WORKFLOW),
    (".github/workflows/test-e2e.yml", TEST_E2E_WORKFLOW),
];

/// The dependencies the project's crates take from the workspace (`name.workspace = true`
/// or `name = { workspace = true, … }` under a `[…dependencies]` table of their
/// manifests): the pins a new project needs.
pub fn member_dependencies() -> BTreeSet<&'static str> {
    let mut names = BTreeSet::new();
    for (_, manifest) in FILES
        .iter()
        .filter(|(path, _)| path.ends_with("Cargo.toml"))
    {
        let mut in_dependencies = false;
        for line in manifest.lines() {
            if line.starts_with('[') {
                in_dependencies = line.ends_with("dependencies]");
            } else if in_dependencies {
                let name = line
                    .strip_suffix(".workspace = true")
                    .or_else(|| Some(line.split_once(" = { workspace = true")?.0));
                names.extend(name);
            }
        }
    }
    names
}

const GITIGNORE: &str = "/target
/dist
";

const CARGO_CONFIG: &str = r#"[alias]
xtask = "run --package xtask --"
"#;

const README: &str = r#"# {{project_name}}

A Kubernetes operator made with kubebuilder for Rust: its APIs are Rust structs with
kubebuilder-style attributes (API groups `<group>.{{domain}}`), a manager runs their
reconcilers and webhooks, and `cargo xtask` renders and deploys the manifests, runs the
tests against a real control plane and runs the operator locally.

## Prerequisites

- Rust (stable, 1.89 or newer) with `rustfmt` and `clippy`.
- Go 1.26: the local control plane (kube-apiserver and etcd) is built from the Go module
  proxy on first use and cached under `~/.cache/kubebuilder-rs/`.

## From a new kind to a running operator

```sh
cargo xtask create api --group ship --version v1 --kind Frigate   # types, reconciler, sample
$EDITOR api/src/v1/frigate_types.rs controller/src/frigate/reconciler.rs
cargo xtask manifests   # CRDs, RBAC and webhook configurations into config/
cargo xtask run         # local control plane, CRDs, samples, and the manager in the foreground
cargo xtask create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation
cargo xtask test        # fmt, clippy, manifests --check and every test, against a real kube-apiserver
```

## Layout

| path | what |
|---|---|
| `PROJECT` | the project's domain and kinds, as `cargo xtask create` records them |
| `api/` | the API types, one module per version (`api/src/<version>/<kind>_types.rs`) |
| `controller/` | one module per kind (reconciler, webhooks) and the manager binary (`src/main.rs`) |
| `xtask/` | `cargo xtask …` |
| `xtask/declarations/` | what the attributes of `api` and `controller` declare, for `cargo xtask manifests` |
| `config/` | kustomize layout (kubebuilder go/v4); `cargo xtask manifests` writes the generated files |

## cargo xtask

| command | what it does |
|---|---|
| `create api --group G --version V --kind K` | a kind: its types, reconciler (with RBAC attributes), registration in the manager, sample; then `manifests` |
| `create webhook --group G --version V --kind K [--defaulting] [--programmatic-validation]` | the kind's admission webhooks, registered in the manager; then `manifests` |
| `manifests [--check]` | CRDs, RBAC roles and webhook configurations from the attributes; `--check` fails listing stale files |
| `run` | the manager against the current kubeconfig's cluster, or a local control plane when there is none |
| `test` | every test against a local control plane, several at once (the slow `#[ignore]` ones at the lowest CPU priority) |
| `install` / `uninstall` | the CRDs, in the current kubeconfig's cluster |
| `deploy [--image IMG]` / `undeploy` | everything `config/default` holds (cert-manager must be installed) |
| `build-installer [--image IMG]` | `config/default` rendered into `dist/install.yaml` |
| `envtest start` / `stop` | a long-lived local control plane |
"#;

const API_CARGO_TOML: &str = r#"[package]
name = "api"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true
description = "The APIs of the {{project_name}} operator as Rust types with kubebuilder attributes."

[dependencies]
k8s-openapi.workspace = true
kubebuilder.workspace = true

[dev-dependencies]
# The tests need a Kubernetes version (the library itself leaves the choice to binaries).
k8s-openapi = { workspace = true, features = ["v1_37"] }
serde_json.workspace = true
"#;

const API_LIB_RS: &str = r#"//! The APIs of the {{project_name}} operator (groups `<group>.{{domain}}`), one module per
//! version as kubebuilder lays out `api/<version>/`. `cargo xtask create api` adds a kind's
//! types; their attributes generate the root objects, their CRDs (registered for `cargo
//! xtask manifests`) and the serde and kube impls.

// +kubebuilder:scaffold:versions
"#;

const CONTROLLER_CARGO_TOML: &str = r#"[package]
name = "controller"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true
description = "The reconcilers and webhooks of the {{project_name}} operator, and its manager."

[dependencies]
anyhow.workspace = true
api.workspace = true
clap.workspace = true
# The `controller` binary needs a Kubernetes version (only this end-product crate picks one).
k8s-openapi = { workspace = true, features = ["v1_37"] }
kube.workspace = true
kubebuilder.workspace = true
kubebuilder-runtime.workspace = true
thiserror.workspace = true
tokio.workspace = true
# Logging: each reconcile runs in a span naming its object, which `tracing::info!` and
# friends inside a reconciler inherit.
tracing.workspace = true

[dev-dependencies]
kubebuilder-envtest.workspace = true
serde_json.workspace = true
"#;

const CONTROLLER_LIB_RS: &str = r#"//! The {{project_name}} operator: one module per kind with its reconciler and admission
//! webhooks, which the manager (`src/main.rs`) registers.

// +kubebuilder:scaffold:modules
"#;

/// The manager binary. This repository's `controller/src/main.rs` is this template
/// rendered for its project plus the CronJob's registrations (a test checks it).
pub const MAIN_RS: &str = r#"//! The manager of the {{project_name}} operator (kubebuilder's `cmd/main.go`): the
//! controllers and admission webhooks of its kinds on a manager with leader election,
//! probes and metrics. `cargo xtask create api` and `cargo xtask create webhook` register
//! new ones at the `+kubebuilder:scaffold` markers.

use anyhow::{Context as _, Result};
use clap::Parser;
use kubebuilder_runtime::{Manager, ManagerArgs, healthz};

/// The leader-election Lease name, as kubebuilder derives it: a hash of the project
/// (`<domain>/<project name>`), then the domain.
const LEADER_ELECTION_ID: &str = "{{leader_election_id}}";

#[derive(Parser)]
#[command(
    name = "controller",
    about = "The {{project_name}} operator: runs its controllers and serves its admission webhooks"
)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    cli.manager.init_logging()?;
    let config = kube::Config::infer()
        .await
        .context("no cluster configured: set KUBECONFIG, write ~/.kube/config or run in a pod")?;
    let mut manager =
        Manager::from_config(config, cli.manager)?.leader_election_id(LEADER_ELECTION_ID);
    // +kubebuilder:scaffold:controllers
    // +kubebuilder:scaffold:webhooks
    manager = manager
        .add_healthz_check("healthz", healthz::ping)
        .add_readyz_check("readyz", healthz::ping);
    manager.run().await.context("the manager failed")
}
"#;

const XTASK_CARGO_TOML: &str = r#"[package]
name = "xtask"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true
description = "cargo xtask: manifests, test, run, install, deploy, create api, create webhook."

[dependencies]
anyhow.workspace = true
clap.workspace = true
k8s-openapi = { workspace = true, features = ["v1_37"] }
kubebuilder-cli.workspace = true
"#;

const XTASK_MAIN_RS: &str = r#"//! `cargo xtask …`: what kubebuilder's Makefile and CLI do, for this project (see
//! `cargo xtask --help`).

use clap::Parser as _;

fn main() -> anyhow::Result<()> {
    kubebuilder_cli::Cli::parse().run()
}
"#;

/// The binary `cargo xtask manifests` runs for the declarations of `api` and `controller`
/// (the `declarations` package); this repository's own is the same.
pub const DECLARATIONS_CARGO_TOML: &str = r#"[package]
name = "declarations"
version.workspace = true
edition.workspace = true
rust-version.workspace = true
license.workspace = true
publish.workspace = true
description = "Prints what the attributes of api and controller declare, for `cargo xtask manifests`."

# Only what links the declarations: `cargo xtask manifests` reads the sources of these crates,
# and builds this binary where that reading could differ from a build (or with `--build`);
# xtask itself links neither crate.
[dependencies]
api.workspace = true
controller.workspace = true
kubebuilder.workspace = true
"#;

/// See [`DECLARATIONS_CARGO_TOML`].
pub const DECLARATIONS_MAIN_RS: &str = r#"//! Prints the declarations that the attributes of `api` and `controller` register (CRD
//! versions, RBAC rules, webhooks) as JSON, for `cargo xtask manifests`.

// Linked for those declarations, which they register at link time; nothing is called by name.
extern crate api as _;
extern crate controller as _;

fn main() -> std::process::ExitCode {
    kubebuilder::declarations::print_registered()
}
"#;

/// The manager image for `docker build` / `podman build`, from the files `cargo xtask
/// docker-build` writes. This repository's `Dockerfile` is this file (a test checks it).
pub const DOCKERFILE: &str = r#"# The manager image for docker and podman users. `cargo xtask docker-build` builds the
# static manager binary, writes the image as an OCI archive without any daemon, and also
# writes its files into target/image/rootfs, which this file packs into the same image:
#
#   cargo xtask docker-build --image <image>
#   docker build -t <image> .          # or: podman build -t <image> .
#
# No base image: the manager is a static executable and the files it needs (CA
# certificates, the nonroot user) are in target/image/rootfs.
FROM scratch
COPY target/image/rootfs/ /
USER 65532:65532
ENTRYPOINT ["/manager"]
"#;

/// CI: the project's own tests on every push and pull request (kubebuilder's
/// `.github/workflows/test.yml`).
const TEST_WORKFLOW: &str = r#"# fmt, clippy, manifests --check and every test, against a real kube-apiserver and etcd
# (built from the Go module proxy on first use; the cache keeps them between runs).
name: Tests

on:
  push:
  pull_request:

jobs:
  test:
    name: cargo xtask test
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.26"
      - name: Rust with rustfmt and clippy
        run: rustup toolchain install stable --profile minimal --component rustfmt,clippy
      - name: The control plane and tools, built once
        uses: actions/cache@v4
        with:
          path: ~/.cache/kubebuilder-rs
          key: kubebuilder-rs-${{ runner.os }}-${{ hashFiles('Cargo.lock') }}
      - run: cargo xtask test
"#;

/// CI: the manager image on a real local node (kubebuilder's `.github/workflows/test-e2e.yml`,
/// which uses kind); the node needs root and installs its Debian/Ubuntu packages.
const TEST_E2E_WORKFLOW: &str = r#"# The manager image built, loaded on a local node (kubelet, containerd, runc on the runner),
# deployed from config/default and tested end to end.
name: E2E Tests

on:
  push:
  pull_request:

jobs:
  test-e2e:
    name: cargo xtask test-e2e
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-go@v5
        with:
          go-version: "1.26"
      - name: Rust
        run: rustup toolchain install stable --profile minimal
      - name: The node's binaries and tools, built once
        uses: actions/cache@v4
        with:
          path: ~/.cache/kubebuilder-rs
          key: kubebuilder-rs-e2e-${{ runner.os }}-${{ hashFiles('Cargo.lock') }}
      - name: cargo xtask test-e2e (as root, which the node needs)
        run: sudo --preserve-env=PATH,HOME,CARGO_HOME,RUSTUP_HOME,GOPATH,GOCACHE,GOMODCACHE "$(command -v cargo)" xtask test-e2e
"#;

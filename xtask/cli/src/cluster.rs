//! `cargo xtask cluster up|down|status|load`: the local node (kind's role), from
//! `kubebuilder_envtest::node`. `up` writes the node's context into the user's kubeconfig
//! (`KUBECONFIG`'s first file, else `~/.kube/config`) and makes it current, so that `run`,
//! `install` and `deploy` use the node; `down` removes that context again.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use kube::config::Kubeconfig;
use kubebuilder_envtest::node::{self, CONTEXT_NAME, Started, Status};

use crate::certmanager;
use crate::image;

/// The subcommands of `cargo xtask cluster`: kind's `create cluster`, `delete cluster` and
/// `load`, for a node on this machine.
#[derive(Subcommand)]
pub enum Command {
    /// Start the local node (or reuse the running one) and make it the kubeconfig's current context.
    Up {
        /// Also install cert-manager, which `deploy` of config/default needs: v1.11.5, built
        /// from its Go module (later releases' commands are Go modules the module proxy does
        /// not serve; `xtask/cli/certmanager/README.md`).
        #[arg(long)]
        cert_manager: bool,
    },
    /// Stop the node and remove everything it made; remove its kubeconfig context.
    Down,
    /// Show whether the node runs, its components and health.
    Status,
    /// Import an image into the node: a name `docker-build` built, or an OCI archive file
    /// (`podman save --format oci-archive`).
    Load {
        /// An image name (`controller:latest`) or the path of an OCI archive.
        image: String,
    },
}

/// Runs a `cargo xtask cluster` subcommand (`up` and `down` need root).
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Up { cert_manager } => up(cert_manager),
        Command::Down => down(),
        Command::Status => status(),
        Command::Load { image } => load(&image),
    }
}

fn up(with_cert_manager: bool) -> Result<()> {
    let (node, started) = node::up(&crate::workspace_root())?;
    match started {
        Started::New => eprintln!("xtask: the local node is up"),
        Started::Reused => eprintln!("xtask: the local node was running; reusing it"),
    }
    let path = user_kubeconfig_path()?;
    add_context(&path, &node.kubeconfig_path())?;
    eprintln!(
        "xtask: kubeconfig {} now uses context {CONTEXT_NAME} (the node's admin: {})",
        path.display(),
        node.kubeconfig_path().display()
    );
    if with_cert_manager {
        certmanager::install(&node)?;
    } else {
        eprintln!(
            "xtask: `deploy` of config/default needs cert-manager: `cargo xtask cluster up --cert-manager` installs it"
        );
    }
    Ok(())
}

fn down() -> Result<()> {
    let path = user_kubeconfig_path()?;
    node::down()?;
    remove_context(&path)
}

fn status() -> Result<()> {
    match node::status()? {
        Status::NotRunning => println!("no local node is running"),
        Status::Running {
            owner,
            components,
            health,
        } => {
            println!("local node of {}", owner.display());
            for (name, running) in components {
                println!(
                    "  {name:<24} {}",
                    if running { "running" } else { "NOT RUNNING" }
                );
            }
            match health {
                Ok(()) => println!("  healthy: the apiserver answers and the node is Ready"),
                Err(problem) => {
                    println!("  NOT HEALTHY: {problem} (`cargo xtask cluster down` cleans up)")
                }
            }
        }
    }
    Ok(())
}

/// `cluster load`: imports an image `docker-build` made (by name) or an OCI archive file.
pub(crate) fn load(reference: &str) -> Result<()> {
    let archive = if Path::new(reference).is_file() {
        PathBuf::from(reference)
    } else {
        let archive = image::archive_path(reference)?;
        if !archive.is_file() {
            bail!(
                "no image {reference}: it is neither an OCI archive file nor an image `cargo xtask \
                 docker-build` made (expected {}); build it with `cargo xtask docker-build --image {reference}`",
                archive.display()
            );
        }
        archive
    };
    let node = node::running()?;
    for loaded in node.load(&archive)? {
        println!("loaded {} ({})", loaded.name, loaded.digest);
    }
    Ok(())
}

/// The kubeconfig `up` writes to: the first file of `KUBECONFIG`, else `~/.kube/config`.
fn user_kubeconfig_path() -> Result<PathBuf> {
    if let Some(first) = std::env::var_os("KUBECONFIG")
        .and_then(|paths| std::env::split_paths(&paths).find(|p| !p.as_os_str().is_empty()))
    {
        return Ok(first);
    }
    let home = std::env::var_os("HOME").context("HOME is not set")?;
    Ok(PathBuf::from(home).join(".kube/config"))
}

/// Adds (or replaces) the node's cluster, user and context in the kubeconfig at `path`,
/// and makes the context current.
fn add_context(path: &Path, node_kubeconfig: &Path) -> Result<()> {
    let node = Kubeconfig::read_from(node_kubeconfig)?;
    let mut config = read_or_empty(path)?;
    without_node(&mut config);
    config.clusters.extend(node.clusters);
    config.auth_infos.extend(node.auth_infos);
    config.contexts.extend(node.contexts);
    config.current_context = Some(CONTEXT_NAME.to_owned());
    write(path, &config)
}

/// Removes the node's entries from the kubeconfig at `path` (and the file, when nothing
/// else is left in it).
fn remove_context(path: &Path) -> Result<()> {
    if !path.exists() {
        return Ok(());
    }
    let mut config = read_or_empty(path)?;
    let had_node = config.contexts.iter().any(|c| c.name == CONTEXT_NAME);
    without_node(&mut config);
    if config.clusters.is_empty() && config.contexts.is_empty() && config.auth_infos.is_empty() {
        fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    } else if had_node {
        write(path, &config)?;
    }
    Ok(())
}

fn without_node(config: &mut Kubeconfig) {
    config.clusters.retain(|c| c.name != CONTEXT_NAME);
    config.auth_infos.retain(|a| a.name != CONTEXT_NAME);
    config.contexts.retain(|c| c.name != CONTEXT_NAME);
    if config.current_context.as_deref() == Some(CONTEXT_NAME) {
        config.current_context = None;
    }
}

fn read_or_empty(path: &Path) -> Result<Kubeconfig> {
    if !path.exists() {
        return Ok(Kubeconfig {
            api_version: Some("v1".into()),
            kind: Some("Config".into()),
            ..Kubeconfig::default()
        });
    }
    Kubeconfig::read_from(path).with_context(|| format!("reading {}", path.display()))
}

fn write(path: &Path, config: &Kubeconfig) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let text = serde_saphyr::to_string(config).context("writing the kubeconfig as YAML")?;
    let staging = path.with_extension("partial");
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&staging)
        .with_context(|| format!("writing {}", staging.display()))?;
    file.write_all(text.as_bytes())?;
    fs::rename(&staging, path).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NODE: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: kubebuilder-rs-node\n  cluster:\n    server: https://127.0.0.1:6443\nusers:\n- name: kubebuilder-rs-node\n  user:\n    token: t\ncontexts:\n- name: kubebuilder-rs-node\n  context:\n    cluster: kubebuilder-rs-node\n    user: kubebuilder-rs-node\ncurrent-context: kubebuilder-rs-node\n";
    const OTHER: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: prod\n  cluster:\n    server: https://prod.example:6443\nusers:\n- name: me\n  user:\n    token: x\ncontexts:\n- name: prod\n  context:\n    cluster: prod\n    user: me\ncurrent-context: prod\n";

    #[test]
    fn the_node_context_is_added_and_removed_keeping_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("node.kubeconfig");
        fs::write(&node, NODE).unwrap();
        let user = dir.path().join("config");
        fs::write(&user, OTHER).unwrap();

        add_context(&user, &node).unwrap();
        add_context(&user, &node).unwrap();
        let merged = Kubeconfig::read_from(&user).unwrap();
        assert_eq!(merged.current_context.as_deref(), Some(CONTEXT_NAME));
        let names: Vec<&str> = merged.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["prod", CONTEXT_NAME]);

        remove_context(&user).unwrap();
        let restored = Kubeconfig::read_from(&user).unwrap();
        assert_eq!(restored.contexts.len(), 1);
        assert_eq!(restored.current_context, None);
        assert_eq!(restored.clusters[0].name, "prod");
    }

    #[test]
    fn a_kubeconfig_made_for_the_node_alone_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("node.kubeconfig");
        fs::write(&node, NODE).unwrap();
        let user = dir.path().join("kube/config");
        add_context(&user, &node).unwrap();
        assert!(user.exists());
        remove_context(&user).unwrap();
        assert!(!user.exists());
    }
}

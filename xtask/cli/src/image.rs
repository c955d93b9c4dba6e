//! `cargo xtask docker-build [--image IMG]`: kubebuilder's `make docker-build`, without a
//! Dockerfile or a daemon, the way `ko` builds Go images. The manager is built in release
//! mode as a static binary (glibc's static libc: no shared library to ship, and its
//! built-in `files` and `dns` resolvers still read the image's /etc/hosts and a pod's
//! resolv.conf), and written with CA certificates and a non-root user into an OCI archive
//! under `target/images/`, which `cargo xtask cluster load IMG` imports into the node.
//!
//! The archive is reproducible: the same binary gives the same digest.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, Result, bail};
use kubebuilder_envtest::image::{Image, normalize_reference};

/// The target the manager is built for; an explicit `--target` keeps the static build's
/// artifacts apart from the host's (build scripts and proc macros stay dynamic).
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The user the manager runs as: distroless's `nonroot`, numeric so that `runAsNonRoot`
/// can verify it.
const NONROOT: u32 = 65532;
/// Where `docker-build` also writes the image's files, which the Dockerfile copies.
pub const ROOTFS_DIR: &str = "target/image/rootfs";
/// Where Debian keeps the CA bundle the image carries (package ca-certificates).
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The options of `cargo xtask docker-build` (kubebuilder's `make docker-build IMG=...`).
#[derive(clap::Args)]
pub struct Args {
    /// The image's name (kubebuilder's IMG).
    #[arg(long, default_value = "controller:latest")]
    pub image: String,
}

/// Builds the manager and writes its image to [`archive_path`] and its files to
/// [`ROOTFS_DIR`].
pub fn run(args: Args) -> Result<()> {
    let root = crate::workspace_root();
    let name = normalize_reference(&args.image)?;
    let started = std::time::Instant::now();
    let binary = build_static_manager(&root)?;
    let image = manager_image(&binary, &root)?;
    let archive = archive_path(&args.image)?;
    let digest = image.write_archive(&name, &archive)?;
    // The same files for `docker build` / `podman build` with the project's Dockerfile.
    image.write_rootfs(&root.join(ROOTFS_DIR))?;
    let size = std::fs::metadata(&archive)?.len();
    eprintln!(
        "xtask: built {name} in {:.1} s: {digest}, {:.1} MiB, {}",
        started.elapsed().as_secs_f64(),
        size as f64 / 1024.0 / 1024.0,
        archive.display()
    );
    eprintln!(
        "xtask: load it into the local node with `cargo xtask cluster load {}`",
        args.image
    );
    Ok(())
}

/// Where `docker-build` keeps the archive of image `reference` (of the workspace it runs in).
pub fn archive_path(reference: &str) -> Result<PathBuf> {
    let name = normalize_reference(reference)?;
    let file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(crate::workspace_root()
        .join("target/images")
        .join(format!("{file}.tar")))
}

/// `cargo build --release` of the manager as a static executable; returns its path.
pub fn build_static_manager(root: &Path) -> Result<PathBuf> {
    let mut command = crate::cargo();
    command
        .current_dir(root)
        .args(["build", "--release", "--locked", "--target", TARGET])
        .args(["--package", "controller", "--bin", "controller"])
        .args(["--message-format", "json-render-diagnostics"])
        .env(
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
            "-C target-feature=+crt-static",
        )
        .stderr(Stdio::inherit());
    let output = command.output().context("running cargo build")?;
    if !output.status.success() {
        bail!("building the manager failed ({})", output.status);
    }
    let binary =
        crate::run::built_executable(&String::from_utf8_lossy(&output.stdout), "controller")
            .context("cargo build did not report the controller executable")?;
    ensure_static(&binary)?;
    ensure_no_test_hook(&binary)?;
    Ok(binary)
}

/// The variable of the runtime's crash hook, which only a build with its `faults` feature
/// compiles in (kubebuilder-runtime's rest_client.rs).
const CRASH_HOOK: &str = "KUBEBUILDER_CRASH_AFTER";

/// A manager that a variable could make SIGKILL itself has no place in an image.
fn ensure_no_test_hook(binary: &Path) -> Result<()> {
    if contains(&std::fs::read(binary)?, CRASH_HOOK.as_bytes()) {
        bail!(
            "{} has the fault tests' crash hook ({CRASH_HOOK}): a feature turned on \
             kubebuilder-runtime's `faults`",
            binary.display()
        );
    }
    Ok(())
}

fn contains(bytes: &[u8], part: &[u8]) -> bool {
    bytes.windows(part.len()).any(|window| window == part)
}

/// A dynamic executable would not start in an image without its libraries.
fn ensure_static(binary: &Path) -> Result<()> {
    // An ELF with a PT_INTERP program header asks for a dynamic loader.
    if contains(&std::fs::read(binary)?, b"/lib64/ld-linux-x86-64.so") {
        bail!(
            "{} is dynamically linked; the image needs a static executable",
            binary.display()
        );
    }
    Ok(())
}

/// The manager's image: `/manager`, CA certificates, the `nonroot` user and group, an
/// empty `/tmp`, labels naming the project and its source revision.
pub fn manager_image(binary: &Path, root: &Path) -> Result<Image> {
    let mut image = Image::new();
    image.copy("/manager", 0o755, binary)?;
    image
        .copy(
            "/etc/ssl/certs/ca-certificates.crt",
            0o644,
            Path::new(CA_BUNDLE),
        )
        .context("the image carries the machine's CA bundle (Debian package ca-certificates)")?;
    image
        .file(
            "/etc/passwd",
            0o644,
            format!("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{NONROOT}:{NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n"),
        )
        .file("/etc/group", 0o644, format!("root:x:0:\nnonroot:x:{NONROOT}:\n"))
        .dir("/home/nonroot", 0o700, NONROOT)
        .dir("/tmp", 0o1777, 0);
    image.user = Some(format!("{NONROOT}:{NONROOT}"));
    image.entrypoint = vec!["/manager".into()];
    image.env = vec![
        "PATH=/".into(),
        "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".into(),
    ];
    image.labels = labels(root);
    Ok(image)
}

fn labels(root: &Path) -> std::collections::BTreeMap<String, String> {
    let project = std::fs::read_to_string(root.join("PROJECT"))
        .ok()
        .and_then(|text| crate::scaffold::project::Project::parse(&text).ok())
        .map_or_else(|| "project".to_owned(), |project| project.project_name);
    let mut labels =
        std::collections::BTreeMap::from([("org.opencontainers.image.title".to_owned(), project)]);
    if let Some(revision) = git_revision(root) {
        labels.insert("org.opencontainers.image.revision".into(), revision);
    }
    labels
}

fn git_revision(root: &Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .current_dir(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manager_with_the_crash_hook_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let hooked = dir.path().join("hooked");
        std::fs::write(&hooked, b"\x7fELF...KUBEBUILDER_CRASH_AFTER...").unwrap();
        let error = ensure_no_test_hook(&hooked).unwrap_err().to_string();
        assert!(error.contains("crash hook"), "{error}");
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"\x7fELF...KUBEBUILDER_...").unwrap();
        ensure_no_test_hook(&plain).unwrap();
    }

    #[test]
    fn archives_are_named_after_the_normalised_image() {
        let path = archive_path("controller:latest").unwrap();
        assert!(
            path.ends_with("target/images/docker.io_library_controller_latest.tar"),
            "{}",
            path.display()
        );
        let path = archive_path("example.com/op:v1").unwrap();
        assert!(
            path.ends_with("target/images/example.com_op_v1.tar"),
            "{}",
            path.display()
        );
    }
}

//! Images on the node: nothing can be pulled (containerd's proxy is a closed port), so
//! every image is imported from an OCI archive: the pause image built here from the
//! Kubernetes module's `pause.c`, the manager image `docker-build` writes, or any archive a
//! user brings (`cargo xtask cluster load`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::layout;
use crate::assets;
use crate::image::{self, ArchivedImage, Image};

/// The pause program's release in the pinned Kubernetes module (`build/pause/Makefile`).
const PAUSE_VERSION: &str = "3.10.2";

/// The sandbox image's name: ours, not registry.k8s.io's, since it is built here.
pub fn sandbox_image() -> String {
    format!("localhost/kubebuilder-rs/pause:{PAUSE_VERSION}")
}

/// The pause image archive, built once (gcc -static, as upstream's Makefile does) and
/// cached beside the Kubernetes binaries.
pub fn pause_archive() -> Result<PathBuf> {
    let dir = assets::cache_root().join("node");
    let archive = dir.join(format!("pause-{PAUSE_VERSION}.tar"));
    if archive.is_file() {
        return Ok(archive);
    }
    fs::create_dir_all(&dir)?;
    let source = assets::go_module_source(
        &assets::go_module_dir(),
        "k8s.io/kubernetes",
        assets::KUBERNETES_VERSION,
    )?
    .join("build/pause/linux/pause.c");
    let binary = dir.join(format!("pause-{PAUSE_VERSION}"));
    let output = Command::new("gcc")
        .args(["-Os", "-Wall", "-Werror", "-static"])
        .arg(format!("-DVERSION=v{PAUSE_VERSION}"))
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .output()
        .context("running gcc (Debian package gcc)")?;
    if !output.status.success() {
        bail!(
            "building the pause image: gcc {} failed:\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let mut pause = Image::new();
    pause.copy("/pause", 0o755, &binary)?;
    pause.user = Some("65535:65535".into());
    pause.entrypoint = vec!["/pause".into()];
    pause.write_archive(&sandbox_image(), &archive)?;
    let _ = fs::remove_file(&binary);
    Ok(archive)
}

/// Images for tests, made from this machine's programs (nothing can be pulled): busybox
/// (Debian's static build; `sh`, `sleep`, `date`, `nc`, ...) and curl with its libraries.
#[derive(Clone, Copy, Debug)]
pub enum TestImage {
    /// busybox with `sh`, `sleep`, `nc` and a few more applets; `/bin/sh` is the entrypoint.
    Busybox,
    /// `/usr/bin/curl` and its libraries; curl is the entrypoint.
    Curl,
}

impl TestImage {
    /// The image's name on the node (a `localhost/` name: built here, never pulled).
    pub fn name(self) -> &'static str {
        match self {
            TestImage::Busybox => "localhost/kubebuilder-rs/busybox:debian",
            TestImage::Curl => "localhost/kubebuilder-rs/curl:debian",
        }
    }

    /// The image's archive, built once into the cache.
    pub fn archive(self) -> Result<PathBuf> {
        let dir = assets::cache_root().join("node");
        fs::create_dir_all(&dir)?;
        let archive = match self {
            TestImage::Busybox => dir.join("busybox.tar"),
            TestImage::Curl => dir.join("curl.tar"),
        };
        if archive.is_file() {
            return Ok(archive);
        }
        let mut image = Image::new();
        match self {
            TestImage::Busybox => {
                image.busybox(&[
                    "sh", "sleep", "date", "echo", "nc", "cat", "ls", "true", "false",
                ])?;
                image.dir("/tmp", 0o1777, 0);
                image.entrypoint = vec!["/bin/sh".into()];
            }
            TestImage::Curl => {
                image.copy_executable("/usr/bin/curl", Path::new("/usr/bin/curl"))?;
                image.entrypoint = vec!["/usr/bin/curl".into()];
            }
        }
        image.env = vec!["PATH=/bin:/usr/bin".into()];
        image.write_archive(self.name(), &archive)?;
        Ok(archive)
    }
}

/// `ctr` against the node's containerd, in the namespace the kubelet's images live in.
fn ctr() -> Command {
    let mut command = Command::new("ctr");
    command
        .arg("--address")
        .arg(layout::containerd_socket())
        // Without a timeout ctr waits 10 s when containerd is not there.
        .args(["--connect-timeout", "5s", "--namespace", "k8s.io"]);
    command
}

/// Imports every image of an OCI archive into the node and checks containerd lists each
/// under its name.
pub fn import(archive: &Path) -> Result<Vec<ArchivedImage>> {
    let images = image::archived_images(archive)?;
    let output = ctr()
        .args(["images", "import"])
        .arg(archive)
        .output()
        .context("running ctr")?;
    if !output.status.success() {
        bail!(
            "`ctr images import {}` failed: {}",
            archive.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let present = list()?;
    for image in &images {
        if !present.contains(&image.name) {
            bail!(
                "containerd did not list {} after importing {} (it lists: {})",
                image.name,
                archive.display(),
                present.join(", ")
            );
        }
    }
    Ok(images)
}

/// The names of the images on the node.
pub fn list() -> Result<Vec<String>> {
    let output = ctr()
        .args(["images", "list", "--quiet"])
        .output()
        .context("running ctr")?;
    if !output.status.success() {
        bail!(
            "`ctr images list` failed (is the node up?): {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|name| !name.starts_with("sha256:"))
        .map(str::to_owned)
        .collect())
}

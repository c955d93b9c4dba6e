//! OCI image archives without a container engine, the way `ko` builds Go images: the
//! files of one layer, a config and a manifest written straight into an `oci-archive`
//! (a tar of an OCI image layout), which `ctr images import` loads into the node.
//!
//! Archives are reproducible: entries are sorted, every timestamp is the epoch, owners are
//! numeric, and the gzip stream carries no name or time, so the same files give the same
//! digest.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
const LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// The annotation containerd reads an imported image's full name from.
const CONTAINERD_NAME_ANNOTATION: &str = "io.containerd.image.name";
/// The OCI layout's own name annotation (a tag, or a full name as podman writes it).
const OCI_REF_ANNOTATION: &str = "org.opencontainers.image.ref.name";

/// One file system entry of a layer.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    Dir {
        mode: u32,
        owner: u32,
    },
    File {
        mode: u32,
        owner: u32,
        contents: Vec<u8>,
    },
    Symlink {
        target: String,
    },
}

/// The files of an image (one layer) and how it runs.
#[derive(Clone, Debug, Default)]
pub struct Image {
    /// Absolute paths without the leading `/`, in tar order once sorted.
    entries: BTreeMap<String, Entry>,
    /// `user[:group]`, numeric so that `runAsNonRoot` can check it.
    pub user: Option<String>,
    /// The config's `Entrypoint`: the program and its arguments (Dockerfile `ENTRYPOINT`).
    pub entrypoint: Vec<String>,
    /// The config's `Env`, as `NAME=value` (Dockerfile `ENV`).
    pub env: Vec<String>,
    /// The config's `Labels` (Dockerfile `LABEL`).
    pub labels: BTreeMap<String, String>,
}

impl Image {
    /// An empty image (`FROM scratch`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a directory (and its missing parents, `0755` root-owned).
    pub fn dir(&mut self, path: &str, mode: u32, owner: u32) -> &mut Self {
        let path = self.parents_of(path);
        self.entries.insert(path, Entry::Dir { mode, owner });
        self
    }

    /// Adds a regular file with `contents` (root-owned).
    pub fn file(&mut self, path: &str, mode: u32, contents: impl Into<Vec<u8>>) -> &mut Self {
        let path = self.parents_of(path);
        let contents = contents.into();
        self.entries.insert(
            path,
            Entry::File {
                mode,
                owner: 0,
                contents,
            },
        );
        self
    }

    /// Adds a regular file read from `source` on this machine.
    pub fn copy(&mut self, path: &str, mode: u32, source: &Path) -> Result<&mut Self> {
        let contents = fs::read(source).with_context(|| format!("reading {}", source.display()))?;
        Ok(self.file(path, mode, contents))
    }

    /// Adds an executable of this machine at `path` with the shared libraries it loads
    /// (as `ldd` resolves them, at the same paths), so that a dynamically linked program
    /// runs in an image of its own, distroless-style.
    pub fn copy_executable(&mut self, path: &str, source: &Path) -> Result<&mut Self> {
        self.copy(path, 0o755, source)?;
        for library in shared_libraries(source)? {
            let library_path = library.to_string_lossy().into_owned();
            self.copy(&library_path, 0o755, &library)?;
        }
        Ok(self)
    }

    /// Adds this machine's busybox (Debian's static build) as `/bin/busybox`, with each of
    /// `applets` linked to it in `/bin`.
    pub fn busybox(&mut self, applets: &[&str]) -> Result<&mut Self> {
        self.copy("/bin/busybox", 0o755, Path::new("/bin/busybox"))?;
        for applet in applets {
            self.symlink(&format!("/bin/{applet}"), "busybox");
        }
        Ok(self)
    }

    /// Adds a symbolic link at `path` pointing at `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> &mut Self {
        let path = self.parents_of(path);
        self.entries.insert(
            path,
            Entry::Symlink {
                target: target.to_owned(),
            },
        );
        self
    }

    /// The normalised form of `path`, after adding its missing parent directories.
    fn parents_of(&mut self, path: &str) -> String {
        let path = path.trim_matches('/').to_owned();
        for parent in ancestors(&path) {
            self.entries.entry(parent).or_insert(Entry::Dir {
                mode: 0o755,
                owner: 0,
            });
        }
        path
    }

    /// Writes the image as an OCI archive at `archive`, named `reference` (normalised as
    /// the kubelet normalises image names), and returns the manifest digest.
    pub fn write_archive(&self, reference: &str, archive: &Path) -> Result<String> {
        let name = normalize_reference(reference)?;
        let layer_tar = self.layer_tar()?;
        let diff_id = sha256_digest(&layer_tar);
        let layer = gzip(&layer_tar)?;
        let config = serde_json::to_vec(&self.config_json(&diff_id))?;
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": descriptor(CONFIG_MEDIA_TYPE, &config),
            "layers": [descriptor(LAYER_MEDIA_TYPE, &layer)],
        }))?;
        let manifest_digest = sha256_digest(&manifest);
        let tag = name.rsplit_once(':').map_or("latest", |(_, tag)| tag);
        let mut manifest_descriptor = descriptor(MANIFEST_MEDIA_TYPE, &manifest);
        manifest_descriptor["annotations"] = json!({
            CONTAINERD_NAME_ANNOTATION: name,
            OCI_REF_ANNOTATION: tag,
        });
        let index = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [manifest_descriptor],
        }))?;

        let mut blobs = vec![config, layer, manifest];
        blobs.sort_by_key(|blob| sha256_digest(blob));
        blobs.dedup();
        let mut files: Vec<(String, Vec<u8>)> = vec![
            (
                "oci-layout".into(),
                br#"{"imageLayoutVersion":"1.0.0"}"#.to_vec(),
            ),
            ("index.json".into(), index),
        ];
        for blob in blobs {
            let digest = sha256_digest(&blob);
            let hex = digest.trim_start_matches("sha256:");
            files.push((format!("blobs/sha256/{hex}"), blob));
        }
        write_file_atomically(archive, &tar_of_files(&files)?)?;
        Ok(manifest_digest)
    }

    /// Writes the image's files into `dir` (emptied first), with their modes and owners:
    /// the build context a Dockerfile `COPY`s from to make the same image.
    pub fn write_rootfs(&self, dir: &Path) -> Result<()> {
        use std::os::unix::fs::{PermissionsExt as _, chown, symlink};
        let _ = fs::remove_dir_all(dir);
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (path, entry) in &self.entries {
            let target = dir.join(path);
            let (mode, owner) = match entry {
                Entry::Dir { mode, owner } => {
                    fs::create_dir_all(&target)?;
                    (*mode, *owner)
                }
                Entry::File {
                    mode,
                    owner,
                    contents,
                } => {
                    fs::write(&target, contents)?;
                    (*mode, *owner)
                }
                Entry::Symlink { target: link } => {
                    symlink(link, &target)?;
                    continue;
                }
            };
            fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
            // Owners only matter to the image; without the right to change them, the
            // files stay ours.
            let _ = chown(&target, Some(owner), Some(owner));
        }
        Ok(())
    }

    fn config_json(&self, diff_id: &str) -> Value {
        let mut config = serde_json::Map::new();
        if let Some(user) = &self.user {
            config.insert("User".into(), json!(user));
        }
        if !self.entrypoint.is_empty() {
            config.insert("Entrypoint".into(), json!(self.entrypoint));
        }
        if !self.env.is_empty() {
            config.insert("Env".into(), json!(self.env));
        }
        if !self.labels.is_empty() {
            config.insert("Labels".into(), json!(self.labels));
        }
        config.insert("WorkingDir".into(), json!("/"));
        json!({
            "architecture": "amd64",
            "os": "linux",
            "created": "1970-01-01T00:00:00Z",
            "config": config,
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
            "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "kubebuilder-rs image builder"}],
        })
    }

    /// The layer: every entry in path order, with fixed times and numeric owners.
    fn layer_tar(&self) -> Result<Vec<u8>> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, entry) in &self.entries {
            let mut header = tar::Header::new_ustar();
            header.set_mtime(0);
            match entry {
                Entry::Dir { mode, owner } => {
                    header.set_entry_type(tar::EntryType::Directory);
                    header.set_mode(*mode);
                    header.set_uid((*owner).into());
                    header.set_gid((*owner).into());
                    header.set_size(0);
                    builder.append_data(&mut header, format!("{path}/"), io::empty())?;
                }
                Entry::File {
                    mode,
                    owner,
                    contents,
                } => {
                    header.set_entry_type(tar::EntryType::Regular);
                    header.set_mode(*mode);
                    header.set_uid((*owner).into());
                    header.set_gid((*owner).into());
                    header.set_size(contents.len() as u64);
                    builder.append_data(&mut header, path, contents.as_slice())?;
                }
                Entry::Symlink { target } => {
                    header.set_entry_type(tar::EntryType::Symlink);
                    header.set_mode(0o777);
                    header.set_size(0);
                    builder.append_link(&mut header, path, target)?;
                }
            }
        }
        Ok(builder.into_inner()?)
    }
}

/// The shared libraries (and the dynamic loader) `executable` needs, from `ldd`; none for
/// a static executable.
fn shared_libraries(executable: &Path) -> Result<Vec<PathBuf>> {
    let output = std::process::Command::new("ldd")
        .arg(executable)
        .output()
        .context("running ldd")?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || text.contains("statically linked") {
        return Ok(Vec::new());
    }
    let mut libraries = Vec::new();
    for line in text.lines() {
        // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)` or
        // `/lib64/ld-linux-x86-64.so.2 (0x...)`; `linux-vdso.so.1` is the kernel's.
        let resolved = match line.split_once("=>") {
            Some((name, target)) => {
                let target = target.trim();
                if target.starts_with("not found") {
                    bail!(
                        "{} needs {}, which is not installed",
                        executable.display(),
                        name.trim()
                    );
                }
                target.split(' ').next()
            }
            None => line.trim().split(' ').next(),
        };
        if let Some(path) = resolved.filter(|p| p.starts_with('/')) {
            libraries.push(PathBuf::from(path));
        }
    }
    Ok(libraries)
}

/// The ancestors of a relative `path`, outermost first: `a` and `a/b` for `a/b/c`.
fn ancestors(path: &str) -> Vec<String> {
    path.match_indices('/')
        .map(|(end, _)| path[..end].to_owned())
        .collect()
}

/// A descriptor of `blob`: media type, digest and size.
fn descriptor(media_type: &str, blob: &[u8]) -> Value {
    json!({"mediaType": media_type, "digest": sha256_digest(blob), "size": blob.len()})
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in hash {
        hex.push_str(&format!("{byte:02x}"));
    }
    format!("sha256:{hex}")
}

fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    // No file name and a zero mtime in the header: the output depends on the input only.
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes)?;
    Ok(encoder.finish()?)
}

/// A tar of plain files (the OCI layout) and their directories, root-owned, at the epoch.
fn tar_of_files(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    let mut written = std::collections::BTreeSet::new();
    for (path, contents) in files {
        for prefix in ancestors(path) {
            if written.insert(prefix.clone()) {
                let mut header = tar::Header::new_ustar();
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_mtime(0);
                header.set_size(0);
                builder.append_data(&mut header, format!("{prefix}/"), io::empty())?;
            }
        }
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_size(contents.len() as u64);
        builder.append_data(&mut header, path, contents.as_slice())?;
    }
    Ok(builder.into_inner()?)
}

fn write_file_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    let staging = PathBuf::from(format!("{}.partial", path.display()));
    fs::write(&staging, contents).with_context(|| format!("writing {}", staging.display()))?;
    fs::rename(&staging, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// An image an archive holds: the name it gives it and its manifest digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchivedImage {
    /// The full, normalised name (`docker.io/library/busybox:1.35`).
    pub name: String,
    /// The manifest's digest (`sha256:<hex>`), from the archive's `index.json`.
    pub digest: String,
}

/// The images an OCI archive (as `docker-build` or `podman save --format oci-archive`
/// writes it) names in its `index.json`. An entry that names no image, or only a bare
/// tag, is an error: the node could not refer to it.
pub fn archived_images(archive: &Path) -> Result<Vec<ArchivedImage>> {
    let file = File::open(archive).with_context(|| format!("opening {}", archive.display()))?;
    let mut tar = tar::Archive::new(file);
    let mut index = None;
    for entry in tar
        .entries()
        .with_context(|| format!("{} is not a tar archive", archive.display()))?
    {
        let mut entry = entry.with_context(|| format!("reading {}", archive.display()))?;
        let path = entry
            .path()?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        if path == "index.json" {
            let mut text = String::new();
            entry.read_to_string(&mut text)?;
            index = Some(text);
            break;
        }
    }
    let Some(index) = index else {
        bail!(
            "{} is not an OCI image archive (no index.json; a `docker save` archive is not \
             supported: save with `podman save --format oci-archive` or `docker buildx --output type=oci`)",
            archive.display()
        );
    };
    images_of_index(&index).with_context(|| format!("reading {}", archive.display()))
}

fn images_of_index(index: &str) -> Result<Vec<ArchivedImage>> {
    let index: Value = serde_json::from_str(index).context("index.json is not JSON")?;
    let manifests = index["manifests"]
        .as_array()
        .context("index.json has no manifests")?;
    ensure!(!manifests.is_empty(), "index.json lists no image");
    manifests
        .iter()
        .map(|manifest| {
            let annotations = &manifest["annotations"];
            let name = annotations[CONTAINERD_NAME_ANNOTATION]
                .as_str()
                .or_else(|| annotations[OCI_REF_ANNOTATION].as_str())
                .filter(|name| looks_like_full_name(name))
                .with_context(|| {
                    format!(
                        "an image in the archive has no full name (annotations {annotations}); \
                         save it with its name, e.g. `podman save --format oci-archive -o <file> <name>`"
                    )
                })?;
            Ok(ArchivedImage {
                name: normalize_reference(name)?,
                digest: manifest["digest"]
                    .as_str()
                    .context("a manifest without a digest")?
                    .to_owned(),
            })
        })
        .collect()
}

/// Whether an OCI `ref.name` is a full image name, not only a tag (`latest`).
fn looks_like_full_name(name: &str) -> bool {
    name.contains('/') || name.contains(':') || name.contains('@')
}

/// The name the kubelet and containerd use for `reference`: Docker's normalisation
/// (`busybox` is `docker.io/library/busybox:latest`, `example.com/op:v1` stays as it is).
pub fn normalize_reference(reference: &str) -> Result<String> {
    ensure!(
        !reference.is_empty()
            && reference
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/:@".contains(c))
            && !reference.starts_with(['/', ':', '.', '-']),
        "`{reference}` is not an image reference (name[:tag] such as `controller:latest` or \
         `example.com/project:v0.1.0`)"
    );
    let (name, digest) = match reference.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (reference, None),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    let (repository, tag) = match last.rsplit_once(':') {
        Some((_, tag)) => (&name[..name.len() - tag.len() - 1], Some(tag)),
        None => (name, None),
    };
    ensure!(
        repository == repository.to_lowercase(),
        "`{reference}`: image repository names are lower case"
    );
    let (domain, path) = match repository.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
            (first, rest.to_owned())
        }
        _ => ("docker.io", repository.to_owned()),
    };
    let path = if domain == "docker.io" && !path.contains('/') {
        format!("library/{path}")
    } else {
        path
    };
    let mut normalized = format!("{domain}/{path}");
    match (tag, digest) {
        (Some(tag), _) => normalized.push_str(&format!(":{tag}")),
        (None, None) => normalized.push_str(":latest"),
        (None, Some(_)) => {}
    }
    if let Some(digest) = digest {
        normalized.push_str(&format!("@{digest}"));
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_normalised_as_docker_does() {
        let cases = [
            ("controller:latest", "docker.io/library/controller:latest"),
            ("busybox", "docker.io/library/busybox:latest"),
            ("user/app:v1", "docker.io/user/app:v1"),
            ("example.com/project:v0.0.1", "example.com/project:v0.0.1"),
            ("localhost/busybox:1.35", "localhost/busybox:1.35"),
            ("localhost:5000/a/b", "localhost:5000/a/b:latest"),
            (
                "quay.io/jetstack/cert-manager-controller:v1.11.5",
                "quay.io/jetstack/cert-manager-controller:v1.11.5",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize_reference(input).unwrap(), expected, "{input}");
        }
        for bad in ["", "Controller:latest", "a b", "/x", ":tag"] {
            assert!(normalize_reference(bad).is_err(), "{bad:?} accepted");
        }
    }

    fn sample() -> Image {
        let mut image = Image::new();
        image
            .file("/manager", 0o755, b"#!binary".to_vec())
            .file(
                "/etc/passwd",
                0o644,
                "nonroot:x:65532:65532::/:/sbin/nologin\n",
            )
            .dir("/tmp", 0o1777, 0)
            .symlink("/bin/sh", "/bin/busybox");
        image.user = Some("65532:65532".into());
        image.entrypoint = vec!["/manager".into()];
        image
    }

    #[test]
    fn the_same_files_give_the_same_digest() {
        let dir = tempfile::tempdir().unwrap();
        let first = sample()
            .write_archive("controller:latest", &dir.path().join("a.tar"))
            .unwrap();
        let second = sample()
            .write_archive("controller:latest", &dir.path().join("b.tar"))
            .unwrap();
        assert_eq!(first, second);
        assert_eq!(
            fs::read(dir.path().join("a.tar")).unwrap(),
            fs::read(dir.path().join("b.tar")).unwrap()
        );
        let mut other = sample();
        other.file("/extra", 0o644, "x");
        let third = other
            .write_archive("controller:latest", &dir.path().join("c.tar"))
            .unwrap();
        assert_ne!(first, third);
    }

    #[test]
    fn an_archive_names_its_image_and_holds_its_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image.tar");
        let digest = sample().write_archive("example.com/op:v1", &path).unwrap();
        assert_eq!(
            archived_images(&path).unwrap(),
            vec![ArchivedImage {
                name: "example.com/op:v1".into(),
                digest: digest.clone(),
            }]
        );
        // Every blob is stored under its digest, and the layer lists the files in order
        // with their parents first.
        let mut tar = tar::Archive::new(File::open(&path).unwrap());
        let mut blobs = BTreeMap::new();
        for entry in tar.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            if let Some(hex) = name
                .strip_prefix("blobs/sha256/")
                .filter(|hex| !hex.is_empty())
            {
                assert_eq!(sha256_digest(&bytes), format!("sha256:{hex}"));
                blobs.insert(format!("sha256:{hex}"), bytes);
            }
        }
        let manifest: Value = serde_json::from_slice(&blobs[&digest]).unwrap();
        let config: Value =
            serde_json::from_slice(&blobs[manifest["config"]["digest"].as_str().unwrap()]).unwrap();
        assert_eq!(config["config"]["User"], "65532:65532");
        assert_eq!(config["config"]["Entrypoint"], json!(["/manager"]));
        let layer = &blobs[manifest["layers"][0]["digest"].as_str().unwrap()];
        let mut layer = tar::Archive::new(flate2::read::GzDecoder::new(layer.as_slice()));
        let paths: Vec<String> = layer
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            paths,
            ["bin/", "bin/sh", "etc/", "etc/passwd", "manager", "tmp/"]
        );
    }

    #[test]
    fn dynamic_executables_come_with_their_libraries() {
        let mut image = Image::new();
        image
            .copy_executable("/bin/ls", Path::new("/bin/ls"))
            .unwrap();
        let libc = image
            .entries
            .keys()
            .find(|path| path.contains("libc.so"))
            .cloned();
        assert!(
            libc.is_some(),
            "{:?}",
            image.entries.keys().collect::<Vec<_>>()
        );
        assert!(image.entries.keys().any(|path| path.contains("ld-linux")));
    }

    #[test]
    fn archives_without_full_names_are_refused() {
        let bare_tag = r#"{"manifests":[{"digest":"sha256:00","annotations":{"org.opencontainers.image.ref.name":"latest"}}]}"#;
        let err = images_of_index(bare_tag).unwrap_err().to_string();
        assert!(err.contains("has no full name"), "{err}");
        let podman = r#"{"manifests":[{"digest":"sha256:00","annotations":{"org.opencontainers.image.ref.name":"localhost/op:dev"}}]}"#;
        assert_eq!(images_of_index(podman).unwrap()[0].name, "localhost/op:dev");
    }
}

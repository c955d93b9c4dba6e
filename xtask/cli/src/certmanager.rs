//! cert-manager on the local node, as a user installs it on theirs: its controller,
//! webhook and cainjector built from the Go module pinned in `certmanager/go.mod`, imaged
//! the daemon-less way, and installed from cert-manager's own Helm chart by the real
//! `helm`. `config/default`'s Issuer, Certificates and CA-injection annotations are then
//! served exactly as in a user's cluster.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use kubebuilder_envtest::assets;
use kubebuilder_envtest::image::Image;
use kubebuilder_envtest::node::Node;

/// The release (kept equal to `certmanager/go.mod`; see its README for why this one).
pub const VERSION: &str = "v1.11.5";
const MODULE: &str = "github.com/cert-manager/cert-manager";
const NAMESPACE: &str = "cert-manager";

/// The three components: binary, Go package, and the image the chart names.
const COMPONENTS: [(&str, &str, &str); 3] = [
    (
        "controller",
        "cmd/controller",
        "quay.io/jetstack/cert-manager-controller",
    ),
    (
        "webhook",
        "cmd/webhook",
        "quay.io/jetstack/cert-manager-webhook",
    ),
    (
        "cainjector",
        "cmd/cainjector",
        "quay.io/jetstack/cert-manager-cainjector",
    ),
];

/// Builds (once), loads and installs cert-manager on `node`, and waits until its webhook
/// admits cert-manager objects.
pub fn install(node: &Node) -> Result<()> {
    let started = Instant::now();
    for archive in images()? {
        node.load(&archive)?;
    }
    let dir = cache_dir();
    let chart = chart(&dir)?;
    let helm = crate::tools::HELM.install()?;
    let output = Command::new(&helm)
        .args(["upgrade", "--install", "cert-manager"])
        .arg(&chart)
        .args(["--namespace", NAMESPACE, "--create-namespace"])
        .arg("--kubeconfig")
        .arg(node.kubeconfig_path())
        // The images are on the node; the API check job would need an image of its own.
        .args([
            "--set",
            "image.pullPolicy=Never",
            "--set",
            "webhook.image.pullPolicy=Never",
        ])
        .args(["--set", "cainjector.image.pullPolicy=Never"])
        .args(["--set", "startupapicheck.enabled=false"])
        .args(["--wait", "--timeout", "4m"])
        .output()
        .context("running helm")?;
    if !output.status.success() {
        bail!(
            "`helm upgrade --install cert-manager` failed:\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    wait_until_admitting(node)?;
    eprintln!(
        "xtask: cert-manager {VERSION} installed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Where the binaries, image archives and chart are cached.
/// The image archives of the three components, built into the cache when missing.
pub fn images() -> Result<Vec<PathBuf>> {
    let dir = cache_dir();
    let mut archives = Vec::new();
    for (binary, package, repository) in COMPONENTS {
        let archive = dir.join(format!("{binary}.tar"));
        if !archive.is_file() {
            build_image(&dir, binary, package, repository, &archive)?;
        }
        archives.push(archive);
    }
    Ok(archives)
}

fn cache_dir() -> PathBuf {
    assets::cache_root()
        .join("tools")
        .join(format!("cert-manager-{VERSION}"))
}

/// The Go module pinning cert-manager, next to this crate.
fn go_module_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("certmanager")
}

/// `go build` of one component (static, with cert-manager's version stamp) and its image:
/// the binary, CA certificates, a numeric non-root user (the chart sets `runAsNonRoot`).
fn build_image(
    dir: &Path,
    binary: &str,
    package: &str,
    repository: &str,
    archive: &Path,
) -> Result<()> {
    fs::create_dir_all(dir)?;
    let out = dir.join(binary);
    let ldflags = format!("-s -w -X {MODULE}/pkg/util.AppVersion={VERSION}");
    go_build(&format!("{MODULE}/{package}"), &ldflags, &out)?;
    let entrypoint = format!("/app/cmd/{binary}/{binary}");
    let mut image = Image::new();
    image.copy(&entrypoint, 0o755, &out)?.copy(
        "/etc/ssl/certs/ca-certificates.crt",
        0o644,
        Path::new("/etc/ssl/certs/ca-certificates.crt"),
    )?;
    image.user = Some("1000:1000".into());
    image.entrypoint = vec![entrypoint];
    image.write_archive(&format!("{repository}:{VERSION}"), archive)?;
    fs::remove_file(&out)?;
    Ok(())
}

/// `go build` of `package` in the cert-manager module, statically, into `out`.
fn go_build(package: &str, ldflags: &str, out: &Path) -> Result<()> {
    let name = package.rsplit('/').next().unwrap_or(package);
    eprintln!(
        "xtask: building {name} ({package}) from the Go module proxy (minutes on a cold cache)"
    );
    let started = Instant::now();
    let output = Command::new("go")
        .current_dir(go_module_dir())
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-trimpath -mod=readonly")
        .args(["build", "-ldflags", ldflags, "-o"])
        .arg(out)
        .arg(package)
        .output()
        .context("running `go build` (Go 1.26 is needed)")?;
    if !output.status.success() {
        bail!(
            "`go build {package}` failed:\n{}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    eprintln!(
        "xtask: built {name} in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// cert-manager's chart as its release packages it: the module's chart directory with the
/// `Chart.yaml` its release tool writes from `Chart.template.yaml`, and the CRDs (Helm
/// templates in `deploy/crds`) among the templates.
fn chart(dir: &Path) -> Result<PathBuf> {
    let module = assets::go_module_source(&go_module_dir(), MODULE, VERSION)?;
    let source = module.join("deploy/charts/cert-manager");
    let chart = dir.join("chart");
    let _ = fs::remove_dir_all(&chart);
    copy_dir(&source, &chart)?;
    let template = fs::read_to_string(source.join("Chart.template.yaml"))?;
    let version = VERSION.trim_start_matches('v');
    let chart_yaml = template
        .replace("version: v0.1.0", &format!("version: {version}"))
        .replace("appVersion: v0.1.0", &format!("appVersion: {VERSION}"))
        .replace("{{IS_PRERELEASE}}", "false");
    fs::write(chart.join("Chart.yaml"), chart_yaml)?;
    fs::remove_file(chart.join("Chart.template.yaml"))?;
    for entry in fs::read_dir(module.join("deploy/crds"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            fs::copy(
                &path,
                chart
                    .join("templates")
                    .join(path.file_name().context("a file name")?),
            )?;
        }
    }
    Ok(chart)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
            // The module cache is read-only; the copy is ours to change.
            let mut permissions = fs::metadata(&target)?.permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o644);
            fs::set_permissions(&target, permissions)?;
        }
    }
    Ok(())
}

/// Waits until cert-manager's webhook answers: a dry-run Issuer is admitted (what
/// `cmctl check api` does). The webhook's own CA must be injected first, which takes a few
/// seconds after its pod is Ready.
fn wait_until_admitting(node: &Node) -> Result<()> {
    let node = node.clone();
    let work = async move {
        let client = node.client().await?;
        let resource = ApiResource {
            group: "cert-manager.io".into(),
            version: "v1".into(),
            api_version: "cert-manager.io/v1".into(),
            kind: "Issuer".into(),
            plural: "issuers".into(),
        };
        let issuers: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource);
        let issuer: DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": {"name": "cert-manager-api-check"},
            "spec": {"selfSigned": {}},
        }))?;
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            match issuers
                .create(
                    &PostParams {
                        dry_run: true,
                        ..Default::default()
                    },
                    &issuer,
                )
                .await
            {
                Ok(_) => return Ok(()),
                Err(error) if Instant::now() > deadline => {
                    bail!("cert-manager's webhook does not admit Issuers after 120 s: {error}")
                }
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(work)
}

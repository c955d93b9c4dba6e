//! What the node needs from Debian: containerd, runc, the CNI plugins, iptables, iproute2,
//! a C compiler with static libc for the pause program, and busybox and curl for the test
//! images. Installed with apt when missing and we are root; otherwise a clear error naming
//! the packages.

use std::path::Path;
use std::process::Command;

use anyhow::{Result, bail};

/// A file each package installs, and the package.
const REQUIRED: [(&str, &str); 10] = [
    ("/usr/bin/containerd", "containerd"),
    ("/usr/bin/ctr", "containerd"),
    ("/usr/sbin/runc", "runc"),
    ("/usr/lib/cni/bridge", "containernetworking-plugins"),
    ("/usr/sbin/iptables", "iptables"),
    ("/usr/sbin/ip", "iproute2"),
    ("/usr/bin/gcc", "gcc"),
    ("/usr/lib/x86_64-linux-gnu/libc.a", "libc6-dev"),
    ("/bin/busybox", "busybox-static"),
    ("/usr/bin/curl", "curl"),
];

/// The packages of `required` (file, package) whose files are missing, each named once.
fn missing<'a>(required: &[(&str, &'a str)]) -> Vec<&'a str> {
    let mut packages: Vec<&str> = required
        .iter()
        .filter(|(file, _)| !Path::new(file).exists())
        .map(|(_, package)| *package)
        .collect();
    packages.dedup();
    packages
}

/// Installs the node's missing packages with apt (as root), or fails naming them.
pub fn ensure_node_packages() -> Result<()> {
    ensure("the local node", &REQUIRED)
}

/// Installs the missing packages among `required` (a file each installs, and the package)
/// that `what` needs with apt when we are root, or fails naming them.
pub fn ensure(what: &str, required: &[(&str, &str)]) -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    let is_root = unsafe { libc::geteuid() } == 0;
    ensure_with(what, required, is_root)
}

fn ensure_with(what: &str, required: &[(&str, &str)], is_root: bool) -> Result<()> {
    let missing = missing(required);
    if missing.is_empty() {
        return Ok(());
    }
    if !is_root {
        bail!(
            "{what} needs these Debian packages, which are not installed: {} \
             (as root: apt-get install {})",
            missing.join(", "),
            missing.join(" ")
        );
    }
    eprintln!("node: installing {} (apt-get)", missing.join(" "));
    if !apt_install(&missing) {
        // A fresh machine may have no package lists yet.
        run_apt(&["update", "-q"]);
        if !apt_install(&missing) {
            bail!(
                "`apt-get install {}` failed; install them and run again",
                missing.join(" ")
            );
        }
    }
    let still = self::missing(required);
    if !still.is_empty() {
        bail!("after apt-get install, still missing: {}", still.join(", "));
    }
    Ok(())
}

fn apt_install(packages: &[&str]) -> bool {
    let mut args = vec!["install", "-y", "-q", "--no-install-recommends"];
    args.extend(packages);
    run_apt(&args)
}

fn run_apt(args: &[&str]) -> bool {
    Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_root_the_missing_packages_are_named() {
        let required = [("/nonexistent/bin/tool", "some-tool"), ("/bin/sh", "dash")];
        let error = ensure_with("the test", &required, false)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("the test needs"), "{error}");
        assert!(error.contains("some-tool"), "{error}");
        assert!(error.contains("apt-get install some-tool"), "{error}");
        assert!(!error.contains("dash"), "{error}");
        assert!(ensure_with("the test", &[("/bin/sh", "dash")], false).is_ok());
    }
}

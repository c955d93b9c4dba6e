//! A local run listens on loopback only: `cargo xtask run` against a control plane on this
//! machine starts the manager with its probes, metrics (asked for as `:<port>`, which alone
//! would mean every interface) and webhooks, and every socket the manager listens on is
//! bound to 127.0.0.1, as the kernel reports it in `/proc`.

use std::collections::BTreeSet;
use std::fs;
use std::io::{BufRead, BufReader, Read as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The line `cargo xtask run` prints once the manager is ready and the samples went
/// through its webhooks; then it waits for a signal.
const RUNNING: &str = "xtask: the samples are applied";

/// `cargo xtask run` on `kubeconfig`, with `manager_args` after `--`; its output (the
/// manager's logs and cargo's go to `stderr`). The manager it builds goes to `artifacts`,
/// its intermediate files to this build's directory: `target/debug/controller`, which
/// tests running beside this one start, stays as this build made it.
fn spawn_run(kubeconfig: &Path, manager_args: &[&str], stderr: &Path, artifacts: &Path) -> Child {
    let build_dir = std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .to_owned();
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["run", "--"])
        .args(manager_args)
        .env("KUBECONFIG", kubeconfig)
        .env("CARGO_BUILD_BUILD_DIR", build_dir)
        .env("CARGO_TARGET_DIR", artifacts)
        .stdout(Stdio::piped())
        .stderr(fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// A child killed when dropped still running: a failed check must not leave `xtask run`
/// and its manager behind (the manager dies with `xtask`).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.0.try_wait().is_ok_and(|status| status.is_none()) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Reads `output` up to and including the line starting with `wanted`, adding the lines to
/// `lines`; false when the output ends first.
fn read_until(output: &mut impl BufRead, wanted: &str, lines: &mut Vec<String>) -> bool {
    loop {
        let mut line = String::new();
        if output.read_line(&mut line).unwrap() == 0 {
            return false;
        }
        let found = line.starts_with(wanted);
        lines.push(line);
        if found {
            return true;
        }
    }
}

/// The process ids whose parent is `parent`.
fn children(parent: u32) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // After the command name in parentheses: the state, then the parent's id.
            fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                stat.rsplit(')')
                    .next()
                    .unwrap_or_default()
                    .split_whitespace()
                    .nth(1)
                    == Some(&parent.to_string())
            })
        })
        .collect()
}

/// The manager `xtask` started: its child named `controller`.
fn manager_pid(xtask: u32) -> u32 {
    let managers: Vec<u32> = children(xtask)
        .into_iter()
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == "controller")
        })
        .collect();
    assert_eq!(
        managers.len(),
        1,
        "the manager processes of xtask {xtask}: {managers:?}"
    );
    managers[0]
}

/// The socket inodes among the open files of process `pid`.
fn socket_inodes(pid: u32) -> BTreeSet<String> {
    fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|entry| {
            let target = fs::read_link(entry.ok()?.path()).ok()?;
            let inode = target
                .to_str()?
                .strip_prefix("socket:[")?
                .strip_suffix(']')?;
            Some(inode.to_owned())
        })
        .collect()
}

/// An address of `/proc/net/tcp{,6}`: the IP as the kernel's 32-bit words in hex (each in
/// the machine's byte order), a colon, and the port in hex.
fn parse_address(hex: &str) -> SocketAddr {
    let (ip, port) = hex.split_once(':').unwrap();
    let words: Vec<[u8; 4]> = (0..ip.len() / 8)
        .map(|word| {
            u32::from_str_radix(&ip[word * 8..word * 8 + 8], 16)
                .unwrap()
                .to_ne_bytes()
        })
        .collect();
    let ip = match words.as_slice() {
        [v4] => IpAddr::V4(Ipv4Addr::from(*v4)),
        v6 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(v6.concat()).unwrap())),
    };
    SocketAddr::new(ip, u16::from_str_radix(port, 16).unwrap())
}

/// The addresses process `pid` listens on over TCP, IPv4 and IPv6.
fn listening_addresses(pid: u32) -> Vec<SocketAddr> {
    /// The `st` column's value for a listening socket.
    const LISTEN: &str = "0A";
    let inodes = socket_inodes(pid);
    ["tcp", "tcp6"]
        .iter()
        .flat_map(|table| {
            let text = fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap();
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    // sl, local_address, rem_address, st, ..., the inode is the tenth column.
                    let columns: Vec<&str> = line.split_whitespace().collect();
                    (columns[3] == LISTEN && inodes.contains(columns[9]))
                        .then(|| parse_address(columns[1]))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
#[ignore = "slow (`cargo xtask run` builds the manager): `cargo xtask test` runs it beside the other tests"]
fn a_local_run_listens_on_loopback_only() {
    let plane = kubebuilder_envtest::shared();
    let logs = tempfile::tempdir().unwrap();
    let stderr = logs.path().join("stderr");
    let mut run = KillOnDrop(spawn_run(
        plane.kubeconfig_path(),
        &["--metrics-bind-address=:0"],
        &stderr,
        &logs.path().join("target"),
    ));
    let mut stdout = BufReader::new(run.0.stdout.take().unwrap());
    let mut lines = Vec::new();
    let started = read_until(&mut stdout, RUNNING, &mut lines);
    let listening = started.then(|| listening_addresses(manager_pid(run.0.id())));

    // SAFETY: signalling our own child, not yet reaped. SIGTERM makes xtask stop the
    // manager, which removes its loopback webhook registration; its output is read to
    // the end so that xtask can write it.
    unsafe { libc::kill(i32::try_from(run.0.id()).unwrap(), libc::SIGTERM) };
    stdout.read_to_string(&mut String::new()).unwrap();
    let status = run.0.wait().unwrap();
    let output = format!(
        "{}\n--- stderr ---\n{}",
        lines.concat(),
        fs::read_to_string(&stderr).unwrap()
    );

    let listening = listening.unwrap_or_else(|| panic!("xtask run stopped early:\n{output}"));
    assert!(
        output.contains("--register-webhooks-on-loopback"),
        "the webhooks are not served:\n{output}"
    );
    assert_eq!(
        listening.len(),
        3,
        "the probe, metrics and webhook servers, and nothing else: {listening:?}"
    );
    for address in &listening {
        assert_eq!(
            address.ip(),
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            "the manager listens on {address}: {listening:?}"
        );
    }
    assert!(
        status.success(),
        "cargo xtask run stopped with {status}:\n{output}"
    );
}

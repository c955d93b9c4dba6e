//! What the node can leave on the machine, captured before `up` and compared after
//! `down`: processes, mounts, network namespaces, links, iptables rules, cgroups,
//! sysctls and directories outside the node's own roots. `down` fails when anything
//! differs, naming it, and the tests check the same comparison.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::daemon;
use super::layout;

/// The sysctls the node's components change (the kubelet's kernel tunables, forwarding for
/// the bridge, bridged traffic through iptables for Services): saved by `up`, restored by
/// `down`.
pub const SYSCTLS: [&str; 10] = [
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "net/ipv4/ip_forward",
    "net/ipv4/conf/all/route_localnet",
    "net/bridge/bridge-nf-call-iptables",
    "net/ipv4/conf/all/forwarding",
];

/// The machine's state, as far as the node can change it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Footprint {
    /// The node's processes, as `name (pid N)` (see `node_processes`).
    pub processes: BTreeSet<String>,
    /// Mount points in this process's mount namespace.
    pub mounts: BTreeSet<String>,
    /// Named network namespaces (`/run/netns`), where the pods' networks live.
    pub network_namespaces: BTreeSet<String>,
    /// Network interfaces (`/sys/class/net`): the bridge, the pods' veths.
    pub links: BTreeSet<String>,
    /// IPv4 and IPv6 rules and chains, without counters (see `iptables_rules`).
    pub iptables: BTreeSet<String>,
    /// `nft list tables`: iptables-nft makes a table on first use and leaves it, empty.
    pub nftables: BTreeSet<String>,
    /// The kubelet's cgroups (`kubepods` and under it), in every hierarchy.
    pub cgroups: BTreeSet<String>,
    /// The value of each of `SYSCTLS`, empty when the kernel has no such setting.
    pub sysctls: BTreeMap<String, String>,
    /// Which of the node's roots and [`layout::FOREIGN_DIRS`] exist.
    pub dirs: BTreeSet<String>,
}

impl Footprint {
    /// Reads the machine's state now.
    pub fn capture() -> Self {
        Self {
            processes: node_processes(),
            mounts: mounts(),
            network_namespaces: dir_names("/run/netns"),
            links: dir_names("/sys/class/net"),
            iptables: iptables_rules(),
            nftables: nft_tables(),
            cgroups: cgroups(),
            sysctls: SYSCTLS
                .iter()
                .map(|name| (name.to_string(), read_sysctl(name).unwrap_or_default()))
                .collect(),
            dirs: layout::FOREIGN_DIRS
                .iter()
                .chain([layout::ROOT, layout::RUN].iter())
                .filter(|dir| Path::new(dir).exists())
                .map(|dir| dir.to_string())
                .collect(),
        }
    }

    /// What `self` has that `baseline` has not, or has otherwise: one line per item, in
    /// the words of the issue's list (process, mount, netns, link, iptables rule, cgroup,
    /// sysctl, directory). Empty when the machine is as it was.
    pub fn left_over(&self, baseline: &Footprint) -> Vec<String> {
        let mut found = Vec::new();
        let mut added = |kind: &str, now: &BTreeSet<String>, before: &BTreeSet<String>| {
            found.extend(now.difference(before).map(|item| format!("{kind} {item}")));
        };
        added("process", &self.processes, &baseline.processes);
        added("mount", &self.mounts, &baseline.mounts);
        added(
            "netns",
            &self.network_namespaces,
            &baseline.network_namespaces,
        );
        added("link", &self.links, &baseline.links);
        added("iptables rule", &self.iptables, &baseline.iptables);
        added("nftables", &self.nftables, &baseline.nftables);
        added("cgroup", &self.cgroups, &baseline.cgroups);
        added("directory", &self.dirs, &baseline.dirs);
        // Rules that went missing matter as much as rules that were added.
        found.extend(
            baseline
                .iptables
                .difference(&self.iptables)
                .map(|rule| format!("iptables rule removed: {rule}")),
        );
        for (name, value) in &self.sysctls {
            let before = baseline.sysctls.get(name).map_or("", String::as_str);
            if value != before {
                found.push(format!("sysctl {name} = {value} (was {before})"));
            }
        }
        found
    }
}

/// `name (pid)` of every process of the node (see [`node_pids`]).
pub fn node_processes() -> BTreeSet<String> {
    node_pids()
        .into_iter()
        .map(|(pid, name)| format!("{name} (pid {pid})"))
        .collect()
}

/// Every process of the node, with its executable's name: those started with the node's
/// directories on their command line (its daemons and containerd's shims) and those in
/// the kubelet's pod cgroups (the containers). Another control plane's etcd (envtest's)
/// is not one.
pub fn node_pids() -> Vec<(i32, String)> {
    daemon::processes()
        .into_iter()
        .filter(|(pid, _)| {
            let cmdline = daemon::cmdline_of(*pid);
            cmdline.contains(layout::ROOT) || cmdline.contains(layout::RUN) || in_pod_cgroup(*pid)
        })
        .map(|(pid, exe)| {
            let name = exe.file_name().map_or_else(
                || exe.to_string_lossy().into_owned(),
                |name| name.to_string_lossy().into_owned(),
            );
            (pid, name)
        })
        .collect()
}

/// The resident memory of `pid` in KiB (`VmRSS`), 0 when it is gone.
pub fn rss_kib(pid: i32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Whether `pid` is in a cgroup the kubelet made for pods.
pub fn in_pod_cgroup(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .is_ok_and(|cgroups| cgroups.lines().any(|line| line.contains("/kubepods")))
}

/// Mount points, from the mount table of this process's namespace.
pub fn mounts() -> BTreeSet<String> {
    fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(unescape_mount_path)
        .collect()
}

/// Mount paths escape spaces and such as octal (`\040`).
fn unescape_mount_path(path: &str) -> String {
    let mut out = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            if let Ok(byte) = u8::from_str_radix(&code, 8) {
                out.push(char::from(byte));
                continue;
            }
            out.push('\\');
            out.push_str(&code);
        } else {
            out.push(c);
        }
    }
    out
}

fn dir_names(dir: &str) -> BTreeSet<String> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// Every rule and chain of every IPv4 and IPv6 table, without counters (from
/// `iptables-save` and `ip6tables-save`; IPv6 rules start with `ip6`).
pub fn iptables_rules() -> BTreeSet<String> {
    let mut rules = saved_rules("iptables-save", "");
    rules.extend(saved_rules("ip6tables-save", "ip6 "));
    rules
}

fn saved_rules(command: &str, prefix: &str) -> BTreeSet<String> {
    let Ok(output) = Command::new(command).output() else {
        return BTreeSet::new();
    };
    let mut table = String::new();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            if let Some(name) = line.strip_prefix('*') {
                table = name.to_owned();
                return None;
            }
            if line.starts_with('#') || line == "COMMIT" {
                return None;
            }
            // `:CHAIN POLICY [packets:bytes]`: the counters change all the time.
            let line = match line.strip_prefix(':') {
                Some(chain) => format!(":{}", chain.split(" [").next().unwrap_or(chain)),
                None => line.to_owned(),
            };
            // A table the kernel loads on first use lists its built-in chains with their
            // default policy: the machine's state from then on, not something to remove.
            (!is_default_builtin_chain(&line)).then(|| format!("{prefix}{table} {line}"))
        })
        .collect()
}

/// `:INPUT ACCEPT` and the like: a built-in chain with the kernel's default policy.
fn is_default_builtin_chain(line: &str) -> bool {
    const BUILTIN: [&str; 5] = ["INPUT", "OUTPUT", "FORWARD", "PREROUTING", "POSTROUTING"];
    line.strip_prefix(':')
        .and_then(|chain| chain.strip_suffix(" ACCEPT"))
        .is_some_and(|name| BUILTIN.contains(&name))
}

/// The nftables tables (`table ip nat`, ...).
pub fn nft_tables() -> BTreeSet<String> {
    Command::new("nft")
        .args(["list", "tables"])
        .output()
        .map(|output| {
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The kubelet's cgroups: every directory named `kubepods` or under one, in every hierarchy
/// (cgroup v1 controllers and the unified one). The node makes no others (its daemons run
/// in the cgroup they were started in); the machine's other cgroups, a service's or a
/// session's, come and go on their own while a node runs, and are not the node's to remove.
fn cgroups() -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![Path::new("/sys/fs/cgroup").to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            // Controller mounts are directories; their files (cgroup.procs, ...) are not.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let path = entry.path();
                let path_text = path.to_string_lossy().into_owned();
                if path_text.contains("/kubepods") {
                    found.insert(path_text);
                }
                pending.push(path);
            }
        }
    }
    found
}

/// A sysctl's value, `None` when the kernel has no such setting.
pub fn read_sysctl(name: &str) -> Option<String> {
    fs::read_to_string(Path::new("/proc/sys").join(name))
        .ok()
        .map(|value| value.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_paths_are_unescaped() {
        assert_eq!(unescape_mount_path(r"/a\040b"), "/a b");
        assert_eq!(unescape_mount_path("/plain"), "/plain");
    }

    #[test]
    fn default_policies_of_built_in_chains_are_the_kernels() {
        assert!(is_default_builtin_chain(":FORWARD ACCEPT"));
        assert!(is_default_builtin_chain(":PREROUTING ACCEPT"));
        // A changed policy, or a chain of our own, is ours to undo.
        assert!(!is_default_builtin_chain(":FORWARD DROP"));
        assert!(!is_default_builtin_chain(":KBRS-SERVICES -"));
        assert!(!is_default_builtin_chain("-A OUTPUT -j KBRS"));
    }

    #[test]
    fn differences_name_what_was_left() {
        // A made-up baseline: the machine's own state (a node left half up, say) must not decide
        // whether this passes.
        let mut baseline = Footprint::default();
        baseline.links.insert("lo".into());
        baseline
            .sysctls
            .insert("net/ipv4/ip_forward".into(), "0".into());
        assert!(baseline.left_over(&baseline).is_empty());
        let mut after = baseline.clone();
        after.links.insert("kbrs0".into());
        after.iptables.insert("filter -A OUTPUT -j KBRS".into());
        after
            .sysctls
            .insert("net/ipv4/ip_forward".into(), "changed".into());
        let left = after.left_over(&baseline);
        assert!(left.contains(&"link kbrs0".to_string()), "{left:?}");
        assert!(
            left.contains(&"iptables rule filter -A OUTPUT -j KBRS".to_string()),
            "{left:?}"
        );
        assert!(
            left.iter()
                .any(|l| l.starts_with("sysctl net/ipv4/ip_forward = changed")),
            "{left:?}"
        );
    }
}

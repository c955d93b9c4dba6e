//! The node's network guard and pod bridge.
//!
//! Before any pod starts, packets to the service CIDR that no Service rule translated are
//! refused on this machine (without this they follow the default route off it: seen on
//! this kind of machine), pods may not send beyond the bridge, and the `kubernetes`
//! Service's ClusterIP is translated to the apiserver on 127.0.0.1, so pods use their
//! in-cluster configuration unmodified. kube-proxy translates every other Service.

use std::collections::BTreeSet;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::footprint;
use super::layout::*;

/// Our chains: the filter guards and the `kubernetes` Service translation.
const OUTPUT_GUARD: &str = "KBRS-NODE-OUTPUT";
const FORWARD_GUARD: &str = "KBRS-NODE-FORWARD";
const SERVICES: &str = "KBRS-NODE-SERVICES";

/// `(table, chain we jump from, our chain)`.
const JUMPS: [(&str, &str, &str); 4] = [
    ("filter", "OUTPUT", OUTPUT_GUARD),
    ("filter", "FORWARD", FORWARD_GUARD),
    ("nat", "PREROUTING", SERVICES),
    ("nat", "OUTPUT", SERVICES),
];

/// Installs the guard rules, then the bridge (with `route_localnet` on it alone, so that
/// pods' packets translated to 127.0.0.1 are accepted), and turns forwarding on.
pub fn install() -> Result<()> {
    let reject_services = |chain: &str| -> Vec<Vec<String>> {
        vec![
            args(&[
                "-A",
                chain,
                "-d",
                SERVICE_CIDR,
                "-p",
                "tcp",
                "-j",
                "REJECT",
                "--reject-with",
                "tcp-reset",
            ]),
            args(&[
                "-A",
                chain,
                "-d",
                SERVICE_CIDR,
                "-j",
                "REJECT",
                "--reject-with",
                "icmp-port-unreachable",
            ]),
        ]
    };
    let mut rules = vec![
        ("filter", args(&["-N", OUTPUT_GUARD])),
        ("filter", args(&["-N", FORWARD_GUARD])),
    ];
    rules.extend(
        reject_services(OUTPUT_GUARD)
            .into_iter()
            .map(|r| ("filter", r)),
    );
    rules.extend(
        reject_services(FORWARD_GUARD)
            .into_iter()
            .map(|r| ("filter", r)),
    );
    rules.push((
        "filter",
        args(&[
            "-A",
            FORWARD_GUARD,
            "-s",
            POD_CIDR,
            "!",
            "-d",
            POD_CIDR,
            "-j",
            "REJECT",
            "--reject-with",
            "icmp-net-prohibited",
        ]),
    ));
    rules.push(("nat", args(&["-N", SERVICES])));
    rules.push((
        "nat",
        args(&[
            "-A",
            SERVICES,
            "-d",
            &format!("{KUBERNETES_SERVICE_IP}/32"),
            "-p",
            "tcp",
            "--dport",
            "443",
            "-j",
            "DNAT",
            "--to-destination",
            &format!("127.0.0.1:{APISERVER_PORT}"),
        ]),
    ));
    for (table, chain, target) in JUMPS {
        rules.push((table, args(&["-I", chain, "1", "-j", target])));
    }
    for (table, rule) in rules {
        iptables(table, &rule)?;
    }

    ip(&["link", "add", BRIDGE, "type", "bridge"])?;
    ip(&["addr", "add", BRIDGE_ADDRESS, "dev", BRIDGE])?;
    ip(&["link", "set", BRIDGE, "up"])?;
    write_sysctl(&format!("net/ipv4/conf/{BRIDGE}/route_localnet"), "1")?;
    write_sysctl("net/ipv4/ip_forward", "1")?;
    // Bridged pod-to-pod packets through iptables, so that Service translations apply to
    // them both ways (kube-proxy expects it).
    write_sysctl("net/bridge/bridge-nf-call-iptables", "1")?;
    Ok(())
}

/// Removes what [`install`] added (whatever of it exists) and the bridge.
pub fn remove() {
    for (table, chain, target) in JUMPS {
        while iptables(table, &args(&["-D", chain, "-j", target])).is_ok() {}
    }
    for (table, chain) in [
        ("filter", OUTPUT_GUARD),
        ("filter", FORWARD_GUARD),
        ("nat", SERVICES),
    ] {
        let _ = iptables(table, &args(&["-F", chain]));
        let _ = iptables(table, &args(&["-X", chain]));
    }
    let _ = ip(&["link", "delete", BRIDGE]);
}

/// Deletes every iptables and ip6tables rule and chain that is not in `baseline` (as
/// [`footprint::iptables_rules`] lists them): kube-proxy's, CNI's and ours. Rules of the
/// chains that were there before go one by one; the added chains are flushed and deleted.
pub fn remove_rules_added_since(baseline: &BTreeSet<String>) {
    let now = footprint::iptables_rules();
    let added: Vec<&String> = now.difference(baseline).collect();
    let mut new_chains = Vec::new();
    for rule in &added {
        let (command, rest) = match rule.strip_prefix("ip6 ") {
            Some(rest) => ("ip6tables", rest),
            None => ("iptables", rule.as_str()),
        };
        let Some((table, spec)) = rest.split_once(' ') else {
            continue;
        };
        if let Some(chain) = spec.strip_prefix(':') {
            let name = chain.split(' ').next().unwrap_or_default().to_owned();
            new_chains.push((command, table.to_owned(), name));
        } else if let Some(rule) = spec.strip_prefix("-A ") {
            let mut delete = vec!["-D".to_owned()];
            delete.extend(shell_words(rule));
            let _ = run_iptables(command, table, &delete);
        }
    }
    for (command, table, chain) in &new_chains {
        let _ = run_iptables(command, table, &args(&["-F", chain]));
    }
    for (command, table, chain) in &new_chains {
        let _ = run_iptables(command, table, &args(&["-X", chain]));
    }
}

/// Where kube-proxy sends new connections to the port named `port` of the Service
/// `namespace/name`: the `address:port` of each endpoint its NAT rules jump to now.
pub fn service_routes(namespace: &str, name: &str, port: &str) -> Result<BTreeSet<String>> {
    let output = Command::new("iptables-save")
        .args(["-t", "nat"])
        .output()
        .context("running iptables-save")?;
    if !output.status.success() {
        bail!(
            "`iptables-save -t nat` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(routes_in(
        &String::from_utf8_lossy(&output.stdout),
        &format!("{namespace}/{name}:{port}"),
    ))
}

/// The endpoints of the Service port `service_port` (`namespace/name:port`) in saved NAT
/// rules: kube-proxy's iptables mode comments each jump from a Service's chain to one of
/// its endpoints `"<namespace>/<name>:<port> -> <address>:<port>"`, and only those.
fn routes_in(saved: &str, service_port: &str) -> BTreeSet<String> {
    let prefix = format!("{service_port} -> ");
    saved
        .lines()
        .filter(|line| line.starts_with("-A "))
        .flat_map(shell_words)
        .filter_map(|word| word.strip_prefix(&prefix).map(str::to_owned))
        .collect()
}

/// Splits an `iptables-save` rule into arguments (double quotes group words).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut in_word = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                in_word = true;
            }
            ' ' if !quoted => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

fn args(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn iptables(table: &str, rule: &[String]) -> Result<()> {
    run_iptables("iptables", table, rule)
}

fn run_iptables(command: &str, table: &str, rule: &[String]) -> Result<()> {
    let output = Command::new(command)
        .args(["-w", "5", "-t", table])
        .args(rule)
        .output()
        .context("running iptables")?;
    if !output.status.success() {
        bail!(
            "`{command} -t {table} {}` failed: {}",
            rule.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

fn ip(items: &[&str]) -> Result<()> {
    let output = Command::new("ip")
        .args(items)
        .output()
        .context("running ip")?;
    if !output.status.success() {
        bail!(
            "`ip {}` failed: {}",
            items.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// Sets a sysctl (`net/ipv4/ip_forward` form).
pub fn write_sysctl(name: &str, value: &str) -> Result<()> {
    let path = std::path::Path::new("/proc/sys").join(name);
    std::fs::write(&path, value).with_context(|| format!("setting {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_rules_split_into_arguments() {
        assert_eq!(
            shell_words(
                r#"PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES"#
            ),
            [
                "PREROUTING",
                "-m",
                "comment",
                "--comment",
                "kubernetes service portals",
                "-j",
                "KUBE-SERVICES"
            ]
        );
        assert_eq!(
            shell_words(r#"X --comment "" -j Y"#),
            ["X", "--comment", "", "-j", "Y"]
        );
    }

    #[test]
    fn a_services_routes_are_the_endpoints_its_chain_jumps_to() {
        // As kube-proxy writes them: the Service's portal, its chain's jumps to each
        // endpoint, and each endpoint's own chain.
        let saved = r#"*nat
:KUBE-SVC-AAAA - [0:0]
-A KUBE-SERVICES -d 10.96.12.34/32 -p tcp -m comment --comment "system/metrics:https cluster IP" -m tcp --dport 8443 -j KUBE-SVC-AAAA
-A KUBE-SVC-AAAA -m comment --comment "system/metrics:https -> 10.244.0.7:8443" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-BBBB
-A KUBE-SVC-AAAA -m comment --comment "system/metrics:https -> 10.244.0.9:8443" -j KUBE-SEP-CCCC
-A KUBE-SEP-BBBB -p tcp -m comment --comment "system/metrics:https" -m tcp -j DNAT --to-destination 10.244.0.7:8443
-A KUBE-SVC-DDDD -m comment --comment "system/metrics-other:https -> 10.244.0.8:8443" -j KUBE-SEP-EEEE
COMMIT
"#;
        assert_eq!(
            routes_in(saved, "system/metrics:https"),
            BTreeSet::from(["10.244.0.7:8443".to_owned(), "10.244.0.9:8443".to_owned()])
        );
        assert!(routes_in(saved, "system/metrics:http").is_empty());
    }
}

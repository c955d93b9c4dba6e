//! The manager process as the benchmark sees it: memory and CPU time from `/proc`, and
//! its heap under heaptrack.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use kubebuilder_envtest::node::packages;

/// The kernel's fixed unit of the CPU times in `/proc/<pid>/stat` (`USER_HZ`).
const TICKS_PER_SECOND: u64 = 100;
/// Allocation sites in the heap summary.
const TOP_SITES: usize = 12;

/// `VmRSS` and `VmHWM` of a process, in KiB.
pub(super) fn memory_of(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// User plus system CPU time of a process so far.
pub(super) fn cpu_time_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are space-separated, utime
    // and stime being the 14th and 15th of the line.
    let after_name = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

/// `heaptrack -o <profile> <binary>`: the manager as a child of heaptrack's script.
pub(super) fn under_heaptrack(binary: &Path, profile: &Path) -> Result<Command> {
    packages::ensure(
        "the heap profile",
        &[
            ("/usr/bin/heaptrack", "heaptrack"),
            ("/usr/bin/heaptrack_print", "heaptrack"),
        ],
    )?;
    for old in profile_files(profile)? {
        std::fs::remove_file(old)?;
    }
    let mut command = Command::new("heaptrack");
    command.arg("-o").arg(profile).arg(binary);
    Ok(command)
}

/// The manager's own process id: `child` itself, or under heaptrack the process its
/// script started (which `/proc` lists as the script's child once it runs).
pub(super) fn manager_pid(child: &Child, profiled: bool) -> Result<u32> {
    if !profiled {
        return Ok(child.id());
    }
    let children = format!("/proc/{0}/task/{0}/children", child.id());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // heaptrack's script starts its interpreter first, the manager last.
        let found = std::fs::read_to_string(&children)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pid| pid.parse::<u32>().ok())
            .find(|pid| {
                std::fs::read_link(format!("/proc/{pid}/exe"))
                    .is_ok_and(|exe| exe.to_string_lossy().contains("controller-"))
            });
        if let Some(pid) = found {
            return Ok(pid);
        }
        ensure!(
            Instant::now() < deadline,
            "heaptrack did not start the manager within 10 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The files heaptrack wrote for `profile` (it appends the compressor's extension).
fn profile_files(profile: &Path) -> Result<Vec<PathBuf>> {
    let dir = profile.parent().context("the profile's directory")?;
    let stem = profile
        .file_name()
        .context("the profile's name")?
        .to_string_lossy()
        .into_owned();
    Ok(std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{stem}.")))
        })
        .collect())
}

/// The allocation sites holding the most memory at the manager's peak, from heaptrack's
/// peak flame graph: each stack is charged to its innermost frame that is not allocator,
/// standard library, collection or serde machinery (so a deserialised object is charged
/// to the type whose visitor allocated it, a cached object to the cache that keeps it).
pub(super) fn heap_summary(profile: &Path, cronjobs: usize) -> Result<String> {
    let Ok([file]) = <[PathBuf; 1]>::try_from(profile_files(profile)?) else {
        bail!(
            "heaptrack wrote no single profile for {}",
            profile.display()
        );
    };
    let stacks = profile.with_extension("stacks");
    let status = Command::new("heaptrack_print")
        .arg("--file")
        .arg(&file)
        .args(["--flamegraph-cost-type", "peak", "--print-flamegraph"])
        .arg(&stacks)
        .args([
            "--print-peaks=0",
            "--print-allocators=0",
            "--print-temporary=0",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .context("running heaptrack_print")?;
    ensure!(status.success(), "heaptrack_print failed ({status})");
    let folded = std::fs::read_to_string(&stacks)?;
    let mut by_site: HashMap<String, u64> = HashMap::new();
    let mut total = 0;
    for line in folded.lines() {
        let Some((stack, bytes)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(bytes) = bytes.parse::<u64>() else {
            continue;
        };
        total += bytes;
        *by_site.entry(site_of(stack)).or_default() += bytes;
    }
    let mut sites: Vec<(String, u64)> = by_site.into_iter().collect();
    sites.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Heap at the manager's peak, {cronjobs} CronJobs (heaptrack; {:.1} MiB live)\n",
        mib(total)
    );
    let _ = writeln!(out, "| allocation site | MiB | share | bytes per CronJob |");
    let _ = writeln!(out, "|---|---|---|---|");
    for (site, bytes) in sites.iter().take(TOP_SITES) {
        let _ = writeln!(
            out,
            "| `{}` | {:.1} | {:.0} % | {} |",
            site.replace('|', "\\|"),
            mib(*bytes),
            *bytes as f64 * 100.0 / total.max(1) as f64,
            bytes / cronjobs.max(1) as u64
        );
    }
    let _ = writeln!(out, "\nProfile: {}", file.display());
    Ok(out)
}

/// Frames that allocate on behalf of their caller.
const MACHINERY: [&str; 16] = [
    "malloc",
    "calloc",
    "realloc",
    "operator new",
    "alloc::",
    "<alloc::",
    "core::",
    "<core::",
    "std::",
    "<std::",
    "hashbrown::",
    "<hashbrown::",
    "serde::",
    "<serde::",
    "serde_json::",
    "<serde_json::",
];

/// The innermost frame of a folded stack (outermost first, `;`-separated) that is not
/// allocation machinery, as a Rust path.
fn site_of(stack: &str) -> String {
    stack
        .rsplit(';')
        .map(|frame| rust_name(frame.trim()))
        .find(|frame| {
            !frame.is_empty()
                && !frame.starts_with("0x")
                && !frame.starts_with("??")
                && !MACHINERY.iter().any(|prefix| frame.starts_with(prefix))
        })
        .unwrap_or_else(|| "(unresolved)".to_owned())
}

/// A frame as Rust spells it. heaptrack demangles symbols as C++: a v0 symbol (`_R…`) is
/// left as it is, and a legacy one keeps Rust's escapes (`_$LT$alloc..vec..Vec…`) and its
/// hash; both become `<alloc::vec::Vec…`.
fn rust_name(frame: &str) -> String {
    if frame.starts_with("_R")
        && let Ok(name) = rustc_demangle::try_demangle(frame)
    {
        return format!("{name:#}");
    }
    const ESCAPES: [(&str, &str); 13] = [
        ("$LT$", "<"),
        ("$GT$", ">"),
        ("$u20$", " "),
        ("$C$", ","),
        ("$RF$", "&"),
        ("$BP$", "*"),
        ("$SP$", "@"),
        ("$u7b$", "{"),
        ("$u7d$", "}"),
        ("$u27$", "'"),
        ("$u5b$", "["),
        ("$u5d$", "]"),
        ("$u3b$", ";"),
    ];
    let mut name = frame
        .strip_prefix('_')
        .filter(|rest| rest.starts_with('$'))
        .unwrap_or(frame)
        .to_owned();
    for (escape, plain) in ESCAPES {
        name = name.replace(escape, plain);
    }
    name = name.replace("..", "::");
    // The legacy mangling's hash: `::h` and 16 hex digits at the end.
    if let Some((path, hash)) = name.rsplit_once("::h")
        && hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
    {
        name = path.to_owned();
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heaptrack_frames_read_as_rust_paths() {
        assert_eq!(
            rust_name(
                "_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..clone..Clone$GT$::clone::h0ca859f3373efdbd"
            ),
            "<alloc::vec::Vec<T,A> as core::clone::Clone>::clone"
        );
        assert_eq!(
            rust_name(
                "kube_runtime::reflector::store::Writer$LT$K$GT$::apply_watcher_event::h2eb4bc9d8534c809"
            ),
            "kube_runtime::reflector::store::Writer<K>::apply_watcher_event"
        );
        assert_eq!(
            rust_name(
                "_RNvXs4_NtCslNYArtu3iFV_5alloc6stringNtB5_6StringNtNtCsgEmfK2I1SDS_4core5clone5Clone5clone"
            ),
            "<alloc::string::String as core::clone::Clone>::clone"
        );
    }

    #[test]
    fn a_stack_is_charged_to_its_innermost_own_frame() {
        let stack = "main;kube_runtime::reflector::store::Writer<K>::apply_watcher_event;\
                     alloc::sync::Arc<T>::new;alloc::alloc::alloc;malloc";
        assert_eq!(
            site_of(stack),
            "kube_runtime::reflector::store::Writer<K>::apply_watcher_event"
        );
        assert_eq!(site_of("malloc;0x5587b882cc6e"), "(unresolved)");
    }

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        let (rss, peak) = memory_of(pid).unwrap();
        assert!(rss > 0 && peak >= rss);
        assert!(cpu_time_of(pid).is_some());
    }
}

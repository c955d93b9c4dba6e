//! The node's processes: started detached (a session of their own, no parent-death
//! signal), so that the node outlives the `cargo xtask cluster up` that started it, and
//! stopped by pid from any later process.

use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// A started daemon: enough to find and stop it later.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Daemon {
    pub name: String,
    pub pid: i32,
    /// The executable, to tell our process from a later one that reused its pid.
    pub exe: PathBuf,
    pub log: PathBuf,
}

/// Starts `program` detached, with only `env` (and a plain `PATH`) in its environment and
/// its output appended to `log`.
pub fn spawn(
    name: &str,
    program: &Path,
    args: &[String],
    env: &[(&str, &str)],
    log: PathBuf,
) -> Result<Daemon> {
    let out = File::options()
        .create(true)
        .append(true)
        .open(&log)
        .with_context(|| format!("creating {}", log.display()))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .envs(env.iter().copied())
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    // SAFETY: setsid is async-signal-safe; it detaches the daemon from our session, so a
    // Ctrl-C at the terminal that ran `up` does not reach it.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = command
        .spawn()
        .with_context(|| format!("starting {name} ({})", program.display()))?;
    let pid = i32::try_from(child.id()).context("pid out of range")?;
    // The child is not waited for here: `reap` collects it when it ends while we run.
    std::mem::forget(child);
    let exe = fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    Ok(Daemon {
        name: name.to_owned(),
        pid,
        exe,
        log,
    })
}

impl Daemon {
    /// Whether the process still runs (and is still ours: same executable).
    pub fn is_running(&self) -> bool {
        reap(self.pid);
        is_alive(self.pid) && exe_of(self.pid).is_some_and(|exe| exe == self.exe)
    }

    /// SIGTERM, then SIGKILL after `grace`; returns once the process is gone.
    pub fn stop(&self, grace: Duration) {
        if !self.is_running() {
            return;
        }
        signal(self.pid, libc::SIGTERM);
        let deadline = Instant::now() + grace;
        while self.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if self.is_running() {
            signal(self.pid, libc::SIGKILL);
            let deadline = Instant::now() + Duration::from_secs(5);
            while self.is_running() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    /// The last lines of the daemon's log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

/// Sends `signal` to `pid`.
pub fn signal(pid: i32, signal: libc::c_int) {
    // SAFETY: a plain syscall; a pid that is gone gives ESRCH, which is ignored.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Collects `pid` if it is our exited child (a zombie counts as gone for us).
fn reap(pid: i32) {
    // SAFETY: a non-blocking waitpid; for a process that is not our child it fails (ECHILD).
    unsafe {
        libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
    }
}

/// Whether `pid` exists and is not a zombie.
pub fn is_alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        // The state follows the command name in parentheses, which may hold spaces.
        stat.rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X')
    })
}

/// The executable of `pid`, if it is readable.
pub fn exe_of(pid: i32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// Every live process on the machine: pid and executable.
pub fn processes() -> Vec<(i32, PathBuf)> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| is_alive(*pid))
        .filter_map(|pid| Some((pid, exe_of(pid)?)))
        .collect()
}

/// The command line of `pid`, its arguments joined by spaces.
pub fn cmdline_of(pid: i32) -> String {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .split('\0')
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

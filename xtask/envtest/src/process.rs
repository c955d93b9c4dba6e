//! Child processes that never outlive the process that started them.
//!
//! A test binary's shared control plane lives in a `static`, which Rust never drops, and a
//! test may panic or the binary may be killed. Two guards cover this:
//! - every child is started with `PR_SET_PDEATHSIG = SIGKILL` from one thread that lives as
//!   long as the process (the signal follows the *thread* that forked, so a test thread
//!   must not be that parent), so the kernel kills it whatever way we die;
//! - an `atexit` hook stops the children still registered and removes their directories
//!   when the process exits normally (libtest exits through `exit` also after a panic).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// A child process whose output goes to a log file; once stopped, it can be started again
/// with the same program and arguments (a restart after a crash).
pub struct Process {
    name: &'static str,
    program: PathBuf,
    args: Vec<String>,
    child: Child,
    log: PathBuf,
    /// Whether `child` has been stopped and reaped (its pid may belong to another process).
    reaped: bool,
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Things the `atexit` hook cleans: process ids to stop and directories to remove.
static AT_EXIT: Mutex<Vec<Cleanup>> = Mutex::new(Vec::new());

enum Cleanup {
    Process(u32),
    Dir(PathBuf),
}

impl Process {
    /// Starts `program` with `args`, its stdout and stderr written to `log` (truncated).
    pub fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<Self> {
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let child = launch(name, program, args, out)?;
        Ok(Self {
            name,
            program: program.to_path_buf(),
            args: args.to_vec(),
            child,
            log,
            reaped: false,
        })
    }

    /// Starts the stopped process again with the same program and arguments, its output
    /// appended to the same log (which keeps what the previous run wrote).
    ///
    /// # Panics
    /// When the process has not been stopped.
    pub fn restart(&mut self) -> Result<()> {
        assert!(self.reaped, "{} is still running", self.name);
        let out = File::options()
            .append(true)
            .open(&self.log)
            .with_context(|| format!("opening {}", self.log.display()))?;
        self.child = launch(self.name, &self.program, &self.args, out)?;
        self.reaped = false;
        Ok(())
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `Some(description)` when the process has exited.
    pub fn exited(&mut self) -> Option<String> {
        if self.reaped {
            return Some("stopped".to_owned());
        }
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(err) => Some(err.to_string()),
        }
    }

    /// The last lines the process wrote, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// SIGTERM, then SIGKILL after `grace` (at once when `grace` is zero). Stopping a
    /// stopped process does nothing.
    pub fn stop(&mut self, grace: Duration) {
        if self.reaped {
            return;
        }
        self.reaped = true;
        let pid = self.child.id();
        unregister_cleanup(|c| matches!(c, Cleanup::Process(p) if *p == pid));
        if self.child.try_wait().ok().flatten().is_some() {
            return;
        }
        terminate(pid, grace);
    }
}

/// Starts `program` from the keeper thread, killed with us, registered for the exit hook.
fn launch(name: &str, program: &Path, args: &[String], out: File) -> Result<Child> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out)
        // A group of its own: Ctrl-C at a terminal interrupts the program in the
        // foreground (`cargo xtask run`), which stops the control plane last, after
        // the manager it runs has shut down against a live apiserver.
        .process_group(0);
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = spawn_from_keeper(command)
        .with_context(|| format!("starting {name} ({})", program.display()))?;
    register_cleanup(Cleanup::Process(child.id()));
    Ok(child)
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop(Duration::from_secs(5));
    }
}

/// Removes `dir` at process exit unless [`forget_dir`] is called first.
pub fn remove_dir_at_exit(dir: &Path) {
    register_cleanup(Cleanup::Dir(dir.to_path_buf()));
}

/// Undoes [`remove_dir_at_exit`] (the owner removed it already).
pub fn forget_dir(dir: &Path) {
    unregister_cleanup(|c| matches!(c, Cleanup::Dir(d) if d == dir));
}

/// Stops a child of ours: SIGTERM, then SIGKILL after `grace` (SIGKILL alone when `grace`
/// is zero: a crash, with no chance to shut down); reaps it either way.
fn terminate(pid: u32, grace: Duration) {
    let pid = pid as libc::pid_t;
    let reaped = || {
        // SAFETY: waitpid on our own child, without blocking.
        let result = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        result == pid || result == -1
    };
    if !grace.is_zero() {
        // SAFETY: plain syscalls on a child we started.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if reaped() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above; a blocking wait after SIGKILL returns at once.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

fn spawn_from_keeper(command: Command) -> std::io::Result<Child> {
    static KEEPER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("envtest-keeper".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
                // The sender lives in a static, so this thread only ends with the process.
            })
            .expect("cannot start the envtest keeper thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    keeper
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((command, reply_tx))
        .map_err(|_| std::io::Error::other("envtest keeper thread is gone"))?;
    reply_rx
        .recv()
        .map_err(|_| std::io::Error::other("envtest keeper thread is gone"))?
}

fn register_cleanup(cleanup: Cleanup) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // SAFETY: registering a plain `extern "C" fn` with no captured state.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
    AT_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(cleanup);
}

fn unregister_cleanup(matches: impl Fn(&Cleanup) -> bool) {
    AT_EXIT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|c| !matches(c));
}

extern "C" fn cleanup_at_exit() {
    let pending = std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    // Processes first (they hold files in the directories), newest first.
    for cleanup in pending.iter().rev() {
        if let Cleanup::Process(pid) = cleanup {
            terminate(*pid, Duration::from_secs(5));
        }
    }
    for cleanup in &pending {
        if let Cleanup::Dir(dir) = cleanup {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

//! `cargo xtask envtest install|start|stop`: the control plane binaries and a long-lived
//! local control plane for people (tests start their own).

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use kubebuilder_envtest::{ControlPlane, Options, assets};

/// The subcommands of `cargo xtask envtest`: what `setup-envtest use` and a long-running
/// envtest give Go projects.
#[derive(Subcommand)]
pub enum Command {
    /// Build kube-apiserver and etcd (or reuse the cache / KUBEBUILDER_ASSETS) and print the directory.
    Install,
    /// Start a local control plane in the background and print `export KUBECONFIG=…`.
    Start,
    /// Stop the local control plane started by `start`.
    Stop,
    /// Run the control plane in the foreground until SIGTERM (what `start` launches).
    #[command(hide = true)]
    Serve,
}

/// Runs a `cargo xtask envtest` subcommand; the control plane's state is in [`local_dir`].
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Install => {
            println!("{}", assets::install()?.display());
            Ok(())
        }
        Command::Start => start(),
        Command::Stop => stop(),
        Command::Serve => serve(),
    }
}

/// Where the local control plane keeps its state, kubeconfig and logs: `envtest-local` in
/// the workspace's target directory (wherever `CARGO_TARGET_DIR` puts it).
pub fn local_dir() -> Result<PathBuf> {
    Ok(crate::target_dir()?.join("envtest-local"))
}

fn start() -> Result<()> {
    assets::install()?;
    let dir = local_dir()?;
    if running_pid(&dir).is_some() {
        eprintln!("a local control plane is already running");
        print_export(&dir);
        return Ok(());
    }
    fs::create_dir_all(&dir)?;
    let _ = fs::remove_file(dir.join("pid"));
    let log = fs::File::create(dir.join("serve.log"))?;
    let mut command = std::process::Command::new(crate::xtask_exe()?);
    command
        .args(["envtest", "serve"])
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    // SAFETY: setsid is async-signal-safe; it detaches the server from this terminal.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = command.spawn().context("starting `xtask envtest serve`")?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while running_pid(&dir).is_none() {
        if let Some(status) = child.try_wait()? {
            let log = fs::read_to_string(dir.join("serve.log")).unwrap_or_default();
            bail!("the control plane exited ({status}):\n{log}");
        }
        if Instant::now() > deadline {
            bail!(
                "the control plane did not become ready; see {}",
                dir.join("serve.log").display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    print_export(&dir);
    Ok(())
}

fn serve() -> Result<()> {
    let dir = local_dir()?;
    let plane = ControlPlane::start_with(Options {
        work_dir: Some(dir.join("plane")),
        ..Options::default()
    })?;
    fs::copy(plane.kubeconfig_path(), dir.join("kubeconfig"))?;
    // The pid file is written last: its presence means "ready".
    fs::write(dir.join("pid"), std::process::id().to_string())?;
    wait_for_termination();
    let _ = fs::remove_file(dir.join("pid"));
    plane.stop();
    Ok(())
}

fn stop() -> Result<()> {
    let dir = local_dir()?;
    let Some(pid) = running_pid(&dir) else {
        eprintln!("no local control plane is running");
        return Ok(());
    };
    // SAFETY: signalling the server process recorded in our own pid file.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while process_alive(pid) {
        if Instant::now() > deadline {
            bail!("the control plane (pid {pid}) did not stop within 30 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = fs::remove_file(dir.join("pid"));
    eprintln!("local control plane stopped");
    Ok(())
}

fn print_export(dir: &Path) {
    println!("export KUBECONFIG={}", dir.join("kubeconfig").display());
}

fn running_pid(dir: &Path) -> Option<libc::pid_t> {
    let pid = fs::read_to_string(dir.join("pid"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    process_alive(pid).then_some(pid)
}

fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists
        && fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
}

/// Blocks until SIGTERM or SIGINT arrives.
fn wait_for_termination() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    });
}

//! The workspace's test executables, built by one `cargo test --no-run` with every feature
//! and then run directly, the way `cargo test` runs them (in the package's directory, with
//! the variables cargo sets): `cargo test` runs them one after another, and these commands
//! run several at once, each at the priority its work needs, its output kept apart.
//!
//! Every feature, so that `test`, `test-faults` and `test-e2e` build the same artifacts
//! once (the `faults` and `e2e` features only mark test targets).
//!
//! The build is also clippy's run: the workspace's crates are compiled by `clippy-driver`
//! (cargo's `RUSTC_WORKSPACE_WRAPPER`, as `cargo clippy` does, but building instead of only
//! checking), so that the dependencies are compiled once, not once more for a separate
//! `cargo clippy --all-targets --all-features`; the warnings are collected, printed as they
//! come, and make the run fail at its end, after the tests.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File};
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// One test executable of a workspace package, as cargo built it.
#[derive(Clone, Debug)]
pub struct TestBinary {
    /// The package's name.
    pub package: String,
    /// The target's name (`controller` for a lib's unit tests, `faults_leader` for
    /// `tests/faults_leader.rs`).
    pub target: String,
    /// The target's kind as cargo names it (`lib`, `bin`, `test`, `bench`, `example`).
    pub kind: String,
    /// The features the target requires (`required-features`).
    pub required_features: Vec<String>,
    /// The package's dev-dependencies, by name.
    pub dev_dependencies: Vec<String>,
    /// The executable.
    pub executable: PathBuf,
    /// The variables `cargo test` sets for this package's tests.
    env: Vec<(&'static str, String)>,
    /// The package's directory, in which cargo runs its tests.
    dir: PathBuf,
}

impl TestBinary {
    /// How `cargo test` names the target: `controller --test faults_leader`,
    /// `kubebuilder-runtime --lib`.
    pub fn name(&self) -> String {
        match self.kind.as_str() {
            "lib" | "proc-macro" => format!("{} --lib", self.package),
            kind => format!("{} --{kind} {}", self.package, self.target),
        }
    }

    /// Whether the target requires `feature`.
    pub fn requires(&self, feature: &str) -> bool {
        self.required_features.iter().any(|f| f == feature)
    }

    /// The executable, ready to run as `cargo test` runs it; test arguments follow.
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.executable);
        command
            .current_dir(&self.dir)
            .envs(self.env.iter().map(|(name, value)| (*name, value)));
        command
    }

    /// How many tests the executable marks `#[ignore]` (libtest's `--list --ignored`).
    pub fn ignored_tests(&self) -> Result<usize> {
        let output = self
            .command()
            .args(["--list", "--ignored"])
            .stderr(Stdio::inherit())
            .output()
            .with_context(|| format!("listing the tests of {}", self.name()))?;
        if !output.status.success() {
            bail!("{} --list failed ({})", self.name(), output.status);
        }
        Ok(count_listed(&String::from_utf8_lossy(&output.stdout)))
    }
}

/// What the test build built.
pub struct Built {
    /// The test executables, in cargo's order.
    pub tests: Vec<TestBinary>,
    /// The programs (`[[bin]]` targets built as themselves), by target name.
    pub programs: BTreeMap<String, PathBuf>,
    /// The warnings of the workspace's crates (rustc's and clippy's lints), each as rendered.
    pub warnings: BTreeSet<String>,
}

/// Builds every test executable of the workspace at `root` (every target, every feature;
/// `build_args` may name packages instead of the whole workspace), and its libraries and
/// programs with the same features, linting them as it goes. Compiler diagnostics go to
/// standard error as they come.
pub fn build(root: &Path, build_args: &[String]) -> Result<Built> {
    let _one_at_a_time = lock_the_test_build()?;
    let tests_built = cargo_build(
        root,
        &["test", "--all-targets", "--no-run"],
        build_args,
        "building the tests",
    )?;
    let packages = crate::workspace_packages()?;
    let tests = from_messages(&tests_built.messages, &packages)?;
    if tests.is_empty() {
        bail!("cargo built no test executable");
    }
    // `--tests` keeps the features the tests were built with (dev-dependencies'
    // included), so that only the programs that no test runs are left to link. (The
    // libraries as themselves, `cfg(test)` off, which clippy lints besides the tests, were
    // built above for the tests that use them; `--lib` here would build them again, in
    // the dev profile.)
    let programs_built = cargo_build(
        root,
        &["build", "--tests", "--bins"],
        build_args,
        "building the programs",
    )?;
    Ok(Built {
        tests,
        programs: programs(&programs_built.messages),
        warnings: tests_built
            .warnings
            .into_iter()
            .chain(programs_built.warnings)
            .collect(),
    })
}

/// Waits until no other `cargo xtask` is building the test executables, and holds that
/// until dropped, so that `test`, `test-faults` and `test-e2e`, started side by side, build
/// once. Cargo's own lock on the artifact directory already serialises each cargo command;
/// this one spans both of the build's commands. A run without it (stop 39's run 4) was
/// 3 minutes slower, with the cause not measured: kept until an A/B run says otherwise.
fn lock_the_test_build() -> Result<File> {
    let target = crate::target_dir()?;
    fs::create_dir_all(&target).with_context(|| format!("creating {}", target.display()))?;
    let path = target.join("xtask-test-build.lock");
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    if file.try_lock().is_err() {
        eprintln!("xtask: waiting for another xtask's test build to end");
        file.lock()
            .with_context(|| format!("locking {}", path.display()))?;
    }
    Ok(file)
}

/// What one cargo build said: its JSON messages (the artifacts) and the warnings.
struct BuildOutput {
    messages: String,
    warnings: Vec<String>,
}

/// Runs `cargo <args> --all-features` on `build_args`' packages (else the workspace), the
/// workspace's crates compiled with clippy's lints, and returns its JSON messages and the
/// warnings, which it prints as they come.
fn cargo_build(
    root: &Path,
    args: &[&str],
    build_args: &[String],
    what: &str,
) -> Result<BuildOutput> {
    let mut command = crate::cargo();
    command
        .current_dir(root)
        .args(args)
        .args(["--all-features", "--message-format", "json"])
        .args(packages_or_workspace(build_args))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    with_lints(&mut command)?;
    let mut child = command
        .spawn()
        .with_context(|| format!("running cargo {}", args.join(" ")))?;
    let stdout = child.stdout.take().context("cargo's piped output")?;
    let mut output = BuildOutput {
        messages: String::new(),
        warnings: Vec::new(),
    };
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        if let Some((rendered, is_warning)) = diagnostic(&line) {
            eprint!("{rendered}");
            if is_warning {
                output.warnings.push(rendered);
            }
        }
        output.messages.push_str(&line);
        output.messages.push('\n');
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        bail!("{what} failed ({status}); the errors are above");
    }
    Ok(output)
}

/// Has `command`, a cargo build, compile the workspace's crates with clippy's lints (its
/// dependencies as usual): every build of the test executables must say the same, or
/// cargo compiles the workspace's crates again.
pub fn with_lints(command: &mut Command) -> Result<&mut Command> {
    Ok(command.env("RUSTC_WORKSPACE_WRAPPER", clippy_driver()?))
}

/// The toolchain's `clippy-driver`, beside its `rustc`.
fn clippy_driver() -> Result<PathBuf> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .with_context(|| format!("running {} --print sysroot", rustc.to_string_lossy()))?;
    let sysroot = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let driver = Path::new(&sysroot).join("bin/clippy-driver");
    if !driver.is_file() {
        bail!(
            "{} is missing: the tests lint as they build (`rustup component add clippy`)",
            driver.display()
        );
    }
    Ok(driver)
}

/// A compiler message of cargo's JSON output: its rendered text, and whether it is a
/// warning or an error about the code (rather than a count such as `2 warnings emitted`,
/// which points at no code).
fn diagnostic(line: &str) -> Option<(String, bool)> {
    let message: serde_json::Value = serde_json::from_str(line).ok()?;
    if message["reason"] != "compiler-message" {
        return None;
    }
    let diagnostic = &message["message"];
    let rendered = diagnostic["rendered"].as_str()?.to_owned();
    let points_at_code = diagnostic["spans"]
        .as_array()
        .is_some_and(|spans| !spans.is_empty());
    let is_warning =
        matches!(diagnostic["level"].as_str(), Some("warning" | "error")) && points_at_code;
    Some((rendered, is_warning))
}

/// `build_args` when they name packages, else `--workspace` before them.
pub fn packages_or_workspace(build_args: &[String]) -> Vec<String> {
    if build_args
        .iter()
        .any(|arg| arg == "-p" || arg.starts_with("--package"))
    {
        build_args.to_vec()
    } else {
        [&["--workspace".to_owned()], build_args].concat()
    }
}

/// The test executables among cargo's JSON `messages` (`compiler-artifact`s built in test
/// mode), described with what `packages` (`cargo metadata`) says of their package.
fn from_messages(messages: &str, packages: &[serde_json::Value]) -> Result<Vec<TestBinary>> {
    let by_manifest: BTreeMap<&str, &serde_json::Value> = packages
        .iter()
        .filter_map(|package| Some((package["manifest_path"].as_str()?, package)))
        .collect();
    let mut binaries = Vec::new();
    for message in artifacts(messages) {
        let is_test = message["profile"]["test"] == true;
        let (true, Some(executable)) = (is_test, message["executable"].as_str()) else {
            continue;
        };
        let manifest = message["manifest_path"].as_str().unwrap_or_default();
        let package = by_manifest
            .get(manifest)
            .with_context(|| format!("no workspace package has the manifest {manifest}"))?;
        let target = &message["target"];
        let name = target["name"].as_str().unwrap_or_default();
        let kind = target["kind"][0].as_str().unwrap_or_default();
        let required_features = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["name"] == name && t["kind"][0] == kind)
            .and_then(|t| t["required-features"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|feature| feature.as_str().map(str::to_owned))
            .collect();
        let dev_dependencies = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|dependency| dependency["kind"] == "dev")
            .filter_map(|dependency| dependency["name"].as_str().map(str::to_owned))
            .collect();
        binaries.push(TestBinary {
            package: package["name"].as_str().unwrap_or_default().to_owned(),
            target: name.to_owned(),
            kind: kind.to_owned(),
            required_features,
            dev_dependencies,
            executable: PathBuf::from(executable),
            env: package_env(package, name),
            dir: Path::new(manifest)
                .parent()
                .context("a manifest path has a directory")?
                .to_owned(),
        });
    }
    Ok(binaries)
}

/// The `compiler-artifact` messages among cargo's JSON `messages`.
fn artifacts(messages: &str) -> impl Iterator<Item = serde_json::Value> + '_ {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
}

/// The programs among cargo's JSON `messages`: `bin` targets built as themselves, not as
/// test executables.
fn programs(messages: &str) -> BTreeMap<String, PathBuf> {
    artifacts(messages)
        .filter(|message| {
            message["profile"]["test"] == false && message["target"]["kind"][0] == "bin"
        })
        .filter_map(|message| {
            let name = message["target"]["name"].as_str()?.to_owned();
            Some((name, PathBuf::from(message["executable"].as_str()?)))
        })
        .collect()
}

/// The variables cargo sets when it runs a test of `package`'s target `target`.
fn package_env(package: &serde_json::Value, target: &str) -> Vec<(&'static str, String)> {
    let text = |key: &str| package[key].as_str().unwrap_or_default().to_owned();
    let version = text("version");
    let (release, pre) = version.split_once('-').unwrap_or((&version, ""));
    let mut parts = release.split('.').map(str::to_owned);
    let manifest = text("manifest_path");
    let dir = Path::new(&manifest)
        .parent()
        .map(|dir| dir.display().to_string())
        .unwrap_or_default();
    let authors = package["authors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|author| author.as_str())
        .collect::<Vec<_>>()
        .join(":");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    vec![
        ("CARGO", cargo),
        ("CARGO_MANIFEST_DIR", dir),
        ("CARGO_MANIFEST_PATH", manifest),
        ("CARGO_PKG_NAME", text("name")),
        ("CARGO_PKG_VERSION", version.clone()),
        ("CARGO_PKG_VERSION_MAJOR", parts.next().unwrap_or_default()),
        ("CARGO_PKG_VERSION_MINOR", parts.next().unwrap_or_default()),
        ("CARGO_PKG_VERSION_PATCH", parts.next().unwrap_or_default()),
        ("CARGO_PKG_VERSION_PRE", pre.to_owned()),
        ("CARGO_PKG_AUTHORS", authors),
        ("CARGO_PKG_DESCRIPTION", text("description")),
        ("CARGO_PKG_HOMEPAGE", text("homepage")),
        ("CARGO_PKG_REPOSITORY", text("repository")),
        ("CARGO_PKG_LICENSE", text("license")),
        ("CARGO_PKG_LICENSE_FILE", text("license_file")),
        ("CARGO_PKG_RUST_VERSION", text("rust_version")),
        ("CARGO_PKG_README", text("readme")),
        ("CARGO_CRATE_NAME", target.replace('-', "_")),
        ("CARGO_PRIMARY_PACKAGE", "1".to_owned()),
    ]
}

/// The number of tests in libtest's `--list` output (`<name>: test` lines).
fn count_listed(list: &str) -> usize {
    list.lines().filter(|line| line.ends_with(": test")).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packages() -> Vec<serde_json::Value> {
        serde_json::from_value(serde_json::json!([{
            "name": "operator",
            "version": "1.2.3-rc.1",
            "authors": ["A", "B"],
            "manifest_path": "/work/operator/Cargo.toml",
            "dependencies": [
                {"name": "serde", "kind": null},
                {"name": "trybuild", "kind": "dev"}
            ],
            "targets": [
                {"name": "operator", "kind": ["lib"]},
                {"name": "faults_leader", "kind": ["test"], "required-features": ["faults"]},
                {"name": "operator", "kind": ["bin"]}
            ]
        }]))
        .unwrap()
    }

    fn artifact(name: &str, kind: &str, test: bool, executable: Option<&str>) -> String {
        serde_json::json!({
            "reason": "compiler-artifact",
            "manifest_path": "/work/operator/Cargo.toml",
            "target": {"name": name, "kind": [kind]},
            "profile": {"test": test},
            "executable": executable,
        })
        .to_string()
    }

    #[test]
    fn the_test_executables_are_the_artifacts_built_in_test_mode() {
        let messages = [
            artifact("operator", "lib", true, Some("/t/deps/operator-1")),
            // The binary itself (for `CARGO_BIN_EXE_operator`) is no test executable.
            artifact("operator", "bin", false, Some("/t/operator")),
            artifact("operator", "bin", true, Some("/t/deps/operator-2")),
            artifact(
                "faults_leader",
                "test",
                true,
                Some("/t/deps/faults_leader-3"),
            ),
            // A library built for the tests, with nothing to run.
            artifact("operator", "lib", false, None),
            "Compiling operator".to_owned(),
        ]
        .join("\n");
        let binaries = from_messages(&messages, &packages()).unwrap();
        let names: Vec<String> = binaries.iter().map(TestBinary::name).collect();
        assert_eq!(
            names,
            [
                "operator --lib",
                "operator --bin operator",
                "operator --test faults_leader"
            ]
        );
        assert!(binaries[2].requires("faults"));
        assert_eq!(binaries[0].dev_dependencies, ["trybuild"]);
        assert!(!binaries[0].requires("faults"));
        assert_eq!(binaries[2].dir, Path::new("/work/operator"));
        assert_eq!(
            programs(&messages),
            BTreeMap::from([("operator".to_owned(), PathBuf::from("/t/operator"))])
        );
    }

    #[test]
    fn tests_run_with_the_variables_cargo_sets() {
        let env = package_env(&packages()[0], "faults_leader");
        let value = |name: &str| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, value)| value.as_str())
        };
        assert_eq!(value("CARGO_MANIFEST_DIR"), Some("/work/operator"));
        assert_eq!(value("CARGO_PKG_NAME"), Some("operator"));
        assert_eq!(value("CARGO_PKG_VERSION_MINOR"), Some("2"));
        assert_eq!(value("CARGO_PKG_VERSION_PRE"), Some("rc.1"));
        assert_eq!(value("CARGO_PKG_AUTHORS"), Some("A:B"));
        assert_eq!(value("CARGO_CRATE_NAME"), Some("faults_leader"));
    }

    #[test]
    fn named_packages_replace_the_workspace() {
        let strings = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        assert_eq!(packages_or_workspace(&[]), strings(&["--workspace"]));
        assert_eq!(
            packages_or_workspace(&strings(&["-p", "api"])),
            strings(&["-p", "api"])
        );
        assert_eq!(
            packages_or_workspace(&strings(&["--package=api", "--locked"])),
            strings(&["--package=api", "--locked"])
        );
        assert_eq!(
            packages_or_workspace(&strings(&["--locked"])),
            strings(&["--workspace", "--locked"])
        );
    }

    #[test]
    fn listed_tests_are_counted_and_benchmarks_and_the_summary_are_not() {
        let list = "slow_one: test\nslow_two: test\nbench_it: benchmark\n\n2 tests, 1 benchmark\n";
        assert_eq!(count_listed(list), 2);
        assert_eq!(count_listed("\n0 tests, 0 benchmarks\n"), 0);
    }
}

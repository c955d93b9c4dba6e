//! `cargo xtask test` checks the formatting first, as `make test` runs `fmt` before envtest:
//! a misformatted file fails it in a second, before any tool is installed or control plane
//! started.

use std::process::Command;

#[test]
fn a_misformatted_file_fails_the_tests_before_a_control_plane_starts() {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"operator\"]\nresolver = \"3\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join("operator/src")).unwrap();
    std::fs::write(
        root.join("operator/Cargo.toml"),
        "[package]\nname = \"operator\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("operator/src/lib.rs"),
        "pub fn  misformatted( ) {}\n",
    )
    .unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("test")
        .current_dir(root)
        // xtask finds its workspace from here first; the one under test is the current one.
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!output.status.success(), "{printed}");
    assert!(printed.contains("cargo fmt --check failed"), "{printed}");
    assert!(!printed.contains("control plane"), "{printed}");
}

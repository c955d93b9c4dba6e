//! A plan of file writes, computed in memory and applied all at once.
//!
//! Scaffolding reads files, validates its arguments and decides every new file content
//! first; only a complete, valid plan touches the disk, so a bad argument leaves the tree
//! exactly as it was. Applying writes each file to a temporary sibling, then renames them
//! all into place; if anything fails, what was already renamed is put back.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// New contents for files of one directory tree, by path relative to its root.
#[derive(Debug)]
pub struct Plan {
    root: PathBuf,
    files: BTreeMap<PathBuf, String>,
}

impl Plan {
    /// An empty plan for the tree at `root` (a workspace root, or `init`'s new directory).
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            files: BTreeMap::new(),
        }
    }

    /// The directory the planned paths are relative to.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A file as it will be: planned, else on disk, else `None`.
    pub fn read(&self, path: &str) -> Result<Option<String>> {
        if let Some(planned) = self.files.get(Path::new(path)) {
            return Ok(Some(planned.clone()));
        }
        match fs::read_to_string(self.root.join(path)) {
            Ok(text) => Ok(Some(text)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error).with_context(|| format!("reading {path}")),
        }
    }

    /// Whether `path` exists, on disk or in the plan.
    pub fn exists(&self, path: &str) -> bool {
        self.files.contains_key(Path::new(path)) || self.root.join(path).exists()
    }

    /// Plans `content` for `path`.
    pub fn write(&mut self, path: &str, content: String) {
        self.files.insert(path.into(), content);
    }

    /// Plans a new file; one that exists already is an error unless `force`.
    pub fn create(&mut self, path: &str, content: String, force: bool) -> Result<()> {
        if !force && self.exists(path) {
            bail!("{path} already exists; pass --force to overwrite it");
        }
        self.write(path, content);
        Ok(())
    }

    /// Plans `line` just above the scaffold marker comment `marker` in `path`, with the
    /// marker's indentation, unless the file has that line already (scaffolding twice
    /// with `--force` adds nothing twice).
    pub fn insert_at_marker(&mut self, path: &str, marker: &str, line: &str) -> Result<()> {
        let text = self
            .read(path)?
            .with_context(|| format!("{path} does not exist"))?;
        let updated = insert_before_marker(&text, marker, line)
            .with_context(|| format!("{path} has no `{marker}` line to add `{line}` above"))?;
        self.write(path, updated);
        Ok(())
    }

    /// Puts `header` at the top of each planned Rust file that lacks it and is new, or
    /// replaces a file that had it (`--force`). A file edited in place keeps what it had:
    /// one whose header was removed does not get it back.
    pub fn prepend_header_to_rust_files(&mut self, header: &str) {
        for (path, content) in &mut self.files {
            let is_rust = path.extension().is_some_and(|extension| extension == "rs");
            let had_header = match fs::read_to_string(self.root.join(path)) {
                Ok(old) => old.starts_with(header),
                Err(_) => true,
            };
            if is_rust && had_header && !content.starts_with(header) {
                content.insert_str(0, header);
            }
        }
    }

    /// Runs rustfmt over every planned Rust file, in memory, so that the code written is
    /// formatted whatever the length of the names put into the templates.
    pub fn format_rust(&mut self) -> Result<()> {
        for (path, content) in &mut self.files {
            if path.extension().is_some_and(|extension| extension == "rs") {
                *content = rustfmt(content)
                    .with_context(|| format!("formatting the scaffolded {}", path.display()))?;
            }
        }
        Ok(())
    }

    /// Writes every planned file, or none: on any error, files already replaced get their
    /// old content back, new ones and new directories are removed.
    pub fn apply(self) -> Result<Vec<PathBuf>> {
        let mut applying = Applying::default();
        match applying.apply(&self) {
            Ok(()) => Ok(self.files.into_keys().collect()),
            Err(error) => {
                applying.roll_back();
                Err(error.context("nothing was written"))
            }
        }
    }
}

/// `text` with `line` above the marker line, or `None` without the marker.
fn insert_before_marker(text: &str, marker: &str, line: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|candidate| candidate.trim() == marker)?;
    if lines.iter().any(|existing| existing.trim() == line.trim()) {
        return Some(text.to_owned());
    }
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let mut updated: Vec<String> = lines.iter().map(|line| (*line).to_owned()).collect();
    updated.insert(at, format!("{indent}{}", line.trim()));
    Some(updated.join("\n") + "\n")
}

/// `source` as rustfmt (edition 2024) formats it.
fn rustfmt(source: &str) -> Result<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running rustfmt (`rustup component add rustfmt`)")?;
    child
        .stdin
        .take()
        .context("rustfmt's stdin")?
        .write_all(source.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "rustfmt failed:\n{}",
            String::from_utf8_lossy(&output.stderr).trim_end()
        );
    }
    String::from_utf8(output.stdout).context("rustfmt's output is not UTF-8")
}

/// What applying has done so far, to undo it.
#[derive(Default)]
struct Applying {
    created_dirs: Vec<PathBuf>,
    temporaries: Vec<PathBuf>,
    /// Files renamed into place, with their previous content (`None`: they were new).
    replaced: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Applying {
    fn apply(&mut self, plan: &Plan) -> Result<()> {
        // First every new content goes next to its target, so that a full disk or a
        // missing permission shows before any file changes...
        let mut staged = Vec::new();
        for (path, content) in &plan.files {
            let target = plan.root.join(path);
            let previous = match fs::read(&target) {
                Ok(bytes) => Some(bytes),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
                Err(error) => {
                    return Err(error).with_context(|| format!("reading {}", target.display()));
                }
            };
            let dir = target.parent().context("a file has a parent directory")?;
            self.create_dirs(dir)?;
            let temporary = dir.join(format!(
                ".{}.xtask-new",
                target.file_name().unwrap_or_default().to_string_lossy()
            ));
            self.temporaries.push(temporary.clone());
            fs::write(&temporary, content)
                .with_context(|| format!("writing {}", temporary.display()))?;
            staged.push((temporary, target, previous));
        }
        // ...then renames, which replace each file at once.
        for (temporary, target, previous) in staged {
            fs::rename(&temporary, &target)
                .with_context(|| format!("replacing {}", target.display()))?;
            self.temporaries.retain(|t| *t != temporary);
            self.replaced.push((target, previous));
        }
        Ok(())
    }

    /// Creates `dir` and its missing parents, remembering which were created.
    fn create_dirs(&mut self, dir: &Path) -> Result<()> {
        let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
        for dir in missing.into_iter().rev() {
            fs::create_dir(dir).with_context(|| format!("creating {}", dir.display()))?;
            self.created_dirs.push(dir.to_owned());
        }
        Ok(())
    }

    /// Best effort: this runs after an error, and reports nothing more.
    fn roll_back(self) {
        for (target, previous) in self.replaced.into_iter().rev() {
            let _ = match previous {
                Some(bytes) => fs::write(&target, bytes),
                None => fs::remove_file(&target),
            };
        }
        for temporary in self.temporaries {
            let _ = fs::remove_file(temporary);
        }
        for dir in self.created_dirs.into_iter().rev() {
            let _ = fs::remove_dir(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_go_above_the_marker_with_its_indentation_once() {
        let text = "fn main() {\n    a();\n    // +kubebuilder:scaffold:calls\n}\n";
        let once = insert_before_marker(text, "// +kubebuilder:scaffold:calls", "b();").unwrap();
        assert_eq!(
            once,
            "fn main() {\n    a();\n    b();\n    // +kubebuilder:scaffold:calls\n}\n"
        );
        assert_eq!(
            insert_before_marker(&once, "// +kubebuilder:scaffold:calls", "b();").unwrap(),
            once
        );
        assert_eq!(
            insert_before_marker(text, "// +kubebuilder:scaffold:other", "b();"),
            None
        );
    }

    #[test]
    fn the_plan_reads_its_own_writes_before_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "disk\n").unwrap();
        let mut plan = Plan::new(dir.path());
        assert_eq!(plan.read("a.txt").unwrap().as_deref(), Some("disk\n"));
        assert_eq!(plan.read("b.txt").unwrap(), None);
        plan.write("b.txt", "planned\n".into());
        assert!(plan.exists("b.txt"));
        assert_eq!(plan.read("b.txt").unwrap().as_deref(), Some("planned\n"));
        let error = plan.create("a.txt", "x".into(), false).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a.txt already exists; pass --force to overwrite it"
        );
        plan.create("a.txt", "forced\n".into(), true).unwrap();
        assert_eq!(plan.read("a.txt").unwrap().as_deref(), Some("forced\n"));
    }

    #[test]
    fn a_complete_plan_writes_every_file_and_creates_directories() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("old.txt"), "old\n").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.write("old.txt", "new\n".into());
        plan.write("deep/er/file.txt", "file\n".into());
        let written = plan.apply().unwrap();
        assert_eq!(
            written,
            [PathBuf::from("deep/er/file.txt"), PathBuf::from("old.txt")]
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("old.txt")).unwrap(),
            "new\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("deep/er/file.txt")).unwrap(),
            "file\n"
        );
        assert_eq!(
            fs::read_dir(dir.path().join("deep/er")).unwrap().count(),
            1,
            "no temporary file is left"
        );
    }

    #[test]
    fn a_plan_that_fails_midway_leaves_the_tree_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "a\n").unwrap();
        // `z` is a directory that a file cannot replace: the plan fails after `a.txt` and
        // `new/b.txt` (files go in path order) have been staged.
        fs::create_dir_all(root.join("z/inside")).unwrap();
        let mut plan = Plan::new(root);
        plan.write("a.txt", "changed\n".into());
        plan.write("new/b.txt", "b\n".into());
        plan.write("z", "not a directory\n".into());
        let error = plan.apply().unwrap_err();
        assert!(
            format!("{error:#}").starts_with("nothing was written: "),
            "{error:#}"
        );
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
        assert!(!root.join("new").exists());
        assert!(root.join("z/inside").is_dir());
        let mut left: Vec<String> = fs::read_dir(root)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.txt", "z"]);
    }

    #[test]
    fn rolling_back_restores_replaced_files_and_removes_new_ones() {
        // What happens when a rename fails late: everything before it is undone.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(root.join("a.txt"), "a\n").unwrap();
        let mut plan = Plan::new(root);
        plan.write("a.txt", "changed\n".into());
        plan.write("new/deeper/b.txt", "b\n".into());
        let mut applying = Applying::default();
        applying.apply(&plan).unwrap();
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "changed\n");
        applying.roll_back();
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
        assert!(!root.join("new").exists());
    }

    #[test]
    fn rust_files_are_formatted_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path());
        plan.write("src/lib.rs", "pub fn f( )->u8{1}".into());
        plan.write("notes.txt", "pub fn f( )->u8{1}".into());
        plan.format_rust().unwrap();
        assert_eq!(
            plan.read("src/lib.rs").unwrap().as_deref(),
            Some("pub fn f() -> u8 {\n    1\n}\n")
        );
        assert_eq!(
            plan.read("notes.txt").unwrap().as_deref(),
            Some("pub fn f( )->u8{1}")
        );
        assert!(
            !dir.path().join("src").exists(),
            "formatting writes nothing"
        );
    }
}

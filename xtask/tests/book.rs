//! The book (`docs/*.md`) is checked against the code, so that it cannot drift from it:
//!
//! - **Excerpts.** A fenced block whose previous line is `<!-- excerpt: PATH -->` is an
//!   excerpt of PATH (relative to the repository root): its lines must be in that file as a
//!   run of consecutive lines, verbatim up to a common indentation. A line holding only
//!   `// ...` (or `# ...`) stands for lines left out: the pieces around it must be found in
//!   that order.
//! - **Every code block is an excerpt**, except `sh` blocks (commands, checked next) and
//!   `text` blocks (output).
//! - **Commands.** Every `cargo xtask ...` and `cargo kubebuilder ...` names subcommands and
//!   flags that their `--help` lists: complete command lines in `sh` blocks, and in inline
//!   code a command or a group of them (`cargo xtask cluster`). A `...` ends the check.
//! - **Crate paths.** Every `kubebuilder_runtime::...` path (or one of another crate of this
//!   repository) in inline code names items that crate's sources declare.
//! - **Markers.** The migration guide has a row for every schema marker of
//!   `macros/markers`, spelled as there, and its marker tables name only arguments that the
//!   attributes define.
//! - **Links.** Relative links point to files that exist.
//!
//! Nothing here needs a network or a control plane: the test reads files and runs
//! `xtask --help`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Subcommand as _;

/// What makes the next fenced block an excerpt: `<!-- excerpt: PATH -->`.
const EXCERPT_OPEN: &str = "<!-- excerpt:";
const EXCERPT_CLOSE: &str = "-->";

/// A line of an excerpt that stands for lines left out of it.
const ELISIONS: &[&str] = &["// ...", "# ..."];

/// Fence languages that need no excerpt: commands (checked against `--help`) and output.
const UNANNOTATED_LANGUAGES: &[&str] = &["sh", "text"];

/// Pages that still hold a sketch (a code block that is no excerpt), and why. A page
/// leaves this list once its last sketch goes: the test fails when it has none left.
const SKETCH_PAGES: &[(&str, &str)] = &[(
    "markers.md",
    "its opening example is a CronJob spec shortened by hand",
)];

/// The crates whose paths the book cites, with their source directories.
const CRATES: &[(&str, &str)] = &[
    ("kubebuilder_runtime", "controller/runtime/src"),
    ("kubebuilder_envtest", "xtask/envtest/src"),
    ("kubebuilder_cli", "xtask/cli/src"),
    ("kubebuilder", "kubebuilder/src"),
    ("api", "api/src"),
    ("controller", "controller/src"),
];

/// The keywords that declare a named item.
const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "mod",
    "const",
    "static",
    "type",
    "union",
    "macro_rules!",
];

/// The page with the marker tables, and the section that holds them.
const MIGRATION_GUIDE: &str = "migrating-from-go.md";
const MARKERS_SECTION: &str = "## Markers";

/// The schema markers' table, and the sources of the attributes' other arguments.
const MARKERS_TABLE: &str = "macros/markers/src/lib.rs";
const ATTRIBUTE_SOURCES: &str = "macros/attributes/src";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// What a check found: how many things it looked at, and what is wrong with them.
#[derive(Default)]
struct Findings {
    checked: usize,
    problems: Vec<String>,
}

impl Findings {
    /// Counts one thing checked, and its problem if it has one.
    fn record(&mut self, result: Result<(), String>) {
        self.checked += 1;
        self.problems.extend(result.err());
    }

    fn merge(mut self, other: Findings) -> Self {
        self.checked += other.checked;
        self.problems.extend(other.problems);
        self
    }
}

/// Fails with every problem found, one per line, or says how much was checked.
fn report(what: &str, findings: impl IntoIterator<Item = Findings>) {
    let findings = findings
        .into_iter()
        .fold(Findings::default(), Findings::merge);
    assert!(
        findings.problems.is_empty(),
        "{} problem(s) in the book:\n{}",
        findings.problems.len(),
        findings.problems.join("\n")
    );
    assert!(findings.checked > 0, "the book has no {what} to check");
    eprintln!("checked {} {what}", findings.checked);
}

/// One page of the book.
struct Page {
    name: String,
    lines: Vec<String>,
}

impl Page {
    fn new(name: &str, text: &str) -> Self {
        Self {
            name: name.to_owned(),
            lines: text.lines().map(str::to_owned).collect(),
        }
    }

    /// `docs/<name>:<line>`, where a problem is.
    fn at(&self, line: usize) -> String {
        format!("docs/{}:{line}", self.name)
    }
}

fn pages() -> Vec<Page> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| Page::new(&path.file_name().unwrap().to_string_lossy(), &read(&path)))
        .collect()
}

/// A fenced code block.
struct Block {
    /// The line of its opening fence (1-based).
    line: usize,
    language: String,
    body: Vec<String>,
    /// The file it is an excerpt of, if annotated.
    excerpt: Option<String>,
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

fn excerpt_annotation(line: &str) -> Option<String> {
    let path = line
        .trim()
        .strip_prefix(EXCERPT_OPEN)?
        .strip_suffix(EXCERPT_CLOSE)?;
    Some(path.trim().to_owned())
}

fn blocks(page: &Page) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = page.lines.iter().enumerate();
    while let Some((index, line)) = lines.next() {
        if !is_fence(line) {
            continue;
        }
        let language = line.trim_start().trim_start_matches('`').trim().to_owned();
        let excerpt = index
            .checked_sub(1)
            .and_then(|previous| excerpt_annotation(&page.lines[previous]));
        // Consumes the closing fence too.
        let body = lines
            .by_ref()
            .map(|(_, line)| line)
            .take_while(|line| !is_fence(line))
            .cloned()
            .collect();
        blocks.push(Block {
            line: index + 1,
            language,
            body,
            excerpt,
        });
    }
    blocks
}

/// The lines outside fenced blocks, with their line numbers.
fn prose(page: &Page) -> Vec<(usize, &str)> {
    let mut in_block = false;
    let mut lines = Vec::new();
    for (index, line) in page.lines.iter().enumerate() {
        if is_fence(line) {
            in_block = !in_block;
        } else if !in_block {
            lines.push((index + 1, line.as_str()));
        }
    }
    lines
}

/// The inline code spans of a line of prose.
fn inline_code(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

// Excerpts.

/// An excerpt's pieces between elisions, each with its first line's index in the excerpt;
/// blank lines around an elision belong to neither piece.
fn pieces(excerpt: &[String]) -> Vec<(usize, Vec<&str>)> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (index, line) in excerpt.iter().enumerate() {
        if ELISIONS.contains(&line.trim()) {
            pieces.push((start, &excerpt[start..index]));
            start = index + 1;
        }
    }
    pieces.push((start, &excerpt[start..]));
    pieces
        .into_iter()
        .map(|(start, lines)| {
            let leading = lines.iter().take_while(|l| l.trim().is_empty()).count();
            let kept: Vec<&str> = lines[leading..].iter().map(String::as_str).collect();
            let trailing = kept
                .iter()
                .rev()
                .take_while(|l| l.trim().is_empty())
                .count();
            (start + leading, kept[..kept.len() - trailing].to_vec())
        })
        .filter(|(_, lines)| !lines.is_empty())
        .collect()
}

/// The lines without their common indentation and trailing spaces.
fn dedent(lines: &[&str]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|line| match line.get(indent..) {
            Some(rest) if !line.trim().is_empty() => rest.trim_end().to_owned(),
            _ => String::new(),
        })
        .collect()
}

/// Where the first run of `source` lines equal to `piece` (up to indentation) ends.
fn find_run(source: &[&str], piece: &[&str]) -> Option<usize> {
    let wanted = dedent(piece);
    let last_start = source.len().checked_sub(piece.len())?;
    (0..=last_start)
        .find(|&start| dedent(&source[start..start + piece.len()]) == wanted)
        .map(|start| start + piece.len())
}

/// Why an excerpt is not one of its file: the line of the excerpt (0-based) that departs
/// from the file, or `None` when the file itself is the problem.
#[derive(Debug, PartialEq)]
struct Departure {
    line: Option<usize>,
    message: String,
}

/// Why `excerpt` is not an excerpt of the file at `path`, if it is not.
fn check_excerpt(path: &str, excerpt: &[String]) -> Result<(), Departure> {
    let source = std::fs::read_to_string(root().join(path)).map_err(|error| Departure {
        line: None,
        message: format!("the excerpt names `{path}`, which cannot be read: {error}"),
    })?;
    let source: Vec<&str> = source.lines().collect();
    let mut from = 0;
    for (start, piece) in pieces(excerpt) {
        let Some(end) = find_run(&source[from..], &piece) else {
            // The first line that departs from the file ends the longest start of the
            // piece that the file has.
            let matched = (1..piece.len())
                .rev()
                .find(|&lines| find_run(&source[from..], &piece[..lines]).is_some())
                .unwrap_or(0);
            let after = if from > 0 {
                " after the excerpt's earlier lines"
            } else {
                ""
            };
            return Err(Departure {
                line: Some(start + matched),
                message: format!(
                    "the excerpt departs from `{path}`{after}: {:?}",
                    piece[matched].trim()
                ),
            });
        };
        from += end;
    }
    Ok(())
}

/// Annotations that no fenced block follows.
fn dangling_annotations(page: &Page) -> Vec<String> {
    let mut problems = Vec::new();
    for (index, line) in page.lines.iter().enumerate() {
        let next = page.lines.get(index + 1).map(String::as_str);
        if excerpt_annotation(line).is_some() && !next.is_some_and(is_fence) {
            problems.push(format!(
                "{}: an excerpt annotation without a fenced block on the next line",
                page.at(index + 1)
            ));
        }
    }
    problems
}

fn excerpt_findings(page: &Page) -> Findings {
    let mut findings = Findings {
        checked: 0,
        problems: dangling_annotations(page),
    };
    for block in blocks(page) {
        let Some(path) = &block.excerpt else { continue };
        let result = check_excerpt(path, &block.body).map_err(|departure| {
            // The annotation's line when the file is wrong, else the excerpt's line.
            let line = departure
                .line
                .map_or(block.line - 1, |line| block.line + 1 + line);
            format!("{}: {}", page.at(line), departure.message)
        });
        findings.record(result);
    }
    findings
}

#[test]
fn every_excerpt_is_found_in_its_file() {
    report("excerpts", pages().iter().map(excerpt_findings));
}

fn is_sketch_page(page: &Page) -> bool {
    SKETCH_PAGES.iter().any(|(name, _)| *name == page.name)
}

/// Blocks that are neither excerpts nor of a language that needs none.
fn annotation_findings(page: &Page) -> Findings {
    let blocks = blocks(page);
    let unannotated: Vec<&Block> = blocks
        .iter()
        .filter(|block| block.excerpt.is_none())
        .filter(|block| !UNANNOTATED_LANGUAGES.contains(&block.language.as_str()))
        .collect();
    let mut findings = Findings {
        checked: blocks.len(),
        problems: Vec::new(),
    };
    if is_sketch_page(page) {
        if unannotated.is_empty() {
            let problem = format!(
                "docs/{} has no sketch left: remove it from SKETCH_PAGES",
                page.name
            );
            findings.problems.push(problem);
        }
        return findings;
    }
    for block in unannotated {
        findings.problems.push(format!(
            "{}: a ```{} block that is no excerpt: put `{EXCERPT_OPEN} PATH {EXCERPT_CLOSE}` \
             on the line before it",
            page.at(block.line),
            block.language
        ));
    }
    findings
}

#[test]
fn every_code_block_is_an_excerpt() {
    report("code blocks", pages().iter().map(annotation_findings));
}

// Commands.

/// The subcommands and long flags a `--help` lists.
#[derive(Default)]
struct Help {
    commands: Vec<String>,
    flags: Vec<String>,
}

/// Reads clap's help layout: `Commands:` and `Options:` headings, then indented entries.
fn parse_help(text: &str) -> Help {
    let mut help = Help::default();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') {
            section = line.trim_end();
            continue;
        }
        let mut words = line.split_whitespace();
        match section {
            "Commands:" => help.commands.extend(words.next().map(str::to_owned)),
            "Options:" => {
                let long = words.find_map(|word| word.strip_prefix("--"));
                help.flags.extend(long.map(flag_name));
            }
            _ => {}
        }
    }
    help
}

/// `namespaced` of `--namespaced[=<BOOL>]`, `image` of `--image=x`.
fn flag_name(flag: &str) -> String {
    flag.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// A command-line tool whose help is asked once per subcommand.
struct Cli {
    name: &'static str,
    help_text: fn(&[String]) -> String,
    helps: HashMap<Vec<String>, Help>,
}

impl Cli {
    fn new(name: &'static str, help_text: fn(&[String]) -> String) -> Self {
        Self {
            name,
            help_text,
            helps: HashMap::new(),
        }
    }

    fn help(&mut self, path: &[String]) -> &Help {
        let help_text = self.help_text;
        self.helps
            .entry(path.to_vec())
            .or_insert_with(|| parse_help(&help_text(path)))
    }

    fn spelled(&self, path: &[String]) -> String {
        [self.name.to_owned()]
            .into_iter()
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Why `args` is not a command line of this tool, if it is not: its leading words
    /// must be subcommands down to one without any (or, when `partial`, down to where the
    /// words end), and its flags (before `--`) that subcommand's. `...` stands for anything.
    fn check(&mut self, args: &[String], partial: bool) -> Result<(), String> {
        let elided = args.iter().position(|arg| arg == "...");
        let partial = partial || elided.is_some();
        let mut path = Vec::new();
        let mut rest = &args[..elided.unwrap_or(args.len())];
        while !self.help(&path).commands.is_empty() {
            let Some((word, tail)) = rest.split_first() else {
                if partial {
                    return Ok(());
                }
                return Err(format!("`{}` needs a subcommand", self.spelled(&path)));
            };
            if !self.help(&path).commands.contains(word) {
                return Err(format!(
                    "`{}` has no subcommand `{word}`",
                    self.spelled(&path)
                ));
            }
            path.push(word.clone());
            rest = tail;
        }
        let flags = &self.help(&path).flags;
        let unknown: Vec<&String> = rest
            .iter()
            .take_while(|arg| *arg != "--")
            .filter(|arg| arg.starts_with("--"))
            .filter(|arg| !flags.contains(&flag_name(&arg[2..])))
            .collect();
        match unknown.first() {
            Some(flag) => Err(format!("`{}` has no flag `{flag}`", self.spelled(&path))),
            None => Ok(()),
        }
    }
}

/// This repository's `cargo xtask <path> --help`.
fn xtask_help(path: &[String]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(path)
        .arg("--help")
        .output()
        .expect("running xtask --help");
    assert!(
        output.status.success(),
        "xtask {path:?} --help failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `cargo kubebuilder <path> --help`, from the command definition the binary parses with
/// (the binary is another package's, which this test cannot run).
fn kubebuilder_help(path: &[String]) -> String {
    let mut command = kubebuilder_cli::scaffold::Command::augment_subcommands(clap::Command::new(
        "cargo kubebuilder",
    ));
    let mut current = &mut command;
    for name in path {
        current = current
            .find_subcommand_mut(name)
            .expect("a subcommand its parent's help lists");
    }
    current.render_help().to_string()
}

/// The `cargo xtask` and `cargo kubebuilder` invocations of a shell line: the tool and its
/// arguments, for each command of `a && b`, `a; b` or `a | b`, comments dropped.
fn invocations(line: &str) -> Vec<(&str, Vec<String>)> {
    let command = match line.find(" #") {
        Some(comment) => &line[..comment],
        None if line.trim_start().starts_with('#') => "",
        None => line,
    };
    command
        .split(['&', ';', '|'])
        .filter_map(|part| {
            let words: Vec<&str> = part.split_whitespace().collect();
            match words.as_slice() {
                ["cargo", tool @ ("xtask" | "kubebuilder"), args @ ..] => {
                    Some((*tool, args.iter().map(|arg| (*arg).to_owned()).collect()))
                }
                _ => None,
            }
        })
        .collect()
}

/// Every text of the book that may hold commands, with its line and whether a command in
/// it may name a group of commands: each line of an `sh` block (complete command lines),
/// and each inline code span of the prose (which may say `cargo xtask cluster`).
fn command_texts(page: &Page) -> Vec<(usize, String, bool)> {
    let in_blocks = blocks(page)
        .into_iter()
        .filter(|block| block.language == "sh")
        .flat_map(|block| {
            let first = block.line + 1;
            let lines = block.body.into_iter().enumerate();
            lines.map(move |(offset, line)| (first + offset, line, false))
        });
    let inline = prose(page)
        .into_iter()
        .flat_map(|(line, text)| inline_code(text).map(move |code| (line, code.to_owned(), true)));
    in_blocks.chain(inline).collect()
}

/// The two tools the book runs, each asked for its help once per subcommand.
struct Tools {
    xtask: Cli,
    kubebuilder: Cli,
}

impl Tools {
    fn new() -> Self {
        Self {
            xtask: Cli::new("cargo xtask", xtask_help),
            kubebuilder: Cli::new("cargo kubebuilder", kubebuilder_help),
        }
    }

    fn get(&mut self, tool: &str) -> &mut Cli {
        if tool == "xtask" {
            &mut self.xtask
        } else {
            &mut self.kubebuilder
        }
    }
}

fn command_findings(page: &Page, tools: &mut Tools) -> Findings {
    let mut findings = Findings::default();
    for (line, text, partial) in command_texts(page) {
        for (tool, args) in invocations(&text) {
            let result = tools.get(tool).check(&args, partial);
            findings.record(result.map_err(|problem| format!("{}: {problem}", page.at(line))));
        }
    }
    findings
}

#[test]
fn every_cargo_command_in_the_book_exists() {
    let mut tools = Tools::new();
    report(
        "cargo commands",
        pages()
            .iter()
            .map(|page| command_findings(page, &mut tools)),
    );
}

/// Each `cargo install` written in `text` (up to the end of its command: a closing
/// parenthesis or backtick, a comment, the line's end) that lacks `--locked`, by line.
fn unlocked_installs(text: &str) -> Vec<(usize, String)> {
    let mut unlocked = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("cargo install") {
            let rest = &line[at..];
            let end = rest[1..]
                .find([')', '`', '#'])
                .map_or(rest.len(), |end| end + 1);
            let command = &rest[..end];
            if !command.contains("--locked") {
                unlocked.push((index + 1, command.trim_end().to_owned()));
            }
        }
    }
    unlocked
}

/// A `cargo install` without `--locked` resolves the newest dependencies, not the ones the
/// crate was tested with: the README and the book always lock.
#[test]
fn every_cargo_install_in_the_readme_and_the_book_is_locked() {
    let mut texts = vec![("README.md".to_owned(), read(&root().join("README.md")))];
    texts.extend(
        pages()
            .into_iter()
            .map(|page| (format!("docs/{}", page.name), page.lines.join("\n"))),
    );
    let unlocked: Vec<String> = texts
        .iter()
        .flat_map(|(name, text)| {
            unlocked_installs(text)
                .into_iter()
                .map(move |(line, command)| format!("{name}:{line}: {command}"))
        })
        .collect();
    assert!(
        unlocked.is_empty(),
        "without --locked:\n{}",
        unlocked.join("\n")
    );
}

#[test]
fn an_install_without_locked_is_found_in_prose_comments_and_code() {
    let text = "cargo install --locked --path a  # (later: cargo install a)\n\
                run `cargo install b --locked` or `cargo install c`\n";
    assert_eq!(
        unlocked_installs(text),
        [
            (1, "cargo install a".to_owned()),
            (2, "cargo install c".to_owned())
        ]
    );
}

// Crate paths.

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths of this repository's crates in a piece of code, as their segments.
fn crate_paths(code: &str) -> Vec<Vec<&str>> {
    code.split(|c: char| !is_ident_char(c) && c != ':')
        .map(|run| {
            run.split("::")
                .filter(|segment| !segment.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|segments| segments.len() > 1)
        .filter(|segments| CRATES.iter().any(|(name, _)| *name == segments[0]))
        .filter(|segments| segments.iter().all(|s| s.chars().all(is_ident_char)))
        .collect()
}

/// Every `.rs` file under `dir`, concatenated.
fn rust_sources(dir: &Path) -> String {
    let mut sources = String::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources.push_str(&rust_sources(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            sources.push_str(&read(&path));
            sources.push('\n');
        }
    }
    sources
}

/// Where `word` stands in `text` as a whole identifier.
fn word_positions<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + word.len()..].chars().next();
            !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
        })
}

/// Whether `source` declares an item named `name`, or re-exports one (`pub use`).
fn declares(source: &str, name: &str) -> bool {
    word_positions(source, name).any(|at| {
        let before = &source[..at];
        let keyword = before.trim_end().rsplit(char::is_whitespace).next();
        let in_pub_use = before
            .rfind("pub use ")
            .is_some_and(|start| !before[start..].contains(';'));
        keyword.is_some_and(|keyword| ITEM_KEYWORDS.contains(&keyword)) || in_pub_use
    })
}

/// The sources of each crate of [`CRATES`], by crate name.
fn crate_sources() -> HashMap<&'static str, String> {
    CRATES
        .iter()
        .map(|(name, dir)| (*name, rust_sources(&root().join(dir))))
        .collect()
}

/// Why `path` names no item of its crate, if it does not: each segment after the crate's
/// name must be declared somewhere in the crate (by name: a drift check, not name
/// resolution).
fn check_path(path: &[&str], sources: &HashMap<&str, String>) -> Result<(), String> {
    let source = &sources[path[0]];
    match path
        .iter()
        .skip(1)
        .find(|segment| !declares(source, segment))
    {
        Some(segment) => Err(format!(
            "`{}`: the sources of `{}` declare no `{segment}`",
            path.join("::"),
            path[0]
        )),
        None => Ok(()),
    }
}

fn path_findings(page: &Page, sources: &HashMap<&str, String>) -> Findings {
    let mut findings = Findings::default();
    for (line, text) in prose(page) {
        for path in inline_code(text).flat_map(crate_paths) {
            let result = check_path(&path, sources);
            findings.record(result.map_err(|problem| format!("{}: {problem}", page.at(line))));
        }
    }
    findings
}

#[test]
fn every_crate_path_in_the_book_names_an_item() {
    let sources = crate_sources();
    report(
        "crate paths",
        pages().iter().map(|page| path_findings(page, &sources)),
    );
}

// Markers.

/// A schema marker as `macros/markers` defines it.
struct SchemaMarker {
    /// controller-gen's name, without the `+`.
    go: String,
    /// The Rust argument.
    rust: String,
    /// The argument list it is written in: `Top` (the attribute's own) or a group.
    list: String,
}

/// The strings of a list of literals: `"a", "b"` gives `a` and `b`.
fn quoted(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Reads the rows of `markers!`: each `name: "x" in List,` line starts a row, whose
/// `controller_gen: [...]` line lists the Go names.
fn schema_markers() -> Vec<SchemaMarker> {
    let mut markers = Vec::new();
    let mut row: Option<(String, String)> = None;
    for line in read(&root().join(MARKERS_TABLE)).lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("name: \"") {
            let (rust, list) = rest.split_once('"').expect("a quoted name");
            let list = list.trim().trim_start_matches("in ").trim_end_matches(',');
            row = Some((rust.to_owned(), list.to_owned()));
        } else if let Some(names) = line.strip_prefix("controller_gen: [") {
            let (rust, list) = row.clone().expect("controller_gen after name");
            markers.extend(quoted(names).into_iter().map(|go| SchemaMarker {
                go,
                rust: rust.clone(),
                list: list.clone(),
            }));
        }
    }
    assert!(!markers.is_empty(), "no markers read from {MARKERS_TABLE}");
    markers
}

/// Every argument name the attributes define: the schema markers' rows and the
/// `Argument::...("name", ...)` tables of the attribute macros.
fn argument_names() -> Vec<String> {
    let mut names: Vec<String> = read(&root().join(MARKERS_TABLE))
        .lines()
        .filter_map(|line| line.trim().strip_prefix("name: \""))
        .filter_map(|rest| rest.split_once('"'))
        .map(|(name, _)| name.to_owned())
        .collect();
    let sources = rust_sources(&root().join(ATTRIBUTE_SOURCES));
    for (at, _) in sources.match_indices("Argument::") {
        let call = &sources[at..];
        let Some(open) = call.find('(') else { continue };
        let constructor = &call["Argument::".len()..open];
        let argument = call[open + 1..].trim_start();
        if constructor.chars().all(is_ident_char) && argument.starts_with('"') {
            names.extend(quoted(argument).into_iter().take(1));
        }
    }
    names
}

/// The rows of the guide's marker tables, as cells, with their line numbers.
fn marker_rows(guide: &Page) -> Vec<(usize, Vec<String>)> {
    let lines = prose(guide);
    let section = lines
        .iter()
        .skip_while(|(_, line)| *line != MARKERS_SECTION)
        .skip(1)
        .take_while(|(_, line)| !line.starts_with("## "));
    section
        .filter(|(_, line)| line.starts_with('|'))
        .map(|(number, line)| (*number, cells(line)))
        .filter(|(_, cells)| {
            !cells
                .iter()
                .all(|cell| cell.chars().all(|c| "-: ".contains(c)))
        })
        .collect()
}

/// A table row's cells; `\|` is a `|` inside a cell.
fn cells(row: &str) -> Vec<String> {
    let row = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => cells.last_mut().unwrap().push('|'),
            '|' => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells
        .into_iter()
        .map(|cell| cell.trim().to_owned())
        .collect()
}

/// Whether the Go cell names the marker `+<go>` (not a longer name it prefixes).
fn names_go_marker(cell: &str, go: &str) -> bool {
    let marker = format!("+{go}");
    cell.match_indices(&marker).any(|(at, _)| {
        !cell[at + marker.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// Whether the Rust cell spells the marker: its name, inside its list when it has one.
fn spells_marker(cell: &str, marker: &SchemaMarker) -> bool {
    let in_list =
        marker.list == "Top" || cell.contains(&format!("{}(", marker.list.to_lowercase()));
    in_list && word_positions(cell, &marker.rust).next().is_some()
}

fn migration_guide() -> Page {
    pages()
        .into_iter()
        .find(|page| page.name == MIGRATION_GUIDE)
        .expect("docs/migrating-from-go.md exists")
}

/// Markers of `markers` without a row of the guide that names the Go marker and spells it.
fn marker_row_findings(guide: &Page, markers: &[SchemaMarker]) -> Findings {
    let rows = marker_rows(guide);
    let mut findings = Findings::default();
    for marker in markers {
        let spelled = rows.iter().any(|(_, cells)| {
            cells.len() > 1
                && names_go_marker(&cells[0], &marker.go)
                && spells_marker(&cells[1], marker)
        });
        findings.record(if spelled {
            Ok(())
        } else {
            Err(format!(
                "docs/{}: no row of `{MARKERS_SECTION}` spells `+{}` as `{}` (in {})",
                guide.name, marker.go, marker.rust, marker.list
            ))
        });
    }
    findings
}

#[test]
fn the_migration_guide_has_a_row_for_every_schema_marker() {
    report(
        "schema markers",
        [marker_row_findings(&migration_guide(), &schema_markers())],
    );
}

/// `code` without its string literals (`"..."`, `r"..."`, `r#"..."#`).
fn without_strings(code: &str) -> String {
    let mut kept = String::new();
    let mut rest = code;
    while let Some(quote) = rest.find('"') {
        let before = rest[..quote].trim_end_matches('#');
        let hashes = quote - before.len();
        // `r` opens a raw string only as a word of its own: `r"..."`, not `for"`.
        let raw = before
            .strip_suffix('r')
            .is_some_and(|prefix| !prefix.chars().next_back().is_some_and(is_ident_char));
        kept.push_str(&before[..before.len() - usize::from(raw)]);
        let body = &rest[quote + 1..];
        let end = if raw {
            body.find(&format!("\"{}", "#".repeat(hashes)))
                .map(|end| end + 1 + hashes)
        } else {
            let mut escaped = false;
            body.char_indices()
                .find(|&(_, c)| {
                    let closes = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    closes
                })
                .map(|(end, _)| end + 1)
        };
        rest = end.map_or("", |end| &body[end..]);
    }
    kept.push_str(rest);
    kept
}

/// The argument names a Rust spelling uses: lower-case identifiers outside strings and
/// paths, except struct fields (`name: value`) and `true` / `false`.
fn argument_words(code: &str) -> Vec<String> {
    let code = without_strings(code);
    let mut words = Vec::new();
    for run in code.split(|c: char| !is_ident_char(c) && c != ':') {
        let is_path = run.contains("::");
        let word = run.trim_end_matches(':');
        let is_field = run.ends_with(':');
        let lower = word.starts_with(|c: char| c.is_ascii_lowercase());
        if !is_path && !is_field && lower && !["true", "false"].contains(&word) {
            words.push(word.to_owned());
        }
    }
    words
}

/// The words of the guide's Rust spellings that no attribute defines as an argument.
fn argument_findings(guide: &Page, known: &[String]) -> Findings {
    let mut findings = Findings::default();
    for (line, cells) in marker_rows(guide) {
        let Some(rust) = cells.get(1) else { continue };
        for word in inline_code(rust).flat_map(argument_words) {
            findings.record(if known.contains(&word) {
                Ok(())
            } else {
                Err(format!(
                    "{}: `{word}` is no argument of the kubebuilder attributes",
                    guide.at(line)
                ))
            });
        }
    }
    findings
}

#[test]
fn the_marker_tables_name_only_real_arguments() {
    report(
        "marker arguments",
        [argument_findings(&migration_guide(), &argument_names())],
    );
}

// Links.

/// The targets of the Markdown links of a line, `[text](target)`, outside inline code.
fn link_targets(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').step_by(2).flat_map(|text| {
        text.match_indices("](").filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
    })
}

fn link_findings(page: &Page) -> Findings {
    let docs = root().join("docs");
    let mut findings = Findings::default();
    for (line, text) in prose(page) {
        for target in link_targets(text) {
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || file.contains("://") {
                continue;
            }
            findings.record(if docs.join(file).exists() {
                Ok(())
            } else {
                Err(format!(
                    "{}: the link `{target}` leads nowhere",
                    page.at(line)
                ))
            });
        }
    }
    findings
}

#[test]
fn every_relative_link_resolves() {
    report("links", pages().iter().map(link_findings));
}

// The checks themselves: each is shown a scratch copy of a real page (or a page made up
// here) with one mistake, and must report it, naming the page and the line.

/// A page of the book as read from docs/, with `edit` applied to its lines in memory.
fn edited(name: &str, edit: impl FnOnce(&mut Vec<String>)) -> Page {
    let mut page = pages()
        .into_iter()
        .find(|page| page.name == name)
        .unwrap_or_else(|| panic!("docs/{name} exists"));
    edit(&mut page.lines);
    page
}

/// The tutorial's first excerpt.
fn first_excerpt() -> Block {
    let tutorial = edited("tutorial.md", |_| {});
    blocks(&tutorial)
        .into_iter()
        .find(|block| block.excerpt.is_some())
        .expect("the tutorial has excerpts")
}

#[test]
fn an_edited_excerpt_is_reported_with_its_page_line_and_file() {
    let excerpt = first_excerpt();
    // `excerpt.line` is the fence's line number, so the index of the excerpt's first line.
    let page = edited("tutorial.md", |lines| {
        lines[excerpt.line].push_str(" // edited");
    });
    let problems = excerpt_findings(&page).problems;
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let at = format!("docs/tutorial.md:{}: ", excerpt.line + 1);
    assert!(problems[0].starts_with(&at), "{}", problems[0]);
    assert!(
        problems[0].contains(excerpt.excerpt.as_deref().unwrap()),
        "{}",
        problems[0]
    );
    eprintln!("reported as: {}", problems[0]);
}

#[test]
fn an_excerpt_of_a_missing_file_is_reported() {
    let excerpt = first_excerpt();
    let page = edited("tutorial.md", |lines| {
        lines[excerpt.line - 2] = format!("{EXCERPT_OPEN} api/src/v1/gone.rs {EXCERPT_CLOSE}");
    });
    let problems = excerpt_findings(&page).problems;
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let at = format!("docs/tutorial.md:{}: ", excerpt.line - 1);
    assert!(problems[0].starts_with(&at), "{}", problems[0]);
    assert!(problems[0].contains("`api/src/v1/gone.rs`, which cannot be read"));
}

#[test]
fn a_code_block_without_an_annotation_is_reported() {
    let excerpt = first_excerpt();
    let page = edited("tutorial.md", |lines| lines[excerpt.line - 2].clear());
    let problems = annotation_findings(&page).problems;
    let at = format!("docs/tutorial.md:{}: a ```rust block", excerpt.line);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].starts_with(&at), "{}", problems[0]);
}

#[test]
fn elided_pieces_must_keep_the_order_and_may_change_the_indentation() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    let in_order = lines(
        "async fn main() -> Result<()> {\n    // ...\nmanager.run().await.context(\"the manager failed\")",
    );
    let swapped = lines(
        "manager.run().await.context(\"the manager failed\")\n// ...\nasync fn main() -> Result<()> {",
    );
    assert_eq!(check_excerpt("controller/src/main.rs", &in_order), Ok(()));
    assert!(check_excerpt("controller/src/main.rs", &swapped).is_err());
}

#[test]
fn a_misspelled_subcommand_or_flag_is_reported() {
    let page = Page::new(
        "scratch.md",
        "```sh\n\
         cargo xtask deplyo\n\
         cargo xtask deploy --imag x   # a comment: --ignored\n\
         cargo kubebuilder create api --kindd X\n\
         cargo xtask cluster\n\
         cargo xtask run -- --any-manager-flag && cargo xtask cluster up --cert-manager\n\
         ```\n\
         Groups are fine in prose, `cargo xtask cluster`, but not `cargo xtask clustr`.",
    );
    let findings = command_findings(&page, &mut Tools::new());
    assert_eq!(
        findings.problems,
        [
            "docs/scratch.md:2: `cargo xtask` has no subcommand `deplyo`",
            "docs/scratch.md:3: `cargo xtask deploy` has no flag `--imag`",
            "docs/scratch.md:4: `cargo kubebuilder create api` has no flag `--kindd`",
            "docs/scratch.md:5: `cargo xtask cluster` needs a subcommand",
            "docs/scratch.md:8: `cargo xtask` has no subcommand `clustr`",
        ]
    );
    assert_eq!(findings.checked, 8);
}

#[test]
fn a_path_to_an_item_that_does_not_exist_is_reported() {
    let page = Page::new(
        "scratch.md",
        "`kubebuilder_runtime::cache::Cache::index_field` is, \
         `kubebuilder_runtime::cache::Cache::index_fields` is not; `kube::api::Api` is not ours.",
    );
    let findings = path_findings(&page, &crate_sources());
    assert_eq!(
        findings.problems,
        [
            "docs/scratch.md:1: `kubebuilder_runtime::cache::Cache::index_fields`: the sources \
             of `kubebuilder_runtime` declare no `index_fields`"
        ]
    );
    assert_eq!(findings.checked, 2);
}

#[test]
fn a_marker_row_left_out_or_misspelled_is_reported() {
    let guide = edited(MIGRATION_GUIDE, |lines| {
        let row = lines
            .iter()
            .position(|line| line.starts_with("| `+kubebuilder:validation:MinLength=1`"))
            .expect("the guide has a MinLength row");
        lines[row] =
            "| `+kubebuilder:validation:MinLength=1` | `validation(min_lenght = 1)` |".into();
    });
    let missing = marker_row_findings(&guide, &schema_markers()).problems;
    assert_eq!(missing.len(), 1, "{missing:#?}");
    assert!(missing[0].contains("`+kubebuilder:validation:MinLength` as `min_length`"));
    let invented = argument_findings(&guide, &argument_names()).problems;
    assert_eq!(invented.len(), 1, "{invented:#?}");
    assert!(
        invented[0].contains("`min_lenght` is no argument"),
        "{}",
        invented[0]
    );
}

#[test]
fn a_link_to_a_missing_file_is_reported() {
    let page = Page::new(
        "scratch.md",
        "[ok](tutorial.md#1-a-new-project), [gone](no-such-page.md), `[not](a-link.md)`",
    );
    let findings = link_findings(&page);
    assert_eq!(
        findings.problems,
        ["docs/scratch.md:1: the link `no-such-page.md` leads nowhere"]
    );
}

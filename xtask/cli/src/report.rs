//! What the test commands print at their end: tables with aligned columns, and the time
//! each phase of a command took, so that every run (CI's included) shows where its time
//! went.

use std::time::{Duration, Instant};

use anyhow::Result;

/// `rows` under `header` as a Markdown table, its columns aligned.
pub fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let header = header.map(str::to_owned);
    let mut widths = header.clone().map(|cell| cell.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        format!("| {} |", padded.join(" | ")).trim_end().to_owned()
    };
    let rule = widths.map(|width| "-".repeat(width));
    let mut table = vec![line(&header), line(&rule)];
    table.extend(rows.iter().map(line));
    table.join("\n")
}

/// The phases of one command and how long each took.
#[derive(Default)]
pub struct Phases {
    done: Vec<(String, Duration, bool)>,
}

impl Phases {
    /// Runs the phases of `command`, then prints their table, whether they succeeded or
    /// not.
    pub fn run(command: &str, phases: impl FnOnce(&mut Phases) -> Result<()>) -> Result<()> {
        let mut done = Phases::default();
        let result = phases(&mut done);
        eprintln!("\n{}", done.table(command));
        result
    }

    /// Runs `phase`, recording its time under `name` whether it succeeds or fails.
    pub fn time<T>(&mut self, name: &str, phase: impl FnOnce() -> Result<T>) -> Result<T> {
        eprintln!("xtask: {name}");
        let started = Instant::now();
        let result = phase();
        self.done
            .push((name.to_owned(), started.elapsed(), result.is_ok()));
        result
    }

    /// The phases so far as a table headed `command`, with their total.
    pub fn table(&self, command: &str) -> String {
        let minutes = |duration: Duration| format!("{:.1}", duration.as_secs_f64() / 60.0);
        let mut rows: Vec<[String; 3]> = self
            .done
            .iter()
            .map(|(name, elapsed, ok)| {
                [
                    name.clone(),
                    minutes(*elapsed),
                    if *ok { "ok" } else { "FAILED" }.to_owned(),
                ]
            })
            .collect();
        let total = self.done.iter().map(|(_, elapsed, _)| *elapsed).sum();
        rows.push(["total".to_owned(), minutes(total), String::new()]);
        table(&[command, "minutes", "result"], &rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_aligned_to_the_widest_cell() {
        let rows = [
            ["apiserver down 30 s".to_owned(), "3".to_owned()],
            ["bad input".to_owned(), "12".to_owned()],
        ];
        assert_eq!(
            table(&["fault", "cycles"], &rows),
            "\
| fault               | cycles |
| ------------------- | ------ |
| apiserver down 30 s | 3      |
| bad input           | 12     |"
        );
    }

    #[test]
    fn a_failed_phase_is_timed_and_marked() {
        let mut phases = Phases::default();
        phases.time("builds", || Ok(())).unwrap();
        assert!(
            phases
                .time("breaks", || -> Result<()> { anyhow::bail!("no") })
                .is_err()
        );
        let table = phases.table("cargo xtask test");
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "| cargo xtask test | minutes | result |");
        assert_eq!(lines[2], "| builds           | 0.0     | ok     |");
        assert_eq!(lines[3], "| breaks           | 0.0     | FAILED |");
        assert_eq!(lines[4], "| total            | 0.0     |        |");
    }
}

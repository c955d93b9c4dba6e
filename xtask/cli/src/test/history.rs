//! How much CPU each busy job of a project used in its last run, kept in the cache so that
//! the next run starts the costliest first. The machine is busy for the whole run, so what
//! decides its length is the work left when the waiting tests and the other suites are
//! done: little work in short jobs then (the checks, which wait on cargo's locks when they
//! run early and take seconds when they run last), the builds of whole workspaces before
//! (their waits on a control plane are filled by the other work). Without a record (a new
//! machine, a new job), the jobs keep the order `jobs_of` gives them, a new job ahead of
//! the known ones (it may be costly).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kubebuilder_envtest::assets;

use super::jobs::{Job, Lane, Outcome};
use crate::scaffold::project::{self, Project};

/// The CPU seconds each busy job of one project used in its last run.
pub struct History {
    file: PathBuf,
    seconds: BTreeMap<String, f64>,
}

impl History {
    /// The record of the project at `root` (by its PROJECT name, else its directory's: a
    /// fresh clone in another directory finds it), empty when there is none.
    pub fn of(root: &Path) -> History {
        let name = std::fs::read_to_string(root.join(project::FILE))
            .ok()
            .and_then(|text| Project::parse(&text).ok())
            .map(|project| project.project_name)
            .filter(|name| !name.is_empty())
            .or_else(|| root.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let file = assets::cache_root()
            .join("test-durations")
            .join(format!("{name}.tsv"));
        History::read(file)
    }

    fn read(file: PathBuf) -> History {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let seconds = text
            .lines()
            .filter_map(|line| {
                let (name, seconds) = line.rsplit_once('\t')?;
                Some((name.to_owned(), seconds.parse().ok()?))
            })
            .collect();
        History { file, seconds }
    }

    /// `jobs` with the busy ones reordered: those without a record first, as given, then
    /// the others by the CPU they used last time, the most first. Waiting jobs keep their
    /// order.
    pub fn costliest_busy_first(&self, jobs: Vec<Job>) -> Vec<Job> {
        let (waiting, mut busy): (Vec<Job>, Vec<Job>) =
            jobs.into_iter().partition(|job| job.lane == Lane::Waiting);
        // Stable: equal keys keep their order.
        busy.sort_by(|a, b| {
            let last = |job: &Job| self.seconds.get(&job.name).copied();
            match (last(a), last(b)) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(a), Some(b)) => b.total_cmp(&a),
            }
        });
        waiting.into_iter().chain(busy).collect()
    }

    /// Records the busy jobs' CPU time in this run (those of jobs that did not run are kept).
    /// A cache that cannot be written is said and passed over: the order is an
    /// optimisation.
    pub fn record(mut self, outcomes: &[Outcome]) {
        for outcome in outcomes.iter().filter(|o| o.lane == Lane::Busy) {
            self.seconds
                .insert(outcome.name.clone(), outcome.cpu.as_secs_f64());
        }
        let text: String = self
            .seconds
            .iter()
            .map(|(name, seconds)| format!("{name}\t{seconds:.1}\n"))
            .collect();
        let written = self
            .file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&self.file, text));
        if let Err(error) = written {
            eprintln!(
                "xtask: cannot record the jobs' times in {}: {error}",
                self.file.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::Duration;

    use super::*;

    fn job(name: &str, lane: Lane) -> Job {
        Job::new(name, lane, Command::new("true"))
    }

    fn names(jobs: &[Job]) -> Vec<&str> {
        jobs.iter().map(|job| job.name.as_str()).collect()
    }

    #[test]
    fn busy_jobs_run_the_costliest_first_after_the_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("project.tsv");
        std::fs::write(
            &file,
            "short\t10.0\nlong\t900.5\nmiddle\t200.0\nwaits\t999.0\n",
        )
        .unwrap();
        let history = History::read(file);
        let jobs = vec![
            job("short", Lane::Busy),
            job("waits", Lane::Waiting),
            job("middle", Lane::Busy),
            job("new", Lane::Busy),
            job("long", Lane::Busy),
        ];
        assert_eq!(
            names(&history.costliest_busy_first(jobs)),
            ["waits", "new", "long", "middle", "short"]
        );
    }

    #[test]
    fn a_run_records_its_busy_jobs_and_keeps_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cache/project.tsv");
        let history = History::read(file.clone());
        let outcome = |name: &str, lane: Lane, seconds: u64| Outcome {
            name: name.to_owned(),
            lane,
            passed: true,
            status: String::new(),
            elapsed: Duration::ZERO,
            cpu: Duration::from_secs(seconds),
            output: String::new(),
        };
        history.record(&[
            outcome("doc", Lane::Busy, 5),
            outcome("t", Lane::Waiting, 9),
        ]);
        let history = History::read(file.clone());
        history.record(&[outcome("deny", Lane::Busy, 7)]);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "deny\t7.0\ndoc\t5.0\n"
        );
    }
}

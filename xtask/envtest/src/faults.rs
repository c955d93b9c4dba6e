//! The figures of a fault test, in the form `cargo xtask test-faults` collects: each fault
//! test prints one [`FaultReport`] line on stdout, and the command prints them as one table.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What starts a report line on a fault test's stdout.
pub const REPORT_PREFIX: &str = "fault-report ";

/// The variable `cargo xtask test-faults --cycles N` sets: how many times the quick faults
/// are injected (see [`cycles`] and [`slow_cycles`]).
pub const CYCLES_ENV: &str = "FAULT_CYCLES";

/// One fault's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultReport {
    /// The fault injected, in a few words ("leader SIGKILLed").
    pub fault: String,
    /// How many times it was injected.
    pub cycles: u64,
    /// Work done twice because of it (Jobs for one scheduled run, counted by run).
    pub duplicates: u64,
    /// Work it made the operator skip (scheduled runs inside their deadline without a Job).
    pub misses: u64,
    /// How long each recovery took (takeover, readiness back, first success), one per cycle.
    #[serde(with = "millis")]
    pub recoveries: Vec<Duration>,
    /// Errors seen that the fault's contract does not allow (each one fails the test).
    pub errors: u64,
    /// Anything else worth printing: rates, RSS, request counts.
    pub detail: String,
}

impl FaultReport {
    /// A report for `fault`, to be filled in.
    pub fn new(fault: &str) -> Self {
        Self {
            fault: fault.to_owned(),
            ..Self::default()
        }
    }

    /// Prints the report line `cargo xtask test-faults` collects (`--nocapture` shows it).
    pub fn print(&self) {
        let json = serde_json::to_string(self).expect("a report serializes");
        println!("{REPORT_PREFIX}{json}");
    }

    /// Reads a report line back; `None` for any other line.
    pub fn parse(line: &str) -> Option<Self> {
        serde_json::from_str(line.trim_end().strip_prefix(REPORT_PREFIX)?).ok()
    }

    /// Minimum, median and maximum recovery time; `None` without recoveries.
    pub fn recovery_summary(&self) -> Option<(Duration, Duration, Duration)> {
        let mut sorted = self.recoveries.clone();
        sorted.sort();
        let median = *sorted.get(sorted.len() / 2)?;
        Some((sorted[0], median, sorted[sorted.len() - 1]))
    }
}

/// How many cycles a quick fault (one cycle in seconds: a leader killed) runs:
/// `FAULT_CYCLES`, else `default` (the bounded run).
pub fn cycles(default: u64) -> u64 {
    full_run_cycles().unwrap_or(default)
}

/// How many cycles a slow fault (a minute or more a cycle: a paused leader, the control
/// plane down) runs: a tenth of `FAULT_CYCLES`, rounded up, else one. The full run of 50
/// stays within an hour or so that way.
pub fn slow_cycles() -> u64 {
    full_run_cycles().map_or(1, |cycles| cycles.div_ceil(10))
}

fn full_run_cycles() -> Option<u64> {
    std::env::var(CYCLES_ENV).ok()?.parse().ok()
}

/// Durations as whole milliseconds, so the line stays short and readable.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize as _, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        values: &[Duration],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(values.iter().map(Duration::as_millis))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Duration>, D::Error> {
        Ok(Vec::<u64>::deserialize(deserializer)?
            .into_iter()
            .map(Duration::from_millis)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_report_parses_back() {
        let report = FaultReport {
            cycles: 3,
            recoveries: vec![
                Duration::from_millis(900),
                Duration::from_millis(100),
                Duration::from_millis(400),
            ],
            detail: "rate 4/s".to_owned(),
            ..FaultReport::new("leader SIGKILLed")
        };
        let line = format!(
            "{REPORT_PREFIX}{}\n",
            serde_json::to_string(&report).unwrap()
        );
        assert_eq!(FaultReport::parse(&line), Some(report.clone()));
        assert_eq!(FaultReport::parse("test result: ok"), None);
        assert_eq!(
            report.recovery_summary(),
            Some((
                Duration::from_millis(100),
                Duration::from_millis(400),
                Duration::from_millis(900)
            ))
        );
    }
}

//! Schedule maths: which run was missed and when the next one is due.
//!
//! Schedules are 5-field standard cron (minute hour day-of-month month day-of-week), parsed
//! by croner with Vixie semantics as Kubernetes' robfig/cron `ParseStandard`: 0 and 7 are
//! Sunday, `@daily` and friends are accepted, day-of-month and day-of-week combine with OR.
//! They are evaluated in `spec.timeZone` (an IANA name) or UTC, as batch/v1 CronJob does.

use std::str::FromStr;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Timestamp;
use jiff::tz::TimeZone;

/// More missed runs than this between the earliest time and now is an error.
const MAX_MISSED_RUNS: usize = 100;

/// A parsed schedule in its time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    zone: TimeZone,
}

/// Why a schedule cannot be used; the text goes into the `InvalidSchedule` condition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("{0}")]
    Parse(String),
    #[error("unknown time zone {0:?}")]
    UnknownTimeZone(String),
    #[error(
        "Too many missed start times (> {MAX_MISSED_RUNS}). Set or decrease .spec.startingDeadlineSeconds or check clock skew."
    )]
    TooManyMissedRuns,
    #[error("schedule {0:?} has no future run")]
    NoNextRun(String),
}

/// The outcome of looking at a schedule at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    /// The latest run time in (earliest, now] that has not been started, if any.
    pub missed: Option<Timestamp>,
    /// The first run time after now.
    pub next: Timestamp,
}

impl Schedule {
    /// Parses a 5-field standard cron schedule, evaluated in `time_zone` (UTC when `None`).
    pub fn parse(schedule: &str, time_zone: Option<&str>) -> Result<Self, ScheduleError> {
        let cron = parse_standard(schedule)?;
        let zone = match time_zone {
            None => TimeZone::UTC,
            Some(name) => {
                TimeZone::get(name).map_err(|_| ScheduleError::UnknownTimeZone(name.to_string()))?
            }
        };
        Ok(Self { cron, zone })
    }

    /// The first run strictly after `after`.
    pub fn next_after(&self, after: Timestamp) -> Result<Timestamp, ScheduleError> {
        self.cron
            .find_next_occurrence(&after.to_zoned(self.zone.clone()), false)
            .map(|zoned| zoned.timestamp())
            .map_err(|_| ScheduleError::NoNextRun(self.cron.pattern.to_string()))
    }

    /// The latest run at or before `at`, if the schedule has one.
    pub fn latest_at_or_before(&self, at: Timestamp) -> Option<Timestamp> {
        self.cron
            .find_previous_occurrence(&at.to_zoned(self.zone.clone()), true)
            .map(|zoned| zoned.timestamp())
            .ok()
    }

    /// The tutorial's `getNextSchedule`: the latest run due by `now` that was not started
    /// (later than the last schedule time, else the creation time) and the next run.
    ///
    /// As in the tutorial, more than 100 runs between the earliest time considered and
    /// `now` is an error; the earliest time is the last schedule (or creation) time, moved
    /// up to `now - startingDeadlineSeconds` when that is later. Unlike the tutorial, a run
    /// missed by more than the deadline is still reported (the tutorial skips it silently
    /// and never reaches its own "missed starting deadline" branch); see
    /// [`is_past_deadline`].
    pub fn runs(
        &self,
        last_schedule: Option<Timestamp>,
        created: Timestamp,
        starting_deadline_seconds: Option<i64>,
        now: Timestamp,
    ) -> Result<Runs, ScheduleError> {
        let next = self.next_after(now)?;
        let last_started = last_schedule.unwrap_or(created);
        if last_started > now {
            // Clock skew: nothing can be due before the last run.
            return Ok(Runs { missed: None, next });
        }
        let mut earliest = last_started;
        if let Some(seconds) = starting_deadline_seconds {
            earliest = earliest.max(now - jiff::SignedDuration::from_secs(seconds));
        }
        let mut run = self.next_after(earliest)?;
        let mut count = 0;
        while run <= now {
            count += 1;
            if count > MAX_MISSED_RUNS {
                return Err(ScheduleError::TooManyMissedRuns);
            }
            run = self.next_after(run)?;
        }
        let missed = self
            .latest_at_or_before(now)
            .filter(|run| *run > last_started);
        Ok(Runs { missed, next })
    }
}

/// Whether it is too late at `now` to start `run`: more than `startingDeadlineSeconds`
/// after it (never without a deadline).
pub fn is_past_deadline(
    run: Timestamp,
    starting_deadline_seconds: Option<i64>,
    now: Timestamp,
) -> bool {
    starting_deadline_seconds
        .is_some_and(|seconds| run + jiff::SignedDuration::from_secs(seconds) < now)
}

/// Checks a schedule the way the validating webhook does (5 fields, standard cron).
pub fn validate(schedule: &str) -> Result<(), ScheduleError> {
    parse_standard(schedule).map(|_| ())
}

fn parse_standard(schedule: &str) -> Result<Cron, ScheduleError> {
    // croner also accepts 6- and 7-field patterns (seconds, years); Kubernetes does not.
    let is_descriptor = schedule.trim_start().starts_with('@');
    let fields = schedule.split_whitespace().count();
    if !is_descriptor && fields != 5 {
        return Err(ScheduleError::Parse(format!(
            "expected exactly 5 fields, found {fields}: {schedule:?}"
        )));
    }
    let parser = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build();
    parser
        .parse(schedule)
        .map_err(|err| ScheduleError::Parse(err.to_string()))
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(schedule: &str) -> Result<Self, Self::Err> {
        Self::parse(schedule, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    #[test]
    fn monday_means_monday() {
        // 2026-11-29 is a Sunday; `0 9 * * 1` is Monday 09:00.
        let schedule: Schedule = "0 9 * * 1".parse().unwrap();
        assert_eq!(
            schedule.next_after(at("2026-11-29T12:00:00Z")).unwrap(),
            at("2026-11-30T09:00:00Z")
        );
        // 0 and 7 are both Sunday.
        for sunday in ["0 9 * * 0", "0 9 * * 7", "0 9 * * SUN"] {
            let schedule: Schedule = sunday.parse().unwrap();
            assert_eq!(
                schedule.next_after(at("2026-11-25T00:00:00Z")).unwrap(),
                at("2026-11-29T09:00:00Z")
            );
        }
    }

    #[test]
    fn day_of_month_and_day_of_week_combine_with_or() {
        // The 1st of the month OR a Friday: from Mon 2026-11-30 the next is Tue 2026-12-01.
        let schedule: Schedule = "0 0 1 * 5".parse().unwrap();
        assert_eq!(
            schedule.next_after(at("2026-11-30T00:00:00Z")).unwrap(),
            at("2026-12-01T00:00:00Z")
        );
        assert_eq!(
            schedule.next_after(at("2026-12-01T00:00:00Z")).unwrap(),
            at("2026-12-04T00:00:00Z")
        );
    }

    #[test]
    fn accepts_descriptors_and_refuses_other_field_counts() {
        assert!(validate("@daily").is_ok());
        assert!(validate("*/1 * * * *").is_ok());
        for bad in [
            "* * * *",
            "0 * * * * *",
            "0 0 * * * * 2026",
            "61 * * * *",
            "not a schedule",
            "",
        ] {
            assert!(
                matches!(validate(bad), Err(ScheduleError::Parse(_))),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn evaluates_in_the_given_time_zone() {
        let schedule = Schedule::parse("0 9 * * *", Some("Europe/Berlin")).unwrap();
        // 09:00 in Berlin is 08:00 UTC in winter.
        assert_eq!(
            schedule.next_after(at("2026-11-30T00:00:00Z")).unwrap(),
            at("2026-11-30T08:00:00Z")
        );
        assert_eq!(
            Schedule::parse("0 9 * * *", Some("Mars/Olympus")).unwrap_err(),
            ScheduleError::UnknownTimeZone("Mars/Olympus".into())
        );
    }

    #[test]
    fn reports_the_latest_missed_run_and_the_next() {
        let schedule: Schedule = "*/5 * * * *".parse().unwrap();
        let runs = schedule
            .runs(
                None,
                at("2026-11-30T10:01:00Z"),
                None,
                at("2026-11-30T10:17:00Z"),
            )
            .unwrap();
        assert_eq!(runs.missed, Some(at("2026-11-30T10:15:00Z")));
        assert_eq!(runs.next, at("2026-11-30T10:20:00Z"));

        // Nothing due since the last run.
        let runs = schedule
            .runs(
                Some(at("2026-11-30T10:15:00Z")),
                at("2026-11-30T09:00:00Z"),
                None,
                at("2026-11-30T10:17:00Z"),
            )
            .unwrap();
        assert_eq!(runs.missed, None);
    }

    #[test]
    fn starting_deadline_moves_the_earliest_time_up() {
        let schedule: Schedule = "* * * * *".parse().unwrap();
        let created = at("2026-11-30T00:00:00Z");
        let now = at("2026-11-30T12:00:30Z");
        // Without a deadline, 12 hours of minutes are too many missed runs.
        assert_eq!(
            schedule.runs(None, created, None, now).unwrap_err(),
            ScheduleError::TooManyMissedRuns
        );
        // With a 200 s deadline only the last few minutes count.
        let runs = schedule.runs(None, created, Some(200), now).unwrap();
        assert_eq!(runs.missed, Some(at("2026-11-30T12:00:00Z")));
        assert_eq!(runs.next, at("2026-11-30T12:01:00Z"));
    }

    #[test]
    fn a_run_missed_beyond_the_deadline_is_reported_and_past_it() {
        let schedule: Schedule = "*/5 * * * *".parse().unwrap();
        let now = at("2026-11-30T10:17:00Z");
        let runs = schedule
            .runs(None, at("2026-11-30T10:01:00Z"), Some(60), now)
            .unwrap();
        assert_eq!(runs.missed, Some(at("2026-11-30T10:15:00Z")));
        assert!(is_past_deadline(runs.missed.unwrap(), Some(60), now));
        assert!(!is_past_deadline(runs.missed.unwrap(), Some(120), now));
        assert!(!is_past_deadline(runs.missed.unwrap(), None, now));
        // The run already started is not missed again, however late.
        let runs = schedule
            .runs(
                Some(at("2026-11-30T10:15:00Z")),
                at("2026-11-30T10:01:00Z"),
                Some(60),
                now,
            )
            .unwrap();
        assert_eq!(runs.missed, None);
    }

    #[test]
    fn earliest_in_the_future_means_nothing_missed() {
        let schedule: Schedule = "0 * * * *".parse().unwrap();
        let runs = schedule
            .runs(
                None,
                at("2026-11-30T10:30:00Z"),
                None,
                at("2026-11-30T10:00:00Z"),
            )
            .unwrap();
        assert_eq!(
            runs,
            Runs {
                missed: None,
                next: at("2026-11-30T11:00:00Z")
            }
        );
    }
}

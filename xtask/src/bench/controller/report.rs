//! The tables `bench controller` prints: one per build (a column per size), the bytes
//! each CronJob adds, and the ratios of this tree to the compared revision.

use kubebuilder_envtest::load::percentile;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Figures, Phase};

/// One row: its name and its value at one size (`None`: not measured at that size).
type Row = (&'static str, fn(&Figures) -> Option<String>);
/// One compared figure: its name and its value at one size.
type Compared = (&'static str, fn(&Figures) -> Option<f64>);

const ROWS: [Row; 15] = [
    ("start → every CronJob reconciled once", |f| {
        f.work
            .as_ref()
            .map(|work| format!("{:.2} s", work.all_reconciled.as_secs_f64()))
    }),
    ("reconciles in that time", |f| {
        f.work.as_ref().map(|work| work.reconciles.to_string())
    }),
    ("reconciles per second", |f| {
        f.work.as_ref().map(|work| {
            format!(
                "{:.0}",
                work.reconciles as f64 / work.all_reconciled.as_secs_f64()
            )
        })
    }),
    ("schedule → Job seen, p50", |f| delay(f, 50)),
    ("schedule → Job seen, p99", |f| delay(f, 99)),
    ("schedule → Job seen, max", |f| delay(f, 100)),
    ("manager peak RSS (VmHWM)", |f| Some(mib(f.peak_rss_kib))),
    ("manager RSS at the end (idle: once ready)", |f| {
        Some(mib(f.steady_rss_kib))
    }),
    ("RSS / peak once ready", |f| at_end_of(f, Phase::Ready)),
    ("RSS / peak once every CronJob reconciled", |f| {
        at_end_of(f, Phase::Reconciled)
    }),
    ("RSS / peak once the run's Jobs are seen", |f| {
        at_end_of(f, Phase::RunJobs)
    }),
    ("the peak was reached in", |f| {
        Some(peak_phase(f).to_owned())
    }),
    ("manager CPU time (user + system)", |f| {
        Some(format!("{:.1} s", f.cpu.as_secs_f64()))
    }),
    ("requests to the apiserver per second", |f| {
        Some(format!(
            "{:.1}",
            f.requests as f64 / f.lifetime.as_secs_f64()
        ))
    }),
    ("watches the manager keeps open", |f| {
        Some(watch_summary(&f.watches))
    }),
];

fn delay(figures: &Figures, percent: usize) -> Option<String> {
    let work = figures.work.as_ref()?;
    let at = percentile(&work.schedule_delays, percent);
    Some(format!("{:.0} ms", at.as_secs_f64() * 1000.0))
}

/// The RSS and peak RSS at the end of `phase`.
fn at_end_of(figures: &Figures, phase: Phase) -> Option<String> {
    let mark = figures.marks.iter().find(|mark| mark.phase == phase)?;
    Some(format!(
        "{} / {}",
        mib(mark.rss_kib),
        mib(mark.peak_rss_kib)
    ))
}

/// The phase at whose end the peak RSS had its final value first; after the last phase,
/// the settling time before the figures are read.
fn peak_phase(figures: &Figures) -> &'static str {
    figures
        .marks
        .iter()
        .find(|mark| mark.peak_rss_kib == figures.peak_rss_kib)
        .map_or("the settling time at the end", |mark| mark.phase.name())
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn watch_summary(watches: &BTreeMap<String, u64>) -> String {
    watches
        .iter()
        .map(|(resource, count)| format!("{resource} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One build's figures, a column per size.
pub(super) fn table(label: &str, sizes: &[Figures], release: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## CronJob controller of {label} ({} build, local control plane)\n",
        if release { "release" } else { "debug" }
    );
    let header: Vec<String> = sizes
        .iter()
        .map(|figures| format!("{} CronJobs", figures.cronjobs))
        .collect();
    let _ = writeln!(out, "| measure | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(sizes.len()));
    for (name, value) in ROWS {
        let cells: Vec<String> = sizes
            .iter()
            .map(|figures| value(figures).unwrap_or_else(|| "–".to_owned()))
            .collect();
        let _ = writeln!(out, "| {name} | {} |", cells.join(" | "));
    }
    if let Some(slope) = bytes_per_cronjob(sizes, |f| f.steady_rss_kib) {
        let peak = bytes_per_cronjob(sizes, |f| f.peak_rss_kib).unwrap_or_default();
        let _ = writeln!(
            out,
            "\nBytes per CronJob (least-squares slope over the sizes; each CronJob with one \
             Job in the cache): {:.1} KiB of RSS at the end, {:.1} KiB of peak RSS.",
            slope / 1024.0,
            peak / 1024.0
        );
    }
    for figures in sizes {
        if let Some(work) = &figures.work {
            let _ = writeln!(
                out,
                "\n{} CronJobs: the {} Jobs of the run at {}.",
                figures.cronjobs,
                work.schedule_delays.len(),
                work.minute
            );
        }
    }
    out
}

/// The least-squares slope of `kib` over the sizes, in bytes per CronJob; `None` with
/// fewer than two distinct sizes.
fn bytes_per_cronjob(sizes: &[Figures], kib: fn(&Figures) -> u64) -> Option<f64> {
    let points: Vec<(f64, f64)> = sizes
        .iter()
        .map(|figures| (figures.cronjobs as f64, kib(figures) as f64 * 1024.0))
        .collect();
    let n = points.len() as f64;
    let mean_x = points.iter().map(|(x, _)| x).sum::<f64>() / n;
    let mean_y = points.iter().map(|(_, y)| y).sum::<f64>() / n;
    let spread: f64 = points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum();
    if spread == 0.0 {
        return None;
    }
    let covariance: f64 = points
        .iter()
        .map(|(x, y)| (x - mean_x) * (y - mean_y))
        .sum();
    Some(covariance / spread)
}

/// This tree's figures against those of `rev`, size by size (ratio new / old).
pub(super) fn comparison(new: &[Figures], old: &[Figures], rev: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n## This tree against {rev} (ratio new / old)\n");
    let pairs: Vec<(&Figures, &Figures)> = new
        .iter()
        .filter_map(|n| Some((n, old.iter().find(|o| o.cronjobs == n.cronjobs)?)))
        .collect();
    let header: Vec<String> = pairs
        .iter()
        .map(|(figures, _)| format!("{} CronJobs", figures.cronjobs))
        .collect();
    let _ = writeln!(out, "| measure | {} |", header.join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(pairs.len()));
    let ratios: [Compared; 6] = [
        ("start → every CronJob reconciled once", |f| {
            f.work.as_ref().map(|w| w.all_reconciled.as_secs_f64())
        }),
        ("schedule → Job seen, p50", |f| {
            f.work
                .as_ref()
                .map(|w| percentile(&w.schedule_delays, 50).as_secs_f64())
        }),
        ("schedule → Job seen, p99", |f| {
            f.work
                .as_ref()
                .map(|w| percentile(&w.schedule_delays, 99).as_secs_f64())
        }),
        ("manager peak RSS", |f| Some(f.peak_rss_kib as f64)),
        ("manager RSS at the end", |f| Some(f.steady_rss_kib as f64)),
        ("manager CPU time", |f| Some(f.cpu.as_secs_f64())),
    ];
    for (name, value) in ratios {
        let cells: Vec<String> = pairs
            .iter()
            .map(|(n, o)| match (value(n), value(o)) {
                (Some(n), Some(o)) if o > 0.0 => format!("{:.2}", n / o),
                _ => "–".to_owned(),
            })
            .collect();
        let _ = writeln!(out, "| {name} | {} |", cells.join(" | "));
    }
    if let (Some(n), Some(o)) = (
        bytes_per_cronjob(new, |f| f.steady_rss_kib),
        bytes_per_cronjob(old, |f| f.steady_rss_kib),
    ) {
        let _ = writeln!(
            out,
            "\nBytes per CronJob (RSS at the end): {:.1} KiB against {:.1} KiB ({:.2}).",
            n / 1024.0,
            o / 1024.0,
            n / o
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn at(cronjobs: usize, rss_kib: u64) -> Figures {
        Figures {
            cronjobs,
            work: None,
            peak_rss_kib: rss_kib,
            steady_rss_kib: rss_kib,
            marks: Vec::new(),
            cpu: Duration::ZERO,
            requests: 0,
            lifetime: Duration::from_secs(1),
            watches: BTreeMap::new(),
        }
    }

    #[test]
    fn the_slope_is_bytes_per_cronjob() {
        // 15 MiB idle, 10 KiB more per CronJob.
        let sizes = [
            at(0, 15 * 1024),
            at(1000, 15 * 1024 + 10_000),
            at(3000, 15 * 1024 + 30_000),
        ];
        let slope = bytes_per_cronjob(&sizes, |f| f.steady_rss_kib).unwrap();
        assert!((slope - 10.0 * 1024.0).abs() < 1e-6, "{slope}");
        assert_eq!(bytes_per_cronjob(&sizes[..1], |f| f.steady_rss_kib), None);
    }

    #[test]
    fn the_peak_is_placed_in_the_first_phase_that_ends_with_it() {
        let marked = |peaks: &[(Phase, u64)], peak_rss_kib| Figures {
            peak_rss_kib,
            marks: peaks
                .iter()
                .map(|&(phase, peak)| super::super::Mark {
                    phase,
                    rss_kib: peak,
                    peak_rss_kib: peak,
                })
                .collect(),
            ..at(1000, 0)
        };
        let phases = [
            (Phase::Ready, 10),
            (Phase::Reconciled, 50),
            (Phase::RunJobs, 50),
        ];
        assert_eq!(peak_phase(&marked(&phases, 50)), Phase::Reconciled.name());
        assert_eq!(
            peak_phase(&marked(&phases, 60)),
            "the settling time at the end"
        );
    }
}

//! The headline numbers, computed for this machine by measuring, not extrapolating: the entity
//! count at which SoA's saving over `Vec<Box<Entity>>` reaches 1 ms per frame (the JS study's
//! 184,000), and the count at which each layout breaks the 16.67 ms budget (its 1,792,000 for
//! objects). Each search starts inside the bracket the layout sweep found, at the count that
//! the sweep's two ends put the crossing at, and closes in from there, building a fresh
//! population at every probe. In `f64`, the study's scalar.

use crate::bench::kit::frames::frame_stats;
use crate::bench::report::experiment::Cell;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::bench::studies::layouts::{self, default_counts};
use crate::layout::LayoutKind;
use crate::threads::Threads;
use crate::workload::BUDGET_MS;

pub struct Crossings;

const NAME: &str = "crossings";

/// How wide a crossing's final bracket may be: its ends within 3% of each other, about the
/// noise of one frame's p50 here, and narrower than the 3.7% that six log-space bisections of
/// 1M..10M reached.
const BRACKET: f64 = 1.03;
/// The search's first step away from its guess: about how far the guess missed in
/// docs/runs/full-2026-12-04 (within 10% for all but one layout, whose two ends were measured in
/// different processes from its probes).
const FIRST_STEP: f64 = 1.06;
/// Probes per search at most, where the guess is far off.
const PROBES: usize = 6;

/// The sweep's bracket `(last n below, first n at or above)` for `value(n) >= line`, if it
/// crosses, and the search's first probe: where a power law through the two ends crosses the
/// line (a straight line where the value at the low end is not positive). Past the caches a
/// frame's time grows a little faster than the count (x16.7 from 1M to 10M for `soa`, f64), so a
/// straight line put the first probe 10-30% low, the power law within 10%.
fn bracket(
    counts: &[usize],
    value: impl Fn(u64) -> Option<f64>,
    line: f64,
) -> Option<(usize, usize, usize)> {
    counts.windows(2).find_map(|w| {
        let (lo, hi) = (w[0], w[1]);
        let (low, high) = (value(lo as u64)?, value(hi as u64)?);
        (low < line && high >= line).then(|| {
            let guess = if low > 0.0 {
                let power = (hi as f64 / lo as f64).ln() / (high / low).ln();
                lo as f64 * (line / low).powf(power)
            } else {
                lo as f64 + (hi - lo) as f64 * (line - low) / (high - low)
            };
            (lo, hi, guess.round() as usize)
        })
    })
}

/// Whether `lo..hi` is as narrow as a crossing's bracket needs (a hair of slack for the
/// rounding of `lo * BRACKET`).
fn narrow(lo: usize, hi: usize) -> bool {
    hi as f64 / lo as f64 <= BRACKET + 1e-9
}

/// The smallest n in `[lo, hi]` with `f(n) >= 0`, as the final bracket `(lo, hi)`: `f(lo) < 0`
/// and `f(hi) >= 0` are taken as known. The first probe is `guess`; while the probes stay on
/// one side, each steps further than the last (by [`FIRST_STEP`], squared at every step), and once
/// both sides are probed, or a step would leave the bracket, the rest bisect in log space.
/// Stops when the ends are within [`BRACKET`] of each other or after `probes` probes.
pub fn search(
    mut lo: usize,
    mut hi: usize,
    guess: usize,
    probes: usize,
    mut f: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<(usize, usize), BenchError> {
    let mid = |lo: usize, hi: usize| ((lo as f64) * (hi as f64)).sqrt().round() as usize;
    let (mut next, mut stride, mut last, mut bisecting) = (guess, FIRST_STEP, None, false);
    for _ in 0..probes {
        if narrow(lo, hi) {
            break;
        }
        if bisecting || next <= lo || next >= hi {
            bisecting = true;
            next = mid(lo, hi);
            if next <= lo || next >= hi {
                break;
            }
        }
        let below = f(next)? < 0.0;
        if below {
            lo = next;
        } else {
            hi = next;
        }
        match last {
            Some(was) if was == below => stride *= stride,
            Some(_) => bisecting = true,
            None => {}
        }
        last = Some(below);
        next = if below {
            (next as f64 * stride).floor() as usize
        } else {
            (next as f64 / stride).ceil() as usize
        };
    }
    Ok((lo, hi))
}

fn ms(prior: &[Record], layout: &str, n: u64) -> Option<f64> {
    Query::metric(Metric::FrameMs)
        .layout(layout)
        .scalar("f64")
        .threads("1")
        .n(n)
        .find(prior)
        .map(|r| r.p50)
}

/// Bisects `[lo, hi]` in log space for the smallest n with `f(n) >= 0`, `probes` times.
pub fn bisect(
    mut lo: usize,
    mut hi: usize,
    probes: usize,
    mut f: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<(usize, usize), BenchError> {
    for _ in 0..probes {
        let mid = ((lo as f64) * (hi as f64)).sqrt().round() as usize;
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid)? >= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok((lo, hi))
}

impl Experiment for Crossings {
    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: SoA saves 1 ms at 184k; objects break 16.67 ms at 1.79M"
    }

    fn title(&self) -> &'static str {
        "Headline crossings: where the saving reaches 1 ms, where each layout breaks 16.67 ms"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<String> {
        let counts = default_counts(cfg);
        let mut cells = Vec::new();
        let saving = |n| Some(ms(prior, "boxed", n)? - ms(prior, "soa", n)?);
        if let Some((lo, hi, guess)) = bracket(&counts, saving, 1.0) {
            cells.push(format!("saving:{lo}:{hi}:{guess}"));
        }
        for kind in cfg.layouts_of(&LayoutKind::CPU) {
            let frame = |n| ms(prior, kind.name(), n);
            if let Some((lo, hi, guess)) = bracket(&counts, frame, BUDGET_MS) {
                cells.push(format!("budget:{kind}:{lo}:{hi}:{guess}"));
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let cell = Cell::new(NAME, cell);
        let parts: Vec<&str> = cell.text.split(':').collect();
        let expected = "saving:<lo>:<hi>:<guess> or budget:<layout>:<lo>:<hi>:<guess>";
        let num = |s: &str| cell.number::<usize>(s, expected);
        let probes = cfg.pick(PROBES, 2);
        let method = cfg.method;
        match parts.as_slice() {
            ["saving", lo, hi, guess] => {
                let (lo, hi) = search(num(lo)?, num(hi)?, num(guess)?, probes, |n| {
                    let boxed = frame_stats::<f64>(LayoutKind::Boxed, n, Threads::One, &method)?;
                    let soa = frame_stats::<f64>(LayoutKind::Soa, n, Threads::One, &method)?;
                    Ok(boxed.p50 - soa.p50 - 1.0)
                })?;
                Ok(vec![
                    Record::new(NAME, "soa-vs-boxed", "f64", hi)
                        .param(format!("bracket={lo}..{hi}"))
                        .value(Metric::SavingReaches1msAt, "entities", hi as f64),
                ])
            }
            ["budget", layout, lo, hi, guess] => {
                let kind = layout.parse::<LayoutKind>()?;
                let (lo, hi) = search(num(lo)?, num(hi)?, num(guess)?, probes, |n| {
                    Ok(frame_stats::<f64>(kind, n, Threads::One, &method)?.p50 - BUDGET_MS)
                })?;
                Ok(vec![
                    Record::new(NAME, kind.name(), "f64", hi)
                        .param(format!("bracket={lo}..{hi}"))
                        .value(Metric::BreaksBudgetAt, "entities", hi as f64),
                ])
            }
            _ => Err(cell.bad(expected)),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        let top = default_counts(cfg).into_iter().max().unwrap_or(0);
        let swept = all.iter().any(|r| r.experiment == layouts::NAME);
        let not_found = |what: &str| {
            if swept {
                format!(
                    "not reached up to {} entities ({what})",
                    fmt_count(top as u64)
                )
            } else {
                "needs the `layouts` experiment in the same run".to_string()
            }
        };
        let saving = Query::metric(Metric::SavingReaches1msAt)
            .layout("soa-vs-boxed")
            .scalar("f64")
            .find(mine);
        let mut rows = vec![vec![
            "SoA saves 1 ms/frame over `boxed`".to_string(),
            saving.map_or(not_found("saving"), |r| {
                format!("{} ({})", fmt_count(r.p50 as u64), r.param)
            }),
            fmt_count(studies::JS_SAVING_1MS_AT as u64),
        ]];
        for kind in LayoutKind::CPU {
            let found = Query::metric(Metric::BreaksBudgetAt)
                .layout(kind.name())
                .scalar("f64")
                .find(mine);
            rows.push(vec![
                format!("`{kind}` breaks {BUDGET_MS:.2} ms"),
                found.map_or(not_found("budget"), |r| {
                    format!("{} ({})", fmt_count(r.p50 as u64), r.param)
                }),
                if kind == LayoutKind::Boxed {
                    fmt_count(studies::JS_OBJECTS_BREAK_BUDGET_AT as u64)
                } else {
                    "-".into()
                },
            ]);
        }
        format!(
            "f64, one thread; the smallest measured count that crosses, with the final bracket of the search inside the sweep's bracket, a fresh population at every probe.\n\n{}",
            table(&["crossing", "this machine", "JS study (M3)"], &rows)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `search` over a frame time that crosses at `at`, returning its bracket and its probes.
    fn probe_line(lo: usize, hi: usize, guess: usize, at: usize) -> ((usize, usize), usize) {
        let mut probes = 0;
        let found = search(lo, hi, guess, PROBES, |n| {
            probes += 1;
            Ok(n as f64 - at as f64)
        })
        .unwrap();
        (found, probes)
    }

    #[test]
    fn the_sweeps_ends_put_the_first_probe_where_a_power_law_through_them_crosses() {
        // 1 ms at 100k, 10 ms at 1M, 200 ms at 10M: n^1.3 past 1M, 16.67 ms at 1.48M.
        let ms = |n: u64| match n {
            100_000 => Some(1.0),
            1_000_000 => Some(10.0),
            10_000_000 => Some(200.0),
            _ => None,
        };
        let counts = [100_000, 1_000_000, 10_000_000];
        let (lo, hi, guess) = bracket(&counts, ms, BUDGET_MS).unwrap();
        assert_eq!((lo, hi), (1_000_000, 10_000_000));
        let power = 10f64.ln() / 20f64.ln();
        let expected = 1e6 * (BUDGET_MS / 10.0).powf(power);
        assert_eq!(guess, expected.round() as usize);
        assert!((1_480_000..1_490_000).contains(&guess), "{guess}");
        assert_eq!(bracket(&counts, |_| Some(1.0), BUDGET_MS), None);
        // A difference that starts negative (no saving yet) is interpolated on a straight line.
        let saving = |n: u64| Some(n as f64 / 100_000.0 - 5.0);
        let (_, _, guess) = bracket(&counts, saving, 1.0).unwrap();
        assert_eq!(guess, 600_000);
    }

    #[test]
    fn a_guess_within_the_first_step_settles_in_three_probes_within_the_bracket_width() {
        for (guess, at) in [(1_700_000, 1_710_000), (1_700_000, 1_610_000)] {
            let ((lo, hi), probes) = probe_line(1_000_000, 10_000_000, guess, at);
            assert!(lo < at && hi >= at, "{lo}..{hi}");
            assert!(narrow(lo, hi), "{lo}..{hi}");
            assert_eq!(probes, 3, "guess {guess}, at {at}");
        }
    }

    #[test]
    fn a_bad_guess_still_brackets_the_crossing() {
        for (guess, at) in [
            (9_000_000, 1_200_000),
            (1_100_000, 8_000_000),
            (5, 3_000_000),
        ] {
            let ((lo, hi), probes) = probe_line(1_000_000, 10_000_000, guess, at);
            assert!(lo < at && hi >= at, "guess {guess}, at {at}: {lo}..{hi}");
            assert!(probes <= PROBES);
        }
    }

    #[test]
    fn enough_probes_always_close_the_bracket_to_its_width() {
        for at in [1_000_001, 1_500_000, 4_321_000, 9_999_999] {
            for guess in [1_000_000, 2_000_000, 7_000_000, 10_000_000] {
                let found = search(1_000_000, 10_000_000, guess, 40, |n| {
                    Ok(n as f64 - at as f64)
                })
                .unwrap();
                let (lo, hi) = found;
                assert!(lo < at && hi >= at, "guess {guess}, at {at}: {lo}..{hi}");
                assert!(narrow(lo, hi), "guess {guess}: {lo}..{hi}");
            }
        }
    }
}

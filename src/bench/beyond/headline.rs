//! The headline numbers as figures that hold from run to run: every ratio and crossing the
//! README leads with, measured in [`REPS`] fresh processes and reported as the median of the
//! per-process values with their spread (min..max). Inside a process the contenders are
//! measured in interleaved rounds, so a drift in the machine's load hits them alike; across
//! processes, what each process is dealt (heap placement, a neighbour's burst) shows as spread.
//!
//! Beside each ratio, the work: instructions per entity per frame of both sides, counted by
//! cachegrind (deterministic, the same on every run), so a reader can tell a ratio that comes
//! from memory (same instructions, different time) from one that comes from doing more.
//!
//! The tuned and idiomatic ECS rows are the `ecs-vs-soa` experiment's, which runs its own
//! processes with controls; run both (`--only ecs-vs-soa,headline`) for the whole table.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::HEADLINE_RATIO_N as RATIO_N;
use crate::bench::kit::frames::frame_stats;
use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::child::{instructions_record, this_binary};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::{Method, Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short, spread};
use crate::bench::studies::crossings::bisect;
use crate::bench::studies::figures as studies;
use crate::layout::LayoutKind;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;
use crate::workload::{BUDGET_MS, SEED};

pub struct Headline;

pub const NAME: &str = "headline";
/// Fresh processes per figure.
const REPS: usize = 5;
/// The count SoA is timed at to show it never breaks the budget.
const BIG_N: usize = 10_000_000;
/// Where the instructions are counted (cachegrind): in cache, so the count is the work alone.
const COUNTED_N: usize = 10_000;
const COUNTED: &str = "instructions";

/// A cell: the count under cachegrind, or one part of the figures in fresh process `rep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeadlineCell {
    Counted,
    Ratios { rep: usize },
    Crossings { rep: usize },
    SoaBig { rep: usize },
}

impl fmt::Display for HeadlineCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeadlineCell::Counted => f.write_str(COUNTED),
            HeadlineCell::Ratios { rep } => write!(f, "ratios:rep={rep}"),
            HeadlineCell::Crossings { rep } => write!(f, "crossings:rep={rep}"),
            HeadlineCell::SoaBig { rep } => write!(f, "soa-big:rep={rep}"),
        }
    }
}

impl FromStr for HeadlineCell {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = "instructions or ratios|crossings|soa-big:rep=<k>";
        read_cell(text, expected, |text| {
            if text == COUNTED {
                return Some(HeadlineCell::Counted);
            }
            let [part, rep] = holes(text, "{}:rep={}")?;
            let rep = rep.parse().ok()?;
            match part {
                "ratios" => Some(HeadlineCell::Ratios { rep }),
                "crossings" => Some(HeadlineCell::Crossings { rep }),
                "soa-big" => Some(HeadlineCell::SoaBig { rep }),
                _ => None,
            }
        })
    }
}

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 2)
}

fn ratio_n(cfg: &BenchConfig) -> usize {
    cfg.pick(RATIO_N, 20_000)
}

fn big_n(cfg: &BenchConfig) -> usize {
    cfg.pick(BIG_N, 50_000)
}

/// A headline ratio: `slow` over `fast`, both in `scalar`, at the ratio count.
struct Ratio {
    question: &'static str,
    slow: LayoutKind,
    fast: LayoutKind,
    scalar: &'static str,
    js_study: Option<f64>,
    cpp_article: Option<f64>,
}

const RATIOS: [Ratio; 3] = [
    Ratio {
        question: "SoA speedup over objects (f64: `boxed` / `soa`)",
        slow: LayoutKind::Boxed,
        fast: LayoutKind::Soa,
        scalar: "f64",
        js_study: Some(7.33),
        cpp_article: None,
    },
    Ratio {
        question: "shuffled objects over objects in allocation order (f64: `boxed-shuffled` / `boxed`)",
        slow: LayoutKind::BoxedShuffled,
        fast: LayoutKind::Boxed,
        scalar: "f64",
        js_study: Some(49.512 / 13.239),
        cpp_article: None,
    },
    Ratio {
        question: "OOP (virtual calls) over SoA (f32: `dyn-1` / `soa`)",
        slow: LayoutKind::Dyn(1),
        fast: LayoutKind::Soa,
        scalar: "f32",
        js_study: None,
        cpp_article: Some(studies::CPP_OOP_MS / studies::CPP_ECS_MS),
    },
];

/// The layouts a ratio process builds, per scalar.
fn ratio_layouts(scalar: &str) -> Vec<LayoutKind> {
    let mut kinds: Vec<LayoutKind> = RATIOS
        .iter()
        .filter(|r| r.scalar == scalar)
        .flat_map(|r| [r.slow, r.fast])
        .collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    kinds
}

/// Every layout whose instructions the table prints.
fn counted_layouts() -> Vec<LayoutKind> {
    let mut kinds: Vec<LayoutKind> = RATIOS
        .iter()
        .flat_map(|r| [r.slow, r.fast])
        .chain([LayoutKind::EcsContiguous, LayoutKind::EcsTable])
        .collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    kinds
}

fn frame<S: AllLayouts>(swarm: &mut Swarm<S>, method: &Method) -> Stats {
    let dt = Dt::default();
    measure(method, || {
        swarm.step(dt, Threads::One);
        std::hint::black_box(&mut *swarm);
    })
}

fn frame_ms<S: AllLayouts>(kind: LayoutKind, n: usize, method: &Method) -> Result<f64, BenchError> {
    Ok(frame_stats::<S>(kind, n, Threads::One, method)?.p50)
}

/// The per-round ratios of `S`'s layouts at `n`: each round times every layout once.
fn ratio_rounds<S: AllLayouts>(
    cfg: &BenchConfig,
    n: usize,
    param: &str,
) -> Result<Vec<Record>, BenchError> {
    let kinds = ratio_layouts(S::NAME);
    let mut swarms: Vec<Swarm<S>> = kinds
        .iter()
        .map(|&k| Swarm::with_count(k, SEED, n))
        .collect::<Result<_, _>>()?;
    let method = cfg.method.per_round();
    let mut rounds: Vec<Vec<f64>> = Vec::new();
    for _ in 0..cfg.pick(7, 2) {
        rounds.push(swarms.iter_mut().map(|s| frame(s, &method).p50).collect());
    }
    let mut out = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let ms = Stats::from_samples(rounds.iter().map(|r| r[i]).collect());
        out.push(
            Record::new(NAME, kind.name(), S::NAME, n)
                .param(param)
                .with(Metric::FrameMs, "ms", ms),
        );
    }
    for ratio in RATIOS.iter().filter(|r| r.scalar == S::NAME) {
        let at = |k: LayoutKind| kinds.iter().position(|&c| c == k).expect("built above");
        let (slow, fast) = (at(ratio.slow), at(ratio.fast));
        let per_round = rounds.iter().map(|r| r[slow] / r[fast]).collect();
        out.push(
            Record::new(NAME, format!("{}/{}", ratio.slow, ratio.fast), S::NAME, n)
                .param(param)
                .with(Metric::Ratio, "x", Stats::from_samples(per_round)),
        );
    }
    Ok(out)
}

/// The smallest count (to about 2%) at which `f` turns non-negative: doubling from `start`, then
/// bisecting the last doubling in log space. `None` when it has not crossed at `ceiling`.
fn crossing(
    start: usize,
    ceiling: usize,
    probes: usize,
    mut f: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<Option<(usize, usize)>, BenchError> {
    let (mut lo, mut hi) = (0, start);
    while f(hi)? < 0.0 {
        if hi >= ceiling {
            return Ok(None);
        }
        lo = hi;
        hi = (hi * 2).min(ceiling);
    }
    if lo == 0 {
        return Ok(Some((0, hi)));
    }
    bisect(lo, hi, probes, f).map(Some)
}

/// A crossing found, or the ceiling it was searched up to (`not_crossed`).
fn crossing_record(
    what: &str,
    found: Option<(usize, usize)>,
    ceiling: usize,
    param: &str,
) -> Record {
    match found {
        Some((lo, hi)) => Record::new(NAME, what, "f64", hi)
            .param(format!("{param};bracket={lo}..{hi}"))
            .value(Metric::Crossing, "entities", hi as f64),
        None => Record::new(NAME, what, "f64", ceiling).param(param).value(
            Metric::NotCrossed,
            "entities",
            ceiling as f64,
        ),
    }
}

/// The two crossings of the JS study's headline, searched in one process.
fn crossings(cfg: &BenchConfig, param: &str) -> Result<Vec<Record>, BenchError> {
    let method = cfg.method;
    let probes = cfg.pick(5, 1);
    let ceiling = cfg.pick(16_000_000, 400_000);
    let saving = crossing(cfg.pick(50_000, 10_000), ceiling, probes, |n| {
        let boxed = frame_ms::<f64>(LayoutKind::Boxed, n, &method)?;
        Ok(boxed - frame_ms::<f64>(LayoutKind::Soa, n, &method)? - 1.0)
    })?;
    let budget = crossing(cfg.pick(500_000, 100_000), ceiling, probes, |n| {
        Ok(frame_ms::<f64>(LayoutKind::Boxed, n, &method)? - BUDGET_MS)
    })?;
    Ok(vec![
        crossing_record("soa-saves-1ms", saving, ceiling, param),
        crossing_record("boxed-breaks-budget", budget, ceiling, param),
    ])
}

/// SoA at the big count in both scalars, each in a process of its own.
fn soa_big(cfg: &BenchConfig, param: &str) -> Result<Vec<Record>, BenchError> {
    let n = big_n(cfg);
    let mut out = Vec::new();
    let f64_ms = frame_ms::<f64>(LayoutKind::Soa, n, &cfg.method)?;
    out.push(
        Record::new(NAME, "soa", "f64", n)
            .param(param)
            .value(Metric::FrameMs, "ms", f64_ms),
    );
    let f32_ms = frame_ms::<f32>(LayoutKind::Soa, n, &cfg.method)?;
    out.push(
        Record::new(NAME, "soa", "f32", n)
            .param(param)
            .value(Metric::FrameMs, "ms", f32_ms),
    );
    Ok(out)
}

/// Instructions per entity per frame of each headline layout (f32), or why not.
fn instructions() -> Result<Vec<Record>, BenchError> {
    let exe = this_binary(NAME, COUNTED)?;
    Ok(counted_layouts()
        .into_iter()
        .map(|kind| {
            let spec = crate::tools::counters::FrameSpec::for_count(kind, COUNTED_N);
            let rec = Record::new(NAME, kind.name(), "f32", COUNTED_N);
            instructions_record(&exe, &spec, rec, "simulated")
        })
        .collect())
}

impl Experiment for Headline {
    type Cell = HeadlineCell;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study + C++ article: the headline ratios, median of fresh processes"
    }

    fn title(&self) -> &'static str {
        "Headline numbers: the median of fresh processes, with the spread"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<HeadlineCell> {
        let mut cells = vec![HeadlineCell::Counted];
        for rep in 1..=reps(cfg) {
            cells.push(HeadlineCell::Ratios { rep });
            cells.push(HeadlineCell::Crossings { rep });
            cells.push(HeadlineCell::SoaBig { rep });
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &HeadlineCell) -> Result<Vec<Record>, BenchError> {
        let param = |rep: &usize| format!("rep={rep}");
        match cell {
            HeadlineCell::Counted => instructions(),
            HeadlineCell::Ratios { rep } => {
                let n = ratio_n(cfg);
                let mut out = ratio_rounds::<f64>(cfg, n, &param(rep))?;
                out.extend(ratio_rounds::<f32>(cfg, n, &param(rep))?);
                Ok(out)
            }
            HeadlineCell::Crossings { rep } => crossings(cfg, &param(rep)),
            HeadlineCell::SoaBig { rep } => soa_big(cfg, &param(rep)),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        let reps = reps(cfg);
        let per_rep = |records: &[Record], q: Query| -> Vec<f64> { q.per_process(records) };
        let instructions = |kind: &str| {
            Query::metric(Metric::Instructions)
                .layout(kind)
                .find(mine)
                .map(|r| r.p50)
        };
        let work = |slow: &str, fast: &str| match (instructions(slow), instructions(fast)) {
            (Some(a), Some(b)) => format!("{} vs {}", fmt_num(a), fmt_num(b)),
            _ => "not counted".into(),
        };
        let x = |v: Option<f64>| v.map_or("-".into(), |v| format!("x{v:.2}"));
        let mut rows = Vec::new();

        for (what, study) in [
            ("soa-saves-1ms", Some(studies::JS_SAVING_1MS_AT)),
            (
                "boxed-breaks-budget",
                Some(studies::JS_OBJECTS_BREAK_BUDGET_AT),
            ),
        ] {
            let found = per_rep(mine, Query::metric(Metric::Crossing).layout(what));
            let missed = per_rep(mine, Query::metric(Metric::NotCrossed).layout(what));
            let question = if what == "soa-saves-1ms" {
                "entities at which SoA saves 1 ms/frame over boxed objects (f64)"
            } else {
                "entities at which boxed objects break 16.67 ms (f64)"
            };
            let mut here = match crate::bench::report::spread::summary(&found) {
                Some((m, lo, hi)) => format!(
                    "{} [{}..{}]",
                    fmt_count(m as u64),
                    fmt_count(lo as u64),
                    fmt_count(hi as u64)
                ),
                None => "-".into(),
            };
            if let Some(ceiling) = missed.first() {
                here.push_str(&format!(
                    " ({} processes: not crossed up to {})",
                    missed.len(),
                    fmt_count(*ceiling as u64)
                ));
            }
            rows.push(vec![
                question.to_string(),
                here,
                work("boxed", "soa"),
                study.map_or("-".into(), |s| fmt_count(s as u64)),
                "-".into(),
            ]);
        }

        let big = big_n(cfg);
        let soa_big = |scalar: &str| {
            median(&per_rep(
                mine,
                Query::metric(Metric::FrameMs)
                    .layout("soa")
                    .scalar(scalar)
                    .n(big as u64),
            ))
        };
        if let (Some(f64_ms), Some(f32_ms)) = (soa_big("f64"), soa_big("f32")) {
            let verdict = if f64_ms < BUDGET_MS {
                "never breaks the budget"
            } else {
                "over the budget"
            };
            rows.push(vec![
                format!("SoA at {}, one thread (f64 / f32), ms", short(big)),
                format!("{} / {} ({verdict})", fmt_num(f64_ms), fmt_num(f32_ms)),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }

        let n = ratio_n(cfg);
        for ratio in &RATIOS {
            let name = format!("{}/{}", ratio.slow, ratio.fast);
            let values = per_rep(
                mine,
                Query::metric(Metric::Ratio)
                    .layout(&name)
                    .scalar(ratio.scalar)
                    .n(n as u64),
            );
            rows.push(vec![
                format!("{}, {}", ratio.question, short(n)),
                format!("x{}", range(&values)),
                work(ratio.slow.name(), ratio.fast.name()),
                x(ratio.js_study),
                x(ratio.cpp_article),
            ]);
        }

        let ecs: Vec<Record> = all
            .iter()
            .filter(|r| r.experiment == "ecs-vs-soa")
            .cloned()
            .collect();
        for (kind, target, label) in [
            (LayoutKind::EcsContiguous, 1.10, "tuned"),
            (LayoutKind::EcsTable, 2.0, "idiomatic"),
        ] {
            let mut here = Vec::new();
            let mut counts: Vec<u64> = ecs.iter().map(|r| r.n).collect();
            counts.sort_unstable();
            counts.dedup();
            for n in counts {
                let values = per_rep(
                    &ecs,
                    Query::metric(Metric::RatioVsSoa).layout(kind.name()).n(n),
                );
                if !values.is_empty() {
                    here.push(format!(
                        "{}: x{}",
                        short(n as usize),
                        spread(&values, |m| m <= target)
                    ));
                }
            }
            rows.push(vec![
                format!("Bevy's {label} ECS (`{kind}`) against SoA, f32 (target <= x{target:.2})"),
                if here.is_empty() {
                    "needs `ecs-vs-soa` in the same run".into()
                } else {
                    here.join("; ")
                },
                work(kind.name(), "soa"),
                "-".into(),
                "-".into(),
            ]);
        }
        let peers: Vec<String> = [1_000_000, 10_000_000]
            .into_iter()
            .filter_map(|n| {
                let (peer, ratios) = crate::bench::beyond::peers::bevy_vs_fastest_peer(all, n)?;
                Some(format!(
                    "{} (`{peer}`): x{}",
                    short(n),
                    spread(&ratios, |m| m <= 1.10)
                ))
            })
            .collect();
        rows.push(vec![
            "Bevy's tuned ECS against the fastest other ECS library's tuned form, f32, one thread (target <= x1.10)".into(),
            if peers.is_empty() {
                "needs `peers` in the same run".into()
            } else {
                peers.join("; ")
            },
            "-".into(),
            "-".into(),
            "-".into(),
        ]);

        rows.extend(seek_rows(all));

        let unavailable = mine
            .iter()
            .find(|r| r.metric == Metric::Unavailable)
            .map(|r| format!("\nInstructions not counted: {}\n", r.param))
            .unwrap_or_default();
        format!(
            "{}\nMedians of fresh processes [min..max]: {reps} for this experiment's own rows, the other experiments' processes for the ECS, peers, `seek` and `soa` rows. Instructions: cachegrind at {} entities, f32.\n{unavailable}",
            table(
                &[
                    "question",
                    "this machine, median [min..max]",
                    "instructions per entity (slow vs fast)",
                    "JS study (M3)",
                    "C++ article"
                ],
                &rows
            ),
            fmt_count(COUNTED_N as u64),
        )
    }
}

/// The rows past the studies: who wins `seek` at 1M on one thread and what it costs over the
/// move + regen winner's frame, Bevy's tuned ECS against SoA in both, and what sorting by group
/// and the tuned seek give `soa` (the `seek` and `order` experiments' records, where the run has
/// them; a row says which experiment it needs where it has none).
fn seek_rows(all: &[Record]) -> Vec<Vec<String>> {
    let n = RATIO_N as u64;
    let of = |experiment: &str, metric: Metric, layout: &str, knob: Option<&str>| -> Vec<f64> {
        let mine: Vec<Record> = all
            .iter()
            .filter(|r| r.experiment == experiment)
            .cloned()
            .collect();
        let query = Query::metric(metric).layout(layout).n(n).threads("1");
        match knob {
            Some(knob) => query.param(knob).per_process(&mine),
            None => query.per_process(&mine),
        }
    };
    let seek = crate::bench::beyond::seek::NAME;
    let fastest = |metric: Metric| {
        LayoutKind::CPU
            .iter()
            .filter_map(|k| Some((*k, median(&of(seek, metric, k.name(), None))?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let needs = |what: &str| format!("needs `{what}` in the same run");
    let row = |question: &str, here: String| {
        vec![
            question.to_string(),
            here,
            "-".into(),
            "-".into(),
            "-".into(),
        ]
    };
    let mut rows = Vec::new();
    rows.push(row(
        "`seek` (each entity reads its target by handle), 1M, one thread (f32): the fastest, and its time over the move + regen winner's frame",
        match (fastest(Metric::SeekMs), fastest(Metric::FrameMs)) {
            (Some((seeker, seek_ms)), Some((framer, frame_ms))) => format!(
                "`{seeker}`: {} ms, x{:.0} the {} ms frame of `{framer}`",
                range(&of(seek, Metric::SeekMs, seeker.name(), None)),
                seek_ms / frame_ms,
                fmt_num(frame_ms)
            ),
            _ => needs(seek),
        },
    ));
    let ratio = |metric: Metric| {
        let (ecs, soa) = (
            median(&of(seek, metric, LayoutKind::EcsContiguous.name(), None))?,
            median(&of(seek, metric, LayoutKind::Soa.name(), None))?,
        );
        Some(ecs / soa)
    };
    // Only seek's ratio: the move + regen ratio is the tuned ECS row's, measured in interleaved
    // rounds; the `seek` experiment's frames, one layout a process, would give a second and less
    // steady answer to the same question.
    rows.push(row(
        "Bevy's tuned ECS against SoA in `seek`, 1M, one thread (f32; medians); in move + regen, see the tuned ECS row",
        match ratio(Metric::SeekMs) {
            Some(a) => format!("x{a:.2}"),
            None => needs(seek),
        },
    ));
    let order = crate::bench::beyond::order::NAME;
    let soa_seek = |order_name: &str, kernel: &str| {
        of(
            order,
            Metric::SeekMs,
            LayoutKind::Soa.name(),
            Some(&format!("order={order_name},kernel={kernel},churn=0")),
        )
    };
    let id = soa_seek("id", "idiomatic");
    let gain = |faster: Vec<f64>| -> Vec<f64> {
        id.iter()
            .zip(&faster)
            .filter(|(_, f)| **f > 0.0)
            .map(|(a, f)| a / f)
            .collect()
    };
    let sort_ms = of(
        order,
        Metric::SortMs,
        LayoutKind::Soa.name(),
        Some("order=group"),
    );
    let answers = [
        ("sorted by group", gain(soa_seek("group", "idiomatic"))),
        ("tuned", gain(soa_seek("id", "tuned"))),
        ("sorted and tuned", gain(soa_seek("group", "tuned"))),
    ];
    rows.push(row(
        "`soa`'s seek sorted by who reads whom, tuned (handles resolved once, prefetched, no branches), and both, over its seek in id order, 1M, one thread (f32)",
        if id.is_empty() {
            needs(order)
        } else {
            let mut text: Vec<String> = answers
                .iter()
                .map(|(what, gains)| format!("{what} x{}", range(gains)))
                .collect();
            if let Some(ms) = median(&sort_ms) {
                text.push(format!("the sort {} ms", fmt_num(ms)));
            }
            text.join("; ")
        },
    ));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_doubles_then_bisects_to_the_first_count_over() {
        // f crosses at 300,000 exactly.
        let mut probes = Vec::new();
        let found = crossing(50_000, 16_000_000, 8, |n| {
            probes.push(n);
            Ok(n as f64 - 300_000.0)
        })
        .unwrap();
        let (lo, hi) = found.unwrap();
        assert!(
            lo < 300_000 && hi >= 300_000 && hi as f64 / lo as f64 <= 1.03,
            "{lo}..{hi}"
        );
        assert_eq!(&probes[..4], &[50_000, 100_000, 200_000, 400_000]);
        // Never crosses below the ceiling.
        assert_eq!(crossing(10, 100, 3, |_| Ok(-1.0)).unwrap(), None);
        // Crossed at the start: the bracket is everything below it.
        assert_eq!(crossing(10, 100, 3, |_| Ok(1.0)).unwrap(), Some((0, 10)));
    }

    #[test]
    fn the_ratio_layouts_are_built_once_each() {
        assert_eq!(
            ratio_layouts("f64"),
            vec![
                LayoutKind::Boxed,
                LayoutKind::BoxedShuffled,
                LayoutKind::Soa
            ]
        );
        assert_eq!(
            ratio_layouts("f32"),
            vec![LayoutKind::Dyn(1), LayoutKind::Soa]
        );
    }
}

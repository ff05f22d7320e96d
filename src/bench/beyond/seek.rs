//! Seek: the other side of the coin (past the studies). `move` and `regen` read an entity's own
//! fields, the pattern data-oriented layouts always win; `seek` reads *another* entity's position
//! through the handle the seeker holds (a missile its target, a follower its leader), a random
//! access over the whole storage, and the ranking turns over. The JS study's "random access"
//! row measured lookups by id in isolation; here they are a system every layout runs bit for bit
//! alike, in the app and here.
//!
//! Per layout and count (10k, 100k, 1M; f32, one thread and all cores), each the median of
//! [`REPS`] fresh processes: the seek pass alone, and the move + regen frame beside it, so that
//! the two rankings read side by side. Beside them, a control: a plain slot-map seek over four
//! `Vec<f32>` columns with uniformly random targets ([`control`]), each layout's seek a ratio to
//! it; and cachegrind's instructions, L1d and last-level misses per entity for seek alone.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short};
use crate::layout::LayoutKind;
use crate::layout::slots::{Handle, Slots};
use crate::runtime::swarm::Swarm;
use crate::simd::SimdTier;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::tools::counters::FrameSpec;
use crate::tools::counters::baseline::CHECK_COUNT;
use crate::workload::SEED;
use crate::workload::{Dt, SpawnPattern, mix, seek_one, spawn_range};

pub struct Seek;

pub const NAME: &str = "seek";
/// Fresh processes per figure: two, where the question is the ranking, which turns over by
/// factors, not by the few percent processes differ by; a third would lengthen the run for
/// nothing (docs/runs/bench-first-try).
const REPS: usize = 2;
/// Where instructions and misses are counted: the counts check's population, against its 1 MiB
/// last level ([`crate::tools::counters::baseline::CHECK_GEOMETRY`]), which it overflows as 1M
/// overflow a 32 MiB one. At 1M, cachegrind is too slow for the run: a flecs cell alone would
/// take minutes.
const COUNTED_N: usize = CHECK_COUNT;
/// The control's name in the records.
const CONTROL: &str = "control";

/// A cell. Its layout is a CPU layout's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Seeks {
    /// The control's seek at `n`, in fresh process `rep`: `control:<n>:<rep>`.
    Control { n: usize, rep: usize },
    /// A layout's seek and frame: `frame:<layout>:<n>:<rep>`.
    Frame {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        n: usize,
        rep: usize,
    },
    /// A layout's seek counted under cachegrind: `count:<layout>`.
    Count {
        #[serde(with = "by_name")]
        layout: LayoutKind,
    },
}

impl fmt::Display for Seeks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seeks::Control { n, rep } => write!(f, "{CONTROL}:{n}:{rep}"),
            Seeks::Frame { layout, n, rep } => write!(f, "frame:{layout}:{n}:{rep}"),
            Seeks::Count { layout } => write!(f, "count:{layout}"),
        }
    }
}

impl FromStr for Seeks {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected =
            "frame:<layout>:<n>:<rep>, control:<n>:<rep> or count:<layout>, for a CPU layout";
        read_cell(text, expected, |text| {
            let layout = |name: &str| {
                name.parse::<LayoutKind>()
                    .ok()
                    .filter(|k| LayoutKind::CPU.contains(k))
            };
            if let Some([n, rep]) = holes(text, "control:{}:{}") {
                return Some(Seeks::Control {
                    n: n.parse().ok()?,
                    rep: rep.parse().ok()?,
                });
            }
            if let Some([kind, n, rep]) = holes(text, "frame:{}:{}:{}") {
                return Some(Seeks::Frame {
                    layout: layout(kind)?,
                    n: n.parse().ok()?,
                    rep: rep.parse().ok()?,
                });
            }
            let [kind] = holes(text, "count:{}")?;
            Some(Seeks::Count {
                layout: layout(kind)?,
            })
        })
    }
}
/// The target: at 1M on one thread, `soa`'s seek within this factor of the control.
pub const SOA_TARGET: f64 = 1.5;

/// 10M is left to the `order` experiment (its idiomatic seek in id order at 10M is this table's
/// row): fresh processes of all nineteen layouts at 10M would take most of this experiment's
/// time (docs/runs/seek).
fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![10_000, 100_000, 1_000_000], vec![10_000]))
}

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 1)
}

/// Samples per process: at 10M one flecs seek pass takes seconds, so a process there takes the
/// p50 of [`FEW_SAMPLES`] (the spread over processes is what the table shows).
const FEW_SAMPLES: usize = 5;

fn method_at(cfg: &BenchConfig, n: usize) -> crate::bench::report::harness::Method {
    if n >= 10_000_000 {
        crate::bench::report::harness::Method {
            warmup_passes: 1,
            min_samples: FEW_SAMPLES,
            max_samples: FEW_SAMPLES,
            ..cfg.method
        }
    } else {
        cfg.method
    }
}

/// One process: `n` entities of `kind`, the seek pass and the move + regen frame, on one thread
/// and on all cores.
fn frame_cell(
    cfg: &BenchConfig,
    kind: LayoutKind,
    n: usize,
    rep: usize,
) -> Result<Vec<Record>, BenchError> {
    let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
    swarm.set_simd(SimdTier::Baseline);
    let dt = Dt::default();
    let method = method_at(cfg, n);
    let mut out = Vec::new();
    for threads in Threads::BOTH {
        let seek = measure(&method, || {
            swarm.step_seek(dt, threads);
            std::hint::black_box(&mut swarm);
        });
        let frame = measure(&method, || {
            swarm.step(dt, threads);
            std::hint::black_box(&mut swarm);
        });
        let rec = Record::new(NAME, kind.name(), "f32", n)
            .threads(threads)
            .in_process(rep);
        out.push(rec.clone().with(Metric::SeekMs, "ms", seek));
        out.push(rec.with(Metric::FrameMs, "ms", frame));
    }
    Ok(out)
}

/// The control: `n` entities in four `Vec<f32>` columns behind a generational slot map, each
/// seeking a uniformly random other entity: the least a seek by handle costs in safe Rust.
pub fn control(
    n: usize,
    threads: Threads,
    method: &crate::bench::report::harness::Method,
) -> Stats {
    let mut states = Vec::with_capacity(n);
    spawn_range::<f32>(SpawnPattern::default(), SEED, 0, n, &mut states);
    let (x, y): (Vec<f32>, Vec<f32>) = states.iter().map(|s| (s.x, s.y)).unzip();
    let (mut vx, mut vy): (Vec<f32>, Vec<f32>) = states.iter().map(|s| (s.vx, s.vy)).unzip();
    let mut slots = Slots::default();
    slots.push(n);
    let targets: Vec<Handle> = (0..n as u64)
        .map(|i| slots.handle_at((mix(SEED ^ i) % n as u64) as usize))
        .collect();
    let dt = 1.0 / 60.0;
    let c = chunk_len(threads, n);
    measure(method, || {
        let parts = vx.chunks_mut(c).zip(vy.chunks_mut(c)).enumerate();
        for_each_part(threads, parts, |(part, (vx, vy))| {
            for (i, (vx, vy)) in (part * c..).zip(vx.iter_mut().zip(vy)) {
                if let Some(t) = slots.dense(targets[i]) {
                    (*vx, *vy) = seek_one(x[i], y[i], *vx, *vy, x[t], y[t], dt);
                }
            }
        });
        std::hint::black_box((&vx, &vy));
    })
}

fn control_cell(cfg: &BenchConfig, n: usize, rep: usize) -> Vec<Record> {
    Threads::BOTH
        .into_iter()
        .map(|threads| {
            Record::new(NAME, CONTROL, "f32", n)
                .threads(threads)
                .in_process(rep)
                .with(
                    Metric::SeekMs,
                    "ms",
                    control(n, threads, &method_at(cfg, n)),
                )
        })
        .collect()
}

fn count_cell(cfg: &BenchConfig, cell: &str, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(COUNTED_N, 10_000);
    let exe = crate::bench::report::child::this_binary(NAME, cell)?;
    let rec = Record::new(NAME, kind.name(), "f32", n);
    let spec = FrameSpec::seek(kind, n);
    Ok(crate::bench::report::child::miss_records(
        &exe, &spec, rec, "",
    ))
}

/// The per-process p50s of one figure.
fn processes(mine: &[Record], metric: Metric, layout: &str, n: usize, threads: &str) -> Vec<f64> {
    Query::metric(metric)
        .layout(layout)
        .n(n as u64)
        .threads(threads)
        .per_process(mine)
}

fn one(mine: &[Record], metric: Metric, kind: LayoutKind) -> Option<f64> {
    mine.iter()
        .find(|r| r.metric == metric && r.layout == kind.name())
        .map(|r| r.p50)
}

/// Ranks (1 = fastest) of `values`, `None` where there is no value.
fn ranks(values: &[Option<f64>]) -> Vec<Option<usize>> {
    values
        .iter()
        .map(|v| {
            let v = (*v)?;
            Some(1 + values.iter().flatten().filter(|&&o| o < v).count())
        })
        .collect()
}

impl Experiment for Seek {
    type Cell = Seeks;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: systems that read other entities by handle"
    }

    fn title(&self) -> &'static str {
        "Seek: reading other entities by handle, the ranking turned over (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Seeks> {
        let mut cells = Vec::new();
        let layouts = cfg.layouts_of(&LayoutKind::CPU);
        for n in counts(cfg) {
            for rep in 0..reps(cfg) {
                cells.push(Seeks::Control { n, rep });
                for &layout in &layouts {
                    cells.push(Seeks::Frame { layout, n, rep });
                }
            }
        }
        cells.extend(layouts.into_iter().map(|layout| Seeks::Count { layout }));
        cells
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Seeks) -> Result<Vec<Record>, BenchError> {
        match *cell {
            Seeks::Frame { layout, n, rep } => frame_cell(cfg, layout, n, rep),
            Seeks::Control { n, rep } => Ok(control_cell(cfg, n, rep)),
            Seeks::Count { layout } => count_cell(cfg, &cell.to_string(), layout),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut md = format!(
            "f32, baseline SIMD tier. Seek = the seek pass alone (every entity reads its target's position through the handle it holds and steers); frame = move + regen. Each figure the median of {} fresh processes [min..max], each process's p50 (at 10M of {FEW_SAMPLES} samples). \"rank\": 1 is the fastest at that count. \"vs control\": seek over the control's, a plain slot-map seek over four `Vec<f32>` columns with uniformly random targets. Counted (cachegrind, seek alone, {} entities against a 1 MiB last level, which they overflow as 1M overflow a 32 MiB one; per entity): instructions, L1d misses, last-level misses. 10M: the `order` experiment.\n\n",
            reps(cfg),
            short(cfg.pick(COUNTED_N, 10_000)),
        );
        for n in counts(cfg) {
            let m = |metric: Metric, layout: &str, threads: &str| {
                median(&processes(mine, metric, layout, n, threads))
            };
            for threads in ["1", "all"] {
                let control = m(Metric::SeekMs, CONTROL, threads);
                let frames: Vec<Option<f64>> = LayoutKind::CPU
                    .iter()
                    .map(|k| m(Metric::FrameMs, k.name(), threads))
                    .collect();
                let seeks: Vec<Option<f64>> = LayoutKind::CPU
                    .iter()
                    .map(|k| m(Metric::SeekMs, k.name(), threads))
                    .collect();
                let (frame_ranks, seek_ranks) = (ranks(&frames), ranks(&seeks));
                let show_rank = |r: Option<usize>| r.map_or("-".into(), |r| r.to_string());
                let mut rows: Vec<Vec<String>> = LayoutKind::CPU
                    .iter()
                    .enumerate()
                    .map(|(i, kind)| {
                        let name = kind.name();
                        vec![
                            format!("`{kind}`"),
                            range(&processes(mine, Metric::FrameMs, name, n, threads)),
                            show_rank(frame_ranks[i]),
                            range(&processes(mine, Metric::SeekMs, name, n, threads)),
                            show_rank(seek_ranks[i]),
                            match (seeks[i], control) {
                                (Some(s), Some(c)) if c > 0.0 => format!("x{:.2}", s / c),
                                _ => "-".into(),
                            },
                            seeks[i].map_or("-".into(), |s| fmt_num(s * 1e6 / n as f64)),
                        ]
                    })
                    .collect();
                rows.sort_by_key(|row| row[4].parse::<usize>().unwrap_or(usize::MAX));
                rows.push(vec![
                    "control (slot map, random targets)".into(),
                    "-".into(),
                    "-".into(),
                    range(&processes(mine, Metric::SeekMs, CONTROL, n, threads)),
                    "-".into(),
                    "x1.00".into(),
                    control.map_or("-".into(), |c| fmt_num(c * 1e6 / n as f64)),
                ]);
                let soa = LayoutKind::CPU.iter().position(|&k| k == LayoutKind::Soa);
                if let (1_000_000, "1", Some(Some(soa)), Some(c)) =
                    (n, threads, soa.map(|i| seeks[i]), control)
                {
                    let ratio = soa / c;
                    md.push_str(&format!(
                        "Target: `soa`'s seek within x{SOA_TARGET} of the control at 1M on one thread: x{ratio:.2} {}.\n\n",
                        if ratio <= SOA_TARGET { "✓" } else { "✗" }
                    ));
                }
                md.push_str(&format!(
                    "**{} entities, {}**, sorted by seek:\n\n{}\n",
                    short(n),
                    if threads == "1" {
                        "one thread"
                    } else {
                        "all cores"
                    },
                    table(
                        &[
                            "layout",
                            "move + regen, ms",
                            "rank",
                            "seek, ms",
                            "rank",
                            "seek vs control",
                            "seek, ns per entity",
                        ],
                        &rows
                    )
                ));
            }
        }
        let counted: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|&kind| {
                Some(vec![
                    format!("`{kind}`"),
                    fmt_num(one(mine, Metric::Instructions, kind)?),
                    fmt_num(one(mine, Metric::L1dMisses, kind)?),
                    fmt_num(one(mine, Metric::LlMisses, kind)?),
                ])
            })
            .collect();
        if !counted.is_empty() {
            md.push_str(&format!(
                "**Counted** (cachegrind, seek alone, {} entities, per entity per frame):\n\n{}",
                short(cfg.pick(COUNTED_N, 10_000)),
                table(
                    &["layout", "instructions", "L1d misses", "last-level misses"],
                    &counted
                )
            ));
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_put_the_fastest_first_and_skip_the_missing() {
        assert_eq!(
            ranks(&[Some(3.0), None, Some(1.0), Some(2.0)]),
            vec![Some(3), None, Some(1), Some(2)]
        );
    }

    #[test]
    fn the_control_seeks_every_entity() {
        let stats = control(
            1_000,
            Threads::One,
            &crate::bench::report::harness::Method::quick(),
        );
        assert!(stats.p50 > 0.0 && stats.samples >= 5);
    }

    #[test]
    fn cells_cover_every_layout_the_control_and_the_counts() {
        let cfg = BenchConfig::new(true);
        let cells: Vec<String> = Seek.cells(&cfg, &[]).iter().map(Seeks::to_string).collect();
        for kind in LayoutKind::CPU {
            assert!(cells.contains(&format!("frame:{kind}:10000:0")), "{kind}");
            assert!(cells.contains(&format!("count:{kind}")), "{kind}");
        }
        assert!(cells.contains(&"control:10000:0".to_string()));
        assert!("frame:gpu:10:0".parse::<Seeks>().is_err());
    }
}

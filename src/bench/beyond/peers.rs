//! Peers: Bevy beside the other ECS libraries (hecs, flecs, shipyard), each in its idiomatic and
//! its tuned form, and our `soa`, on the one workload every layout runs bit for bit alike. Per
//! layout and count (10k, 1M, 10M; f32, the baseline SIMD tier, so every tuned form runs the
//! same kernel):
//!
//! - the frame (move + regen) on one thread and on all cores, each the median of [`REPS`] fresh
//!   processes with its spread;
//! - cachegrind's instructions and L1d misses per entity per frame, at [`COUNTED_N`];
//! - spawning [`SPAWN_N`] entities into an empty world, in entities per second;
//! - churn: 10,000 despawns and 10,000 spawns per frame over 100,000 entities;
//! - resident bytes per entity, a fresh process's growth while it fills [`SPAWN_N`] entities.
//!
//! And the two operations ecs_bench_suite measured that our workload lacks, for the ECS
//! libraries ([`crate::bench::kit::ecs_ops`]):
//! - iterating a fragmented world: [`FRAGMENTED_N`] entities spread over [`ARCHETYPES`]
//!   archetypes by 13 marker components (the `fragmentation` experiment's shape), one `move`
//!   pass of the layout's own form, against the same world in one archetype;
//! - adding and then removing one marker on every one of [`TOGGLED_N`] entities (the `migration`
//!   experiment's shape), per entity.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bench::kit::ecs_ops::{MARKERS, marked};
use crate::bench::kit::frames::frame_stats_on;
use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short, spread};
use crate::bench::studies::counters;
use crate::layout::{Family, LayoutKind};
use crate::memory::{release_to_os, resident_bytes};
use crate::runtime::swarm::Swarm;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::tools::counters::FrameSpec;
use crate::tools::counters::cachegrind::{self, PINNED};
use crate::workload::SEED;
use crate::workload::{Dt, EntityState, SpawnPattern, spawn_range};

pub struct Peers;

pub const NAME: &str = "peers";
/// The ECS libraries' layouts (Bevy's three, the peers' six), and our `soa`, from the table of
/// layouts.
pub fn layouts() -> Vec<LayoutKind> {
    let mut layouts = LayoutKind::ecs_layouts();
    layouts.push(LayoutKind::Soa);
    layouts
}

/// The other libraries' tuned forms, which the Bevy target is read against.
fn tuned_peers() -> Vec<LayoutKind> {
    LayoutKind::ecs_layouts()
        .into_iter()
        .filter(|k| k.is_tuned_form() && k.row().family != Family::Bevy)
        .collect()
}
/// Fresh processes per figure: as many as `seek` takes, whose frames this experiment reads.
const REPS: usize = 2;
/// Where the instructions and misses are counted: past the L2 of today's machines, so the
/// misses are the layout's, and small enough for cachegrind to build in seconds.
const COUNTED_N: usize = 1_000_000;
const SPAWN_N: usize = 1_000_000;
/// The fragmented world's entities and archetypes (the `fragmentation` experiment's).
const FRAGMENTED_N: usize = 500_000;
const ARCHETYPES: usize = 4096;
/// Entities whose marker is added and removed.
const TOGGLED_N: usize = 100_000;
/// The churn's base and per-frame share (the `churn` experiment's).
const CHURN: (usize, usize) = (100_000, 10_000);

/// 10M is the `order` experiment's (seek and the frame beside it, one process per layout).
fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![10_000, 1_000_000], vec![10_000]))
}

/// The frame records of a run: this experiment's, and the `seek` experiment's, which measures
/// the same frame (f32, baseline tier, one thread and all cores, a fresh process each) for every
/// CPU layout; where it ran first, this experiment runs no frame cell of its own for it.
fn frames(all: &[Record]) -> Vec<Record> {
    all.iter().filter(|r| is_frame(r)).cloned().collect()
}

fn is_frame(r: &Record) -> bool {
    r.metric == Metric::FrameMs
        && (r.experiment == NAME || r.experiment == crate::bench::beyond::seek::NAME)
}

/// The instruction counts of a run: the `counters` experiment's simulated ones at
/// [`COUNTED_N`] (the same frame, the same geometry), or this experiment's own where it did not
/// run first.
fn counted(all: &[Record], kind: LayoutKind, n: usize) -> Option<(f64, Option<f64>)> {
    let query = Query::metric(Metric::Instructions)
        .layout(kind.name())
        .n(n as u64);
    let ours = all
        .iter()
        .find(|r| r.experiment == NAME && query.matches(r))
        .map(|r| {
            let l1d = r
                .param
                .strip_prefix("l1d_misses=")
                .and_then(|v| v.parse().ok());
            (r.p50, l1d)
        });
    ours.or_else(|| {
        let run = counters::per_entity(all, kind.name(), n as u64, counters::SIMULATED)?;
        Some((run.instructions, Some(run.l1d_misses)))
    })
}

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 1)
}

/// What one process does to one layout, beside its frame and its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    Spawn,
    Churn,
    Memory,
    Toggle,
}

impl Operation {
    const ALL: [Operation; 4] = [
        Operation::Spawn,
        Operation::Churn,
        Operation::Memory,
        Operation::Toggle,
    ];

    fn name(self) -> &'static str {
        match self {
            Operation::Spawn => "spawn",
            Operation::Churn => "churn",
            Operation::Memory => "memory",
            Operation::Toggle => "toggle",
        }
    }
}

/// A cell. Its layout is one of [`layouts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Task {
    /// The frame at `n` on `threads`, in fresh process `rep`: `frame:<layout>:<n>:<1|all>:<rep>`.
    Frame {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        n: usize,
        #[serde(with = "by_name")]
        threads: Threads,
        rep: usize,
    },
    /// The frame counted under cachegrind: `count:<layout>`.
    Count {
        #[serde(with = "by_name")]
        layout: LayoutKind,
    },
    /// `spawn|churn|memory|toggle:<layout>:<rep>`.
    Operation {
        operation: Operation,
        #[serde(with = "by_name")]
        layout: LayoutKind,
        rep: usize,
    },
    /// A `move` over a world of 1 to 8192 archetypes: `fragmented:<layout>:<archetypes>:<rep>`.
    Fragmented {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        archetypes: usize,
        rep: usize,
    },
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Task::Frame {
                layout,
                n,
                threads,
                rep,
            } => write!(f, "frame:{layout}:{n}:{threads}:{rep}"),
            Task::Count { layout } => write!(f, "count:{layout}"),
            Task::Operation {
                operation,
                layout,
                rep,
            } => write!(f, "{}:{layout}:{rep}", operation.name()),
            Task::Fragmented {
                layout,
                archetypes,
                rep,
            } => write!(f, "fragmented:{layout}:{archetypes}:{rep}"),
        }
    }
}

impl FromStr for Task {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = "frame:<layout>:<n>:<1|all>:<rep>, fragmented:<layout>:<archetypes>:<rep>, count:<layout> or spawn|churn|memory|toggle:<layout>:<rep>, for a layout of peers";
        read_cell(text, expected, |text| {
            let layout = |name: &str| {
                name.parse::<LayoutKind>()
                    .ok()
                    .filter(|k| layouts().contains(k))
            };
            if let Some([kind, n, threads, rep]) = holes(text, "frame:{}:{}:{}:{}") {
                return Some(Task::Frame {
                    layout: layout(kind)?,
                    n: n.parse().ok()?,
                    threads: Threads::BOTH.into_iter().find(|t| t.name() == threads)?,
                    rep: rep.parse().ok()?,
                });
            }
            if let Some([kind, archetypes, rep]) = holes(text, "fragmented:{}:{}:{}") {
                return Some(Task::Fragmented {
                    layout: layout(kind)?,
                    archetypes: archetypes
                        .parse()
                        .ok()
                        .filter(|a| (1..=1 << MARKERS).contains(a))?,
                    rep: rep.parse().ok()?,
                });
            }
            if let Some([kind]) = holes(text, "count:{}") {
                return Some(Task::Count {
                    layout: layout(kind)?,
                });
            }
            let [what, kind, rep] = holes(text, "{}:{}:{}")?;
            Some(Task::Operation {
                operation: Operation::ALL.into_iter().find(|o| o.name() == what)?,
                layout: layout(kind)?,
                rep: rep.parse().ok()?,
            })
        })
    }
}

fn frame_cell(
    cfg: &BenchConfig,
    kind: LayoutKind,
    n: usize,
    threads: Threads,
    rep: usize,
) -> Result<Vec<Record>, BenchError> {
    let stats = frame_stats_on::<f32>(kind, n, threads, SimdTier::Baseline, &cfg.method)?;
    Ok(vec![
        Record::new(NAME, kind.name(), "f32", n)
            .threads(threads)
            .in_process(rep)
            .with(Metric::FrameMs, "ms", stats),
    ])
}

fn count_cell(cfg: &BenchConfig, cell: &str, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(COUNTED_N, 10_000);
    let exe = crate::bench::report::child::this_binary(NAME, cell)?;
    let rec = Record::new(NAME, kind.name(), "f32", n);
    Ok(vec![
        match cachegrind::count(&exe, &FrameSpec::for_count(kind, n), &PINNED) {
            Ok(sim) => rec
                .clone()
                .value(
                    Metric::Instructions,
                    "per entity",
                    sim.per_entity.instructions,
                )
                .param(format!("l1d_misses={}", sim.per_entity.l1d_misses)),
            Err(reason) => rec.param(reason).value(Metric::Unavailable, "cells", 1.0),
        },
    ])
}

/// The population every spawn and memory cell pushes: the bench seed's first `n` entities.
fn seeded(n: usize) -> (Vec<u64>, Vec<EntityState<f32>>) {
    let mut states = Vec::with_capacity(n);
    spawn_range(SpawnPattern::default(), SEED, 0, n, &mut states);
    ((0..n as u64).collect(), states)
}

/// Spawns `n` entities into a fresh layout three times; the median rate, in entities per second.
fn spawn_cell(cfg: &BenchConfig, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(SPAWN_N, 100_000);
    let (ids, states) = seeded(n);
    let mut rates = Vec::new();
    for _ in 0..3 {
        let mut layout = kind.create_cpu::<f32>().expect("the peers are CPU layouts");
        let t = Instant::now();
        layout.try_reserve(n).map_err(|e| BenchError::Worker {
            experiment: NAME.into(),
            cell: format!("spawn:{kind}"),
            reason: format!("{e:?}"),
        })?;
        layout.push(&ids, &states);
        rates.push(n as f64 / t.elapsed().as_secs_f64());
        drop(layout);
        release_to_os();
    }
    let rate = median(&rates).unwrap_or(0.0);
    Ok(vec![Record::new(NAME, kind.name(), "f32", n).value(
        Metric::SpawnPerS,
        "entities/s",
        rate,
    )])
}

fn churn_cell(cfg: &BenchConfig, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let (base, k) = cfg.pick(CHURN, (20_000, 2_000));
    let mut swarm = Swarm::<f32>::with_count(kind, SEED, base)?;
    let mut failed = None;
    let stats = measure(&cfg.method, || {
        if let Err(e) = swarm.churn(k) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    Ok(vec![
        Record::new(NAME, kind.name(), "f32", base)
            .param(format!("k={k}"))
            .with(Metric::ChurnMs, "ms", stats),
    ])
}

/// A fresh process's resident growth while one layout takes `n` entities, per entity: what the
/// library really holds (slack, indices, bookkeeping), not what its design says it should.
fn memory_cell(cfg: &BenchConfig, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(SPAWN_N, 100_000);
    let (ids, states) = seeded(n);
    let before = resident_bytes();
    let mut layout = kind.create_cpu::<f32>().expect("the peers are CPU layouts");
    layout.push(&ids, &states);
    let after = resident_bytes();
    std::hint::black_box(&mut layout);
    // No record where the OS did not say: the table shows the cell as missing, not as 0 B.
    let (Some(before), Some(after)) = (before, after) else {
        return Ok(Vec::new());
    };
    let per_entity = after.saturating_sub(before) as f64 / n as f64;
    Ok(vec![Record::new(NAME, kind.name(), "f32", n).value(
        Metric::ResidentBytes,
        "B/entity",
        per_entity,
    )])
}

/// One `move` pass of the layout's own form over [`FRAGMENTED_N`] entities in `archetypes`
/// archetypes, ns per entity.
fn fragmented_cell(
    cfg: &BenchConfig,
    kind: LayoutKind,
    archetypes: usize,
) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(FRAGMENTED_N, 50_000);
    let Some(mut world) = marked(kind) else {
        return Ok(Vec::new());
    };
    fill_seeded(world.layout(), n);
    for i in 0..n {
        let archetype = i % archetypes;
        for bit in (0..MARKERS).filter(|b| archetype & (1 << b) != 0) {
            world.mark(i, bit);
        }
    }
    let layout = world.layout();
    let dt = Dt::default().as_scalar::<f32>();
    let stats = measure(&cfg.method, || layout.step_move(dt, Threads::One));
    Ok(vec![
        Record::new(NAME, kind.name(), "f32", n)
            .param(format!("archetypes={archetypes}"))
            .with(Metric::FragmentedNs, "ns", stats.scaled(1e6 / n as f64)),
    ])
}

/// Adds one marker to every one of [`TOGGLED_N`] entities, then removes it from every one, three
/// times; the median ns per add and per remove.
fn toggle_cell(cfg: &BenchConfig, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let n = cfg.pick(TOGGLED_N, 20_000);
    let Some(mut world) = marked(kind) else {
        return Ok(Vec::new());
    };
    fill_seeded(world.layout(), n);
    let (mut adds, mut removes) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let t = Instant::now();
        (0..n).for_each(|i| world.mark(i, 0));
        adds.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
        let t = Instant::now();
        (0..n).for_each(|i| world.unmark(i, 0));
        removes.push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    let rec = Record::new(NAME, kind.name(), "f32", n);
    Ok(vec![
        rec.clone()
            .value(Metric::AddNs, "ns", median(&adds).unwrap_or(0.0)),
        rec.value(Metric::RemoveNs, "ns", median(&removes).unwrap_or(0.0)),
    ])
}

/// Bevy's tuned ECS over the fastest other library's tuned form (by the median), one thread, at
/// `n`: the ratio of each process number's two frames. The peers target reads it (x1.10).
pub fn bevy_vs_fastest_peer(records: &[Record], n: usize) -> Option<(LayoutKind, Vec<f64>)> {
    let of = |kind: LayoutKind| -> Vec<(String, f64)> {
        records
            .iter()
            .filter(|r| {
                is_frame(r) && r.layout == kind.name() && r.n == n as u64 && r.threads == "1"
            })
            .map(|r| (r.param.clone(), r.p50))
            .collect()
    };
    let (peer, peer_frames) = tuned_peers()
        .into_iter()
        .map(|kind| (kind, of(kind)))
        .filter_map(|(kind, frames)| {
            let m = median(&frames.iter().map(|f| f.1).collect::<Vec<_>>())?;
            Some((kind, frames, m))
        })
        .min_by(|a, b| a.2.total_cmp(&b.2))
        .map(|(kind, frames, _)| (kind, frames))?;
    let ratios: Vec<f64> = of(LayoutKind::EcsContiguous)
        .iter()
        .filter_map(|(rep, bevy)| {
            let (_, p) = peer_frames.iter().find(|(r, _)| r == rep)?;
            Some(bevy / p)
        })
        .collect();
    (!ratios.is_empty()).then_some((peer, ratios))
}

/// `records` as measured in fresh process `rep`.
fn with_rep(records: Vec<Record>, rep: usize) -> Vec<Record> {
    records.into_iter().map(|r| r.in_process(rep)).collect()
}

/// The median over processes of one operation's figure (`wanted`: its knob,
/// [`Record::knob`]).
fn ops_median(mine: &[Record], metric: Metric, kind: LayoutKind, wanted: &str) -> Option<f64> {
    let values: Vec<f64> = mine
        .iter()
        .filter(|r| r.metric == metric && r.layout == kind.name() && r.knob() == wanted)
        .map(|r| r.p50)
        .collect();
    median(&values)
}

/// The per-process p50s of one frame figure.
fn processes(mine: &[Record], kind: LayoutKind, n: usize, threads: &str) -> Vec<f64> {
    Query::metric(Metric::FrameMs)
        .layout(kind.name())
        .n(n as u64)
        .threads(threads)
        .per_process(mine)
}

/// The median over processes of a figure with one knob per layout (every operation but the
/// fragmented pass); the one count for the instructions.
fn value(mine: &[Record], metric: Metric, kind: LayoutKind) -> Option<f64> {
    let values: Vec<f64> = mine
        .iter()
        .filter(|r| r.metric == metric && r.layout == kind.name())
        .map(|r| r.p50)
        .collect();
    median(&values)
}

fn fragmented(mine: &[Record], kind: LayoutKind, archetypes: usize) -> Option<f64> {
    ops_median(
        mine,
        Metric::FragmentedNs,
        kind,
        &format!("archetypes={archetypes}"),
    )
}

impl Experiment for Peers {
    type Cell = Task;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: hecs, flecs and shipyard beside Bevy"
    }

    fn title(&self) -> &'static str {
        "Peers: Bevy beside hecs, flecs and shipyard, idiomatic and tuned (past the studies)"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<Task> {
        let layouts = cfg.layouts_of(&layouts());
        let framed = frames(prior);
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for rep in 0..reps(cfg) {
                for threads in Threads::BOTH {
                    for &layout in &layouts {
                        let measured = Query::metric(Metric::FrameMs)
                            .layout(layout.name())
                            .n(n as u64)
                            .threads(threads.name())
                            .per_process(&framed)
                            .len();
                        if measured <= rep {
                            cells.push(Task::Frame {
                                layout,
                                n,
                                threads,
                                rep,
                            });
                        }
                    }
                }
            }
        }
        let n = cfg.pick(COUNTED_N, 10_000);
        cells.extend(
            layouts
                .iter()
                .filter(|&&kind| counted(prior, kind, n).is_none())
                .map(|&layout| Task::Count { layout }),
        );
        for rep in 0..reps(cfg) {
            for operation in [Operation::Spawn, Operation::Churn, Operation::Memory] {
                for &layout in &layouts {
                    cells.push(Task::Operation {
                        operation,
                        layout,
                        rep,
                    });
                }
            }
            for &layout in layouts.iter().filter(|&&k| marked(k).is_some()) {
                for archetypes in [1, ARCHETYPES] {
                    cells.push(Task::Fragmented {
                        layout,
                        archetypes,
                        rep,
                    });
                }
                cells.push(Task::Operation {
                    operation: Operation::Toggle,
                    layout,
                    rep,
                });
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Task) -> Result<Vec<Record>, BenchError> {
        match *cell {
            Task::Frame {
                layout,
                n,
                threads,
                rep,
            } => frame_cell(cfg, layout, n, threads, rep),
            Task::Count { layout } => count_cell(cfg, &cell.to_string(), layout),
            Task::Operation {
                operation,
                layout,
                rep,
            } => {
                let records = match operation {
                    Operation::Spawn => spawn_cell(cfg, layout),
                    Operation::Churn => churn_cell(cfg, layout),
                    Operation::Memory => memory_cell(cfg, layout),
                    Operation::Toggle => toggle_cell(cfg, layout),
                }?;
                Ok(with_rep(records, rep))
            }
            Task::Fragmented {
                layout,
                archetypes,
                rep,
            } => Ok(with_rep(fragmented_cell(cfg, layout, archetypes)?, rep)),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        let framed = frames(all);
        let (base, k) = cfg.pick(CHURN, (20_000, 2_000));
        let mut md = format!(
            "f32, baseline SIMD tier (every tuned form runs the same kernel); frame = move + regen, p50 ms per process, the median of {} processes [min..max]; \"vs best\" divides by the fastest layout's median at that count and thread setting. Instructions and L1d misses: cachegrind per entity per frame at {} entities. Spawn: {} entities into an empty world, median of 3. Churn: {k} despawns + {k} spawns per frame over {base}. Resident: a fresh process's growth while it fills {} entities. Fragmented: one `move` pass of the form's own iteration over {} entities in 1 and in {ARCHETYPES} archetypes (13 marker components). Add / remove: one marker component on each of {} entities, then off each, median of 3.\n\n",
            reps(cfg),
            short(cfg.pick(COUNTED_N, 10_000)),
            short(cfg.pick(SPAWN_N, 100_000)),
            short(cfg.pick(SPAWN_N, 100_000)),
            short(cfg.pick(FRAGMENTED_N, 50_000)),
            short(cfg.pick(TOGGLED_N, 20_000)),
        );
        for n in counts(cfg) {
            let best = |threads: &str| {
                layouts()
                    .into_iter()
                    .filter_map(|kind| median(&processes(&framed, kind, n, threads)))
                    .fold(f64::INFINITY, f64::min)
            };
            let (best_one, best_all) = (best("1"), best("all"));
            let rows: Vec<Vec<String>> = layouts()
                .into_iter()
                .map(|kind| {
                    let one = processes(&framed, kind, n, "1");
                    let all = processes(&framed, kind, n, "all");
                    let vs = |values: &[f64], best: f64| {
                        median(values).map_or("-".into(), |m| format!("x{:.2}", m / best))
                    };
                    vec![
                        format!("`{kind}`"),
                        range(&one),
                        vs(&one, best_one),
                        range(&all),
                        vs(&all, best_all),
                    ]
                })
                .collect();
            md.push_str(&format!("**{} entities**, the frame:\n\n", short(n)));
            md.push_str(&table(
                &[
                    "layout",
                    "1 thread, ms",
                    "vs best",
                    "all cores, ms",
                    "vs best",
                ],
                &rows,
            ));
            md.push('\n');
        }
        let rows: Vec<Vec<String>> = layouts()
            .into_iter()
            .map(|kind| {
                let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".into(), f);
                let counts = counted(all, kind, cfg.pick(COUNTED_N, 10_000));
                vec![
                    format!("`{kind}`"),
                    kind.label().to_string(),
                    opt(counts.map(|c| c.0), |v| format!("{v:.1}")),
                    opt(counts.and_then(|c| c.1), |v| format!("{v:.3}")),
                    opt(value(mine, Metric::SpawnPerS, kind), |v| {
                        format!("{:.1} M/s", v / 1e6)
                    }),
                    opt(value(mine, Metric::ChurnMs, kind), fmt_num),
                    opt(value(mine, Metric::ResidentBytes, kind), |v| {
                        format!("{v:.0}")
                    }),
                    opt(fragmented(mine, kind, 1), fmt_num),
                    match (
                        fragmented(mine, kind, ARCHETYPES),
                        fragmented(mine, kind, 1),
                    ) {
                        (Some(v), Some(one)) => {
                            format!("{} ({:+.0}%)", fmt_num(v), (v / one - 1.0) * 100.0)
                        }
                        _ => "-".into(),
                    },
                    opt(value(mine, Metric::AddNs, kind), fmt_num),
                    opt(value(mine, Metric::RemoveNs, kind), fmt_num),
                ]
            })
            .collect();
        md.push_str(&format!(
            "**The operations** (instructions: one cachegrind count; the others the median of {} processes):\n\n",
            reps(cfg)
        ));
        md.push_str(&table(
            &[
                "layout",
                "what it is",
                "instructions / entity",
                "L1d misses / entity",
                "spawn",
                "churn, ms per frame",
                "resident B / entity",
                "move, 1 archetype, ns / entity",
                &format!("move, {ARCHETYPES} archetypes (vs 1)"),
                "add a component, ns",
                "remove it, ns",
            ],
            &rows,
        ));
        md.push('\n');
        for n in counts(cfg).into_iter().filter(|&n| n >= 1_000_000) {
            if let Some((peer, ratios)) = bevy_vs_fastest_peer(mine, n) {
                md.push_str(&format!(
                    "- Target at {}: Bevy's tuned ECS within x1.10 of the fastest library's tuned form (`{peer}`), one thread, per process: x{}.\n",
                    short(n),
                    spread(&ratios, |m| m <= 1.10),
                ));
            }
        }
        for kind in layouts() {
            if let Some(how) = kind.parallel_note() {
                md.push_str(&format!("- `{kind}` on all cores: {how}.\n"));
            }
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_every_layout_both_thread_settings_and_every_operation() {
        let cfg = BenchConfig::new(true);
        let cells: Vec<String> = Peers.cells(&cfg, &[]).iter().map(Task::to_string).collect();
        // soa has no markers: no fragmented or toggle cells.
        assert_eq!(
            cells.len(),
            layouts().len() * 2 + 4 * layouts().len() + 3 * (layouts().len() - 1)
        );
        assert!(!cells.iter().any(|c| c.starts_with("toggle:soa")));
        assert!(cells.contains(&"fragmented:hecs:4096:0".to_string()));
        for kind in layouts() {
            assert!(cells.contains(&format!("frame:{kind}:10000:all:0")));
            assert!(cells.contains(&format!("spawn:{kind}:0")));
        }
    }

    #[test]
    fn a_bad_cell_names_what_is_accepted() {
        for bad in [
            "frame:aos:10:1:0",
            "spawn:nothing:0",
            "frame:soa:x:1:0",
            "walk:soa",
            "fragmented:hecs:0:0",
            "fragmented:hecs:9000:0",
            "toggle:hecs",
        ] {
            let err = bad.parse::<Task>().unwrap_err().to_string();
            assert!(err.contains("spawn|churn|memory|toggle"), "{bad}: {err}");
        }
    }
}

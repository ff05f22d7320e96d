//! Neighbours: the fourth system (past both studies). Each entity reads every entity near it,
//! found through a uniform grid rebuilt every frame ([`crate::neighbours`]), and is pushed away
//! from them. Which entities sit next to each other in storage decides most of its cost, so
//! each layout runs it in id order and sorted by cell, in both forms: the idiomatic pass reads
//! each candidate through the layout, the tuned one copies the positions into the grid's own
//! array in cell order.
//!
//! Cells (one process each, f32, one thread):
//! - `pass:<layout>:<n>`: the neighbour pass alone, by id and then sorted by cell, in both
//!   forms, split into grid build and pass; the candidates tested and the neighbours found.
//!   At 10M, `soa` and each ECS library's tuned layout, in the tuned form.
//! - `target:<rep>`: the target's ratio at 1M, `soa`: the idiomatic pass by id over the tuned
//!   one sorted by cell, in one process, the two interleaved round by round.
//! - `decay:<form>`: `soa` at 1M sorted by cell, then frames of move, regen and avoid: the pass's
//!   cost frame by frame as motion undoes the order, what a re-sort costs, after how many frames
//!   one pays for itself, and the re-sort interval that costs least per frame.
//! - `budget:<layout>`: the count at which a frame of move, regen and avoid (idiomatic, id
//!   order) breaks the budget, for every CPU layout, by log-space bisection.
//! - `count:<layout>:<order>`: cachegrind's instructions, L1d and last-level misses per entity
//!   for the idiomatic pass alone, `soa` and `boxed`, by id and sorted by cell, at the counts
//!   check's population against its 1 MiB last level (as seek's are counted).
//! - `sum` and `curve`: the two choices the system made against what each was chosen over
//!   ([`super::near_choices`]), at the target's count, rounds interleaved: the push summed in
//!   fixed point against a float sum in id order; the cell order along a Morton curve against
//!   a Hilbert one.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::near_choices::{self, Curve};
use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::{Method, Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short};
use crate::bench::studies::crossings::bisect;
use crate::layout::LayoutKind;
use crate::neighbours::AvoidForm;
use crate::runtime::swarm::{Order, Swarm};
use crate::threads::Threads;
use crate::tools::counters::FrameSpec;
use crate::tools::counters::baseline::CHECK_COUNT;
use crate::workload::{BUDGET_MS, Dt, SEED};

pub struct Neighbours;

pub const NAME: &str = "neighbours";
/// The target: at 1M on one thread, `soa`'s tuned pass sorted by cell at least this many times
/// faster than its idiomatic pass in id order.
pub const TARGET_RATIO: f64 = 3.0;
/// Fresh processes for the target's ratio.
const TARGET_REPS: usize = 3;
/// Interleaved rounds per target process.
const ROUNDS: usize = 3;
/// Frames the decay follows after a sort by cell: three seconds of the app at 60 frames a
/// second, enough for a clump to cross many cells, short enough for the run's time.
const DECAY_FRAMES: usize = 180;
/// The frames the decay records, beside the summary it computes over all of them.
const DECAY_SHOWN: [usize; 5] = [0, 10, 30, 60, 179];
/// Samples per process at 1M and up, where one pass takes from a tenth of a second to seconds.
const SAMPLES: usize = 3;
/// The ECS libraries' tuned layouts, measured at 10M beside `soa`.
const TUNED_ECS: [LayoutKind; 4] = [
    LayoutKind::EcsContiguous,
    LayoutKind::HecsTuned,
    LayoutKind::FlecsTuned,
    LayoutKind::ShipyardTuned,
];
/// The layouts counted under cachegrind: the arrays' best, and one box per entity.
const COUNTED: [LayoutKind; 2] = [LayoutKind::Soa, LayoutKind::Boxed];

/// A cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Near {
    /// `pass:<layout>:<n>`.
    Pass {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        n: usize,
    },
    /// `target:<rep>`.
    Target { rep: usize },
    /// `decay:<form>`.
    Decay {
        #[serde(with = "by_form")]
        form: AvoidForm,
    },
    /// `budget:<layout>`.
    Budget {
        #[serde(with = "by_name")]
        layout: LayoutKind,
    },
    /// `sum`.
    Sum,
    /// `curve`.
    Curve,
    /// `count:<layout>:<order>`.
    Count {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        #[serde(with = "by_order")]
        order: Order,
    },
}

/// An order as its name, in a cell's JSON.
mod by_order {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::runtime::swarm::Order;

    pub fn serialize<S: Serializer>(order: &Order, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(order.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Order, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// A form as its name, in a cell's JSON.
mod by_form {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::neighbours::AvoidForm;

    pub fn serialize<S: Serializer>(form: &AvoidForm, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(form.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<AvoidForm, D::Error> {
        let name = String::deserialize(d)?;
        super::form_named(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown form '{name}'")))
    }
}

fn form_named(name: &str) -> Option<AvoidForm> {
    AvoidForm::BOTH.into_iter().find(|f| f.name() == name)
}

impl fmt::Display for Near {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Near::Pass { layout, n } => write!(f, "pass:{layout}:{n}"),
            Near::Target { rep } => write!(f, "target:{rep}"),
            Near::Decay { form } => write!(f, "decay:{form}"),
            Near::Budget { layout } => write!(f, "budget:{layout}"),
            Near::Count { layout, order } => write!(f, "count:{layout}:{order}"),
            Near::Sum => f.write_str("sum"),
            Near::Curve => f.write_str("curve"),
        }
    }
}

impl FromStr for Near {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = "pass:<layout>:<n>, target:<rep>, decay:idiomatic|tuned, budget:<layout>, count:<layout>:<order> (for a CPU layout), sum or curve";
        read_cell(text, expected, |text| {
            match text {
                "sum" => return Some(Near::Sum),
                "curve" => return Some(Near::Curve),
                _ => {}
            }
            let layout = |name: &str| {
                name.parse::<LayoutKind>()
                    .ok()
                    .filter(|k| LayoutKind::CPU.contains(k))
            };
            if let Some([kind, n]) = holes(text, "pass:{}:{}") {
                return Some(Near::Pass {
                    layout: layout(kind)?,
                    n: n.parse().ok()?,
                });
            }
            if let Some([rep]) = holes(text, "target:{}") {
                return Some(Near::Target {
                    rep: rep.parse().ok()?,
                });
            }
            if let Some([form]) = holes(text, "decay:{}") {
                return Some(Near::Decay {
                    form: form_named(form)?,
                });
            }
            if let Some([kind, order]) = holes(text, "count:{}:{}") {
                return Some(Near::Count {
                    layout: layout(kind)?,
                    order: order.parse().ok()?,
                });
            }
            let [kind] = holes(text, "budget:{}")?;
            Some(Near::Budget {
                layout: layout(kind)?,
            })
        })
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![10_000, 100_000, 1_000_000], vec![10_000]))
}

/// The count of the target, the decay and the 10M row (`--quick`: small enough for a test).
fn target_n(cfg: &BenchConfig) -> usize {
    cfg.pick(1_000_000, 20_000)
}

fn big_n(cfg: &BenchConfig) -> usize {
    cfg.pick(10_000_000, 50_000)
}

/// The p50 of [`SAMPLES`] passes at 1M and up, the first of them a sample too (their median
/// drops its one-off costs; a warm-up there costs a pass of seconds); the small counts take the
/// run's method.
fn method_at(cfg: &BenchConfig, n: usize) -> Method {
    if n < 1_000_000 {
        return cfg.method;
    }
    few_passes(cfg)
}

fn few_passes(cfg: &BenchConfig) -> Method {
    Method {
        warmup_passes: 0,
        min_samples: SAMPLES,
        max_samples: SAMPLES,
        ..cfg.method
    }
}

/// Which forms a pass cell measures: both, but at 10M only the tuned one (an idiomatic pass
/// there takes tens of seconds in id order).
fn forms(cfg: &BenchConfig, n: usize) -> Vec<AvoidForm> {
    if n >= big_n(cfg) {
        vec![AvoidForm::Tuned]
    } else {
        AvoidForm::BOTH.to_vec()
    }
}

fn param(order: Order, form: AvoidForm) -> String {
    format!("order={order},form={form}")
}

/// One process: `n` entities of `kind`, the neighbour pass by id and sorted by cell.
fn pass_cell(cfg: &BenchConfig, kind: LayoutKind, n: usize) -> Result<Vec<Record>, BenchError> {
    let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
    let (dt, method) = (Dt::default(), method_at(cfg, n));
    let mut out = Vec::new();
    for order in [Order::Id, Order::Cell] {
        if order != Order::Id {
            swarm.reorder(order)?;
        }
        for form in forms(cfg, n) {
            swarm.set_avoid_form(form);
            let (mut grid, mut pass) = (Vec::new(), Vec::new());
            let stats = measure(&method, || {
                swarm.step_avoid(dt, Threads::One);
                let counts = swarm.neighbour_counts();
                grid.push(ms(counts.grid));
                pass.push(ms(counts.pass));
            });
            let counts = swarm.neighbour_counts();
            let rec = Record::new(NAME, kind.name(), "f32", n)
                .threads(Threads::One)
                .param(param(order, form));
            out.push(rec.clone().with(Metric::AvoidMs, "ms", stats));
            let split = [(Metric::GridMs, &grid), (Metric::PassMs, &pass)];
            for (metric, values) in split {
                if let Some(v) = median(values) {
                    out.push(rec.clone().value(metric, "ms", v));
                }
            }
            let found = [
                (Metric::CandidatesPerEntity, counts.candidates_per_entity()),
                (Metric::NeighboursPerEntity, counts.neighbours_per_entity()),
                (Metric::MostNeighbours, f64::from(counts.most)),
            ];
            for (metric, v) in found {
                out.push(rec.clone().value(metric, "per entity", v));
            }
        }
    }
    Ok(out)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One process: `soa` at the target's count, the idiomatic pass by id and the tuned one sorted
/// by cell, one round of each after the other, [`ROUNDS`] times; each a p50 of a few passes.
fn target_cell(cfg: &BenchConfig, rep: usize) -> Result<Vec<Record>, BenchError> {
    let n = target_n(cfg);
    let dt = Dt::default();
    let mut by_id = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, n)?;
    let mut by_cell = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, n)?;
    by_cell.reorder(Order::Cell)?;
    by_cell.set_avoid_form(AvoidForm::Tuned);
    let method = few_passes(cfg);
    let mut ratios = Vec::new();
    for _ in 0..cfg.pick(ROUNDS, 2) {
        let slow = measure(&method, || by_id.step_avoid(dt, Threads::One));
        let fast = measure(&method, || by_cell.step_avoid(dt, Threads::One));
        ratios.push(slow.p50 / fast.p50);
    }
    let ratio = median(&ratios).unwrap_or_default();
    Ok(vec![
        Record::new(NAME, "soa", "f32", n)
            .threads(Threads::One)
            .param("idiomatic-by-id/tuned-by-cell")
            .in_process(rep)
            .value(Metric::Ratio, "x", ratio),
    ])
}

/// What the decay found, from each frame's pass time after a sort and the sort's own time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decay {
    /// The first frame at which the time lost since the sort, over the first frames' pass,
    /// exceeds what the sort cost: a re-sort then would have paid for itself.
    pub pays_after: Option<usize>,
    /// The re-sort interval whose cost per frame (the sort's, shared out, and every pass)
    /// is least, and that cost.
    pub best_every: usize,
    pub best_ms_per_frame: f64,
}

impl Decay {
    /// From `passes` (ms, frame by frame after a sort) and `sort_ms`.
    pub fn of(passes: &[f64], sort_ms: f64) -> Option<Self> {
        // The first frames' median, not the first frame alone: one frame is noisy.
        let first = median(&passes[..passes.len().min(5)])?;
        let (mut lost, mut pays_after) = (0.0, None);
        let (mut sum, mut best) = (0.0, (passes.len(), f64::INFINITY));
        for (frame, &pass) in passes.iter().enumerate() {
            lost += pass - first;
            if pays_after.is_none() && lost > sort_ms {
                pays_after = Some(frame + 1);
            }
            sum += pass;
            let per_frame = (sort_ms + sum) / (frame + 1) as f64;
            if per_frame < best.1 {
                best = (frame + 1, per_frame);
            }
        }
        Some(Self {
            pays_after,
            best_every: best.0,
            best_ms_per_frame: best.1,
        })
    }
}

/// One process: `soa` at the target's count in `form`: the sort by cell timed, then
/// [`DECAY_FRAMES`] frames of avoid, move and regen, each frame's pass timed.
fn decay_cell(cfg: &BenchConfig, form: AvoidForm) -> Result<Vec<Record>, BenchError> {
    let n = target_n(cfg);
    let dt = Dt::default();
    let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, n)?;
    swarm.set_avoid_form(form);
    let mut id_order = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        swarm.step_avoid(dt, Threads::One);
        id_order.push(ms(t.elapsed()));
    }
    let t = Instant::now();
    swarm.reorder(Order::Cell)?;
    let sort_ms = ms(t.elapsed());
    let frames = cfg.pick(DECAY_FRAMES, 60);
    let mut passes = Vec::with_capacity(frames);
    for _ in 0..frames {
        let t = Instant::now();
        swarm.step_avoid(dt, Threads::One);
        passes.push(ms(t.elapsed()));
        swarm.step(dt, Threads::One);
    }
    let rec = Record::new(NAME, "soa", "f32", n)
        .threads(Threads::One)
        .param(format!("decay,form={form}"));
    let mut out = vec![
        rec.clone().value(Metric::SortMs, "ms", sort_ms),
        rec.clone()
            .param(format!("decay,form={form},order=id"))
            .value(Metric::AvoidMs, "ms", median(&id_order).unwrap_or_default()),
    ];
    for frame in DECAY_SHOWN.into_iter().filter(|&f| f < frames) {
        // Each shown frame as the median of the frames around it: one frame is noisy.
        let around = &passes[frame.saturating_sub(2)..(frame + 3).min(frames)];
        out.push(
            rec.clone()
                .param(format!("decay,form={form},frame={frame}"))
                .value(Metric::AvoidMs, "ms", median(around).unwrap_or_default()),
        );
    }
    if let Some(decay) = Decay::of(&passes, sort_ms) {
        if let Some(frames) = decay.pays_after {
            out.push(
                rec.clone()
                    .value(Metric::PaysAfterFrames, "frames", frames as f64),
            );
        }
        out.push(
            rec.clone()
                .value(Metric::BestResortEvery, "frames", decay.best_every as f64),
        );
        out.push(rec.value(Metric::AvoidMs, "ms", decay.best_ms_per_frame));
    }
    Ok(out)
}

/// One process: where a frame of `kind` with the neighbours on breaks the budget.
fn budget_cell(cfg: &BenchConfig, kind: LayoutKind) -> Result<Vec<Record>, BenchError> {
    let method = Method {
        warmup_passes: 1,
        min_samples: 5,
        max_samples: 5,
        ..cfg.method
    };
    let dt = Dt::default();
    let (lo, hi) = cfg.pick((1_000, 8_000_000), (1_000, 20_000));
    let (lo, hi) = bisect(lo, hi, cfg.pick(7, 2), |n| {
        let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
        let frame: Stats = measure(&method, || {
            swarm.step_avoid(dt, Threads::One);
            swarm.step(dt, Threads::One);
        });
        Ok(frame.p50 - BUDGET_MS)
    })?;
    Ok(vec![
        Record::new(NAME, kind.name(), "f32", hi)
            .threads(Threads::One)
            .param(format!("bracket={lo}..{hi}"))
            .value(Metric::BreaksBudgetAt, "entities", hi as f64),
    ])
}

/// The target's population's positions, in logical order.
fn positions(cfg: &BenchConfig) -> Result<Vec<[f32; 2]>, BenchError> {
    let swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, target_n(cfg))?;
    Ok(swarm.export().states.iter().map(|s| [s.x, s.y]).collect())
}

/// `a` and `b` measured one after the other, [`ROUNDS`] times: each one's median of its rounds'
/// p50s, and the median of the rounds' ratios `b / a`.
fn interleaved(cfg: &BenchConfig, mut a: impl FnMut(), mut b: impl FnMut()) -> [f64; 3] {
    let method = few_passes(cfg);
    let (mut first, mut second, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..cfg.pick(ROUNDS, 2) {
        let x = measure(&method, &mut a).p50;
        let y = measure(&method, &mut b).p50;
        first.push(x);
        second.push(y);
        ratios.push(y / x);
    }
    [&first, &second, &ratios].map(|v| median(v).unwrap_or_default())
}

/// One process: the pushes over one grid (sorted by cell), summed in fixed point and in id order.
fn sum_cell(cfg: &BenchConfig) -> Result<Vec<Record>, BenchError> {
    let (stored, ids) = near_choices::along(Curve::Morton, &positions(cfg)?);
    let mut near = crate::neighbours::Neighbours::<f32>::default();
    near_choices::pass(&mut near, &stored);
    let Some(grid) = near.grid() else {
        return Ok(Vec::new());
    };
    let (mut fixed, mut floats, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    let [fixed_ms, id_order_ms, ratio] = interleaved(
        cfg,
        || near_choices::fixed_point_sums(grid, &stored, &mut fixed),
        || near_choices::id_order_sums(grid, &stored, &ids, &mut scratch, &mut floats),
    );
    let rec = Record::new(NAME, "soa", "f32", stored.len()).threads(Threads::One);
    Ok(vec![
        rec.clone()
            .param("sum=fixed-point")
            .value(Metric::PassMs, "ms", fixed_ms),
        rec.clone()
            .param("sum=id-order")
            .value(Metric::PassMs, "ms", id_order_ms),
        rec.param("sum=id-order/fixed-point")
            .value(Metric::Ratio, "x", ratio),
    ])
}

/// One process: the idiomatic pass (grid and pairs) over the storage sorted along each curve.
fn curve_cell(cfg: &BenchConfig) -> Result<Vec<Record>, BenchError> {
    let all = positions(cfg)?;
    let [(morton, _), (hilbert, _)] = Curve::BOTH.map(|c| near_choices::along(c, &all));
    let (mut a, mut b) = (
        crate::neighbours::Neighbours::<f32>::default(),
        crate::neighbours::Neighbours::<f32>::default(),
    );
    let [morton_ms, hilbert_ms, ratio] = interleaved(
        cfg,
        || {
            std::hint::black_box(near_choices::pass(&mut a, &morton));
        },
        || {
            std::hint::black_box(near_choices::pass(&mut b, &hilbert));
        },
    );
    let rec = Record::new(NAME, "soa", "f32", all.len()).threads(Threads::One);
    let [m, h] = Curve::BOTH.map(Curve::name);
    Ok(vec![
        rec.clone()
            .param(format!("curve={m}"))
            .value(Metric::AvoidMs, "ms", morton_ms),
        rec.clone()
            .param(format!("curve={h}"))
            .value(Metric::AvoidMs, "ms", hilbert_ms),
        rec.param(format!("curve={h}/{m}"))
            .value(Metric::Ratio, "x", ratio),
    ])
}

/// The two choices against what each was chosen over.
fn choices_table(mine: &[Record], cfg: &BenchConfig) -> String {
    let n = target_n(cfg);
    let get = |metric, p: &str| avoid(mine, metric, LayoutKind::Soa, n, p);
    let mut rows = Vec::new();
    if let (Some(a), Some(b), Some(r)) = (
        get(Metric::PassMs, "sum=fixed-point"),
        get(Metric::PassMs, "sum=id-order"),
        get(Metric::Ratio, "sum=id-order/fixed-point"),
    ) {
        rows.push(vec![
            "the push's sum (the pairs over one grid)".into(),
            format!("fixed point: {}", fmt_num(a)),
            format!("floats in id order: {}", fmt_num(b)),
            format!("x{}", fmt_num(r)),
        ]);
    }
    if let (Some(a), Some(b), Some(r)) = (
        get(Metric::AvoidMs, "curve=morton"),
        get(Metric::AvoidMs, "curve=hilbert"),
        get(Metric::Ratio, "curve=hilbert/morton"),
    ) {
        rows.push(vec![
            "the cell order (idiomatic pass, grid and pairs)".into(),
            format!("Morton: {}", fmt_num(a)),
            format!("Hilbert: {}", fmt_num(b)),
            format!("x{}", fmt_num(r)),
        ]);
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "**Two choices, against what each was chosen over** (`soa`'s population at {}, one thread, ms per pass, the median of {} interleaved rounds):\n\n{}\n",
        short(n),
        cfg.pick(ROUNDS, 2),
        table(&["choice", "chosen", "the other", "other ÷ chosen"], &rows)
    )
}

/// The population counted under cachegrind: the counts check's (`--quick`: small enough for a
/// test).
fn counted_n(cfg: &BenchConfig) -> usize {
    cfg.pick(CHECK_COUNT, 10_000)
}

/// One cell: `kind`'s idiomatic pass alone in `order`, counted under cachegrind.
fn count_cell(
    cfg: &BenchConfig,
    kind: LayoutKind,
    order: Order,
) -> Result<Vec<Record>, BenchError> {
    let n = counted_n(cfg);
    let cell = Near::Count {
        layout: kind,
        order,
    }
    .to_string();
    let exe = crate::bench::report::child::this_binary(NAME, &cell)?;
    let spec = FrameSpec::avoid(kind, n, order, AvoidForm::Idiomatic);
    let rec = Record::new(NAME, kind.name(), "f32", n);
    let p = param(order, AvoidForm::Idiomatic);
    Ok(crate::bench::report::child::miss_records(
        &exe, &spec, rec, &p,
    ))
}

impl Experiment for Neighbours {
    type Cell = Near;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: entities that read the entities near them"
    }

    fn title(&self) -> &'static str {
        "Neighbours: a grid pass per frame, by id and sorted by cell"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Near> {
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for layout in cfg.layouts_of(&LayoutKind::CPU) {
                cells.push(Near::Pass { layout, n });
            }
        }
        // The 10M row is the run's own; `--counts` asks for those counts alone.
        let big: Vec<LayoutKind> = [LayoutKind::Soa].into_iter().chain(TUNED_ECS).collect();
        for layout in cfg
            .layouts_of(&big)
            .into_iter()
            .filter(|_| cfg.counts.is_none())
        {
            cells.push(Near::Pass {
                layout,
                n: big_n(cfg),
            });
        }
        cells.extend((0..cfg.pick(TARGET_REPS, 1)).map(|rep| Near::Target { rep }));
        cells.extend(AvoidForm::BOTH.map(|form| Near::Decay { form }));
        cells.extend([Near::Sum, Near::Curve]);
        for layout in cfg.layouts_of(&LayoutKind::CPU) {
            cells.push(Near::Budget { layout });
        }
        for layout in cfg.layouts_of(&COUNTED) {
            for order in [Order::Id, Order::Cell] {
                cells.push(Near::Count { layout, order });
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Near) -> Result<Vec<Record>, BenchError> {
        match *cell {
            Near::Pass { layout, n } => pass_cell(cfg, layout, n),
            Near::Target { rep } => target_cell(cfg, rep),
            Near::Decay { form } => decay_cell(cfg, form),
            Near::Budget { layout } => budget_cell(cfg, layout),
            Near::Count { layout, order } => count_cell(cfg, layout, order),
            Near::Sum => sum_cell(cfg),
            Near::Curve => curve_cell(cfg),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut md = String::new();
        let ratios = Query::metric(Metric::Ratio).layout("soa").per_process(mine);
        if let Some(ratio) = median(&ratios) {
            md.push_str(&format!(
                "Target: at {} on one thread, `soa`'s tuned pass sorted by cell at least x{TARGET_RATIO:.0} faster than its idiomatic pass by id: x{} over {} processes, rounds interleaved {}.\n\n",
                short(target_n(cfg)),
                range(&ratios),
                ratios.len(),
                if ratio >= TARGET_RATIO { "✓" } else { "✗" }
            ));
        }
        for n in counts(cfg) {
            md.push_str(&pass_table(mine, n));
        }
        md.push_str(&pass_table(mine, big_n(cfg)));
        md.push_str(&found_table(mine, cfg));
        md.push_str(&decay_table(mine, cfg));
        md.push_str(&choices_table(mine, cfg));
        md.push_str(&budget_table(mine));
        md.push_str(&counted_table(mine, cfg));
        md
    }
}

fn avoid(mine: &[Record], metric: Metric, kind: LayoutKind, n: usize, p: &str) -> Option<f64> {
    Query::metric(metric)
        .layout(kind.name())
        .n(n as u64)
        .param(p)
        .find(mine)
        .map(|r| r.p50)
}

/// Per layout at `n`: the pass in each order and form, the tuned form's grid share, and the
/// idiomatic pass by id over the tuned one by cell.
fn pass_table(mine: &[Record], n: usize) -> String {
    let columns = [
        (Order::Id, AvoidForm::Idiomatic),
        (Order::Id, AvoidForm::Tuned),
        (Order::Cell, AvoidForm::Idiomatic),
        (Order::Cell, AvoidForm::Tuned),
    ];
    let rows: Vec<Vec<String>> = LayoutKind::CPU
        .iter()
        .filter_map(|&kind| {
            let at = |order, form, metric| avoid(mine, metric, kind, n, &param(order, form));
            let times: Vec<Option<f64>> = columns
                .iter()
                .map(|&(o, f)| at(o, f, Metric::AvoidMs))
                .collect();
            if times.iter().all(Option::is_none) {
                return None;
            }
            let mut row = vec![format!("`{kind}`")];
            row.extend(times.iter().map(|t| t.map_or("-".into(), fmt_num)));
            let grid = at(Order::Cell, AvoidForm::Tuned, Metric::GridMs);
            let pass = at(Order::Cell, AvoidForm::Tuned, Metric::PassMs);
            row.push(match (grid, pass) {
                (Some(g), Some(p)) => format!("{} / {}", fmt_num(g), fmt_num(p)),
                _ => "-".into(),
            });
            let ratio = |slow: Option<f64>, fast: Option<f64>| match (slow, fast) {
                (Some(slow), Some(fast)) if fast > 0.0 => format!("x{:.1}", slow / fast),
                _ => "-".into(),
            };
            row.push(ratio(times[0], times[2]));
            row.push(ratio(times[0], times[3]));
            Some(row)
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "**{} entities**, one thread, ms per pass (p50):\n\n{}\n",
        short(n),
        table(
            &[
                "layout",
                "by id, idiomatic",
                "by id, tuned",
                "by cell, idiomatic",
                "by cell, tuned",
                "tuned by cell: grid / pass",
                "the order alone: idiomatic, by id ÷ by cell",
                "idiomatic by id ÷ tuned by cell",
            ],
            &rows
        )
    )
}

/// What the pass found, per count (`soa`'s, which every layout shares bit for bit).
fn found_table(mine: &[Record], cfg: &BenchConfig) -> String {
    let p = param(Order::Id, AvoidForm::Idiomatic);
    let rows: Vec<Vec<String>> = counts(cfg)
        .into_iter()
        .chain([big_n(cfg)])
        .filter_map(|n| {
            let p = if n >= big_n(cfg) {
                param(Order::Id, AvoidForm::Tuned)
            } else {
                p.clone()
            };
            let get = |metric| avoid(mine, metric, LayoutKind::Soa, n, &p);
            Some(vec![
                short(n),
                fmt_num(get(Metric::CandidatesPerEntity)?),
                fmt_num(get(Metric::NeighboursPerEntity)?),
                fmt_count(get(Metric::MostNeighbours)? as u64),
            ])
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "**What the pass finds** (every layout finds the same):\n\n{}\n",
        table(
            &[
                "entities",
                "candidates tested per entity",
                "neighbours per entity (mean)",
                "most neighbours",
            ],
            &rows
        )
    )
}

/// The decay after a sort by cell, per form.
fn decay_table(mine: &[Record], cfg: &BenchConfig) -> String {
    let n = target_n(cfg) as u64;
    let rows: Vec<Vec<String>> = AvoidForm::BOTH
        .iter()
        .filter_map(|form| {
            let get = |metric: Metric, p: String| {
                Query::metric(metric)
                    .layout("soa")
                    .n(n)
                    .param(&p)
                    .find(mine)
                    .map(|r| r.p50)
            };
            let base = format!("decay,form={form}");
            let mut row = vec![format!("{form}")];
            row.push(fmt_num(get(Metric::AvoidMs, format!("{base},order=id"))?));
            for frame in [0, 60, 179] {
                let at = get(Metric::AvoidMs, format!("{base},frame={frame}"));
                row.push(at.map_or("-".into(), fmt_num));
            }
            row.push(fmt_num(get(Metric::SortMs, base.clone())?));
            row.push(
                get(Metric::PaysAfterFrames, base.clone())
                    .map_or("not within the run".into(), |f| fmt_count(f as u64)),
            );
            let every = get(Metric::BestResortEvery, base.clone())?;
            row.push(format!(
                "{} ({} ms a frame)",
                fmt_count(every as u64),
                fmt_num(get(Metric::AvoidMs, base)?)
            ));
            Some(row)
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "**After a sort by cell**, `soa`, {}, one thread, the pass in ms (each frame the median of the five around it):\n\n{}\n",
        short(n as usize),
        table(
            &[
                "form",
                "by id",
                "frame 0",
                "frame 60",
                "frame 179",
                "the sort, ms",
                "a re-sort pays after (frames)",
                "cheapest re-sort interval",
            ],
            &rows
        )
    )
}

fn budget_table(mine: &[Record]) -> String {
    let rows: Vec<Vec<String>> = LayoutKind::CPU
        .iter()
        .filter_map(|kind| {
            let r = Query::metric(Metric::BreaksBudgetAt)
                .layout(kind.name())
                .find(mine)?;
            Some(vec![
                format!("`{kind}`"),
                format!("{} ({})", fmt_count(r.p50 as u64), r.param),
            ])
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "**Where the budget breaks with the neighbours on** (move + regen + avoid, idiomatic, by id, f32, one thread; the smallest measured count over {BUDGET_MS:.2} ms, with the final bracket):\n\n{}",
        table(&["layout", "breaks the budget at"], &rows)
    )
}

/// Cachegrind's counts of the idiomatic pass, per layout and order.
fn counted_table(mine: &[Record], cfg: &BenchConfig) -> String {
    let n = counted_n(cfg);
    let rows: Vec<Vec<String>> = COUNTED
        .iter()
        .flat_map(|&kind| [Order::Id, Order::Cell].map(|order| (kind, order)))
        .filter_map(|(kind, order)| {
            let p = param(order, AvoidForm::Idiomatic);
            let get = |metric| avoid(mine, metric, kind, n, &p);
            Some(vec![
                format!("`{kind}`"),
                format!("{order}"),
                fmt_num(get(Metric::Instructions)?),
                fmt_num(get(Metric::L1dMisses)?),
                fmt_num(get(Metric::LlMisses)?),
            ])
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\n**Counted** (cachegrind, the idiomatic pass alone, {} entities against a 1 MiB last level, which they overflow as 1M overflow a 32 MiB one; per entity per pass):\n\n{}",
        short(n),
        table(
            &[
                "layout",
                "order",
                "instructions",
                "L1d misses",
                "last-level misses"
            ],
            &rows
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_back_from_their_text() {
        let cfg = BenchConfig::new(true);
        for cell in Neighbours.cells(&cfg, &[]) {
            assert_eq!(cell.to_string().parse::<Near>(), Ok(cell), "{cell}");
        }
        assert!("pass:gpu:10".parse::<Near>().is_err());
        assert!("decay:fast".parse::<Near>().is_err());
    }

    /// A re-sort pays once the time lost since the sort passes the sort's cost, and the
    /// cheapest interval shares the sort over the frames that stay fast.
    #[test]
    fn the_decay_finds_when_a_re_sort_pays() {
        let passes = [10.0, 10.0, 10.0, 10.0, 12.0, 14.0, 16.0];
        let decay = Decay::of(&passes, 5.0).unwrap();
        // Against the first five frames' median (10), lost: 0, 0, 0, 0, 2, 6 (> 5 at the sixth).
        assert_eq!(decay.pays_after, Some(6));
        // Per frame: 15, 12.5, 11.67, 11.25, 11.4, 11.83, 12.43.
        assert_eq!(decay.best_every, 4);
        assert!((decay.best_ms_per_frame - 11.25).abs() < 1e-9);
        assert_eq!(Decay::of(&[10.0; 4], 5.0).unwrap().pays_after, None);
        assert_eq!(Decay::of(&[], 5.0), None);
    }
}

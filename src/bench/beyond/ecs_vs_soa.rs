//! Bevy's ECS against hand-rolled SoA, the storage core's targets: at 1M and 10M entities on one
//! thread, the tuned ECS (`contiguous_iter_mut`, its move over interleaved coordinates as one
//! flat stream) within 1.10x of SoA and the idiomatic one (`Query::iter_mut().for_each`) within
//! 2x. Ratios drift with a shared machine's load, so the populations are built once and measured
//! in interleaved rounds (SoA, tuned, idiomatic, SoA, ...), and the per-round ratios' median is
//! the process's ratio. One process is not enough: a ratio also moves with what a process is
//! dealt (where its columns land), so each count runs in [`REPS`] fresh processes and the
//! targets are read from the median of their ratios, with the spread beside it.
//!
//! What each process was dealt is recorded beside its ratio: every column's offset inside its
//! 4 KiB page, how much of each column sits on transparent huge pages, which population was
//! allocated first (odd processes SoA first, even ones the ECS first), and the move and regen
//! systems timed apart, so a swing can be traced to the system and the placement that carry it.
//!
//! Control for the suspected cause of the tuned ECS's gap: the same tuned loop over a world whose
//! position and velocity are split into one component per coordinate (`X`, `Y`, `Vx`, `Vy`), so
//! its columns are exactly SoA's. If the gap closes, it was the interleaved `Position { x, y }`.
//! And two simpler forms of the tuned loop: column slices, but one
//! `move_one(p.x, p.y, v.x, v.y)` per entity pair (`ecs-contiguous-pairs`), which the compiler
//! does not vectorize; and the flat-stream loop with one cursor (`ecs-contiguous-one-cursor`):
//! the same bytes and instructions in two streams instead of four.

use bevy_ecs::prelude::{Component, QueryState, World};

use crate::bench::kit::cells::CountInProcess;
use crate::bench::kit::placement::{colour_clashes, huge_kib_at, page_offset};
use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short, spread};
use crate::layout::ecs::EcsLayout;
use crate::layout::interleaved::MoveInterleaved;
use crate::layout::regions::Field;
use crate::layout::{InTable, Layout, LayoutKind, Position, Velocity};
use crate::runtime::swarm::Swarm;
use crate::simd::{self, SimdTier};
use crate::threads::Threads;
use crate::workload::SEED;
use crate::workload::{Dt, SpawnPattern, move_one, regen_one, spawn_range};

pub struct EcsVsSoa;

const NAME: &str = "ecs-vs-soa";
const KINDS: [LayoutKind; 3] = [
    LayoutKind::Soa,
    LayoutKind::EcsContiguous,
    LayoutKind::EcsTable,
];
/// The controls' names in the records.
const SPLIT: &str = "ecs-contiguous-split-xy";
const PAIRS: &str = "ecs-contiguous-pairs";
const ONE_CURSOR: &str = "ecs-contiguous-one-cursor";

#[derive(Component)]
struct X(f32);
#[derive(Component)]
struct Y(f32);
#[derive(Component)]
struct Vx(f32);
#[derive(Component)]
struct Vy(f32);
#[derive(Component)]
struct Energy(f32);
#[derive(Component)]
struct Regen(f32);
/// Carried so the control's table holds all eight fields, like the other ECS layouts' tables.
#[derive(Component)]
struct HpArmor {
    _values: [f32; 2],
}

/// The control: the same entities, one component per coordinate, the tuned loops.
struct SplitWorld {
    world: World,
    movers: QueryState<(&'static mut X, &'static mut Y, &'static Vx, &'static Vy)>,
    regens: QueryState<(&'static mut Energy, &'static Regen)>,
}

impl SplitWorld {
    fn new(n: usize) -> Self {
        let mut states = Vec::with_capacity(n);
        spawn_range::<f32>(SpawnPattern::default(), SEED, 0, n, &mut states);
        let mut world = World::new();
        world.spawn_batch(states.iter().map(|s| {
            (
                X(s.x),
                Y(s.y),
                Vx(s.vx),
                Vy(s.vy),
                Energy(s.energy),
                Regen(s.regen),
                HpArmor {
                    _values: [s.hp, s.armor],
                },
            )
        }));
        let movers = world.query();
        let regens = world.query();
        Self {
            world,
            movers,
            regens,
        }
    }

    fn step(&mut self, dt: f32) {
        let tables = self
            .movers
            .contiguous_iter_mut(&mut self.world)
            .expect("table storage is dense");
        for (mut x, mut y, vx, vy) in tables {
            let (x, y) = (x.bypass_change_detection(), y.bypass_change_detection());
            let rows = x.iter_mut().zip(y.iter_mut()).zip(vx.iter().zip(vy));
            for ((x, y), (vx, vy)) in rows {
                (x.0, y.0) = move_one(x.0, y.0, vx.0, vy.0, dt);
            }
        }
        let tables = self
            .regens
            .contiguous_iter_mut(&mut self.world)
            .expect("table storage is dense");
        for (mut energy, regen) in tables {
            for (e, r) in energy.bypass_change_detection().iter_mut().zip(regen) {
                e.0 = regen_one(e.0, r.0, dt);
            }
        }
    }
}

/// The simpler forms of the tuned ECS's move loop, the later controls.
#[derive(Clone, Copy)]
enum OldMove {
    /// One `move_one(p.x, p.y, v.x, v.y)` per entity over the column slices, which the compiler
    /// does not vectorize.
    Pairs,
    /// The flat-stream blocks with one cursor: two streams instead of SoA's four.
    OneCursor,
}

/// The tuned ECS's own world and regen, its move in one of the simpler forms ([`OldMove`]).
struct OldLoopWorld {
    layout: EcsLayout<f32>,
    movers: QueryState<(
        &'static mut Position<f32, InTable>,
        &'static Velocity<f32, InTable>,
    )>,
    old: OldMove,
}

impl OldLoopWorld {
    fn new(n: usize, old: OldMove) -> Self {
        let mut layout = EcsLayout::<f32>::contiguous();
        fill_seeded(&mut layout, n);
        let movers = layout.world_mut().query();
        Self {
            layout,
            movers,
            old,
        }
    }

    fn step(&mut self, dt: f32) {
        let tables = self
            .movers
            .contiguous_iter_mut(self.layout.world_mut())
            .expect("table storage is dense");
        for (mut positions, velocities) in tables {
            let positions = positions.bypass_change_detection();
            match self.old {
                OldMove::Pairs => {
                    for (p, v) in positions.iter_mut().zip(velocities) {
                        (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
                    }
                }
                // Through the same per-tier kernel call as the layout's own loop, so the two
                // differ in their cursors alone.
                OldMove::OneCursor => simd::run(
                    SimdTier::Baseline,
                    MoveInterleaved {
                        positions,
                        velocities,
                        dt,
                        one_cursor: true,
                    },
                ),
            }
        }
        self.layout.step_regen(dt, Threads::One);
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![1_000_000, 10_000_000], vec![100_000]))
}

/// Fresh processes per count: the headline's tuned and idiomatic ECS rows are read from them,
/// so they take as many as the headline's own rows.
const REPS: usize = 5;
/// Fresh allocations of SoA's columns per process, after the first.
const DEALS: usize = 3;
/// From this count on, only the first process builds the three control worlds and re-deals
/// SoA's pages: building six 10M populations is most of a 10M process's time
/// (docs/runs/full-2026-12-04, `ecs-vs-soa` n=10000000;rep=1). The controls' questions (is the
/// gap the interleaved `Position`? does SoA's time move with its pages?) are asked at 1M in
/// every process.
const CONTROLS_ONCE_FROM: usize = 10_000_000;

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 2)
}

/// Whether this process builds the controls and re-deals SoA's pages.
fn with_controls(n: usize, rep: usize) -> bool {
    rep == 1 || n < CONTROLS_ONCE_FROM
}

/// The three control worlds of one process.
struct Controls {
    split: SplitWorld,
    pairs: OldLoopWorld,
    one_cursor: OldLoopWorld,
}

impl Controls {
    fn new(n: usize) -> Self {
        Self {
            split: SplitWorld::new(n),
            pairs: OldLoopWorld::new(n, OldMove::Pairs),
            one_cursor: OldLoopWorld::new(n, OldMove::OneCursor),
        }
    }
}

/// The fields whose columns the frame streams through.
const STREAMED: [Field; 6] = [
    Field::X,
    Field::Y,
    Field::Vx,
    Field::Vy,
    Field::Energy,
    Field::Regen,
];

/// Which population a process allocates first: SoA in odd processes, the ECS in even ones.
fn soa_first(rep: usize) -> bool {
    rep % 2 == 1
}

/// Each streamed column's page offset, and its mapping's huge-page KiB, as records.
fn placement(swarm: &Swarm<f32>, n: usize, param: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let regions = swarm.regions(0..1);
    for field in STREAMED {
        let Some(region) = regions.iter().find(|r| r.field == field) else {
            continue;
        };
        let rec = Record::new(NAME, swarm.kind().name(), "f32", n)
            .param(format!("{param};field={}", field.name()));
        out.push(
            rec.clone()
                .value(Metric::PageOffset, "B", page_offset(region.addr) as f64),
        );
        if let Some(kib) = huge_kib_at(region.addr) {
            out.push(rec.value(Metric::HugeKib, "KiB", kib as f64));
        }
    }
    out
}

/// For a layout's move columns (SoA's four, the ECS's `Position` and `Velocity`), how often
/// their pages at the same entity share an L2 colour ([`colour_clashes`]), or `None` where frame
/// numbers are hidden.
fn move_colour_clashes(swarm: &Swarm<f32>, n: usize) -> Option<f64> {
    let regions = swarm.regions(0..1);
    let mut starts: Vec<usize> = [Field::X, Field::Y, Field::Vx, Field::Vy]
        .iter()
        .filter_map(|f| regions.iter().find(|r| r.field == *f).map(|r| r.addr))
        .collect();
    // The ECS's x and y (vx and vy) share one column: its start once.
    starts.sort_unstable();
    starts.dedup_by(|a, b| a.abs_diff(*b) < 64);
    let bytes = n * size_of::<f32>() * if starts.len() == 2 { 2 } else { 1 };
    colour_clashes(&starts, bytes, 256, L2_COLOURS)
}

/// 4 KiB page colours of a 2 MiB, 16-way L2 (128 KiB a way): this host's.
const L2_COLOURS: u64 = 32;

impl Experiment for EcsVsSoa {
    type Cell = CountInProcess;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: Bevy's ECS against hand-rolled SoA (the core's targets)"
    }

    fn title(&self) -> &'static str {
        "ECS vs SoA: the storage core's targets, interleaved rounds in fresh processes"
    }

    fn narrows(&self) -> Narrows {
        Narrows::COUNTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<CountInProcess> {
        let mut cells = Vec::new();
        for rep in 1..=reps(cfg) {
            for n in counts(cfg) {
                cells.push(CountInProcess { n, rep });
            }
        }
        cells
    }

    fn run_cell(
        &self,
        cfg: &BenchConfig,
        &CountInProcess { n, rep }: &CountInProcess,
    ) -> Result<Vec<Record>, BenchError> {
        let param = format!("rep={rep}");
        let rounds = cfg.pick(7, 3);
        let method = cfg.method.per_round();
        let mut kinds = KINDS.to_vec();
        if !soa_first(rep) {
            kinds.reverse();
        }
        let mut swarms: Vec<Swarm<f32>> = kinds
            .iter()
            .map(|&k| Swarm::with_count(k, SEED, n))
            .collect::<Result<_, _>>()?;
        if !soa_first(rep) {
            swarms.reverse();
        }
        let mut controls = with_controls(n, rep).then(|| Controls::new(n));
        let dt = Dt::default();
        // Per round: the six frames (the controls' NaN where this process has none), then move
        // and regen apart for SoA and the tuned ECS.
        let mut per_round: Vec<[f64; 10]> = Vec::new();
        for _ in 0..rounds {
            let mut round = [f64::NAN; 10];
            for (slot, swarm) in round.iter_mut().zip(swarms.iter_mut()) {
                *slot = measure(&method, || swarm.step(dt, Threads::One)).p50;
            }
            if let Some(c) = controls.as_mut() {
                round[3] = measure(&method, || c.split.step(dt.as_scalar())).p50;
                round[4] = measure(&method, || c.pairs.step(dt.as_scalar())).p50;
                round[5] = measure(&method, || c.one_cursor.step(dt.as_scalar())).p50;
            }
            for (i, k) in [0, 1].into_iter().enumerate() {
                let swarm = &mut swarms[k];
                round[6 + i] = measure(&method, || swarm.step_move(dt, Threads::One)).p50;
                round[8 + i] = measure(&method, || swarm.step_regen(dt, Threads::One)).p50;
            }
            per_round.push(round);
        }
        let names: Vec<String> = KINDS
            .iter()
            .map(|k| k.name().to_string())
            .chain([SPLIT, PAIRS, ONE_CURSOR].map(String::from))
            .collect();
        let mut out = Vec::new();
        let column = |i: usize| per_round.iter().map(|r| r[i]).collect::<Vec<f64>>();
        let ratio = |i: usize, of: usize| {
            Stats::from_samples(per_round.iter().map(|r| r[i] / r[of]).collect())
        };
        for (i, name) in names.iter().enumerate() {
            if per_round.iter().any(|r| r[i].is_nan()) {
                continue;
            }
            let rec = Record::new(NAME, name.as_str(), "f32", n).param(&param);
            out.push(
                rec.clone()
                    .with(Metric::FrameMs, "ms", Stats::from_samples(column(i))),
            );
            out.push(rec.with(Metric::RatioVsSoa, "x", ratio(i, 0)));
        }
        let tuned = Record::new(NAME, LayoutKind::EcsContiguous.name(), "f32", n).param(&param);
        out.push(tuned.clone().with(Metric::MoveRatioVsSoa, "x", ratio(7, 6)));
        out.push(tuned.with(Metric::RegenRatioVsSoa, "x", ratio(9, 8)));
        for swarm in &swarms[..2] {
            out.extend(placement(swarm, n, &param));
        }
        if let Some(share) = move_colour_clashes(&swarms[1], n) {
            out.push(
                Record::new(NAME, LayoutKind::EcsContiguous.name(), "f32", n)
                    .param(&param)
                    .value(Metric::ColourClashes, "share", share),
            );
        }
        // The re-deal control: SoA's columns allocated afresh (the new ones while the old are
        // still held, so the kernel cannot hand back the same pages), timed against the split
        // world, which keeps its pages. Same process, same virtual page offsets, new pages: if
        // SoA's time moves between deals as much as between processes, the swing is dealt with
        // the pages.
        let Some(Controls { mut split, .. }) = controls else {
            return Ok(out);
        };
        let mut soa = swarms.swap_remove(0);
        for deal in 0..=cfg.pick(DEALS, 1) {
            if deal > 0 {
                let fresh = Swarm::with_count(LayoutKind::Soa, SEED, n)?;
                drop(std::mem::replace(&mut soa, fresh));
            }
            let mut ms = Vec::new();
            let mut reference = Vec::new();
            for _ in 0..cfg.pick(3, 1) {
                ms.push(measure(&method, || soa.step(dt, Threads::One)).p50);
                reference.push(measure(&method, || split.step(dt.as_scalar())).p50);
            }
            let rec = Record::new(NAME, "soa", "f32", n).param(format!("{param};deal={deal}"));
            out.push(
                rec.clone()
                    .with(Metric::DealtMs, "ms", Stats::from_samples(ms)),
            );
            if let Some(share) = move_colour_clashes(&soa, n) {
                out.push(rec.clone().value(Metric::ColourClashes, "share", share));
            }
            out.push(
                Record::new(NAME, SPLIT, "f32", n)
                    .param(format!("{param};deal={deal}"))
                    .with(Metric::DealtMs, "ms", Stats::from_samples(reference)),
            );
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let per_rep = |layout: &str, n: usize, metric: Metric| -> Vec<f64> {
            Query::metric(metric)
                .layout(layout)
                .n(n as u64)
                .param("")
                .per_process(mine)
        };
        let mut rows = Vec::new();
        for n in counts(cfg) {
            let soa_ms = median(&per_rep("soa", n, Metric::FrameMs));
            for (name, target) in [
                (LayoutKind::EcsContiguous.name().to_string(), Some(1.10)),
                (LayoutKind::EcsTable.name().to_string(), Some(2.0)),
                (SPLIT.to_string(), None),
                (PAIRS.to_string(), None),
                (ONE_CURSOR.to_string(), None),
            ] {
                let ratios = per_rep(&name, n, Metric::RatioVsSoa);
                let (Some(ms), Some(soa)) = (median(&per_rep(&name, n, Metric::FrameMs)), soa_ms)
                else {
                    continue;
                };
                rows.push(vec![
                    fmt_count(n as u64),
                    format!("`{name}`"),
                    format!("{} vs {} ms", fmt_num(ms), fmt_num(soa)),
                    match target {
                        Some(t) => format!("x{} (target <= x{t:.2})", spread(&ratios, |m| m <= t)),
                        None => format!("x{}", range(&ratios)),
                    },
                    match target {
                        Some(_) => "target".into(),
                        None if name == SPLIT => {
                            "control: X, Y, Vx, Vy as separate components".into()
                        }
                        None if name == PAIRS => {
                            "control: the first tuned loop, one (x, y) pair per entity".into()
                        }
                        None => {
                            "control: the flat-stream loop with one cursor (two streams)".into()
                        }
                    },
                ]);
            }
        }
        // The processes the records hold, per count: a run says what it measured, whatever
        // this code would run now.
        let processes: Vec<String> = counts(cfg)
            .into_iter()
            .map(|n| {
                let took = per_rep(LayoutKind::EcsContiguous.name(), n, Metric::RatioVsSoa).len();
                format!("{took} at {}", short(n))
            })
            .collect();
        let mut md = format!(
            "f32, one thread, move + regen; in each process every round measures SoA, the tuned ECS, the idiomatic ECS and the three controls back to back, and the process's ratio is the median of its rounds' ratios; the table gives the median of the processes' ratios [min..max] (processes: {}; where a control's range is one figure, only one process built it).\n\n{}",
            processes.join(", "),
            table(
                &[
                    "entities",
                    "layout",
                    "p50 frame (vs SoA), median of processes",
                    "ratio to SoA over processes",
                    "what"
                ],
                &rows
            )
        );
        md.push_str(&dealt(mine, &counts(cfg), reps(cfg)));
        md
    }
}

/// One row per process: its tuned-ECS ratio, the move and regen systems' ratios apart, which
/// population it allocated first, and where SoA's and the tuned ECS's columns sat.
fn dealt(mine: &[Record], counts: &[usize], reps: usize) -> String {
    let tuned = LayoutKind::EcsContiguous.name();
    let mut rows = Vec::new();
    for &n in counts {
        for rep in 1..=reps {
            let param = format!("rep={rep}");
            let find = |layout: &str, metric: Metric, param: &str| {
                Query::metric(metric)
                    .layout(layout)
                    .n(n as u64)
                    .param(param)
                    .find(mine)
                    .map(|r| r.p50)
            };
            let Some(frame) = find(tuned, Metric::RatioVsSoa, &param) else {
                continue;
            };
            let x = |v: Option<f64>| v.map_or("-".into(), |v| format!("x{v:.3}"));
            let offsets = |layout: &str| {
                let mut huge = 0.0;
                let list: Vec<String> = STREAMED
                    .iter()
                    .filter_map(|f| {
                        let p = format!("{param};field={}", f.name());
                        huge += find(layout, Metric::HugeKib, &p).unwrap_or(0.0);
                        find(layout, Metric::PageOffset, &p).map(|o| format!("{}:{o}", f.name()))
                    })
                    .collect();
                (list.join(" "), huge)
            };
            let deals: Vec<String> = (0..=DEALS)
                .filter_map(|d| {
                    let at = format!("{param};deal={d}");
                    let ms = fmt_num(find("soa", Metric::DealtMs, &at)?);
                    Some(match find("soa", Metric::ColourClashes, &at) {
                        Some(share) => format!("{ms} ({:.0}%)", share * 100.0),
                        None => ms,
                    })
                })
                .collect();
            let split_ms: Vec<f64> = (0..=DEALS)
                .filter_map(|d| find(SPLIT, Metric::DealtMs, &format!("{param};deal={d}")))
                .collect();
            let (soa_at, soa_huge) = offsets("soa");
            let (ecs_at, ecs_huge) = offsets(tuned);
            let ecs_ms = find(tuned, Metric::FrameMs, &param).map_or("-".into(), fmt_num);
            let ecs_share = find(tuned, Metric::ColourClashes, &param)
                .map_or(String::new(), |s| format!(" ({:.0}%)", s * 100.0));
            rows.push(vec![
                short(n),
                rep.to_string(),
                if soa_first(rep) { "SoA" } else { "ECS" }.into(),
                format!("{} ({ecs_ms} ms{ecs_share})", x(Some(frame))),
                x(find(tuned, Metric::MoveRatioVsSoa, &param)),
                x(find(tuned, Metric::RegenRatioVsSoa, &param)),
                soa_at,
                ecs_at,
                format!("{soa_huge:.0} / {ecs_huge:.0}"),
                if deals.is_empty() {
                    "not re-dealt".into()
                } else {
                    deals.join(", ")
                },
                range(&split_ms),
            ]);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\nWhat each process was dealt: the tuned ECS's ratio to SoA for the frame (its own p50 ms, and the colour share of its two move columns, see below) and for each system alone, the population allocated first, each streamed column's offset inside its 4 KiB page (field:bytes; the ECS's x and y share `Position`, vx and vy `Velocity`), KiB of those columns' mappings on transparent huge pages (SoA / ECS), and the re-deal control: SoA's frame (ms) with its columns allocated afresh {DEALS} times in the same process (the first deal is the one above), beside the split-xy world, which keeps its pages; in parentheses, where this process may read its frame numbers (`/proc/self/pagemap`, root), the share of 256 positions at which two or more of SoA's four move columns sit on pages of one L2 colour (physical page bits 12-16).\n\n{}",
        table(
            &[
                "entities",
                "process",
                "allocated first",
                "tuned ECS / SoA",
                "move only",
                "regen only",
                "SoA columns at",
                "ECS columns at",
                "huge KiB",
                "SoA ms, each deal of its pages",
                "split-xy ms beside them"
            ],
            &rows
        )
    )
}

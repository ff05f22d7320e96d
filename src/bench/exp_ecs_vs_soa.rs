//! Bevy's ECS against hand-rolled SoA, the storage core's targets: at 1M and 10M entities on one
//! thread, the tuned ECS (`contiguous_iter_mut`, its move over interleaved coordinates as one
//! flat stream) within 1.10x of SoA and the idiomatic one (`Query::iter_mut().for_each`) within
//! 2x. Ratios drift with a shared machine's load, so the
//! three populations are built once and measured in interleaved rounds (SoA, tuned, idiomatic,
//! SoA, ...); each round gives one ratio, and the table reports their median and spread.
//!
//! Control for the suspected cause of the tuned ECS's gap: the same tuned loop over a world whose
//! position and velocity are split into one component per coordinate (`X`, `Y`, `Vx`, `Vy`), so
//! its columns are exactly SoA's. If the gap closes, it was the interleaved `Position { x, y }`.
//! And the tuned loop as it was before the flat-stream move: column slices, but one
//! `move_one(p.x, p.y, v.x, v.y)` per entity pair (`ecs-contiguous-pairs`), which the compiler
//! did not vectorize.

use bevy_ecs::prelude::{Component, QueryState, World};

use super::Cell;
use super::harness::{Stats, measure};
use super::record::{Query, Record};
use super::{BenchConfig, BenchError, Experiment, SEED, fill_seeded, fmt_count, table};
use crate::layout::{EcsLayout, InTable, Layout, LayoutKind, Position, Velocity};
use crate::swarm::Swarm;
use crate::threads::Threads;
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

/// The second control: the tuned ECS's own world and regen, its move as it was written before,
/// one `(x, y)` pair per entity over the column slices.
struct PairsWorld {
    layout: EcsLayout<f32>,
    movers: QueryState<(
        &'static mut Position<f32, InTable>,
        &'static Velocity<f32, InTable>,
    )>,
}

impl PairsWorld {
    fn new(n: usize) -> Self {
        let mut layout = EcsLayout::<f32>::contiguous();
        fill_seeded(&mut layout, n);
        let movers = layout.world_mut().query();
        Self { layout, movers }
    }

    fn step(&mut self, dt: f32) {
        let tables = self
            .movers
            .contiguous_iter_mut(self.layout.world_mut())
            .expect("table storage is dense");
        for (mut positions, velocities) in tables {
            for (p, v) in positions
                .bypass_change_detection()
                .iter_mut()
                .zip(velocities)
            {
                (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
            }
        }
        self.layout.step_regen(dt, Threads::One);
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(vec![1_000_000, 10_000_000], vec![100_000])
}

impl Experiment for EcsVsSoa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "ECS vs SoA: the storage core's targets, interleaved rounds"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        counts(cfg).into_iter().map(|n| format!("n={n}")).collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let n: usize = Cell::new(NAME, cell).value("n=", "")?;
        let rounds = cfg.pick(9, 3);
        let method = cfg.method.per_round();
        let mut swarms: Vec<Swarm<f32>> = KINDS
            .iter()
            .map(|&k| Swarm::with_count(k, SEED, n))
            .collect::<Result<_, _>>()?;
        let mut split = SplitWorld::new(n);
        let mut pairs = PairsWorld::new(n);
        let dt = Dt::default();
        let mut per_round: Vec<[f64; 5]> = Vec::new();
        for _ in 0..rounds {
            let mut round = [0.0; 5];
            for (slot, swarm) in round.iter_mut().zip(swarms.iter_mut()) {
                *slot = measure(&method, || swarm.step(dt, Threads::One)).p50;
            }
            round[3] = measure(&method, || split.step(dt.as_scalar())).p50;
            round[4] = measure(&method, || pairs.step(dt.as_scalar())).p50;
            per_round.push(round);
        }
        let names: Vec<String> = KINDS
            .iter()
            .map(|k| k.name())
            .chain([SPLIT.to_string(), PAIRS.to_string()])
            .collect();
        let mut out = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let ms = Stats::from_samples(per_round.iter().map(|r| r[i]).collect());
            let ratio = Stats::from_samples(per_round.iter().map(|r| r[i] / r[0]).collect());
            let rec = Record::new(NAME, name.as_str(), "f32", n);
            out.push(rec.clone().with("frame_ms", "ms", ms));
            out.push(rec.with("ratio_vs_soa", "x", ratio));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut rows = Vec::new();
        for n in counts(cfg) {
            for (name, target) in [
                (LayoutKind::EcsContiguous.name(), Some(1.10)),
                (LayoutKind::EcsTable.name(), Some(2.0)),
                (SPLIT.to_string(), None),
                (PAIRS.to_string(), None),
            ] {
                let at_n = Query::metric("frame_ms")
                    .scalar("f32")
                    .threads("1")
                    .n(n as u64);
                let (Some(r), Some(ms), Some(soa)) = (
                    at_n.with_metric("ratio_vs_soa").layout(&name).find(mine),
                    at_n.layout(&name).find(mine),
                    at_n.layout("soa").find(mine),
                ) else {
                    continue;
                };
                rows.push(vec![
                    fmt_count(n as u64),
                    format!("`{name}`"),
                    format!("{:.2} vs {:.2} ms", ms.p50, soa.p50),
                    format!(
                        "x{:.3} (p10 x{:.3}, p90 x{:.3}, {} rounds)",
                        r.p50, r.p10, r.p90, r.samples
                    ),
                    match target {
                        Some(t) => {
                            format!("<= x{t:.2}: {}", if r.p50 <= t { "met" } else { "NOT met" })
                        }
                        None if name == SPLIT => {
                            "control: X, Y, Vx, Vy as separate components".into()
                        }
                        None => "control: the tuned loop before, one (x, y) pair per entity".into(),
                    },
                ]);
            }
        }
        format!(
            "f32, one thread, move + regen; each round measures SoA, the tuned ECS, the idiomatic ECS and the two controls back to back.\n\n{}",
            table(
                &[
                    "entities",
                    "layout",
                    "p50 frame (vs SoA)",
                    "ratio to SoA, median of rounds",
                    "target"
                ],
                &rows
            )
        )
    }
}

//! Fragmentation: 500,000 matching entities split across A = 1..8192 archetypes (marker
//! components, up to 13 of them in combination), iterated by one ordinary `Query`. Bevy has no
//! fixed-size chunks: each archetype has its own table, so A archetypes are A contiguous runs of
//! 500,000 / A entities, the JS study's "A contiguous chunks".
//!
//! Control: the same split without Bevy, A chunks of plain SoA vectors iterated one after the
//! other, which separates the memory effect of fragmentation from the per-archetype cost of the
//! query.

use std::fmt;
use std::str::FromStr;

use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::world::EntityWorldMut;
use serde::{Deserialize, Serialize};

use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::layout::ecs::EcsLayout;
use crate::layout::{InTable, Position, Velocity};
use crate::workload::{Dt, EntityState, move_one};

pub struct Fragmentation;

const NAME: &str = "fragmentation";
const ARCHETYPES: [usize; 6] = [1, 8, 64, 512, 4096, 8192];

/// Marker bit `B`: archetype `a` is the set of markers whose bits are set in `a`.
struct Marker<const B: u8>;

impl<const B: u8> Component for Marker<B> {
    const STORAGE_TYPE: StorageType = StorageType::Table;
    type Mutability = Mutable;
}

fn insert_marker(entity: &mut EntityWorldMut, bit: u8) {
    match bit {
        0 => entity.insert(Marker::<0>),
        1 => entity.insert(Marker::<1>),
        2 => entity.insert(Marker::<2>),
        3 => entity.insert(Marker::<3>),
        4 => entity.insert(Marker::<4>),
        5 => entity.insert(Marker::<5>),
        6 => entity.insert(Marker::<6>),
        7 => entity.insert(Marker::<7>),
        8 => entity.insert(Marker::<8>),
        9 => entity.insert(Marker::<9>),
        10 => entity.insert(Marker::<10>),
        11 => entity.insert(Marker::<11>),
        _ => entity.insert(Marker::<12>),
    };
}

/// One chunk of the control: its own four vectors.
struct Chunk {
    x: Vec<f32>,
    y: Vec<f32>,
    vx: Vec<f32>,
    vy: Vec<f32>,
}

/// Entity i goes to chunk i % A, as in the ECS split.
fn soa_chunks(states: &[EntityState<f32>], archetypes: usize) -> Vec<Chunk> {
    (0..archetypes)
        .map(|a| {
            let mine = || states.iter().skip(a).step_by(archetypes);
            Chunk {
                x: mine().map(|s| s.x).collect(),
                y: mine().map(|s| s.y).collect(),
                vx: mine().map(|s| s.vx).collect(),
                vy: mine().map(|s| s.vy).collect(),
            }
        })
        .collect()
}

fn chunks_pass(
    cfg: &BenchConfig,
    mut chunks: Vec<Chunk>,
    dt: f32,
) -> crate::bench::report::harness::Stats {
    measure(&cfg.method, || {
        for c in chunks.iter_mut() {
            let rows =
                c.x.iter_mut()
                    .zip(c.y.iter_mut())
                    .zip(c.vx.iter().zip(&c.vy));
            for ((x, y), (&vx, &vy)) in rows {
                (*x, *y) = move_one(*x, *y, vx, vy, dt);
            }
        }
    })
}

/// A cell: the entities spread over this many archetypes (1 to 8192: the sets of 13 markers),
/// `archetypes=<count>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spread {
    pub archetypes: usize,
}

impl fmt::Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "archetypes={}", self.archetypes)
    }
}

impl FromStr for Spread {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "archetypes=<count>, 1 to 8192", |text| {
            let [count] = holes(text, "archetypes={}")?;
            let archetypes = count.parse().ok().filter(|a| (1..=1 << 13).contains(a))?;
            Some(Spread { archetypes })
        })
    }
}

impl Experiment for Fragmentation {
    type Cell = Spread;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: fragmentation (1 chunk vs 8,192)"
    }

    fn title(&self) -> &'static str {
        "Fragmentation: the same entities split across A archetypes"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Spread> {
        ARCHETYPES.map(|archetypes| Spread { archetypes }).to_vec()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Spread) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(500_000, 50_000);
        let archetypes = cell.archetypes;
        let mut layout = EcsLayout::<f32>::table();
        let states = fill_seeded(&mut layout, n);
        let entities = layout.entities().to_vec();
        let world = layout.world_mut();
        for (i, &e) in entities.iter().enumerate() {
            let archetype = i % archetypes;
            let mut entity = world.entity_mut(e);
            for bit in 0..13u8 {
                if archetype & (1 << bit) != 0 {
                    insert_marker(&mut entity, bit);
                }
            }
        }
        let dt = Dt::default().as_scalar::<f32>();
        let mut query = world.query::<(&mut Position<f32, InTable>, &Velocity<f32, InTable>)>();
        let stats = measure(&cfg.method, || {
            query.iter_mut(world).for_each(|(mut p, v)| {
                (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
            });
        });
        let chunks = soa_chunks(&states, archetypes);
        let mut out = Vec::new();
        for (layout, stats) in [
            ("ecs-table", stats),
            ("soa-chunks", chunks_pass(cfg, chunks, dt)),
        ] {
            let rec = Record::new(NAME, layout, "f32", n).param(cell.to_string());
            out.push(rec.clone().with(Metric::PassMs, "ms", stats));
            out.push(rec.with(Metric::NsPerEntity, "ns", stats.scaled(1e6 / n as f64)));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let n = cfg.pick(500_000, 50_000);
        let ns = |layout: &str, a: usize| {
            Query::metric(Metric::NsPerEntity)
                .layout(layout)
                .param(&format!("archetypes={a}"))
                .find(mine)
                .map(|r| r.p50)
        };
        let vs_one = |layout: &str, a: usize| match (ns(layout, a), ns(layout, 1)) {
            (Some(v), Some(o)) => format!("{} ({:+.0}%)", fmt_num(v), (v / o - 1.0) * 100.0),
            _ => "-".into(),
        };
        let rows: Vec<Vec<String>> = ARCHETYPES
            .iter()
            .map(|&a| {
                let per_archetype = match (ns("ecs-table", a), ns("ecs-table", 1)) {
                    (Some(v), Some(o)) if a > 1 && v > o => {
                        format!("{} ns", fmt_num((v - o) * n as f64 / a as f64))
                    }
                    (Some(_), Some(_)) if a > 1 => "none measurable".into(),
                    _ => "-".into(),
                };
                vec![
                    fmt_count(a as u64),
                    fmt_count((n / a) as u64),
                    vs_one("ecs-table", a),
                    per_archetype,
                    vs_one("soa-chunks", a),
                ]
            })
            .collect();
        format!(
            "{n} entities with Position + Velocity (+ markers), one move pass, f32; ns per entity. Bevy: one `Query<(&mut Position, &Velocity)>` over A tables; control: A chunks of plain SoA vectors. JS study: {} ns per entity in one chunk, {} ns in 8,192 chunks of 61 (+26%).\n\n{}",
            studies::JS_FRAG_NS_1,
            studies::JS_FRAG_NS_8192,
            table(
                &[
                    "archetypes",
                    "entities each",
                    "Bevy ns/entity (vs 1)",
                    "Bevy extra per archetype",
                    "plain SoA chunks ns/entity (vs 1)",
                ],
                &rows
            )
        )
    }
}

//! Fragmentation: 500,000 matching entities split across A = 1..8192 archetypes (marker
//! components, up to 13 of them in combination), iterated by one ordinary `Query`. Bevy has no
//! fixed-size chunks: each archetype has its own table, so A archetypes are A contiguous runs of
//! 500,000 / A entities, the JS study's "A contiguous chunks".

use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::world::EntityWorldMut;

use super::harness::measure;
use super::record::{Record, find};
use super::studies;
use super::{BenchConfig, BenchError, Experiment, SEED, fmt_count, fmt_num, table};
use crate::layout::{EcsLayout, InTable, Layout, Position, Velocity};
use crate::workload::{Dt, move_one, spawn_range};

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

impl Experiment for Fragmentation {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "Fragmentation: the same entities split across A archetypes"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        ARCHETYPES
            .iter()
            .map(|a| format!("archetypes={a}"))
            .collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(500_000, 50_000);
        let archetypes: usize = cell.trim_start_matches("archetypes=").parse().unwrap_or(1);
        let mut layout = EcsLayout::<f32>::table();
        let mut states = Vec::new();
        spawn_range::<f32>(SEED, 0, n, &mut states);
        let ids: Vec<u64> = (0..n as u64).collect();
        layout.push(&ids, &states);
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
        let rec = Record::new(NAME, "ecs-table", "f32", n).param(cell);
        Ok(vec![
            rec.clone().with("pass_ms", "ms", stats),
            rec.with("ns_per_entity", "ns", stats.scaled(1e6 / n as f64)),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let n = cfg.pick(500_000, 50_000);
        let one = find(mine, "", "", "", 0, "archetypes=1", "ns_per_entity").map(|r| r.p50);
        let rows: Vec<Vec<String>> = ARCHETYPES
            .iter()
            .filter_map(|a| {
                let param = format!("archetypes={a}");
                let ns = find(mine, "", "", "", 0, &param, "ns_per_entity")?;
                let ms = find(mine, "", "", "", 0, &param, "pass_ms")?;
                Some(vec![
                    fmt_count(*a as u64),
                    fmt_count((n / a) as u64),
                    fmt_num(ms.p50),
                    fmt_num(ns.p50),
                    one.map_or("-".into(), |o| {
                        format!("{:+.0}%", (ns.p50 / o - 1.0) * 100.0)
                    }),
                ])
            })
            .collect();
        format!(
            "{n} entities with Position + Velocity (+ markers), one `Query<(&mut Position, &Velocity)>` move pass, f32. JS study: {} ns per entity in one chunk, {} ns in 8,192 chunks of 61 (+26%).\n\n{}",
            studies::JS_FRAG_NS_1,
            studies::JS_FRAG_NS_8192,
            table(
                &[
                    "archetypes",
                    "entities each",
                    "ms per pass",
                    "ns per entity",
                    "vs 1 archetype"
                ],
                &rows
            )
        )
    }
}

//! Filtered iteration: 1M entities of which a share p has a component; move only those. Four ways:
//! a mask scan that branches over every entity; a separate list holding the matching entities'
//! boxes (still scattered over the heap all entities were allocated in); a packed SoA holding
//! only the matching entities; and Bevy's archetype (`Query` with a `With<Tagged>` filter), which
//! packs the matching entities into their own table. ns per matched entity.

use std::fmt;
use std::str::FromStr;

use bevy_ecs::prelude::{Component, With};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{ms_and_ns, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::layout::ecs::EcsLayout;
use crate::layout::{InTable, Layout, Position, Velocity};
use crate::workload::SEED;
use crate::workload::{Dt, EntityState, SpawnPattern, move_one, spawn_range};

pub struct Filtered;

const NAME: &str = "filtered";
const SHARES: [u32; 5] = [1, 10, 50, 90, 100];

#[derive(Component)]
struct Tagged;

/// A cell: the share of entities tagged, in percent (1 to 100), `share=<percent>%`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    pub percent: u32,
}

impl fmt::Display for Share {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "share={}%", self.percent)
    }
}

impl FromStr for Share {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "share=<percent>%, 1 to 100", |text| {
            let [percent] = holes(text, "share={}%")?;
            let percent = percent.parse().ok().filter(|p| (1..=100).contains(p))?;
            Some(Share { percent })
        })
    }
}

fn mask(n: usize, percent: u32) -> Vec<bool> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ u64::from(percent));
    (0..n).map(|_| rng.next_u32() % 100 < percent).collect()
}

struct Columns {
    x: Vec<f32>,
    y: Vec<f32>,
    vx: Vec<f32>,
    vy: Vec<f32>,
}

impl Columns {
    fn from(states: &[EntityState<f32>], keep: impl Fn(usize) -> bool) -> Self {
        let pick = |f: fn(&EntityState<f32>) -> f32| {
            states
                .iter()
                .enumerate()
                .filter(|(i, _)| keep(*i))
                .map(|(_, s)| f(s))
                .collect::<Vec<f32>>()
        };
        Self {
            x: pick(|s| s.x),
            y: pick(|s| s.y),
            vx: pick(|s| s.vx),
            vy: pick(|s| s.vy),
        }
    }
}

fn run_share(cfg: &BenchConfig, n: usize, percent: u32) -> Vec<(&'static str, Stats, usize)> {
    let dt = Dt::default().as_scalar::<f32>();
    let mut states = Vec::new();
    spawn_range::<f32>(SpawnPattern::default(), SEED, 0, n, &mut states);
    let tagged = mask(n, percent);
    let matched = tagged.iter().filter(|&&t| t).count().max(1);
    let mut out = Vec::new();

    let mut all = Columns::from(&states, |_| true);
    out.push((
        "mask-scan",
        measure(&cfg.method, || {
            let c = &mut all;
            let rows = c.x.iter_mut().zip(&mut c.y).zip(&c.vx).zip(&c.vy);
            for ((((x, y), &vx), &vy), &t) in rows.zip(&tagged) {
                if t {
                    (*x, *y) = move_one(*x, *y, vx, vy, dt);
                }
            }
        }),
        matched,
    ));
    drop(all);

    // Every entity boxed in allocation order, then the matching boxes moved into their own list.
    let mut boxes: Vec<Box<EntityState<f32>>> = states.iter().map(|s| Box::new(*s)).collect();
    let mut list = Vec::with_capacity(matched);
    let mut rest = Vec::with_capacity(n - matched.min(n));
    for (b, &t) in boxes.drain(..).zip(&tagged) {
        if t { list.push(b) } else { rest.push(b) }
    }
    out.push((
        "boxed-list",
        measure(&cfg.method, || {
            for e in list.iter_mut() {
                (e.x, e.y) = move_one(e.x, e.y, e.vx, e.vy, dt);
            }
        }),
        matched,
    ));
    drop((list, rest));

    let mut packed = Columns::from(&states, |i| tagged[i]);
    out.push((
        "packed-soa",
        measure(&cfg.method, || {
            let c = &mut packed;
            for (((x, y), &vx), &vy) in c.x.iter_mut().zip(&mut c.y).zip(&c.vx).zip(&c.vy) {
                (*x, *y) = move_one(*x, *y, vx, vy, dt);
            }
        }),
        matched,
    ));
    drop(packed);

    let mut ecs = EcsLayout::<f32>::table();
    let ids: Vec<u64> = (0..n as u64).collect();
    ecs.push(&ids, &states);
    let entities = ecs.entities().to_vec();
    let world = ecs.world_mut();
    for (e, &t) in entities.iter().zip(&tagged) {
        if t {
            world.entity_mut(*e).insert(Tagged);
        }
    }
    let mut query = world
        .query_filtered::<(&mut Position<f32, InTable>, &Velocity<f32, InTable>), With<Tagged>>();
    out.push((
        "ecs-with-filter",
        measure(&cfg.method, || {
            query.iter_mut(world).for_each(|(mut p, v)| {
                (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
            });
        }),
        matched,
    ));
    out
}

impl Experiment for Filtered {
    type Cell = Share;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: filtered iteration (mask, list, packed, archetype)"
    }

    fn title(&self) -> &'static str {
        "Filtered iteration: move only the entities that have a component"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Share> {
        SHARES.map(|percent| Share { percent }).to_vec()
    }

    fn run_cell(&self, cfg: &BenchConfig, share: &Share) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(1_000_000, 100_000);
        let mut out = Vec::new();
        for (layout, stats, matched) in run_share(cfg, n, share.percent) {
            let rec = Record::new(NAME, layout, "f32", n).param(share.to_string());
            out.push(rec.clone().with(Metric::PassMs, "ms", stats));
            out.push(rec.with(
                Metric::NsPerMatched,
                "ns",
                stats.scaled(1e6 / matched as f64),
            ));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let layouts = ["mask-scan", "boxed-list", "packed-soa", "ecs-with-filter"];
        let rows: Vec<Vec<String>> = SHARES
            .iter()
            .map(|p| {
                let param = format!("share={p}%");
                let mut row = vec![format!("{p}%")];
                for l in layouts {
                    let query = Query::metric(Metric::PassMs).layout(l).param(&param);
                    row.push(ms_and_ns(mine, query, Metric::PassMs, Metric::NsPerMatched));
                }
                row
            })
            .collect();
        format!(
            "{} entities, f32, move on the matching share; p50 ms per pass and ns per matched entity. JS study: packed {} ns per matched entity; separate object list {}..{} ns; mask scan {} ms at 50% vs {} ms at 100%.\n\n{}",
            cfg.pick(1_000_000, 100_000),
            studies::JS_PACKED_NS,
            studies::JS_LIST_NS_RANGE.0,
            studies::JS_LIST_NS_RANGE.1,
            studies::JS_MASK_MS_AT_50,
            studies::JS_MASK_MS_AT_100,
            table(
                &[
                    "share",
                    "mask scan (branch)",
                    "list of boxes",
                    "packed SoA",
                    "Bevy `With<T>`"
                ],
                &rows
            )
        )
    }
}

//! Random access: 200,000 lookups by id into 1M entities of F fields (F = 2..20), reading every
//! field of the entity found. SoA scatters one entity over F arrays; AoS keeps it in one record;
//! boxed objects add a dependent pointer load; 16 KiB chunks keep an entity's fields in one block
//! (F short columns a few hundred bytes apart). Beside them, a `HashMap` id -> object against
//! `Vec` indexing (the JS study's `Map` vs `a[id]`), and Bevy's `Query::get` and `World::get` on
//! the core's ECS layout (8 fields).
//!
//! A control for the suspected cause of SoA's loss here: the same SoA and AoS lookups with the
//! storage on 2 MiB transparent huge pages (`MADV_HUGEPAGE`). An SoA lookup touches F pages, an
//! AoS lookup one; with 4 KiB pages (x86 Linux; the JS study's M3 has 16 KiB) F columns of 8 MB
//! overrun the TLB's reach, and every field of a lookup pays a page walk.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::bench::kit::chunked::ChunkedFields;
use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::layout::ecs::EcsLayout;
use crate::layout::{Armor, Energy, Health, InTable, Position, Regen, Velocity};
use crate::workload::SEED;

pub struct RandomAccess;

const NAME: &str = "random-access";
const WIDTHS: [usize; 7] = [2, 4, 6, 8, 12, 16, 20];
const LOOKUPS: usize = 200_000;

fn value(i: usize, f: usize) -> f64 {
    ((i * 13 + f) % 997) as f64
}

fn random_ids(n: usize) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 0xACCE55);
    (0..LOOKUPS)
        .map(|_| (rng.next_u64() % n as u64) as usize)
        .collect()
}

fn soa<const F: usize>(n: usize, ids: &[usize], cfg: &BenchConfig) -> Stats {
    let columns: [Vec<f64>; F] = std::array::from_fn(|f| (0..n).map(|i| value(i, f)).collect());
    soa_lookups::<F>(std::array::from_fn(|f| columns[f].as_slice()), ids, cfg)
}

fn soa_lookups<const F: usize>(columns: [&[f64]; F], ids: &[usize], cfg: &BenchConfig) -> Stats {
    measure(&cfg.method, || {
        let mut sum = 0.0;
        for &id in ids {
            for column in &columns {
                sum += column[id];
            }
        }
        std::hint::black_box(sum);
    })
}

fn aos<const F: usize>(n: usize, ids: &[usize], cfg: &BenchConfig) -> Stats {
    let rows: Vec<[f64; F]> = (0..n)
        .map(|i| std::array::from_fn(|f| value(i, f)))
        .collect();
    aos_lookups(&rows, ids, cfg)
}

fn aos_lookups<const F: usize>(rows: &[[f64; F]], ids: &[usize], cfg: &BenchConfig) -> Stats {
    measure(&cfg.method, || {
        let mut sum = 0.0;
        for &id in ids {
            sum += rows[id].iter().sum::<f64>();
        }
        std::hint::black_box(sum);
    })
}

fn chunks<const F: usize>(n: usize, ids: &[usize], cfg: &BenchConfig) -> Stats {
    let chunks = ChunkedFields::<F>::new(n, value);
    measure(&cfg.method, || {
        let mut sum = 0.0;
        for &id in ids {
            for f in 0..F {
                sum += chunks.get(id, f);
            }
        }
        std::hint::black_box(sum);
    })
}

fn boxed<const F: usize>(n: usize, ids: &[usize], cfg: &BenchConfig) -> Stats {
    let boxes: Vec<Box<[f64; F]>> = (0..n)
        .map(|i| Box::new(std::array::from_fn(|f| value(i, f))))
        .collect();
    measure(&cfg.method, || {
        let mut sum = 0.0;
        for &id in ids {
            sum += boxes[id].iter().sum::<f64>();
        }
        std::hint::black_box(sum);
    })
}

/// `len` doubles in an anonymous mapping advised onto transparent huge pages, filled by `fill`.
fn huge_doubles(len: usize, fill: impl Fn(usize) -> f64) -> Result<memmap2::MmapMut, BenchError> {
    let fail = |e: std::io::Error| BenchError::Worker {
        experiment: NAME.into(),
        cell: "huge pages".into(),
        reason: e.to_string(),
    };
    let mut map = memmap2::MmapMut::map_anon(len * 8).map_err(fail)?;
    map.advise(memmap2::Advice::HugePage).map_err(fail)?;
    for (i, v) in bytemuck::cast_slice_mut::<u8, f64>(&mut map)
        .iter_mut()
        .enumerate()
    {
        *v = fill(i);
    }
    Ok(map)
}

/// Bytes of this process's memory on transparent huge pages (Linux), to show the advice took.
fn anon_huge_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("AnonHugePages:"))
                .and_then(|r| r.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// SoA and AoS lookups with the storage on huge pages; also returns the huge-page bytes in use.
fn huge<const F: usize>(
    n: usize,
    ids: &[usize],
    cfg: &BenchConfig,
) -> Result<(Stats, Stats, u64), BenchError> {
    let columns: Vec<memmap2::MmapMut> = (0..F)
        .map(|f| huge_doubles(n, |i| value(i, f)))
        .collect::<Result<_, _>>()?;
    let slices: [&[f64]; F] = std::array::from_fn(|f| bytemuck::cast_slice::<u8, f64>(&columns[f]));
    let soa = soa_lookups(slices, ids, cfg);
    let soa_huge = anon_huge_bytes();
    drop(columns);
    let rows = huge_doubles(n * F, |k| value(k / F, k % F))?;
    let aos = aos_lookups(bytemuck::cast_slice::<u8, [f64; F]>(&rows), ids, cfg);
    Ok((soa, aos, soa_huge.max(anon_huge_bytes())))
}

/// The JS study's `Map` test at six fields: the same boxed objects found through a hash map.
fn hashmap(n: usize, ids: &[usize], cfg: &BenchConfig) -> Stats {
    let map: HashMap<u64, Box<[f64; 6]>> = (0..n)
        .map(|i| (i as u64, Box::new(std::array::from_fn(|f| value(i, f)))))
        .collect();
    measure(&cfg.method, || {
        let mut sum = 0.0;
        for &id in ids {
            sum += map[&(id as u64)].iter().sum::<f64>();
        }
        std::hint::black_box(sum);
    })
}

/// `Query::get` and `World::get` on the core's ECS layout: all six components (8 fields).
fn ecs(n: usize, ids: &[usize], cfg: &BenchConfig) -> (Stats, Stats) {
    let mut layout = EcsLayout::<f64>::table();
    fill_seeded(&mut layout, n);
    let targets: Vec<bevy_ecs::entity::Entity> =
        ids.iter().map(|&i| layout.entities()[i]).collect();
    let world = layout.world_mut();
    let mut state = world.query::<(
        &Position<f64, InTable>,
        &Velocity<f64, InTable>,
        &Health<f64, InTable>,
        &Energy<f64, InTable>,
        &Regen<f64, InTable>,
        &Armor<f64, InTable>,
    )>();
    let query = state.query(world);
    let via_query = measure(&cfg.method, || {
        let mut sum = 0.0;
        for &e in &targets {
            if let Ok((p, v, h, en, r, a)) = query.get(e) {
                sum += p.x + p.y + v.x + v.y + h.hp + en.value + r.per_second + a.value;
            }
        }
        std::hint::black_box(sum);
    });
    let world = &*world;
    let via_world = measure(&cfg.method, || {
        let mut sum = 0.0;
        for &e in &targets {
            let (Some(p), Some(v), Some(h), Some(en), Some(r), Some(a)) = (
                world.get::<Position<f64, InTable>>(e),
                world.get::<Velocity<f64, InTable>>(e),
                world.get::<Health<f64, InTable>>(e),
                world.get::<Energy<f64, InTable>>(e),
                world.get::<Regen<f64, InTable>>(e),
                world.get::<Armor<f64, InTable>>(e),
            ) else {
                continue;
            };
            sum += p.x + p.y + v.x + v.y + h.hp + en.value + r.per_second + a.value;
        }
        std::hint::black_box(sum);
    });
    (via_query, via_world)
}

macro_rules! with_width {
    ($f:expr, $kernel:ident, $($args:expr),*) => {
        match $f {
            2 => $kernel::<2>($($args),*),
            4 => $kernel::<4>($($args),*),
            6 => $kernel::<6>($($args),*),
            8 => $kernel::<8>($($args),*),
            12 => $kernel::<12>($($args),*),
            16 => $kernel::<16>($($args),*),
            _ => $kernel::<20>($($args),*),
        }
    };
}

/// A cell: lookups into one store. `fields` is a width of [`WIDTHS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lookups {
    /// Boxed, SoA, AoS and chunks of `fields` fields: `fields=<width>`.
    Fields(usize),
    /// SoA and AoS of `fields` fields on huge pages: `huge-pages:fields=<width>`.
    HugePages(usize),
    /// A hash map of boxes: `hashmap`.
    Hashmap,
    /// Bevy's `Query::get` and `World::get`: `ecs`.
    Ecs,
}

impl fmt::Display for Lookups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lookups::Fields(fields) => write!(f, "fields={fields}"),
            Lookups::HugePages(fields) => write!(f, "huge-pages:fields={fields}"),
            Lookups::Hashmap => f.write_str("hashmap"),
            Lookups::Ecs => f.write_str("ecs"),
        }
    }
}

impl FromStr for Lookups {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = format!(
            "fields=<width>, huge-pages:fields=<width>, hashmap or ecs, a width of {WIDTHS:?}"
        );
        read_cell(text, &expected, |text| {
            let width = |form| {
                let [f] = holes(text, form)?;
                f.parse().ok().filter(|f| WIDTHS.contains(f))
            };
            match text {
                "hashmap" => Some(Lookups::Hashmap),
                "ecs" => Some(Lookups::Ecs),
                _ => width("fields={}")
                    .map(Lookups::Fields)
                    .or_else(|| width("huge-pages:fields={}").map(Lookups::HugePages)),
            }
        })
    }
}

impl Experiment for RandomAccess {
    type Cell = Lookups;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: random access by id (Map vs a[id])"
    }

    fn title(&self) -> &'static str {
        "Random access: 200,000 lookups by id, ns per lookup"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Lookups> {
        let mut cells: Vec<Lookups> = WIDTHS.map(Lookups::Fields).to_vec();
        cells.extend(WIDTHS.map(Lookups::HugePages));
        cells.push(Lookups::Hashmap);
        cells.push(Lookups::Ecs);
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Lookups) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(1_000_000, 100_000);
        let ids = random_ids(n);
        let per_lookup = 1e6 / LOOKUPS as f64;
        let rec = |layout: &str, fields: usize, stats: Stats| {
            Record::new(NAME, layout, "f64", n)
                .param(format!("fields={fields}"))
                .with(Metric::NsPerLookup, "ns", stats.scaled(per_lookup))
        };
        Ok(match *cell {
            Lookups::Hashmap => vec![rec("hashmap-boxed", 6, hashmap(n, &ids, cfg))],
            Lookups::HugePages(f) => {
                let (soa, aos, huge_bytes) = with_width!(f, huge, n, &ids, cfg)?;
                vec![
                    rec("soa-huge-pages", f, soa),
                    rec("aos-huge-pages", f, aos),
                    Record::new(NAME, "soa-huge-pages", "f64", n)
                        .param(format!("fields={f}"))
                        .value(
                            Metric::AnonHugePagesMib,
                            "MiB",
                            (huge_bytes as f64 / (1 << 20) as f64).max(f64::MIN_POSITIVE),
                        ),
                ]
            }
            Lookups::Ecs => {
                let (query, world) = ecs(n, &ids, cfg);
                vec![
                    rec("ecs-query-get", 8, query),
                    rec("ecs-world-get", 8, world),
                ]
            }
            Lookups::Fields(f) => {
                vec![
                    rec("boxed", f, with_width!(f, boxed, n, &ids, cfg)),
                    rec("soa", f, with_width!(f, soa, n, &ids, cfg)),
                    rec("aos", f, with_width!(f, aos, n, &ids, cfg)),
                    rec("chunks", f, with_width!(f, chunks, n, &ids, cfg)),
                ]
            }
        })
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let ns = |layout: &str, f: usize| {
            Query::metric(Metric::NsPerLookup)
                .layout(layout)
                .param(&format!("fields={f}"))
                .find(mine)
                .map(|r| r.p50)
        };
        let cell = |v: Option<f64>| v.map_or("-".into(), fmt_num);
        let rows: Vec<Vec<String>> = WIDTHS
            .iter()
            .map(|&f| {
                let values = [ns("boxed", f), ns("soa", f), ns("aos", f), ns("chunks", f)];
                let huge = [ns("soa-huge-pages", f), ns("aos-huge-pages", f)];
                let best = values
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| Some((i, (*v)?)))
                    .min_by(|a, b| a.1.total_cmp(&b.1))
                    .map_or("-", |(i, _)| ["boxed", "SoA", "AoS", "chunks"][i]);
                vec![
                    f.to_string(),
                    cell(values[0]),
                    cell(values[1]),
                    cell(values[2]),
                    cell(values[3]),
                    best.into(),
                    cell(huge[0]),
                    cell(huge[1]),
                ]
            })
            .collect();
        let mut md = format!(
            "{} entities, {LOOKUPS} random ids, every field of the entity read; p50 ns per lookup.\n\n{}",
            cfg.pick(1_000_000, 100_000),
            table(
                &[
                    "fields",
                    "boxed",
                    "SoA",
                    "AoS",
                    "chunks",
                    "fastest",
                    "SoA, huge pages",
                    "AoS, huge pages"
                ],
                &rows
            )
        );
        let huge_mib: f64 = mine
            .iter()
            .filter(|r| r.metric == Metric::AnonHugePagesMib)
            .map(|r| r.p50)
            .fold(0.0, f64::max);
        md.push_str(&format!(
            "\nHuge-page columns: the same lookups with the storage in anonymous mappings advised `MADV_HUGEPAGE`; up to {huge_mib:.0} MiB of this process were on transparent huge pages while they ran.\n"
        ));
        let map = ns("hashmap-boxed", 6);
        let vec6 = ns("boxed", 6);
        if let (Some(map), Some(vec6)) = (map, vec6) {
            md.push_str(&format!(
                "\n`HashMap<u64, Box<Entity>>` (std SipHash) vs `Vec<Box<Entity>>[id]` at 6 fields: {} vs {} ns, x{:.2} (JS study: `Map` {} vs `a[id]` {} ns, x{:.2}).\n",
                fmt_num(map),
                fmt_num(vec6),
                map / vec6,
                studies::JS_MAP_NS,
                studies::JS_ARRAY_NS,
                studies::JS_MAP_NS / studies::JS_ARRAY_NS
            ));
        }
        if let (Some(q), Some(w)) = (ns("ecs-query-get", 8), ns("ecs-world-get", 8)) {
            md.push_str(&format!(
                "\nBevy ECS, 8 fields in 6 components, by `Entity`: `Query::get` {} ns, `World::get` (one call per component) {} ns; SoA {} and AoS {} ns at 8 fields.\n",
                fmt_num(q),
                fmt_num(w),
                cell(ns("soa", 8)),
                cell(ns("aos", 8))
            ));
        }
        md
    }
}

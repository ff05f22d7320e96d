//! Memory is part of the layout story: bytes per entity of every layout, as payload (the fields
//! and id asked for), as allocated (what the layout counts from its capacities, or where no call
//! reports them a model, labelled so: an ECS library's storage design, glibc's chunk per box),
//! and as resident (what the process's RSS grew by while building the
//! population, measured by the OS). Each layout is built in its own child process so the heap of
//! one does not flatter or tax the next.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::layout::LayoutKind;
use crate::memory::{peak_resident_bytes, resident_bytes};
use crate::runtime::swarm::Swarm;
use crate::workload::SEED;

pub struct Memory;

/// `figure`, with " (modelled)" where `kind`'s allocated bytes are a model
/// ([`crate::memory::MemoryUse::modelled`]) rather than counted from capacities.
pub fn modelled_if(kind: LayoutKind, figure: String) -> String {
    let modelled = kind
        .create_cpu::<f32>()
        .is_some_and(|layout| layout.memory().modelled);
    if modelled {
        format!("{figure} (modelled)")
    } else {
        figure
    }
}

const NAME: &str = "memory";

/// A cell: one layout built with `n` entities in a process of its own, `<layout>:<entities>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Built {
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
    pub n: usize,
}

impl fmt::Display for Built {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.layout, self.n)
    }
}

impl FromStr for Built {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "<layout>:<entities>", |text| {
            let [layout, n] = holes(text, "{}:{}")?;
            Some(Built {
                layout: layout.parse().ok()?,
                n: n.parse().ok()?,
            })
        })
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    // 1M, the JS study's count; at 10M every layout holds about its bytes per entity at 1M
    // (docs/runs/suite).
    cfg.counts_or(cfg.pick(vec![1_000_000], vec![100_000]))
}

impl Experiment for Memory {
    type Cell = Built;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: bytes per entity (223.7 objects vs 63.7 typed arrays)"
    }

    fn title(&self) -> &'static str {
        "Memory: bytes per entity and resident memory"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Built> {
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for layout in cfg.layouts_of(&LayoutKind::CPU) {
                cells.push(Built { layout, n });
            }
        }
        cells
    }

    fn run_cell(
        &self,
        _cfg: &BenchConfig,
        &Built { layout: kind, n }: &Built,
    ) -> Result<Vec<Record>, BenchError> {
        crate::threads::pool();
        let before = resident_bytes();
        let swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
        let after = resident_bytes();
        let peak = peak_resident_bytes();
        let (payload, allocated) = swarm.memory().per_entity(n);
        let rec = Record::new(NAME, kind.name(), "f32", n);
        // What the OS did not say is left out, and the table shows it missing, never as 0.
        let resident = before.zip(after).map(|(before, after)| {
            let per_entity = after.saturating_sub(before) as f64 / n as f64;
            rec.clone()
                .value(Metric::ResidentBytesPerEntity, "B", per_entity)
        });
        let peak = peak.map(|peak| {
            rec.clone()
                .value(Metric::PeakRssMib, "MiB", peak as f64 / (1024.0 * 1024.0))
        });
        Ok([
            rec.clone()
                .value(Metric::PayloadBytesPerEntity, "B", payload),
            rec.value(Metric::AllocatedBytesPerEntity, "B", allocated),
        ]
        .into_iter()
        .chain(resident)
        .chain(peak)
        .collect())
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut md = String::new();
        for n in counts(cfg) {
            let rows: Vec<Vec<String>> = LayoutKind::CPU
                .iter()
                .map(|kind| {
                    let get = |metric: Metric| {
                        Query::metric(metric)
                            .layout(kind.name())
                            .n(n as u64)
                            .find(mine)
                            .map_or("-".into(), |r| fmt_num(r.p50))
                    };
                    vec![
                        format!("`{kind}`"),
                        get(Metric::PayloadBytesPerEntity),
                        modelled_if(*kind, get(Metric::AllocatedBytesPerEntity)),
                        get(Metric::ResidentBytesPerEntity),
                        get(Metric::PeakRssMib),
                    ]
                })
                .collect();
            md.push_str(&format!(
                "\n{} entities, f32 (payload 40 B: 8 fields x 4 B + an 8-byte id); resident = RSS growth while building, in a fresh process.\n\n{}",
                fmt_count(n as u64),
                table(
                    &["layout", "payload B/entity", "allocated B/entity", "resident B/entity", "peak RSS MiB"],
                    &rows
                )
            ));
        }
        md.push_str(&format!(
            "\nJS study at 1M (doubles): {} B per entity as objects, {} B in typed arrays.\n",
            studies::JS_BYTES_OBJECTS,
            studies::JS_BYTES_TYPED
        ));
        md
    }
}

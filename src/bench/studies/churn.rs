//! Churn: per frame, spawn 10,000 entities and swap-remove 10,000 picked at random from a base of
//! 100,000, in every layout (the ECS spawns in one `spawn_batch` and despawns entity by entity,
//! Bevy's only way). The victims are the same in every layout because all keep the same logical
//! order, so no layout needs an id -> index map for this; spawning includes seeding the new
//! entities (the same cost everywhere).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::swarm::Swarm;
use crate::workload::SEED;

pub struct Churn;

const NAME: &str = "churn";

/// The one cell: every layout, one after the other, in one process (`all`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EveryLayout;

impl fmt::Display for EveryLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("all")
    }
}

impl FromStr for EveryLayout {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "all", |text| (text == "all").then_some(EveryLayout))
    }
}

impl Experiment for Churn {
    type Cell = EveryLayout;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: churn (spawn and remove per frame)"
    }

    fn title(&self) -> &'static str {
        "Churn: spawn k and swap-remove k per frame"
    }

    fn narrows(&self) -> Narrows {
        Narrows::LAYOUTS
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<EveryLayout> {
        vec![EveryLayout]
    }

    fn run_cell(&self, cfg: &BenchConfig, _: &EveryLayout) -> Result<Vec<Record>, BenchError> {
        let (base, k) = cfg.pick((100_000, 10_000), (20_000, 2_000));
        let mut out = Vec::new();
        for kind in cfg.layouts_of(&LayoutKind::CPU) {
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
            let per_entity = stats.scaled(1e6 / (2 * k) as f64);
            let rec = Record::new(NAME, kind.name(), "f32", base).param(format!("k={k}"));
            out.push(rec.clone().with(Metric::ChurnMs, "ms", stats));
            out.push(rec.with(Metric::NsPerSpawnOrRemove, "ns", per_entity));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let (base, k) = cfg.pick((100_000, 10_000), (20_000, 2_000));
        let soa = Query::metric(Metric::ChurnMs)
            .layout("soa")
            .find(mine)
            .map(|r| r.p50);
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|kind| {
                let ms = Query::metric(Metric::ChurnMs)
                    .layout(kind.name())
                    .find(mine)?;
                let ns = Query::metric(Metric::NsPerSpawnOrRemove)
                    .layout(kind.name())
                    .find(mine)?;
                Some(vec![
                    format!("`{kind}`"),
                    fmt_num(ms.p50),
                    fmt_num(ns.p50),
                    soa.map_or("-".into(), |s| format!("x{:.2}", ms.p50 / s)),
                ])
            })
            .collect();
        format!(
            "Base {base} entities, {k} spawned and {k} removed per frame, f32; p50.\n\n{}",
            table(
                &[
                    "layout",
                    "ms per frame",
                    "ns per spawn or removal",
                    "vs SoA"
                ],
                &rows
            )
        )
    }
}

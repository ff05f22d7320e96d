//! Archetype migration (past the studies, which sidestepped it): each frame, add or remove a
//! marker component on k% of the ECS entities, then run move + regen. With a table-stored marker
//! every toggle moves the entity's whole row to another table; with a sparse-set marker the row
//! stays put and only the archetype bookkeeping changes. The k = 0 row is the plain frame.

use std::fmt;
use std::str::FromStr;

use bevy_ecs::prelude::Component;
use serde::{Deserialize, Serialize};

use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::Layout;
use crate::layout::ecs::EcsLayout;
use crate::threads::Threads;
use crate::workload::Dt;

pub struct Migration;

const NAME: &str = "migration";
const PERCENTS: [usize; 3] = [0, 1, 10];

#[derive(Component, Default)]
struct TableMarker;

#[derive(Component, Default)]
#[component(storage = "SparseSet")]
struct SparseMarker;

fn frame_with_toggles<M: Component + Default>(
    cfg: &BenchConfig,
    n: usize,
    percent: usize,
) -> crate::bench::report::harness::Stats {
    let mut layout = EcsLayout::<f32>::table();
    fill_seeded(&mut layout, n);
    let entities = layout.entities().to_vec();
    let per_frame = n * percent / 100;
    let dt = Dt::default().as_scalar::<f32>();
    let mut cursor = 0usize;
    measure(&cfg.method, || {
        let world = layout.world_mut();
        for _ in 0..per_frame {
            let mut entity = world.entity_mut(entities[cursor]);
            if entity.contains::<M>() {
                entity.remove::<M>();
            } else {
                entity.insert(M::default());
            }
            cursor = (cursor + 1) % entities.len();
        }
        layout.step_move(dt, Threads::One);
        layout.step_regen(dt, Threads::One);
    })
}

/// Where the toggled marker lives: in the entity's table (a move between archetypes) or in a
/// sparse set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Marker {
    Table,
    Sparse,
}

impl Marker {
    const BOTH: [Marker; 2] = [Marker::Table, Marker::Sparse];

    /// As the cells spell it, and the records after `ecs-table+`.
    fn name(self) -> &'static str {
        match self {
            Marker::Table => "table-marker",
            Marker::Sparse => "sparse-marker",
        }
    }
}

/// A cell: a marker toggled on `percent` (0 to 100) of the entities every frame,
/// `table-marker:<percent>` or `sparse-marker:<percent>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toggled {
    pub marker: Marker,
    pub percent: usize,
}

impl fmt::Display for Toggled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.marker.name(), self.percent)
    }
}

impl FromStr for Toggled {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = "table-marker:<percent> or sparse-marker:<percent>, 0 to 100";
        read_cell(text, expected, |text| {
            let [marker, percent] = holes(text, "{}:{}")?;
            Some(Toggled {
                marker: Marker::BOTH.into_iter().find(|m| m.name() == marker)?,
                percent: percent.parse().ok().filter(|p| *p <= 100)?,
            })
        })
    }
}

impl Experiment for Migration {
    type Cell = Toggled;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (sidestepped): archetype migration"
    }

    fn title(&self) -> &'static str {
        "Archetype migration: add/remove a component on k% of entities per frame (past the studies)"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Toggled> {
        let mut cells = Vec::new();
        for percent in PERCENTS {
            cells.push(Toggled {
                marker: Marker::Table,
                percent,
            });
            if percent > 0 {
                cells.push(Toggled {
                    marker: Marker::Sparse,
                    percent,
                });
            }
        }
        cells
    }

    fn run_cell(
        &self,
        cfg: &BenchConfig,
        &Toggled { marker, percent }: &Toggled,
    ) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(1_000_000, 100_000);
        let stats = match marker {
            Marker::Sparse => frame_with_toggles::<SparseMarker>(cfg, n, percent),
            Marker::Table => frame_with_toggles::<TableMarker>(cfg, n, percent),
        };
        Ok(vec![
            Record::new(NAME, format!("ecs-table+{}", marker.name()), "f32", n)
                .param(format!("k={percent}%"))
                .with(Metric::FrameMs, "ms", stats),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let n = cfg.pick(1_000_000, 100_000);
        let base = Query::metric(Metric::FrameMs)
            .layout("ecs-table+table-marker")
            .param("k=0%")
            .find(mine)
            .map(|r| r.p50);
        let mut rows = Vec::new();
        for p in PERCENTS {
            for marker in ["table-marker", "sparse-marker"] {
                if p == 0 && marker == "sparse-marker" {
                    continue;
                }
                let Some(r) = Query::metric(Metric::FrameMs)
                    .layout(&format!("ecs-table+{marker}"))
                    .param(&format!("k={p}%"))
                    .find(mine)
                else {
                    continue;
                };
                let moved = n * p / 100;
                let per = match (base, moved) {
                    (Some(b), m) if m > 0 => {
                        format!("{} ns", fmt_num((r.p50 - b) * 1e6 / m as f64))
                    }
                    _ => "-".into(),
                };
                rows.push(vec![
                    format!("{p}%"),
                    marker.into(),
                    fmt_num(r.p50),
                    base.map_or("-".into(), |b| format!("x{:.2}", r.p50 / b)),
                    per,
                ]);
            }
        }
        format!(
            "{n} entities, Bevy ECS (table), f32; frame = toggle a marker on k% of entities, then move + regen, one thread.\n\n{}",
            table(
                &[
                    "k",
                    "marker storage",
                    "ms per frame",
                    "vs no migration",
                    "extra per toggle"
                ],
                &rows
            )
        )
    }
}

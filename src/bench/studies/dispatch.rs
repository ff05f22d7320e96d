//! Dispatch: the two-field move system over 1M entities as `Vec<Box<dyn Agent>>` with 1, 2, 4 and
//! 12 concrete kinds, against the same objects without virtual calls (`boxed`) and SoA: Rust's
//! counterpart of the JS study's object shapes. A control changes only the suspected cause:
//! twelve kinds in contiguous blocks (same objects, same allocation order, same vtables, but the
//! call target changes 12 times per pass instead of at random), which isolates branch
//! misprediction of the indirect call from everything else.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, by_name, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::layout::dyn_agents::DynAgents;
use crate::layout::{Layout, LayoutKind};
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;
use crate::workload::SEED;

pub struct Dispatch;

const NAME: &str = "dispatch";
/// The control's name: twelve kinds in contiguous blocks.
const BLOCKS: &str = "dyn-12-blocks";

/// A cell: one row, a layout or the control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Row {
    Layout(#[serde(with = "by_name")] LayoutKind),
    Blocks,
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Row::Layout(kind) => kind.fmt(f),
            Row::Blocks => f.write_str(BLOCKS),
        }
    }
}

impl FromStr for Row {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, &format!("a layout or {BLOCKS}"), |text| match text {
            BLOCKS => Some(Row::Blocks),
            _ => text.parse().ok().map(Row::Layout),
        })
    }
}

fn move_only(layout: &mut dyn Layout<f32>, cfg: &BenchConfig) -> Stats {
    let dt = Dt::default().as_scalar::<f32>();
    measure(&cfg.method, || layout.step_move(dt, Threads::One))
}

fn rows() -> Vec<Row> {
    vec![
        Row::Layout(LayoutKind::Soa),
        Row::Layout(LayoutKind::Boxed),
        Row::Layout(LayoutKind::Dyn(1)),
        Row::Layout(LayoutKind::Dyn(2)),
        Row::Layout(LayoutKind::Dyn(4)),
        Row::Layout(LayoutKind::Dyn(12)),
        Row::Blocks,
    ]
}

impl Experiment for Dispatch {
    type Cell = Row;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: object shapes (1 vs 12 kinds), as virtual calls"
    }

    fn title(&self) -> &'static str {
        "Dispatch: virtual calls over 1, 2, 4 and 12 kinds"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Row> {
        rows()
    }

    fn run_cell(&self, cfg: &BenchConfig, row: &Row) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(1_000_000, 100_000);
        let stats = match *row {
            Row::Blocks => {
                let mut layout = DynAgents::<f32>::new_in_blocks(12, n);
                fill_seeded(&mut layout, n);
                move_only(&mut layout, cfg)
            }
            Row::Layout(kind) => {
                let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
                let layout = swarm.layout_mut().ok_or_else(|| BenchError::Worker {
                    experiment: NAME.into(),
                    cell: row.to_string(),
                    reason: "a fresh swarm had no layout to hand out (a switch was pending)".into(),
                })?;
                move_only(layout, cfg)
            }
        };
        Ok(vec![Record::new(NAME, row.to_string(), "f32", n).with(
            Metric::MoveMs,
            "ms",
            stats,
        )])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let ms = |l: &str| {
            Query::metric(Metric::MoveMs)
                .layout(l)
                .find(mine)
                .map(|r| r.p50)
        };
        let one = ms("dyn-1");
        let table_rows: Vec<Vec<String>> = rows()
            .into_iter()
            .filter_map(|l| {
                let v = ms(&l.to_string())?;
                Some(vec![
                    format!("`{l}`"),
                    fmt_num(v),
                    one.map_or("-".into(), |o| format!("x{:.2}", v / o)),
                ])
            })
            .collect();
        format!(
            "{} entities, f32, move only, one thread; p50 ms per pass. JS study (shapes): 1 shape {} ms, 12 shapes {} ms (x{:.1}), SoA {} ms.\n\n{}",
            cfg.pick(1_000_000, 100_000),
            studies::JS_SHAPES_1_MS,
            studies::JS_SHAPES_12_MS,
            studies::JS_SHAPES_12_MS / studies::JS_SHAPES_1_MS,
            studies::JS_SHAPES_SOA_MS,
            table(&["layout", "ms per pass", "vs dyn-1"], &table_rows)
        )
    }
}

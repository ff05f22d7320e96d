//! Dispatch: the two-field move system over 1M entities as `Vec<Box<dyn Agent>>` with 1, 2, 4 and
//! 12 concrete kinds, against the same objects without virtual calls (`boxed`) and SoA: Rust's
//! counterpart of the JS study's object shapes. A control changes only the suspected cause:
//! twelve kinds in contiguous blocks (same objects, same allocation order, same vtables, but the
//! call target changes 12 times per pass instead of at random), which isolates branch
//! misprediction of the indirect call from everything else.

use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::experiment::Cell;
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

fn move_only(layout: &mut dyn Layout<f32>, cfg: &BenchConfig) -> Stats {
    let dt = Dt::default().as_scalar::<f32>();
    measure(&cfg.method, || layout.step_move(dt, Threads::One))
}

fn rows() -> Vec<&'static str> {
    vec![
        "soa",
        "boxed",
        "dyn-1",
        "dyn-2",
        "dyn-4",
        "dyn-12",
        "dyn-12-blocks",
    ]
}

impl Experiment for Dispatch {
    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: object shapes (1 vs 12 kinds), as virtual calls"
    }

    fn title(&self) -> &'static str {
        "Dispatch: virtual calls over 1, 2, 4 and 12 kinds"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        rows().into_iter().map(String::from).collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let n = cfg.pick(1_000_000, 100_000);
        let stats = if cell == "dyn-12-blocks" {
            let mut layout = DynAgents::<f32>::new_in_blocks(12, n);
            fill_seeded(&mut layout, n);
            move_only(&mut layout, cfg)
        } else {
            let kind = cell.parse::<LayoutKind>()?;
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
            let layout = swarm.layout_mut().ok_or_else(|| {
                Cell::new(NAME, cell).bad("a fresh swarm, without a pending switch")
            })?;
            move_only(layout, cfg)
        };
        Ok(vec![Record::new(NAME, cell, "f32", n).with(
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
                let v = ms(l)?;
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

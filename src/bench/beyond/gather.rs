//! Gather: the only per-layout part of the app's rendering, `gather_points` (read x, y and hp,
//! write one packed 4-byte point per entity), timed alone without a renderer competing for the
//! cores, for every layout on one thread and on all.

use crate::bench::kit::cells::Count;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{ms_and_ns, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::SEED;

pub struct Gather;

const NAME: &str = "gather";

impl Experiment for Gather {
    type Cell = Count;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (no renderer): packing points to draw"
    }

    fn title(&self) -> &'static str {
        "Gather: packing every entity's point for the renderer"
    }

    fn narrows(&self) -> Narrows {
        Narrows::LAYOUTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Count> {
        vec![Count {
            n: cfg.pick(1_000_000, 100_000),
        }]
    }

    fn run_cell(&self, cfg: &BenchConfig, &Count { n }: &Count) -> Result<Vec<Record>, BenchError> {
        let mut out = Vec::new();
        let mut points = Vec::new();
        for kind in cfg.layouts_of(&LayoutKind::CPU) {
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
            for threads in Threads::BOTH {
                let stats = measure(&cfg.method, || swarm.gather_points(&mut points, threads));
                let rec = Record::new(NAME, kind.name(), "f32", n).threads(threads);
                out.push(rec.clone().with(Metric::GatherMs, "ms", stats));
                out.push(rec.with(Metric::NsPerEntity, "ns", stats.scaled(1e6 / n as f64)));
            }
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .map(|kind| {
                let mut row = vec![format!("`{kind}`")];
                for threads in ["1", "all"] {
                    let name = kind.name();
                    let query = Query::metric(Metric::GatherMs)
                        .layout(name)
                        .threads(threads);
                    row.push(ms_and_ns(
                        mine,
                        query,
                        Metric::GatherMs,
                        Metric::NsPerEntity,
                    ));
                }
                row
            })
            .collect();
        format!(
            "{} entities, f32; p50 per gather and per entity (reads 12 B, writes 4 B per entity).\n\n{}",
            cfg.pick(1_000_000, 100_000),
            table(&["layout", "1 thread", "all threads"], &rows)
        )
    }
}

//! Past the studies (they ran one thread): every layout on one thread and on all cores of Bevy's
//! compute pool, the same frame (move + regen), f32. A memory-bound loop may not scale with cores
//! when one core already saturates the memory bus; the ratio says how much it did here.

use crate::bench::kit::cells::Count;
use crate::bench::kit::frames::frame_stats;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::threads::{Threads, core_count};

pub struct ThreadScaling;

const NAME: &str = "threads";

impl Experiment for ThreadScaling {
    type Cell = Count;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (they ran one thread): all cores"
    }

    fn title(&self) -> &'static str {
        "Threads: one vs all cores (past the studies)"
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
        for kind in cfg.layouts_of(&LayoutKind::CPU) {
            for threads in Threads::BOTH {
                let stats = frame_stats::<f32>(kind, n, threads, &cfg.method)?;
                out.push(
                    Record::new(NAME, kind.name(), "f32", n)
                        .threads(threads)
                        .with(Metric::FrameMs, "ms", stats),
                );
            }
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|kind| {
                let one = Query::metric(Metric::FrameMs)
                    .layout(kind.name())
                    .scalar("f32")
                    .threads("1")
                    .find(mine)?;
                let all = Query::metric(Metric::FrameMs)
                    .layout(kind.name())
                    .scalar("f32")
                    .threads("all")
                    .find(mine)?;
                Some(vec![
                    format!("`{kind}`"),
                    fmt_num(one.p50),
                    fmt_num(all.p50),
                    format!("x{:.2}", one.p50 / all.p50),
                ])
            })
            .collect();
        format!(
            "{} entities, f32, move + regen; p50 ms per frame; all = {} pool threads.\n\n{}",
            cfg.pick(1_000_000, 100_000),
            core_count(),
            table(&["layout", "1 thread", "all threads", "speedup"], &rows)
        )
    }
}

//! Layouts: p50 ms per frame (move + regen) for every layout and variant at 1k..10M entities, in
//! `f32` (the app's) and `f64` (the JS study's doubles), one thread. Entities per ms and the
//! speedup against `Vec<Box<Entity>>` beside it; the JS study's and the C++ article's figures
//! beside ours where they gave one.

use crate::bench::kit::cells::Count;
use crate::bench::kit::frames::frame_stats;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table, vs_study};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures::js_layout_ms;
use crate::layout::LayoutKind;
use crate::runtime::catalog::AllLayouts;
use crate::threads::Threads;

pub struct Layouts;

pub const NAME: &str = "layouts";

pub fn default_counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts.clone().unwrap_or_else(|| {
        cfg.pick(
            vec![1_000, 10_000, 100_000, 1_000_000, 10_000_000],
            vec![1_000, 10_000, 100_000],
        )
    })
}

/// From this count the sweep runs f64 for every layout and f32 for the front page's only.
const F64_ONLY_FROM: usize = 10_000_000;

/// The layouts of README's first table, in its order: the mission's four (Bevy's archetype ECS,
/// SoA, AoS, boxed objects), then Bevy's tuned form and virtual calls over one kind.
pub const FRONT_PAGE: [LayoutKind; 6] = [
    LayoutKind::EcsTable,
    LayoutKind::Soa,
    LayoutKind::Aos,
    LayoutKind::Boxed,
    LayoutKind::EcsContiguous,
    LayoutKind::Dyn(1),
];

fn sweep<S: AllLayouts>(
    cfg: &BenchConfig,
    n: usize,
    kinds: &[LayoutKind],
) -> Result<Vec<Record>, BenchError> {
    let mut out = Vec::new();
    for kind in cfg.layouts_of(kinds) {
        let stats = frame_stats::<S>(kind, n, Threads::One, &cfg.method)?;
        out.push(Record::new(NAME, kind.name(), S::NAME, n).with(Metric::FrameMs, "ms", stats));
    }
    Ok(out)
}

impl Experiment for Layouts {
    type Cell = Count;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: layouts table (objects, SoA, AoS; 1k..1M); C++ article: OOP vs ECS at 1M"
    }

    fn title(&self) -> &'static str {
        "Layouts: ms per frame, move + regen, one thread"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Count> {
        default_counts(cfg)
            .into_iter()
            .map(|n| Count { n })
            .collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, &Count { n }: &Count) -> Result<Vec<Record>, BenchError> {
        // At 10M, f64 for every layout (the crossings bracket their searches with it) and f32
        // for the front page's layouts only: 10M is most of this experiment's time
        // (docs/runs/bench-first-try).
        let f32_kinds: &[LayoutKind] = if n < F64_ONLY_FROM {
            &LayoutKind::CPU
        } else {
            &FRONT_PAGE
        };
        let mut out = sweep::<f32>(cfg, n, f32_kinds)?;
        out.extend(sweep::<f64>(cfg, n, &LayoutKind::CPU)?);
        Ok(out)
    }

    fn render(&self, _cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut counts: Vec<u64> = mine.iter().map(|r| r.n).collect();
        counts.sort_unstable();
        counts.dedup();
        let mut md = String::new();
        for scalar in ["f32", "f64"] {
            md.push_str(&format!(
                "\n### {scalar}: p50 ms per frame (in parentheses: the JS study's figure for its matching column, and our/study ratio)\n\n"
            ));
            let mut header = vec!["layout".to_string()];
            header.extend(counts.iter().map(|&n| fmt_count(n)));
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let rows: Vec<Vec<String>> = LayoutKind::CPU
                .iter()
                .map(|kind| {
                    let mut row = vec![format!("{} (`{}`)", kind.label(), kind.name())];
                    for &n in &counts {
                        let cell = Query::metric(Metric::FrameMs)
                            .layout(kind.name())
                            .scalar(scalar)
                            .threads("1")
                            .n(n)
                            .find(mine);
                        row.push(cell.map_or("-".into(), |r| {
                            let study = (scalar == "f64")
                                .then(|| js_layout_ms(kind.name(), n))
                                .flatten();
                            vs_study(r.p50, study)
                        }));
                    }
                    row
                })
                .collect();
            md.push_str(&table(&header, &rows));
            // The speedups in the JS study's scalar only, as the study gives them: the f32 ones
            // follow from the table above.
            if scalar != "f64" {
                continue;
            }
            md.push_str(&format!(
                "\n{scalar}: entities per ms (p50) and speedup against `boxed` (Vec<Box<Entity>>)\n\n"
            ));
            let rows: Vec<Vec<String>> = LayoutKind::CPU
                .iter()
                .map(|kind| {
                    let mut row = vec![format!("`{}`", kind.name())];
                    for &n in &counts {
                        let me = Query::metric(Metric::FrameMs)
                            .layout(kind.name())
                            .scalar(scalar)
                            .threads("1")
                            .n(n)
                            .find(mine);
                        let boxed = Query::metric(Metric::FrameMs)
                            .layout("boxed")
                            .scalar(scalar)
                            .threads("1")
                            .n(n)
                            .find(mine);
                        row.push(match (me, boxed) {
                            (Some(me), Some(b)) => format!(
                                "{} /ms, x{:.2}",
                                fmt_num(n as f64 / me.p50),
                                b.p50 / me.p50
                            ),
                            _ => "-".into(),
                        });
                    }
                    row
                })
                .collect();
            md.push_str(&table(&header, &rows));
        }
        md
    }
}

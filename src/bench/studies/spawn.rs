//! The spawn pattern as a control: entities are born in streams (so that millions read on screen)
//! where the studies drew everything uniformly at random. The two systems do the same arithmetic
//! whatever the values, with one data-dependent branch, the wrap; this experiment shows the
//! pattern does not move the timings. Per layout, both populations are built once and measured in
//! interleaved rounds (uniform, streams, uniform, ...); each round gives one ratio.

use crate::bench::kit::cells::Count;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::SEED;
use crate::workload::{Dt, SpawnPattern};

pub struct Spawn;

const NAME: &str = "spawn";

fn count(cfg: &BenchConfig) -> usize {
    cfg.pick(1_000_000, 100_000)
}

impl Experiment for Spawn {
    type Cell = Count;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "control: the app's spawn streams against the studies' uniform draw"
    }

    fn title(&self) -> &'static str {
        "Spawn pattern: streams (the app's) against uniform (the studies'), interleaved rounds"
    }

    fn narrows(&self) -> Narrows {
        Narrows::LAYOUTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Count> {
        vec![Count { n: count(cfg) }]
    }

    fn run_cell(&self, cfg: &BenchConfig, &Count { n }: &Count) -> Result<Vec<Record>, BenchError> {
        let rounds = cfg.pick(7, 3);
        let method = cfg.method.per_round();
        let dt = Dt::default();
        let mut out = Vec::new();
        for kind in cfg.layouts_of(&LayoutKind::CPU) {
            let mut swarms = [SpawnPattern::Uniform, SpawnPattern::Streams].map(|pattern| {
                let mut swarm = Swarm::<f32>::new(kind, SEED)?;
                swarm.set_spawn_pattern(pattern);
                swarm.resize(n).map(|()| swarm)
            });
            let mut ms = [Vec::new(), Vec::new()];
            for _ in 0..rounds {
                for (swarm, samples) in swarms.iter_mut().zip(ms.iter_mut()) {
                    let swarm = swarm.as_mut().map_err(|e| e.clone())?;
                    samples.push(measure(&method, || swarm.step(dt, Threads::One)).p50);
                }
            }
            let ratios: Vec<f64> = ms[1].iter().zip(&ms[0]).map(|(s, u)| s / u).collect();
            let rec = Record::new(NAME, kind.name(), "f32", n);
            for (pattern, samples) in [SpawnPattern::Uniform, SpawnPattern::Streams]
                .iter()
                .zip(ms)
            {
                out.push(rec.clone().param(pattern.name()).with(
                    Metric::FrameMs,
                    "ms",
                    Stats::from_samples(samples),
                ));
            }
            out.push(rec.with(
                Metric::RatioStreamsToUniform,
                "x",
                Stats::from_samples(ratios),
            ));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|kind| {
                let name = kind.name();
                let get = |param: &str| {
                    Query::metric(Metric::FrameMs)
                        .layout(name)
                        .param(param)
                        .find(mine)
                };
                let ratio = Query::metric(Metric::RatioStreamsToUniform)
                    .layout(name)
                    .find(mine)?;
                Some(vec![
                    format!("`{name}`"),
                    fmt_num(get("uniform")?.p50),
                    fmt_num(get("streams")?.p50),
                    format!(
                        "x{:.3} (p10 x{:.3}, p90 x{:.3}, {} rounds)",
                        ratio.p50, ratio.p10, ratio.p90, ratio.samples
                    ),
                ])
            })
            .collect();
        format!(
            "{} entities, f32, one thread, move + regen: p50 ms per frame of each pattern, and the median of the per-round ratios.\n\n{}",
            fmt_count(count(cfg) as u64),
            table(
                &["layout", "uniform, ms", "streams, ms", "streams / uniform"],
                &rows
            )
        )
    }
}

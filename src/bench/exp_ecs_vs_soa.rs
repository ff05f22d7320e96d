//! Bevy's ECS against hand-rolled SoA, the storage core's targets: at 1M and 10M entities on one
//! thread, the tuned ECS (`contiguous_iter_mut`) within 1.15x of SoA and the idiomatic one
//! (`Query::iter_mut().for_each`) within 2x. Ratios drift with a shared machine's load, so the
//! three populations are built once and measured in interleaved rounds (SoA, tuned, idiomatic,
//! SoA, ...); each round gives one ratio, and the table reports their median and spread.

use super::harness::{Method, Stats, measure};
use super::record::{Record, find};
use super::{BenchConfig, BenchError, Experiment, SEED, fmt_count, table};
use crate::layout::LayoutKind;
use crate::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;

pub struct EcsVsSoa;

const NAME: &str = "ecs-vs-soa";
const KINDS: [LayoutKind; 3] = [
    LayoutKind::Soa,
    LayoutKind::EcsContiguous,
    LayoutKind::EcsTable,
];

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(vec![1_000_000, 10_000_000], vec![100_000])
}

impl Experiment for EcsVsSoa {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "ECS vs SoA: the storage core's targets, interleaved rounds"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        counts(cfg).into_iter().map(|n| format!("n={n}")).collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let n: usize = cell.trim_start_matches("n=").parse().unwrap_or(100_000);
        let rounds = cfg.pick(9, 3);
        let method = Method {
            min_samples: cfg.method.min_samples.min(7),
            max_samples: cfg.method.min_samples.min(7),
            ..cfg.method
        };
        let mut swarms: Vec<Swarm<f32>> = KINDS
            .iter()
            .map(|&k| Swarm::with_count(k, SEED, n))
            .collect::<Result<_, _>>()?;
        let mut per_round: Vec<[f64; 3]> = Vec::new();
        for _ in 0..rounds {
            let mut round = [0.0; 3];
            for (slot, swarm) in round.iter_mut().zip(swarms.iter_mut()) {
                *slot = measure(&method, || swarm.step(Dt::default(), Threads::One)).p50;
            }
            per_round.push(round);
        }
        let mut out = Vec::new();
        for (i, kind) in KINDS.iter().enumerate() {
            let ms = Stats::from_samples(per_round.iter().map(|r| r[i]).collect());
            let ratio = Stats::from_samples(per_round.iter().map(|r| r[i] / r[0]).collect());
            let rec = Record::new(NAME, kind.name(), "f32", n);
            out.push(rec.clone().with("frame_ms", "ms", ms));
            out.push(rec.with("ratio_vs_soa", "x", ratio));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut rows = Vec::new();
        for n in counts(cfg) {
            for (kind, target) in [
                (LayoutKind::EcsContiguous, 1.15),
                (LayoutKind::EcsTable, 2.0),
            ] {
                let (Some(r), Some(ms), Some(soa)) = (
                    find(mine, &kind.name(), "f32", "1", n as u64, "", "ratio_vs_soa"),
                    find(mine, &kind.name(), "f32", "1", n as u64, "", "frame_ms"),
                    find(mine, "soa", "f32", "1", n as u64, "", "frame_ms"),
                ) else {
                    continue;
                };
                rows.push(vec![
                    fmt_count(n as u64),
                    format!("`{kind}`"),
                    format!("{:.2} vs {:.2} ms", ms.p50, soa.p50),
                    format!(
                        "x{:.3} (p10 x{:.3}, p90 x{:.3}, {} rounds)",
                        r.p50, r.p10, r.p90, r.samples
                    ),
                    format!(
                        "<= x{target:.2}: {}",
                        if r.p50 <= target { "met" } else { "NOT met" }
                    ),
                ]);
            }
        }
        format!(
            "f32, one thread, move + regen; each round measures SoA, the tuned ECS and the idiomatic ECS back to back.\n\n{}",
            table(
                &[
                    "entities",
                    "layout",
                    "p50 frame (vs SoA)",
                    "ratio to SoA, median of rounds",
                    "target"
                ],
                &rows
            )
        )
    }
}

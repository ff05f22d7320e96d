//! Past the studies and past every comparable demo: the gpu layout, simulated by compute passes
//! on whatever adapter this machine has, against SoA on the CPU (one thread and all cores) in
//! the same cell. Wall time is step + wait for the device; where the adapter has timestamp
//! queries their time is reported beside it. Effective bandwidth counts the bytes the passes
//! must move: move reads x, y, vx, vy, hp and writes x, y and the point (32 B), regen reads
//! energy and regen and writes energy (12 B): 44 B per entity per frame.
//! Without an adapter the experiment says why and runs nothing; that is not an error. A software
//! rasterizer (lavapipe) is labelled as one: its "GPU" is this machine's CPU.

use crate::bench::kit::cells::Count;
use crate::bench::kit::frames::frame_stats;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::catalog::DeviceTime;
use crate::runtime::catalog::capacity_limit;
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;

pub struct Gpu;

const NAME: &str = "gpu";
const SEED: u64 = 42;
/// Bytes each frame must read and write per entity (module doc).
const BYTES_PER_ENTITY: f64 = 44.0;

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(
        vec![1_000_000, 10_000_000, 100_000_000],
        vec![100_000, 1_000_000],
    )
}

impl Experiment for Gpu {
    type Cell = Count;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: a GPU-resident layout"
    }

    fn title(&self) -> &'static str {
        "GPU-resident layout: compute passes vs SoA on the CPU (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Count> {
        if let Err(reason) = crate::runtime::gpu::context::availability() {
            eprintln!("gpu: skipped, {reason}");
            return Vec::new();
        }
        counts(cfg).into_iter().map(|n| Count { n }).collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, &Count { n }: &Count) -> Result<Vec<Record>, BenchError> {
        if let Some(limit) = capacity_limit(LayoutKind::Gpu)
            && n > limit.max_entities
        {
            eprintln!("gpu: {n} entities skipped: {}", limit.limit);
            return Ok(Vec::new());
        }
        let mut out = adapter_record(NAME, n).into_iter().collect::<Vec<_>>();
        let dt = Dt::default();
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Gpu, SEED, n)?;
        let mut timestamps = Vec::new();
        let wall = measure(&cfg.method, || {
            swarm.step(dt, Threads::One);
            swarm.finish_device_work();
            if let Some(DeviceTime::Measured(d)) = swarm.device_time() {
                timestamps.push(d.as_secs_f64() * 1e3);
            }
        });
        out.push(Record::new(NAME, "gpu", "f32", n).with(Metric::SimulateMs, "ms", wall));
        // A rate is the inverse of a time: the slow end of the times is the low end of the rates.
        let gb_s = |ms: f64| BYTES_PER_ENTITY * n as f64 / (ms * 1e6);
        let rate = Stats {
            p10: gb_s(wall.p90),
            p50: gb_s(wall.p50),
            p90: gb_s(wall.p10),
            samples: wall.samples,
        };
        out.push(Record::new(NAME, "gpu", "f32", n).with(Metric::EffectiveGbS, "GB/s", rate));
        if !timestamps.is_empty() {
            out.push(Record::new(NAME, "gpu", "f32", n).with(
                Metric::TimestampMs,
                "ms",
                Stats::from_samples(timestamps),
            ));
        }
        drop(swarm);
        for threads in Threads::BOTH {
            let stats = frame_stats::<f32>(LayoutKind::Soa, n, threads, &cfg.method)?;
            out.push(Record::new(NAME, "soa", "f32", n).threads(threads).with(
                Metric::SimulateMs,
                "ms",
                stats,
            ));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        if mine.is_empty() {
            return NOTHING_MEASURED.into();
        }
        let adapter = adapter_of(mine);
        let rows: Vec<Vec<String>> = counts(cfg)
            .into_iter()
            .filter_map(|n| {
                let q = |layout: &str, metric: Metric, threads: &str| {
                    Query::metric(metric)
                        .layout(layout)
                        .scalar("f32")
                        .threads(threads)
                        .n(n as u64)
                        .find(mine)
                        .map(|r| r.p50)
                };
                let gpu = q("gpu", Metric::SimulateMs, "1")?;
                let soa_one = q("soa", Metric::SimulateMs, "1")?;
                let soa_all = q("soa", Metric::SimulateMs, "all")?;
                Some(vec![
                    fmt_num(n as f64),
                    fmt_num(gpu),
                    q("gpu", Metric::TimestampMs, "1").map_or("-".into(), fmt_num),
                    q("gpu", Metric::EffectiveGbS, "1").map_or("-".into(), fmt_num),
                    fmt_num(soa_one),
                    fmt_num(soa_all),
                    format!("x{:.2}", soa_all / gpu),
                ])
            })
            .collect();
        let skipped: Vec<String> = counts(cfg)
            .into_iter()
            .filter(|&n| !rows.iter().any(|r| r[0] == fmt_num(n as f64)))
            .map(|n| n.to_string())
            .collect();
        let mut text = format!(
            "{adapter} f32, move + regen (+ the point, on the GPU); p50 ms per \
             frame. gpu = step + wait for the device (wall); timestamps = the passes' own time \
             where the adapter has timestamp queries; GB/s = 44 B per entity / wall time.\n\n{}",
            table(
                &[
                    "entities",
                    "gpu wall",
                    "gpu timestamps",
                    "gpu GB/s",
                    "soa 1 thread",
                    "soa all threads",
                    "gpu speedup vs soa all"
                ],
                &rows
            )
        );
        if !skipped.is_empty() {
            text.push_str(&format!(
                "\nNot measured (over the adapter's limits or its memory): {}.\n",
                skipped.join(", ")
            ));
        }
        text
    }
}

/// What a GPU experiment's page says when the run holds none of its records.
pub const NOTHING_MEASURED: &str =
    "Not measured: the run found no GPU adapter (its skipped list says why).\n";

/// The record that names the adapter a GPU cell runs on, and the largest population it holds;
/// `None` without an adapter (the cell then fails on its own).
pub fn adapter_record(experiment: &str, n: usize) -> Option<Record> {
    let ctx = crate::runtime::gpu::context::shared().ok()?;
    let limit = capacity_limit(LayoutKind::Gpu).map_or(String::new(), |l| {
        format!(
            " Largest population on this adapter: {} ({}).",
            l.max_entities, l.limit
        )
    });
    Some(
        Record::new(experiment, "gpu", "f32", n)
            .param(format!("Adapter: {}.{limit}", ctx.describe()))
            .value(Metric::Adapter, "adapters", 1.0),
    )
}

/// The adapter sentence of a GPU experiment's records, as the run measured it.
pub fn adapter_of(mine: &[Record]) -> String {
    mine.iter()
        .find(|r| r.metric == Metric::Adapter)
        .map_or("Adapter: not recorded by this run.".into(), |r| {
            r.param.clone()
        })
}

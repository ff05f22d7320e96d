//! The CPU layouts' path to the GPU, as the app takes it: gather every entity's point, then get
//! it into the buffer the renderer draws. Two paths: gather into a `Vec`, then `write_buffer`,
//! which copies it into wgpu's staging memory; or gather straight into the staging memory
//! (`write_buffer_with`), in parallel chunks, which is the app's. Both on all cores, in
//! interleaved rounds of one process, each timed until the device holds the points (submit, then
//! wait), so their ratio is measured under the same conditions. On a software rasterizer
//! (lavapipe) the device's copy is a CPU memcpy too, and is in the time.

use std::num::NonZeroU64;

use crate::bench::beyond::gpu;
use crate::bench::kit::cells::LayoutAtCount;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::gpu::GpuContext;
use crate::runtime::swarm::Swarm;
use crate::threads::Threads;

pub struct Upload;

const NAME: &str = "upload";
const SEED: u64 = 42;
const LAYOUTS: [LayoutKind; 3] = [LayoutKind::Soa, LayoutKind::EcsTable, LayoutKind::Boxed];

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(vec![1_000_000, 10_000_000], vec![100_000, 1_000_000])
}

/// Waits until the device has done everything submitted, the staged writes included.
fn settle(ctx: &GpuContext) {
    ctx.queue.submit([]);
    let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
}

impl Experiment for Upload {
    type Cell = LayoutAtCount;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (no renderer): gather + upload to the GPU"
    }

    fn title(&self) -> &'static str {
        "Gather + upload: through a Vec vs straight into wgpu's staging memory (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<LayoutAtCount> {
        if let Err(reason) = crate::runtime::gpu::context::availability() {
            eprintln!("upload: skipped, {reason}");
            return Vec::new();
        }
        counts(cfg)
            .into_iter()
            .flat_map(|n| LAYOUTS.map(|layout| LayoutAtCount { layout, n }))
            .collect()
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &LayoutAtCount) -> Result<Vec<Record>, BenchError> {
        let LayoutAtCount { layout: kind, n } = *cell;
        let ctx = crate::runtime::gpu::context::shared().map_err(|reason| {
            BenchError::from(crate::error::SimError::LayoutUnavailable {
                layout: "gpu".into(),
                reason,
            })
        })?;
        let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("points"),
            size: n as u64 * 4,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let size = NonZeroU64::new(n as u64 * 4).ok_or_else(|| BenchError::BadCell {
            experiment: NAME.into(),
            cell: cell.to_string(),
            expected: "<layout>:n=<at least 1>".into(),
        })?;
        let mut gathered = Vec::new();
        let method = cfg.method.per_round();
        let mut ns = [Vec::new(), Vec::new()];
        for _ in 0..cfg.pick(7, 3) {
            let before = measure(&method, || {
                swarm.gather_points(&mut gathered, Threads::All);
                ctx.queue
                    .write_buffer(&buffer, 0, bytemuck::cast_slice(&gathered));
                settle(&ctx);
            });
            let after = measure(&method, || {
                if let Some(mut view) = ctx.queue.write_buffer_with(&buffer, 0, size) {
                    let (points, _) = view.slice(..).into_chunks::<4>();
                    swarm.gather_points_into(points, Threads::All);
                }
                settle(&ctx);
            });
            ns[0].push(before.p50 * 1e6 / n as f64);
            ns[1].push(after.p50 * 1e6 / n as f64);
        }
        let ratios: Vec<f64> = ns[1].iter().zip(&ns[0]).map(|(a, b)| a / b).collect();
        let rec = Record::new(NAME, kind.name(), "f32", n).threads(Threads::All);
        let [before, after] = ns;
        let adapter = gpu::adapter_record(NAME, n);
        Ok(adapter
            .into_iter()
            .chain([
                rec.clone().param("vec+write_buffer").with(
                    Metric::NsPerEntity,
                    "ns",
                    Stats::from_samples(before),
                ),
                rec.clone().param("write_buffer_with").with(
                    Metric::NsPerEntity,
                    "ns",
                    Stats::from_samples(after),
                ),
                rec.with(Metric::RatioAfterToBefore, "x", Stats::from_samples(ratios)),
            ])
            .collect())
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        if mine.is_empty() {
            return gpu::NOTHING_MEASURED.into();
        }
        let adapter = gpu::adapter_of(mine);
        let mut rows = Vec::new();
        for n in counts(cfg) {
            for kind in LAYOUTS {
                let get = |param: &str| {
                    Query::metric(Metric::NsPerEntity)
                        .layout(kind.name())
                        .n(n as u64)
                        .param(param)
                        .find(mine)
                };
                let ratio = Query::metric(Metric::RatioAfterToBefore)
                    .layout(kind.name())
                    .n(n as u64)
                    .find(mine);
                if let (Some(before), Some(after), Some(ratio)) =
                    (get("vec+write_buffer"), get("write_buffer_with"), ratio)
                {
                    rows.push(vec![
                        fmt_num(n as f64),
                        format!("`{kind}`"),
                        fmt_num(before.p50),
                        fmt_num(after.p50),
                        format!(
                            "x{:.2} (p10 x{:.2}, p90 x{:.2})",
                            ratio.p50, ratio.p10, ratio.p90
                        ),
                    ]);
                }
            }
        }
        format!(
            "{adapter} All cores; ns per entity from the gather's start until the \
             device holds the points; median of interleaved rounds.\n\n{}",
            table(
                &[
                    "entities",
                    "layout",
                    "through a Vec + write_buffer",
                    "straight into staging",
                    "staging / Vec"
                ],
                &rows
            )
        )
    }
}

//! Past both studies' "not measured": SIMD width. The same frame (move + regen, f32, one thread)
//! for the layouts whose kernels are compiled per tier (`soa`, `chunks`, `ecs-contiguous`,
//! `aos`), on every tier this CPU has, at 10k entities (in L1/L2, where width should pay), 100k,
//! 1M and 10M (in memory, where bandwidth should rule). Each count runs in [`REPS`] fresh
//! processes; the goals are read as the median of the per-process ratios, with their spread.
//!
//! Beside the clock, the count: cachegrind's instructions per entity per frame at 10k for each
//! tier valgrind can run (AVX2; valgrind 3.19 has no AVX-512), which says how much work each
//! tier saves whatever the clock says. Two controls ride along. At 10M, a STREAM triad measured in the same process says how close
//! each tier comes to this machine's bandwidth. At 1M and 10M, the chunked layout with bigger
//! blocks (64 and 256 KiB), and with Unity's block but each column on a page of its own, say
//! where its gap to SoA comes from: how often the columns' short runs restart, or several runs
//! sharing one 4 KiB page.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::cells::{COUNT_IN_PROCESS, CountInProcess};
use crate::bench::kit::seeded::fill_seeded;
use crate::bench::report::cell::{CellTextError, read_cell};
use crate::bench::report::child::{instructions_record, this_binary};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::{Method, Stats, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::plot::Series;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range, short, spread};
use crate::layout::chunks::Chunks;
use crate::layout::{Layout, LayoutKind};
use crate::runtime::swarm::Swarm;
use crate::simd::{SimdTier, available};
use crate::threads::Threads;
use crate::tools::bandwidth::{FRAME_BYTES_F32, measure_limit};
use crate::workload::Dt;
use crate::workload::SEED;

pub struct Simd;

pub const NAME: &str = "simd";
/// The layouts with kernels compiled per tier.
pub const LAYOUTS: [LayoutKind; 4] = [
    LayoutKind::Soa,
    LayoutKind::Chunks,
    LayoutKind::EcsContiguous,
    LayoutKind::Aos,
];
/// Fresh processes per count.
const REPS: usize = 3;
/// The cell that counts instructions under cachegrind.
const COUNTED: &str = "instructions";

/// A cell: the count under cachegrind, or every tier's frame at one count in one fresh process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SimdCell {
    Counted,
    Frames(CountInProcess),
}

impl fmt::Display for SimdCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimdCell::Counted => f.write_str(COUNTED),
            SimdCell::Frames(at) => at.fmt(f),
        }
    }
}

impl FromStr for SimdCell {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = format!("{COUNTED} or {COUNT_IN_PROCESS}");
        read_cell(text, &expected, |text| match text {
            COUNTED => Some(SimdCell::Counted),
            _ => CountInProcess::read(text).map(SimdCell::Frames),
        })
    }
}
/// The count the instructions are counted at: in cache, where width should pay.
const COUNTED_N: usize = 10_000;

/// Instructions per entity per frame for each layout and tier, simulated; a tier cachegrind
/// cannot run (or no valgrind at all) is a record saying why.
fn counted() -> Result<Vec<Record>, BenchError> {
    use crate::tools::counters::FrameSpec;
    let exe = this_binary(NAME, COUNTED)?;
    let mut out = Vec::new();
    for kind in LAYOUTS {
        for &tier in available() {
            let spec = FrameSpec {
                simd: tier,
                ..FrameSpec::for_count(kind, COUNTED_N)
            };
            let param = format!("simd={};simulated", tier.name());
            let rec = Record::new(NAME, kind.name(), "f32", COUNTED_N);
            if tier == SimdTier::Avx512 {
                // Under valgrind the program sees valgrind's CPU, which has AVX2 at most, and
                // refuses the tier (exit 2) rather than run instructions the CPU lacks.
                out.push(
                    rec.param(format!(
                        "{param}: valgrind does not emulate AVX-512 (its simulated CPU has AVX2 at most)"
                    ))
                    .value(Metric::Unavailable, "cells", 1.0),
                );
                continue;
            }
            out.push(instructions_record(&exe, &spec, rec, &param));
        }
    }
    Ok(out)
}

/// The chunked layout's controls, by name in the records: bigger blocks (64 and 256 KiB), and
/// Unity's 400 entities a block with each column on a 4 KiB page of its own (no two columns'
/// runs in one page, which is what the L2 streamer tracks one forward stream in).
const BLOCK_CONTROL: [&str; 3] = ["chunks-64k", "chunks-256k", "chunks-16k-paged"];

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(
        vec![10_000, 100_000, 1_000_000, 10_000_000],
        vec![10_000, 100_000],
    ))
}

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 2)
}

/// Bytes one frame moves per entity in `layout`, counting each line read once and each written
/// once: the three columns' 36 B for the contiguous column layouts, the whole 32-byte record
/// read and written by both systems for AoS.
fn frame_bytes(layout: &str) -> f64 {
    if layout == "aos" {
        4.0 * 32.0
    } else {
        FRAME_BYTES_F32
    }
}

/// The tier a record's kernels ran on (its process number follows: [`Record::in_process`]).
fn param(tier: SimdTier) -> String {
    format!("simd={}", tier.name())
}

/// The tiers the run's records hold, narrowest first: what the page shows, whichever tiers the
/// machine that renders it has.
fn measured(mine: &[Record]) -> Vec<SimdTier> {
    SimdTier::ALL
        .into_iter()
        .filter(|&tier| {
            let knob = param(tier);
            mine.iter().any(|r| r.param.split(';').any(|p| p == knob))
        })
        .collect()
}

/// One frame of `layout` (move, then regen), timed.
fn frame(layout: &mut dyn Layout<f32>, method: &Method) -> Stats {
    let dt = Dt::default().as_scalar::<f32>();
    measure(method, || {
        layout.step_move(dt, Threads::One);
        layout.step_regen(dt, Threads::One);
        std::hint::black_box(&mut *layout);
    })
}

/// The chunked layout in blocks of `BYTES` (`PAGED`: each column on a page of its own).
fn block_control<const BYTES: usize, const PAGED: bool>(n: usize, method: &Method) -> Stats {
    let mut layout = Chunks::<f32, BYTES, PAGED>::default();
    fill_seeded(&mut layout, n);
    frame(&mut layout, method)
}

impl Experiment for Simd {
    type Cell = SimdCell;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (not measured): SIMD width"
    }

    fn title(&self) -> &'static str {
        "SIMD width: every tier this CPU has, ns per entity (past the studies)"
    }

    fn narrows(&self) -> Narrows {
        Narrows::COUNTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<SimdCell> {
        let mut cells = vec![SimdCell::Counted];
        for rep in 1..=reps(cfg) {
            for n in counts(cfg) {
                cells.push(SimdCell::Frames(CountInProcess { n, rep }));
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &SimdCell) -> Result<Vec<Record>, BenchError> {
        let CountInProcess { n, rep } = match *cell {
            SimdCell::Counted => return counted(),
            SimdCell::Frames(at) => at,
        };
        let mut out = Vec::new();
        let ns = 1e6 / n as f64;
        for kind in LAYOUTS {
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
            for &tier in available() {
                swarm.set_simd(tier);
                let dt = Dt::default();
                let stats = measure(&cfg.method, || {
                    swarm.step(dt, Threads::One);
                    std::hint::black_box(&mut swarm);
                });
                let rec = Record::new(NAME, kind.name(), "f32", n)
                    .param(param(tier))
                    .in_process(rep);
                out.push(rec.clone().with(Metric::FrameMs, "ms", stats));
                out.push(rec.with(Metric::NsPerEntity, "ns", stats.scaled(ns)));
            }
        }
        if n >= 1_000_000 {
            let controls = [
                block_control::<{ 64 * 1024 }, false>(n, &cfg.method),
                block_control::<{ 256 * 1024 }, false>(n, &cfg.method),
                block_control::<{ crate::layout::chunks::CHUNK_BYTES }, true>(n, &cfg.method),
            ];
            for (name, stats) in BLOCK_CONTROL.iter().zip(controls) {
                out.push(
                    Record::new(NAME, *name, "f32", n)
                        .param(param(SimdTier::Baseline))
                        .in_process(rep)
                        .with(Metric::FrameMs, "ms", stats),
                );
            }
        }
        if n >= 10_000_000 {
            // 3 × 128 MiB, as the app's probe: far past any cache here.
            let limit = measure_limit(16 << 20, 5, 1);
            out.push(Record::new(NAME, "triad", "f64", n).in_process(rep).value(
                Metric::TriadGbs,
                "GB/s",
                limit.one_thread_gbs,
            ));
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let reps = reps(cfg);
        let counts = counts(cfg);
        let per_rep = |layout: &str, tier: SimdTier, n: usize, metric: Metric| -> Vec<f64> {
            Query::metric(metric)
                .layout(layout)
                .param(&param(tier))
                .n(n as u64)
                .per_process(mine)
        };
        let mut rows = Vec::new();
        for kind in LAYOUTS {
            for &tier in &measured(mine) {
                let mut row = vec![format!("`{kind}`"), tier.label().into()];
                for &n in &counts {
                    let ns = median(&per_rep(kind.name(), tier, n, Metric::NsPerEntity));
                    let base = median(&per_rep(
                        kind.name(),
                        SimdTier::Baseline,
                        n,
                        Metric::NsPerEntity,
                    ));
                    row.push(match (ns, base) {
                        (Some(ns), Some(base)) if tier != SimdTier::Baseline => {
                            format!("{} (x{:.2})", fmt_num(ns), base / ns)
                        }
                        (Some(ns), _) => fmt_num(ns),
                        _ => "-".into(),
                    });
                }
                rows.push(row);
            }
        }
        let mut header = vec!["layout".to_string(), "tier".to_string()];
        header.extend(counts.iter().map(|n| format!("{} ns/entity", short(*n))));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut md = format!(
            "f32, move + regen, one thread; the median over {reps} processes of each one's p50 ns per entity; (xK) = speed-up over the baseline tier. Tiers measured: {}.\n\n{}",
            measured(mine)
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", "),
            table(&header, &rows)
        );
        md.push_str(&goals(mine, &counts, reps));
        md.push_str(&instructions_table(mine));
        md
    }
}

/// Instructions per entity per frame by tier, from the counted cell.
fn instructions_table(mine: &[Record]) -> String {
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for kind in LAYOUTS {
        let mut row = vec![format!("`{kind}`")];
        let mut base = None;
        for &tier in &measured(mine) {
            let param = format!("simd={};simulated", tier.name());
            let found = Query::metric(Metric::Instructions)
                .layout(kind.name())
                .param(&param)
                .find(mine)
                .map(|r| r.p50);
            if tier == SimdTier::Baseline {
                base = found;
            }
            row.push(match (found, base) {
                (Some(v), Some(b)) if tier != SimdTier::Baseline => {
                    format!("{} (x{:.2} fewer)", fmt_num(v), b / v)
                }
                (Some(v), _) => fmt_num(v),
                (None, _) => {
                    let prefix = format!("{param}: ");
                    if let Some(why) = mine
                        .iter()
                        .filter(|r| r.metric == Metric::Unavailable && r.layout == kind.name())
                        .find_map(|r| r.param.strip_prefix(&prefix))
                    {
                        missing.push(format!("{} on {}: {why}", kind, tier.name()));
                    }
                    "not measured".into()
                }
            });
        }
        rows.push(row);
    }
    if rows
        .iter()
        .all(|r| r[1..].iter().all(|c| c == "not measured"))
        && missing.is_empty()
    {
        return String::new();
    }
    let mut header = vec!["layout".to_string()];
    header.extend(measured(mine).iter().map(|t| t.name().to_string()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut md = format!(
        "\nInstructions per entity per frame at {} entities (cachegrind, simulated, deterministic):\n\n{}",
        short(COUNTED_N),
        table(&header, &rows)
    );
    // One line per distinct reason: every layout fails a tier for the same one.
    missing.sort();
    let mut reasons: Vec<String> = missing
        .iter()
        .filter_map(|m| m.split_once(": ").map(|(_, why)| why.to_string()))
        .collect();
    reasons.dedup();
    for why in reasons {
        md.push_str(&format!("\nNot measured: {why}\n"));
    }
    md
}

/// The SIMD goals, each as the median of per-process ratios with their spread.
fn goals(mine: &[Record], counts: &[usize], reps: usize) -> String {
    let frame = |layout: &str, tier: SimdTier, n: usize, rep: usize| {
        Query::metric(Metric::FrameMs)
            .layout(layout)
            .param(&param(tier))
            .rep(rep)
            .n(n as u64)
            .find(mine)
            .map(|r| r.p50)
    };
    let ratios = |a: &str, ta: SimdTier, b: &str, tb: SimdTier, n: usize| -> Vec<f64> {
        (1..=reps)
            .filter_map(|rep| Some(frame(a, ta, n, rep)? / frame(b, tb, n, rep)?))
            .collect()
    };
    let best = measured(mine).last().copied().unwrap_or(SimdTier::Baseline);
    let mut lines = vec![
        String::new(),
        "Goals (median over processes [min..max]):".into(),
    ];
    for &n in counts.iter().filter(|&&n| n >= 1_000_000) {
        for tier in [SimdTier::Baseline, best] {
            lines.push(format!(
                "- `chunks` / `soa` at {}, {}: {} (goal: within x1.05)",
                short(n),
                tier.name(),
                spread(&ratios("chunks", tier, "soa", tier, n), |m| m <= 1.05)
            ));
        }
        for name in BLOCK_CONTROL {
            lines.push(format!(
                "  - control, `{name}` / `soa` at {}, baseline: {}",
                short(n),
                range(&ratios(
                    name,
                    SimdTier::Baseline,
                    "soa",
                    SimdTier::Baseline,
                    n
                ))
            ));
        }
    }
    if let Some(&n) = counts.first() {
        lines.push(format!(
            "- `soa` {} over baseline at {}: x{} (goal: at least x1.5)",
            best.name(),
            short(n),
            spread(&ratios("soa", SimdTier::Baseline, "soa", best, n), |m| m
                >= 1.5)
        ));
    }
    if let Some(&n) = counts.iter().find(|&&n| n >= 10_000_000) {
        for kind in LAYOUTS {
            let layout = kind.name();
            let shares: Vec<f64> = (1..=reps)
                .filter_map(|rep| {
                    let ms = frame(layout, best, n, rep)?;
                    let triad = Query::metric(Metric::TriadGbs)
                        .layout("triad")
                        .rep(rep)
                        .find(mine)?
                        .p50;
                    Some(frame_bytes(layout) * n as f64 / (ms * 1e6) / triad)
                })
                .collect();
            lines.push(format!(
                "- `{layout}` at {}, {}: effective bandwidth ({} B per entity) / 1-thread triad = {} (goal: 0.95 or more)",
                short(n),
                best.name(),
                frame_bytes(layout),
                spread(&shares, |m| m >= 0.95),
            ));
        }
        lines.push(
            "  (The triad counts the 24 B per element STREAM counts, but moves 32: its store's line is read first. A frame whose stores land on lines it has just read pays no such read, so its share can pass 1.)".into(),
        );
    }
    lines.join("\n") + "\n"
}

/// The `simd` experiment's wider tiers as `layout · tier` lines: the median over its processes of
/// ns per entity at each count (the baseline tier is the `layouts` line already drawn).
pub fn tier_series(records: &[Record]) -> Series {
    let mut out = Series::new();
    for kind in LAYOUTS {
        for tier in crate::simd::SimdTier::ALL.into_iter().skip(1) {
            let prefix = format!("simd={};", tier.name());
            let mut by_n: Vec<(f64, Vec<f64>)> = Vec::new();
            for r in records.iter().filter(|r| {
                r.experiment == NAME
                    && r.layout == kind.name()
                    && r.metric == Metric::NsPerEntity
                    && r.param.starts_with(&prefix)
            }) {
                match by_n.iter_mut().find(|(n, _)| *n == r.n as f64) {
                    Some((_, v)) => v.push(r.p50),
                    None => by_n.push((r.n as f64, vec![r.p50])),
                }
            }
            let mut points: Vec<(f64, f64)> = by_n
                .into_iter()
                .map(|(n, mut v)| {
                    v.sort_by(f64::total_cmp);
                    (n, v[v.len() / 2])
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !points.is_empty() {
                out.push((format!("{kind} · {}", tier.name()), points));
            }
        }
    }
    out
}

//! Past the studies: what drawing the points costs, per renderer. The app itself, headless (its
//! offscreen image, the same render graph as the window), is run as a child process with a
//! script of interleaved rounds: the compute rasterizer, then the instanced quads, then compute
//! again, each round held for some steady frames. The app's own summary gives, per renderer, the
//! frame's p50 and the points' GPU time (Bevy's render diagnostic: timestamp queries around the
//! points' passes). Each cell is one process; a figure is the median over processes
//! [min..max], as the headline's are.
//!
//! The targets (lavapipe, 2 cores): at 1M the compute renderer's time at most 1/10 of the
//! quads' (read as the frame's rest: lavapipe's timestamps do not cover a compute dispatch); a 1M frame (soa, 1280x720) at most 60 ms; a 10M frame at most 400 ms. On a real GPU:
//! the gpu layout's 100M at 60 fps at 1920x1080; at 10M, drawing in at most 2 ms.
//!
//! Without a GPU adapter (not even a software one) the app cannot start: the experiment says
//! why and records nothing else, like `gpu`.

use std::fmt;
use std::process::Command;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::beyond::gpu;
use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::table;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{range, short, spread, summary};
use crate::layout::LayoutKind;
use crate::runtime::catalog::capacity_limit;
use crate::runtime::renderer::Renderer;

pub struct Render;

const NAME: &str = "render";
const SEED: u64 = 42;
/// The cell recorded when the app cannot start for want of an adapter.
const NO_ADAPTER: &str = "no-adapter";
/// Where the gpu layout is measured, if the adapter holds it.
const GPU_COUNT: usize = 100_000_000;
/// Frames after a renderer change that the app leaves out of its summary (its draw time still
/// belongs to the other renderer); a round waits them out on top of its steady frames.
const SETTLE_FRAMES: u64 = 5;

fn sizes(_cfg: &BenchConfig) -> Vec<&'static str> {
    // 1080p would double the experiment (its 10M cell is the slowest, `bench --worker render
    // --cell size=1920x1080:layout=soa:n=10000000:rep=0`); the app opens at 720p, and CI's
    // screenshots are taken there.
    vec!["1280x720"]
}

/// A cell: the app at a window size (`<width>x<height>`), in one layout at `n` entities, in
/// fresh process `rep`: `size=WxH:layout=L:n=N:rep=K`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    pub size: String,
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
    pub n: usize,
    pub rep: usize,
}

impl fmt::Display for Drawn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Drawn {
            size,
            layout,
            n,
            rep,
        } = self;
        write!(f, "size={size}:layout={layout}:n={n}:rep={rep}")
    }
}

impl FromStr for Drawn {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "size=WxH:layout=L:n=N:rep=K", |text| {
            let [size, layout, n, rep] = holes(text, "size={}:layout={}:n={}:rep={}")?;
            let [width, height] = holes(size, "{}x{}")?;
            let pixels = |side: &str| side.parse::<u32>().ok().filter(|&p| p > 0);
            pixels(width)?;
            pixels(height)?;
            Some(Drawn {
                size: size.into(),
                layout: layout.parse().ok()?,
                n: n.parse().ok()?,
                rep: rep.parse().ok()?,
            })
        })
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![1_000_000, 10_000_000], vec![10_000, 100_000]))
}

/// One process per cell: the renderers alternate in rounds inside it, which is what the ratio
/// is read from, and a cell is slow under lavapipe on two cores (`bench --worker render --cell
/// size=1280x720:layout=soa:n=1000000:rep=0`).
fn reps(_cfg: &BenchConfig) -> usize {
    1
}

/// Rounds (each renderer once) and steady frames per renderer per round: one round at 10M,
/// where the quads take seconds a frame on a software rasterizer and their settling frames most
/// of the experiment (docs/runs/full-2026-12-04); the renderers differ there by far more than a
/// drift in the machine's load could move (docs/results/drawing.md).
fn rounds(cfg: &BenchConfig, n: usize) -> (usize, u64) {
    match (cfg.quick, n) {
        (true, _) => (2, 3),
        (false, n) if n >= 10_000_000 => (1, 3),
        _ => (3, 8),
    }
}

/// The script one process runs: grow (250,000 entities a frame, compute drawing), then the
/// interleaved rounds, then exit with the summary.
fn script(cfg: &BenchConfig, n: usize) -> String {
    let (rounds, frames) = rounds(cfg, n);
    let mut text = format!("wait {}\n", n / 250_000 + 3);
    for _ in 0..rounds {
        for renderer in Renderer::BOTH {
            text.push_str(&format!(
                "renderer {renderer}\nwait {}\n",
                frames + SETTLE_FRAMES
            ));
        }
    }
    text.push_str("exit\n");
    text
}

/// One summary line's figures, as the app prints them (`src/app/stats.rs`).
#[derive(Debug, PartialEq)]
struct SummaryRow {
    renderer: String,
    frames: usize,
    frame_ms: f64,
    simulate_ms: Option<f64>,
    rest_ms: f64,
    draw_ms: Option<f64>,
}

/// The number after `label` in `line` (`None` for `n/a` or no such label).
fn after(line: &str, label: &str) -> Option<f64> {
    let rest = &line[line.find(label)? + label.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

fn parse_summary(stdout: &str) -> Vec<SummaryRow> {
    let rows = stdout
        .lines()
        .skip_while(|l| !l.starts_with("summary per layout used:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "));
    rows.filter_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        let renderer = words.iter().find_map(|w| w.strip_prefix("renderer="))?;
        let frames_at = words.iter().position(|w| *w == "frames")?;
        Some(SummaryRow {
            renderer: renderer.to_string(),
            frames: words.get(frames_at.checked_sub(1)?)?.parse().ok()?,
            frame_ms: after(line, "frame p50")?,
            simulate_ms: after(line, "simulate p50"),
            rest_ms: after(line, "rest p50")?,
            draw_ms: after(line, "draw p50"),
        })
    })
    .collect()
}

impl Experiment for Render {
    type Cell = Drawn;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both (no real renderer): drawing millions"
    }

    fn title(&self) -> &'static str {
        "Drawing millions: the compute rasterizer against instanced quads (past the studies)"
    }

    fn narrows(&self) -> Narrows {
        Narrows::COUNTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Drawn> {
        let mut cells = Vec::new();
        for size in sizes(cfg) {
            let mut layouts: Vec<(LayoutKind, usize)> = counts(cfg)
                .into_iter()
                .map(|n| (LayoutKind::Soa, n))
                .collect();
            if !cfg.quick {
                layouts.push((LayoutKind::Gpu, GPU_COUNT));
            }
            for (layout, n) in layouts {
                for rep in 0..reps(cfg) {
                    cells.push(Drawn {
                        size: size.into(),
                        layout,
                        n,
                        rep,
                    });
                }
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Drawn) -> Result<Vec<Record>, BenchError> {
        let Drawn {
            size,
            layout,
            n,
            rep,
        } = cell;
        let (size, layout, n, rep) = (size.as_str(), *layout, *n, *rep);
        if layout.is_gpu() {
            match capacity_limit(layout) {
                Some(limit) if n <= limit.max_entities => {}
                Some(limit) => {
                    eprintln!("render: gpu at {n} skipped: {}", limit.limit);
                    // The page says why from this record, never from the adapter of the
                    // machine that writes the page.
                    return Ok(gpu::adapter_record(NAME, n).into_iter().collect());
                }
                None => {
                    eprintln!("render: gpu at {n} skipped: no adapter runs the gpu layout here");
                    return Ok(Vec::new());
                }
            }
        }
        let fail = |reason: String| BenchError::Worker {
            experiment: NAME.into(),
            cell: cell.to_string(),
            reason,
        };
        let dir =
            std::env::temp_dir().join(format!("entity-layouts-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| fail(e.to_string()))?;
        let script_path = dir.join("rounds.script");
        std::fs::write(&script_path, script(cfg, n)).map_err(|e| fail(e.to_string()))?;
        let exe = std::env::current_exe().map_err(|e| fail(e.to_string()))?;
        let output = Command::new(exe)
            .args(["--headless", "--size", size, "--layout", layout.name()])
            .args(["--count", &n.to_string(), "--seed", &SEED.to_string()])
            .args(["--threads", "all", "--renderer", "compute", "--script"])
            .arg(&script_path)
            .output()
            .map_err(|e| fail(format!("cannot start the app: {e}")));
        let _ = std::fs::remove_dir_all(&dir);
        let output = output?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if let Some(line) = stderr
            .lines()
            .find(|l| l.contains("no GPU adapter was found"))
        {
            return Ok(vec![
                Record::new(NAME, NO_ADAPTER, "f32", 0).param(line).value(
                    Metric::Unavailable,
                    "cells",
                    1.0,
                ),
            ]);
        }
        if !output.status.success() {
            let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
            return Err(fail(format!(
                "the app exited with {}: {}",
                output.status,
                tail.join(" / ")
            )));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let rows = parse_summary(&stdout);
        if rows.is_empty() {
            return Err(fail(format!(
                "no summary rows in the app's output:\n{stdout}"
            )));
        }
        if let Some(lacks) = stderr
            .lines()
            .find(|l| l.contains("compute renderer unavailable"))
        {
            eprintln!("render: {lacks}");
        }
        let mut out = Vec::new();
        for row in rows {
            let param = format!("size={size}:renderer={}", row.renderer);
            let record = |metric: Metric, v: f64| {
                let mut r = Record::new(NAME, layout.name(), "f32", n)
                    .param(param.clone())
                    .in_process(rep)
                    .value(metric, "ms", v);
                r.samples = row.frames;
                r.threads = "all".into();
                r
            };
            out.push(record(Metric::FrameMs, row.frame_ms));
            out.push(record(Metric::RestMs, row.rest_ms));
            if let Some(v) = row.simulate_ms {
                out.push(record(Metric::SimulateMs, v));
            }
            // A draw that timestamps did not measure is left out, never written as zero.
            if let Some(v) = row.draw_ms.filter(|v| *v > 0.0) {
                out.push(record(Metric::DrawMs, v));
            }
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        if let Some(skipped) = mine.iter().find(|r| r.metric == Metric::Unavailable) {
            return format!("Skipped: {}.\n", skipped.param);
        }
        // Per-process values of one figure, in rep order.
        let values = |layout: &str, n: usize, size: &str, renderer: Renderer, metric: Metric| {
            Query::metric(metric)
                .layout(layout)
                .n(n as u64)
                .param(&format!("size={size}:renderer={renderer}"))
                .per_process(mine)
        };
        let ratio =
            |a: &[f64], b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(a, b)| a / b).collect() };
        let mut rows = Vec::new();
        let mut layouts: Vec<(LayoutKind, usize)> = counts(cfg)
            .into_iter()
            .map(|n| (LayoutKind::Soa, n))
            .collect();
        layouts.push((LayoutKind::Gpu, GPU_COUNT));
        for size in sizes(cfg) {
            for &(layout, n) in &layouts {
                let name = layout.name();
                let v = |r, m| values(name, n, size, r, m);
                let (cf, qf) = (
                    v(Renderer::Compute, Metric::FrameMs),
                    v(Renderer::Quads, Metric::FrameMs),
                );
                if cf.is_empty() && qf.is_empty() {
                    continue;
                }
                let (cd, qd) = (
                    v(Renderer::Compute, Metric::DrawMs),
                    v(Renderer::Quads, Metric::DrawMs),
                );
                let (cr, qr) = (
                    v(Renderer::Compute, Metric::RestMs),
                    v(Renderer::Quads, Metric::RestMs),
                );
                let fps =
                    |f: &[f64]| summary(f).map_or("-".into(), |(m, ..)| format!("{:.1}", 1e3 / m));
                rows.push(vec![
                    size.to_string(),
                    format!("`{name}`"),
                    short(n),
                    range(&cf),
                    range(&cr),
                    range(&cd),
                    fps(&cf),
                    range(&qf),
                    range(&qr),
                    range(&qd),
                    range(&ratio(&qr, &cr)),
                    range(&ratio(&qf, &cf)),
                ]);
            }
        }
        let target = |size: &str, n: usize, metric: Metric| {
            values("soa", n, size, Renderer::Compute, metric)
        };
        let mut goals = String::new();
        if counts(cfg).contains(&1_000_000) {
            let cr = target("1280x720", 1_000_000, Metric::RestMs);
            let qr = values(
                "soa",
                1_000_000,
                "1280x720",
                Renderer::Quads,
                Metric::RestMs,
            );
            goals.push_str(&format!(
                "- 1M, 1280x720: the quads' rest / compute's rest ≥ 10: {}\n- 1M frame (soa, 1280x720, compute) ≤ 60 ms: {}\n",
                spread(&ratio(&qr, &cr), |r| r >= 10.0),
                spread(&target("1280x720", 1_000_000, Metric::FrameMs), |ms| ms <= 60.0),
            ));
        }
        if counts(cfg).contains(&10_000_000) {
            goals.push_str(&format!(
                "- 10M frame (soa, 1280x720, compute) ≤ 400 ms: {}\n- 10M draw (compute, 1920x1080) ≤ 2 ms (a real GPU's goal): {}\n",
                spread(&target("1280x720", 10_000_000, Metric::FrameMs), |ms| ms <= 400.0),
                spread(&target("1920x1080", 10_000_000, Metric::DrawMs), |ms| ms <= 2.0),
            ));
        }
        if !cfg.quick {
            let gpu = values(
                LayoutKind::Gpu.name(),
                GPU_COUNT,
                "1920x1080",
                Renderer::Compute,
                Metric::FrameMs,
            );
            goals.push_str(&format!(
                "- gpu layout, 100M, 1920x1080, compute: ≥ 60 fps (frame ≤ 16.67 ms; a real GPU's goal): {}\n",
                if gpu.is_empty() {
                    gpu_not_measured(mine, all)
                } else {
                    spread(&gpu, |ms| ms <= 1e3 / 60.0)
                }
            ));
        }
        let (r, f) = rounds(cfg, 1_000_000);
        format!(
            "The app, headless (`--headless --size WxH --threads all`), one process per figure and {} per row, each running {r} interleaved rounds (compute, then quads) of {f} steady frames per renderer (fewer at 10M, where a quads frame takes seconds), after {SETTLE_FRAMES} frames to settle. frame = the app's frame time, p50; rest = frame - simulate - gather: the renderer's time, with the fixed cost of every frame (egui, clear, blit, present) in it; draw = the points' passes on the GPU by timestamp queries (on lavapipe the \"GPU\" is this machine's two cores, shared with the simulation, and its timestamps do not cover a compute dispatch: read compute's cost there from rest). Each cell: median [min..max] over processes.\n\n{}{}",
            match reps(cfg) {
                1 => "one process".to_string(),
                n => format!("{n} processes"),
            },
            table(
                &[
                    "size",
                    "layout",
                    "entities",
                    "compute frame ms",
                    "compute rest ms",
                    "compute draw ms (timestamps)",
                    "compute fps",
                    "quads frame ms",
                    "quads rest ms",
                    "quads draw ms (timestamps)",
                    "rest quads / compute",
                    "frame quads / compute",
                ],
                &rows
            ),
            if goals.is_empty() {
                String::new()
            } else {
                format!("\nTargets:\n{goals}")
            }
        )
    }
}

/// Why the run has no frame of the gpu layout, from the run's own records: the adapter that this
/// experiment found too small (its record), else the one the gpu experiment ran on. Never the
/// adapter of the machine that writes the page, which may have none, or another.
fn gpu_not_measured(mine: &[Record], all: &[Record]) -> String {
    let adapter = |records: &[Record]| {
        records
            .iter()
            .find(|r| r.metric == Metric::Adapter && r.layout == LayoutKind::Gpu)
            .map(|r| r.param.clone())
    };
    match (adapter(mine), adapter(all)) {
        (Some(a), _) => format!("not measured, more entities than the adapter holds. {a}"),
        (None, Some(a)) => {
            format!("not measured; the gpu experiment's record of the run's adapter: {a}")
        }
        (None, None) => "not measured: the run found no adapter for the gpu layout".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apps_summary_is_read_back() {
        let stdout = "[frame 3] drawing with the quads renderer\nsummary per layout used:\n  soa              threads=all simd=baseline renderer=compute n=1000000    24 frames  frame p50   41.500 ms  p99   60.000 ms  | simulate p50    2.500 ms  gather+upload p50   1.300 ms  rest p50   37.700 ms  draw p50    9.250 ms\n  soa              threads=all simd=baseline renderer=quads   n=1000000    24 frames  frame p50  700.000 ms  p99  720.000 ms  | simulate p50    2.900 ms  gather+upload p50   1.400 ms  rest p50  695.000 ms  draw p50      n/a   \nfinal: 1000000 entities\n";
        let rows = parse_summary(stdout);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0],
            SummaryRow {
                renderer: "compute".into(),
                frames: 24,
                frame_ms: 41.5,
                simulate_ms: Some(2.5),
                rest_ms: 37.7,
                draw_ms: Some(9.25),
            }
        );
        assert_eq!(rows[1].renderer, "quads");
        assert_eq!(rows[1].draw_ms, None);
    }

    #[test]
    fn every_round_holds_both_renderers() {
        let cfg = BenchConfig::new(false);
        let text = script(&cfg, 1_000_000);
        assert!(
            text.starts_with("wait 7\n") && text.ends_with("exit\n"),
            "{text}"
        );
        assert_eq!(text.matches("renderer quads").count(), 3);
        assert_eq!(text.matches("renderer compute").count(), 3);
        assert!(crate::tools::script::parse(&text).is_ok());
    }

    #[test]
    fn why_the_gpu_layout_was_not_drawn_comes_from_the_records() {
        let adapter = |experiment: &str, text: &str| {
            Record::new(experiment, "gpu", "f32", GPU_COUNT)
                .param(text)
                .value(Metric::Adapter, "adapters", 1.0)
        };
        let too_small = adapter(
            NAME,
            "Adapter: small. Largest population on this adapter: 7.",
        );
        let ran_on = adapter("gpu", "Adapter: other.");
        let frame = Record::new(NAME, "soa", "f32", 1_000_000).value(Metric::FrameMs, "ms", 9.0);
        let said = gpu_not_measured(
            std::slice::from_ref(&too_small),
            std::slice::from_ref(&ran_on),
        );
        assert!(
            said.contains("more entities than") && said.contains("population on this adapter: 7"),
            "{said}"
        );
        let said = gpu_not_measured(std::slice::from_ref(&frame), &[frame.clone(), ran_on]);
        assert!(said.contains("Adapter: other."), "{said}");
        let said = gpu_not_measured(&[], std::slice::from_ref(&frame));
        assert!(said.contains("found no adapter"), "{said}");
    }
}

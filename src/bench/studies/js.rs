//! The JS study on this machine: its experiments, as our own Node script
//! (`benches/js/layouts.mjs`, compiled into this binary), run by V8 on the CPU our Rust runs on.
//! Set beside the study's M3 figures and our Rust, it splits every "ours / study" ratio into the
//! two things it mixes: the language and runtime (Rust against V8, same CPU) and the machine (V8
//! here against V8 on the M3).
//!
//! The 20-field width reversal runs for S = 1..20 in four SoA shapes that read the same bytes:
//! one `Float64Array` per column (the study's), every column a view into one shared buffer, and
//! one array indexed at S constant offsets (one base pointer instead of S); plus the columns
//! with the data in L2. Which of them climb past ~8 streams says whether the study's cliff is the
//! memory system's or V8's generated code.
//!
//! Each cell is one `node` process, as the study ran each count in its own. Without `node` on
//! PATH the experiment records why and skips; nothing else needs Node.

use std::fmt;
use std::io::Write;
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;

pub struct Js;

pub const NAME: &str = "js";
/// The script, carried inside the binary so `bench` runs it from any directory.
const SCRIPT: &str = include_str!("../../../benches/js/layouts.mjs");
/// The cell recorded when there is no Node to run.
const NO_NODE: &str = "no-node";
/// The study's heap flag: a million objects of 20 fields need more than V8's default.
const HEAP_FLAG: &str = "--max-old-space-size=8192";
/// The frame's layouts in the script, by our names for them.
const FRAME_LAYOUTS: [&str; 4] = ["boxed", "boxed-shuffled", "soa", "aos"];
/// The width reversal's layouts in the script.
const WIDTH_LAYOUTS: [&str; 5] = [
    "objects",
    "soa-columns",
    "soa-shared",
    "soa-one-index",
    "aos",
];
/// Twenty columns of this many doubles fit in a 1 MiB L2 (640 KiB): the in-cache control.
const IN_CACHE_N: usize = 4096;

/// A cell: one run of the script, or the one cell of a machine without Node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Script {
    /// Node cannot be run: the cell records why (`no-node`).
    NoNode,
    /// The frame's layouts at `n` entities: `layouts:n=<count>`.
    Layouts { n: usize },
    /// The width reversal for one of [`WIDTH_LAYOUTS`]: `width:<layout>:n=<count>`.
    Width { layout: String, n: usize },
}

impl fmt::Display for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Script::NoNode => f.write_str(NO_NODE),
            Script::Layouts { n } => write!(f, "layouts:n={n}"),
            Script::Width { layout, n } => write!(f, "width:{layout}:n={n}"),
        }
    }
}

impl std::str::FromStr for Script {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = format!(
            "{NO_NODE}, layouts:n=<count> or width:<layout>:n=<count>, a layout of {}",
            WIDTH_LAYOUTS.join(", ")
        );
        read_cell(text, &expected, |text| {
            if text == NO_NODE {
                return Some(Script::NoNode);
            }
            if let Some([n]) = holes(text, "layouts:n={}") {
                return Some(Script::Layouts { n: n.parse().ok()? });
            }
            let [layout, n] = holes(text, "width:{}:n={}")?;
            Some(Script::Width {
                layout: WIDTH_LAYOUTS.contains(&layout).then(|| layout.into())?,
                n: n.parse().ok()?,
            })
        })
    }
}

/// `node --version`, or why Node cannot be run.
pub fn node_version() -> Result<String, String> {
    let out = Command::new("node")
        .arg("--version")
        .output()
        .map_err(|e| format!("`node` is not on PATH ({e}); install Node.js (Debian: `apt install nodejs`) to run the JS study here"))?;
    if !out.status.success() {
        return Err(format!("`node --version` failed: {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn frame_counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(vec![1_000, 10_000, 100_000, 1_000_000], vec![1_000, 10_000])
}

fn width_n(cfg: &BenchConfig) -> usize {
    cfg.pick(1_000_000, 10_000)
}

#[derive(Deserialize)]
struct ScriptOutput {
    runtime: String,
    records: Vec<ScriptRecord>,
}

#[derive(Deserialize)]
struct ScriptRecord {
    layout: String,
    n: u64,
    param: String,
    metric: Metric,
    unit: String,
    p50: f64,
    p10: f64,
    p90: f64,
    samples: usize,
}

/// Runs the script with `args` under Node and reads its records.
fn run_script(cfg: &BenchConfig, cell: &str, args: &[String]) -> Result<Vec<Record>, BenchError> {
    let fail = |reason: String| BenchError::Worker {
        experiment: NAME.into(),
        cell: cell.into(),
        reason,
    };
    let mut command = Command::new("node");
    command.args([HEAP_FLAG, "-"]);
    if cfg.quick {
        command.arg("--quick");
    }
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| fail(format!("cannot start node: {e}")))?;
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(SCRIPT.as_bytes())
        .map_err(|e| fail(format!("cannot hand node the script: {e}")))?;
    let output = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    if !output.status.success() {
        return Err(fail(format!("node exited with {}", output.status)));
    }
    let parsed: ScriptOutput = serde_json::from_slice(&output.stdout)
        .map_err(|e| fail(format!("unreadable output from the script: {e}")))?;
    Ok(parsed
        .records
        .into_iter()
        .map(|r| Record {
            n: r.n,
            param: r.param,
            metric: r.metric,
            unit: r.unit,
            p50: r.p50,
            p10: r.p10,
            p90: r.p90,
            samples: r.samples,
            runtime: parsed.runtime.clone(),
            ..Record::new(NAME, r.layout, "f64", 0)
        })
        .collect())
}

impl Experiment for Js {
    type Cell = Script;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: its experiments under Node on this CPU"
    }

    fn title(&self) -> &'static str {
        "The JS study on this machine: V8 beside Rust on the same CPU"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Script> {
        if let Err(why) = node_version() {
            eprintln!("js: skipped: {why}");
            return vec![Script::NoNode];
        }
        let mut cells: Vec<Script> = frame_counts(cfg)
            .into_iter()
            .map(|n| Script::Layouts { n })
            .collect();
        let n = width_n(cfg);
        cells.extend(WIDTH_LAYOUTS.iter().map(|layout| Script::Width {
            layout: layout.to_string(),
            n,
        }));
        cells.push(Script::Width {
            layout: "soa-columns".into(),
            n: IN_CACHE_N,
        });
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Script) -> Result<Vec<Record>, BenchError> {
        let args: Vec<String> = match cell {
            Script::NoNode => {
                let why = node_version()
                    .err()
                    .unwrap_or_else(|| "node was found".into());
                return Ok(vec![Record::new(NAME, "node", "f64", 0).param(why).value(
                    Metric::Unavailable,
                    "cells",
                    1.0,
                )]);
            }
            Script::Layouts { n } => vec!["layouts".into(), n.to_string()],
            Script::Width { layout, n } => vec!["width".into(), layout.clone(), n.to_string()],
        };
        run_script(cfg, &cell.to_string(), &args)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        if let Some(skipped) = mine.iter().find(|r| r.metric == Metric::Unavailable) {
            return format!("Skipped: {}.\n", skipped.param);
        }
        let runtime = mine
            .first()
            .map_or("node".to_string(), |r| r.runtime.clone());
        let mut md = format!(
            "Our script `benches/js/layouts.mjs`, run by {runtime} on this machine, each cell in its own process, f64 (the study's doubles); the study's method (3 warm-up passes, inner repeats of about 4 million elements a sample, p50 of 15..41 samples).\n"
        );
        md.push_str(&beside_js(all));
        md.push_str(&width_table(cfg, mine, all));
        md
    }
}

fn js_ms(records: &[Record], layout: &str, n: u64, systems: &str) -> Option<f64> {
    let param = format!("systems={systems}");
    let query = Query::metric(Metric::FrameMs)
        .layout(layout)
        .n(n)
        .param(&param);
    records
        .iter()
        .find(|r| r.experiment == NAME && query.matches(r))
        .map(|r| r.p50)
}

/// The layouts table with V8 here beside the study's M3 and our Rust (f64, one thread), and the
/// two ratios that split "ours / study": Rust / V8 on this CPU (the language), V8 here / V8 on
/// the M3 (the machine). Empty without the JS records.
pub fn beside_js(all: &[Record]) -> String {
    if !all
        .iter()
        .any(|r| r.experiment == NAME && r.metric == Metric::FrameMs)
    {
        return String::new();
    }
    let rust: Vec<Record> = all
        .iter()
        .filter(|r| r.experiment == super::layouts::NAME)
        .cloned()
        .collect();
    let mut rows = Vec::new();
    for &(n, ..) in &studies::JS_LAYOUTS {
        for layout in FRAME_LAYOUTS {
            let ours = Query::metric(Metric::FrameMs)
                .layout(layout)
                .scalar("f64")
                .threads("1")
                .n(n)
                .find(&rust)
                .map(|r| r.p50);
            let here = js_ms(all, layout, n, "ours");
            let here_study = js_ms(all, layout, n, "study");
            let m3 = studies::js_layout_ms(layout, n);
            if here.is_none() && here_study.is_none() {
                continue;
            }
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("x{:.2}", a / b),
                _ => "-".into(),
            };
            let ms = |v: Option<f64>| v.map_or("-".into(), fmt_num);
            rows.push(vec![
                fmt_count(n),
                format!("`{layout}`"),
                ms(ours),
                ms(here),
                ms(here_study),
                ms(m3),
                ratio(ours, here),
                ratio(here_study, m3),
            ]);
        }
    }
    format!(
        "\nf64, p50 ms per frame. \"Rust here\": the `layouts` experiment (our systems, with the wrap). \"JS here\": V8 running the same systems; \"JS here, study's systems\": the study's code (no wrap), which is what the M3 ran. Rust / JS here is the language on one CPU; JS here / JS study is one language on two CPUs.\n\n{}",
        table(
            &[
                "entities",
                "layout",
                "Rust here",
                "JS here",
                "JS here, study's systems",
                "JS study (M3)",
                "Rust / JS here",
                "JS here / JS study"
            ],
            &rows
        )
    )
}

/// ns per element for S = 1..20 in every shape, the Rust SoA of the `width` experiment beside
/// them, then where each one's cost climbs.
fn width_table(cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
    let n = width_n(cfg) as u64;
    let ns = |layout: &str, n: u64, s: usize, records: &[Record]| {
        Query::metric(Metric::NsPerElement)
            .layout(layout)
            .n(n)
            .param(&format!("streams={s}"))
            .find(records)
            .map(|r| r.p50)
    };
    let rust: Vec<Record> = all
        .iter()
        .filter(|r| r.experiment == "width")
        .cloned()
        .collect();
    let mut rows = Vec::new();
    for s in 1..=20 {
        let mut row = vec![s.to_string()];
        for layout in WIDTH_LAYOUTS {
            row.push(ns(layout, n, s, mine).map_or("-".into(), fmt_num));
        }
        row.push(ns("soa-columns", IN_CACHE_N as u64, s, mine).map_or("-".into(), fmt_num));
        row.push(ns("soa", n, s, &rust).map_or("-".into(), fmt_num));
        row.push(ns("aos", n, s, &rust).map_or("-".into(), fmt_num));
        rows.push(row);
    }
    let in_cache = format!(
        "V8 columns, {} entities (in L2)",
        fmt_count(IN_CACHE_N as u64)
    );
    let mut md = format!(
        "\nWidth reversal: {} entities of 20 doubles, a read-only pass summing S of them (the study's kernel: one sum, S reads per element); p50 ns per element read. Rust's columns are the `width` experiment's (8 accumulators), where it ran.\n\n{}",
        fmt_count(n),
        table(
            &[
                "S",
                "V8 objects",
                "V8 SoA, a Float64Array per column",
                "V8 SoA, views of one buffer",
                "V8 SoA, one array at S offsets",
                "V8 AoS",
                &in_cache,
                "Rust SoA",
                "Rust AoS"
            ],
            &rows
        )
    );
    md.push_str("\nWhere each climbs (the cheapest ns per element at S <= 6, the first S after it costing 1.5x that, and S = 20):\n\n");
    let shapes: [(&str, u64, &[Record], &str); 6] = [
        ("soa-columns", n, mine, "V8, a Float64Array per column"),
        ("soa-shared", n, mine, "V8, views of one buffer"),
        ("soa-one-index", n, mine, "V8, one array at S offsets"),
        ("soa-columns", IN_CACHE_N as u64, mine, "V8, columns in L2"),
        ("soa", n, &rust, "Rust SoA"),
        ("aos", n, mine, "V8 AoS"),
    ];
    for (layout, at, records, label) in shapes {
        let curve: Vec<(usize, f64)> = (1..=20)
            .filter_map(|s| Some((s, ns(layout, at, s, records)?)))
            .collect();
        if curve.is_empty() {
            continue;
        }
        md.push_str(&format!("- {label}: {}\n", describe_climb(&curve)));
    }
    md
}

/// Where a per-element cost curve climbs: its floor (the cheapest point at S <= 6), the first S
/// past the floor that costs 1.5x it, and the cost at the last S.
pub fn climb(curve: &[(usize, f64)]) -> Option<(usize, f64, Option<usize>, f64)> {
    let (floor_s, floor) = curve
        .iter()
        .copied()
        .filter(|&(s, _)| s <= 6)
        .min_by(|a, b| a.1.total_cmp(&b.1))?;
    let cliff = curve
        .iter()
        .find(|&&(s, v)| s > floor_s && v >= 1.5 * floor)
        .map(|&(s, _)| s);
    let &(_, last) = curve.last()?;
    Some((floor_s, floor, cliff, last))
}

fn describe_climb(curve: &[(usize, f64)]) -> String {
    let Some((floor_s, floor, cliff, last)) = climb(curve) else {
        return "-".into();
    };
    let last_s = curve.last().map_or(0, |c| c.0);
    let at = match cliff {
        Some(s) => format!("climbs to 1.5x from S = {s}"),
        None => "never reaches 1.5x of it".into(),
    };
    format!(
        "floor {} ns at S = {floor_s}, {at}; {} ns at S = {last_s} (x{:.2} the floor)",
        fmt_num(floor),
        fmt_num(last),
        last / floor
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_climb_is_found_past_the_floor_and_not_before_it() {
        // Latency-bound at S = 1 (dear), cheapest at 4, 1.5x the floor from 10.
        let curve = [
            (1, 1.2),
            (2, 0.6),
            (4, 0.3),
            (6, 0.32),
            (8, 0.4),
            (10, 0.5),
            (20, 2.4),
        ];
        assert_eq!(climb(&curve), Some((4, 0.3, Some(10), 2.4)));
        let flat = [(1, 0.3), (10, 0.31), (20, 0.33)];
        assert_eq!(climb(&flat), Some((1, 0.3, None, 0.33)));
        assert_eq!(climb(&[]), None);
        assert!(describe_climb(&flat).contains("never reaches"));
    }

    #[test]
    fn bad_cells_name_what_is_accepted() {
        for cell in ["width:nope:n=10", "layouts:n=x", "layouts", "width:aos"] {
            let err = cell.parse::<Script>().unwrap_err().to_string();
            assert!(err.contains(cell) && err.contains("soa-shared"), "{err}");
        }
    }
}

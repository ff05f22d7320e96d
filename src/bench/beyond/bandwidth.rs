//! The distance to the physical limit (past the studies): this machine's streaming bandwidth
//! (STREAM-style copy and triad over 384 MiB of arrays, one thread and all), and
//! each layout's frame expressed as the bandwidth it achieves. A frame must touch 36 B per entity
//! at f32 (move reads x, y, vx, vy and writes x, y: 24 B; regen reads energy, regen and writes
//! energy: 12 B), so a layout's effective rate is 36 B x n / frame time, whatever it really moved.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::tools::bandwidth::triad;

pub struct Bandwidth;

const NAME: &str = "bandwidth";
use crate::tools::bandwidth::FRAME_BYTES_F32;

/// The one cell: STREAM's copy and triad, one thread and all (`stream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stream;

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stream")
    }
}

impl FromStr for Stream {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "stream", |text| (text == "stream").then_some(Stream))
    }
}

impl Experiment for Bandwidth {
    type Cell = Stream;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: the machine's streaming limit"
    }

    fn title(&self) -> &'static str {
        "Bandwidth: the machine's streaming limit and each layout's share of it"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Stream> {
        vec![Stream]
    }

    fn run_cell(&self, cfg: &BenchConfig, _: &Stream) -> Result<Vec<Record>, BenchError> {
        // 3 arrays x 16M doubles = 384 MiB: twelve times an AMD EPYC's 32 MiB L3. An Intel Xeon
        // host reports 480 MiB, shared with its other guests, and its triad still runs at a
        // memory's rate there (docs/results/memory.md, "Bandwidth"; docs/runs/full-2026-12-06-2).
        let n = cfg.pick(16 << 20, 4 << 20);
        let mut a = vec![1.0f64; n];
        let b = vec![2.0f64; n];
        let c = vec![0.5f64; n];
        let scalar = 3.0;
        let mut out = Vec::new();
        for threads in Threads::BOTH {
            let len = chunk_len(threads, n);
            let copy = measure(&cfg.method, || {
                for_each_part(threads, a.chunks_mut(len).zip(b.chunks(len)), |(a, b)| {
                    a.copy_from_slice(b)
                });
            });
            let triad = measure(&cfg.method, || {
                let parts = a.chunks_mut(len).zip(b.chunks(len).zip(c.chunks(len)));
                for_each_part(threads, parts, |(a, (b, c))| triad(a, b, c, scalar));
            });
            std::hint::black_box(&a);
            // GB/s = bytes / (ms * 1e6); p10 of time is p90 of rate, so swap them.
            for (name, bytes, stats) in [("copy", 16.0, copy), ("triad", 24.0, triad)] {
                let gbs = |ms: f64| bytes * n as f64 / (ms * 1e6);
                let mut rate = stats;
                (rate.p10, rate.p50, rate.p90) = (gbs(stats.p90), gbs(stats.p50), gbs(stats.p10));
                out.push(
                    Record::new(NAME, format!("stream-{name}"), "f64", n)
                        .threads(threads)
                        .with(Metric::BandwidthGbs, "GB/s", rate),
                );
            }
        }
        Ok(out)
    }

    fn render(&self, _cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        let gbs = |name: &str, threads: &str| {
            Query::metric(Metric::BandwidthGbs)
                .layout(name)
                .threads(threads)
                .find(mine)
                .map(|r| r.p50)
        };
        let rows: Vec<Vec<String>> = ["stream-copy", "stream-triad"]
            .iter()
            .map(|name| {
                vec![
                    (*name).into(),
                    gbs(name, "1").map_or("-".into(), fmt_num),
                    gbs(name, "all").map_or("-".into(), fmt_num),
                ]
            })
            .collect();
        let mut md = table(&["kernel", "1 thread GB/s", "all threads GB/s"], &rows);
        let Some(triad) = gbs("stream-triad", "1") else {
            return md;
        };
        let mut counts: Vec<u64> = all
            .iter()
            .filter(|r| r.experiment == "layouts" && r.scalar == "f32" && r.n >= 1_000_000)
            .map(|r| r.n)
            .collect();
        counts.sort_unstable();
        counts.dedup();
        if counts.is_empty() {
            md.push_str("\n(Run with the `layouts` experiment at 1M+ entities to see each layout's share.)\n");
            return md;
        }
        let mut header = vec!["layout".to_string()];
        header.extend(counts.iter().map(|n| format!("{} entities", fmt_count(*n))));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .map(|kind| {
                let mut row = vec![format!("`{kind}`")];
                for &n in &counts {
                    row.push(
                        all.iter()
                            .find(|r| {
                                r.experiment == "layouts"
                                    && r.layout == kind.name()
                                    && r.scalar == "f32"
                                    && r.threads == "1"
                                    && r.n == n
                                    && r.metric == Metric::FrameMs
                            })
                            .map_or("-".into(), |r| {
                                let rate = FRAME_BYTES_F32 * n as f64 / (r.p50 * 1e6);
                                format!(
                                    "{} GB/s ({:.0}% of triad)",
                                    fmt_num(rate),
                                    100.0 * rate / triad
                                )
                            }),
                    );
                }
                row
            })
            .collect();
        md.push_str(&format!(
            "\nEffective bandwidth of one frame (36 B per entity, f32, one thread) against the one-thread triad ({} GB/s):\n\n{}",
            fmt_num(triad),
            table(&header, &rows)
        ));
        md
    }
}

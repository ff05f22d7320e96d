//! Width reversal: 1M entities of 20 `f64` fields, a read-only system summing S of them, for
//! boxed objects, SoA (20 columns), AoS (stride 20) and 16 KiB chunks of 20 short columns
//! (Unity's shape, which should sit near SoA at small S and near AoS at large S). The JS study's proof that cost follows
//! bytes touched, and that it cuts both ways: SoA pays per stream, and past the prefetcher's
//! stream limit each extra column costs more than the last, while AoS and boxed objects pay for
//! the whole 160-byte record whatever S is.
//!
//! The sums keep 8 independent accumulators (per lane, or per field for records) so the loop is
//! bound by memory, not by the latency of one floating-point add chain.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::chunked::ChunkedFields;
use crate::bench::report::cell::{CellTextError, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_num, table, vs_study};
use crate::bench::report::harness::measure;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;

pub struct Width;

const NAME: &str = "width";
const FIELDS: usize = 20;
const STREAMS: [usize; 9] = [1, 2, 4, 6, 8, 10, 12, 16, 20];

/// A cell: the shape the 20 fields are stored in, by its name in the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    Boxed,
    Soa,
    Aos,
    Chunks,
}

impl Shape {
    const ALL: [Shape; 4] = [Shape::Boxed, Shape::Soa, Shape::Aos, Shape::Chunks];

    fn name(self) -> &'static str {
        match self {
            Shape::Boxed => "boxed",
            Shape::Soa => "soa",
            Shape::Aos => "aos",
            Shape::Chunks => "chunks",
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Shape {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "boxed, soa, aos or chunks", |text| {
            Shape::ALL.into_iter().find(|s| s.name() == text)
        })
    }
}

type Row = [f64; FIELDS];

fn value(i: usize, f: usize) -> f64 {
    ((i * 31 + f * 7) % 1000) as f64 * 0.001
}

fn sum_soa<const S: usize>(columns: &[Vec<f64>]) -> f64 {
    let n = columns[0].len();
    let columns: [&[f64]; S] = std::array::from_fn(|f| &columns[f][..n]);
    let mut lanes = [0.0f64; 8];
    for k in 0..n / 8 {
        for column in &columns {
            let v: &[f64; 8] = column[k * 8..k * 8 + 8].try_into().expect("8 lanes");
            for (lane, x) in lanes.iter_mut().zip(v) {
                *lane += x;
            }
        }
    }
    let tail: f64 = columns
        .iter()
        .map(|c| c[n / 8 * 8..].iter().sum::<f64>())
        .sum();
    lanes.iter().sum::<f64>() + tail
}

fn sum_chunks<const S: usize>(chunks: &ChunkedFields<FIELDS>) -> f64 {
    let cap = ChunkedFields::<FIELDS>::CAP;
    let mut lanes = [0.0f64; 8];
    for block in chunks.blocks() {
        let columns: [&[f64]; S] = std::array::from_fn(|f| &block[f * cap..(f + 1) * cap]);
        for k in 0..cap / 8 {
            for column in &columns {
                let v: &[f64; 8] = column[k * 8..k * 8 + 8].try_into().expect("8 lanes");
                for (lane, x) in lanes.iter_mut().zip(v) {
                    *lane += x;
                }
            }
        }
    }
    lanes.iter().sum()
}

fn sum_rows<'a, const S: usize>(rows: impl Iterator<Item = &'a Row>) -> f64 {
    let mut acc = [0.0f64; S];
    for row in rows {
        for (a, x) in acc.iter_mut().zip(&row[..S]) {
            *a += x;
        }
    }
    acc.iter().sum()
}

/// Calls `$kernel::<S>($args)` for the runtime stream count `$s`.
macro_rules! with_streams {
    ($s:expr, $kernel:ident, $($args:expr),*) => {
        match $s {
            1 => $kernel::<1>($($args),*),
            2 => $kernel::<2>($($args),*),
            4 => $kernel::<4>($($args),*),
            6 => $kernel::<6>($($args),*),
            8 => $kernel::<8>($($args),*),
            10 => $kernel::<10>($($args),*),
            12 => $kernel::<12>($($args),*),
            16 => $kernel::<16>($($args),*),
            _ => $kernel::<20>($($args),*),
        }
    };
}

impl Experiment for Width {
    type Cell = Shape;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: the 20-field width reversal"
    }

    fn title(&self) -> &'static str {
        "Width reversal: 20 fields, a read-only system summing S of them"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Shape> {
        Shape::ALL.to_vec()
    }

    fn run_cell(&self, cfg: &BenchConfig, &shape: &Shape) -> Result<Vec<Record>, BenchError> {
        let layout = shape.name();
        let n = cfg.pick(1_000_000, 100_000);
        let mut out = Vec::new();
        let mut record = |s: usize, stats: crate::bench::report::harness::Stats| {
            let ns = stats.scaled(1e6 / (n * s) as f64);
            let base = Record::new(NAME, layout, "f64", n).param(format!("streams={s}"));
            out.push(base.clone().with(Metric::ReadMs, "ms", stats));
            out.push(base.with(Metric::NsPerElement, "ns", ns));
        };
        match shape {
            Shape::Soa => {
                let columns: Vec<Vec<f64>> = (0..FIELDS)
                    .map(|f| (0..n).map(|i| value(i, f)).collect())
                    .collect();
                for s in STREAMS {
                    let stats = measure(&cfg.method, || {
                        std::hint::black_box(with_streams!(s, sum_soa, &columns));
                    });
                    record(s, stats);
                }
            }
            Shape::Chunks => {
                let chunks = ChunkedFields::<FIELDS>::new(n, value);
                for s in STREAMS {
                    let stats = measure(&cfg.method, || {
                        std::hint::black_box(with_streams!(s, sum_chunks, &chunks));
                    });
                    record(s, stats);
                }
            }
            Shape::Aos => {
                let rows: Vec<Row> = (0..n)
                    .map(|i| std::array::from_fn(|f| value(i, f)))
                    .collect();
                for s in STREAMS {
                    let stats = measure(&cfg.method, || {
                        std::hint::black_box(with_streams!(s, sum_rows, rows.iter()));
                    });
                    record(s, stats);
                }
            }
            Shape::Boxed => {
                let boxes: Vec<Box<Row>> = (0..n)
                    .map(|i| Box::new(std::array::from_fn(|f| value(i, f))))
                    .collect();
                for s in STREAMS {
                    let stats = measure(&cfg.method, || {
                        std::hint::black_box(with_streams!(
                            s,
                            sum_rows,
                            boxes.iter().map(|b| &**b)
                        ));
                    });
                    record(s, stats);
                }
            }
        }
        Ok(out)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let n = cfg.pick(1_000_000, 100_000);
        let mut rows = Vec::new();
        for s in STREAMS {
            let param = format!("streams={s}");
            let mut row = vec![s.to_string()];
            for layout in Shape::ALL.map(Shape::name) {
                let ms = Query::metric(Metric::ReadMs)
                    .layout(layout)
                    .scalar("f64")
                    .param(&param)
                    .find(mine);
                let ns = Query::metric(Metric::NsPerElement)
                    .layout(layout)
                    .scalar("f64")
                    .param(&param)
                    .find(mine);
                let study = studies::JS_WIDTH_MS
                    .iter()
                    .find(|r| r.0 == s)
                    .and_then(|r| {
                        let v = match layout {
                            "boxed" => r.1,
                            "soa" => r.2,
                            "aos" => r.3,
                            _ => f64::NAN,
                        };
                        (n == 1_000_000 && v.is_finite()).then_some(v)
                    });
                row.push(ms.map_or("-".into(), |r| vs_study(r.p50, study)));
                row.push(ns.map_or("-".into(), |r| fmt_num(r.p50)));
            }
            rows.push(row);
        }
        let mut md = format!(
            "{n} entities of 20 f64 fields; p50 ms per pass and ns per element read.\n\n{}",
            table(
                &[
                    "S",
                    "boxed ms",
                    "boxed ns/el",
                    "SoA ms",
                    "SoA ns/el",
                    "AoS ms",
                    "AoS ns/el",
                    "chunks ms",
                    "chunks ns/el"
                ],
                &rows
            )
        );
        md.push_str(&format!("\n{}\n", cliff_sentence(mine)));
        md.push_str(&chunks_sentence(mine));
        md
    }
}

/// Where SoA's ns per element starts to climb: the first S costing 1.5x the flat level (the
/// median of S = 1, 2, 4) or more.
pub fn soa_cliff(mine: &[Record]) -> Option<(usize, f64, f64)> {
    let ns = |s: usize| {
        Query::metric(Metric::NsPerElement)
            .layout("soa")
            .scalar("f64")
            .param(&format!("streams={s}"))
            .find(mine)
            .map(|r| r.p50)
    };
    let mut flat: Vec<f64> = [1, 2, 4].iter().filter_map(|&s| ns(s)).collect();
    flat.sort_by(f64::total_cmp);
    let level = *flat.get(flat.len() / 2)?;
    STREAMS
        .iter()
        .filter_map(|&s| Some((s, ns(s)?)))
        .find(|&(_, v)| v >= 1.5 * level)
        .map(|(s, v)| (s, level, v))
}

fn cliff_sentence(mine: &[Record]) -> String {
    match soa_cliff(mine) {
        Some((s, level, v)) => format!(
            "SoA's cost per element is flat at {} ns up to the stream count before {s}, and {} ns at {s} streams (the JS study: flat at {} ns, climbing past ~{} streams to {} ns at 20).",
            fmt_num(level),
            fmt_num(v),
            studies::JS_SOA_NS_FLAT,
            studies::JS_STREAM_CLIFF,
            studies::JS_SOA_NS_AT_20
        ),
        None => format!(
            "SoA's cost per element never rose to 1.5x its 1-4 stream level up to 20 streams (the JS study saw a climb past ~{} streams, {} -> {} ns).",
            studies::JS_STREAM_CLIFF,
            studies::JS_SOA_NS_FLAT,
            studies::JS_SOA_NS_AT_20
        ),
    }
}

/// How close the chunks come to the better of SoA and AoS at the narrowest and widest reads.
fn chunks_sentence(mine: &[Record]) -> String {
    let ms = |layout: &str, s: usize| {
        Query::metric(Metric::ReadMs)
            .layout(layout)
            .scalar("f64")
            .param(&format!("streams={s}"))
            .find(mine)
            .map(|r| r.p50)
    };
    let parts: Vec<String> = [2, FIELDS]
        .iter()
        .filter_map(|&s| {
            let (chunks, soa, aos) = (ms("chunks", s)?, ms("soa", s)?, ms("aos", s)?);
            let (best, name) = if soa <= aos {
                (soa, "SoA")
            } else {
                (aos, "AoS")
            };
            Some(format!(
                "at S = {s}, x{:.2} the better of SoA and AoS ({name})",
                chunks / best
            ))
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(
            "\nChunks (16 KiB blocks of 20 short columns): {}.\n",
            parts.join("; ")
        )
    }
}

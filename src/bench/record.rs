//! One measured cell, flat, so that anyone can load `results.csv` / `results.json` into a
//! notebook without knowing this program.

use serde::{Deserialize, Serialize};

use super::harness::Stats;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub experiment: String,
    /// Layout and variant (`soa`, `ecs-table`, `boxed-shuffled`, `hashmap`, ...).
    pub layout: String,
    pub scalar: String,
    /// `1` or `all`.
    pub threads: String,
    /// Entities in the population measured.
    pub n: u64,
    /// The experiment's own knob, e.g. `streams=4`, `share=10%`, `archetypes=64`; empty if none.
    pub param: String,
    pub metric: String,
    pub unit: String,
    pub p50: f64,
    pub p10: f64,
    pub p90: f64,
    pub samples: usize,
}

impl Record {
    /// A record with everything but the numbers filled in; `with` adds them.
    pub fn new(experiment: &str, layout: impl Into<String>, scalar: &str, n: usize) -> Self {
        Self {
            experiment: experiment.into(),
            layout: layout.into(),
            scalar: scalar.into(),
            threads: "1".into(),
            n: n as u64,
            param: String::new(),
            metric: String::new(),
            unit: String::new(),
            p50: 0.0,
            p10: 0.0,
            p90: 0.0,
            samples: 0,
        }
    }

    pub fn threads(mut self, threads: crate::threads::Threads) -> Self {
        self.threads = threads.name().into();
        self
    }

    pub fn param(mut self, param: impl Into<String>) -> Self {
        self.param = param.into();
        self
    }

    pub fn with(mut self, metric: &str, unit: &str, stats: Stats) -> Self {
        self.metric = metric.into();
        self.unit = unit.into();
        self.p50 = stats.p50;
        self.p10 = stats.p10;
        self.p90 = stats.p90;
        self.samples = stats.samples;
        self
    }

    /// A single exact value (a count of bytes, a crossing found by search).
    pub fn value(self, metric: &str, unit: &str, value: f64) -> Self {
        self.with(
            metric,
            unit,
            Stats {
                p10: value,
                p50: value,
                p90: value,
                samples: 1,
            },
        )
    }
}

/// The p50 of the first record matching every given field (empty strings match anything).
pub fn find<'a>(
    records: &'a [Record],
    layout: &str,
    scalar: &str,
    threads: &str,
    n: u64,
    param: &str,
    metric: &str,
) -> Option<&'a Record> {
    records.iter().find(|r| {
        (layout.is_empty() || r.layout == layout)
            && (scalar.is_empty() || r.scalar == scalar)
            && (threads.is_empty() || r.threads == threads)
            && (n == 0 || r.n == n)
            && (param.is_empty() || r.param == param)
            && r.metric == metric
    })
}

pub const CSV_HEADER: &str =
    "experiment,layout,scalar,threads,n,param,metric,unit,p50,p10,p90,samples";

pub fn to_csv(records: &[Record]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in records {
        let quote = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{}\n",
            quote(&r.experiment),
            quote(&r.layout),
            r.scalar,
            r.threads,
            r.n,
            quote(&r.param),
            quote(&r.metric),
            quote(&r.unit),
            r.p50,
            r.p10,
            r.p90,
            r.samples
        ));
    }
    out
}

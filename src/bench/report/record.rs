//! One measured cell, flat, so that anyone can load `results.csv` / `results.json` into a
//! notebook without knowing this program.

use serde::{Deserialize, Serialize};

use crate::bench::report::harness::Stats;

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
    /// What ran the measured code: `rust` for this program, `node v20.20.2` for the JS study's
    /// experiments run by `benches/js/layouts.mjs` on the same machine.
    #[serde(default = "rust")]
    pub runtime: String,
}

fn rust() -> String {
    RUST.into()
}

/// The runtime of every record this program measures itself.
pub const RUST: &str = "rust";

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
            runtime: rust(),
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

/// Which record to look up: the metric, and any of the other fields; a field left unset
/// matches anything. `Query::metric("frame_ms").layout("soa").n(1000).find(records)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Query<'q> {
    metric: &'q str,
    layout: Option<&'q str>,
    scalar: Option<&'q str>,
    threads: Option<&'q str>,
    n: Option<u64>,
    param: Option<&'q str>,
}

impl<'q> Query<'q> {
    pub fn metric(metric: &'q str) -> Self {
        Self {
            metric,
            ..Self::default()
        }
    }

    /// The same query for another metric.
    pub fn with_metric(self, metric: &'q str) -> Self {
        Self { metric, ..self }
    }

    pub fn layout(self, layout: &'q str) -> Self {
        Self {
            layout: Some(layout),
            ..self
        }
    }

    pub fn scalar(self, scalar: &'q str) -> Self {
        Self {
            scalar: Some(scalar),
            ..self
        }
    }

    pub fn threads(self, threads: &'q str) -> Self {
        Self {
            threads: Some(threads),
            ..self
        }
    }

    pub fn n(self, n: u64) -> Self {
        Self { n: Some(n), ..self }
    }

    pub fn param(self, param: &'q str) -> Self {
        Self {
            param: Some(param),
            ..self
        }
    }

    pub fn matches(&self, r: &Record) -> bool {
        let field = |want: Option<&str>, have: &str| want.is_none_or(|w| w == have);
        r.metric == self.metric
            && field(self.layout, &r.layout)
            && field(self.scalar, &r.scalar)
            && field(self.threads, &r.threads)
            && self.n.is_none_or(|n| n == r.n)
            && field(self.param, &r.param)
    }

    /// The first matching record.
    pub fn find<'a>(&self, records: &'a [Record]) -> Option<&'a Record> {
        records.iter().find(|r| self.matches(r))
    }
}

pub const CSV_HEADER: &str =
    "experiment,layout,scalar,threads,n,param,metric,unit,p50,p10,p90,samples,runtime";

/// The records as CSV, one row per record under [`CSV_HEADER`]; any text field may hold commas,
/// quotes or line breaks ([`from_csv`] reads it back exactly).
pub fn to_csv(records: &[Record]) -> String {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer
        .write_record(CSV_HEADER.split(','))
        .expect("writing to memory cannot fail");
    for r in records {
        writer
            .serialize(r)
            .expect("a record is strings and numbers, which CSV holds");
    }
    let bytes = writer.into_inner().expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
}

/// Records from the text [`to_csv`] writes.
pub fn from_csv(text: &str) -> Result<Vec<Record>, csv::Error> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trips_commas_quotes_and_line_breaks() {
        let records = vec![
            Record::new("width", "soa", "f64", 1_000_000)
                .param("streams=4")
                .value("read_ms", "ms", 0.125),
            Record::new("counters", "a \"quoted\", layout", "f32", 10)
                .param("simulated: valgrind says \"no\",\nthen stops")
                .value("unavailable", "cells", 1.0),
            Record {
                runtime: "node v20.20.2".into(),
                ..Record::new("js", "soa", "f64", 1000).value("frame_ms", "ms", 0.5)
            },
        ];
        let text = to_csv(&records);
        assert!(text.starts_with(&format!("{CSV_HEADER}\n")));
        assert_eq!(from_csv(&text).unwrap(), records);
        assert_eq!(to_csv(&[]), format!("{CSV_HEADER}\n"));
        // Results written before the runtime column read back as this program's.
        let old = "experiment,layout,scalar,threads,n,param,metric,unit,p50,p10,p90,samples\nlayouts,soa,f32,1,10,,frame_ms,ms,1,1,1,1\n";
        assert_eq!(from_csv(old).unwrap()[0].runtime, RUST);
    }

    #[test]
    fn a_query_matches_only_the_fields_it_sets() {
        let r = |layout: &str, n: usize, metric: &str| {
            Record::new("e", layout, "f32", n).value(metric, "ms", 1.0)
        };
        let records = [
            r("soa", 10, "a"),
            r("aos", 10, "a"),
            r("aos", 20, "a"),
            r("aos", 20, "b"),
        ];
        let found = |q: Query| {
            q.find(&records)
                .map(|r| (r.layout.clone(), r.n, r.metric.clone()))
        };
        assert_eq!(
            found(Query::metric("a")),
            Some(("soa".into(), 10, "a".into()))
        );
        assert_eq!(
            found(Query::metric("a").layout("aos").n(20)),
            Some(("aos".into(), 20, "a".into()))
        );
        assert_eq!(found(Query::metric("b").n(10)), None);
        assert_eq!(found(Query::metric("a").scalar("f64")), None);
    }
}

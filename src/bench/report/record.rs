//! One measured cell, flat, so that anyone can load `results.csv` / `results.json` into a
//! notebook without knowing this program.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::bench::report::harness::Stats;
use crate::bench::report::metric::Metric;
use crate::layout::LayoutKind;

/// What a record measured: one of the layouts, or a control kernel that is none (a hash map of
/// boxes, the C++ article's programs, a stream copy). In `results.csv` and `results.json` both
/// are the `layout` column, as they always were; read back, a layout's name is a layout again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    Layout(LayoutKind),
    Control(String),
}

impl Subject {
    pub fn name(&self) -> &str {
        match self {
            Subject::Layout(kind) => kind.name(),
            Subject::Control(name) => name,
        }
    }

    /// The layout, if this is one.
    pub fn layout(&self) -> Option<LayoutKind> {
        match self {
            Subject::Layout(kind) => Some(*kind),
            Subject::Control(_) => None,
        }
    }
}

impl From<LayoutKind> for Subject {
    fn from(kind: LayoutKind) -> Self {
        Subject::Layout(kind)
    }
}

/// A name: the layout it names, or a control kernel.
impl From<&str> for Subject {
    fn from(name: &str) -> Self {
        match name.parse::<LayoutKind>() {
            Ok(kind) if kind.name() == name => Subject::Layout(kind),
            _ => Subject::Control(name.to_string()),
        }
    }
}

impl From<String> for Subject {
    fn from(name: String) -> Self {
        Subject::from(name.as_str())
    }
}

impl PartialEq<str> for Subject {
    fn eq(&self, other: &str) -> bool {
        self.name() == other
    }
}

impl PartialEq<&str> for Subject {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl PartialEq<LayoutKind> for Subject {
    fn eq(&self, other: &LayoutKind) -> bool {
        *self == Subject::Layout(*other)
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Subject {
    fn serialize<Ser: Serializer>(&self, serializer: Ser) -> Result<Ser::Ok, Ser::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Subject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Subject::from(String::deserialize(deserializer)?))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub experiment: String,
    /// The layout and variant (`soa`, `ecs-table`, `boxed-shuffled`, ...), or a control kernel.
    pub layout: Subject,
    pub scalar: String,
    /// `1` or `all`.
    pub threads: String,
    /// Entities in the population measured.
    pub n: u64,
    /// The experiment's own knob, e.g. `streams=4`, `share=10%`, `archetypes=64`; empty if none.
    pub param: String,
    pub metric: Metric,
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
    pub fn new(experiment: &str, layout: impl Into<Subject>, scalar: &str, n: usize) -> Self {
        Self {
            experiment: experiment.into(),
            layout: layout.into(),
            scalar: scalar.into(),
            threads: "1".into(),
            n: n as u64,
            param: String::new(),
            metric: Metric::Unavailable,
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

    /// Marks the record as measured in fresh process number `rep` of a figure taken in
    /// several (`rep=K` after the param, as run folders have always had it).
    pub fn in_process(mut self, rep: usize) -> Self {
        self.param = if self.param.is_empty() {
            format!("rep={rep}")
        } else {
            format!("{};rep={rep}", self.param)
        };
        self
    }

    /// The fresh process the record was measured in, for a figure taken in several.
    pub fn rep(&self) -> Option<usize> {
        self.param
            .split([';', ':'])
            .find_map(|part| part.strip_prefix("rep=")?.parse().ok())
    }

    /// The param without the process number: the experiment's own knob.
    pub fn knob(&self) -> String {
        let parts: Vec<&str> = self.param.split(';').collect();
        parts
            .iter()
            .filter(|part| !part.starts_with("rep="))
            .map(|part| match part.rsplit_once(":rep=") {
                Some((knob, _)) => knob,
                None => part,
            })
            .collect::<Vec<_>>()
            .join(";")
    }

    pub fn with(mut self, metric: Metric, unit: &str, stats: Stats) -> Self {
        self.metric = metric;
        self.unit = unit.into();
        self.p50 = stats.p50;
        self.p10 = stats.p10;
        self.p90 = stats.p90;
        self.samples = stats.samples;
        self
    }

    /// A single exact value (a count of bytes, a crossing found by search).
    pub fn value(self, metric: Metric, unit: &str, value: f64) -> Self {
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
/// matches anything. `Query::metric(Metric::FrameMs).layout("soa").n(1000).find(records)`.
#[derive(Clone, Copy, Debug)]
pub struct Query<'q> {
    metric: Metric,
    layout: Option<&'q str>,
    scalar: Option<&'q str>,
    threads: Option<&'q str>,
    n: Option<u64>,
    param: Option<&'q str>,
    rep: Option<usize>,
}

impl<'q> Query<'q> {
    pub fn metric(metric: Metric) -> Self {
        Self {
            metric,
            layout: None,
            scalar: None,
            threads: None,
            n: None,
            param: None,
            rep: None,
        }
    }

    /// The same query for another metric.
    pub fn with_metric(self, metric: Metric) -> Self {
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

    /// The param the record was written with, or, for a figure taken in several processes, its
    /// knob ([`Record::knob`]: the param without the process number).
    pub fn param(self, param: &'q str) -> Self {
        Self {
            param: Some(param),
            ..self
        }
    }

    /// Only the record measured in fresh process `rep` ([`Record::rep`]).
    pub fn rep(self, rep: usize) -> Self {
        Self {
            rep: Some(rep),
            ..self
        }
    }

    pub fn matches(&self, r: &Record) -> bool {
        let field = |want: Option<&str>, have: &str| want.is_none_or(|w| w == have);
        r.metric == self.metric
            && field(self.layout, r.layout.name())
            && field(self.scalar, &r.scalar)
            && field(self.threads, &r.threads)
            && self.n.is_none_or(|n| n == r.n)
            && self
                .param
                .is_none_or(|p| p == r.param || r.rep().is_some() && p == r.knob())
            && self.rep.is_none_or(|rep| r.rep() == Some(rep))
    }

    /// The first matching record.
    pub fn find<'a>(&self, records: &'a [Record]) -> Option<&'a Record> {
        records.iter().find(|r| self.matches(r))
    }

    /// A figure measured in several fresh processes: the p50 of each process's record, in
    /// process order. The query's param, if it sets one, is the knob ([`Record::knob`]).
    pub fn per_process(&self, records: &[Record]) -> Vec<f64> {
        let knob = self.param;
        let any_rep = Query {
            param: None,
            ..*self
        };
        let mut found: Vec<(usize, f64)> = records
            .iter()
            .filter(|r| any_rep.matches(r) && knob.is_none_or(|k| r.knob() == k))
            .filter_map(|r| Some((r.rep()?, r.p50)))
            .collect();
        found.sort_by_key(|(rep, _)| *rep);
        found.into_iter().map(|(_, p50)| p50).collect()
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
                .value(Metric::ReadMs, "ms", 0.125),
            Record::new("counters", "a \"quoted\", layout", "f32", 10)
                .param("simulated: valgrind says \"no\",\nthen stops")
                .value(Metric::Unavailable, "cells", 1.0),
            Record {
                runtime: "node v20.20.2".into(),
                ..Record::new("js", "soa", "f64", 1000).value(Metric::FrameMs, "ms", 0.5)
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
    fn processes_are_read_back_in_order_whatever_the_param_around_them() {
        let r = |param: &str, rep: usize, p50: f64| {
            Record::new("e", LayoutKind::Soa, "f32", 10)
                .param(param)
                .in_process(rep)
                .value(Metric::FrameMs, "ms", p50)
        };
        let records = [
            r("", 2, 2.0),
            r("", 1, 1.0),
            r("flags=native", 1, 10.0),
            r("size=1x1:renderer=compute", 0, 5.0),
        ];
        assert_eq!(records[0].param, "rep=2");
        assert_eq!(records[2].param, "flags=native;rep=1");
        assert_eq!(
            (records[2].rep(), records[2].knob()),
            (Some(1), "flags=native".into())
        );
        let old = Record {
            param: "size=1x1:renderer=compute:rep=3".into(),
            ..records[3].clone()
        };
        assert_eq!(
            (old.rep(), old.knob()),
            (Some(3), "size=1x1:renderer=compute".into())
        );
        let q = Query::metric(Metric::FrameMs).layout("soa");
        assert_eq!(q.param("").per_process(&records), vec![1.0, 2.0]);
        assert_eq!(q.param("flags=native").per_process(&records), vec![10.0]);
        assert_eq!(
            q.param("flags=baseline").per_process(&records),
            Vec::<f64>::new()
        );
    }

    #[test]
    fn a_query_matches_only_the_fields_it_sets() {
        let r = |layout: &str, n: usize, metric: Metric| {
            Record::new("e", layout, "f32", n).value(metric, "ms", 1.0)
        };
        let records = [
            r("soa", 10, Metric::FrameMs),
            r("aos", 10, Metric::FrameMs),
            r("aos", 20, Metric::FrameMs),
            r("aos", 20, Metric::SeekMs),
        ];
        let found = |q: Query| q.find(&records).map(|r| (r.layout.clone(), r.n, r.metric));
        assert_eq!(
            found(Query::metric(Metric::FrameMs)),
            Some(("soa".into(), 10, Metric::FrameMs))
        );
        assert_eq!(
            found(Query::metric(Metric::FrameMs).layout("aos").n(20)),
            Some(("aos".into(), 20, Metric::FrameMs))
        );
        assert_eq!(found(Query::metric(Metric::SeekMs).n(10)), None);
        assert_eq!(found(Query::metric(Metric::FrameMs).scalar("f64")), None);
    }
}

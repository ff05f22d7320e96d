//! Inline values: one figure in a page's prose, filled from the run the pages cite, so that a
//! figure in a sentence is held by `bench docs --check` as a table is. On the page:
//!
//! ```text
//! <!-- value:layouts soa frame_ms n=1000000 scalar=f32 threads=1 -->1.05<!-- /value --> ms
//! ```
//!
//! The spec names an experiment, a subject (a layout or a control kernel) and a metric, then
//! `key=value` filters (`n`, `scalar`, `threads`, `param`) until exactly one record matches; the
//! figure is that record's median, formatted as the tables format it ([`fmt_num`]). A spec that
//! matches no record, or several, is an error that says which filters tell them apart. A figure
//! from another committed run (another machine's, say) names it: `run=FOLDER`, a folder under
//! docs/runs, is read instead of the run the pages cite.

use crate::bench::report::format::fmt_num;
use crate::bench::report::record::Record;

pub const OPEN: &str = "<!-- value:";
pub const CLOSE: &str = "<!-- /value -->";

/// What one inline value asks for.
#[derive(Debug, PartialEq)]
struct Spec<'a> {
    experiment: &'a str,
    subject: &'a str,
    metric: &'a str,
    filters: Vec<(&'a str, &'a str)>,
}

const FILTERS: [&str; 4] = ["n", "scalar", "threads", "param"];

fn parse(spec: &str) -> Result<Spec<'_>, String> {
    let mut words = spec.split_whitespace();
    let (Some(experiment), Some(subject), Some(metric)) =
        (words.next(), words.next(), words.next())
    else {
        return Err(format!(
            "value '{spec}': expected EXPERIMENT SUBJECT METRIC, then key=value filters ({})",
            FILTERS.join(", ")
        ));
    };
    let filters = words
        .map(|w| match w.split_once('=') {
            Some((k, v)) if FILTERS.contains(&k) => Ok((k, v)),
            _ => Err(format!(
                "value '{spec}': '{w}' is not a filter; accepted: {}",
                FILTERS.map(|f| format!("{f}=...")).join(", ")
            )),
        })
        .collect::<Result<_, _>>()?;
    Ok(Spec {
        experiment,
        subject,
        metric,
        filters,
    })
}

/// The `run=FOLDER` token of `spec`, if it has one, and the spec without it.
pub fn split_run(spec: &str) -> (Option<&str>, String) {
    let mut run = None;
    let rest: Vec<&str> = spec
        .split_whitespace()
        .filter(|w| match w.strip_prefix("run=") {
            Some(folder) => {
                run = Some(folder);
                false
            }
            None => true,
        })
        .collect();
    (run, rest.join(" "))
}

fn field(record: &Record, key: &str) -> String {
    match key {
        "n" => record.n.to_string(),
        "scalar" => record.scalar.clone(),
        "threads" => record.threads.clone(),
        _ => record.param.clone(),
    }
}

/// The figure `spec` asks for, from `records`.
pub fn figure(spec: &str, records: &[Record]) -> Result<String, String> {
    let want = parse(spec)?;
    let found: Vec<&Record> = records
        .iter()
        .filter(|r| {
            r.experiment == want.experiment
                && r.layout.name() == want.subject
                && r.metric.name() == want.metric
                && want.filters.iter().all(|(k, v)| field(r, k) == *v)
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(fmt_num(one.p50)),
        [] => Err(format!(
            "value '{spec}': no record of the run matches (experiment, subject and metric as in results.csv)"
        )),
        many => {
            let apart: Vec<String> = FILTERS
                .iter()
                .filter_map(|k| {
                    let mut seen: Vec<String> = many.iter().map(|r| field(r, k)).collect();
                    seen.sort();
                    seen.dedup();
                    (seen.len() > 1).then(|| format!("{k}={}", seen.join("|")))
                })
                .collect();
            Err(format!(
                "value '{spec}': {} records match; tell them apart with {}",
                many.len(),
                apart.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::metric::Metric;
    use crate::layout::LayoutKind;

    fn record(n: usize, scalar: &str, p50: f64) -> Record {
        let mut r = Record::new("layouts", LayoutKind::Soa, scalar, n);
        r.metric = Metric::FrameMs;
        r.p50 = p50;
        r
    }

    #[test]
    fn a_value_is_the_one_matching_records_median_as_the_tables_format_it() {
        let records = [
            record(1_000_000, "f32", 1.0512),
            record(1_000_000, "f64", 2.5),
        ];
        assert_eq!(
            figure("layouts soa frame_ms n=1000000 scalar=f32", &records),
            Ok("1.05".to_string())
        );
        let many = figure("layouts soa frame_ms", &records).unwrap_err();
        assert!(
            many.contains("2 records match") && many.contains("scalar=f32|f64"),
            "{many}"
        );
        let none = figure("layouts boxed frame_ms", &records).unwrap_err();
        assert!(none.contains("no record"), "{none}");
        let bad = figure("layouts soa frame_ms size=3", &records).unwrap_err();
        assert!(bad.contains("'size=3' is not a filter"), "{bad}");
        assert!(
            figure("layouts soa", &records)
                .unwrap_err()
                .contains("expected")
        );
    }
}

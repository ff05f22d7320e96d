//! A report and its files: each one written complete or not at all (temp file, then rename),
//! and read back for a replot.

use std::path::Path;

use crate::bench::report::experiment::BenchError;
use crate::bench::report::machine::Machine;
use crate::bench::report::record::{Record, to_csv};

/// A run's records, machine and method, in the folder `bench --out DIR` writes.
pub const RESULTS_FILE: &str = "results.json";

/// The version of [`RESULTS_FILE`]'s layout this program writes and reads. Runs written before
/// it was recorded have none, and are this version.
pub const RESULTS_FORMAT: u64 = 1;

pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), BenchError> {
    let unwritable = |e: std::io::Error| BenchError::Unwritable {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let tmp = path.with_extension(format!(
        "{}.tmp-{}",
        path.extension().and_then(|e| e.to_str()).unwrap_or(""),
        std::process::id()
    ));
    std::fs::write(&tmp, contents).map_err(unwritable)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        unwritable(e)
    })
}

/// Everything one bench run produced.
pub struct Report {
    pub machine: Machine,
    pub method: String,
    pub command: String,
    pub records: Vec<Record>,
    pub markdown: String,
    pub seconds: f64,
    /// Cells that failed; the run went on without them.
    pub failed: Vec<FailedCell>,
    /// The experiments the run was asked for, in the order it ran them.
    pub experiments: Vec<String>,
    /// Every experiment of the suite that measured nothing in this run, and why.
    pub skipped: std::collections::BTreeMap<String, String>,
}

/// A cell that ran and failed: the report lists it, and `--resume` runs it again.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FailedCell {
    pub experiment: String,
    pub cell: String,
    pub reason: String,
}

/// `results.md`, `results.csv`, `results.json`, the SVG `plots` and `index.html` (all of it as
/// one page) into `dir`.
pub fn write_report(
    dir: &Path,
    report: &Report,
    plots: Vec<(String, String)>,
) -> Result<Vec<String>, BenchError> {
    let json = serde_json::json!({
        "format": RESULTS_FORMAT,
        "command": report.command,
        "machine": report.machine,
        "method": report.method,
        "seconds": report.seconds,
        "wall_s": report.seconds,
        "experiments": report.experiments,
        "skipped": report.skipped,
        "records": report.records,
        "failed": report.failed,
    });
    let mut written = vec![
        (
            "results.md".to_string(),
            report.markdown.clone().into_bytes(),
        ),
        (
            "results.csv".to_string(),
            to_csv(&report.records).into_bytes(),
        ),
        (
            RESULTS_FILE.to_string(),
            serde_json::to_vec_pretty(&json).expect("report serializes"),
        ),
    ];
    written.push((
        "index.html".to_string(),
        crate::bench::report::html::index_html(&report.markdown, &plots).into_bytes(),
    ));
    for (name, svg) in plots {
        written.push((name, svg.into_bytes()));
    }
    for (name, bytes) in &written {
        write_atomically(&dir.join(name), bytes)?;
    }
    Ok(written.into_iter().map(|(name, _)| name).collect())
}

/// What a run's `results.json` holds that a reader needs back: the records, and the machine
/// (`None` for runs from before it was written in full: they replot without the cache marks).
pub struct SavedRun {
    pub records: Vec<Record>,
    pub machine: Option<Machine>,
    /// The run's command line, method and total time, as its report printed them.
    pub command: String,
    pub method: String,
    pub seconds: f64,
    /// Cells that failed in the run (none for runs from before failures were kept).
    pub failed: Vec<FailedCell>,
    /// The experiments that measured nothing, and why (empty for runs from before it was kept).
    pub skipped: std::collections::BTreeMap<String, String>,
}

/// Reads a run's `results.json` back; one of another format is an error that says so.
pub fn read_results(json_path: &Path) -> Result<SavedRun, BenchError> {
    let unreadable = |reason: String| BenchError::Unwritable {
        path: json_path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(json_path).map_err(|e| unreadable(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
    match &value["format"] {
        serde_json::Value::Null => {}
        format if format.as_u64() == Some(RESULTS_FORMAT) => {}
        format => {
            return Err(unreadable(format!(
                "a results.json of format {format}; this entity-layouts reads format {RESULTS_FORMAT} (and runs written before the format was recorded)"
            )));
        }
    }
    let records = serde_json::from_value(value["records"].clone()).map_err(|e| {
        unreadable(format!(
            "not a results.json of format {RESULTS_FORMAT}: its records do not read ({e})"
        ))
    })?;
    Ok(SavedRun {
        records,
        machine: serde_json::from_value(value["machine"].clone()).ok(),
        command: value["command"].as_str().unwrap_or("unknown").to_string(),
        method: value["method"].as_str().unwrap_or("unknown").to_string(),
        seconds: value["seconds"].as_f64().unwrap_or(f64::NAN),
        failed: serde_json::from_value(value["failed"].clone()).unwrap_or_default(),
        skipped: serde_json::from_value(value["skipped"].clone()).unwrap_or_default(),
    })
}

#[cfg(test)]
mod committed_runs {
    use super::*;

    /// Every run folder the docs cite still reads, record by record, into today's typed records
    /// (a metric the bench no longer writes is still a metric; a layout's name is a layout).
    #[test]
    fn every_committed_run_reads_back() {
        let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/runs");
        let mut read = 0;
        for entry in std::fs::read_dir(&runs).unwrap() {
            let json = entry.unwrap().path().join("results.json");
            if !json.exists() {
                continue;
            }
            let run = read_results(&json).unwrap_or_else(|e| panic!("{}: {e}", json.display()));
            assert!(!run.records.is_empty(), "{}", json.display());
            read += run.records.len();
        }
        assert!(read > 1000, "{read} records in docs/runs");
    }
}

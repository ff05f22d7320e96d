//! Writing a report's files: each one complete or not at all (temp file, then rename).

use std::path::Path;

use super::machine::Machine;
use super::record::{Record, to_csv};
use super::{BenchError, Report};

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

/// `results.md`, `results.csv`, `results.json`, the SVG plots and `index.html` (all of it as one
/// page) into `dir`.
pub fn write_report(dir: &Path, report: &Report) -> Result<Vec<String>, BenchError> {
    let json = serde_json::json!({
        "command": report.command,
        "machine": report.machine,
        "method": report.method,
        "seconds": report.seconds,
        "records": report.records,
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
            "results.json".to_string(),
            serde_json::to_vec_pretty(&json).expect("report serializes"),
        ),
    ];
    let plots = super::plot::plots(&report.records, Some(&report.machine));
    written.push((
        "index.html".to_string(),
        super::html::index_html(&report.markdown, &plots).into_bytes(),
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
}

/// Reads a run's `results.json` back.
pub fn read_results(json_path: &Path) -> Result<SavedRun, BenchError> {
    let unreadable = |reason: String| BenchError::Unwritable {
        path: json_path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(json_path).map_err(|e| unreadable(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
    let records = serde_json::from_value(value["records"].clone())
        .map_err(|e| unreadable(format!("not a results.json: {e}")))?;
    Ok(SavedRun {
        records,
        machine: serde_json::from_value(value["machine"].clone()).ok(),
        command: value["command"].as_str().unwrap_or("unknown").to_string(),
        method: value["method"].as_str().unwrap_or("unknown").to_string(),
        seconds: value["seconds"].as_f64().unwrap_or(f64::NAN),
    })
}

/// Redraws the plots, the Markdown report and the page of an earlier run from its `results.json`, into
/// the same folder: a table whose layout changed reads the numbers already measured. The tables
/// are rendered as the run's `--quick` and `--in-process` had them; an experiment that recorded
/// nothing (skipped for want of an adapter) is left out.
pub fn replot(json_path: &Path) -> Result<Vec<String>, BenchError> {
    let run = read_results(json_path)?;
    let dir = json_path.parent().unwrap_or(Path::new("."));
    let mut written = Vec::new();
    let plots = super::plot::plots(&run.records, run.machine.as_ref());
    for (name, svg) in &plots {
        write_atomically(&dir.join(name), svg.as_bytes())?;
        written.push(name.clone());
    }
    let mut cfg = super::BenchConfig::new(run.command.contains("--quick"));
    cfg.in_process = run.command.contains("--in-process");
    let selected: Vec<_> = super::experiments()
        .into_iter()
        .filter(|e| run.records.iter().any(|r| r.experiment == e.name()))
        .collect();
    let machine = run.machine.as_ref().map_or("unknown".into(), Machine::line);
    let markdown = super::render_markdown(
        &cfg,
        &selected,
        &run.records,
        &run.command,
        &machine,
        &run.method,
        run.seconds,
    );
    write_atomically(&dir.join("results.md"), markdown.as_bytes())?;
    written.push("results.md".into());
    let page = super::html::index_html(&markdown, &plots);
    write_atomically(&dir.join("index.html"), page.as_bytes())?;
    written.push("index.html".into());
    Ok(written)
}

//! Running a selection of experiments: each cell in its own child process (or in this one),
//! kept in the run's journal as it ends, with progress on stderr; then the report, its plots and
//! its files. A replot renders an earlier run's records again.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::bench::beyond;
use crate::bench::report::cell::AnyCell;
use crate::bench::report::experiment::{AnyExperiment, BenchConfig, BenchError};
use crate::bench::report::html::index_html;
use crate::bench::report::journal::{CellEntry, Interrupted, Journal};
use crate::bench::report::machine::Machine;
use crate::bench::report::metric::Metric;
use crate::bench::report::output::{FailedCell, Report, read_results, write_atomically};
use crate::bench::report::progress::{Passthrough, Progress, Stage};
use crate::bench::report::record::Record;
use crate::bench::studies;
use crate::bench::suite::{experiments, select};

/// Where the run keeps each cell as it ends, and what an interrupted run already finished.
#[derive(Default)]
pub struct Keep {
    pub journal: Option<Journal>,
    pub resumed: Option<Interrupted>,
}

/// The test hook for a failing cell: `ENTITY_LAYOUTS_BENCH_FAIL_CELL="EXPERIMENT CELL"` makes
/// that one cell fail as a crashed worker would, in a child process or in this one.
pub const FAIL_CELL_ENV: &str = "ENTITY_LAYOUTS_BENCH_FAIL_CELL";

/// How one cell ended.
enum CellEnd {
    Measured(Vec<Record>),
    Failed(String),
    Interrupted,
}

/// Runs the selected experiments and renders the report. Progress goes to stderr; each cell's
/// records reach `keep.journal` as the cell ends; cells `keep.resumed` finished are not run
/// again. A failing cell is reported and the run goes on; `stop` (set by Ctrl-C or SIGTERM)
/// ends the cell now running and the run, with [`BenchError::Interrupted`].
pub fn run(
    cfg: &BenchConfig,
    selected: &[&'static dyn AnyExperiment],
    command: String,
    mut keep: Keep,
    stop: &AtomicBool,
) -> Result<Report, BenchError> {
    let started = Instant::now();
    let machine = Machine::detect();
    let method = cfg.method.describe();
    let mut records = Vec::new();
    let mut failed = Vec::new();
    let mut kept_seconds = 0.0;
    let stages = selected
        .iter()
        .map(|e| Stage {
            name: e.name(),
            cells: e.cells(cfg, &[]).len(),
        })
        .collect();
    let mut progress = Progress::new(stages, cfg.quick);
    if let Some(journal) = &keep.journal {
        let path = journal.dir().join("progress.log");
        progress
            .log_to(&path, keep.resumed.is_some())
            .map_err(|e| BenchError::Unwritable {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
    }
    for line in not_narrowed(cfg, selected) {
        progress.note(&line);
    }
    if let Some(resumed) = &keep.resumed {
        progress.note(&format!(
            "resuming: {} finished cells kept{}",
            resumed.done.len(),
            match resumed.skipped_lines {
                0 => String::new(),
                n => format!(", {n} torn line(s) skipped (their cells run again)"),
            }
        ));
    }
    for experiment in selected {
        let name = experiment.name();
        let cells = experiment.cells(cfg, &records);
        progress.begin_stage(name, cells.len());
        let mut measured_any = false;
        for cell in cells {
            let key = (name.to_string(), cell.text().to_string());
            if let Some(entry) = keep.resumed.as_mut().and_then(|r| r.done.remove(&key)) {
                kept_seconds += entry.seconds;
                records.extend(entry.records);
                progress.kept();
                continue;
            }
            let cell_started = Instant::now();
            let end = if stop.load(Ordering::SeqCst) {
                CellEnd::Interrupted
            } else if cfg.in_process {
                progress.start_cell(name, cell.text());
                match run_cell_checked(*experiment, cfg, &cell) {
                    Ok(got) => CellEnd::Measured(got),
                    Err(e) => CellEnd::Failed(e.to_string()),
                }
            } else {
                progress.start_cell(name, cell.text());
                run_worker(cfg, name, &cell, stop, &progress.passthrough())
            };
            let seconds = cell_started.elapsed().as_secs_f64();
            let mut entry = CellEntry {
                experiment: name.into(),
                cell: cell.text().into(),
                seconds,
                failed: None,
                records: Vec::new(),
            };
            match end {
                CellEnd::Measured(got) => entry.records = got,
                CellEnd::Failed(reason) => {
                    progress.note(&format!("FAILED {name} {cell}: {reason}; the run goes on"));
                    failed.push(FailedCell {
                        experiment: name.into(),
                        cell: cell.text().into(),
                        reason: reason.clone(),
                    });
                    entry.failed = Some(reason);
                }
                CellEnd::Interrupted => {
                    progress.finish();
                    return Err(BenchError::Interrupted {
                        done: progress.done(),
                        total: progress.total(),
                        kept: keep.journal.as_ref().map(|j| j.dir().display().to_string()),
                    });
                }
            }
            if let Some(journal) = &mut keep.journal {
                journal.write(&entry)?;
            }
            records.extend(entry.records);
            progress.end_cell(seconds);
            measured_any = true;
        }
        if measured_any {
            progress.end_stage(name);
        }
    }
    progress.finish();
    let seconds = kept_seconds + started.elapsed().as_secs_f64();
    let markdown = render_markdown(
        cfg,
        selected,
        &records,
        &failed,
        &command,
        &machine.line(),
        &method,
        seconds,
    );
    let skipped = skipped(selected, &records, &failed);
    Ok(Report {
        machine,
        method,
        command,
        experiments: selected.iter().map(|e| e.name().to_string()).collect(),
        skipped,
        records,
        markdown,
        seconds,
        failed,
    })
}

/// What `--counts` and `--layouts` leave alone in this selection, by name, said before the run
/// starts so that nobody waits for cells they thought they had narrowed away.
pub fn not_narrowed(cfg: &BenchConfig, selected: &[&'static dyn AnyExperiment]) -> Vec<String> {
    let mut lines = Vec::new();
    for (given, flag, applies) in [
        (
            cfg.counts.is_some(),
            "--counts",
            (|e: &dyn AnyExperiment| e.narrows().counts) as fn(&dyn AnyExperiment) -> bool,
        ),
        (cfg.layouts.is_some(), "--layouts", |e| e.narrows().layouts),
    ] {
        let names: Vec<&str> = selected
            .iter()
            .filter(|e| given && !applies(**e))
            .map(|e| e.name())
            .collect();
        if !names.is_empty() {
            lines.push(format!(
                "{flag} does not narrow {}: they measure at counts or over contenders of their own",
                names.join(", ")
            ));
        }
    }
    lines
}

/// Every experiment of the suite that measured nothing in a run, and why: not asked for, every
/// cell failed, no cell at the run's counts, or each cell said why it could not measure (a
/// missing compiler, no GPU: the reasons its records carry).
fn skipped(
    selected: &[&'static dyn AnyExperiment],
    records: &[Record],
    failed: &[FailedCell],
) -> std::collections::BTreeMap<String, String> {
    let mut skipped = std::collections::BTreeMap::new();
    for experiment in experiments() {
        let name = experiment.name();
        let reason = if !selected.iter().any(|e| e.name() == name) {
            "not asked for".to_string()
        } else {
            let mine: Vec<&Record> = records.iter().filter(|r| r.experiment == name).collect();
            if mine.iter().any(|r| r.metric != Metric::Unavailable) {
                continue;
            }
            if failed.iter().any(|f| f.experiment == name) {
                "every cell failed (see failed)".to_string()
            } else if mine.is_empty() {
                "no cell to run at these counts".to_string()
            } else {
                let mut why: Vec<String> = mine.iter().map(|r| r.knob()).collect();
                why.sort_unstable();
                why.dedup();
                why.join("; ")
            }
        };
        skipped.insert(name.to_string(), reason);
    }
    skipped
}

/// The report's Markdown from its records: the header, each experiment's tables, the cells that
/// failed, the time.
#[allow(clippy::too_many_arguments)]
pub fn render_markdown(
    cfg: &BenchConfig,
    selected: &[&'static dyn AnyExperiment],
    records: &[Record],
    failed: &[FailedCell],
    command: &str,
    machine_line: &str,
    method: &str,
    seconds: f64,
) -> String {
    let mut markdown = format!(
        "# entity-layouts bench\n\nCommand: `{command}`\n\nMachine: {machine_line}\n\nMethod: {method}; {}.\n",
        if cfg.in_process {
            "all cells in this process"
        } else {
            "each cell in its own child process"
        }
    );
    for experiment in selected {
        let mine: Vec<Record> = records
            .iter()
            .filter(|r| r.experiment == experiment.name())
            .cloned()
            .collect();
        markdown.push_str(&format!("\n## {}\n\n", experiment.title()));
        markdown.push_str(&experiment.render(cfg, &mine, records));
    }
    if !failed.is_empty() {
        markdown.push_str(&format!(
            "\n## Failed cells\n\n{} cell(s) failed; the tables above lack their rows. `bench --resume DIR` runs them again.\n\n| experiment | cell | why |\n|---|---|---|\n",
            failed.len()
        ));
        for f in failed {
            markdown.push_str(&format!(
                "| {} | `{}` | {} |\n",
                f.experiment,
                f.cell,
                f.reason.replace('|', "\\|").replace('\n', " ")
            ));
        }
    }
    markdown.push_str(&format!("\nTotal bench time: {seconds:.1} s.\n"));
    markdown
}

/// One cell in this process, failing on purpose where the test hook names it.
fn run_cell_checked(
    experiment: &dyn AnyExperiment,
    cfg: &BenchConfig,
    cell: &AnyCell,
) -> Result<Vec<Record>, BenchError> {
    if let Ok(target) = std::env::var(FAIL_CELL_ENV)
        && target.split_once(' ') == Some((experiment.name(), cell.text()))
    {
        return Err(BenchError::Worker {
            experiment: experiment.name().into(),
            cell: cell.text().into(),
            reason: format!("made to fail by {FAIL_CELL_ENV}"),
        });
    }
    experiment.run_cell(cfg, cell)
}

/// Runs one cell in a child process of this same binary (the cell serialized on its command
/// line, `--cell-json`) and reads its records back. The child's stderr passes through the
/// progress display; `stop` kills the child (SIGTERM reaches only this process; Ctrl-C reaches
/// both, and the child's exit is then an interruption, not a failure).
fn run_worker(
    cfg: &BenchConfig,
    experiment: &str,
    cell: &AnyCell,
    stop: &AtomicBool,
    stderr_to: &Passthrough,
) -> CellEnd {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return CellEnd::Failed(format!("cannot find this program: {e}")),
    };
    let mut command = Command::new(exe);
    command.args(["bench", "--worker", experiment, "--cell-json", cell.json()]);
    if cfg.quick {
        command.arg("--quick");
    }
    if let Some(counts) = &cfg.counts {
        let list: Vec<String> = counts.iter().map(usize::to_string).collect();
        command.args(["--counts", &list.join(",")]);
    }
    if let Some(layouts) = &cfg.layouts {
        let list: Vec<String> = layouts.iter().map(|k| k.name().to_string()).collect();
        command.args(["--layouts", &list.join(",")]);
    }
    let mut child = match command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return CellEnd::Failed(format!("cannot start the worker: {e}")),
    };
    // Both pipes drained on their own threads: records can outgrow a pipe's buffer.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).map(|_| bytes)
    });
    let stderr = child.stderr.take().expect("stderr is piped");
    let to = stderr_to.clone();
    let relay = std::thread::spawn(move || {
        let mut last = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            to.line(&line);
            last.push(line);
            if last.len() > 3 {
                last.remove(0);
            }
        }
        last
    });
    let status = loop {
        if stop.load(Ordering::SeqCst) {
            let _ = child.kill();
        }
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => break Err(e),
        }
    };
    let stdout = reader.join().expect("the stdout reader does not panic");
    let last_lines = relay.join().expect("the stderr relay does not panic");
    if stop.load(Ordering::SeqCst) {
        return CellEnd::Interrupted;
    }
    let status = match status {
        Ok(status) => status,
        Err(e) => return CellEnd::Failed(format!("cannot wait for the worker: {e}")),
    };
    if !status.success() {
        let said = last_lines.join(" / ");
        return CellEnd::Failed(if said.is_empty() {
            format!("worker {status}")
        } else {
            format!("worker {status}: {said}")
        });
    }
    let parsed = stdout
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()));
    match parsed {
        Ok(records) => CellEnd::Measured(records),
        Err(e) => CellEnd::Failed(format!("unreadable worker output: {e}")),
    }
}

/// The cell a worker is given: serialized by the runner, or typed by a person in its readable
/// form (`bench --worker seek --cell count:soa`).
pub enum WorkerCell {
    Json(String),
    Text(String),
}

/// The worker side: runs one cell and prints its records as JSON on stdout.
pub fn worker(
    cfg: &BenchConfig,
    experiment: &str,
    cell: &WorkerCell,
) -> Result<String, BenchError> {
    let experiment = select(&[experiment.to_string()])?[0];
    let cell = match cell {
        WorkerCell::Json(json) => experiment.cell_from_json(json)?,
        WorkerCell::Text(text) => experiment.cell_from_text(text)?,
    };
    let records = run_cell_checked(experiment, cfg, &cell)?;
    Ok(serde_json::to_string(&records).expect("records serialize"))
}

/// Where the report's files go, checked before any measuring starts.
pub fn prepare_out_dir(dir: &PathBuf) -> Result<(), BenchError> {
    let unwritable = |reason: String| BenchError::Unwritable {
        path: dir.display().to_string(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| unwritable(e.to_string()))?;
    let probe = dir.join(format!(".write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| unwritable(e.to_string()))?;
    std::fs::remove_file(&probe).map_err(|e| unwritable(e.to_string()))
}

/// Every plot the records allow: the layouts' and width's lines (with the SIMD tiers beside the
/// f32 ones) and the counters' bars.
pub fn plots(records: &[Record], machine: Option<&Machine>) -> Vec<(String, String)> {
    let mut out =
        crate::bench::report::plot::plots(records, machine, beyond::simd::tier_series(records));
    out.extend(studies::counters::served_plots(records));
    out
}

/// The report's files, plots included, into `dir`.
pub fn write_report(dir: &Path, report: &Report) -> Result<Vec<String>, BenchError> {
    let plots = plots(&report.records, Some(&report.machine));
    crate::bench::report::output::write_report(dir, report, plots)
}

/// Redraws the plots, the Markdown report and the page of an earlier run from its `results.json`, into
/// the same folder: a table whose layout changed reads the numbers already measured. The tables
/// are rendered as the run's `--quick` and `--in-process` had them; an experiment that recorded
/// nothing (skipped for want of an adapter) is left out.
pub fn replot(json_path: &Path) -> Result<Vec<String>, BenchError> {
    let run = read_results(json_path)?;
    let dir = json_path.parent().unwrap_or(Path::new("."));
    let mut written = Vec::new();
    let plots = plots(&run.records, run.machine.as_ref());
    for (name, svg) in &plots {
        write_atomically(&dir.join(name), svg.as_bytes())?;
        written.push(name.clone());
    }
    let mut cfg = BenchConfig::new(run.command.contains("--quick"));
    cfg.in_process = run.command.contains("--in-process");
    let selected: Vec<_> = experiments()
        .into_iter()
        .filter(|e| run.records.iter().any(|r| r.experiment == e.name()))
        .collect();
    let machine = run.machine.as_ref().map_or("unknown".into(), Machine::line);
    let markdown = render_markdown(
        &cfg,
        &selected,
        &run.records,
        &run.failed,
        &run.command,
        &machine,
        &run.method,
        run.seconds,
    );
    write_atomically(&dir.join("results.md"), markdown.as_bytes())?;
    written.push("results.md".into());
    let page = index_html(&markdown, &plots);
    write_atomically(&dir.join("index.html"), page.as_bytes())?;
    written.push("index.html".into());
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_says_which_experiments_measured_nothing_and_why() {
        let selected =
            select(&["order".into(), "js".into(), "cpp".into(), "width".into()]).unwrap();
        let records = vec![
            Record::new("order", "soa", "f32", 10).value(Metric::SeekMs, "ms", 1.0),
            Record::new("js", "soa", "f64", 10)
                .param("node not found on PATH")
                .value(Metric::Unavailable, "cells", 1.0),
        ];
        let failed = vec![FailedCell {
            experiment: "cpp".into(),
            cell: "x".into(),
            reason: "crashed".into(),
        }];
        let skipped = skipped(&selected, &records, &failed);
        assert!(!skipped.contains_key("order"));
        assert_eq!(skipped["js"], "node not found on PATH");
        assert_eq!(skipped["cpp"], "every cell failed (see failed)");
        assert_eq!(skipped["width"], "no cell to run at these counts");
        assert_eq!(skipped["seek"], "not asked for");
        assert_eq!(skipped.len(), experiments().len() - 1);
    }
}

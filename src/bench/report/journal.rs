//! The run's journal under `--out DIR`: what was asked (`run.json`, written before the first
//! cell) and one line per finished cell (`cells.jsonl`, appended and synced as each cell ends).
//! A run stopped at minute 80 keeps its 80 minutes; `bench --resume DIR` reads both files back,
//! runs only the cells the journal lacks and renders the same report as an uninterrupted run.
//!
//! Lines, not one JSON document, so that a run killed while writing loses at most the line it
//! was writing: a torn last line is skipped on resume, and its cell runs again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bench::report::experiment::{BenchConfig, BenchError};
use crate::bench::report::record::Record;

pub const PLAN_FILE: &str = "run.json";
pub const CELLS_FILE: &str = "cells.jsonl";

/// What a run was asked to do: enough to run it again, cell for cell.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The command line that started the run, as its report prints it.
    pub command: String,
    pub quick: bool,
    pub in_process: bool,
    pub counts: Option<Vec<usize>>,
    /// `--layouts`, by name (absent in runs from before the flag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layouts: Option<Vec<String>>,
    /// The experiments selected, in the suite's order.
    pub experiments: Vec<String>,
}

impl Plan {
    pub fn config(&self) -> BenchConfig {
        let mut cfg = BenchConfig::new(self.quick);
        cfg.in_process = self.in_process;
        cfg.counts = self.counts.clone();
        // The names were parsed when the run started, so they parse again.
        cfg.layouts = self
            .layouts
            .as_ref()
            .map(|names| names.iter().filter_map(|n| n.parse().ok()).collect());
        cfg
    }
}

/// One finished cell: its records, or why it failed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellEntry {
    pub experiment: String,
    pub cell: String,
    pub seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    #[serde(default)]
    pub records: Vec<Record>,
}

/// The journal being written.
pub struct Journal {
    dir: PathBuf,
    cells: File,
}

fn unwritable(path: &Path, e: impl ToString) -> BenchError {
    BenchError::Unwritable {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

impl Journal {
    /// Starts a new journal in `dir`: writes the plan and empties any cells an earlier run left.
    pub fn create(dir: &Path, plan: &Plan) -> Result<Self, BenchError> {
        let json = serde_json::to_vec_pretty(plan).expect("the plan serializes");
        crate::bench::report::output::write_atomically(&dir.join(PLAN_FILE), &json)?;
        let path = dir.join(CELLS_FILE);
        let cells = File::create(&path).map_err(|e| unwritable(&path, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            cells,
        })
    }

    /// Opens the journal of an interrupted run to go on appending to it.
    pub fn append(dir: &Path) -> Result<Self, BenchError> {
        let path = dir.join(CELLS_FILE);
        let mut cells = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| unwritable(&path, e))?;
        // A torn last line (the run died mid-write) must not swallow the next entry.
        let text = std::fs::read(&path).map_err(|e| unwritable(&path, e))?;
        if text.last().is_some_and(|&b| b != b'\n') {
            cells.write_all(b"\n").map_err(|e| unwritable(&path, e))?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            cells,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one finished cell and waits until it is on the disk.
    pub fn write(&mut self, entry: &CellEntry) -> Result<(), BenchError> {
        let path = self.dir.join(CELLS_FILE);
        let mut line = serde_json::to_vec(entry).expect("a cell entry serializes");
        line.push(b'\n');
        self.cells
            .write_all(&line)
            .and_then(|()| self.cells.sync_data())
            .map_err(|e| unwritable(&path, e))
    }
}

/// An interrupted run read back: its plan and the cells it finished.
pub struct Interrupted {
    pub plan: Plan,
    /// Finished cells by (experiment, cell); a cell that failed is not here and runs again.
    pub done: HashMap<(String, String), CellEntry>,
    /// Lines that could not be read (a torn last line); their cells run again.
    pub skipped_lines: usize,
}

impl Interrupted {
    pub fn read(dir: &Path) -> Result<Self, BenchError> {
        let plan_path = dir.join(PLAN_FILE);
        let not_a_run = |reason: String| BenchError::Unwritable {
            path: dir.display().to_string(),
            reason: format!(
                "{reason}; --resume takes a folder that `bench --out DIR` wrote ({PLAN_FILE} and {CELLS_FILE})"
            ),
        };
        let plan_text = std::fs::read_to_string(&plan_path)
            .map_err(|e| not_a_run(format!("cannot read {PLAN_FILE}: {e}")))?;
        let plan: Plan = serde_json::from_str(&plan_text)
            .map_err(|e| not_a_run(format!("{PLAN_FILE} is not a run plan: {e}")))?;
        let cells_path = dir.join(CELLS_FILE);
        let text = match std::fs::read_to_string(&cells_path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(not_a_run(format!("cannot read {CELLS_FILE}: {e}"))),
        };
        let mut done = HashMap::new();
        let mut skipped_lines = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<CellEntry>(line) {
                Ok(entry) if entry.failed.is_none() => {
                    done.insert((entry.experiment.clone(), entry.cell.clone()), entry);
                }
                Ok(_) => {}
                Err(_) => skipped_lines += 1,
            }
        }
        Ok(Self {
            plan,
            done,
            skipped_lines,
        })
    }

    /// Seconds the finished cells took when they ran.
    pub fn seconds(&self) -> f64 {
        self.done.values().map(|e| e.seconds).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::metric::Metric;

    fn plan() -> Plan {
        Plan {
            command: "entity-layouts bench --quick".into(),
            quick: true,
            in_process: false,
            counts: Some(vec![1000, 2000]),
            layouts: Some(vec!["soa".into(), "hecs".into()]),
            experiments: vec!["layouts".into(), "width".into()],
        }
    }

    fn entry(cell: &str, failed: Option<&str>) -> CellEntry {
        CellEntry {
            experiment: "layouts".into(),
            cell: cell.into(),
            seconds: 1.5,
            failed: failed.map(str::to_string),
            records: vec![Record::new("layouts", "soa", "f32", 1000).value(
                Metric::Bytes,
                "B",
                8.0,
            )],
        }
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("el-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn finished_cells_read_back_and_failed_or_torn_ones_run_again() {
        let dir = temp("torn");
        let mut journal = Journal::create(&dir, &plan()).unwrap();
        journal.write(&entry("n=1000", None)).unwrap();
        journal
            .write(&entry("n=2000", Some("exit status 1")))
            .unwrap();
        drop(journal);
        // A run killed mid-write: half a line, no newline.
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(CELLS_FILE))
            .unwrap();
        f.write_all(br#"{"experiment":"layouts","cell":"n=3"#)
            .unwrap();
        drop(f);

        let read = Interrupted::read(&dir).unwrap();
        assert_eq!(read.plan, plan());
        assert_eq!(read.skipped_lines, 1);
        let keys: Vec<_> = read.done.keys().map(|(_, c)| c.as_str()).collect();
        assert_eq!(keys, ["n=1000"]);
        assert_eq!(read.seconds(), 1.5);

        // Appending after the torn line starts a fresh line that reads back.
        let mut journal = Journal::append(&dir).unwrap();
        journal.write(&entry("n=2000", None)).unwrap();
        let read = Interrupted::read(&dir).unwrap();
        assert_eq!(read.done.len(), 2);
        assert_eq!(read.skipped_lines, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_folder_without_a_plan_is_an_error_that_says_what_resume_takes() {
        let dir = temp("empty");
        let err = Interrupted::read(&dir).err().unwrap().to_string();
        assert!(
            err.contains("run.json") && err.contains("bench --out DIR"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

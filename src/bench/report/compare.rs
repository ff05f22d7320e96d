//! Two runs side by side, cell by cell, as critcmp puts two criterion baselines side by side:
//! `bench compare A B` prints it, and `bench --out DIR --compare RUN` adds it to DIR's report.
//! A run is a folder `bench --out DIR` wrote: its machine line comes from `results.json`, each
//! cell's records from the journal (`cells.jsonl`), which is where a record's cell is kept.
//!
//! Per record both runs hold in a cell both ran (the same layout, scalar, threads, count, param
//! and metric): both medians with the spread each record states (`p50 [p10..p90]`), B over A,
//! and whether the two spreads overlap. Cells only one run finished are listed by run. Records
//! that hold words rather than a figure (why a cell could not measure, which adapter ran it)
//! are left out of both.

use std::collections::HashMap;
use std::path::Path;

use crate::bench::report::experiment::BenchError;
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::journal::{CELLS_FILE, CellEntry};
use crate::bench::report::metric::Metric;
use crate::bench::report::output::{RESULTS_FILE, read_results};
use crate::bench::report::record::Record;

/// One run's finished cells, in the order it finished them, with its machine line.
pub struct RunCells {
    /// The folder, as it was named.
    pub dir: String,
    pub machine: String,
    cells: Vec<(CellKey, Vec<Record>)>,
    /// Where each cell sits in `cells`.
    at: HashMap<CellKey, usize>,
    /// Journal lines that could not be read (a run killed mid-write); their cells are missing.
    pub torn_lines: usize,
}

/// (experiment, the cell's readable text).
type CellKey = (String, String);

fn not_a_run(path: &Path, reason: impl Into<String>) -> BenchError {
    BenchError::Unwritable {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

impl RunCells {
    /// The run `bench --out DIR` wrote into `dir`.
    pub fn read(dir: &Path) -> Result<Self, BenchError> {
        let results = dir.join(RESULTS_FILE);
        if !results.is_file() {
            return Err(not_a_run(
                dir,
                format!(
                    "not a run folder: it has no {RESULTS_FILE} (a folder `entity-layouts bench --out DIR` wrote holds one)"
                ),
            ));
        }
        let saved = read_results(&results)?;
        let machine = saved
            .machine
            .as_ref()
            .map_or("unknown (not in its results.json)".into(), |m| m.line());
        Self::from_journal(dir, machine)
    }

    /// The cells in `dir`'s journal, on `machine`: a run whose report is being written.
    pub fn from_journal(dir: &Path, machine: String) -> Result<Self, BenchError> {
        let path = dir.join(CELLS_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            not_a_run(
                &path,
                format!("cannot read the run's journal, where each cell's records are kept: {e}"),
            )
        })?;
        let mut cells: Vec<(CellKey, Vec<Record>)> = Vec::new();
        let mut at: HashMap<CellKey, usize> = HashMap::new();
        let mut torn_lines = 0;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(entry) = serde_json::from_str::<CellEntry>(line) else {
                torn_lines += 1;
                continue;
            };
            if entry.failed.is_some() {
                continue;
            }
            let key = (entry.experiment, entry.cell);
            // A resumed run may finish a cell again: the later line is the run's.
            match at.get(&key) {
                Some(&i) => cells[i].1 = entry.records,
                None => {
                    at.insert(key.clone(), cells.len());
                    cells.push((key, entry.records));
                }
            }
        }
        Ok(Self {
            dir: dir.display().to_string(),
            machine,
            cells,
            at,
            torn_lines,
        })
    }

    /// How many cells the run finished.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Whether the run finished `experiment`'s cell whose readable text is `cell`.
    pub fn has(&self, experiment: &str, cell: &str) -> bool {
        self.cell(&(experiment.into(), cell.into())).is_some()
    }

    fn cell(&self, key: &CellKey) -> Option<&[Record]> {
        self.at.get(key).map(|&i| self.cells[i].1.as_slice())
    }
}

/// What pairs a record with its counterpart in the other run: everything but its figures.
fn identity(r: &Record) -> (String, String, String, u64, String, Metric) {
    (
        r.layout.name().to_string(),
        r.scalar.clone(),
        r.threads.clone(),
        r.n,
        r.param.clone(),
        r.metric,
    )
}

/// A record that holds a figure, not words.
fn measured(r: &Record) -> bool {
    !matches!(r.metric, Metric::Unavailable | Metric::Adapter)
}

/// One row: a record both runs hold.
pub struct Row {
    pub experiment: String,
    pub cell: String,
    pub record: String,
    pub metric: Metric,
    pub a: Record,
    pub b: Record,
}

impl Row {
    /// B's median over A's, where A's is not zero.
    pub fn ratio(&self) -> Option<f64> {
        (self.a.p50 != 0.0).then(|| self.b.p50 / self.a.p50)
    }

    /// Whether the spreads `[p10..p90]` of the two records overlap.
    pub fn overlap(&self) -> bool {
        self.a.p10 <= self.b.p90 && self.b.p10 <= self.a.p90
    }
}

/// The two runs, cell by cell.
pub struct Comparison {
    pub rows: Vec<Row>,
    /// Cells both ran.
    pub common: usize,
    pub only_a: Vec<CellKey>,
    pub only_b: Vec<CellKey>,
    /// Records of cells both ran that the other run lacks: (in A, in B).
    pub unpaired: (usize, usize),
}

/// A beside B; two runs without a cell in common are an error that says what to compare.
pub fn compare(a: &RunCells, b: &RunCells) -> Result<Comparison, BenchError> {
    let mut rows = Vec::new();
    let mut common = 0;
    let mut only_a = Vec::new();
    let mut unpaired = (0, 0);
    for (key, a_records) in &a.cells {
        let Some(b_records) = b.cell(key) else {
            only_a.push(key.clone());
            continue;
        };
        common += 1;
        // Records that share an identity pair in the order each run wrote them.
        let mut left: Vec<&Record> = b_records.iter().filter(|r| measured(r)).collect();
        for ra in a_records.iter().filter(|r| measured(r)) {
            match left.iter().position(|rb| identity(rb) == identity(ra)) {
                Some(i) => {
                    let rb = left.remove(i);
                    rows.push(Row {
                        experiment: key.0.clone(),
                        cell: key.1.clone(),
                        record: describe(ra),
                        metric: ra.metric,
                        a: ra.clone(),
                        b: rb.clone(),
                    });
                }
                None => unpaired.0 += 1,
            }
        }
        unpaired.1 += left.len();
    }
    let only_b: Vec<CellKey> = b
        .cells
        .iter()
        .filter(|(key, _)| a.cell(key).is_none())
        .map(|(key, _)| key.clone())
        .collect();
    if common == 0 {
        return Err(BenchError::NoCellInCommon {
            a: a.dir.clone(),
            b: b.dir.clone(),
            cells: (a.cells.len(), b.cells.len()),
        });
    }
    Ok(Comparison {
        rows,
        common,
        only_a,
        only_b,
        unpaired,
    })
}

/// The record's identity as a reader wants it: `soa, f32, 1 thread, 1,000,000, k=10000`.
fn describe(r: &Record) -> String {
    let threads = match r.threads.as_str() {
        "1" => "1 thread".to_string(),
        other => format!("{other} threads"),
    };
    let mut out = format!("{}, {}, {threads}, {}", r.layout, r.scalar, fmt_count(r.n));
    if !r.param.is_empty() {
        out.push_str(&format!(", {}", r.param));
    }
    out
}

/// Three significant digits, small figures included (a frame of 1,000 entities is a thousandth
/// of a millisecond, and its spread is in the next digits).
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() || v.abs() >= 0.1 {
        return fmt_num(v);
    }
    let decimals = (2.0 - v.abs().log10().floor()) as usize;
    format!("{v:.decimals$}")
}

/// `p50 [p10..p90] unit`, or the value alone where it was measured once.
fn figure(r: &Record) -> String {
    if r.p10 == r.p50 && r.p50 == r.p90 {
        return format!("{} {}", sig(r.p50), r.unit);
    }
    format!("{} [{}..{}] {}", sig(r.p50), sig(r.p10), sig(r.p90), r.unit)
}

/// The cells of `keys`, one line per experiment.
fn listed(keys: &[CellKey]) -> String {
    let mut by_experiment: Vec<(&str, Vec<&str>)> = Vec::new();
    for (experiment, cell) in keys {
        match by_experiment.iter_mut().find(|(e, _)| e == experiment) {
            Some((_, cells)) => cells.push(cell),
            None => by_experiment.push((experiment, vec![cell])),
        }
    }
    by_experiment
        .iter()
        .map(|(experiment, cells)| {
            let cells: Vec<String> = cells.iter().map(|c| format!("`{c}`")).collect();
            format!("- {experiment}: {}\n", cells.join(", "))
        })
        .collect()
}

impl Comparison {
    /// The comparison as Markdown: both machine lines, the table, the cells one run lacks.
    pub fn markdown(&self, a: &RunCells, b: &RunCells) -> String {
        let mut md = format!(
            "A: `{}`, {}\n\nB: `{}`, {}\n\n",
            a.dir, a.machine, b.dir, b.machine
        );
        md.push_str(&format!(
            "{} cell(s) in both runs, {} record(s) both hold. Each figure is the record's p50 [p10..p90] (a single value where it was measured once); B/A is B's p50 over A's; \"overlap\" says whether the two spreads overlap (where they do not, the runs differ by more than either one's own spread).\n\n",
            self.common,
            self.rows.len()
        ));
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                vec![
                    row.experiment.clone(),
                    format!("`{}`", row.cell),
                    row.record.replace('|', "\\|"),
                    row.metric.name().to_string(),
                    figure(&row.a),
                    figure(&row.b),
                    row.ratio().map_or("-".into(), |r| format!("{r:.2}")),
                    if row.overlap() { "yes" } else { "no" }.to_string(),
                ]
            })
            .collect();
        md.push_str(&table(
            &[
                "experiment",
                "cell",
                "record",
                "metric",
                "A",
                "B",
                "B/A",
                "overlap",
            ],
            &rows,
        ));
        for (which, run, keys) in [("A", a, &self.only_a), ("B", b, &self.only_b)] {
            if !keys.is_empty() {
                md.push_str(&format!(
                    "\nOnly in {which} (`{}`), {} cell(s):\n\n{}",
                    run.dir,
                    keys.len(),
                    listed(keys)
                ));
            }
        }
        if self.unpaired != (0, 0) {
            md.push_str(&format!(
                "\nIn the cells both ran, {} record(s) only A holds and {} only B holds (another count or param).\n",
                self.unpaired.0, self.unpaired.1
            ));
        }
        for run in [a, b] {
            if run.torn_lines > 0 {
                md.push_str(&format!(
                    "\n`{}`: {} unreadable line(s) of its {CELLS_FILE} skipped; their cells count as missing.\n",
                    run.dir, run.torn_lines
                ));
            }
        }
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &str, cells: &[(&str, &str, Vec<Record>)]) -> RunCells {
        let cells: Vec<(CellKey, Vec<Record>)> = cells
            .iter()
            .map(|(e, c, r)| ((e.to_string(), c.to_string()), r.clone()))
            .collect();
        RunCells {
            dir: dir.into(),
            machine: format!("{dir}'s machine"),
            at: (0..cells.len()).map(|i| (cells[i].0.clone(), i)).collect(),
            cells,
            torn_lines: 0,
        }
    }

    fn frame(layout: &str, p10: f64, p50: f64, p90: f64) -> Record {
        Record {
            p10,
            p50,
            p90,
            samples: 9,
            ..Record::new("layouts", layout, "f32", 1000).value(Metric::FrameMs, "ms", 0.0)
        }
    }

    #[test]
    fn records_pair_by_identity_and_the_spreads_say_whether_they_overlap() {
        let a = run(
            "a",
            &[
                ("layouts", "n=1000", vec![frame("soa", 1.0, 2.0, 3.0)]),
                ("layouts", "n=2000", vec![frame("soa", 1.0, 1.0, 1.0)]),
            ],
        );
        let b = run(
            "b",
            &[
                (
                    "layouts",
                    "n=1000",
                    vec![frame("aos", 1.0, 1.0, 1.0), frame("soa", 3.5, 4.0, 4.5)],
                ),
                ("width", "soa", vec![]),
            ],
        );
        let c = compare(&a, &b).unwrap();
        assert_eq!(c.common, 1);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.rows[0].ratio(), Some(2.0));
        assert!(!c.rows[0].overlap());
        assert_eq!(c.unpaired, (0, 1));
        assert_eq!(c.only_a, [("layouts".into(), "n=2000".into())]);
        assert_eq!(c.only_b, [("width".into(), "soa".into())]);
        let md = c.markdown(&a, &b);
        assert!(
            md.contains("| 2.00 [1.00..3.00] ms | 4.00 [3.50..4.50] ms | 2.00 | no |"),
            "{md}"
        );
        assert_eq!(figure(&frame("soa", 1.0, 1.0, 1.0)), "1.00 ms");
        assert!(
            md.contains("Only in A (`a`), 1 cell(s):\n\n- layouts: `n=2000`"),
            "{md}"
        );
        assert!(
            md.contains("Only in B (`b`), 1 cell(s):\n\n- width: `soa`"),
            "{md}"
        );
        let touching = Row {
            b: frame("soa", 3.0, 3.5, 4.0),
            ..c.rows.into_iter().next().unwrap()
        };
        assert!(touching.overlap());
        assert!(compare(&a, &run("c", &[("width", "soa", vec![])])).is_err());
    }

    #[test]
    fn small_figures_keep_three_significant_digits() {
        assert_eq!(sig(0.00114083), "0.00114");
        assert_eq!(sig(0.0124), "0.0124");
        assert_eq!(sig(12.44), "12.4");
        assert_eq!(sig(0.0), "0.0000");
    }
}

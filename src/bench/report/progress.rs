//! Where a bench run is: cells done of the total, the cell now running, the time elapsed and an
//! estimate of the time left. A progress bar (indicatif) on a terminal; the same facts as plain
//! lines when stderr is a pipe or a CI log, where a redrawn bar would be noise. A run with `--out
//! DIR` also writes the plain lines, its workers' stderr among them, to `DIR/progress.log`, so
//! that a committed run folder shows how the run went.
//!
//! The estimate: each experiment's typical duration (`durations.rs`, measured on some machine),
//! scaled by how fast this machine ran the experiments it has finished against their typical
//! durations; for the experiment now running, that scaled duration less the time it has run.
//! With nothing finished yet it is the typical duration. The pace is read from whole experiments
//! only: the cells inside one differ by orders of magnitude (`layouts` at 1k and at 10M), so a
//! pace read from its first cells forecasts a full run far too short (docs/runs/full-2026-12-04,
//! progress.log).

use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::bench::report::durations;

/// One experiment of the run, as far as progress cares.
pub struct Stage {
    pub name: &'static str,
    /// Its cells; 0 when they depend on earlier results (known once it starts).
    pub cells: usize,
}

pub struct Progress {
    bar: Option<ProgressBar>,
    log: Log,
    started: Instant,
    quick: bool,
    stages: Vec<Stage>,
    /// Index into `stages` of the experiment now running.
    current: usize,
    done: usize,
    /// Cells taken from an interrupted run's journal: counted as done, not as measured.
    kept: usize,
    /// Seconds measured in this process in the finished experiments that have a typical
    /// duration, and the typical seconds of the same cells: the pace.
    measured_s: f64,
    typical_done_s: f64,
    /// Seconds of every cell measured in this process (`done - kept` of them): the mean cell,
    /// for experiments with no typical time.
    all_measured_s: f64,
    /// The running experiment's cells run here, kept from a journal, and its seconds so far.
    stage_run: usize,
    stage_kept: usize,
    stage_measured_s: f64,
    stage_started: Instant,
}

impl Progress {
    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn new(stages: Vec<Stage>, quick: bool) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(stages.iter().map(|s| s.cells as u64).sum()),
                ProgressDrawTarget::stderr(),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {bar:28.cyan/blue} {pos}/{len} cells  {msg}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Self {
            log: Log::default(),
            bar,
            started: Instant::now(),
            quick,
            stages,
            current: 0,
            done: 0,
            kept: 0,
            measured_s: 0.0,
            typical_done_s: 0.0,
            all_measured_s: 0.0,
            stage_run: 0,
            stage_kept: 0,
            stage_measured_s: 0.0,
            stage_started: Instant::now(),
        }
    }

    pub fn total(&self) -> usize {
        self.stages.iter().map(|s| s.cells).sum()
    }

    pub fn done(&self) -> usize {
        self.done
    }

    /// An experiment begins with `cells` cells (its count is now known for certain).
    pub fn begin_stage(&mut self, name: &str, cells: usize) {
        if let Some(i) = self.stages.iter().position(|s| s.name == name) {
            self.current = i;
            self.stages[i].cells = cells;
        }
        (self.stage_run, self.stage_kept, self.stage_measured_s) = (0, 0, 0.0);
        self.stage_started = Instant::now();
        if let Some(bar) = &self.bar {
            bar.set_length(self.total() as u64);
        }
    }

    /// A cell was taken from the journal of an interrupted run.
    pub fn kept(&mut self) {
        self.done += 1;
        self.kept += 1;
        self.stage_kept += 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Also writes the plain lines to `path`: a new file, or the end of an interrupted run's.
    pub fn log_to(&mut self, path: &Path, append: bool) -> std::io::Result<()> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)?;
        self.log = Log(Some(Arc::new(Mutex::new(file))));
        Ok(())
    }

    /// Before a cell runs: the line (plain) or the bar's message says which and how long is left.
    pub fn start_cell(&mut self, experiment: &str, cell: &str) {
        let left = self
            .estimate_left()
            .map_or(String::new(), |s| format!(", about {} left", human(s)));
        let line = format!(
            "[{}] cell {}/{} {experiment} {cell}{left}",
            clock(self.started.elapsed()),
            self.done + 1,
            self.total(),
        );
        self.log.line(&line);
        match &self.bar {
            Some(bar) => bar.set_message(format!("{experiment} {cell}{left}")),
            None => eprintln!("{line}"),
        }
    }

    /// After a cell ran here (measured, or failed).
    pub fn end_cell(&mut self, seconds: f64) {
        self.done += 1;
        self.all_measured_s += seconds;
        self.stage_run += 1;
        self.stage_measured_s += seconds;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// An experiment's last cell ended.
    pub fn end_stage(&mut self, name: &str) {
        if self.stage_run > 0
            && let Some(per_cell) = self.typical_cell_s(self.current)
        {
            self.measured_s += self.stage_measured_s;
            self.typical_done_s += per_cell * self.stage_run as f64;
        }
        (self.stage_run, self.stage_kept, self.stage_measured_s) = (0, 0, 0.0);
        self.note(&format!(
            "{name} done in {}",
            human(self.stage_started.elapsed().as_secs_f64())
        ));
    }

    /// A line that must stay on screen (a failure, a skip): above the bar, or on its own.
    pub fn note(&self, line: &str) {
        let stamped = format!("[{}] {line}", clock(self.started.elapsed()));
        self.log.line(&stamped);
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{stamped}"),
        }
    }

    /// A child's stderr, passed through without tearing the bar.
    pub fn passthrough(&self) -> Passthrough {
        Passthrough(self.bar.clone(), self.log.clone())
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    fn typical_cell_s(&self, stage: usize) -> Option<f64> {
        let s = self.stages.get(stage)?;
        let typical = durations::typical(s.name, self.quick)?.seconds;
        Some(typical / s.cells.max(1) as f64)
    }

    /// Seconds left: the typical time of every experiment not yet finished, scaled by this
    /// machine's pace in the finished ones, less what the running one has taken so far. `None`
    /// when nothing is known to scale by and nothing typical is known.
    pub fn estimate_left(&self) -> Option<f64> {
        let pace = if self.typical_done_s > 0.0 && self.measured_s > 0.0 {
            self.measured_s / self.typical_done_s
        } else {
            1.0
        };
        let mut left = 0.0;
        let mut known = false;
        for (i, stage) in self.stages.iter().enumerate().skip(self.current) {
            let cells = stage.cells.max(1);
            let (to_run, spent) = if i == self.current {
                (cells.saturating_sub(self.stage_kept), self.stage_measured_s)
            } else {
                (cells, 0.0)
            };
            if let Some(per_cell) = self.typical_cell_s(i) {
                left += (per_cell * to_run as f64 * pace - spent).max(0.0);
                known = true;
            } else if self.done > self.kept && self.all_measured_s > 0.0 {
                // No typical duration: this run's mean cell so far.
                let remaining =
                    to_run.saturating_sub(if i == self.current { self.stage_run } else { 0 });
                let mean = self.all_measured_s / (self.done - self.kept) as f64;
                left += mean * remaining as f64;
                known = true;
            }
        }
        known.then_some(left)
    }
}

/// Writes a child's stderr lines where the progress display allows, and to the run's log.
#[derive(Clone)]
pub struct Passthrough(Option<ProgressBar>, Log);

impl Passthrough {
    pub fn line(&self, line: &str) {
        self.1.line(line);
        match &self.0 {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

/// The run folder's `progress.log`, shared with the threads that pass workers' stderr through.
/// A line that cannot be written is dropped: the log is a copy of what stderr shows, and the
/// journal, not the log, is what a resumed run reads.
#[derive(Clone, Default)]
struct Log(Option<Arc<Mutex<File>>>);

impl Log {
    fn line(&self, line: &str) {
        if let Some(file) = &self.0 {
            let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(file, "{line}");
        }
    }
}

/// `1h 12m`, `4m 05s`, `12s`.
pub fn human(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// Elapsed as `h:mm:ss`, the bar's own clock.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_the_way_people_say_them() {
        assert_eq!(human(12.4), "12s");
        assert_eq!(human(245.0), "4m 05s");
        assert_eq!(human(4363.0), "1h 12m");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }

    #[test]
    fn the_estimate_scales_the_typical_time_by_this_machines_pace() {
        let seek = durations::typical("seek", false).unwrap().seconds;
        let layouts = durations::typical("layouts", false).unwrap().seconds;
        let mut p = Progress::new(
            vec![
                Stage {
                    name: "layouts",
                    cells: 4,
                },
                Stage {
                    name: "seek",
                    cells: 10,
                },
            ],
            false,
        );
        p.begin_stage("layouts", 4);
        let whole = p.estimate_left().unwrap();
        assert!((whole - (seek + layouts)).abs() < 1e-6, "{whole}");
        // Inside an experiment its cells differ too much to read a pace from: its first cell,
        // fast, takes its time off the typical duration and leaves the pace alone.
        p.end_cell(0.01 * layouts);
        let left = p.estimate_left().unwrap();
        let expected = 0.99 * layouts + seek;
        assert!((left - expected).abs() < 1e-6, "{left} vs {expected}");
        // The experiment ends at twice its typical time: the rest is forecast at that pace.
        for _ in 0..3 {
            p.end_cell((2.0 - 0.01) * layouts / 3.0);
        }
        p.end_stage("layouts");
        p.begin_stage("seek", 10);
        let left = p.estimate_left().unwrap();
        assert!((left - 2.0 * seek).abs() < 1e-6, "{left} vs {}", 2.0 * seek);
        // An experiment past its forecast has nothing left of it, not a negative time.
        p.end_cell(3.0 * seek);
        assert_eq!(p.estimate_left(), Some(0.0));
    }

    /// Replays a committed run's journal through the estimate: before every cell once its
    /// first experiment has ended (until then the pace is unknown and the forecast is the
    /// typical machine's), the time elapsed plus the time forecast left, against the run's real
    /// total (both summed from the cells' own seconds). The worst miss, the cell it came
    /// before, and the first forecast over the real total.
    fn worst_forecast(journal: &str) -> (f64, String, f64) {
        use crate::bench::report::journal::CellEntry;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(journal);
        let text = std::fs::read_to_string(&path).expect("the committed run's journal");
        let entries: Vec<CellEntry> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("a journal line"))
            .collect();
        let total: f64 = entries.iter().map(|e| e.seconds).sum();
        let cells_of = |name: &str| entries.iter().filter(|e| e.experiment == name).count();
        let names: Vec<&'static str> = crate::bench::suite::experiments()
            .iter()
            .map(|e| e.name())
            .collect();
        // The experiments the run ran, as a run of just those (`--only`) forecasts them: a
        // journal of a build before an experiment existed has no cells of it.
        let stages = names
            .iter()
            .filter(|&&name| cells_of(name) > 0)
            .map(|&name| Stage {
                name,
                cells: cells_of(name),
            })
            .collect();
        let mut p = Progress::new(stages, false);
        let (mut elapsed, mut worst) = (0.0, (0.0, String::new()));
        let (mut first, mut paced) = (None, false);
        let mut current: Option<&'static str> = None;
        for e in &entries {
            if current != Some(e.experiment.as_str()) {
                if let Some(name) = current {
                    p.end_stage(name);
                    paced = true;
                }
                let name = *names.iter().find(|n| **n == e.experiment).unwrap();
                p.begin_stage(name, cells_of(name));
                current = Some(name);
            }
            let forecast = elapsed + p.estimate_left().unwrap();
            first.get_or_insert(forecast);
            let miss = (forecast / total - 1.0).abs();
            if paced && miss > worst.0 {
                worst = (miss, format!("{} {}", e.experiment, e.cell));
            }
            p.end_cell(e.seconds);
            elapsed += e.seconds;
        }
        (worst.0, worst.1, first.unwrap() / total)
    }

    #[test]
    fn a_full_runs_forecast_stays_within_a_fifth_of_its_real_duration_once_paced() {
        // Runs replayed against the typical durations of the docs' run (an Intel Xeon), all on
        // the same host type, of other builds of the code. Not replayed: the AMD EPYC's run of
        // 2026-12-04, whose `ecs-vs-soa` ran far fewer cells than the experiment runs now, and
        // the Xeon's of 2026-12-04, whose `crossings` ran without the f32 searches the bench
        // runs now: the pace read after them is off by that change, not by the estimate. Each
        // journal is named by its path, which is how the check that every committed file is
        // read (tests/docs_links.rs) sees what this test reads.
        for journal in [
            "docs/runs/full-2026-12-06/cells.jsonl",
            "docs/runs/full-2026-12-05-6/cells.jsonl",
            "docs/runs/full-2026-12-05-5/cells.jsonl",
        ] {
            let (miss, at, first) = worst_forecast(journal);
            let run = journal.trim_end_matches("/cells.jsonl");
            eprintln!(
                "{run}: first forecast x{first:.2} the real total, then within {:.1}%",
                miss * 100.0
            );
            assert!(
                miss <= 0.20,
                "{run}: the forecast missed by {:.0}% before {at}",
                miss * 100.0
            );
        }
    }

    #[test]
    fn an_experiment_without_a_typical_time_is_forecast_from_this_runs_mean_cell() {
        let mut p = Progress::new(
            vec![Stage {
                name: "not-an-experiment",
                cells: 5,
            }],
            true,
        );
        p.begin_stage("not-an-experiment", 5);
        assert_eq!(p.estimate_left(), None);
        p.end_cell(3.0);
        assert_eq!(p.estimate_left(), Some(12.0));
    }
}

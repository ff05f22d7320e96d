//! Where a bench run is: cells done of the total, the cell now running, the time elapsed and an
//! estimate of the time left. A progress bar (indicatif) on a terminal; the same facts as plain
//! lines when stderr is a pipe or a CI log, where a redrawn bar would be noise.
//!
//! The estimate: each experiment's typical duration (`durations.rs`, measured on some machine)
//! split evenly over its cells, scaled by how fast this machine ran the cells done so far
//! compared with their typical share. With nothing measured yet it is the typical duration.

use std::io::IsTerminal;
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
    started: Instant,
    quick: bool,
    stages: Vec<Stage>,
    /// Index into `stages` of the experiment now running.
    current: usize,
    done: usize,
    /// Cells taken from an interrupted run's journal: counted as done, not as measured.
    kept: usize,
    /// Seconds measured in this process, and the typical seconds of the same cells.
    measured_s: f64,
    typical_done_s: f64,
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
            bar,
            started: Instant::now(),
            quick,
            stages,
            current: 0,
            done: 0,
            kept: 0,
            measured_s: 0.0,
            typical_done_s: 0.0,
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
        self.stage_started = Instant::now();
        if let Some(bar) = &self.bar {
            bar.set_length(self.total() as u64);
        }
    }

    /// A cell was taken from the journal of an interrupted run.
    pub fn kept(&mut self) {
        self.done += 1;
        self.kept += 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Before a cell runs: the line (plain) or the bar's message says which and how long is left.
    pub fn start_cell(&mut self, experiment: &str, cell: &str) {
        let left = self
            .estimate_left()
            .map_or(String::new(), |s| format!(", about {} left", human(s)));
        match &self.bar {
            Some(bar) => bar.set_message(format!("{experiment} {cell}{left}")),
            None => eprintln!(
                "[{}] cell {}/{} {experiment} {cell}{left}",
                clock(self.started.elapsed()),
                self.done + 1,
                self.total(),
            ),
        }
    }

    /// After a cell ran here (measured, or failed).
    pub fn end_cell(&mut self, seconds: f64) {
        self.done += 1;
        self.measured_s += seconds;
        self.typical_done_s += self.typical_cell_s(self.current).unwrap_or(0.0);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// An experiment's last cell ended.
    pub fn end_stage(&mut self, name: &str) {
        self.note(&format!(
            "{name} done in {}",
            human(self.stage_started.elapsed().as_secs_f64())
        ));
    }

    /// A line that must stay on screen (a failure, a skip): above the bar, or on its own.
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("[{}] {line}", clock(self.started.elapsed())),
        }
    }

    /// A child's stderr, passed through without tearing the bar.
    pub fn passthrough(&self) -> Passthrough {
        Passthrough(self.bar.clone())
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

    /// Seconds left: the typical time of every cell not yet run, scaled by this machine's pace
    /// so far. `None` when nothing is known to scale by and nothing typical is known.
    pub fn estimate_left(&self) -> Option<f64> {
        let pace = if self.typical_done_s > 0.0 && self.measured_s > 0.0 {
            self.measured_s / self.typical_done_s
        } else {
            1.0
        };
        // Cells before `current` are all done; inside it, those done so far.
        let done_before: usize = self.stages[..self.current].iter().map(|s| s.cells).sum();
        let done_in_current = self.done.saturating_sub(done_before);
        let mut left = 0.0;
        let mut known = false;
        for (i, stage) in self.stages.iter().enumerate().skip(self.current) {
            let remaining = if i == self.current {
                stage.cells.saturating_sub(done_in_current)
            } else {
                stage.cells.max(1)
            };
            if let Some(per_cell) = self.typical_cell_s(i) {
                left += per_cell * remaining as f64 * pace;
                known = true;
            } else if self.done > self.kept && self.measured_s > 0.0 {
                // No typical duration: this run's mean cell so far.
                left += self.measured_s / (self.done - self.kept) as f64 * remaining as f64;
                known = true;
            }
        }
        known.then_some(left)
    }
}

/// Writes a child's stderr lines where the progress display allows.
#[derive(Clone)]
pub struct Passthrough(Option<ProgressBar>);

impl Passthrough {
    pub fn line(&self, line: &str) {
        match &self.0 {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
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
        // Two of layouts' cells at twice their typical time: the rest is forecast at that pace.
        for _ in 0..2 {
            p.end_cell(2.0 * layouts / 4.0);
        }
        let left = p.estimate_left().unwrap();
        let expected = 2.0 * (layouts / 2.0 + seek);
        assert!((left - expected).abs() < 1e-6, "{left} vs {expected}");
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

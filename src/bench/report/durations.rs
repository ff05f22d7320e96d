//! How long each experiment typically takes, full and `--quick`, as measured on a named machine:
//! what `bench --list` prints and what the progress estimate starts from before this run has
//! timed anything. Each figure is the wall time of the experiment's cells (child processes
//! included) in the run named beside it; a machine twice as fast halves them all, which is why
//! the estimate rescales them by the pace of the cells already done.

/// One experiment's measured duration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Typical {
    pub seconds: f64,
    /// The CPU it was measured on, as the run's machine line names it.
    pub machine: &'static str,
    /// The command (or the run folder under docs/) that measured it.
    pub source: &'static str,
}

const XEON: &str = "Intel Xeon, 2 cores";

/// The full run the docs are generated from: every experiment's cells (child processes
/// included) summed from its `cells.jsonl`, in the order it ran them. The AMD EPYC is the
/// slower host (docs/runs/full-2026-12-04), so on it the first forecast is low until the first
/// experiment sets the pace.
const FULL_RUN: &str = "docs/runs/full-2026-12-06-2";

/// `(experiment, seconds, machine, source)` for full runs.
const FULL: &[(&str, f64, &str, &str)] = &[
    ("layouts", 134.8, XEON, FULL_RUN),
    ("spawn", 28.7, XEON, FULL_RUN),
    ("crossings", 186.7, XEON, FULL_RUN),
    ("ecs-vs-soa", 177.5, XEON, FULL_RUN),
    ("headline", 103.5, XEON, FULL_RUN),
    ("width", 15.8, XEON, FULL_RUN),
    ("random-access", 24.2, XEON, FULL_RUN),
    ("seek", 216.3, XEON, FULL_RUN),
    ("order", 201.4, XEON, FULL_RUN),
    ("neighbours", 687.9, XEON, FULL_RUN),
    ("churn", 4.9, XEON, FULL_RUN),
    ("filtered", 5.4, XEON, FULL_RUN),
    ("fragmentation", 7.2, XEON, FULL_RUN),
    ("dispatch", 3.3, XEON, FULL_RUN),
    ("js", 125.2, XEON, FULL_RUN),
    ("cpp", 122.6, XEON, FULL_RUN),
    ("counters", 117.9, XEON, FULL_RUN),
    ("peers", 50.5, XEON, FULL_RUN),
    ("threads", 14.7, XEON, FULL_RUN),
    ("simd", 93.1, XEON, FULL_RUN),
    ("gather", 11.4, XEON, FULL_RUN),
    ("migration", 2.9, XEON, FULL_RUN),
    ("switch", 72.6, XEON, FULL_RUN),
    ("grow", 20.5, XEON, FULL_RUN),
    ("memory", 3.9, XEON, FULL_RUN),
    ("shrink", 6.9, XEON, FULL_RUN),
    ("bandwidth", 2.7, XEON, FULL_RUN),
    ("gpu", 7.5, XEON, FULL_RUN),
    ("upload", 23.8, XEON, FULL_RUN),
    ("render", 60.9, XEON, FULL_RUN),
];

/// `bench --quick` on the final code: each experiment's cells (child processes included) summed
/// from the run's `cells.jsonl`. The crossing search
/// finds no bracket at the quick counts.
const QUICK_RUN: &str = "docs/runs/quick-2026-12-05";

/// `bench --only neighbours --quick` on the final code, the experiment that came after the
/// quick run above.
const QUICK_NEIGHBOURS_RUN: &str = "docs/runs/quick-neighbours-2026-12-06";

/// The same for `--quick` runs.
const QUICK: &[(&str, f64, &str, &str)] = &[
    ("layouts", 1.3, XEON, QUICK_RUN),
    ("spawn", 1.1, XEON, QUICK_RUN),
    // No bracket at the quick counts, so no cell: nothing to wait for.
    ("crossings", 0.0, XEON, QUICK_RUN),
    ("ecs-vs-soa", 0.5, XEON, QUICK_RUN),
    ("headline", 7.9, XEON, QUICK_RUN),
    ("width", 0.4, XEON, QUICK_RUN),
    ("random-access", 1.9, XEON, QUICK_RUN),
    ("seek", 23.4, XEON, QUICK_RUN),
    ("order", 1.5, XEON, QUICK_RUN),
    ("neighbours", 10.8, XEON, QUICK_NEIGHBOURS_RUN),
    ("churn", 0.2, XEON, QUICK_RUN),
    ("filtered", 0.4, XEON, QUICK_RUN),
    ("fragmentation", 0.6, XEON, QUICK_RUN),
    ("dispatch", 0.3, XEON, QUICK_RUN),
    ("js", 6.6, XEON, QUICK_RUN),
    ("cpp", 8.8, XEON, QUICK_RUN),
    ("counters", 21.2, XEON, QUICK_RUN),
    ("peers", 3.1, XEON, QUICK_RUN),
    ("threads", 0.8, XEON, QUICK_RUN),
    ("simd", 9.5, XEON, QUICK_RUN),
    ("gather", 0.5, XEON, QUICK_RUN),
    ("migration", 0.2, XEON, QUICK_RUN),
    ("switch", 2.3, XEON, QUICK_RUN),
    ("grow", 0.8, XEON, QUICK_RUN),
    ("memory", 0.7, XEON, QUICK_RUN),
    ("shrink", 6.7, XEON, QUICK_RUN),
    ("bandwidth", 0.2, XEON, QUICK_RUN),
    ("gpu", 0.7, XEON, QUICK_RUN),
    ("upload", 1.3, XEON, QUICK_RUN),
    ("render", 3.3, XEON, QUICK_RUN),
];

/// The typical duration of experiment `name`, full or `--quick`; `None` where none was measured.
pub fn typical(name: &str, quick: bool) -> Option<Typical> {
    let table = if quick { QUICK } else { FULL };
    table
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|&(_, seconds, machine, source)| Typical {
            seconds,
            machine,
            source,
        })
}

/// Every experiment the tables name, full or `--quick`.
pub fn timed() -> impl Iterator<Item = &'static str> {
    FULL.iter().chain(QUICK).map(|&(name, ..)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Each experiment's cells in `run`'s `cells.jsonl`, their seconds summed.
    fn summed(run: &std::path::Path) -> HashMap<String, f64> {
        let text = std::fs::read_to_string(run.join("cells.jsonl")).unwrap();
        let mut sums: HashMap<String, f64> = HashMap::new();
        for line in text.lines() {
            let cell: serde_json::Value = serde_json::from_str(line).unwrap();
            let name = cell["experiment"].as_str().unwrap().to_string();
            *sums.entry(name).or_default() += cell["seconds"].as_f64().unwrap();
        }
        sums
    }

    /// Every entry of `table` that names `run` is that run's cells summed (to the tenth
    /// printed); an experiment without cells there must be 0.
    fn entries_match(table: &[(&str, f64, &str, &str)], run: &str) -> usize {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let sums = summed(&root.join(run));
        let from_run: Vec<_> = table.iter().filter(|e| e.3 == run).collect();
        for &&(name, seconds, ..) in &from_run {
            let summed = sums.get(name).copied().unwrap_or(0.0);
            assert!(
                (summed - seconds).abs() <= 0.051,
                "{name}: {seconds} s here, {summed:.1} s in {run}/cells.jsonl"
            );
        }
        from_run.len()
    }

    /// The entries that name the full run are its `cells.jsonl` summed per experiment, and that
    /// run is the newest, the one `bench docs` generates from: a new full run cannot become the
    /// docs' source while the forecast starts from the old one.
    #[test]
    fn the_full_runs_entries_are_its_cells_summed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let newest = crate::bench::docs::newest_full_run(root).unwrap();
        assert_eq!(
            newest,
            root.join(FULL_RUN),
            "the run `bench docs` generates from"
        );
        assert!(
            entries_match(FULL, FULL_RUN) > 20,
            "most experiments are the run's own"
        );
    }

    /// The same for `--quick`: every experiment's entry is the quick run's own, or, for an
    /// experiment that came after it, that experiment's own quick run's.
    #[test]
    fn the_quick_runs_entries_are_its_cells_summed() {
        let later = entries_match(QUICK, QUICK_NEIGHBOURS_RUN);
        assert_eq!(entries_match(QUICK, QUICK_RUN) + later, QUICK.len());
    }
}

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

const EPYC: &str = "AMD EPYC, 2 cores";
const XEON: &str = "Intel Xeon, 2 cores";

/// One run of the twenty experiments that take minutes rather than hours (1,366 s in all):
/// `bench --only layouts,spawn,crossings,ecs-vs-soa,headline,width,random-access,churn,filtered,
/// fragmentation,dispatch,js,threads,gather,migration,memory,shrink,bandwidth,gpu,upload`.
const FAST_RUN: &str = "bench --only (the 20 shorter ones), 2026-12-02";

/// `(experiment, seconds, machine, source)` for full runs: the longer experiments from the runs
/// the results pages quote, the rest from one run of them all.
const FULL: &[(&str, f64, &str, &str)] = &[
    ("layouts", 267.2, EPYC, FAST_RUN),
    ("spawn", 34.1, EPYC, FAST_RUN),
    ("crossings", 218.4, EPYC, FAST_RUN),
    ("ecs-vs-soa", 336.5, EPYC, FAST_RUN),
    ("headline", 123.9, EPYC, FAST_RUN),
    ("width", 14.2, EPYC, FAST_RUN),
    ("random-access", 26.0, EPYC, FAST_RUN),
    ("churn", 7.7, EPYC, FAST_RUN),
    ("filtered", 7.1, EPYC, FAST_RUN),
    ("fragmentation", 10.1, EPYC, FAST_RUN),
    ("dispatch", 3.7, EPYC, FAST_RUN),
    ("js", 141.0, EPYC, FAST_RUN),
    ("threads", 21.0, EPYC, FAST_RUN),
    ("gather", 14.8, EPYC, FAST_RUN),
    ("migration", 3.7, EPYC, FAST_RUN),
    ("memory", 78.5, EPYC, FAST_RUN),
    ("shrink", 13.8, EPYC, FAST_RUN),
    ("bandwidth", 2.7, EPYC, FAST_RUN),
    ("gpu", 11.3, EPYC, FAST_RUN),
    ("upload", 30.3, EPYC, FAST_RUN),
    ("seek", 4363.0, EPYC, "docs/runs/seek"),
    ("peers", 2200.0, XEON, "docs/runs/peers"),
    ("counters", 1508.0, XEON, "docs/runs/counters"),
    ("render", 926.0, XEON, "docs/runs/render"),
    ("switch", 451.0, XEON, "docs/runs/switch"),
    ("cpp", 246.0, XEON, "docs/runs/cpp"),
    ("simd", 149.0, XEON, "docs/runs/simd"),
    ("grow", 77.0, EPYC, "bench --only grow, 2026-12-02"),
    ("order", 572.0, EPYC, "docs/runs/order"),
];

/// `bench --quick` measured each of its experiments in one run (each cell's seconds summed from
/// its `cells.jsonl`; 286 s in all, the crossing search found no bracket at quick counts).
const QUICK_RUN: &str = "bench --quick, 2026-12-02";

/// The same for `--quick` runs.
const QUICK: &[(&str, f64, &str, &str)] = &[
    ("layouts", 2.1, EPYC, QUICK_RUN),
    ("spawn", 1.9, EPYC, QUICK_RUN),
    // No bracket at the quick counts, so no cell: nothing to wait for.
    ("crossings", 0.0, EPYC, QUICK_RUN),
    ("ecs-vs-soa", 1.0, EPYC, QUICK_RUN),
    ("headline", 20.9, EPYC, QUICK_RUN),
    ("width", 0.4, EPYC, QUICK_RUN),
    ("random-access", 2.6, EPYC, QUICK_RUN),
    ("seek", 57.7, EPYC, QUICK_RUN),
    ("churn", 0.4, EPYC, QUICK_RUN),
    ("filtered", 0.7, EPYC, QUICK_RUN),
    ("fragmentation", 1.2, EPYC, QUICK_RUN),
    ("dispatch", 0.4, EPYC, QUICK_RUN),
    ("js", 10.0, EPYC, QUICK_RUN),
    ("cpp", 22.9, EPYC, QUICK_RUN),
    ("peers", 47.0, EPYC, QUICK_RUN),
    ("threads", 1.6, EPYC, QUICK_RUN),
    ("simd", 25.7, EPYC, QUICK_RUN),
    ("gather", 0.9, EPYC, QUICK_RUN),
    ("migration", 0.3, EPYC, QUICK_RUN),
    ("switch", 3.9, EPYC, QUICK_RUN),
    ("grow", 1.2, EPYC, QUICK_RUN),
    ("memory", 1.0, EPYC, QUICK_RUN),
    ("shrink", 13.3, EPYC, QUICK_RUN),
    ("bandwidth", 0.2, EPYC, QUICK_RUN),
    ("counters", 61.0, EPYC, QUICK_RUN),
    ("gpu", 1.0, EPYC, QUICK_RUN),
    ("upload", 2.0, EPYC, QUICK_RUN),
    ("render", 4.6, EPYC, QUICK_RUN),
    ("order", 1.3, EPYC, "bench --quick --only order, 2026-12-03"),
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

//! The suite: every experiment in the order a run takes them, the `--only` selection, and
//! `bench --list`. The one place that knows every experiment, above them all.

use crate::bench::beyond;
use crate::bench::report::durations;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::progress;
use crate::bench::studies;

pub fn experiments() -> Vec<&'static dyn Experiment> {
    vec![
        &studies::layouts::Layouts,
        &studies::spawn::Spawn,
        &studies::crossings::Crossings,
        &beyond::ecs_vs_soa::EcsVsSoa,
        &beyond::headline::Headline,
        &studies::width::Width,
        &studies::random_access::RandomAccess,
        &beyond::seek::Seek,
        &beyond::order::OrderExperiment,
        &studies::churn::Churn,
        &studies::filtered::Filtered,
        &studies::fragmentation::Fragmentation,
        &studies::dispatch::Dispatch,
        &studies::js::Js,
        &studies::cpp::Cpp,
        // Before peers, whose instruction counts are these (the same frame, the same geometry).
        &studies::counters::Counters,
        &beyond::peers::Peers,
        &beyond::threads::ThreadScaling,
        &beyond::simd::Simd,
        &beyond::gather::Gather,
        &beyond::migration::Migration,
        &beyond::switch::Switch,
        &beyond::grow::Grow,
        &studies::memory::Memory,
        &beyond::shrink::Shrink,
        &beyond::bandwidth::Bandwidth,
        #[cfg(feature = "gpu")]
        &beyond::gpu::Gpu,
        #[cfg(feature = "gpu")]
        &beyond::upload::Upload,
        #[cfg(feature = "app")]
        &beyond::render::Render,
    ]
}

pub fn experiment_names() -> String {
    experiments()
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `bench --list`: every experiment in the suite's order: what it measures, which study row it
/// reproduces or goes past, how many cells (one process each) a full and a `--quick` run hold,
/// and how long each typically takes, with the machine that took it. An experiment that sizes
/// its cells from earlier experiments' records (the crossing search) says so instead of a count.
pub fn list() -> String {
    let (full, quick) = (BenchConfig::new(false), BenchConfig::new(true));
    let took = |name, quick| {
        durations::typical(name, quick)
            .map_or("not timed yet".to_string(), |t| progress::human(t.seconds))
    };
    let mut out = String::new();
    let (mut full_s, mut quick_s) = (0.0, 0.0);
    for e in experiments() {
        let cells = match (e.cells(&full, &[]).len(), e.cells(&quick, &[]).len()) {
            (0, 0) => "from earlier results".to_string(),
            (f, q) => format!("{f} / {q}"),
        };
        full_s += durations::typical(e.name(), false).map_or(0.0, |t| t.seconds);
        quick_s += durations::typical(e.name(), true).map_or(0.0, |t| t.seconds);
        out.push_str(&format!(
            "{}\n    {}\n    {}\n    cells (full / --quick): {cells}; typically {} / {}{}\n\n",
            e.name(),
            e.title(),
            e.study(),
            took(e.name(), false),
            took(e.name(), true),
            durations::typical(e.name(), false).map_or(String::new(), |t| format!(
                " (full: {}, {})",
                t.machine, t.source
            )),
        ));
    }
    out.push_str(&format!(
        "All of them: typically {} full, {} with --quick (the sums of the figures above).\n\
         `bench --only NAME[,NAME]` runs some of them; `bench` runs them all; `--out DIR` keeps \
         each cell as it ends, and `bench --resume DIR` finishes a run that was stopped.\n",
        progress::human(full_s),
        progress::human(quick_s),
    ));
    out
}

/// The experiments `--only` names, in the suite's order; every name must exist.
pub fn select(only: &[String]) -> Result<Vec<&'static dyn Experiment>, BenchError> {
    let all = experiments();
    for name in only {
        if !all.iter().any(|e| e.name() == name) {
            return Err(BenchError::UnknownExperiment {
                name: name.clone(),
                accepted: experiment_names(),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| only.is_empty() || only.iter().any(|n| n == e.name()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::experiment::Cell;

    #[test]
    fn malformed_cells_are_errors_not_defaults() {
        let cell = Cell::new("layouts", "n=12x");
        let err = cell.value::<usize>("n=", "").unwrap_err().to_string();
        assert!(
            err.contains("layouts") && err.contains("n=12x") && err.contains("n=<value>"),
            "{err}"
        );
        assert_eq!(
            Cell::new("e", "share=10%")
                .value::<u32>("share=", "%")
                .unwrap(),
            10
        );
        assert_eq!(Cell::new("e", "a:b").parts::<2>("x:y").unwrap(), ["a", "b"]);
        assert!(Cell::new("e", "a:b:c").parts::<2>("x:y").is_err());
        // Every experiment refuses a cell it never writes.
        let cfg = BenchConfig::new(true);
        for experiment in experiments() {
            assert!(
                experiment.run_cell(&cfg, "no-such-cell:x").is_err(),
                "{} accepted a malformed cell",
                experiment.name()
            );
        }
    }

    #[test]
    fn unknown_experiments_list_the_accepted_names() {
        let err = select(&["layouts".into(), "nope".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("nope") && err.contains("width") && err.contains("bandwidth"));
        assert_eq!(select(&[]).unwrap().len(), experiments().len());
    }

    #[test]
    fn every_experiment_has_a_measured_duration_full_and_quick() {
        for e in experiments() {
            for quick in [false, true] {
                let t = durations::typical(e.name(), quick);
                // Zero only where a run had no cell to run (the crossings at quick counts).
                assert!(
                    t.is_some_and(|t| t.seconds > 0.0 || quick && e.name() == "crossings"),
                    "{} has no typical {} duration",
                    e.name(),
                    if quick { "--quick" } else { "full" }
                );
            }
        }
        for name in durations::timed() {
            assert!(
                select(&[name.to_string()]).is_ok(),
                "{name} is not an experiment"
            );
        }
    }

    /// `--counts` and `--layouts` reach every cell of the experiments that say they narrow
    /// (mutation: seek without `counts_or` fails here, at its 10k cells).
    #[test]
    fn counts_and_layouts_narrow_every_experiment_that_says_so() {
        use crate::layout::LayoutKind;
        let defaults = ["1000", "10000", "100000", "1000000", "10000000"];
        for quick in [false, true] {
            let mut cfg = BenchConfig::new(quick);
            cfg.counts = Some(vec![12_345]);
            cfg.layouts = Some(vec![LayoutKind::Soa]);
            for e in experiments() {
                let narrows = e.narrows();
                for cell in e.cells(&cfg, &[]) {
                    let parts: Vec<&str> = cell.split([':', '=']).collect();
                    if narrows.counts {
                        assert!(
                            !parts.iter().any(|p| defaults.contains(p)),
                            "{} cell {cell} ignores --counts",
                            e.name()
                        );
                    }
                    if narrows.layouts {
                        assert!(
                            !LayoutKind::ALL
                                .iter()
                                .any(|k| *k != LayoutKind::Soa && parts.contains(&k.name())),
                            "{} cell {cell} ignores --layouts",
                            e.name()
                        );
                    }
                }
            }
        }
        let unnarrowed = crate::bench::runner::not_narrowed(
            &BenchConfig {
                counts: Some(vec![1000]),
                ..BenchConfig::new(true)
            },
            &experiments(),
        );
        assert_eq!(unnarrowed.len(), 1, "{unnarrowed:?}");
        assert!(
            unnarrowed[0].contains("width") && !unnarrowed[0].contains(" seek"),
            "{unnarrowed:?}"
        );
    }
}

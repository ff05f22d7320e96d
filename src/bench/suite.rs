//! The suite: every experiment in the order a run takes them, the `--only` selection, and
//! `bench --list`. The one place that knows every experiment, above them all.

use crate::bench::beyond;
use crate::bench::report::durations;
use crate::bench::report::experiment::{AnyExperiment, BenchConfig, BenchError};
use crate::bench::report::progress;
use crate::bench::studies;

pub fn experiments() -> Vec<&'static dyn AnyExperiment> {
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
        &beyond::neighbours::Neighbours,
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
pub fn select(only: &[String]) -> Result<Vec<&'static dyn AnyExperiment>, BenchError> {
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

    #[test]
    fn malformed_cells_are_errors_that_name_the_experiment_the_cell_and_the_forms() {
        let layouts = select(&["layouts".into()]).unwrap()[0];
        let err = layouts.cell_from_text("n=12x").unwrap_err().to_string();
        assert_eq!(
            err,
            "experiment layouts cannot read cell 'n=12x': expected n=<count>"
        );
        let err = layouts.cell_from_json(r#"{"n":"many"}"#).unwrap_err();
        assert!(err.to_string().contains("layouts"), "{err}");
        // A serialized cell meets its text's rules: the `seek` experiment's cells name CPU
        // layouts only (the gpu layout seeks too, but not in this experiment).
        let seek = select(&["seek".into()]).unwrap()[0];
        let gpu = r#"{"Count":{"layout":"gpu"}}"#;
        assert!(seek.cell_from_json(r#"{"Count":{"layout":"soa"}}"#).is_ok());
        let err = seek.cell_from_json(gpu).unwrap_err().to_string();
        assert!(
            err.contains("count:gpu") && err.contains("CPU layout"),
            "{err}"
        );
        // Every experiment refuses a cell it never writes, in either form, and a cell of another.
        let other = layouts.cell_from_text("n=1000").unwrap();
        let cfg = BenchConfig::new(true);
        for experiment in experiments() {
            let name = experiment.name();
            for refused in [
                experiment.cell_from_text("no-such-cell:x"),
                experiment.cell_from_json(r#"{"no-such-cell":1}"#),
            ] {
                let err = refused.expect_err(name).to_string();
                assert!(err.contains(name) && err.contains("expected"), "{err}");
            }
            if !["layouts", "spawn", "threads", "gather", "gpu"].contains(&name) {
                assert!(experiment.run_cell(&cfg, &other).is_err(), "{name}");
            }
        }
    }

    /// The cells of every experiment, as a full and a `--quick` run plan them (and as the
    /// experiments that plan from earlier records plan them from the newest full run's):
    /// each one reads back as itself from its readable text (the journal's, `--cell`) and from
    /// its serialized value (a worker's `--cell-json`).
    #[test]
    fn every_cell_reads_back_from_its_text_and_its_serialized_value() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let run = crate::bench::docs::newest_full_run(root).unwrap();
        let prior = crate::bench::report::output::read_results(&run.join("results.json"))
            .unwrap()
            .records;
        let mut read = 0;
        for quick in [false, true] {
            let cfg = BenchConfig::new(quick);
            for experiment in experiments() {
                for earlier in [&[][..], &prior[..]] {
                    for cell in experiment.cells(&cfg, earlier) {
                        let from_text = experiment.cell_from_text(cell.text());
                        let from_json = experiment.cell_from_json(cell.json());
                        assert_eq!(from_text.as_ref().ok(), Some(&cell), "{from_text:?}");
                        assert_eq!(from_json.as_ref().ok(), Some(&cell), "{from_json:?}");
                        assert_ne!(cell.text(), cell.json());
                        read += 1;
                    }
                }
            }
        }
        // The crossing search plans from earlier records: the full run's bracket some.
        let crossings = select(&["crossings".into()]).unwrap()[0];
        assert!(!crossings.cells(&BenchConfig::new(false), &prior).is_empty());
        assert!(read > 1000, "{read} cells");
    }

    /// What a journal holds reads back as it was written: every cell of the newest full run's
    /// `cells.jsonl` parses and prints the same text, so `bench --resume` of a folder written
    /// before the cells were typed finds its cells.
    #[test]
    fn every_cell_of_the_newest_full_run_reads_back_as_its_own_text() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let run = crate::bench::docs::newest_full_run(root).unwrap();
        let journal = crate::bench::report::journal::Interrupted::read(&run).unwrap();
        assert!(journal.done.len() > 500, "{} cells", journal.done.len());
        for (experiment, text) in journal.done.keys() {
            let experiment = select(std::slice::from_ref(experiment)).unwrap()[0];
            let cell = experiment.cell_from_text(text);
            assert_eq!(
                cell.as_ref().map(|c| c.text()).ok(),
                Some(text.as_str()),
                "{cell:?}"
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
                    let parts: Vec<&str> = cell.text().split([':', '=']).collect();
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

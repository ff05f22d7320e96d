//! The headless bench: the experiments of the two studies, on the core's layouts, with the
//! method printed beside every number. Each experiment is one file that reads as setup, the loop
//! being measured, the rows it produces. By default every cell (usually one entity count) runs in
//! its own child process, as the JS study did, so that one big heap does not tax the next run.
//!
//! Its tiers, each standing only on those below it:
//! - [`report`]: what an experiment is and gets (the traits, its config, cells, errors), the
//!   measuring harness, records, spreads, the machine line, the journal, progress, plots, the
//!   page and the files;
//! - [`kit`]: what several experiments build on (the cell shapes they share, a seeded fill, a
//!   timed frame, the chunked fields, ECS operations, page placement);
//! - [`studies`]: the two studies' experiments, row by row, and their own figures;
//!   [`beyond`]: what the studies did not measure (it may read a study's experiment, never the
//!   other way round);
//! - [`suite`] (every experiment, `--only`, `--list`) and [`runner`] (a run, its report, replot);
//!   [`docs`] (the pages' generated tables, from one run).

pub mod beyond;
pub mod docs;
pub mod kit;
pub mod report;
pub mod runner;
pub mod studies;
pub mod suite;

pub use report::cell::AnyCell;
pub use report::experiment::{AnyExperiment, BenchConfig, BenchError, Experiment};
pub use report::output::{FailedCell, Report};
pub use runner::{
    FAIL_CELL_ENV, Keep, WorkerCell, plots, prepare_out_dir, render_markdown, replot, run, worker,
    write_report,
};
pub use suite::{experiment_names, experiments, list, select};

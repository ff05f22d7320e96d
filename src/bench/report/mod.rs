//! The bench's lowest tier: what every experiment is and gets, and everything a run writes.
//! Nothing here imports an experiment, the suite or the runner.

pub mod cell;
pub mod child;
pub mod compare;
pub mod durations;
pub mod experiment;
pub mod format;
pub mod harness;
pub mod html;
pub mod journal;
pub mod machine;
pub mod metric;
pub mod output;
pub mod plot;
pub mod progress;
pub mod record;
pub mod spread;

//! What every experiment is and gets: the [`Experiment`] trait the suite runs, the
//! [`BenchConfig`] it sizes itself by, the [`Cell`] it reads its own work back from, and the
//! [`BenchError`] it fails with. The lowest tier of the bench: experiments, the suite and the
//! runner all stand on it, and it imports nothing of theirs.

use thiserror::Error;

use crate::bench::report::harness::Method;
use crate::bench::report::record::Record;
use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::runtime::values::ValueError;

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("unknown experiment '{name}'; accepted: {accepted}")]
    UnknownExperiment { name: String, accepted: String },
    #[error("cannot read or write results at '{path}': {reason}")]
    Unwritable { path: String, reason: String },
    #[error("the worker for {experiment} cell {cell} failed: {reason}")]
    Worker {
        experiment: String,
        cell: String,
        reason: String,
    },
    #[error("experiment {experiment} cannot read cell '{cell}': expected {expected}")]
    BadCell {
        experiment: String,
        cell: String,
        expected: String,
    },
    #[error("interrupted after {done} of {total} cells; {}", match kept {
        Some(dir) => format!("the finished cells are kept in {dir}; resume with: entity-layouts bench --resume {dir}"),
        None => "nothing was kept: `bench --out DIR` keeps each cell as it ends, for `bench --resume DIR`".to_string(),
    })]
    Interrupted {
        done: usize,
        total: usize,
        kept: Option<String>,
    },
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// A cell's text, read back by the experiment that wrote it in `cells()`. A cell that does not
/// have that shape (`--cell` is typed by hand, or a worker of another version) is an error that
/// says what was expected, never a default.
#[derive(Clone, Copy, Debug)]
pub struct Cell<'a> {
    pub experiment: &'static str,
    pub text: &'a str,
}

impl<'a> Cell<'a> {
    pub fn new(experiment: &'static str, text: &'a str) -> Self {
        Self { experiment, text }
    }

    pub fn bad(&self, expected: &str) -> BenchError {
        BenchError::BadCell {
            experiment: self.experiment.into(),
            cell: self.text.into(),
            expected: expected.into(),
        }
    }

    /// The cell as `prefix` + a value + `suffix`, e.g. `n=1000` or `share=10%`.
    pub fn value<T: std::str::FromStr>(&self, prefix: &str, suffix: &str) -> Result<T, BenchError> {
        self.text
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| self.bad(&format!("{prefix}<value>{suffix}")))
    }

    /// The cell's `:`-separated parts, exactly `N` of them.
    pub fn parts<const N: usize>(&self, expected: &str) -> Result<[&'a str; N], BenchError> {
        let parts: Vec<&str> = self.text.split(':').collect();
        parts.try_into().map_err(|_| self.bad(expected))
    }

    /// A number inside one of the cell's parts.
    pub fn number<T: std::str::FromStr>(
        &self,
        part: &str,
        expected: &str,
    ) -> Result<T, BenchError> {
        part.parse().map_err(|_| self.bad(expected))
    }
}

#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub quick: bool,
    pub method: Method,
    /// `--counts`: the entity counts every experiment that sweeps counts runs at instead of its
    /// own; `None` for the defaults.
    pub counts: Option<Vec<usize>>,
    /// `--layouts`: the layouts every experiment that compares layouts keeps of its own;
    /// `None` for all of them.
    pub layouts: Option<Vec<LayoutKind>>,
    pub in_process: bool,
}

impl BenchConfig {
    pub fn new(quick: bool) -> Self {
        Self {
            quick,
            method: if quick {
                Method::quick()
            } else {
                Method::full()
            },
            counts: None,
            layouts: None,
            in_process: false,
        }
    }

    /// The counts to sweep: `--counts` where given, else the experiment's `defaults`.
    pub fn counts_or(&self, defaults: Vec<usize>) -> Vec<usize> {
        self.counts.clone().unwrap_or(defaults)
    }

    /// The experiment's `layouts`, narrowed to those `--layouts` names (in the experiment's
    /// order); all of them without `--layouts`.
    pub fn layouts_of(&self, layouts: &[LayoutKind]) -> Vec<LayoutKind> {
        layouts
            .iter()
            .copied()
            .filter(|k| self.layouts.as_ref().is_none_or(|keep| keep.contains(k)))
            .collect()
    }

    /// `full` normally, `quick` under `--quick`: the one switch every experiment sizes itself by.
    pub fn pick<T>(&self, full: T, quick: T) -> T {
        if self.quick { quick } else { full }
    }
}

/// What `--counts` and `--layouts` can narrow in an experiment. Some measure at counts of their
/// own (the width reversal's 20 fields, the crossing search's brackets) or compare things that
/// are not layouts (dispatch kinds, renderers); they say so instead of ignoring the flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrows {
    pub counts: bool,
    pub layouts: bool,
}

impl Narrows {
    pub const NEITHER: Self = Self {
        counts: false,
        layouts: false,
    };
    pub const BOTH: Self = Self {
        counts: true,
        layouts: true,
    };
    pub const COUNTS: Self = Self {
        counts: true,
        layouts: false,
    };
    pub const LAYOUTS: Self = Self {
        counts: false,
        layouts: true,
    };
}

/// One experiment of the studies (or past them).
pub trait Experiment: Sync {
    /// Name used by `--only` and in the `experiment` column.
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// Which row of which study it reproduces, or what the studies left out that it measures.
    fn study(&self) -> &'static str;
    /// The independent pieces of work, each run in its own process by default.
    /// `prior` holds the records of the experiments run before this one (the crossing search
    /// brackets its search with the layout sweep's numbers).
    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<String>;
    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError>;
    /// Which of `--counts` and `--layouts` this experiment applies (see [`Narrows`]); the run
    /// names, before it starts, every experiment that one of them cannot narrow.
    fn narrows(&self) -> Narrows {
        Narrows::NEITHER
    }
    /// Markdown for this experiment from its records (`all` holds every experiment's records,
    /// for the few tables that put two experiments side by side).
    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String;
}

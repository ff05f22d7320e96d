//! What every experiment is and gets: the [`Experiment`] trait each experiment implements, the
//! [`AnyExperiment`] face the suite and the runner hold it by, the [`BenchConfig`] it sizes
//! itself by, and the [`BenchError`] it fails with. The lowest tier of the bench: experiments,
//! the suite and the runner all stand on it, and it imports nothing of theirs.
//!
//! Two traits, because an experiment's cells are values of its own type ([`Experiment::Cell`]:
//! a count, a layout at a count, one of a few kinds of work) and the suite is one list of every
//! experiment. A trait object of a trait with an associated type names that type
//! (`dyn Experiment<Cell = Count>`), so no one list holds experiments of different cells: the
//! suite holds each as `&dyn AnyExperiment`, which every [`Experiment`] is (one blanket impl):
//! the same methods, with each cell as an [`AnyCell`], its readable text and its serialized
//! value. Only the blanket impl turns one into the other, so no experiment parses text and the
//! runner never sees a cell's type. A generic runner over each experiment's type was the other
//! way; it would make the suite's list, `--only` and `--list` generic too, for nothing the
//! erased face cannot do.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde::de::DeserializeOwned;
use thiserror::Error;

use crate::bench::report::cell::{AnyCell, CellTextError};
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
    #[error(
        "{a} and {b} have no cell in common ({} and {} finished cells): compare two runs of the same cells, e.g. a full run beside a full run, or `--only`/`--counts` as the other run had them",
        cells.0,
        cells.1
    )]
    NoCellInCommon {
        a: String,
        b: String,
        cells: (usize, usize),
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

/// One experiment of the studies (or past them), with its cells as values of its own type.
pub trait Experiment: Sync {
    /// One piece of its work: a value with one readable form (`Display`, e.g. `soa:n=1000`),
    /// read back by `FromStr` (the journal's text, `--cell`), and serialized for its worker.
    type Cell: Clone
        + PartialEq
        + fmt::Debug
        + fmt::Display
        + FromStr<Err = CellTextError>
        + Serialize
        + DeserializeOwned;
    /// Name used by `--only` and in the `experiment` column.
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// Which row of which study it reproduces, or what the studies left out that it measures.
    fn study(&self) -> &'static str;
    /// The independent pieces of work, each run in its own process by default.
    /// `prior` holds the records of the experiments run before this one (the crossing search
    /// brackets its search with the layout sweep's numbers).
    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<Self::Cell>;
    fn run_cell(&self, cfg: &BenchConfig, cell: &Self::Cell) -> Result<Vec<Record>, BenchError>;
    /// Which of `--counts` and `--layouts` this experiment applies (see [`Narrows`]); the run
    /// names, before it starts, every experiment that one of them cannot narrow.
    fn narrows(&self) -> Narrows {
        Narrows::NEITHER
    }
    /// Markdown for this experiment from its records (`all` holds every experiment's records,
    /// for the few tables that put two experiments side by side).
    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String;
}

/// An experiment as the suite and the runner hold it: [`Experiment`] with its cell type
/// erased. Cells come out of it, and go back into it, as [`AnyCell`]s.
pub trait AnyExperiment: Sync {
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    fn study(&self) -> &'static str;
    fn narrows(&self) -> Narrows;
    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String;
    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<AnyCell>;
    /// The cell whose readable form is `text` (what `--cell` takes and the journal holds).
    fn cell_from_text(&self, text: &str) -> Result<AnyCell, BenchError>;
    /// The cell serialized as `json` (what the runner hands a worker, `--cell-json`). It must
    /// read back from its own readable form, so a hand-written value meets the same rules as a
    /// typed one (a layout this experiment does not run is refused either way).
    fn cell_from_json(&self, json: &str) -> Result<AnyCell, BenchError>;
    fn run_cell(&self, cfg: &BenchConfig, cell: &AnyCell) -> Result<Vec<Record>, BenchError>;
}

impl<E: Experiment> AnyExperiment for E {
    fn name(&self) -> &'static str {
        Experiment::name(self)
    }

    fn title(&self) -> &'static str {
        Experiment::title(self)
    }

    fn study(&self) -> &'static str {
        Experiment::study(self)
    }

    fn narrows(&self) -> Narrows {
        Experiment::narrows(self)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        Experiment::render(self, cfg, mine, all)
    }

    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<AnyCell> {
        Experiment::cells(self, cfg, prior)
            .iter()
            .map(AnyCell::of)
            .collect()
    }

    fn cell_from_text(&self, text: &str) -> Result<AnyCell, BenchError> {
        typed_from_text::<E>(self, text).map(|cell| AnyCell::of(&cell))
    }

    fn cell_from_json(&self, json: &str) -> Result<AnyCell, BenchError> {
        let cell = typed_from_json::<E>(self, json)?;
        let text = cell.to_string();
        if typed_from_text::<E>(self, &text)? != cell {
            return Err(BenchError::BadCell {
                experiment: Experiment::name(self).into(),
                cell: json.into(),
                expected: format!("a cell that reads back from its own text ('{text}')"),
            });
        }
        Ok(AnyCell::of(&cell))
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &AnyCell) -> Result<Vec<Record>, BenchError> {
        Experiment::run_cell(self, cfg, &typed_from_json::<E>(self, cell.json())?)
    }
}

fn typed_from_text<E: Experiment>(experiment: &E, text: &str) -> Result<E::Cell, BenchError> {
    text.parse()
        .map_err(|e: CellTextError| BenchError::BadCell {
            experiment: Experiment::name(experiment).into(),
            cell: e.text,
            expected: e.expected,
        })
}

fn typed_from_json<E: Experiment>(experiment: &E, json: &str) -> Result<E::Cell, BenchError> {
    serde_json::from_str(json).map_err(|e| BenchError::BadCell {
        experiment: Experiment::name(experiment).into(),
        cell: json.into(),
        expected: format!("the JSON of one of its cells ({e})"),
    })
}

//! The headline numbers, computed for this machine by measuring, not extrapolating: the entity
//! count at which SoA's saving over `Vec<Box<Entity>>` reaches 1 ms per frame (the JS study's
//! 184,000), and the count at which each layout breaks the 16.67 ms budget (its 1,792,000 for
//! objects). Each search starts from the bracket the layout sweep found and bisects it in log
//! space, building a fresh population at every probe. In `f64`, the study's scalar; for the
//! front page's layouts ([`layouts::FRONT_PAGE`]) in `f32` too, the scalar a game uses.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::frames::frame_stats;
use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures as studies;
use crate::bench::studies::layouts::{self, default_counts};
use crate::layout::LayoutKind;
use crate::threads::Threads;
use crate::workload::BUDGET_MS;

pub struct Crossings;

const NAME: &str = "crossings";

/// A cell: one search, in the bracket `lo..hi` the layout sweep found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Search {
    /// Where SoA's saving over boxed entities reaches 1 ms: `saving:<lo>:<hi>`.
    Saving { lo: usize, hi: usize },
    /// Where `layout` breaks the frame budget: `budget:<layout>:<lo>:<hi>`.
    Budget {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        lo: usize,
        hi: usize,
    },
    /// The same in `f32`: `budget-f32:<layout>:<lo>:<hi>`.
    BudgetF32 {
        #[serde(with = "by_name")]
        layout: LayoutKind,
        lo: usize,
        hi: usize,
    },
}

impl fmt::Display for Search {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Search::Saving { lo, hi } => write!(f, "saving:{lo}:{hi}"),
            Search::Budget { layout, lo, hi } => write!(f, "budget:{layout}:{lo}:{hi}"),
            Search::BudgetF32 { layout, lo, hi } => write!(f, "budget-f32:{layout}:{lo}:{hi}"),
        }
    }
}

impl FromStr for Search {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected =
            "saving:<lo>:<hi>, budget:<layout>:<lo>:<hi> or budget-f32:<layout>:<lo>:<hi>";
        read_cell(text, expected, |text| {
            if let Some([lo, hi]) = holes(text, "saving:{}:{}") {
                return Some(Search::Saving {
                    lo: lo.parse().ok()?,
                    hi: hi.parse().ok()?,
                });
            }
            if let Some([layout, lo, hi]) = holes(text, "budget-f32:{}:{}:{}") {
                return Some(Search::BudgetF32 {
                    layout: layout.parse().ok()?,
                    lo: lo.parse().ok()?,
                    hi: hi.parse().ok()?,
                });
            }
            let [layout, lo, hi] = holes(text, "budget:{}:{}:{}")?;
            Some(Search::Budget {
                layout: layout.parse().ok()?,
                lo: lo.parse().ok()?,
                hi: hi.parse().ok()?,
            })
        })
    }
}

/// The sweep's bracket `(last n below, first n at or above)` for `f(n) >= 0`, if it crosses.
fn bracket(counts: &[usize], f: impl Fn(u64) -> Option<f64>) -> Option<(usize, usize)> {
    counts.windows(2).find_map(|w| {
        let (lo, hi) = (f(w[0] as u64)?, f(w[1] as u64)?);
        (lo < 0.0 && hi >= 0.0).then_some((w[0], w[1]))
    })
}

fn ms(prior: &[Record], layout: &str, scalar: &str, n: u64) -> Option<f64> {
    Query::metric(Metric::FrameMs)
        .layout(layout)
        .scalar(scalar)
        .threads("1")
        .n(n)
        .find(prior)
        .map(|r| r.p50)
}

/// Where `kind` breaks the budget in `scalar`: the bisection's final bracket `lo..hi`.
fn budget_record(kind: LayoutKind, scalar: &str, lo: usize, hi: usize) -> Record {
    Record::new(NAME, kind.name(), scalar, hi)
        .param(format!("bracket={lo}..{hi}"))
        .value(Metric::BreaksBudgetAt, "entities", hi as f64)
}

/// Where `kind` breaks the budget in `scalar` in `records`, if it was found.
pub fn breaks_budget_at(records: &[Record], kind: LayoutKind, scalar: &str) -> Option<u64> {
    Query::metric(Metric::BreaksBudgetAt)
        .layout(kind.name())
        .scalar(scalar)
        .find(records)
        .map(|r| r.p50 as u64)
}

/// Bisects `[lo, hi]` in log space for the smallest n with `f(n) >= 0`, `probes` times.
pub fn bisect(
    mut lo: usize,
    mut hi: usize,
    probes: usize,
    mut f: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<(usize, usize), BenchError> {
    for _ in 0..probes {
        let mid = ((lo as f64) * (hi as f64)).sqrt().round() as usize;
        if mid <= lo || mid >= hi {
            break;
        }
        if f(mid)? >= 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok((lo, hi))
}

impl Experiment for Crossings {
    type Cell = Search;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "JS study: SoA saves 1 ms at 184k; objects break 16.67 ms at 1.79M"
    }

    fn title(&self) -> &'static str {
        "Headline crossings: where the saving reaches 1 ms, where each layout breaks 16.67 ms"
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<Search> {
        let counts = default_counts(cfg);
        let mut cells = Vec::new();
        let saving = |n| Some(ms(prior, "boxed", "f64", n)? - ms(prior, "soa", "f64", n)? - 1.0);
        if let Some((lo, hi)) = bracket(&counts, saving) {
            cells.push(Search::Saving { lo, hi });
        }
        for layout in cfg.layouts_of(&LayoutKind::CPU) {
            let over = |n| Some(ms(prior, layout.name(), "f64", n)? - BUDGET_MS);
            if let Some((lo, hi)) = bracket(&counts, over) {
                cells.push(Search::Budget { layout, lo, hi });
            }
        }
        for layout in cfg.layouts_of(&layouts::FRONT_PAGE) {
            let over = |n| Some(ms(prior, layout.name(), "f32", n)? - BUDGET_MS);
            if let Some((lo, hi)) = bracket(&counts, over) {
                cells.push(Search::BudgetF32 { layout, lo, hi });
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, search: &Search) -> Result<Vec<Record>, BenchError> {
        let probes = cfg.pick(6, 2);
        let method = cfg.method;
        match *search {
            Search::Saving { lo, hi } => {
                let (lo, hi) = bisect(lo, hi, probes, |n| {
                    let boxed = frame_stats::<f64>(LayoutKind::Boxed, n, Threads::One, &method)?;
                    let soa = frame_stats::<f64>(LayoutKind::Soa, n, Threads::One, &method)?;
                    Ok(boxed.p50 - soa.p50 - 1.0)
                })?;
                Ok(vec![
                    Record::new(NAME, "soa-vs-boxed", "f64", hi)
                        .param(format!("bracket={lo}..{hi}"))
                        .value(Metric::SavingReaches1msAt, "entities", hi as f64),
                ])
            }
            Search::Budget {
                layout: kind,
                lo,
                hi,
            } => {
                let (lo, hi) = bisect(lo, hi, probes, |n| {
                    Ok(frame_stats::<f64>(kind, n, Threads::One, &method)?.p50 - BUDGET_MS)
                })?;
                Ok(vec![budget_record(kind, "f64", lo, hi)])
            }
            Search::BudgetF32 {
                layout: kind,
                lo,
                hi,
            } => {
                let (lo, hi) = bisect(lo, hi, probes, |n| {
                    Ok(frame_stats::<f32>(kind, n, Threads::One, &method)?.p50 - BUDGET_MS)
                })?;
                Ok(vec![budget_record(kind, "f32", lo, hi)])
            }
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String {
        let top = default_counts(cfg).into_iter().max().unwrap_or(0);
        let swept = all.iter().any(|r| r.experiment == layouts::NAME);
        let not_found = |what: &str| {
            if swept {
                format!(
                    "not reached up to {} entities ({what})",
                    fmt_count(top as u64)
                )
            } else {
                "needs the `layouts` experiment in the same run".to_string()
            }
        };
        let saving = Query::metric(Metric::SavingReaches1msAt)
            .layout("soa-vs-boxed")
            .scalar("f64")
            .find(mine);
        let mut rows = vec![vec![
            "SoA saves 1 ms/frame over `boxed`".to_string(),
            saving.map_or(not_found("saving"), |r| {
                format!("{} ({})", fmt_count(r.p50 as u64), r.param)
            }),
            fmt_count(studies::JS_SAVING_1MS_AT as u64),
        ]];
        for kind in LayoutKind::CPU {
            let found = Query::metric(Metric::BreaksBudgetAt)
                .layout(kind.name())
                .scalar("f64")
                .find(mine);
            rows.push(vec![
                format!("`{kind}` breaks {BUDGET_MS:.2} ms"),
                found.map_or(not_found("budget"), |r| {
                    format!("{} ({})", fmt_count(r.p50 as u64), r.param)
                }),
                if kind == LayoutKind::Boxed {
                    fmt_count(studies::JS_OBJECTS_BREAK_BUDGET_AT as u64)
                } else {
                    "-".into()
                },
            ]);
        }
        let f32_rows: Vec<Vec<String>> = layouts::FRONT_PAGE
            .iter()
            .map(|kind| {
                let found = Query::metric(Metric::BreaksBudgetAt)
                    .layout(kind.name())
                    .scalar("f32")
                    .find(mine);
                let swept_f32 = Query::metric(Metric::FrameMs)
                    .layout(kind.name())
                    .scalar("f32")
                    .n(top as u64)
                    .find(all)
                    .is_some();
                let missing = if swept_f32 {
                    not_found("budget")
                } else {
                    format!(
                        "needs the `layouts` sweep's f32 cell at {}",
                        fmt_count(top as u64)
                    )
                };
                vec![
                    format!("`{kind}` breaks {BUDGET_MS:.2} ms"),
                    found.map_or(missing, |r| {
                        format!("{} ({})", fmt_count(r.p50 as u64), r.param)
                    }),
                ]
            })
            .collect();
        format!(
            "f64, one thread; the smallest measured count that crosses, with the final bracket of the log-space bisection.\n\n{}\nf32, one thread, the front page's layouts:\n\n{}",
            table(&["crossing", "this machine", "JS study (M3)"], &rows),
            table(&["crossing", "this machine"], &f32_rows)
        )
    }
}

//! Memory follows the count (past the studies): a speaker drags the slider to 1M and back to 10k,
//! and the process should hold about what a fresh one at 10k holds. Each cell is a process of its
//! own: `fresh` grows to 10k; `shrunk` grows to 1M, shrinks to 10k and runs until any rebuild has
//! landed, both through `Driver::frame_step` as the app runs. The table compares their resident
//! memory; the target is at most 1.5x.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::memory::modelled_if;
use crate::layout::LayoutKind;
use crate::memory::resident_bytes;
use crate::runtime::action::Action;
use crate::runtime::driver::Driver;
use crate::workload::SEED;

pub struct Shrink;

const NAME: &str = "shrink";
const BIG: usize = 1_000_000;
const SMALL: usize = 10_000;
/// The target: resident memory after the shrink within this factor of a fresh process's.
const TARGET: f64 = 1.5;

/// A cell: one layout at 10k entities, in a fresh process or shrunk from 1M,
/// `fresh:<layout>` or `shrunk:<layout>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub history: History,
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
}

/// How the population came to 10k entities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum History {
    Fresh,
    Shrunk,
}

impl History {
    const BOTH: [History; 2] = [History::Fresh, History::Shrunk];

    /// As the records' param and the cells spell it.
    fn name(self) -> &'static str {
        match self {
            History::Fresh => "fresh",
            History::Shrunk => "shrunk",
        }
    }
}

impl fmt::Display for Held {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.history.name(), self.layout)
    }
}

impl FromStr for Held {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "fresh:<layout> or shrunk:<layout>", |text| {
            let [how, layout] = holes(text, "{}:{}")?;
            Some(Held {
                history: History::BOTH.into_iter().find(|h| h.name() == how)?,
                layout: layout.parse().ok()?,
            })
        })
    }
}

/// Runs frames until the driver has reached its count and no switch or rebuild is pending.
fn settle(driver: &mut Driver) -> Result<(), BenchError> {
    for _ in 0..3 {
        driver.frame_step();
    }
    while driver.growing() || driver.swarm().transition().is_some() {
        if let Some(e) = driver.frame_step().error {
            return Err(e.into());
        }
    }
    driver.wait_for_frees();
    Ok(())
}

/// The ratio of resident memory after the shrink to a fresh process's, against [`TARGET`];
/// "unknown" where the OS did not say either figure.
fn verdict(fresh: Option<f64>, shrunk: Option<f64>) -> String {
    match (fresh, shrunk) {
        (Some(fresh), Some(shrunk)) if fresh > 0.0 => {
            let ratio = shrunk / fresh;
            let met = if ratio <= TARGET { "met" } else { "NOT met" };
            format!("x{ratio:.2} ({met})")
        }
        _ => "unknown (the OS did not say how much is resident)".to_string(),
    }
}

impl Experiment for Shrink {
    type Cell = Held;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: memory back after shrinking"
    }

    fn title(&self) -> &'static str {
        "Memory after shrinking: 1M entities back to 10k, against a fresh process at 10k (past the studies)"
    }

    fn narrows(&self) -> Narrows {
        Narrows::LAYOUTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Held> {
        cfg.layouts_of(&LayoutKind::CPU)
            .into_iter()
            .flat_map(|layout| History::BOTH.map(|history| Held { history, layout }))
            .collect()
    }

    fn run_cell(&self, _cfg: &BenchConfig, cell: &Held) -> Result<Vec<Record>, BenchError> {
        let kind = cell.layout;
        let mut driver: Driver = Driver::new(kind, SEED)?;
        if cell.history == History::Shrunk {
            driver.apply(&Action::Count(BIG))?;
            settle(&mut driver)?;
        }
        driver.apply(&Action::Count(SMALL))?;
        settle(&mut driver)?;
        let (_, allocated) = driver.swarm().memory().per_entity(driver.swarm().len());
        let rec = Record::new(NAME, kind.name(), "f32", SMALL).param(cell.history.name());
        // Where the OS does not say, there is no resident record: the table prints "unknown"
        // rather than a ratio of zeros that would read as met.
        let resident = resident_bytes().map(|bytes| {
            rec.clone()
                .value(Metric::ResidentMib, "MiB", bytes as f64 / (1 << 20) as f64)
        });
        Ok(resident
            .into_iter()
            .chain([rec.value(Metric::AllocatedBytesPerEntity, "B", allocated)])
            .collect())
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|kind| {
                let name = kind.name();
                let get = |how: &str, metric: Metric| {
                    Query::metric(metric).layout(name).param(how).find(mine)
                };
                let resident = |how: &str| get(how, Metric::ResidentMib).map(|s| s.p50);
                let (fresh, shrunk) = (resident("fresh"), resident("shrunk"));
                let mib = |r: Option<f64>| r.map_or_else(|| "unknown".to_string(), fmt_num);
                Some(vec![
                    format!("`{name}`"),
                    mib(fresh),
                    mib(shrunk),
                    verdict(fresh, shrunk),
                    modelled_if(
                        *kind,
                        format!(
                            "{} / {}",
                            fmt_num(get("fresh", Metric::AllocatedBytesPerEntity)?.p50),
                            fmt_num(get("shrunk", Metric::AllocatedBytesPerEntity)?.p50)
                        ),
                    ),
                ])
            })
            .collect();
        let caveat = if cfg.in_process {
            " Run with `--in-process`, so every cell shares one process: these resident figures do not compare."
        } else {
            ""
        };
        format!(
            "Resident memory of the whole process (the bench's own worker, one per cell) at 10,000 entities: fresh, and after growing to 1,000,000 and shrinking back, through the app's frames. Target: at most x{TARGET}. Shrinking gives back `Vec` capacity below a quarter full, rebuilds Bevy's world (its tables never shrink) over the next frames, and asks glibc to return freed memory (`malloc_trim`).{caveat}\n\n{}",
            table(
                &[
                    "layout",
                    "fresh, MiB",
                    "after 1M -> 10k, MiB",
                    "ratio (target <= 1.5)",
                    "allocated B/entity, fresh / after",
                ],
                &rows
            )
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_resident_size_is_never_met() {
        assert_eq!(verdict(Some(10.0), Some(12.0)), "x1.20 (met)");
        assert_eq!(verdict(Some(10.0), Some(20.0)), "x2.00 (NOT met)");
        for (fresh, shrunk) in [(None, Some(12.0)), (Some(10.0), None), (None, None)] {
            assert!(verdict(fresh, shrunk).starts_with("unknown"));
        }
        assert!(verdict(Some(0.0), Some(0.0)).starts_with("unknown"));
    }
}

//! Memory follows the count (past the studies): a speaker drags the slider to 1M and back to 10k,
//! and the process should hold about what a fresh one at 10k holds. Each cell is a process of its
//! own: `fresh` grows to 10k; `shrunk` grows to 1M, shrinks to 10k and runs until any rebuild has
//! landed, both through `Driver::frame_step` as the app runs. The table compares their resident
//! memory; the target is at most 1.5x.

use crate::action::Action;
use crate::bench::report::experiment::{BenchConfig, BenchError, Cell, Experiment};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::driver::Driver;
use crate::layout::LayoutKind;
use crate::memory::resident_bytes;
use crate::workload::SEED;

pub struct Shrink;

const NAME: &str = "shrink";
const BIG: usize = 1_000_000;
const SMALL: usize = 10_000;
/// The target: resident memory after the shrink within this factor of a fresh process's.
const TARGET: f64 = 1.5;

/// Runs frames until the driver has reached its count and no switch or rebuild is pending.
fn settle(driver: &mut Driver) -> Result<(), BenchError> {
    for _ in 0..3 {
        driver.frame_step();
    }
    while driver.growing() || driver.swarm().switch_progress().is_some() {
        if let Some(e) = driver.frame_step().error {
            return Err(e.into());
        }
    }
    driver.wait_for_frees();
    Ok(())
}

impl Experiment for Shrink {
    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: memory back after shrinking"
    }

    fn title(&self) -> &'static str {
        "Memory after shrinking: 1M entities back to 10k, against a fresh process at 10k (past the studies)"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        LayoutKind::CPU
            .into_iter()
            .flat_map(|kind| [format!("fresh:{kind}"), format!("shrunk:{kind}")])
            .collect()
    }

    fn run_cell(&self, _cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let cell = Cell::new(NAME, cell);
        let expected = "fresh:<layout> or shrunk:<layout>";
        let [how, layout] = cell.parts(expected)?;
        let kind = layout.parse::<LayoutKind>()?;
        let mut driver: Driver = Driver::new(kind, SEED)?;
        match how {
            "fresh" => {}
            "shrunk" => {
                driver.apply(&Action::Count(BIG))?;
                settle(&mut driver)?;
            }
            _ => return Err(cell.bad(expected)),
        }
        driver.apply(&Action::Count(SMALL))?;
        settle(&mut driver)?;
        let resident = resident_bytes().unwrap_or(0) as f64 / (1 << 20) as f64;
        let (_, allocated) = driver.swarm().memory().per_entity(driver.swarm().len());
        let rec = Record::new(NAME, kind.name(), "f32", SMALL).param(how);
        Ok(vec![
            rec.clone()
                .value(Metric::ResidentMib, "MiB", resident.max(f64::MIN_POSITIVE)),
            rec.value(Metric::AllocatedBytesPerEntity, "B", allocated),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LayoutKind::CPU
            .iter()
            .filter_map(|kind| {
                let name = kind.name();
                let get = |how: &str, metric: Metric| {
                    Query::metric(metric).layout(name).param(how).find(mine)
                };
                let fresh = get("fresh", Metric::ResidentMib)?.p50;
                let shrunk = get("shrunk", Metric::ResidentMib)?.p50;
                let ratio = shrunk / fresh;
                Some(vec![
                    format!("`{name}`"),
                    fmt_num(fresh),
                    fmt_num(shrunk),
                    format!(
                        "x{ratio:.2} ({})",
                        if ratio <= TARGET { "met" } else { "NOT met" }
                    ),
                    format!(
                        "{} / {}",
                        fmt_num(get("fresh", Metric::AllocatedBytesPerEntity)?.p50),
                        fmt_num(get("shrunk", Metric::AllocatedBytesPerEntity)?.p50)
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

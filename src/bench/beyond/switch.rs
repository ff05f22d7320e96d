//! Layout switch (past the studies, which never change a running program's layout): carry every
//! entity with its state into another layout, the way the app does when a speaker flips layouts.
//! Every CPU layout, into it from `soa` and out of it to `soa` (`aos` is `soa`'s partner), at 1M
//! and 10M entities. Two ways:
//! - **at once** (`Swarm::switch_to`'s cost: everything copied in one frame, what a window would
//!   freeze for);
//! - **paced**, as the app does it ([`crate::runtime::pace`]): each frame copies for its share of the
//!   frame ([`Pace::FrameShare`]; here, with no drawing and the simulation paused, that is
//!   [`MIN_SHARE`]), in batches sized from the rate measured so far, while the old layout stays
//!   the one that is read. The table gives the frames it took, the copying in all, the longest
//!   frame of copying and the wall-clock time from the request to the switch's end, against the
//!   targets: no frame copies for more than [`WORST_FRAME_TARGET_MS`], a switch at 1M copies for
//!   at most [`TOTAL_TARGET_MS`] in all, and is done within [`DONE_TARGET_MS`] (10M: within
//!   [`DONE_TARGET_10M_MS`]).
//!
//! The simulation is paused while the paced switch is measured, so that the copy is timed alone
//! (in the app each of those frames also moves both layouts' entities; at 10M that would make a
//! cell minutes long and measure the simulation, not the switch).

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, max_of, ms, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::action::Action;
use crate::runtime::driver::Driver;
use crate::runtime::pace::{MIN_SHARE, Pace};
use crate::workload::SEED;

pub struct Switch;

const NAME: &str = "switch";

/// No frame of a paced switch should copy for longer than this: half the 16.67 ms budget.
pub const WORST_FRAME_TARGET_MS: f64 = 8.0;
/// A paced switch at 1M entities should copy for at most this in all.
pub const TOTAL_TARGET_MS: f64 = 400.0;
/// A paced switch at 1M entities should be done this long after the request: what a speaker
/// waits for.
pub const DONE_TARGET_MS: f64 = 1_500.0;
/// And one at 10M entities, this long.
pub const DONE_TARGET_10M_MS: f64 = 10_000.0;

/// The done target at `n` entities (none below 1M).
fn done_target_ms(n: usize) -> Option<f64> {
    match n {
        n if n >= 10_000_000 => Some(DONE_TARGET_10M_MS),
        n if n >= 1_000_000 => Some(DONE_TARGET_MS),
        _ => None,
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![1_000_000, 10_000_000], vec![100_000]))
}

/// Both directions up to 1M; at 10M only the switch into each layout, the direction that
/// builds the library's world: both directions at 10M would take most of this experiment's
/// time (docs/runs/switch).
/// Every CPU layout up to 1M; at 10M one of each family (the libraries' idiomatic forms, whose
/// tuned forms fill the same worlds), which the 10 s target is read against.
fn layouts_at(n: usize) -> Vec<LayoutKind> {
    if n >= 10_000_000 {
        vec![
            LayoutKind::EcsTable,
            LayoutKind::EcsSparse,
            LayoutKind::Hecs,
            LayoutKind::Flecs,
            LayoutKind::Shipyard,
            LayoutKind::Aos,
            LayoutKind::Chunks,
            LayoutKind::Boxed,
            LayoutKind::Dyn(12),
        ]
    } else {
        LayoutKind::CPU.to_vec()
    }
}

fn directions_at(n: usize) -> &'static [Direction] {
    if n >= 10_000_000 {
        &DIRECTIONS[..1]
    } else {
        &DIRECTIONS
    }
}

/// The layout every other one is switched from and to; its own partner is `aos`.
fn partner(kind: LayoutKind) -> LayoutKind {
    if kind == LayoutKind::Soa {
        LayoutKind::Aos
    } else {
        LayoutKind::Soa
    }
}

/// Into the layout (from its partner), and out of it (to its partner).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Into,
    OutOf,
}

const DIRECTIONS: [Direction; 2] = [Direction::Into, Direction::OutOf];

impl Direction {
    /// As the records' param and the cells spell it.
    fn name(self) -> &'static str {
        match self {
            Direction::Into => "into",
            Direction::OutOf => "out of",
        }
    }
}

fn pair(kind: LayoutKind, direction: Direction) -> (LayoutKind, LayoutKind) {
    match direction {
        Direction::Into => (partner(kind), kind),
        Direction::OutOf => (kind, partner(kind)),
    }
}

/// A cell: one layout switched into or out of at `n` entities, `<layout>:<into|out of>:<entities>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switched {
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
    pub direction: Direction,
    pub n: usize,
}

impl fmt::Display for Switched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.layout, self.direction.name(), self.n)
    }
}

impl FromStr for Switched {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "<layout>:<into|out of>:<entities>", |text| {
            let [layout, direction, n] = holes(text, "{}:{}:{}")?;
            Some(Switched {
                layout: layout.parse().ok()?,
                direction: DIRECTIONS.into_iter().find(|d| d.name() == direction)?,
                n: n.parse().ok()?,
            })
        })
    }
}

/// A driver with `n` entities in `from`, grown in one frame, switching at `pace`.
fn driver(from: LayoutKind, n: usize, pace: Pace) -> Result<Driver, BenchError> {
    let mut driver = Driver::new(from, SEED)?
        .with_grow_pace(Pace::Entities(usize::MAX))
        .with_switch_pace(pace);
    driver.apply(&Action::Count(n))?;
    driver.frame_step();
    driver.wait_for_frees();
    Ok(driver)
}

impl Experiment for Switch {
    type Cell = Switched;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: switching a running program's layout"
    }

    fn title(&self) -> &'static str {
        "Layout switch: every layout, into it and out of it, at once and paced as the app does it (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Switched> {
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for kind in cfg.layouts_of(&layouts_at(n)) {
                for &direction in directions_at(n) {
                    cells.push(Switched {
                        layout: kind,
                        direction,
                        n,
                    });
                }
            }
        }
        cells
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn run_cell(&self, _cfg: &BenchConfig, cell: &Switched) -> Result<Vec<Record>, BenchError> {
        let Switched {
            layout: kind,
            direction,
            n,
        } = *cell;
        let (from, to) = pair(kind, direction);
        let rec = Record::new(NAME, kind.name(), "f32", n).param(direction.name());

        // At once: one switch (at 10M a slow one takes seconds), then the memory it left is freed
        // before the paced one is measured, so that the freeing does not compete with it.
        let mut at_once = driver(from, n, Pace::Entities(usize::MAX))?;
        let t = Instant::now();
        at_once.apply(&Action::Layout(to))?;
        let begin = t.elapsed();
        let at_once_ms = ms(begin + at_once.frame_step().switch);
        // The layout it replaced is being freed on a thread; dropping the driver would leave
        // that thread running into the paced switch.
        at_once.wait_for_frees();
        drop(at_once);

        // Paced: the app's frames, paused so that the copy is timed alone.
        let mut paced = driver(from, n, Pace::FrameShare)?;
        paced.apply(&Action::Pause(true))?;
        let t = Instant::now();
        paced.apply(&Action::Layout(to))?;
        let begin_ms = ms(t.elapsed());
        let mut copies = Vec::new();
        while paced.swarm().transition().is_some() {
            let frame = paced.frame_step();
            // Frames that only wait for the fresh layout to be prepared off the frame thread
            // (Bevy's) copy nothing: they count toward `done`, not as frames of copying.
            if frame.copied > 0 || paced.swarm().transition().is_none() {
                copies.push(ms(frame.switch));
            }
        }
        let done_ms = ms(t.elapsed());
        paced.wait_for_frees();
        // The request itself (a fresh layout, room reserved) happens in a frame too.
        let worst = max_of(&copies).max(begin_ms);
        let total: f64 = copies.iter().sum::<f64>() + begin_ms;
        Ok(vec![
            rec.clone().value(Metric::AtOnceMs, "ms", at_once_ms),
            rec.clone()
                .value(Metric::Frames, "frames", copies.len() as f64),
            rec.clone().value(Metric::CopyTotalMs, "ms", total),
            rec.clone().value(Metric::CopyMaxMs, "ms", worst),
            rec.clone().value(Metric::DoneMs, "ms", done_ms),
            rec.value(Metric::BeginMs, "ms", begin_ms),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut out = format!(
            "f32, one thread. Each layout switched into from `soa` and out of it to `soa` (`soa`'s partner is `aos`), in a fresh process per cell. **At once**: `Swarm::switch_to`'s cost, every entity copied in one frame. **Paced**, as the app does it: each frame copies for its share of the frame (`Pace::FrameShare`: half of the frame the machine runs, at least {budget} ms; here the frames are the copy alone, so {budget} ms), in batches sized from the rate measured so far, the simulation paused so that the copy is timed alone; the request's own frame (a fresh layout, room reserved) counts as a frame of copying. **Done** is the wall-clock time from the request to the switch's end. Targets: no frame copies for more than {worst} ms; a switch at 1M copies for at most {total} ms in all and is done within {done} ms, at 10M within {done10} ms (✓ met, ✗ not). At 10M, the switch into one layout of each family only.\n\n",
            budget = MIN_SHARE.as_millis(),
            worst = WORST_FRAME_TARGET_MS,
            total = TOTAL_TARGET_MS,
            done = DONE_TARGET_MS,
            done10 = DONE_TARGET_10M_MS,
        );
        for n in counts(cfg) {
            let mut rows = Vec::new();
            for kind in LayoutKind::CPU {
                let mut row = vec![format!("`{kind}`")];
                for direction in DIRECTIONS {
                    let get = |metric: Metric| {
                        Query::metric(metric)
                            .layout(kind.name())
                            .n(n as u64)
                            .param(direction.name())
                            .find(mine)
                            .map(|r| r.p50)
                    };
                    let (Some(once), Some(frames), Some(total), Some(worst)) = (
                        get(Metric::AtOnceMs),
                        get(Metric::Frames),
                        get(Metric::CopyTotalMs),
                        get(Metric::CopyMaxMs),
                    ) else {
                        row.extend(["-".into(), "-".into(), "-".into(), "-".into(), "-".into()]);
                        continue;
                    };
                    let done = get(Metric::DoneMs).map_or("-".into(), |done| {
                        let mark = match done_target_ms(n) {
                            None => "",
                            Some(target) if done <= target => " ✓",
                            Some(_) => " ✗",
                        };
                        format!("{}{mark}", fmt_num(done))
                    });
                    let total_mark = if n != 1_000_000 {
                        ""
                    } else if total <= TOTAL_TARGET_MS {
                        " ✓"
                    } else {
                        " ✗"
                    };
                    let worst_mark = if worst <= WORST_FRAME_TARGET_MS {
                        " ✓"
                    } else {
                        " ✗"
                    };
                    row.extend([
                        fmt_num(once),
                        format!("{frames}"),
                        format!("{}{total_mark}", fmt_num(total)),
                        format!("{}{worst_mark}", fmt_num(worst)),
                        done,
                    ]);
                }
                rows.push(row);
            }
            out.push_str(&format!(
                "**{} entities**\n\n{}\n",
                fmt_count(n as u64),
                table(
                    &[
                        "layout",
                        "into: at once, ms",
                        "into: frames",
                        "into: copying, ms",
                        "into: worst frame, ms",
                        "into: done, ms",
                        "out of: at once, ms",
                        "out of: frames",
                        "out of: copying, ms",
                        "out of: worst frame, ms",
                        "out of: done, ms",
                    ],
                    &rows
                )
            ));
        }
        out
    }
}

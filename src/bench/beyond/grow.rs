//! Growing to a big count the way the app does (past the studies): the request reserves room for
//! the whole target, then each frame spawns for its share of the frame ([`crate::runtime::pace::Pace::FrameShare`], at least [`MIN_SHARE`]) and steps
//! the population so far. What a speaker sees is the longest frame: a `Vec` or Bevy table that
//! doubles copies everything it holds within one frame.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment};
use crate::bench::report::format::{fmt_count, fmt_num, max_of, ms, ms_since, table};
use crate::bench::report::harness::Stats;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::layout::LayoutKind;
use crate::runtime::action::Action;
use crate::runtime::driver::Driver;
use crate::runtime::pace::MIN_SHARE;
use crate::workload::SEED;

pub struct Grow;

const NAME: &str = "grow";
const LAYOUTS: [LayoutKind; 4] = [
    LayoutKind::Soa,
    LayoutKind::Aos,
    LayoutKind::Boxed,
    LayoutKind::EcsTable,
];

fn target(cfg: &BenchConfig) -> usize {
    cfg.pick(10_000_000, 1_000_000)
}

/// A cell: one layout grown from nothing, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grown(#[serde(with = "by_name")] pub LayoutKind);

impl fmt::Display for Grown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for Grown {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(text, "a layout", |text| text.parse().ok().map(Grown))
    }
}

impl Experiment for Grow {
    type Cell = Grown;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: growing the population frame by frame"
    }

    fn title(&self) -> &'static str {
        "Growing over frames: the app's entity slider from 0 to the top (past the studies)"
    }

    fn cells(&self, _cfg: &BenchConfig, _prior: &[Record]) -> Vec<Grown> {
        LAYOUTS.map(Grown).to_vec()
    }

    fn run_cell(&self, cfg: &BenchConfig, &Grown(kind): &Grown) -> Result<Vec<Record>, BenchError> {
        let n = target(cfg);
        let mut driver: Driver = Driver::new(kind, SEED)?;
        let t = Instant::now();
        driver.apply(&Action::Count(n))?;
        let request_ms = ms_since(t);
        let mut spawn = Vec::new();
        let mut frames = Vec::new();
        while driver.swarm().len() < n {
            let t = Instant::now();
            let report = driver.frame_step();
            if let Some(e) = report.error {
                return Err(e.into());
            }
            frames.push(ms_since(t));
            // A Bevy world grown many times over first moves into one prepared for the count
            // (`Swarm::rehome_to_grow`): its copying is part of growing, and the frames that only
            // wait for the prepare's thread (microseconds each here, a vsync in the app) are not
            // frames of growing.
            if report.spawned > 0 || report.copied > 0 {
                spawn.push(ms(report.grow + report.switch));
            }
        }
        let rec = Record::new(NAME, kind.name(), "f32", n);
        Ok(vec![
            rec.clone().value(Metric::RequestMs, "ms", request_ms),
            rec.clone()
                .value(Metric::Frames, "frames", spawn.len() as f64),
            rec.clone()
                .value(Metric::SpawnTotalMs, "ms", spawn.iter().sum()),
            rec.clone().value(Metric::SpawnMaxMs, "ms", max_of(&spawn)),
            rec.clone().value(Metric::FrameMaxMs, "ms", max_of(&frames)),
            rec.with(Metric::SpawnMsPerFrame, "ms", Stats::from_samples(spawn)),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let rows: Vec<Vec<String>> = LAYOUTS
            .iter()
            .filter_map(|kind| {
                let get = |metric: Metric| Query::metric(metric).layout(kind.name()).find(mine);
                Some(vec![
                    format!("`{kind}`"),
                    fmt_num(get(Metric::RequestMs)?.p50),
                    fmt_num(get(Metric::Frames)?.p50),
                    fmt_num(get(Metric::SpawnTotalMs)?.p50),
                    format!(
                        "{} / {}",
                        fmt_num(get(Metric::SpawnMsPerFrame)?.p50),
                        fmt_num(get(Metric::SpawnMaxMs)?.p50)
                    ),
                    fmt_num(get(Metric::FrameMaxMs)?.p50),
                ])
            })
            .collect();
        format!(
            "0 to {} entities, f32, one thread, spawning for its share of each frame (half of the frame, at least {} ms: `Pace::FrameShare`, in batches sized from the rate measured so far), each frame also moving the population so far (`Driver::frame_step`, as the app runs it). Request = `set_count` (reserves room for the whole target). One run per layout.\n\n{}",
            fmt_count(target(cfg) as u64),
            MIN_SHARE.as_millis(),
            table(
                &[
                    "layout",
                    "request, ms",
                    "frames",
                    "spawning total, ms",
                    "spawn per frame p50 / max, ms",
                    "longest frame, ms",
                ],
                &rows
            )
        )
    }
}

//! Layout switch (past the studies, which never change a running program's layout): carry every
//! entity with its state into another layout, the way the app does when a speaker flips layouts.
//! Two ways: at once (export, build, import: the window would stall for all of it), and spread
//! over frames as the app does it ([`SWITCH_CHUNK`] entities copied per frame while the swarm keeps
//! moving, both layouts stepped until the copy takes over). For the spread switch the table gives
//! the frames it takes and the longest frame of simulation work during it (copy + both steps).

use std::time::Instant;

use super::harness::Stats;
use super::record::{Query, Record};
use super::{
    BenchConfig, BenchError, Cell, Experiment, SEED, fmt_count, fmt_num, max_of, ms, table,
};
use crate::action::Action;
use crate::driver::{Driver, SWITCH_CHUNK};
use crate::layout::LayoutKind;

pub struct Switch;

const NAME: &str = "switch";

/// The switches a talk makes: out of objects, into and out of the ECS, and between the arrays.
const PAIRS: [(LayoutKind, LayoutKind); 4] = [
    (LayoutKind::Boxed, LayoutKind::Soa),
    (LayoutKind::Soa, LayoutKind::Aos),
    (LayoutKind::Soa, LayoutKind::EcsTable),
    (LayoutKind::EcsTable, LayoutKind::Soa),
];

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.pick(vec![1_000_000, 10_000_000], vec![100_000])
}

fn pair_name(from: LayoutKind, to: LayoutKind) -> String {
    format!("{from}->{to}")
}

/// A driver with `n` entities in `from`, grown in one frame, copying `switch_chunk` entities a
/// frame when it switches.
fn driver(from: LayoutKind, n: usize, switch_chunk: usize) -> Result<Driver, BenchError> {
    let mut driver = Driver::new(from, SEED)?.with_chunks(usize::MAX, switch_chunk);
    driver.apply(&Action::Count(n))?;
    driver.frame_step();
    driver.wait_for_frees();
    Ok(driver)
}

impl Experiment for Switch {
    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "Layout switch: every entity carried into another layout, at once and spread over frames (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<String> {
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for (from, to) in PAIRS {
                cells.push(format!("{}:{n}", pair_name(from, to)));
            }
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError> {
        let cell = Cell::new(NAME, cell);
        let expected = "<from>-><to>:<entities> for a pair the experiment lists";
        let [pair, n] = cell.parts(expected)?;
        let n: usize = cell.number(n, expected)?;
        let (from, to) = PAIRS
            .into_iter()
            .find(|&(f, t)| pair_name(f, t) == pair)
            .ok_or_else(|| cell.bad(expected))?;
        let rec = Record::new(NAME, pair, "f32", n);

        // At once: a handful of round trips (each switch at 10M takes seconds); the way back is
        // not timed. A driver whose switch chunk is unbounded copies everything in the next
        // frame. The replaced layout is freed on another thread, as in the app; that is waited
        // out before the next measurement so it does not compete with it.
        let mut at_once_driver = driver(from, n, usize::MAX)?;
        let mut at_once = Vec::new();
        for _ in 0..cfg.pick(3, 2) {
            let t = Instant::now();
            at_once_driver.apply(&Action::Layout(to))?;
            let begin = t.elapsed();
            at_once.push(ms(begin + at_once_driver.frame_step().switch));
            at_once_driver.apply(&Action::Layout(from))?;
            at_once_driver.frame_step();
            at_once_driver.wait_for_frees();
        }
        drop(at_once_driver);

        // Spread: the app's frames, a chunk copied then both layouts stepped while both exist.
        let mut spread = driver(from, n, SWITCH_CHUNK)?;
        let plain_frame = ms(spread.frame_step().simulate);
        spread.apply(&Action::Layout(to))?;
        let mut copies = Vec::new();
        let mut frames = Vec::new();
        while spread.switch_progress().is_some() {
            let report = spread.frame_step();
            copies.push(ms(report.switch));
            frames.push(ms(report.switch + report.simulate));
        }
        spread.wait_for_frees();
        let worst = max_of(&frames);
        let worst_copy = max_of(&copies);
        Ok(vec![
            rec.clone()
                .param("at once")
                .with("switch_ms", "ms", Stats::from_samples(at_once)),
            rec.clone()
                .param("spread")
                .value("frames", "frames", copies.len() as f64),
            rec.clone()
                .param("spread")
                .value("copy_total_ms", "ms", copies.iter().sum()),
            rec.clone().param("spread").with(
                "copy_ms_per_frame",
                "ms",
                Stats::from_samples(copies),
            ),
            rec.clone()
                .param("spread")
                .value("copy_max_ms", "ms", worst_copy),
            rec.clone()
                .param("spread")
                .value("worst_frame_ms", "ms", worst),
            rec.param("plain").value("frame_ms", "ms", plain_frame),
        ])
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut rows = Vec::new();
        for n in counts(cfg) {
            for (from, to) in PAIRS {
                let pair = pair_name(from, to);
                let get = |param: &str, metric: &str| {
                    Query::metric(metric)
                        .layout(&pair)
                        .n(n as u64)
                        .param(param)
                        .find(mine)
                };
                let (
                    Some(once),
                    Some(frames),
                    Some(total),
                    Some(copy),
                    Some(copy_max),
                    Some(worst),
                    Some(plain),
                ) = (
                    get("at once", "switch_ms"),
                    get("spread", "frames"),
                    get("spread", "copy_total_ms"),
                    get("spread", "copy_ms_per_frame"),
                    get("spread", "copy_max_ms"),
                    get("spread", "worst_frame_ms"),
                    get("plain", "frame_ms"),
                )
                else {
                    continue;
                };
                rows.push(vec![
                    fmt_count(n as u64),
                    format!("`{from}` -> `{to}`"),
                    fmt_num(once.p50),
                    format!("{}", frames.p50),
                    fmt_num(total.p50),
                    format!(
                        "{} / {} / {}",
                        fmt_num(copy.p50),
                        fmt_num(copy.p90),
                        fmt_num(copy_max.p50)
                    ),
                    fmt_num(worst.p50),
                    fmt_num(plain.p50),
                ]);
            }
        }
        format!(
            "f32, one thread. At once: p50 of {} switches (`Swarm::switch_to`). Both run `Driver::frame_step`, the app's frame: at once with an unbounded switch chunk, spread as the app does it, {} entities copied per frame, then move + regen on both layouts until the copy takes over; frames and copy times from one switch. Worst frame = copy + steps, the longest stretch of simulation work the window sees during the switch (rendering comes on top); plain frame = move + regen before the switch.\n\n{}",
            cfg.pick(3, 2),
            fmt_count(SWITCH_CHUNK as u64),
            table(
                &[
                    "entities",
                    "switch",
                    "at once, ms",
                    "spread: frames",
                    "copy total, ms",
                    "copy per frame p50 / p90 / max, ms",
                    "worst frame, ms",
                    "plain frame, ms",
                ],
                &rows
            )
        )
    }
}

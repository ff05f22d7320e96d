//! Layout switch (past the studies, which never change a running program's layout): carry every
//! entity with its state into another layout, the way the app does when a speaker flips layouts.
//! Two ways: at once (export, build, import: the window would stall for all of it), and spread
//! over frames as the app does it ([`SWITCH_CHUNK`] entities copied per frame while the swarm keeps
//! moving, both layouts stepped until the copy takes over). For the spread switch the table gives
//! the frames it takes and the longest frame of simulation work during it (copy + both steps).

use std::time::Instant;

use super::harness::Stats;
use super::record::{Record, find};
use super::{
    BenchConfig, BenchError, Experiment, SEED, fmt_count, fmt_num, max_of, ms_since, table,
};
use crate::driver::SWITCH_CHUNK;
use crate::layout::LayoutKind;
use crate::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;

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
        let (pair, n) = cell.split_once(':').unwrap_or(("", "0"));
        let n: usize = n.parse().unwrap_or(0);
        let (from, to) = PAIRS
            .into_iter()
            .find(|&(f, t)| pair_name(f, t) == pair)
            .unwrap_or(PAIRS[0]);
        let dt = Dt::default();
        let mut swarm = Swarm::<f32>::with_count(from, SEED, n)?;
        swarm.step(dt, Threads::One);
        let rec = Record::new(NAME, pair, "f32", n);

        // At once: a handful of round trips (each switch at 10M takes seconds); the way back is
        // not timed. The replaced layout is freed on another thread, as in the app; that is
        // waited out before the next measurement so it does not compete with it.
        let mut at_once = Vec::new();
        for _ in 0..cfg.pick(3, 2) {
            let t = Instant::now();
            swarm.switch_to(to)?;
            at_once.push(ms_since(t));
            swarm.switch_to(from)?;
            swarm.wait_for_frees();
        }

        // Spread: frame after frame, copy a chunk then step (both layouts while both exist).
        let t = Instant::now();
        swarm.step(dt, Threads::One);
        let plain_frame = ms_since(t);
        swarm.begin_switch(to)?;
        let mut copies = Vec::new();
        let mut frames = Vec::new();
        while swarm.switch_progress().is_some() {
            let t = Instant::now();
            swarm.switch_step(SWITCH_CHUNK);
            copies.push(ms_since(t));
            swarm.step(dt, Threads::One);
            frames.push(ms_since(t));
        }
        swarm.wait_for_frees();
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
                let get =
                    |param: &str, metric: &str| find(mine, &pair, "", "", n as u64, param, metric);
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
            "f32, one thread. At once: p50 of {} switches (`Swarm::switch_to`). Spread: what the app does, {} entities copied per frame, then move + regen on both layouts until the copy takes over; frames and copy times from one switch. Worst frame = copy + steps, the longest stretch of simulation work the window sees during the switch (rendering comes on top); plain frame = move + regen before the switch.\n\n{}",
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

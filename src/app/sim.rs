//! SimPlugin: owns the active layout (through the core's `Driver`) as a resource, runs one frame
//! of the simulation per Bevy frame and times it, then gathers the points the renderer draws.
//! Every request from the panel, the keys or a script goes through `Sim`, which keeps the
//! population as it was when a request is refused and says why.

use std::time::Instant;

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;

use entity_layouts::driver::Driver;
use entity_layouts::threads::Threads;
use entity_layouts::{LayoutKind, SimError};

use super::render::{GatheredPoints, UploadClock};
use super::stats::{FrameSplit, FrameStats, Setting};

#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum SimSet {
    /// Scripts, keys: requests for this frame.
    Requests,
    Simulate,
    Gather,
}

/// Needs a `Sim` resource (the app inserts it, built from the command line).
pub struct SimPlugin;

impl Plugin for SimPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<FrameStats>()
            .configure_sets(
                Update,
                (SimSet::Requests, SimSet::Simulate, SimSet::Gather).chain(),
            )
            .add_systems(Update, simulate.in_set(SimSet::Simulate))
            .add_systems(
                Update,
                (gather, record_frame).chain().in_set(SimSet::Gather),
            );
    }
}

/// A line for the panel: what just happened, or why a request was refused.
#[derive(Clone, Debug)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

#[derive(Resource)]
pub struct Sim {
    pub driver: Driver,
    pub notice: Option<Notice>,
    /// This frame's timings, ms.
    pub grow_ms: f32,
    pub churn_ms: f32,
    pub simulate_ms: f32,
    pub gather_ms: f32,
    /// Set when a change makes earlier scoreboard numbers incomparable.
    pub scoreboard_stale: bool,
    /// The count the scoreboard is for.
    pub scoreboard_count: usize,
    /// Set on exit: no more frames are simulated, so the printed checksum is final.
    pub frozen: bool,
}

impl Sim {
    pub fn new(driver: Driver) -> Self {
        Self {
            driver,
            notice: None,
            grow_ms: 0.0,
            churn_ms: 0.0,
            simulate_ms: 0.0,
            gather_ms: 0.0,
            scoreboard_stale: true,
            scoreboard_count: 0,
            frozen: false,
        }
    }

    fn report(&mut self, result: Result<String, SimError>) -> bool {
        match result {
            Ok(text) => {
                self.notice = Some(Notice {
                    text,
                    is_error: false,
                });
                true
            }
            Err(e) => {
                self.notice = Some(Notice {
                    text: e.to_string(),
                    is_error: true,
                });
                false
            }
        }
    }

    pub fn set_layout(&mut self, kind: LayoutKind) -> bool {
        if kind == self.driver.swarm.kind() {
            return true;
        }
        let started = Instant::now();
        let result = self.driver.set_layout(kind).map(|()| {
            format!(
                "switched to {} in {:.0} ms ({} entities carried over)",
                kind.label(),
                started.elapsed().as_secs_f64() * 1e3,
                self.driver.swarm.len()
            )
        });
        self.report(result)
    }

    pub fn set_count(&mut self, n: usize) -> bool {
        let result = self
            .driver
            .set_count(n)
            .map(|()| format!("count set to {n}"));
        self.report_setting(result)
    }

    pub fn set_churn(&mut self, n: usize) -> bool {
        let result = self
            .driver
            .set_churn(n)
            .map(|()| format!("churn set to {n} per frame"));
        self.report_setting(result)
    }

    /// `report`, and a successful change of a setting makes earlier scoreboard numbers stale.
    fn report_setting(&mut self, result: Result<String, SimError>) -> bool {
        let ok = self.report(result);
        self.scoreboard_stale |= ok;
        ok
    }

    pub fn set_threads(&mut self, threads: Threads) {
        if self.driver.threads != threads {
            self.driver.threads = threads;
            self.scoreboard_stale = true;
        }
    }

    /// Still spawning toward the requested count.
    pub fn growing(&self) -> bool {
        self.driver.swarm.len() < self.driver.target()
    }
}

fn ms_since(t: Instant) -> f32 {
    (t.elapsed().as_secs_f64() * 1e3) as f32
}

fn simulate(mut sim: ResMut<Sim>) {
    let sim = &mut *sim;
    if sim.frozen {
        return;
    }
    let t = Instant::now();
    if let Err(e) = sim.driver.grow_step() {
        // Memory ran out part way: keep what was spawned and stop growing there.
        let len = sim.driver.swarm.len();
        let _ = sim.driver.set_count(len);
        sim.report(Err(e));
    }
    sim.grow_ms = ms_since(t);
    let t = Instant::now();
    if let Err(e) = sim.driver.churn_step() {
        let _ = sim.driver.set_churn(0);
        sim.report(Err(e));
    }
    sim.churn_ms = ms_since(t);
    let t = Instant::now();
    sim.driver.simulate_step();
    sim.simulate_ms = ms_since(t);
}

fn gather(mut sim: ResMut<Sim>, mut points: ResMut<GatheredPoints>) {
    let t = Instant::now();
    let threads = sim.driver.threads;
    sim.driver.swarm.gather_points(&mut points.points, threads);
    sim.gather_ms = ms_since(t);
}

fn record_frame(
    time: Res<Time<Real>>,
    diagnostics: Res<DiagnosticsStore>,
    upload: Res<UploadClock>,
    mut sim: ResMut<Sim>,
    mut stats: ResMut<FrameStats>,
) {
    let frame_ms = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(|d| d.measurement())
        .map_or(0.0, |m| m.value as f32);
    if sim.scoreboard_stale || sim.driver.swarm.len() != sim.scoreboard_count {
        stats.scoreboard.clear();
        sim.scoreboard_stale = false;
        sim.scoreboard_count = sim.driver.swarm.len();
    }
    let split = FrameSplit {
        frame_ms,
        simulate_ms: sim.simulate_ms,
        gather_ms: sim.gather_ms,
        upload_ms: upload.last_ms(),
    };
    // Frames spent spawning or paused say nothing about a layout's steady cost.
    let steady = !sim.growing() && !sim.driver.paused && !sim.frozen && frame_ms > 0.0;
    let setting = Setting {
        kind: sim.driver.swarm.kind(),
        threads: sim.driver.threads,
        count: sim.driver.swarm.len(),
    };
    stats.record(time.elapsed_secs_f64(), setting, split, steady);
}

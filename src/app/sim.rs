//! SimPlugin: owns the active layout (through the core's `Driver`) as a resource, runs one frame
//! of the simulation per Bevy frame and times it, then gathers the points the renderer draws.
//! Every request from the panel, the keys or a script goes through `Sim`, which keeps the
//! population as it was when a request is refused and says why.

use std::time::{Duration, Instant};

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

/// A layout switch under way, timed from the request to the frame its last chunk landed.
#[derive(Clone, Copy, Debug)]
pub struct SwitchClock {
    pub to: LayoutKind,
    started: Instant,
    frames: u32,
    copy_ms: f32,
    worst_copy_ms: f32,
}

#[derive(Resource)]
pub struct Sim {
    pub driver: Driver,
    pub notice: Option<Notice>,
    /// This frame's timings, ms: copying into the layout being switched to, move + regen, and
    /// gathering the points.
    pub switch_ms: f32,
    pub simulate_ms: f32,
    pub gather_ms: f32,
    /// Whether this frame spawned toward the count or copied a switch chunk.
    pub busy_this_frame: bool,
    pub switch_clock: Option<SwitchClock>,
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
            switch_ms: 0.0,
            simulate_ms: 0.0,
            gather_ms: 0.0,
            busy_this_frame: false,
            switch_clock: None,
            scoreboard_stale: true,
            scoreboard_count: 0,
            frozen: false,
        }
    }

    /// Shows what happened (or why a request was refused) in the panel, and logs it, so a
    /// scripted or headless run keeps the same record.
    fn report(&mut self, result: Result<String, SimError>) -> bool {
        match result {
            Ok(text) => {
                println!("[frame {}] {text}", self.driver.frame());
                self.notice = Some(Notice {
                    text,
                    is_error: false,
                });
                true
            }
            Err(e) => {
                eprintln!("[frame {}] refused: {e}", self.driver.frame());
                self.notice = Some(Notice {
                    text: e.to_string(),
                    is_error: true,
                });
                false
            }
        }
    }

    /// Starts a switch (carried out over the next frames, the swarm moving all along); asking for
    /// the layout the swarm is in cancels a pending switch.
    pub fn set_layout(&mut self, kind: LayoutKind) -> bool {
        if kind == self.driver.requested_layout() {
            return true;
        }
        let current = self.driver.swarm.kind();
        let result = self.driver.set_layout(kind).map(|()| {
            if kind == current {
                self.switch_clock = None;
                format!("switch cancelled: staying in {}", kind.label())
            } else if self.driver.swarm.kind() == kind {
                // Nothing to carry over: an empty swarm switches on the spot.
                self.switch_clock = None;
                format!("switched to {} (no entities yet)", kind.label())
            } else {
                self.switch_clock = Some(SwitchClock {
                    to: kind,
                    started: Instant::now(),
                    frames: 0,
                    copy_ms: 0.0,
                    worst_copy_ms: 0.0,
                });
                format!(
                    "switching to {} ({} entities to carry over)",
                    kind.label(),
                    self.driver.swarm.len()
                )
            }
        });
        self.report(result)
    }

    /// Counts this frame's copying toward the pending switch, and says so once it is done.
    fn follow_switch(&mut self, copied: usize) {
        let Some(clock) = self.switch_clock.as_mut() else {
            return;
        };
        if copied > 0 {
            clock.frames += 1;
            clock.copy_ms += self.switch_ms;
            clock.worst_copy_ms = clock.worst_copy_ms.max(self.switch_ms);
        }
        if self.driver.switch_progress().is_some() {
            return;
        }
        let clock = *clock;
        self.switch_clock = None;
        if self.driver.swarm.kind() == clock.to {
            let text = format!(
                "switched to {}: {} entities carried over in {} frame(s), {:.0} ms after the request; copying took {:.0} ms, at most {:.0} ms in one frame",
                clock.to.label(),
                self.driver.swarm.len(),
                clock.frames,
                clock.started.elapsed().as_secs_f64() * 1e3,
                clock.copy_ms,
                clock.worst_copy_ms,
            );
            self.report(Ok(text));
        }
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

    /// Still copying entities into the layout being switched to.
    pub fn switching(&self) -> bool {
        self.driver.switch_progress().is_some()
    }
}

fn ms_since(t: Instant) -> f32 {
    ms(t.elapsed())
}

fn ms(d: Duration) -> f32 {
    (d.as_secs_f64() * 1e3) as f32
}

fn simulate(mut sim: ResMut<Sim>) {
    let sim = &mut *sim;
    if sim.frozen {
        return;
    }
    // The same frame the core's script replay runs, so the two end in the same state.
    let report = sim.driver.frame_step();
    sim.switch_ms = ms(report.switch);
    sim.simulate_ms = ms(report.simulate);
    sim.busy_this_frame = report.spawned > 0 || report.copied > 0;
    if let Some(e) = report.error {
        sim.report(Err(e));
    }
    sim.follow_switch(report.copied);
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
    // Frames spent spawning, switching or paused say nothing about a layout's steady cost.
    let steady = !sim.growing()
        && !sim.switching()
        && !sim.busy_this_frame
        && !sim.driver.paused
        && !sim.frozen
        && frame_ms > 0.0;
    let setting = Setting {
        kind: sim.driver.swarm.kind(),
        threads: sim.driver.threads,
        count: sim.driver.swarm.len(),
    };
    stats.record(time.elapsed_secs_f64(), setting, split, steady);
}

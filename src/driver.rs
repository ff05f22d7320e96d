//! One frame of the live simulation, as the app runs it and as a test replays it: grow toward the
//! requested count a bounded chunk at a time (so the window never freezes on a 10M resize), churn,
//! carry a pending layout switch on by a bounded chunk (the same reason), then move and regen.
//! Chunks are counted in entities, never in time, so every step is deterministic and a replay of
//! the same script without a window ends in the same checksum as the app.

use std::time::{Duration, Instant};

use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::swarm::{Swarm, SwitchProgress};
use crate::threads::Threads;
use crate::workload::Dt;

/// The app's entity slider tops out here; the driver refuses more with an error naming it.
pub const APP_MAX_ENTITIES: usize = 10_000_000;
/// The most spawns plus removals per frame the churn setting accepts.
pub const MAX_CHURN: usize = 100_000;
/// Entities spawned per frame while growing: about 100-200 ms of spawning on a slow laptop core
/// for the ECS (its spawn is the slowest), so the window stays responsive.
pub const GROW_CHUNK: usize = 250_000;
/// Entities copied into the new layout per frame during a layout switch: the same bound, since
/// copying into the ECS costs about what spawning there does.
pub const SWITCH_CHUNK: usize = 250_000;

/// What one frame did and how long each part took.
#[derive(Debug, Default)]
pub struct FrameReport {
    pub grow: Duration,
    pub churn: Duration,
    pub switch: Duration,
    pub simulate: Duration,
    /// Entities spawned toward the requested count.
    pub spawned: usize,
    /// Entities copied into the layout being switched to.
    pub copied: usize,
    /// A grow or churn this frame refused (memory): growing stops at the count reached, churn is
    /// turned off, and the rest of the frame runs as usual.
    pub error: Option<SimError>,
}

pub struct Driver {
    pub swarm: Swarm<f32>,
    target: usize,
    pub threads: Threads,
    churn: usize,
    pub paused: bool,
    pub dt: Dt,
    frame: u64,
}

impl Driver {
    pub fn new(kind: LayoutKind, seed: u64) -> Self {
        let mut swarm = Swarm::new(kind, seed);
        swarm.set_max_entities(APP_MAX_ENTITIES);
        Self {
            swarm,
            target: 0,
            threads: Threads::One,
            churn: 0,
            paused: false,
            dt: Dt::default(),
            frame: 0,
        }
    }

    /// The count the swarm is growing or shrinking to.
    pub fn target(&self) -> usize {
        self.target
    }

    pub fn churn(&self) -> usize {
        self.churn
    }

    /// Frames simulated or skipped so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Asks for `n` entities: shrinking happens now, growing over the next frames. Refused, with
    /// the population untouched, when `n` is over the maximum or over what memory allows.
    pub fn set_count(&mut self, n: usize) -> Result<(), SimError> {
        self.swarm.check_fits(self.swarm.kind(), n)?;
        let len = self.swarm.len();
        if n < len {
            self.swarm.resize(n)?;
        } else {
            // Room for the whole target now, so the frames that grow toward it never reallocate.
            self.swarm.reserve(n - len)?;
        }
        self.target = n;
        Ok(())
    }

    pub fn set_churn(&mut self, per_frame: usize) -> Result<(), SimError> {
        if per_frame > MAX_CHURN {
            return Err(SimError::BadChurn {
                value: per_frame,
                max: MAX_CHURN,
            });
        }
        self.churn = per_frame;
        Ok(())
    }

    /// Starts moving every entity into `kind`, carried out over the next frames
    /// ([`SWITCH_CHUNK`] entities each) while the swarm keeps moving in its current layout.
    pub fn set_layout(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        self.swarm.begin_switch(kind)
    }

    /// The layout the swarm is in, or is being switched to.
    pub fn requested_layout(&self) -> LayoutKind {
        self.swarm
            .switch_progress()
            .map_or(self.swarm.kind(), |p| p.to)
    }

    pub fn switch_progress(&self) -> Option<SwitchProgress> {
        self.swarm.switch_progress()
    }

    /// Copies the next chunk of a pending switch; returns how many entities were copied.
    fn switch_step(&mut self) -> usize {
        self.swarm.switch_step(SWITCH_CHUNK)
    }

    /// Spawns the next chunk toward the target; returns how many were spawned.
    fn grow_step(&mut self) -> Result<usize, SimError> {
        let missing = self.target.saturating_sub(self.swarm.len());
        let chunk = missing.min(GROW_CHUNK);
        if chunk > 0 {
            self.swarm.grow(chunk)?;
        }
        Ok(chunk)
    }

    /// Churn for this frame (nothing while paused).
    fn churn_step(&mut self) -> Result<(), SimError> {
        if !self.paused && self.churn > 0 {
            self.swarm.churn(self.churn)?;
        }
        Ok(())
    }

    /// Move and regen for this frame (nothing while paused); counts the frame either way.
    fn simulate_step(&mut self) {
        if !self.paused {
            self.swarm.step(self.dt, self.threads);
        }
        self.frame += 1;
    }

    /// A whole frame: grow, churn, switch, simulate, each timed. A refused grow (memory ran out
    /// part way) keeps what was spawned and stops growing there; a refused churn turns churn off.
    pub fn frame_step(&mut self) -> FrameReport {
        let mut report = FrameReport::default();
        let t = Instant::now();
        match self.grow_step() {
            Ok(spawned) => report.spawned = spawned,
            Err(e) => {
                self.target = self.swarm.len();
                report.error = Some(e);
            }
        }
        report.grow = t.elapsed();
        let t = Instant::now();
        if let Err(e) = self.churn_step() {
            self.churn = 0;
            report.error = Some(e);
        }
        report.churn = t.elapsed();
        let t = Instant::now();
        report.copied = self.switch_step();
        report.switch = t.elapsed();
        let t = Instant::now();
        self.simulate_step();
        report.simulate = t.elapsed();
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_is_spread_over_frames_and_shrinking_is_immediate() {
        let mut d = Driver::new(LayoutKind::Soa, 1);
        d.set_count(GROW_CHUNK * 2 + 10).unwrap();
        d.frame_step();
        assert_eq!(d.swarm.len(), GROW_CHUNK);
        d.frame_step();
        d.frame_step();
        assert_eq!(d.swarm.len(), GROW_CHUNK * 2 + 10);
        d.set_count(5).unwrap();
        assert_eq!(d.swarm.len(), 5);
    }

    #[test]
    fn a_switch_is_spread_over_frames_while_the_swarm_keeps_moving() {
        let n = SWITCH_CHUNK * 2 + 10;
        let mut switching = Driver::new(LayoutKind::Soa, 3);
        let mut staying = Driver::new(LayoutKind::Soa, 3);
        for d in [&mut switching, &mut staying] {
            d.set_count(n).unwrap();
            d.set_churn(1000).unwrap();
            while d.swarm.len() < n {
                d.frame_step();
            }
        }
        switching.set_layout(LayoutKind::Aos).unwrap();
        assert_eq!(switching.requested_layout(), LayoutKind::Aos);
        let mut copied = Vec::new();
        for _ in 0..4 {
            copied.push(switching.frame_step().copied);
            staying.frame_step();
            assert_eq!(switching.swarm.checksum(), staying.swarm.checksum());
        }
        // Churn keeps the count (1000 spawned, 1000 removed, some of them already copied).
        assert_eq!(copied, [SWITCH_CHUNK, SWITCH_CHUNK, 10, 0]);
        assert_eq!(switching.swarm.kind(), LayoutKind::Aos);
        assert_eq!(switching.switch_progress(), None);
        assert_eq!(switching.swarm.export(), staying.swarm.export());
    }

    #[test]
    fn bad_settings_are_refused_and_nothing_changes() {
        let mut d = Driver::new(LayoutKind::Aos, 1);
        d.set_count(1000).unwrap();
        d.frame_step();
        let before = d.swarm.checksum();
        let err = d.set_count(APP_MAX_ENTITIES + 1).unwrap_err().to_string();
        assert!(err.contains("10000000"), "{err}");
        let err = d.set_churn(MAX_CHURN + 1).unwrap_err().to_string();
        assert!(err.contains("0 to 100000"), "{err}");
        assert_eq!(
            (d.target(), d.churn(), d.swarm.checksum()),
            (1000, 0, before)
        );
    }

    #[test]
    fn paused_frames_change_nothing() {
        let mut d = Driver::new(LayoutKind::EcsTable, 1);
        d.set_count(500).unwrap();
        d.set_churn(10).unwrap();
        d.frame_step();
        d.paused = true;
        let before = d.swarm.checksum();
        d.frame_step();
        assert_eq!(d.swarm.checksum(), before);
    }
}

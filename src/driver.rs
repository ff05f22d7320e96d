//! One frame of the live simulation, as the app runs it and as a test replays it: grow toward the
//! requested count a bounded chunk at a time (so the window never freezes on a 10M resize), churn,
//! then move and regen. Every step is deterministic, so a replay of the same script without a
//! window ends in the same checksum as the app.

use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::swarm::Swarm;
use crate::threads::Threads;
use crate::workload::Dt;

/// The app's entity slider tops out here; the driver refuses more with an error naming it.
pub const APP_MAX_ENTITIES: usize = 10_000_000;
/// The most spawns plus removals per frame the churn setting accepts.
pub const MAX_CHURN: usize = 100_000;
/// Entities spawned per frame while growing: about 100-200 ms of spawning on a slow laptop core
/// for the ECS (its spawn is the slowest), so the window stays responsive.
pub const GROW_CHUNK: usize = 250_000;

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
        if n < self.swarm.len() {
            self.swarm.resize(n)?;
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

    pub fn set_layout(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        self.swarm.switch_to(kind)
    }

    /// Spawns the next chunk toward the target; returns how many were spawned.
    pub fn grow_step(&mut self) -> Result<usize, SimError> {
        let missing = self.target.saturating_sub(self.swarm.len());
        let chunk = missing.min(GROW_CHUNK);
        if chunk > 0 {
            self.swarm.grow(chunk)?;
        }
        Ok(chunk)
    }

    /// Churn for this frame (nothing while paused).
    pub fn churn_step(&mut self) -> Result<(), SimError> {
        if !self.paused && self.churn > 0 {
            self.swarm.churn(self.churn)?;
        }
        Ok(())
    }

    /// Move and regen for this frame (nothing while paused); counts the frame either way.
    pub fn simulate_step(&mut self) {
        if !self.paused {
            self.swarm.step(self.dt, self.threads);
        }
        self.frame += 1;
    }

    /// A whole frame: grow, churn, simulate.
    pub fn frame_step(&mut self) -> Result<(), SimError> {
        self.grow_step()?;
        self.churn_step()?;
        self.simulate_step();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_is_spread_over_frames_and_shrinking_is_immediate() {
        let mut d = Driver::new(LayoutKind::Soa, 1);
        d.set_count(GROW_CHUNK * 2 + 10).unwrap();
        d.frame_step().unwrap();
        assert_eq!(d.swarm.len(), GROW_CHUNK);
        d.frame_step().unwrap();
        d.frame_step().unwrap();
        assert_eq!(d.swarm.len(), GROW_CHUNK * 2 + 10);
        d.set_count(5).unwrap();
        assert_eq!(d.swarm.len(), 5);
    }

    #[test]
    fn bad_settings_are_refused_and_nothing_changes() {
        let mut d = Driver::new(LayoutKind::Aos, 1);
        d.set_count(1000).unwrap();
        d.frame_step().unwrap();
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
        d.frame_step().unwrap();
        d.paused = true;
        let before = d.swarm.checksum();
        d.frame_step().unwrap();
        assert_eq!(d.swarm.checksum(), before);
    }
}

//! How much of each frame growing toward the count and a transition's copying may take, and how
//! fast each has gone: the driver's pacing, apart from its settings and its frame step.

use std::time::Duration;

use crate::layout::LayoutKind;
use crate::runtime::pace::{FrameClock, Pace, Pacer};
use crate::runtime::progress::Eta;

/// The driver's pacing: the frames as this machine runs them, and one lane for each kind of
/// paced work.
#[derive(Debug, Default)]
pub(super) struct Pacing {
    /// The frames as this machine runs them: what [`Pace::FrameShare`] takes its share of.
    pub(super) clock: FrameClock,
    /// Spawning toward the count, into the layout in use.
    pub(super) grow: Lane<LayoutKind>,
    /// A transition's copying, from one layout into another.
    pub(super) copy: Lane<(LayoutKind, LayoutKind)>,
    /// Filling the start-up population.
    pub(super) load: Pacer,
    /// When growing toward the count and the transition under way began (the progress' time
    /// left).
    pub(super) grow_eta: Option<Eta>,
    pub(super) copy_eta: Option<(LayoutKind, Eta)>,
}

/// One kind of paced work: how it is paced, the rate measured so far, and what that rate was
/// measured on.
#[derive(Debug)]
pub(super) struct Lane<K> {
    pub(super) pace: Pace,
    pub(super) pacer: Pacer,
    /// A rate measured on other work does not carry over: the next run starts small again.
    measured_on: Option<K>,
}

impl<K> Default for Lane<K> {
    fn default() -> Self {
        Self {
            pace: Pace::default(),
            pacer: Pacer::default(),
            measured_on: None,
        }
    }
}

impl<K: PartialEq> Lane<K> {
    /// The pacer for work on `on`: its rate forgotten if it was measured on other work.
    pub(super) fn pacer_for(&mut self, on: K) -> &mut Pacer {
        if self.measured_on.as_ref() != Some(&on) {
            self.pacer.reset();
            self.measured_on = Some(on);
        }
        &mut self.pacer
    }
}

impl Pacing {
    /// The time a pace allows a frame: growing and copying share one budget, counted from the
    /// frame's start (the copy gets what growing left, and at least one batch).
    pub(super) fn budget(&self, pace: Pace) -> Duration {
        match pace {
            Pace::FrameShare => self.clock.share(),
            Pace::Budget(budget) => budget,
            Pace::Entities(_) => Duration::ZERO,
        }
    }

    /// How many entities the next copy step is expected to copy (what a gpu layout fetches
    /// ahead).
    pub(super) fn expected_copy_batch(&self) -> usize {
        match self.copy.pace {
            Pace::Entities(n) => n,
            pace => self.copy.pacer.estimate(self.budget(pace)),
        }
    }
}

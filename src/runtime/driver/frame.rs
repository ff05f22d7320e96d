//! THE frame: grow toward the requested count by a frame's share, churn, carry a pending layout
//! switch on by a frame's share, then the systems (seek when it is on, move, regen), each timed;
//! and, before the first frame, loading the start-up count. Everything that steps frames (the
//! app, `script::replay`, `verify`, `soak`, the bench's switch and grow experiments) calls
//! [`Driver::frame_step`], so "as the app does it" is literally true.

use std::time::{Duration, Instant};

use super::Driver;
use crate::error::SimError;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::catalog::DeviceTime;
use crate::runtime::core_wait;
use crate::runtime::pace::Pace;
use crate::runtime::swarm::{Order, group_stretch};
use crate::runtime::until_over::{Step, UntilOverResult};

/// How often a re-sort threshold is checked: every 30 frames (half a second at 60 Hz, as the
/// panel's own reading), because a look samples tens of thousands of seekers.
const RESORT_CHECK_FRAMES: u32 = 30;
/// Seekers a look samples: the share is known to within a fraction of a percent.
const RESORT_SAMPLES: usize = 1 << 16;

/// What one frame did and how long each part took.
#[derive(Debug, Default)]
pub struct FrameReport {
    pub grow: Duration,
    pub churn: Duration,
    pub switch: Duration,
    /// The systems together (seek + avoid + move + regen), and each alone.
    pub simulate: Duration,
    pub seek: Duration,
    pub avoid: Duration,
    pub moving: Duration,
    pub regen: Duration,
    /// The simulate time measured on the device, for the gpu layout (whose `simulate` above is
    /// only the time to dispatch).
    pub device: Option<DeviceTime>,
    /// Entities spawned toward the requested count.
    pub spawned: usize,
    /// Entities copied into the layout being switched to.
    pub copied: usize,
    /// A grow or churn this frame refused (memory): growing stops at the count reached, churn is
    /// turned off, and the rest of the frame runs as usual.
    pub error: Option<SimError>,
    /// A sort by group started again this frame ([`Driver::resort`]): the share of targets
    /// outside their group's stretch that crossed the threshold.
    pub resorted: Option<f64>,
    /// Of `grow` and `switch`, the time this thread waited for a core, where the driver follows
    /// it ([`Driver::follow_core_waits`]) and the system says ([`crate::runtime::core_wait`]).
    pub grow_waited: Option<Duration>,
    pub switch_waited: Option<Duration>,
}

impl<S: AllLayouts> Driver<S> {
    /// The share of a frame growing and switching may take now ([`Pace::FrameShare`]).
    pub fn frame_share(&self) -> Duration {
        self.pacing.clock.share()
    }

    /// Fills the population asked for before the first timed frame, with [`Self::load_step`]
    /// instead of frames: `--count 10000000` opens at 10M. No frame runs while loading, so the
    /// entities are the same whatever the slices (each one's state is a pure function of the
    /// seed and its id), and a replay that loads at once ends where the app does.
    pub fn begin_loading(&mut self) {
        self.loading = self.growing();
    }

    /// Still filling the start-up population.
    pub fn loading(&self) -> bool {
        self.loading && self.growing()
    }

    /// Spawns toward the count for about `slice`, simulating nothing; returns how many were
    /// spawned. Loading ends when the count is reached, or when memory refuses more (the count
    /// then stops where it got to, as growing does, and the error says why).
    pub fn load_step(&mut self, slice: Duration) -> Result<usize, SimError> {
        if !self.loading() {
            self.loading = false;
            return Ok(0);
        }
        let (swarm, target) = (&mut self.swarm, self.target);
        // Into a layout prepared for the count first (Bevy: its entity index grown on a thread),
        // which this slice waits for: loading shows its progress, and no frame is timed.
        if swarm.rehome_to_grow(target) {
            swarm.copy_step(usize::MAX);
        }
        let deadline = Instant::now() + slice;
        let spawned = self
            .pacing
            .load
            .run(Pace::Budget(slice), deadline, |batch| {
                let n = batch.min(target.saturating_sub(swarm.len()));
                if n > 0 {
                    swarm.grow(n)?;
                }
                Ok(n)
            })
            .inspect_err(|_| self.target = self.swarm.len());
        if !self.growing() {
            self.loading = false;
            // `--order group` opens sorted: the reorder is part of the fill, before any frame.
            if let Some(order) = self.ordering.queued.take() {
                self.swarm.reorder(order)?;
            }
        }
        spawned
    }

    /// Loads everything at once (`replay`, the tests).
    pub fn load_all(&mut self) -> Result<(), SimError> {
        self.begin_loading();
        while self.loading() {
            self.load_step(Duration::from_secs(3600))?;
        }
        Ok(())
    }

    /// Copies this frame's share of a transition under way; returns how many entities were
    /// copied.
    fn copy_step(&mut self, frame_start: Instant) -> usize {
        let Some(progress) = self.swarm.transition() else {
            return 0;
        };
        let pace = self.pacing.copy.pace;
        let deadline = frame_start + self.pacing.budget(pace);
        let pacer = self.pacing.copy.pacer_for((self.swarm.kind(), progress.to));
        let swarm = &mut self.swarm;
        // The copy is the storage that grows: it holds the entities copied so far.
        let copied = pacer.run_growing(pace, deadline, progress.copied, |batch| {
            Ok::<_, std::convert::Infallible>(swarm.copy_step(batch))
        });
        copied.unwrap_or_else(|never| match never {})
    }

    /// Spawns this frame's share toward the target; returns how many were spawned.
    fn grow_step(&mut self, frame_start: Instant) -> Result<usize, SimError> {
        if self.swarm.len() >= self.target {
            return Ok(0);
        }
        let pace = self.pacing.grow.pace;
        // Growing by time (the app): a big growth waits for a layout prepared for the count, and
        // the frames meanwhile copy into it. A growth by entities a frame must be the same frame
        // for frame in every run (`replay`), so it grows where it is.
        if !matches!(pace, Pace::Entities(_)) && self.swarm.rehome_to_grow(self.target) {
            return Ok(0);
        }
        let deadline = frame_start + self.pacing.budget(pace);
        let pacer = self.pacing.grow.pacer_for(self.swarm.kind());
        let (swarm, target) = (&mut self.swarm, self.target);
        let len = swarm.len();
        pacer.run_growing(pace, deadline, len, |batch| {
            let n = batch.min(target.saturating_sub(swarm.len()));
            if n > 0 {
                swarm.grow(n)?;
            }
            Ok(n)
        })
    }

    /// Churn for this frame (nothing while paused).
    fn churn_step(&mut self) -> Result<(), SimError> {
        if !self.settings.paused && self.settings.churn > 0 {
            self.swarm.churn(self.settings.churn)?;
        }
        Ok(())
    }

    /// The systems for this frame (nothing while paused), each timed; counts the frame either
    /// way. Then the next switch chunk's read starts, to overlap the rest of the frame.
    fn simulate_step(&mut self, report: &mut FrameReport) {
        if !self.settings.paused {
            let (dt, threads) = (self.settings.dt, self.settings.threads);
            if self.settings.systems.seeks() {
                let t = Instant::now();
                self.swarm.step_seek(dt, threads);
                report.seek = t.elapsed();
            }
            if self.settings.systems.avoids() {
                let t = Instant::now();
                self.swarm.step_avoid(dt, threads);
                report.avoid = t.elapsed();
                self.note_avoid_cost(report.avoid);
            }
            let t = Instant::now();
            self.swarm.step_move(dt, threads);
            report.moving = t.elapsed();
            let t = Instant::now();
            self.swarm.step_regen(dt, threads);
            report.regen = t.elapsed();
        }
        self.swarm.prefetch_copy(self.pacing.expected_copy_batch());
        self.frame += 1;
    }

    /// THE frame: grow, churn, switch, simulate, each timed. Everything that steps frames (the
    /// app, `script::replay`, `verify`, `soak`, the bench's switch and grow experiments) calls
    /// this. A refused grow (memory ran out part way) keeps what was spawned and stops growing
    /// there; a refused churn turns churn off.
    pub fn frame_step(&mut self) -> FrameReport {
        let mut report = FrameReport::default();
        let frame_start = Instant::now();
        self.pacing.clock.frame_started(frame_start);
        let t = frame_start;
        let waited = self.settings.core_waits && self.growing();
        let waited = waited.then(core_wait::waited).flatten();
        match self.grow_step(frame_start) {
            Ok(spawned) => report.spawned = spawned,
            Err(e) => {
                self.target = self.swarm.len();
                report.error = Some(e);
            }
        }
        report.grow = t.elapsed();
        report.grow_waited = core_wait::since(waited);
        let t = Instant::now();
        if let Err(e) = self.churn_step() {
            self.settings.churn = 0;
            report.error = Some(e);
        }
        report.churn = t.elapsed();
        let t = Instant::now();
        let waited = self.settings.core_waits.then(core_wait::waited).flatten();
        if self.swarm.transition().is_none()
            && let Some(order) = self.ordering.queued.take()
            && let Err(e) = self.start_order(order)
        {
            report.error = Some(e);
        }
        if let Some(far) = self.resort_due() {
            match self.start_order(Order::Group) {
                Ok(_) => report.resorted = Some(far),
                Err(e) => report.error = Some(e),
            }
        }
        if self.cell_resort_due()
            && let Err(e) = self.start_order(Order::Cell)
        {
            report.error = Some(e);
        }
        report.copied = self.copy_step(frame_start);
        report.switch = t.elapsed();
        report.switch_waited = core_wait::since(waited);
        self.pacing.clock.copied(report.grow + report.switch);
        let t = Instant::now();
        self.simulate_step(&mut report);
        report.simulate = t.elapsed();
        report.device = self.swarm.device_time();
        self.until_over_step(&report);
        report
    }

    /// How far the targets of a population sorted by group have strayed, looked at every
    /// [`RESORT_CHECK_FRAMES`] frames while a re-sort threshold is set and nothing else is under
    /// way; the share, when it is past the threshold.
    fn resort_due(&mut self) -> Option<f64> {
        let threshold = self.ordering.resort?;
        let settled = !self.loading()
            && self.swarm.transition().is_none()
            && self.ordering.queued.is_none()
            && self.swarm.order() == Order::Group;
        if !settled {
            return None;
        }
        if self.ordering.countdown > 0 {
            self.ordering.countdown -= 1;
            return None;
        }
        self.ordering.countdown = RESORT_CHECK_FRAMES;
        let stretch = group_stretch(self.swarm.len());
        let far = self
            .swarm
            .target_spread_sampled(stretch, RESORT_SAMPLES)
            .far;
        (far > threshold.share()).then_some(far)
    }

    /// Whether a population sorted by cell is due to be sorted again: every
    /// [`crate::runtime::values::ResortEvery`] frames of it sorted by cell, with nothing else
    /// under way.
    fn cell_resort_due(&mut self) -> bool {
        let Some(every) = self.ordering.cell_every else {
            return false;
        };
        let settled = !self.loading()
            && self.swarm.transition().is_none()
            && self.ordering.queued.is_none()
            && self.swarm.order() == Order::Cell;
        if !settled {
            return false;
        }
        self.ordering.since_cell_sort += 1;
        if self.ordering.since_cell_sort < every.frames() {
            return false;
        }
        self.ordering.since_cell_sort = 0;
        true
    }

    /// Whether a `count until-over` search is under way, or its population still growing back
    /// to the count it found (a script holds its next lines until both are done).
    pub fn searching(&self) -> bool {
        self.searches.busy(self.growing())
    }

    /// The count a search under way is measuring, and its line.
    pub fn search_probe(&self) -> Option<(usize, f64)> {
        self.searches.probe()
    }

    /// How the last search ended, once (the app prints it).
    pub fn take_until_over_result(&mut self) -> Option<UntilOverResult> {
        self.searches.take_result()
    }

    /// Feeds a steady frame's simulate time to a search under way, and carries out what it asks.
    fn until_over_step(&mut self, report: &FrameReport) {
        let steady = !self.growing()
            && self.swarm.transition().is_none()
            && report.spawned == 0
            && report.copied == 0
            && report.error.is_none();
        let simulate = match report.device {
            Some(DeviceTime::Measured(d)) => Some(d),
            Some(_) => None,
            None => Some(report.simulate),
        };
        let (true, Some(simulate)) = (steady && self.searches.running(), simulate) else {
            return;
        };
        let simulate_ms = simulate.as_secs_f64() * 1e3;
        let kind = self.swarm.kind();
        match self.searches.observe(simulate_ms) {
            None | Some(Step::Measure) => {}
            Some(Step::Probe(n)) => {
                // Memory (or a device limit) may say no before the line does.
                if self.set_count(n).is_err() {
                    self.searches
                        .end(kind, self.swarm.len(), simulate_ms, false);
                }
            }
            Some(Step::Crossed { count, simulate_ms }) => {
                // The last probe may have been under the line: go back to the first over it.
                if self.set_count(count).is_err() {
                    self.target = self.swarm.len();
                }
                self.searches.end(kind, count, simulate_ms, true);
            }
            Some(Step::Ceiling { count, simulate_ms }) => {
                self.searches.end(kind, count, simulate_ms, false);
            }
        }
    }
}

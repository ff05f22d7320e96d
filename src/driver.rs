//! One frame of the live simulation, as the app runs it and as a test replays it: grow toward the
//! requested count by a frame's share (so the window never freezes on a 10M resize), churn, carry
//! a pending layout switch on by a frame's share (the same reason), then the systems: seek (when
//! it is on), move, regen.
//!
//! A frame's share is a time budget in the app ([`crate::pace`]), so a slow layout and a fast one
//! both keep the frame near its line. Where a switch's chunks fall never changes the result;
//! where growth's chunks fall does, so a run that must be reproduced exactly (`replay`, the tests,
//! the app with `--grow-chunk`) grows by a count of entities a frame: a replay of the same script
//! without a window then ends in the same checksum as the app.

use std::time::{Duration, Instant};

use crate::action::{Action, Outcome};
use crate::catalog::AllLayouts;
use crate::error::SimError;
use crate::layout::{DeviceTime, LayoutKind};
use crate::memory::MemoryUse;
use crate::pace::{FrameClock, Pace, Pacer};
use crate::simd::{SimdChoice, SimdTier};
use crate::swarm::{MAX_CHURN, MAX_ENTITIES, Snapshot, Swarm, SwitchProgress};
use crate::threads::Threads;
use crate::until_over::{MAX_LINE_MS, MIN_LINE_MS, Step, UntilOver};
use crate::workload::{Dt, SpawnPattern, Systems};

/// The app's entity slider tops out here for the CPU layouts; the driver refuses more with an
/// error naming it.
pub const APP_MAX_ENTITIES: usize = 10_000_000;

/// The most entities the app offers in `kind`: [`APP_MAX_ENTITIES`] in CPU memory, and
/// [`MAX_ENTITIES`] on the GPU, where the adapter's limits may lower it further (the swarm
/// checks those and names them).
pub fn app_max_entities(kind: LayoutKind) -> usize {
    if kind.is_gpu() {
        MAX_ENTITIES
    } else {
        APP_MAX_ENTITIES
    }
}
/// Entities spawned per frame while growing, where growth must be reproducible (`replay`, the
/// tests, `--grow-chunk`): a count, not a time, so that every frame spawns the same entities on
/// every machine. The live app grows by time instead ([`Pace::FrameShare`]).
pub const GROW_CHUNK: usize = 250_000;

/// How long one call of [`Driver::load_step`] fills before it lets the window draw its progress:
/// a window that answers four times a second still reads as alive, and the fill keeps most of
/// the time even where a frame of millions of points takes 150 ms to draw in software (with
/// 100 ms slices, 10M into `ecs-table` loaded in 20.6 s in the window, most of it drawing).
pub const LOAD_SLICE: Duration = Duration::from_millis(250);

/// What the driver is busy with between steady frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Filling the population asked for at start-up, before the first timed frame.
    Loading,
    /// Spawning toward a higher count, a share of each frame.
    Growing,
    /// Copying every entity into this layout, a share of each frame.
    Switching(LayoutKind),
}

/// How far the work under way has come, and about how long it has left at the pace it has kept
/// since it began (wall-clock, frames and all).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub work: Work,
    pub done: usize,
    pub total: usize,
    /// `None` until enough is done to tell.
    pub left: Option<Duration>,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }

    /// `switching to flecs: 412,000 of 1,000,000 (41%), about 1.2 s left`: the terminal's line,
    /// and the panel bar's hover text.
    pub fn line(&self) -> String {
        let what = self.what();
        let left = self.left.map_or(String::new(), |d| {
            format!(", about {:.1} s left", d.as_secs_f64())
        });
        format!(
            "{what}: {} of {} ({:.0}%){left}",
            group_digits(self.done),
            group_digits(self.total),
            100.0 * self.fraction()
        )
    }
}

impl Progress {
    fn what(&self) -> String {
        match self.work {
            Work::Loading => "loading".to_string(),
            Work::Growing => "growing".to_string(),
            Work::Switching(to) => format!("switching to {}", to.name()),
        }
    }

    /// `switching to flecs · 41% · 1.2 s left`: what fits on one line of the HUD and on the
    /// panel's progress bar, whose length shows how far it has come.
    pub fn short_line(&self) -> String {
        let left = self.left.map_or(String::new(), |d| {
            format!(" · {:.1} s left", d.as_secs_f64())
        });
        format!("{} · {:.0}%{left}", self.what(), 100.0 * self.fraction())
    }
}

fn group_digits(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// When a piece of work began and how much of it was done then: its pace so far, for the time
/// left.
#[derive(Clone, Copy, Debug)]
struct Eta {
    started: Instant,
    done_at_start: usize,
}

impl Eta {
    fn new(done: usize) -> Self {
        Self {
            started: Instant::now(),
            done_at_start: done,
        }
    }

    fn left(&self, done: usize, total: usize) -> Option<Duration> {
        let progressed = done.checked_sub(self.done_at_start).filter(|&d| d > 0)?;
        let elapsed = self.started.elapsed();
        // Too early to tell from one batch: the first frames of a switch also build the layout.
        if elapsed < Duration::from_millis(50) {
            return None;
        }
        let rest = total.saturating_sub(done) as f64;
        Some(elapsed.mul_f64(rest / progressed as f64))
    }
}

/// What one frame did and how long each part took.
#[derive(Debug, Default)]
pub struct FrameReport {
    pub grow: Duration,
    pub churn: Duration,
    pub switch: Duration,
    /// The systems together (seek + move + regen), and each alone.
    pub simulate: Duration,
    pub seek: Duration,
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
}

/// The live simulation: a swarm, the count it is growing or shrinking to, and the settings a
/// person changes (through [`Driver::apply`], the one way in). `S` is `f32` for the app; `verify`
/// runs `f64` too.
pub struct Driver<S: AllLayouts = f32> {
    swarm: Swarm<S>,
    target: usize,
    threads: Threads,
    simd: SimdChoice,
    churn: usize,
    systems: Systems,
    paused: bool,
    dt: Dt,
    frame: u64,
    grow_pace: Pace,
    switch_pace: Pace,
    grow_pacer: Pacer,
    switch_pacer: Pacer,
    /// The frames as this machine runs them: what [`Pace::FrameShare`] takes its share of.
    clock: FrameClock,
    /// Filling the start-up population ([`Self::begin_loading`]).
    loading: bool,
    load_pacer: Pacer,
    /// When growing toward the count and the pending switch began (the progress' time left).
    grow_eta: Option<Eta>,
    switch_eta: Option<(LayoutKind, Eta)>,
    /// What the pacers' rates were measured on: growing into this layout, and switching from
    /// and to these (a new pair starts with a small batch again).
    grow_paced: Option<LayoutKind>,
    switch_paced: Option<(LayoutKind, LayoutKind)>,
    /// A ceiling for every layout set with [`Self::with_max_entities`], in place of each
    /// layout's app maximum.
    ceiling: Option<usize>,
    /// A `count until-over` search under way, and the last one's outcome until it is taken.
    until_over: Option<UntilOver>,
    until_over_done: Option<UntilOverResult>,
    /// A search ended on a count the population is still growing back to.
    until_over_settling: bool,
}

/// How a `count until-over` search ended.
#[derive(Clone, Debug, PartialEq)]
pub struct UntilOverResult {
    pub line_ms: f64,
    pub layout: LayoutKind,
    /// The first count found over the line, or where the search stopped under it.
    pub count: usize,
    /// The simulate p50 measured at `count`.
    pub simulate_ms: f64,
    /// Whether `count` is over the line (false: the ceiling, or memory, came first).
    pub crossed: bool,
}

impl<S: AllLayouts> Driver<S> {
    /// A driver as the app runs it: empty, capped at [`app_max_entities`] of the layout, growing
    /// and switching within a share of each frame ([`Pace::FrameShare`]). Fails only for a layout
    /// this machine cannot run (the gpu layout without a GPU adapter).
    pub fn new(kind: LayoutKind, seed: u64) -> Result<Self, SimError> {
        let swarm = Swarm::new(kind, seed)?;
        Ok(Self {
            swarm,
            target: 0,
            threads: Threads::One,
            simd: SimdChoice::Baseline,
            churn: 0,
            systems: Systems::MoveRegen,
            paused: false,
            dt: Dt::default(),
            frame: 0,
            grow_pace: Pace::default(),
            switch_pace: Pace::default(),
            grow_pacer: Pacer::default(),
            switch_pacer: Pacer::default(),
            clock: FrameClock::default(),
            loading: false,
            load_pacer: Pacer::default(),
            grow_eta: None,
            switch_eta: None,
            grow_paced: None,
            switch_paced: None,
            ceiling: None,
            until_over: None,
            until_over_done: None,
            until_over_settling: false,
        })
    }

    /// Entities spawned and copied per frame while growing and switching (`usize::MAX`: all at
    /// once, on the next frame), instead of a time budget.
    pub fn with_chunks(mut self, grow: usize, switch: usize) -> Self {
        self.grow_pace = Pace::Entities(grow.max(1));
        self.switch_pace = Pace::Entities(switch.max(1));
        self
    }

    /// How growing toward the count is paced ([`Pace::Entities`] for a reproducible run).
    pub fn with_grow_pace(mut self, pace: Pace) -> Self {
        self.grow_pace = pace;
        self
    }

    /// How a layout switch is paced.
    pub fn with_switch_pace(mut self, pace: Pace) -> Self {
        self.switch_pace = pace;
        self
    }

    /// How growing is paced.
    pub fn grow_pace(&self) -> Pace {
        self.grow_pace
    }

    /// Runs the kernels on `tier` (any tier the CPU has, not only the baseline or the best that
    /// [`Action::Simd`] offers): `verify` and the tests cover every tier this way.
    pub fn with_simd_tier(mut self, tier: SimdTier) -> Self {
        self.swarm.set_simd(tier);
        self
    }

    pub fn with_dt(mut self, dt: Dt) -> Self {
        self.dt = dt;
        self
    }

    /// One ceiling for every layout (verify, soak and the bench go past the app's 10M).
    pub fn with_max_entities(mut self, max: usize) -> Self {
        self.swarm.set_max_entities(max);
        self.ceiling = Some(max);
        self
    }

    pub fn with_spawn_pattern(mut self, pattern: SpawnPattern) -> Self {
        self.swarm.set_spawn_pattern(pattern);
        self
    }

    /// Entities alive now.
    pub fn len(&self) -> usize {
        self.swarm.len()
    }

    pub fn is_empty(&self) -> bool {
        self.swarm.is_empty()
    }

    /// The layout the entities are in (the one stepped, gathered and reported).
    pub fn kind(&self) -> LayoutKind {
        self.swarm.kind()
    }

    /// The layout the swarm is in, or is being switched to.
    pub fn requested_layout(&self) -> LayoutKind {
        self.swarm
            .switch_progress()
            .map_or(self.swarm.kind(), |p| p.to)
    }

    /// The count the swarm is growing or shrinking to.
    pub fn target(&self) -> usize {
        self.target
    }

    /// Still spawning toward the requested count.
    pub fn growing(&self) -> bool {
        self.swarm.len() < self.target
    }

    pub fn churn(&self) -> usize {
        self.churn
    }

    /// The systems each frame runs ([`Action::Seek`]).
    pub fn systems(&self) -> Systems {
        self.systems
    }

    pub fn threads(&self) -> Threads {
        self.threads
    }

    /// The SIMD choice in force ([`Action::Simd`]).
    pub fn simd(&self) -> SimdChoice {
        self.simd
    }

    /// The tier the current layout's kernels run on (the baseline for layouts without
    /// multiversioned kernels, whatever the choice).
    pub fn simd_in_use(&self) -> SimdTier {
        self.swarm.simd_in_use()
    }

    pub fn paused(&self) -> bool {
        self.paused
    }

    /// The most entities `kind` takes in this driver: the layout's app maximum, or the ceiling
    /// set with [`Self::with_max_entities`]; a GPU's limits may lower it further (the swarm
    /// checks those when asked).
    pub fn max_entities(&self, kind: LayoutKind) -> usize {
        self.ceiling.unwrap_or_else(|| app_max_entities(kind))
    }

    /// The last simulate time measured on the device (gpu layout only).
    pub fn device_time(&self) -> Option<DeviceTime> {
        self.swarm.device_time()
    }

    /// The buffer the renderer draws as is, when the swarm lives on the GPU.
    #[cfg(feature = "gpu")]
    pub fn gpu_points(&self) -> Option<crate::gpu::GpuPoints> {
        self.swarm.gpu_points()
    }

    /// Frames simulated or skipped so far.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Where the entities at `range` live in the current layout ([`Swarm::regions`]).
    pub fn regions(&self, range: std::ops::Range<usize>) -> Vec<crate::layout::regions::Region> {
        self.swarm.regions(range)
    }

    /// Where the targets of the entities at `range` keep x and y ([`Swarm::target_regions`]).
    pub fn target_regions(
        &self,
        range: std::ops::Range<usize>,
    ) -> Vec<crate::layout::regions::Region> {
        self.swarm.target_regions(range)
    }

    /// Checks every entity's handle against the target it should name ([`Swarm::check_targets`]).
    pub fn check_targets(&self) -> Result<(), String> {
        self.swarm.check_targets()
    }

    pub fn memory(&self) -> MemoryUse {
        self.swarm.memory()
    }

    pub fn switch_progress(&self) -> Option<SwitchProgress> {
        self.swarm.switch_progress()
    }

    /// The work under way, how far it has come and about how long it has left: the start-up fill
    /// alone while it lasts, then a pending switch and growing toward the count, each when there
    /// is one (both at once when the slider moves during a switch).
    pub fn progress(&self) -> Vec<Progress> {
        let grow = self.growing().then(|| Progress {
            work: if self.loading() {
                Work::Loading
            } else {
                Work::Growing
            },
            done: self.len(),
            total: self.target,
            left: self
                .grow_eta
                .and_then(|eta| eta.left(self.len(), self.target)),
        });
        if self.loading() {
            return grow.into_iter().collect();
        }
        let switch = self.swarm.switch_progress().map(|p| Progress {
            work: Work::Switching(p.to),
            done: p.copied,
            total: p.len,
            left: self
                .switch_eta
                .filter(|(to, _)| *to == p.to)
                .and_then(|(_, eta)| eta.left(p.copied, p.len)),
        });
        switch.into_iter().chain(grow).collect()
    }

    /// The share of a frame growing and switching may take now ([`Pace::FrameShare`]).
    pub fn frame_share(&self) -> Duration {
        self.clock.share()
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
        let deadline = Instant::now() + slice;
        let spawned = self
            .load_pacer
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

    pub fn checksum(&self) -> u64 {
        self.swarm.checksum()
    }

    pub fn export(&self) -> Snapshot<S> {
        self.swarm.export()
    }

    /// The run's last line, the same for the app and `replay`, so that their checksums compare:
    /// `final: N entities, layout L[ (switch to K pending: C copied)], F frames simulated,
    /// checksum X`.
    pub fn final_line(&self) -> String {
        let pending = self.swarm.switch_progress().map_or(String::new(), |p| {
            format!(" (switch to {} pending: {} copied)", p.to, p.copied)
        });
        format!(
            "final: {} entities, layout {}{pending}, {} frames simulated, checksum {:016x}",
            self.len(),
            self.kind(),
            self.frame(),
            self.checksum()
        )
    }

    /// Every entity's packed point into `out`, on the driver's thread setting.
    pub fn gather_points(&mut self, out: &mut Vec<u32>) {
        self.swarm.gather_points(out, self.threads);
    }

    /// Every entity's packed point into `out` (exactly [`Self::len`] points: wgpu's staging
    /// memory in the app), on every core whatever the thread setting: the setting is the
    /// simulation's, and this is the renderer's path, which no layout should wait on longer
    /// than it must.
    pub fn gather_points_into(&mut self, out: crate::workload::PointSink<'_>) {
        self.swarm.gather_points_into(out, Threads::All);
    }

    /// Waits until layouts replaced by switches are freed (benchmarks, before measuring).
    pub fn wait_for_frees(&mut self) {
        self.swarm.wait_for_frees();
    }

    /// Carries out an action that changes the simulation; the others are
    /// [`Outcome::NotForDriver`]. A refused action changes nothing and says why.
    pub fn apply(&mut self, action: &Action) -> Result<Outcome, SimError> {
        let changed = |was_different: bool| {
            if was_different {
                Outcome::Changed
            } else {
                Outcome::Unchanged
            }
        };
        // A person who picks a count or a layout, or pauses, takes over from a search.
        if matches!(
            action,
            Action::Count(_) | Action::Layout(_) | Action::Pause(true)
        ) {
            self.until_over = None;
            self.until_over_settling = false;
        }
        match *action {
            Action::Layout(kind) => self.set_layout(kind),
            Action::CountUntilOver(line_ms) => {
                if !(MIN_LINE_MS..=MAX_LINE_MS).contains(&line_ms) {
                    return Err(SimError::BadLine {
                        value: line_ms,
                        min: MIN_LINE_MS,
                        max: MAX_LINE_MS,
                    });
                }
                let ceiling = self.max_entities(self.requested_layout());
                let (search, probe) = UntilOver::start(line_ms, self.len(), ceiling);
                self.set_count(probe)?;
                self.until_over = Some(search);
                self.until_over_done = None;
                Ok(Outcome::Changed)
            }
            Action::Count(n) => {
                let different = n != self.target;
                self.set_count(n)?;
                Ok(changed(different))
            }
            Action::Churn(n) => {
                let different = n != self.churn;
                self.set_churn(n)?;
                Ok(changed(different))
            }
            Action::Seek(on) => {
                if on && let Some(reason) = self.requested_layout().seek_unavailable() {
                    return Err(SimError::SeekUnavailable {
                        layout: self.requested_layout().name().into(),
                        reason: reason.into(),
                    });
                }
                let systems = Systems::with_seek(on);
                let different = systems != self.systems;
                self.systems = systems;
                Ok(changed(different))
            }
            Action::Threads(threads) => {
                let different = threads != self.threads;
                self.threads = threads;
                Ok(changed(different))
            }
            Action::Simd(choice) => {
                let different = choice != self.simd;
                self.simd = choice;
                self.swarm.set_simd(choice.tier());
                Ok(changed(different))
            }
            Action::Pause(paused) => {
                let different = paused != self.paused;
                self.paused = paused;
                Ok(changed(different))
            }
            Action::Wait(_)
            | Action::Screenshot(_)
            | Action::Say(_)
            | Action::ShowPanel(_)
            | Action::ShowMemory(_)
            | Action::Renderer(_)
            | Action::Resize(_)
            | Action::Export
            | Action::Record(_)
            | Action::Exit => Ok(Outcome::NotForDriver),
        }
    }

    /// Asks for `n` entities: shrinking happens now, growing over the next frames. Refused, with
    /// the population untouched, when `n` is over the maximum or over what memory allows.
    fn set_count(&mut self, n: usize) -> Result<(), SimError> {
        // Both while a switch is pending: the current layout holds the population until it lands.
        self.check_layout_max(self.swarm.kind(), n)?;
        self.check_layout_max(self.requested_layout(), n)?;
        self.swarm.check_fits(self.swarm.kind(), n)?;
        let len = self.swarm.len();
        if n < len {
            self.swarm.resize(n)?;
        } else {
            // Room for the whole target now, so the frames that grow toward it never reallocate.
            self.swarm.reserve(n - len)?;
        }
        if n > len && (self.grow_eta.is_none() || !self.growing()) {
            self.grow_eta = Some(Eta::new(len));
        }
        self.target = n;
        Ok(())
    }

    fn set_churn(&mut self, per_frame: usize) -> Result<(), SimError> {
        if per_frame > MAX_CHURN {
            return Err(SimError::BadChurn {
                value: per_frame,
                max: MAX_CHURN,
            });
        }
        if per_frame < self.churn {
            // Heavy churn's working memory (and the heap it scattered) is no longer needed.
            self.swarm.release_memory();
        }
        self.churn = per_frame;
        Ok(())
    }

    /// Starts moving every entity into `kind`, carried out over the next frames while the swarm
    /// keeps moving in its current layout; asking for the current layout cancels a pending switch.
    fn set_layout(&mut self, kind: LayoutKind) -> Result<Outcome, SimError> {
        if kind == self.requested_layout() {
            return Ok(Outcome::Unchanged);
        }
        if self.systems.seeks()
            && let Some(reason) = kind.seek_unavailable()
        {
            return Err(SimError::SeekUnavailable {
                layout: kind.name().into(),
                reason: format!("{reason} (turn seek off to switch to it)"),
            });
        }
        self.check_layout_max(kind, self.target.max(self.swarm.len()))?;
        let current = self.swarm.kind();
        let pending = self.swarm.switch_progress();
        self.swarm.begin_switch(kind)?;
        let outcome = match pending {
            _ if kind == current => Outcome::SwitchCancelled {
                staying: kind,
                cancelled: pending.map(|p| (p.to, p.copied)),
            },
            _ if self.swarm.kind() == kind => Outcome::Switched { to: kind },
            // What a third layout replaces is said, never dropped in silence: its copy is of no
            // use to the new one (another storage), so it is freed in the background.
            Some(p) => Outcome::SwitchReplaced {
                replaced: p.to,
                copied: p.copied,
                to: kind,
                entities: self.swarm.len(),
            },
            None => Outcome::SwitchStarted {
                to: kind,
                entities: self.swarm.len(),
            },
        };
        self.switch_eta = self.swarm.switch_progress().map(|p| (p.to, Eta::new(0)));
        Ok(outcome)
    }

    /// Refuses `n` entities in `kind` over its maximum (a 50M population on the GPU cannot move
    /// into a CPU layout; the count has to come down first).
    fn check_layout_max(&self, kind: LayoutKind, n: usize) -> Result<(), SimError> {
        let max = self.max_entities(kind);
        if n > max {
            return Err(SimError::OverLayoutMax {
                requested: n,
                max,
                layout: kind.name().into(),
            });
        }
        Ok(())
    }

    /// Copies this frame's share of a pending switch; returns how many entities were copied.
    fn switch_step(&mut self, frame_start: Instant) -> usize {
        let Some(progress) = self.swarm.switch_progress() else {
            return 0;
        };
        let pair = (self.swarm.kind(), progress.to);
        if self.switch_paced != Some(pair) {
            self.switch_pacer.reset();
            self.switch_paced = Some(pair);
        }
        let deadline = frame_start + self.budget(self.switch_pace);
        let swarm = &mut self.swarm;
        // The copy is the storage that grows: it holds the entities copied so far.
        let copied =
            self.switch_pacer
                .run_growing(self.switch_pace, deadline, progress.copied, |batch| {
                    Ok::<_, std::convert::Infallible>(swarm.switch_step(batch))
                });
        copied.unwrap_or_else(|never| match never {})
    }

    /// Spawns this frame's share toward the target; returns how many were spawned.
    fn grow_step(&mut self, frame_start: Instant) -> Result<usize, SimError> {
        if self.swarm.len() >= self.target {
            return Ok(0);
        }
        if self.grow_paced != Some(self.swarm.kind()) {
            self.grow_pacer.reset();
            self.grow_paced = Some(self.swarm.kind());
        }
        let deadline = frame_start + self.budget(self.grow_pace);
        let (swarm, target) = (&mut self.swarm, self.target);
        let len = swarm.len();
        self.grow_pacer
            .run_growing(self.grow_pace, deadline, len, |batch| {
                let n = batch.min(target.saturating_sub(swarm.len()));
                if n > 0 {
                    swarm.grow(n)?;
                }
                Ok(n)
            })
    }

    /// The time a pace allows a frame: growing and switching share one budget, counted from the
    /// frame's start (the switch gets what growing left, and at least one batch).
    fn budget(&self, pace: Pace) -> Duration {
        match pace {
            Pace::FrameShare => self.clock.share(),
            Pace::Budget(budget) => budget,
            Pace::Entities(_) => Duration::ZERO,
        }
    }

    /// How many entities the next switch step is expected to copy (what a gpu layout fetches
    /// ahead).
    fn expected_switch_batch(&self) -> usize {
        match self.switch_pace {
            Pace::Entities(n) => n,
            pace => self.switch_pacer.estimate(self.budget(pace)),
        }
    }

    /// Churn for this frame (nothing while paused).
    fn churn_step(&mut self) -> Result<(), SimError> {
        if !self.paused && self.churn > 0 {
            self.swarm.churn(self.churn)?;
        }
        Ok(())
    }

    /// The systems for this frame (nothing while paused), each timed; counts the frame either
    /// way. Then the next switch chunk's read starts, to overlap the rest of the frame.
    fn simulate_step(&mut self, report: &mut FrameReport) {
        if !self.paused {
            let (dt, threads) = (self.dt, self.threads);
            if self.systems.seeks() {
                let t = Instant::now();
                self.swarm.step_seek(dt, threads);
                report.seek = t.elapsed();
            }
            let t = Instant::now();
            self.swarm.step_move(dt, threads);
            report.moving = t.elapsed();
            let t = Instant::now();
            self.swarm.step_regen(dt, threads);
            report.regen = t.elapsed();
        }
        self.swarm.prefetch_switch(self.expected_switch_batch());
        self.frame += 1;
    }

    /// THE frame: grow, churn, switch, simulate, each timed. Everything that steps frames (the
    /// app, `script::replay`, `verify`, `soak`, the bench's switch and grow experiments) calls
    /// this. A refused grow (memory ran out part way) keeps what was spawned and stops growing
    /// there; a refused churn turns churn off.
    pub fn frame_step(&mut self) -> FrameReport {
        let mut report = FrameReport::default();
        let frame_start = Instant::now();
        self.clock.frame_started(frame_start);
        let t = frame_start;
        match self.grow_step(frame_start) {
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
        report.copied = self.switch_step(frame_start);
        report.switch = t.elapsed();
        self.clock.copied(report.grow + report.switch);
        let t = Instant::now();
        self.simulate_step(&mut report);
        report.simulate = t.elapsed();
        report.device = self.swarm.device_time();
        self.until_over_step(&report);
        report
    }

    /// Whether a `count until-over` search is under way, or its population still growing back
    /// to the count it found (a script holds its next lines until both are done).
    pub fn searching(&self) -> bool {
        self.until_over.is_some() || (self.until_over_settling && self.growing())
    }

    /// The count a search under way is measuring, and its line.
    pub fn search_probe(&self) -> Option<(usize, f64)> {
        self.until_over.as_ref().map(|s| (s.probe(), s.line_ms()))
    }

    /// How the last search ended, once (the app prints it).
    pub fn take_until_over_result(&mut self) -> Option<UntilOverResult> {
        self.until_over_done.take()
    }

    /// Feeds a steady frame's simulate time to the search, and carries out what it asks.
    fn until_over_step(&mut self, report: &FrameReport) {
        if self.until_over.is_none() {
            return;
        }
        let steady = !self.growing()
            && self.swarm.switch_progress().is_none()
            && report.spawned == 0
            && report.copied == 0
            && report.error.is_none();
        let simulate = match report.device {
            Some(DeviceTime::Measured(d)) => Some(d),
            Some(_) => None,
            None => Some(report.simulate),
        };
        let (true, Some(simulate)) = (steady, simulate) else {
            return;
        };
        let simulate_ms = simulate.as_secs_f64() * 1e3;
        let Some(search) = self.until_over.as_mut() else {
            return;
        };
        let line_ms = search.line_ms();
        let (count, simulate_ms, crossed) = match search.observe(simulate_ms) {
            Step::Measure => return,
            Step::Probe(n) => match self.set_count(n) {
                Ok(()) => return,
                // Memory (or a device limit) says no before the line does.
                Err(_) => (self.len(), simulate_ms, false),
            },
            Step::Crossed { count, simulate_ms } => {
                // The last probe may have been under the line: go back to the first over it.
                if self.set_count(count).is_err() {
                    self.target = self.len();
                }
                (count, simulate_ms, true)
            }
            Step::Ceiling { count, simulate_ms } => (count, simulate_ms, false),
        };
        self.until_over = None;
        self.until_over_settling = true;
        self.until_over_done = Some(UntilOverResult {
            line_ms,
            layout: self.swarm.kind(),
            count,
            simulate_ms,
            crossed,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(kind: LayoutKind, seed: u64) -> Driver {
        Driver::new(kind, seed).expect("a CPU layout")
    }

    #[test]
    fn growing_is_spread_over_frames_and_shrinking_is_immediate() {
        let mut d = driver(LayoutKind::Soa, 1).with_grow_pace(Pace::Entities(GROW_CHUNK));
        d.apply(&Action::Count(GROW_CHUNK * 2 + 10)).unwrap();
        d.frame_step();
        assert_eq!(d.len(), GROW_CHUNK);
        d.frame_step();
        d.frame_step();
        assert_eq!(d.len(), GROW_CHUNK * 2 + 10);
        d.apply(&Action::Count(5)).unwrap();
        assert_eq!(d.len(), 5);
    }

    #[test]
    fn growing_by_time_reaches_the_count_a_batch_at_a_time() {
        let mut d = driver(LayoutKind::Flecs, 1);
        d.apply(&Action::Count(30_000)).unwrap();
        let first = d.frame_step().spawned;
        assert!(first > 0 && first <= 30_000, "{first}");
        let mut frames = 1;
        while d.len() < 30_000 {
            assert!(d.frame_step().spawned > 0, "every frame makes progress");
            frames += 1;
        }
        assert_eq!(d.len(), 30_000);
        assert!(frames < 10_000);
    }

    const CHUNK: usize = 250_000;

    #[test]
    fn a_switch_is_spread_over_frames_while_the_swarm_keeps_moving() {
        let n = CHUNK * 2 + 10;
        let mut switching = driver(LayoutKind::Soa, 3).with_chunks(usize::MAX, CHUNK);
        let mut staying = driver(LayoutKind::Soa, 3).with_chunks(usize::MAX, CHUNK);
        for d in [&mut switching, &mut staying] {
            d.apply(&Action::Count(n)).unwrap();
            d.apply(&Action::Churn(1000)).unwrap();
            while d.len() < n {
                d.frame_step();
            }
        }
        assert_eq!(
            switching.apply(&Action::Layout(LayoutKind::Aos)),
            Ok(Outcome::SwitchStarted {
                to: LayoutKind::Aos,
                entities: n
            })
        );
        assert_eq!(switching.requested_layout(), LayoutKind::Aos);
        let mut copied = Vec::new();
        for _ in 0..4 {
            copied.push(switching.frame_step().copied);
            staying.frame_step();
            assert_eq!(switching.checksum(), staying.checksum());
        }
        // Churn keeps the count (1000 spawned, 1000 removed, some of them already copied).
        assert_eq!(copied, [CHUNK, CHUNK, 10, 0]);
        assert_eq!(switching.kind(), LayoutKind::Aos);
        assert_eq!(switching.switch_progress(), None);
        assert_eq!(switching.export(), staying.export());
    }

    /// Where a switch's chunks fall never changes the population: the same frames, with churn,
    /// growth and a shrink in the middle of the switches, end in the same state whether each
    /// frame copies 1, a few hundred, a random count or everything, and whether it is paced by
    /// time (`replay` and the app may split a switch differently and still agree).
    #[test]
    fn the_state_does_not_depend_on_where_switch_chunks_fall() {
        use rand::{RngExt, SeedableRng};
        let run = |pick: &mut dyn FnMut(u64) -> Pace| {
            let mut d = driver(LayoutKind::Soa, 11).with_grow_pace(Pace::Entities(3_000));
            d.apply(&Action::Count(12_000)).unwrap();
            d.apply(&Action::Churn(300)).unwrap();
            let plan = [
                (2, Action::Layout(LayoutKind::EcsTable)),
                (9, Action::Count(15_000)),
                (12, Action::Layout(LayoutKind::Hecs)),
                (14, Action::Count(4_000)),
                (16, Action::Layout(LayoutKind::Boxed)),
                (30, Action::Layout(LayoutKind::Soa)),
            ];
            let mut checksums = Vec::new();
            for frame in 0..60u64 {
                for (at, action) in &plan {
                    if *at == frame {
                        d.apply(action).unwrap();
                    }
                }
                d.switch_pace = pick(frame);
                d.frame_step();
                checksums.push(d.checksum());
            }
            (checksums, d.len(), d.kind())
        };
        let all_at_once = run(&mut |_| Pace::Entities(usize::MAX));
        assert_eq!((all_at_once.1, all_at_once.2), (4_000, LayoutKind::Soa));
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let chunkings: [&mut dyn FnMut(u64) -> Pace; 4] = [
            &mut |_| Pace::Entities(1),
            &mut |_| Pace::Entities(777),
            &mut |_| Pace::Entities(rng.random_range(1..5_000)),
            &mut |frame| {
                if frame % 2 == 0 {
                    Pace::Budget(Duration::from_micros(50))
                } else {
                    Pace::Entities(2_000)
                }
            },
        ];
        for pick in chunkings {
            assert_eq!(run(pick), all_at_once);
        }
    }

    #[test]
    fn layout_requests_say_what_they_did() {
        let mut d = driver(LayoutKind::Soa, 1);
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Aos)),
            Ok(Outcome::Switched {
                to: LayoutKind::Aos
            }),
            "an empty swarm switches on the spot"
        );
        d.apply(&Action::Count(100)).unwrap();
        d.frame_step();
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Aos)),
            Ok(Outcome::Unchanged)
        );
        d.apply(&Action::Layout(LayoutKind::Boxed)).unwrap();
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Aos)),
            Ok(Outcome::SwitchCancelled {
                staying: LayoutKind::Aos,
                cancelled: Some((LayoutKind::Boxed, 0))
            })
        );
        assert_eq!(d.apply(&Action::Exit), Ok(Outcome::NotForDriver));
        assert_eq!(d.apply(&Action::Pause(false)), Ok(Outcome::Unchanged));
        assert_eq!(d.apply(&Action::Pause(true)), Ok(Outcome::Changed));
        assert!(d.paused());
    }

    /// A request during a switch: the layout already being filled keeps the copy going, the
    /// current one cancels it, a third replaces it and says what it replaced.
    #[test]
    fn requests_during_a_switch_keep_cancel_or_replace_it() {
        let n = 50_000;
        let mut d = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 10_000);
        d.apply(&Action::Count(n)).unwrap();
        d.frame_step();
        d.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
        d.frame_step();
        assert_eq!(d.switch_progress().map(|p| p.copied), Some(10_000));
        // The same layout again: nothing restarts.
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Aos)),
            Ok(Outcome::Unchanged)
        );
        d.frame_step();
        assert_eq!(d.switch_progress().map(|p| p.copied), Some(20_000));
        // A third: the copy into aos gives way, and the outcome says how far it had come.
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Boxed)),
            Ok(Outcome::SwitchReplaced {
                replaced: LayoutKind::Aos,
                copied: 20_000,
                to: LayoutKind::Boxed,
                entities: n,
            })
        );
        let p = d.switch_progress().unwrap();
        assert_eq!((p.to, p.copied), (LayoutKind::Boxed, 0));
        assert_eq!(d.requested_layout(), LayoutKind::Boxed);
        d.frame_step();
        // Back to the current layout: cancelled, with what was cancelled.
        assert_eq!(
            d.apply(&Action::Layout(LayoutKind::Soa)),
            Ok(Outcome::SwitchCancelled {
                staying: LayoutKind::Soa,
                cancelled: Some((LayoutKind::Boxed, 10_000)),
            })
        );
        assert_eq!((d.kind(), d.switch_progress()), (LayoutKind::Soa, None));
        // And a switch asked for after all that lands with every entity's state.
        let mut reference = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 10_000);
        reference.apply(&Action::Count(n)).unwrap();
        for _ in 0..4 {
            reference.frame_step();
        }
        d.apply(&Action::Layout(LayoutKind::Hecs)).unwrap();
        for _ in 0..6 {
            d.frame_step();
            reference.frame_step();
        }
        assert_eq!(d.kind(), LayoutKind::Hecs);
        assert_eq!(d.checksum(), reference.checksum());
    }

    /// The start-up fill: the population asked for is there before the first frame, whatever
    /// the slices, and equals one loaded at once; no frame is counted while loading.
    #[test]
    fn loading_fills_the_count_before_the_first_frame() {
        let n = 120_000;
        let mut sliced = driver(LayoutKind::EcsTable, 9);
        sliced.apply(&Action::Count(n)).unwrap();
        sliced.begin_loading();
        assert!(sliced.loading());
        let mut slices = 0;
        while sliced.loading() {
            let progress = sliced.progress();
            assert_eq!(progress.len(), 1);
            assert_eq!(progress[0].work, Work::Loading);
            assert!(
                progress[0].line().starts_with("loading: "),
                "{:?}",
                progress[0]
            );
            sliced.load_step(Duration::from_micros(300)).unwrap();
            slices += 1;
        }
        assert!(slices > 1, "a short slice splits the fill");
        assert_eq!((sliced.len(), sliced.frame()), (n, 0));
        assert!(sliced.progress().is_empty());
        let mut at_once = driver(LayoutKind::EcsTable, 9);
        at_once.apply(&Action::Count(n)).unwrap();
        at_once.load_all().unwrap();
        assert_eq!(at_once.checksum(), sliced.checksum());
        // Loading is over: growing again is paced by frames, as before.
        sliced.apply(&Action::Count(n + 10)).unwrap();
        sliced.begin_loading();
        assert!(
            sliced.loading(),
            "a driver may load again before its first frame"
        );
        sliced.load_all().unwrap();
        sliced.frame_step();
        assert_eq!(sliced.frame(), 1);
    }

    #[test]
    fn progress_says_how_far_a_switch_has_come() {
        let mut d = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 25_000);
        d.apply(&Action::Count(100_000)).unwrap();
        d.frame_step();
        assert!(d.progress().is_empty());
        d.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
        d.frame_step();
        let progress = d.progress();
        assert_eq!(progress.len(), 1);
        assert_eq!(
            (progress[0].work, progress[0].done, progress[0].total),
            (Work::Switching(LayoutKind::Aos), 25_000, 100_000)
        );
        assert!(
            progress[0]
                .line()
                .starts_with("switching to aos: 25,000 of 100,000 (25%)"),
            "{}",
            progress[0].line()
        );
    }

    /// The share follows the frames the driver runs: with frames of ~40 ms that do not copy,
    /// a switch may copy for half of that, not for the 4 ms of 60 Hz.
    #[test]
    fn the_share_of_a_frame_follows_the_frames_run() {
        let mut d = driver(LayoutKind::Soa, 2);
        assert_eq!(d.frame_share(), crate::pace::MIN_SHARE);
        for _ in 0..6 {
            d.frame_step();
            std::thread::sleep(Duration::from_millis(40));
        }
        let share = d.frame_share();
        assert!(
            share >= Duration::from_millis(10) && share <= Duration::from_millis(40),
            "{share:?}"
        );
    }

    #[test]
    fn seek_is_a_setting_and_the_gpu_layout_refuses_it_with_the_reason() {
        let mut d = driver(LayoutKind::Soa, 4);
        d.apply(&Action::Count(3_000)).unwrap();
        d.frame_step();
        assert_eq!(d.apply(&Action::Seek(true)), Ok(Outcome::Changed));
        assert_eq!(d.systems(), Systems::WithSeek);
        let report = d.frame_step();
        assert!(report.seek > Duration::ZERO && report.moving > Duration::ZERO);
        // Into the gpu layout with seek on: refused, nothing changes.
        let before = d.checksum();
        let err = d.apply(&Action::Layout(LayoutKind::Gpu)).unwrap_err();
        assert!(
            err.to_string().contains("no seek pass") && err.to_string().contains("turn seek off"),
            "{err}"
        );
        assert_eq!(
            (d.kind(), d.switch_progress(), d.checksum()),
            (LayoutKind::Soa, None, before)
        );
        assert_eq!(d.apply(&Action::Seek(false)), Ok(Outcome::Changed));
        assert_eq!(d.apply(&Action::Seek(false)), Ok(Outcome::Unchanged));
        let report = d.frame_step();
        assert_eq!(report.seek, Duration::ZERO);
    }

    #[test]
    fn bad_settings_are_refused_and_nothing_changes() {
        let mut d = driver(LayoutKind::Aos, 1);
        d.apply(&Action::Count(1000)).unwrap();
        d.frame_step();
        let before = d.checksum();
        let err = d
            .apply(&Action::Count(APP_MAX_ENTITIES + 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("10000000"), "{err}");
        let err = d
            .apply(&Action::Churn(MAX_CHURN + 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("0 to 100000"), "{err}");
        assert_eq!((d.target(), d.churn(), d.checksum()), (1000, 0, before));
    }

    #[test]
    fn paused_frames_change_nothing() {
        let mut d = driver(LayoutKind::EcsTable, 1);
        d.apply(&Action::Count(500)).unwrap();
        d.apply(&Action::Churn(10)).unwrap();
        d.frame_step();
        d.apply(&Action::Pause(true)).unwrap();
        let before = d.checksum();
        d.frame_step();
        assert_eq!(d.checksum(), before);
    }
}

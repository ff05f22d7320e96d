//! One frame of the live simulation, as the app runs it and as a test replays it: grow toward the
//! requested count by a frame's share (so the window never freezes on a 10M resize), churn, carry
//! a pending layout switch on by a frame's share (the same reason), then the systems: seek (when
//! it is on), move, regen.
//!
//! A frame's share is a time budget in the app ([`crate::runtime::pace`]), so a slow layout and a fast one
//! both keep the frame near its line. Where a switch's chunks fall never changes the result;
//! where growth's chunks fall does, so a run that must be reproduced exactly (`replay`, the tests,
//! the app with `--grow-chunk`) grows by a count of entities a frame: a replay of the same script
//! without a window then ends in the same checksum as the app.

mod frame;
mod pacing;
mod requests;
#[cfg(test)]
mod tests;

use std::time::Duration;

pub use frame::FrameReport;
use pacing::Pacing;

use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::neighbours::AvoidForm;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::pace::Pace;
use crate::runtime::progress::{Progress, Work};
use crate::runtime::swarm::{MAX_ENTITIES, Order, Purpose, Swarm};
use crate::runtime::until_over::Searches;
use crate::runtime::values::{ResortAbove, ResortEvery};
use crate::simd::{SimdChoice, SimdTier};
use crate::threads::Threads;
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
/// the time even where a frame of millions of points is slow to draw in software (shorter
/// slices spend most of a load drawing).
pub const LOAD_SLICE: Duration = Duration::from_millis(250);

/// The live simulation: a swarm, the count it is growing or shrinking to, the settings a person
/// changes (through [`Driver::apply`], the one way in), how growing and copying are paced, and
/// the order asked for. `S` is `f32` for the app; `verify` runs `f64` too.
pub struct Driver<S: AllLayouts = f32> {
    swarm: Swarm<S>,
    target: usize,
    settings: Settings,
    pacing: Pacing,
    ordering: Ordering,
    /// What the last neighbour pass cost per entity, and where it ran: what the freeze guard
    /// estimates the next from ([`Self::check_avoid_cost`]).
    avoid_cost: Option<AvoidCost>,
    /// Whether the freeze guard refuses a neighbour pass past [`AVOID_LIMIT_S`] (off where no
    /// one waits on a frame: [`Self::without_freeze_guard`]).
    freeze_guard: bool,
    frame: u64,
    /// Filling the start-up population ([`Self::begin_loading`]).
    loading: bool,
    /// A ceiling for every layout set with [`Self::with_max_entities`], in place of each
    /// layout's app maximum.
    ceiling: Option<usize>,
    /// `count until-over` searches ([`crate::runtime::until_over`]).
    searches: Searches,
}

/// What a person sets and every frame runs by (the seek kernel and the SIMD tier a layout runs
/// are the swarm's, which builds the layouts).
#[derive(Clone, Copy, Debug)]
struct Settings {
    threads: Threads,
    simd: SimdChoice,
    churn: usize,
    systems: Systems,
    paused: bool,
    dt: Dt,
    /// Whether a frame's growing and copying are followed by the time this thread waited for a
    /// core meanwhile ([`crate::runtime::core_wait`]; the app's log lines).
    core_waits: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            threads: Threads::One,
            simd: SimdChoice::Baseline,
            churn: 0,
            systems: Systems::MOVE_REGEN,
            paused: false,
            dt: Dt::default(),
            core_waits: false,
        }
    }
}

/// The storage order asked for beyond what is under way: a sort that waits for other work, and
/// the re-sort threshold.
/// A neighbour pass's cost per entity, and the layout, form and order it ran in.
#[derive(Clone, Copy, Debug, PartialEq)]
struct AvoidCost {
    ns_per_entity: f64,
    kind: LayoutKind,
    form: AvoidForm,
    order: Order,
}

/// The longest neighbour pass the window accepts, in seconds a frame: past it the keys and the
/// panel would wait seconds for each frame, so a request that would get there is refused.
pub const AVOID_LIMIT_S: f64 = 2.0;

/// The least the freeze guard assumes a neighbour pass costs per entity, whatever a pass at a
/// smaller count measured (a small population fits the cache): the idiomatic pass in id order
/// misses the cache on every candidate; sorted by cell, or tuned, it mostly hits. Each stays
/// near the slower layouts' measured cost at 1M (docs/results/neighbours.md), so that a
/// layout's first pass cannot take seconds where the guard expected less.
const PRIOR_NS_SCATTERED: f64 = 4_000.0;
const PRIOR_NS_NEAR: f64 = 150.0;

#[derive(Clone, Copy, Debug, Default)]
struct Ordering {
    /// A sort asked for while other work was under way (a switch, the start-up fill): it starts
    /// when that ends.
    queued: Option<Order>,
    /// Sort again by group when the targets have strayed past this
    /// ([`crate::runtime::action::Action::Resort`]).
    resort: Option<ResortAbove>,
    /// Frames until the next look at how far the targets strayed.
    countdown: u32,
    /// Sort again by cell every this many frames
    /// ([`crate::runtime::action::Action::ResortCells`]), and the frames since the last sort.
    cell_every: Option<ResortEvery>,
    since_cell_sort: u32,
}

impl<S: AllLayouts> Driver<S> {
    /// A driver as the app runs it: empty, capped at [`app_max_entities`] of the layout, growing
    /// and switching within a share of each frame ([`Pace::FrameShare`]). Fails only for a layout
    /// this machine cannot run (the gpu layout without a GPU adapter).
    pub fn new(kind: LayoutKind, seed: u64) -> Result<Self, SimError> {
        Ok(Self {
            swarm: Swarm::new(kind, seed)?,
            target: 0,
            settings: Settings::default(),
            pacing: Pacing::default(),
            ordering: Ordering::default(),
            avoid_cost: None,
            freeze_guard: true,
            frame: 0,
            loading: false,
            ceiling: None,
            searches: Searches::default(),
        })
    }

    /// Entities spawned and copied per frame while growing and switching (`usize::MAX`: all at
    /// once, on the next frame), instead of a time budget.
    pub fn with_chunks(mut self, grow: usize, switch: usize) -> Self {
        self.pacing.grow.pace = Pace::Entities(grow.max(1));
        self.pacing.copy.pace = Pace::Entities(switch.max(1));
        self
    }

    /// How growing toward the count is paced ([`Pace::Entities`] for a reproducible run).
    pub fn with_grow_pace(mut self, pace: Pace) -> Self {
        self.pacing.grow.pace = pace;
        self
    }

    /// How a layout switch is paced.
    pub fn with_switch_pace(mut self, pace: Pace) -> Self {
        self.pacing.copy.pace = pace;
        self
    }

    /// How growing is paced.
    pub fn grow_pace(&self) -> Pace {
        self.pacing.grow.pace
    }

    /// Runs the kernels on `tier` (any tier the CPU has, not only the baseline or the best that
    /// [`Action::Simd`] offers): `verify` and the tests cover every tier this way.
    pub fn with_simd_tier(mut self, tier: SimdTier) -> Self {
        self.swarm.set_simd(tier);
        self
    }

    pub fn with_dt(mut self, dt: Dt) -> Self {
        self.settings.dt = dt;
        self
    }

    /// Runs a neighbour pass of any length rather than refusing it: for a headless run that no
    /// one steers frame by frame (`verify`), where the guard's refusal would only stop a check
    /// that was asked for at that count.
    pub fn without_freeze_guard(mut self) -> Self {
        self.freeze_guard = false;
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

    /// The population, to read: its layout, its entities, their memory and their targets. What
    /// changes it goes through [`Self::apply`] and the frames.
    pub fn swarm(&self) -> &Swarm<S> {
        &self.swarm
    }

    /// Rebuilds the population at once in the logical order `ids`, called `order`
    /// ([`Swarm::reorder_like`]): the soak's reference follows a sort that landed this way.
    pub fn reorder_like(&mut self, ids: &[u64], order: Order) -> Result<(), SimError> {
        self.swarm.reorder_like(ids, order)
    }

    /// The layout the swarm is in, or is being switched to.
    pub fn requested_layout(&self) -> LayoutKind {
        self.swarm.transition().map_or(self.swarm.kind(), |p| p.to)
    }

    /// The order asked for: a pending or queued reorder's, else the one the population was last
    /// arranged in.
    /// When a population sorted by group is sorted again, if ever.
    pub fn resort(&self) -> Option<ResortAbove> {
        self.ordering.resort
    }

    pub fn requested_order(&self) -> Order {
        self.ordering
            .queued
            .or_else(|| self.swarm.transition().and_then(|p| p.order()))
            .unwrap_or(self.swarm.order())
    }

    /// The count the swarm is growing or shrinking to.
    pub fn target(&self) -> usize {
        self.target
    }

    /// Still spawning toward the requested count.
    pub fn growing(&self) -> bool {
        self.swarm.len() < self.target
    }

    /// A switch, a sort or a growth under way (what a script's `wait done` waits for).
    pub fn working(&self) -> bool {
        self.growing() || self.swarm.transition().is_some()
    }

    pub fn churn(&self) -> usize {
        self.settings.churn
    }

    /// The systems each frame runs ([`Action::Seek`]).
    pub fn systems(&self) -> Systems {
        self.settings.systems
    }

    pub fn threads(&self) -> Threads {
        self.settings.threads
    }

    /// The SIMD choice in force ([`Action::Simd`]).
    pub fn simd(&self) -> SimdChoice {
        self.settings.simd
    }

    pub fn paused(&self) -> bool {
        self.settings.paused
    }

    /// Follows each frame's growing and switching with the time this thread waited for a core
    /// meanwhile ([`FrameReport::grow_waited`], [`FrameReport::switch_waited`]): the app does,
    /// for its log lines. Off elsewhere, so that nothing is read that nothing reports.
    pub fn follow_core_waits(&mut self, on: bool) {
        self.settings.core_waits = on;
    }

    /// The most entities `kind` takes in this driver: the layout's app maximum, or the ceiling
    /// set with [`Self::with_max_entities`]; a GPU's limits may lower it further (the swarm
    /// checks those when asked).
    pub fn max_entities(&self, kind: LayoutKind) -> usize {
        self.ceiling.unwrap_or_else(|| app_max_entities(kind))
    }

    /// Frames simulated or skipped so far.
    pub fn frame(&self) -> u64 {
        self.frame
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
            done: self.swarm.len(),
            total: self.target,
            left: self
                .pacing
                .grow_eta
                .and_then(|eta| eta.left(self.swarm.len(), self.target)),
        });
        if self.loading() {
            return grow.into_iter().collect();
        }
        // A move made for growth has nothing to show until there is something to copy (the
        // growing line says how far the count is), and no clock of its own: it is the growth's.
        let switch = self
            .swarm
            .transition()
            .filter(|p| !matches!(p.purpose, Purpose::Grow(_)) || p.len > 0)
            .map(|p| Progress {
                work: match p.purpose {
                    Purpose::Sort(order) => Work::Sorting(order),
                    Purpose::Grow(count) => Work::Preparing(p.to, count),
                    Purpose::Switch => Work::Switching(p.to),
                },
                done: p.copied,
                total: p.len,
                left: self
                    .pacing
                    .copy_eta
                    .filter(|(to, _)| *to == p.to && !matches!(p.purpose, Purpose::Grow(_)))
                    .and_then(|(_, eta)| eta.left(p.copied, p.len)),
            });
        switch.into_iter().chain(grow).collect()
    }

    /// The run's last line, the same for the app and `replay`, so that their checksums compare:
    /// `final: N entities, layout L[ (switch to K pending: C copied)], F frames simulated,
    /// checksum X`.
    pub fn final_line(&self) -> String {
        let pending = self
            .swarm
            .transition()
            .map_or(String::new(), |p| match p.purpose {
                Purpose::Sort(order) => format!(" (order {order} pending: {} copied)", p.copied),
                Purpose::Grow(count) => format!(
                    " (move into {} prepared for {count} pending: {} copied)",
                    p.to, p.copied
                ),
                Purpose::Switch => format!(" (switch to {} pending: {} copied)", p.to, p.copied),
            });
        format!(
            "final: {} entities, layout {}{pending}, {} frames simulated, checksum {:016x}",
            self.swarm.len(),
            self.swarm.kind(),
            self.frame(),
            self.swarm.checksum()
        )
    }

    /// Every entity's packed point into `out`, on the driver's thread setting.
    pub fn gather_points(&mut self, out: &mut Vec<u32>) {
        self.swarm.gather_points(out, self.settings.threads);
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
}

//! A population of entities in one layout, and everything done to a population regardless of
//! layout, written once here so that every layout sees exactly the same sequence of operations.
//!
//! The swarm holds three things: the **population** (its ids in logical order, each id's place,
//! the next id, its order), the **layout** it is in, and at most one **transition** into another
//! layout (a switch, a sort, a move to grow), carried out a frame's share at a time while the
//! population keeps moving. One file per concern:
//! - [`transition`]: the state machine of a transition, every event and what it does;
//! - [`copy`]: how a transition's copy is filled, and how churn and shrinks reach it;
//! - [`switching`]: the swarm's requests (a layout, an order, a growth) and its frames' copying;
//! - [`population`]: admission (the ceiling and this machine's memory), growing, shrinking and
//!   churning, and each id's logical index;
//! - [`targets`]: seek's targets, resolved to logical indices and checked;
//! - [`order`] and [`queue`]: the storage order (by id, or seekers beside their targets) and the
//!   ids a sort copies;
//! - [`freeing`]: giving memory back after a shrink, and freeing replaced layouts off the frame.
//!
//! This file holds the swarm itself, the systems it steps and what is read out of it.
//!
//! Seeking: every entity's target is a pure function of the seed and its id
//! ([`crate::workload::target_of`]). The swarm keeps each id's logical index, resolves a new
//! entity's target id to the logical index of the target in the layout it is pushed into, and the
//! layout keeps a handle of its own kind from then on.

mod copy;
mod freeing;
mod order;
mod population;
mod queue;
mod settings;
mod switching;
mod targets;
mod transition;

use std::ops::Range;

pub use order::{Order, TargetSpread, group_stretch};
pub use population::{MAX_CHURN, MAX_ENTITIES};
pub use switching::{Purpose, TransitionProgress};

use crate::error::SimError;
use crate::layout::regions::Region;
use crate::layout::{Layout, LayoutKind, SeekKernel};
use crate::memory::MemoryUse;
use crate::neighbours::{AvoidForm, Neighbours, PassCounts, Reach};
use crate::runtime::catalog::{AllLayouts, Built, DeviceTime};
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{
    Dt, EntityState, PointSink, SpawnPattern, Systems, entity_hash, mix, sink_of,
};
use freeing::Freeing;
use population::Population;
use settings::{Scratch, Settings};
use transition::Transition;

/// Every entity's id and state, in logical order: what a layout switch carries over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot<S> {
    pub ids: Vec<u64>,
    pub states: Vec<EntityState<S>>,
}

pub struct Swarm<S: AllLayouts> {
    population: Population,
    layout: Built<S>,
    transition: Option<Transition<S>>,
    settings: Settings,
    /// The SIMD tier the current layout's kernels really run on.
    simd_in_use: SimdTier,
    scratch: Scratch<S>,
    freeing: Freeing,
    /// The neighbour system's grid, form and pushes.
    neighbours: Neighbours<S>,
}

impl<S: AllLayouts> Swarm<S> {
    /// An empty swarm, or why `kind` cannot be built here (the gpu layout without an adapter).
    pub fn new(kind: LayoutKind, seed: u64) -> Result<Self, SimError> {
        let settings = Settings {
            simd: SimdTier::Baseline,
            seek_kernel: SeekKernel::Idiomatic,
        };
        Ok(Self {
            population: Population::new(seed),
            layout: settings.create(kind)?,
            transition: None,
            settings,
            simd_in_use: SimdTier::Baseline,
            scratch: Scratch::new(),
            freeing: Freeing::default(),
            neighbours: Neighbours::default(),
        })
    }

    /// A swarm of `n` entities, or the reason it cannot be built.
    pub fn with_count(kind: LayoutKind, seed: u64, n: usize) -> Result<Self, SimError> {
        let mut swarm = Self::new(kind, seed)?;
        swarm.resize(n)?;
        Ok(swarm)
    }

    /// Runs `kernel`'s seek from the next step on, in the current layout and in a copy being
    /// filled, where they have it. Instant, and the results are the same.
    pub fn set_seek_kernel(&mut self, kernel: SeekKernel) {
        self.settings.seek_kernel = kernel;
        self.layout.set_seek_kernel(kernel);
        if let Some(copy) = self.transition.as_mut().and_then(Transition::copy_mut) {
            copy.to.set_seek_kernel(kernel);
        }
    }

    /// The seek kernel asked for ([`Self::set_seek_kernel`]).
    pub fn seek_kernel(&self) -> SeekKernel {
        self.settings.seek_kernel
    }

    /// The seek kernel the current layout runs: the one asked for where it has it, otherwise
    /// the idiomatic one.
    pub fn seek_kernel_in_use(&self) -> SeekKernel {
        match self.settings.seek_kernel {
            SeekKernel::Tuned if self.kind().has_tuned_seek() => SeekKernel::Tuned,
            _ => SeekKernel::Idiomatic,
        }
    }

    /// Runs the kernels on `tier` from the next step on, in the current layout and in a copy
    /// being filled. Instant: nothing is copied, every entity keeps its state.
    pub fn set_simd(&mut self, tier: SimdTier) {
        self.settings.simd = tier;
        self.simd_in_use = self.layout.set_simd(tier);
        if let Some(copy) = self.transition.as_mut().and_then(Transition::copy_mut) {
            copy.to.set_simd(tier);
        }
    }

    /// The tier asked for ([`Self::set_simd`]).
    pub fn simd(&self) -> SimdTier {
        self.settings.simd
    }

    /// The tier the current layout's kernels really run on: the one asked for, or the baseline
    /// for a layout without multiversioned kernels.
    pub fn simd_in_use(&self) -> SimdTier {
        self.simd_in_use
    }

    /// How entities spawned from now on are born (the bench's control; the default is streams).
    pub fn set_spawn_pattern(&mut self, pattern: SpawnPattern) {
        self.population.pattern = pattern;
    }

    pub fn kind(&self) -> LayoutKind {
        self.layout.kind()
    }

    pub fn len(&self) -> usize {
        self.layout.len()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    pub fn seed(&self) -> u64 {
        self.population.seed
    }

    pub fn next_id(&self) -> u64 {
        self.population.next_id
    }

    /// The layout itself, for experiments that need more than the swarm; `None` while a
    /// transition is under way, since its copy could not follow changes made behind the swarm's
    /// back (cancel it first with [`Self::cancel_switch`]).
    pub fn layout_mut(&mut self) -> Option<&mut dyn Layout<S>> {
        match self.transition {
            Some(_) => None,
            None => Some(&mut *self.layout),
        }
    }

    pub fn step_move(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_move(dt.as_scalar(), threads);
        if let Some(copy) = self.transition.as_mut().and_then(Transition::copy_mut) {
            copy.to.step_move(dt.as_scalar(), threads);
        }
    }

    pub fn step_regen(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_regen(dt.as_scalar(), threads);
        if let Some(copy) = self.transition.as_mut().and_then(Transition::copy_mut) {
            copy.to.step_regen(dt.as_scalar(), threads);
        }
    }

    /// The seek system, before move: every seeker reads its target's position and steers. In a
    /// copy being filled, the seekers copied before their target take the current layout's
    /// result.
    pub fn step_seek(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_seek(dt.as_scalar(), threads);
        if let Some(transition) = self.transition.as_mut() {
            transition.step_seek(dt.as_scalar(), threads, &self.layout, &self.population);
        }
    }

    /// The avoid system, after seek and before move: every entity is pushed away from the ones
    /// within the radius. A copy being filled takes the current layout's result.
    pub fn step_avoid(&mut self, dt: Dt, threads: Threads) {
        self.layout
            .step_avoid(dt.as_scalar(), &mut self.neighbours, threads);
        if let Some(transition) = self.transition.as_mut() {
            transition.step_avoid(&self.layout, &self.population);
        }
    }

    /// What sets the neighbour radius.
    pub fn reach(&self) -> Reach {
        self.neighbours.reach()
    }

    /// Sets what sets the neighbour radius, or says why not (a grid too large for `count`
    /// entities), with nothing changed.
    pub fn set_reach(&mut self, reach: Reach, count: usize) -> Result<(), SimError> {
        reach.grid_at(count)?;
        self.neighbours.set_reach(reach);
        Ok(())
    }

    /// Whether the neighbour grid for `count` entities can be built, or why not.
    pub fn check_neighbours(&self, count: usize) -> Result<(), SimError> {
        self.neighbours.check(count).map(|_| ())
    }

    pub fn avoid_form(&self) -> AvoidForm {
        self.neighbours.form()
    }

    /// Runs `form`'s neighbour pass from the next step on. Instant; the results are the same.
    pub fn set_avoid_form(&mut self, form: AvoidForm) {
        self.neighbours.set_form(form);
    }

    /// What the last neighbour pass found.
    pub fn neighbour_counts(&self) -> PassCounts {
        self.neighbours.counts()
    }

    /// One frame of simulation: move, then regen.
    pub fn step(&mut self, dt: Dt, threads: Threads) {
        self.step_move(dt, threads);
        self.step_regen(dt, threads);
    }

    /// One frame of `systems`: seek and avoid (when they run), then move, then regen.
    pub fn step_systems(&mut self, dt: Dt, threads: Threads, systems: Systems) {
        if systems.seeks() {
            self.step_seek(dt, threads);
        }
        if systems.avoids() {
            self.step_avoid(dt, threads);
        }
        self.step(dt, threads);
    }

    /// Every entity's packed point into `out`, resized to fit.
    pub fn gather_points(&mut self, out: &mut Vec<u32>, threads: Threads) {
        out.resize(self.len(), 0);
        self.layout.gather_points(sink_of(out), threads);
    }

    /// Every entity's packed point into `out`, which holds exactly [`Self::len`] points (the
    /// app's: wgpu's staging memory for the points buffer).
    pub fn gather_points_into(&mut self, out: PointSink<'_>, threads: Threads) {
        self.layout.gather_points(out, threads);
    }

    /// The population's fingerprint: the wrapping sum of every entity's hash (id and the exact
    /// bits of its fields), mixed with the count. Independent of storage order, so two layouts
    /// agree exactly when they hold the same entities in the same states.
    pub fn checksum(&self) -> u64 {
        let mut sum = 0u64;
        self.layout
            .for_each_entity(&mut |id, state| sum = sum.wrapping_add(entity_hash(id, state)));
        mix(sum ^ mix(self.len() as u64))
    }

    /// Sets each entity of `snapshot` that is still here back to its velocity there, with no
    /// transition under way (nothing happens while one is). Seek writes only velocities, and
    /// repeated passes push them toward the speed limit, so the order bench measures each seek
    /// from the same state this way, whatever ran before it.
    pub fn restore_velocities(&mut self, snapshot: &Snapshot<S>) {
        if self.transition.is_some() {
            return;
        }
        for (&id, state) in snapshot.ids.iter().zip(&snapshot.states) {
            if let Some(i) = self.population.index.get(id) {
                self.layout.set_velocity_at(i as usize, state.vx, state.vy);
            }
        }
    }

    pub fn export(&self) -> Snapshot<S> {
        let mut snapshot = Snapshot {
            ids: Vec::with_capacity(self.len()),
            states: Vec::with_capacity(self.len()),
        };
        self.layout.for_each_entity(&mut |id, state| {
            snapshot.ids.push(id);
            snapshot.states.push(*state);
        });
        snapshot
    }

    /// Replaces the population with `snapshot`, keeping this swarm's layout, seed and id counter
    /// (the counter moves past the snapshot's ids), and giving up a transition under way. On
    /// error nothing changes.
    pub fn import(&mut self, snapshot: &Snapshot<S>) -> Result<(), SimError> {
        if snapshot.ids.len() != snapshot.states.len() {
            return Err(SimError::BadSnapshot {
                found: snapshot.states.len(),
                ids: snapshot.ids.len(),
            });
        }
        let mut fresh = self.settings.create(self.kind())?;
        population::make_room(
            self.population.max_entities,
            &mut *fresh,
            snapshot.ids.len(),
        )?;
        fresh.push(&snapshot.ids, &snapshot.states);
        self.layout = fresh;
        self.simd_in_use = self.layout.set_simd(self.settings.simd);
        if let Some(transition) = self.transition.take() {
            self.let_go(transition.give_up());
        }
        self.population.take_over(&snapshot.ids);
        self.resolve_targets(0, snapshot.ids.len());
        self.layout.set_targets(0, &self.scratch.targets);
        Ok(())
    }

    /// Where the entities at `range` (clipped to the population) live in the current layout's
    /// storage: the memory view's picture ([`crate::layout::regions`]).
    pub fn regions(&self, range: Range<usize>) -> Vec<Region> {
        let range = range.start.min(self.len())..range.end.min(self.len());
        let mut out = Vec::new();
        self.layout.regions(range, &mut out);
        out
    }

    pub fn memory(&self) -> MemoryUse {
        self.layout.memory()
    }

    /// Waits until the device has carried out everything submitted (benchmarks).
    pub fn finish_device_work(&self) {
        self.layout.finish_device_work();
    }

    /// The last simulate time measured on the device, for the layout that simulates there.
    pub fn device_time(&self) -> Option<DeviceTime> {
        self.layout.device_time()
    }

    /// The buffer the renderer can draw as is, when the swarm lives on the GPU.
    #[cfg(feature = "gpu")]
    pub fn gpu_points(&self) -> Option<crate::runtime::device::DevicePoints> {
        self.layout.on_device().map(|device| device.points())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_takes_a_snapshot_over_and_export_gives_it_back() {
        let mut from = Swarm::<f32>::with_count(LayoutKind::Boxed, 4, 700).unwrap();
        from.churn(90).unwrap();
        let snapshot = from.export();
        let mut into = Swarm::<f32>::with_count(LayoutKind::Chunks, 4, 10).unwrap();
        into.import(&snapshot).unwrap();
        assert_eq!(into.export(), snapshot);
        assert_eq!(into.checksum(), from.checksum());
        assert!(into.next_id() >= from.next_id());
        assert_eq!(into.check_targets(), Ok(()));
        // A snapshot whose ids and states disagree changes nothing.
        let mut torn = snapshot.clone();
        torn.states.pop();
        assert!(into.import(&torn).is_err());
        assert_eq!(into.export(), snapshot);
    }

    #[test]
    fn simd_in_use_is_what_the_layout_runs() {
        let best = SimdTier::best();
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 1, 100).unwrap();
        swarm.set_simd(best);
        assert_eq!((swarm.simd(), swarm.simd_in_use()), (best, best));
        swarm.switch_to(LayoutKind::Boxed).unwrap();
        assert_eq!(swarm.simd(), best);
        assert_eq!(swarm.simd_in_use(), SimdTier::Baseline);
        swarm.switch_to(LayoutKind::Aos).unwrap();
        assert_eq!(swarm.simd_in_use(), best);
    }
}

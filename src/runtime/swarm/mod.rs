//! A population of entities in one layout, and everything done to a population regardless of
//! layout, written once here so that every layout sees exactly the same sequence of operations.
//! One file per concern:
//! - [`population`]: admission (the ceiling and this machine's memory), growing, shrinking and
//!   churning, and each id's logical index;
//! - [`switch`]: moving the population into another layout, at once or a chunk at a time while it
//!   keeps moving;
//! - [`targets`]: seek's targets, resolved to logical indices and followed through switches;
//! - [`order`]: the storage order (by id, or seekers beside their targets) and rebuilding in it;
//! - [`reorder`]: that rebuild, a switch that reads the population in the new order;
//! - [`preparing`]: readying a switch's fresh layout on a thread of its own;
//! - [`freeing`]: giving memory back after a shrink or a switch.
//!
//! This file holds the swarm itself, the systems it steps and what is read out of it.
//!
//! Seeking: every entity's target is a pure function of the seed and its id
//! ([`crate::workload::target_of`]). The swarm keeps each id's logical index, resolves a new
//! entity's target id to the logical index of the target in the layout it is pushed into, and the
//! layout keeps a handle of its own kind from then on.

mod freeing;
mod order;
mod population;
mod preparing;
mod queue;
mod reorder;
mod switch;
mod targets;

use std::thread::JoinHandle;

pub use order::{Order, TargetSpread, group_stretch};
pub use population::{MAX_CHURN, MAX_ENTITIES};
pub use switch::SwitchProgress;

use crate::error::SimError;
use crate::layout::regions::Region;
use crate::layout::{DeviceTime, Layout, LayoutKind, SeekKernel};
use crate::memory::MemoryUse;
use crate::runtime::catalog::{self, AllLayouts};
use crate::runtime::id_index::IdIndex;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{
    Dt, EntityState, PointSink, SpawnPattern, Systems, entity_hash, mix, sink_of,
};
use switch::PendingSwitch;

/// Every entity's id and state, in logical order: what a layout switch carries over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot<S> {
    pub ids: Vec<u64>,
    pub states: Vec<EntityState<S>>,
}

pub struct Swarm<S: AllLayouts> {
    layout: Box<dyn Layout<S>>,
    switch: Option<PendingSwitch<S>>,
    seed: u64,
    pattern: SpawnPattern,
    /// The id the next spawned entity gets; ids are never reused.
    next_id: u64,
    /// How many churn rounds have run: each round draws its victims from its own stream.
    churn_round: u64,
    max_entities: usize,
    spawn_buffer: Vec<EntityState<S>>,
    id_buffer: Vec<u64>,
    target_buffer: Vec<Option<usize>>,
    /// Every entity's id in logical order, and each id's logical index: how a seeker's target id
    /// becomes the logical index a layout turns into a handle. Kept whether seek runs or not, so
    /// that turning it on never stalls.
    ids: Vec<u64>,
    index: IdIndex,
    /// Threads freeing layouts that switches replaced.
    freeing: Vec<JoinHandle<()>>,
    /// The SIMD tier every layout this swarm builds runs its kernels on, and the tier the
    /// current layout's kernels really run on.
    simd: SimdTier,
    simd_in_use: SimdTier,
    /// The seek kernel every layout this swarm builds runs, where it has it.
    seek_kernel: SeekKernel,
    /// The order the last reorder arranged the population in ([`Self::order`]).
    order: Order,
    /// Reorders that took over ([`Self::sorts_landed`]).
    sorts_landed: u64,
}

impl<S: AllLayouts> Swarm<S> {
    /// An empty swarm, or why `kind` cannot be built here (the gpu layout without an adapter).
    pub fn new(kind: LayoutKind, seed: u64) -> Result<Self, SimError> {
        Ok(Self {
            layout: catalog::create(kind)?,
            switch: None,
            seed,
            pattern: SpawnPattern::default(),
            next_id: 0,
            churn_round: 0,
            max_entities: MAX_ENTITIES,
            spawn_buffer: Vec::new(),
            id_buffer: Vec::new(),
            target_buffer: Vec::new(),
            ids: Vec::new(),
            index: IdIndex::default(),
            freeing: Vec::new(),
            simd: SimdTier::Baseline,
            simd_in_use: SimdTier::Baseline,
            seek_kernel: SeekKernel::Idiomatic,
            order: Order::Id,
            sorts_landed: 0,
        })
    }

    /// A swarm of `n` entities, or the reason it cannot be built.
    pub fn with_count(kind: LayoutKind, seed: u64, n: usize) -> Result<Self, SimError> {
        let mut swarm = Self::new(kind, seed)?;
        swarm.resize(n)?;
        Ok(swarm)
    }

    /// A fresh, empty layout of `kind` on this swarm's SIMD tier and seek kernel.
    fn create(&self, kind: LayoutKind) -> Result<Box<dyn Layout<S>>, SimError> {
        let mut layout = catalog::create::<S>(kind)?;
        self.configure(layout.as_mut());
        Ok(layout)
    }

    /// Puts `layout` on this swarm's SIMD tier and seek kernel.
    fn configure(&self, layout: &mut dyn Layout<S>) {
        layout.set_simd(self.simd);
        if let Some(seeking) = layout.seeking_mut() {
            seeking.set_seek_kernel(self.seek_kernel);
        }
    }

    /// Runs `kernel`'s seek from the next step on, in the current layout and in one a pending
    /// switch is filling, where they have it. Instant, and the results are the same.
    pub fn set_seek_kernel(&mut self, kernel: SeekKernel) {
        self.seek_kernel = kernel;
        if let Some(seeking) = self.layout.seeking_mut() {
            seeking.set_seek_kernel(kernel);
        }
        if let Some(seeking) = self.switch.as_mut().and_then(|s| s.to.seeking_mut()) {
            seeking.set_seek_kernel(kernel);
        }
    }

    /// The seek kernel asked for ([`Self::set_seek_kernel`]).
    pub fn seek_kernel(&self) -> SeekKernel {
        self.seek_kernel
    }

    /// The seek kernel the current layout runs: the one asked for where it has it, otherwise
    /// the idiomatic one.
    pub fn seek_kernel_in_use(&self) -> SeekKernel {
        match self.seek_kernel {
            SeekKernel::Tuned if self.kind().has_tuned_seek() => SeekKernel::Tuned,
            _ => SeekKernel::Idiomatic,
        }
    }

    /// Runs the kernels on `tier` from the next step on, in the current layout and in one a
    /// pending switch is filling. Instant: nothing is copied, every entity keeps its state.
    pub fn set_simd(&mut self, tier: SimdTier) {
        self.simd = tier;
        self.simd_in_use = self.layout.set_simd(tier);
        if let Some(switch) = self.switch.as_mut() {
            switch.to.set_simd(tier);
        }
    }

    /// The tier asked for ([`Self::set_simd`]).
    pub fn simd(&self) -> SimdTier {
        self.simd
    }

    /// The tier the current layout's kernels really run on: the one asked for, or the baseline
    /// for a layout without multiversioned kernels.
    pub fn simd_in_use(&self) -> SimdTier {
        self.simd_in_use
    }

    /// How entities spawned from now on are born (the bench's control; the default is streams).
    pub fn set_spawn_pattern(&mut self, pattern: SpawnPattern) {
        self.pattern = pattern;
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
        self.seed
    }

    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// The layout itself, for experiments that need more than the swarm; `None` while a switch
    /// is pending, since the copy could not follow changes made behind the swarm's back (cancel
    /// it first with [`Self::cancel_switch`]).
    pub fn layout_mut(&mut self) -> Option<&mut dyn Layout<S>> {
        match self.switch {
            Some(_) => None,
            None => Some(self.layout.as_mut()),
        }
    }

    pub fn step_move(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_move(dt.as_scalar(), threads);
        if let Some(switch) = self.switch.as_mut() {
            switch.to.step_move(dt.as_scalar(), threads);
        }
    }

    pub fn step_regen(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_regen(dt.as_scalar(), threads);
        if let Some(switch) = self.switch.as_mut() {
            switch.to.step_regen(dt.as_scalar(), threads);
        }
    }

    /// One frame of simulation: move, then regen.
    pub fn step(&mut self, dt: Dt, threads: Threads) {
        self.step_move(dt, threads);
        self.step_regen(dt, threads);
    }

    /// One frame of `systems`: seek (when it runs), then move, then regen.
    pub fn step_systems(&mut self, dt: Dt, threads: Threads, systems: Systems) {
        if systems.seeks() {
            self.step_seek(dt, threads);
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
    /// switch or sort pending (nothing happens while one is). Seek writes only velocities, and
    /// repeated passes push them toward the speed limit, so the order bench measures each seek
    /// from the same state this way, whatever ran before it.
    pub fn restore_velocities(&mut self, snapshot: &Snapshot<S>) {
        if self.switch.is_some() {
            return;
        }
        let Some(seeking) = self.layout.seeking_mut() else {
            return;
        };
        for (&id, state) in snapshot.ids.iter().zip(&snapshot.states) {
            if let Some(i) = self.index.get(id) {
                seeking.set_velocity_at(i as usize, state.vx, state.vy);
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
    /// (the counter moves past the snapshot's ids), and dropping a pending switch. On error
    /// nothing changes.
    pub fn import(&mut self, snapshot: &Snapshot<S>) -> Result<(), SimError> {
        if snapshot.ids.len() != snapshot.states.len() {
            return Err(SimError::BadSnapshot {
                found: snapshot.states.len(),
                ids: snapshot.ids.len(),
            });
        }
        let mut fresh = self.create(self.kind())?;
        Self::make_room(self.max_entities, fresh.as_mut(), snapshot.ids.len())?;
        fresh.push(&snapshot.ids, &snapshot.states);
        let past_last = snapshot.ids.iter().max().map_or(0, |&id| id + 1);
        self.next_id = self.next_id.max(past_last);
        self.layout = fresh;
        if let Some(pending) = self.switch.take() {
            self.give_up(pending);
        }
        self.order = Order::Id;
        self.ids.clear();
        self.index = IdIndex::default();
        self.id_buffer.clone_from(&snapshot.ids);
        self.remember(0);
        self.resolve_targets(0, self.ids.len());
        if let Some(seeking) = self.layout.seeking_mut() {
            seeking.set_targets(0, &self.target_buffer);
        }
        Ok(())
    }

    /// Where the entities at `range` (clipped to the population) live in the current layout's
    /// storage: the memory view's picture ([`crate::layout::regions`]).
    pub fn regions(&self, range: std::ops::Range<usize>) -> Vec<Region> {
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
        if let Some(device) = self.layout.on_device() {
            device.finish_device_work();
        }
    }

    /// The last simulate time measured on the device, for the layout that simulates there.
    pub fn device_time(&self) -> Option<DeviceTime> {
        self.layout.on_device().map(|device| device.device_time())
    }

    /// The buffer the renderer can draw as is, when the swarm lives on the GPU.
    #[cfg(feature = "gpu")]
    pub fn gpu_points(&self) -> Option<crate::runtime::gpu::GpuPoints> {
        catalog::device_points(self.layout.on_device()?)
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

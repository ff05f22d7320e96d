//! A population of entities in one layout, and everything done to a population regardless of
//! layout: growing and shrinking it, churning it, stepping it, switching it to another layout with
//! every entity's state carried over (at once, or a chunk per frame while it keeps moving), and
//! fingerprinting it. Written once here so that every layout sees exactly the same sequence of
//! operations.
//!
//! Seeking: every entity's target is a pure function of the seed and its id
//! ([`crate::workload::target_of`]). The swarm keeps each id's logical index, resolves a new
//! entity's target id to the logical index of the target in the layout it is pushed into, and the
//! layout keeps a handle of its own kind from then on. A switch copies in logical order, so a
//! seeker may land in the new layout before its target (after churn scrambled the order): it
//! waits, without a handle, and after each seek the old layout's result is copied onto it, until
//! its target is copied and its handle set. Either way both layouts compute the same bits.

use std::thread::JoinHandle;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustc_hash::FxHashMap;

use crate::id_index::IdIndex;

use crate::catalog::{self, capacity_limit};
use crate::error::SimError;
use crate::layout::{DeviceTime, Layout, LayoutKind, ReserveError};
use crate::memory::{MemoryUse, available_bytes, largest_allocation, release_to_os};
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{
    Dt, EntityState, PointSink, SpawnPattern, Systems, entity_hash, mix, sink_of, spawn_range,
    target_of,
};

/// The default ceiling on a population: far past the app's 10M slider, and still a count whose
/// memory a bench machine can plausibly hold.
pub const MAX_ENTITIES: usize = 100_000_000;
/// The most spawns plus removals per frame the churn setting accepts (churn is the swarm's; the
/// driver, the parsers and the panel take the limit from here).
pub const MAX_CHURN: usize = 100_000;

/// Every entity's id and state, in logical order: what a layout switch carries over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot<S> {
    pub ids: Vec<u64>,
    pub states: Vec<EntityState<S>>,
}

/// A layout switch spread over calls: `to` receives the entities in logical order, a chunk at a
/// time, while the current layout stays the one that is read (gathered, exported, checksummed).
/// Whatever is done to the swarm meanwhile is done to the part of `to` already copied as well, so
/// when the last chunk lands `to` holds exactly the current population, and it takes over.
struct PendingSwitch<S: Scalar> {
    to: Box<dyn Layout<S>>,
    copied: usize,
    /// Seekers copied before their target: the target's id -> the seekers' ids. Their handles
    /// are set when the target is copied; until then [`Swarm::step_seek`] copies the old
    /// layout's result onto them.
    waiting: FxHashMap<u64, Vec<u64>>,
}

impl<S: Scalar> PendingSwitch<S> {
    fn new(to: Box<dyn Layout<S>>) -> Self {
        Self {
            to,
            copied: 0,
            waiting: FxHashMap::default(),
        }
    }
}

/// How far a spread switch has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchProgress {
    pub to: LayoutKind,
    pub copied: usize,
    pub len: usize,
}

pub struct Swarm<S: Scalar> {
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
    /// The SIMD tier every layout this swarm builds runs its kernels on.
    simd: SimdTier,
}

impl<S: Scalar> Swarm<S> {
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
        })
    }

    /// A fresh, empty layout of `kind` on this swarm's SIMD tier.
    fn create(&self, kind: LayoutKind) -> Result<Box<dyn Layout<S>>, SimError> {
        let mut layout = catalog::create::<S>(kind)?;
        layout.set_simd(self.simd);
        Ok(layout)
    }

    /// Runs the kernels on `tier` from the next step on, in the current layout and in one a
    /// pending switch is filling. Instant: nothing is copied, every entity keeps its state.
    pub fn set_simd(&mut self, tier: SimdTier) {
        self.simd = tier;
        self.layout.set_simd(tier);
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
        self.layout.simd()
    }

    /// A swarm of `n` entities, or the reason it cannot be built.
    pub fn with_count(kind: LayoutKind, seed: u64, n: usize) -> Result<Self, SimError> {
        let mut swarm = Self::new(kind, seed)?;
        swarm.resize(n)?;
        Ok(swarm)
    }

    /// How entities spawned from now on are born (the bench's control; the default is streams).
    pub fn set_spawn_pattern(&mut self, pattern: SpawnPattern) {
        self.pattern = pattern;
    }

    /// Lowers (or raises) the ceiling `resize` and `grow` enforce.
    pub fn set_max_entities(&mut self, max: usize) {
        self.max_entities = max;
    }

    pub fn max_entities(&self) -> usize {
        self.max_entities
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

    /// Where the entities at `range` (clipped to the population) live in the current layout's
    /// storage: the memory view's picture ([`crate::layout::regions`]).
    pub fn regions(&self, range: std::ops::Range<usize>) -> Vec<crate::layout::regions::Region> {
        let range = range.start.min(self.len())..range.end.min(self.len());
        let mut out = Vec::new();
        self.layout.regions(range, &mut out);
        out
    }

    /// Where the targets of the entities at `range` keep the fields seek reads (x and y), in the
    /// current layout's storage: what the seek pass brings in for those seekers (the memory
    /// view). Each region names its seeker as its entity.
    pub fn target_regions(
        &self,
        range: std::ops::Range<usize>,
    ) -> Vec<crate::layout::regions::Region> {
        use crate::layout::regions::Field;
        let mut out = Vec::new();
        let mut one = Vec::new();
        for seeker in range.start.min(self.len())..range.end.min(self.len()) {
            let Some(j) = self
                .layout
                .target_at(seeker)
                .and_then(|t| self.index.get(t))
            else {
                continue;
            };
            one.clear();
            self.layout.regions(j as usize..j as usize + 1, &mut one);
            out.extend(
                one.iter()
                    .filter(|r| matches!(r.field, Field::X | Field::Y))
                    .map(|r| crate::layout::regions::Region {
                        entity: seeker,
                        ..*r
                    }),
            );
        }
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
    pub fn gpu_points(&self) -> Option<crate::gpu::GpuPoints> {
        self.layout
            .device_points()?
            .downcast::<crate::gpu::GpuPoints>()
            .ok()
            .map(|points| *points)
    }

    /// The layout itself, for experiments that need more than the trait; `None` while a switch
    /// is pending, since the copy could not follow changes made behind the swarm's back (cancel
    /// it first with [`Self::cancel_switch`]).
    pub fn layout_mut(&mut self) -> Option<&mut dyn Layout<S>> {
        match self.switch {
            Some(_) => None,
            None => Some(self.layout.as_mut()),
        }
    }

    /// Drops a pending switch and what it copied so far; the swarm stays in its current layout.
    /// A shrink while the switch was pending could not rebuild or compact the current layout
    /// (the switch was going to replace it): that happens now.
    pub fn cancel_switch(&mut self) {
        if let Some(dropped) = self.switch.take() {
            self.free_in_background(dropped.to);
            self.release_memory();
        }
    }

    /// Whether growing from `len` by `additional` entities in `kind` stays within `max_entities`
    /// and this machine's available memory. Allocates nothing.
    fn fits(
        max_entities: usize,
        kind: LayoutKind,
        len: usize,
        additional: usize,
    ) -> Result<(), SimError> {
        let requested = len.saturating_add(additional);
        if requested > max_entities {
            return Err(SimError::TooManyEntities {
                requested,
                max: max_entities,
            });
        }
        if let Some(limit) = capacity_limit(kind)
            && requested > limit.max_entities
        {
            return Err(SimError::OverDeviceLimit {
                requested,
                max: limit.max_entities,
                layout: kind.name(),
                limit: limit.limit,
            });
        }
        let needed = additional as u64 * kind.estimated_bytes_per_entity::<S>() as u64;
        // Reading /proc/meminfo costs microseconds; only a request big enough to matter pays it
        // (a per-frame churn of a few thousand entities does not).
        if needed > 64 << 20
            && let Some(available) = available_bytes()
            && needed > available
        {
            return Err(out_of_memory(kind, requested, len, needed, available));
        }
        Ok(())
    }

    /// `fits`, then reserves room for `additional` more entities in `layout`, so that an
    /// impossible allocation is an error here rather than an abort later. Nothing changes on error.
    fn make_room(
        max_entities: usize,
        layout: &mut dyn Layout<S>,
        additional: usize,
    ) -> Result<(), SimError> {
        let (kind, len) = (layout.kind(), layout.len());
        Self::fits(max_entities, kind, len, additional)?;
        layout.try_reserve(additional).map_err(|e| {
            if let ReserveError::Device(reason) = e {
                return SimError::DeviceOutOfMemory {
                    requested: len + additional,
                    layout: kind.name(),
                    reason,
                };
            }
            let needed = additional as u64 * kind.estimated_bytes_per_entity::<S>() as u64;
            // The allocator said no although the machine has the memory: a limit the OS does
            // not report as available memory (an address-space limit). What it grants is what
            // counts.
            out_of_memory(
                kind,
                len + additional,
                len,
                needed,
                largest_allocation() as u64,
            )
        })
    }

    /// Whether a population of `n` entities in `kind` is within the ceiling and this machine's
    /// memory, without allocating anything (the app checks a slider move this way before it
    /// grows over many frames).
    pub fn check_fits(&self, kind: LayoutKind, n: usize) -> Result<(), SimError> {
        if n > self.max_entities {
            return Err(SimError::TooManyEntities {
                requested: n,
                max: self.max_entities,
            });
        }
        let len = self.len();
        Self::fits(self.max_entities, kind, len, n.saturating_sub(len))
    }

    /// Makes room for `additional` more entities up front, so that growing by that many later
    /// never reallocates: a doubling `Vec` is moved by remapping pages in a fresh process, but
    /// once big layouts have been freed the allocator may copy all of it within one frame.
    /// Bevy's tables offer no way to reserve; for the ECS this only checks memory.
    pub fn reserve(&mut self, additional: usize) -> Result<(), SimError> {
        self.wait_for_frees();
        Self::make_room(self.max_entities, self.layout.as_mut(), additional)
    }

    /// Grows to or shrinks to `n` entities: growing appends freshly seeded entities with new ids,
    /// shrinking drops from the tail. On error the population is left exactly as it was.
    pub fn resize(&mut self, n: usize) -> Result<(), SimError> {
        let len = self.len();
        if n <= len {
            self.forget_from(n);
            self.layout.truncate(n);
            if let Some(switch) = self.switch.as_mut()
                && switch.copied > n
            {
                switch.to.truncate(n);
                switch.copied = n;
            }
            self.finish_switch_if_copied();
            self.release_memory();
            Ok(())
        } else {
            self.grow(n - len)
        }
    }

    /// Gives back what the population no longer needs, after it shrank or stopped churning: the
    /// layout releases what it can in place; one that cannot (Bevy's tables) is rebuilt, spread
    /// over the next `switch_step`s like a switch into a fresh layout of the same kind; and the
    /// allocator is asked to return freed memory to the OS.
    pub fn release_memory(&mut self) {
        // The scratch of a big batch (64k entities: about 2.5 MB a swarm) and an index sized
        // for a churn's peak are worth nothing at a small count; they grow back when needed.
        // Kept, they held a soak at 10,000 entities 18 MB over its first visit there.
        self.spawn_buffer = Vec::new();
        self.id_buffer = Vec::new();
        self.target_buffer = Vec::new();
        self.index.shrink_to_fit();
        crate::layout::shrink_if_sparse(&mut self.ids);
        self.layout.release_unused();
        if let Some(switch) = self.switch.as_mut() {
            switch.to.release_unused();
        }
        if self.switch.is_none()
            && self.layout.rebuild_releases_memory()
            && let Ok(to) = self.create(self.kind())
        {
            self.switch = Some(PendingSwitch::new(to));
            self.finish_switch_if_copied();
        }
        release_to_os();
    }

    /// Appends `count` freshly seeded entities (the app spreads a big resize over frames this way).
    pub fn grow(&mut self, count: usize) -> Result<(), SimError> {
        self.wait_for_frees();
        Self::make_room(self.max_entities, self.layout.as_mut(), count)?;
        // New entities land after the copied part, so a pending switch copies them later; room
        // for them there is checked now, while refusing still changes nothing.
        if let Some(switch) = self.switch.as_mut() {
            Self::make_room(self.max_entities, switch.to.as_mut(), count)?;
        }
        self.spawn_unchecked(count);
        Ok(())
    }

    fn spawn_unchecked(&mut self, count: usize) {
        // Batches keep the scratch buffers small when a swarm grows by millions.
        const BATCH: usize = 64 * 1024;
        let mut left = count;
        while left > 0 {
            let n = left.min(BATCH);
            self.spawn_buffer.clear();
            spawn_range(
                self.pattern,
                self.seed,
                self.next_id,
                n,
                &mut self.spawn_buffer,
            );
            self.id_buffer.clear();
            self.id_buffer.extend(self.next_id..self.next_id + n as u64);
            // Remembered first, so that a target among this batch resolves too.
            let first = self.layout.len();
            self.remember(first);
            self.resolve_targets(first, first + n);
            self.layout
                .push_seeking(&self.id_buffer, &self.spawn_buffer, &self.target_buffer);
            self.next_id += n as u64;
            left -= n;
        }
    }

    /// One churn round: spawn `k` new entities, then swap-remove `k` entities picked at random
    /// (the same picks in every layout, since all keep the same logical order).
    pub fn churn(&mut self, k: usize) -> Result<(), SimError> {
        self.grow(k)?;
        let mut rng = ChaCha8Rng::seed_from_u64(mix(self.seed ^ mix(self.churn_round)));
        self.churn_round += 1;
        if let Some(switch) = &self.switch {
            // Each removal below the copied part reads the entity that fills the hole, always one
            // of the last `k` (entities only ever move down); fetch those in one read.
            let len = self.len();
            self.layout
                .prepare_reads(switch.copied.max(len.saturating_sub(k))..len);
        }
        for _ in 0..k {
            let victim = rng.random_range(0..self.len());
            self.swap_remove(victim);
        }
        self.finish_switch_if_copied();
        Ok(())
    }

    /// `swap_remove` on the layout, mirrored on the copied part of a pending switch.
    fn swap_remove(&mut self, index: usize) {
        let last = self.len() - 1;
        if let Some(switch) = self.switch.as_mut()
            && index < switch.copied
        {
            if last < switch.copied {
                switch.to.swap_remove(index);
                switch.copied -= 1;
            } else {
                // The entity that moves into the hole has not been copied yet: append it to the
                // copy (its target found as a copied entity's would be), then let the same
                // swap_remove move it into place there too.
                let at = switch.to.len();
                let target = Self::target_in_copy(
                    self.seed,
                    &self.index,
                    switch,
                    self.ids[last],
                    switch.copied,
                );
                let to = &mut switch.to;
                self.layout
                    .for_each_entity_in(last..last + 1, &mut |id, state| {
                        to.push_seeking(&[id], std::slice::from_ref(state), &[target]);
                    });
                Self::resolve_waiting(&self.index, switch, at, self.ids[last]);
                switch.to.swap_remove(index);
            }
        }
        self.layout.swap_remove(index);
        let victim = self.ids.swap_remove(index);
        self.index.remove(victim);
        if let Some(&moved) = self.ids.get(index) {
            self.index.insert(moved, index as u32);
        }
        if let Some(switch) = self.switch.as_mut() {
            // Seekers waiting for it wait no more: their target is gone, in both layouts.
            switch.waiting.remove(&victim);
        }
    }

    /// Records the ids the layout just took at `first..` (they are in `id_buffer`).
    fn remember(&mut self, first: usize) {
        debug_assert_eq!(first, self.ids.len());
        for (k, &id) in self.id_buffer.iter().enumerate() {
            self.index.insert(id, (first + k) as u32);
        }
        self.ids.extend_from_slice(&self.id_buffer);
    }

    /// Forgets the ids at logical indices `len..` (a shrink).
    fn forget_from(&mut self, len: usize) {
        let dropped = self.ids.len().saturating_sub(len);
        if dropped > len {
            // Most of the population goes: rebuilding from the survivors is cheaper.
            self.ids.truncate(len);
            self.index = IdIndex::rebuild(&self.ids);
        } else {
            for id in self.ids.drain(len.min(self.ids.len())..) {
                self.index.remove(id);
            }
        }
        crate::layout::shrink_if_sparse(&mut self.ids);
    }

    /// The targets of the entities at logical indices `range` (already in the current layout),
    /// as logical indices, into `target_buffer`.
    fn resolve_targets(&mut self, first: usize, end: usize) {
        self.target_buffer.clear();
        let (seed, index) = (self.seed, &self.index);
        self.target_buffer.extend(
            self.ids[first..end]
                .iter()
                .map(|&id| target_of(seed, id).and_then(|t| index.get(t).map(|j| j as usize))),
        );
    }

    /// The target of seeker `id` in a switch's copy that holds logical indices `..present`: its
    /// logical index if it is there, or none, and then the seeker waits for it (a dead target
    /// is none in both layouts).
    fn target_in_copy(
        seed: u64,
        index: &IdIndex,
        switch: &mut PendingSwitch<S>,
        id: u64,
        present: usize,
    ) -> Option<usize> {
        let t = target_of(seed, id)?;
        let j = index.get(t)?;
        if (j as usize) < present {
            Some(j as usize)
        } else {
            switch.waiting.entry(t).or_default().push(id);
            None
        }
    }

    /// The entity `id`, now at `at` in the copy: the seekers that waited for it get their handle.
    fn resolve_waiting(index: &IdIndex, switch: &mut PendingSwitch<S>, at: usize, id: u64) {
        let Some(seekers) = switch.waiting.remove(&id) else {
            return;
        };
        for seeker in seekers {
            if let Some(j) = index.get(seeker) {
                switch.to.set_targets(j as usize, &[Some(at)]);
            }
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

    /// The seek system, before move: every seeker reads its target's position and steers. In a
    /// pending switch, the seekers copied before their target take the old layout's result.
    pub fn step_seek(&mut self, dt: Dt, threads: Threads) {
        self.layout.step_seek(dt.as_scalar(), threads);
        let Some(switch) = self.switch.as_mut() else {
            return;
        };
        switch.to.step_seek(dt.as_scalar(), threads);
        let (index, layout) = (&self.index, &self.layout);
        switch.waiting.retain(|target, seekers| {
            if !index.contains(*target) {
                return false;
            }
            seekers.retain(|seeker| {
                let Some(j) = index.get(*seeker) else {
                    return false;
                };
                let j = j as usize;
                let mut velocity = None;
                layout.for_each_entity_in(j..j + 1, &mut |_, state| {
                    velocity = Some((state.vx, state.vy));
                });
                if let Some((vx, vy)) = velocity {
                    switch.to.set_velocity_at(j, vx, vy);
                }
                true
            });
            !seekers.is_empty()
        });
    }

    /// Checks that every entity's handle names the entity `target_of` says it seeks, if that one
    /// is alive, and nothing otherwise; in a pending switch's copy too, where a seeker copied
    /// before its target holds nothing yet. The first mismatch, for tests and `soak`.
    pub fn check_targets(&self) -> Result<(), String> {
        let expected = |id: u64| target_of(self.seed, id).filter(|t| self.index.contains(*t));
        for (i, &id) in self.ids.iter().enumerate() {
            let held = self.layout.target_at(i);
            if held != expected(id) {
                return Err(format!(
                    "{}: entity {id} at {i} seeks {held:?}, expected {:?}",
                    self.kind(),
                    expected(id)
                ));
            }
        }
        if let Some(switch) = &self.switch {
            for (i, &id) in self.ids[..switch.copied].iter().enumerate() {
                let held = switch.to.target_at(i);
                let waiting = held.is_none()
                    && expected(id)
                        .is_some_and(|t| switch.waiting.get(&t).is_some_and(|w| w.contains(&id)));
                if held != expected(id) && !waiting {
                    return Err(format!(
                        "switch copy {}: entity {id} at {i} seeks {held:?}, expected {:?}",
                        switch.to.kind(),
                        expected(id)
                    ));
                }
            }
        }
        Ok(())
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
        let mut fresh = self.create(self.kind())?;
        self.fill(fresh.as_mut(), snapshot)?;
        self.layout = fresh;
        self.switch = None;
        self.ids.clear();
        self.index = IdIndex::default();
        self.id_buffer.clone_from(&snapshot.ids);
        self.remember(0);
        self.resolve_targets(0, self.ids.len());
        self.layout.set_targets(0, &self.target_buffer);
        Ok(())
    }

    fn fill(&mut self, layout: &mut dyn Layout<S>, snapshot: &Snapshot<S>) -> Result<(), SimError> {
        if snapshot.ids.len() != snapshot.states.len() {
            return Err(SimError::BadSnapshot {
                found: snapshot.states.len(),
                ids: snapshot.ids.len(),
            });
        }
        Self::make_room(self.max_entities, layout, snapshot.ids.len())?;
        layout.push(&snapshot.ids, &snapshot.states);
        let past_last = snapshot.ids.iter().max().map_or(0, |&id| id + 1);
        self.next_id = self.next_id.max(past_last);
        Ok(())
    }

    /// Moves every entity, with its current state, into a fresh layout of `kind`, now. The old
    /// layout is dropped only once the new one holds everything; on error the swarm is unchanged.
    pub fn switch_to(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        self.begin_switch(kind)?;
        self.switch_step(usize::MAX);
        Ok(())
    }

    /// Starts moving the population into a fresh layout of `kind`, to be carried out by
    /// [`Self::switch_step`] a chunk at a time; until the last chunk lands, the current layout
    /// stays the one that is stepped, read and reported, and everything done to the swarm is
    /// mirrored on the copy. Switching back to the current kind cancels a pending switch; asking
    /// for the kind already pending changes nothing. On error (memory) nothing changes.
    pub fn begin_switch(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        if kind == self.kind() {
            self.cancel_switch();
            return Ok(());
        }
        if self.switch.as_ref().is_some_and(|s| s.to.kind() == kind) {
            return Ok(());
        }
        self.wait_for_frees();
        let mut to = self.create(kind)?;
        Self::make_room(self.max_entities, to.as_mut(), self.len())?;
        // A switch to a third layout gives way: what it copied is of no use to another storage.
        // Freeing a copy of millions takes a while; the frame of the request should not.
        if let Some(replaced) = self.switch.replace(PendingSwitch::new(to)) {
            self.free_in_background(replaced.to);
        }
        self.finish_switch_if_copied();
        Ok(())
    }

    /// Copies up to `max` more entities into the layout a pending switch is filling; when the
    /// last one is in, that layout takes over. Returns how many were copied.
    pub fn switch_step(&mut self, max: usize) -> usize {
        // Copying in batches keeps the scratch buffers small when a switch moves millions.
        const BATCH: usize = 64 * 1024;
        let len = self.len();
        let Some(switch) = self.switch.as_mut() else {
            return 0;
        };
        let end = len.min(switch.copied.saturating_add(max));
        let copied = end - switch.copied;
        while switch.copied < end {
            let (first, batch_end) = (switch.copied, end.min(switch.copied + BATCH));
            self.id_buffer.clear();
            self.spawn_buffer.clear();
            self.layout
                .for_each_entity_in(first..batch_end, &mut |id, state| {
                    self.id_buffer.push(id);
                    self.spawn_buffer.push(*state);
                });
            self.target_buffer.clear();
            for &id in &self.id_buffer {
                let target = Self::target_in_copy(self.seed, &self.index, switch, id, batch_end);
                self.target_buffer.push(target);
            }
            switch
                .to
                .push_seeking(&self.id_buffer, &self.spawn_buffer, &self.target_buffer);
            if !switch.waiting.is_empty() {
                for (k, &id) in self.id_buffer.iter().enumerate() {
                    Self::resolve_waiting(&self.index, switch, first + k, id);
                }
            }
            switch.copied = batch_end;
        }
        self.finish_switch_if_copied();
        copied
    }

    /// Lets the current layout start reading the next `max` entities a pending switch will copy,
    /// so that a layout whose reads are round trips (the gpu layout) has them by the next
    /// [`Self::switch_step`]. Prefetches of more than a few million entities are not worth their
    /// staging memory; those are read when copied.
    pub fn prefetch_switch(&self, max: usize) {
        const MOST: usize = 4 << 20;
        if let Some(switch) = &self.switch
            && max <= MOST
        {
            let end = self.len().min(switch.copied.saturating_add(max));
            self.layout.prepare_reads(switch.copied..end);
        }
    }

    /// Where a pending switch stands, if there is one.
    pub fn switch_progress(&self) -> Option<SwitchProgress> {
        self.switch.as_ref().map(|s| SwitchProgress {
            to: s.to.kind(),
            copied: s.copied,
            len: self.len(),
        })
    }

    fn finish_switch_if_copied(&mut self) {
        if self.switch.as_ref().is_some_and(|s| s.copied == self.len())
            && let Some(switch) = self.switch.take()
        {
            let old = std::mem::replace(&mut self.layout, switch.to);
            self.free_in_background(old);
        }
    }

    /// Freeing a big layout is work of its own (10M boxes are 10M calls to `free`, about 0.2 s
    /// on this project's machine) that nothing waits for: a thread does it, so the frame that
    /// completes a switch does not pay for it. Small layouts are freed here and now. Either way
    /// the allocator then returns what it can to the OS.
    fn free_in_background(&mut self, layout: Box<dyn Layout<S>>) {
        const IN_BACKGROUND_FROM: usize = 100_000;
        self.freeing.retain(|handle| !handle.is_finished());
        if layout.len() < IN_BACKGROUND_FROM {
            // Even a small layout may leave a big heap behind (boxes scattered by churn).
            drop(layout);
            release_to_os();
            return;
        }
        // If no thread can be started, the closure, and the layout with it, is dropped here.
        if let Ok(handle) = std::thread::Builder::new()
            .name("free-old-layout".into())
            .spawn(move || {
                drop(layout);
                release_to_os();
            })
        {
            self.freeing.push(handle);
        }
    }

    /// Waits until the layouts replaced by switches are freed. Allocating while another thread
    /// frees scrambles the order in which the allocator hands memory back (a boxed layout built
    /// then runs up to twice as slow, measured with `bench --only switch`), so every operation
    /// that allocates entities waits first; a benchmark also waits so that the freeing does not
    /// compete with what it measures next. Instant when nothing is being freed.
    pub fn wait_for_frees(&mut self) {
        for handle in self.freeing.drain(..) {
            let _ = handle.join();
        }
    }
}

fn out_of_memory(
    kind: LayoutKind,
    requested: usize,
    len: usize,
    needed: u64,
    available: u64,
) -> SimError {
    let per_entity = (needed / (requested - len).max(1) as u64).max(1);
    SimError::OutOfMemory {
        requested,
        layout: kind.name(),
        needed_mib: needed >> 20,
        available_mib: available >> 20,
        fits: len + (available / per_entity) as usize,
    }
}

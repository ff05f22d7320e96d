//! Bevy's archetype ECS: a real `bevy_ecs` `World` with real components, and the two systems
//! written as ordinary Bevy systems over `Query`s, run by a `Schedule`, the way a Bevy user
//! writes them. Components of one archetype sit in a table, one column per component, so a system
//! streams exactly the columns it queries (SoA at component granularity), at the price of Bevy's
//! bookkeeping: change ticks per component and an entity index.
//!
//! Variants:
//! - **table, idiomatic**: default table storage; `Query::iter_mut().for_each` (internal
//!   iteration) on one thread, `Query::par_iter_mut().for_each` on all; change detection kept.
//! - **sparse set, idiomatic**: the same systems over components declared with `SparseSet`
//!   storage (fast add/remove, scattered iteration).
//! - **contiguous, tuned**: table storage, systems over `Query::contiguous_iter_mut`, which hands
//!   out whole column slices per table; change detection is bypassed (no system here reads
//!   `Changed<T>`), so the inner loop is the same plain slice loop SoA runs.
//!
//! Reproduces the C++ article's "ECS (SoA)" row with a production ECS rather than a toy one.
//!
//! Seeking: each entity holds its target as an `Entity` in a component ([`SeekTarget`]), the way
//! Bevy code refers to another entity. The idiomatic systems read the target's position with
//! `Query::get` on a second query; the tuned one walks the seekers' column slices
//! (`contiguous_iter_mut`, no change ticks) and looks targets up with the same `Query::get`:
//! the fastest public lookup by entity (`bench --only random-access`, faster than `World::get`:
//! docs/results/random-access.md), and the only safe one that is not a per-call world
//! lookup (`Query::iter_many` skips missing entities, so it cannot keep seekers and targets
//! aligned; reading a table's column by row is `unsafe` in Bevy 0.19).

use std::marker::PhantomData;
use std::ops::Range;

use bevy_ecs::component::StorageType;
use bevy_ecs::entity::Entity;
use bevy_ecs::prelude::{Query, QueryState, Res, Resource, Schedule, World};
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::layout::components::{
    Armor, Components, Energy, EntityId, Health, InSparseSet, InTable, Position, Regen, SeekTarget,
    Storage, Velocity,
};
use crate::layout::interleaved::{MoveInterleaved, RegenTable};
use crate::layout::markers::with_marker;
use crate::layout::regions::{Field, Region};
use crate::layout::seeking::{ResolvedTargets, SeekKernel, born_with, seek_resolved_rows};
use crate::layout::{InHostMemory, Marks, Released};
use crate::layout::{Layout, LayoutKind, ReserveError, shrink_if_sparse};

/// The smallest world worth rebuilding after a shrink.
const REBUILD_FROM: usize = 16_384;
use crate::memory::{MemoryUse, can_allocate};
use crate::neighbours::Neighbours;
use crate::scalar::Scalar;
use crate::simd::{self, SimdTier};
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{
    EntityState, PointSink, SinkPart, avoid_one, move_one, point_bytes, regen_one, seek_one,
    sink_chunks,
};

/// An entity's id and all six components, read-only.
type Everything<S, K> = Components<'static, S, K>;

/// What the systems read for this step: a resource, as Bevy systems get their parameters.
#[derive(Resource)]
struct StepParams<S: Scalar> {
    dt: S,
    threads: Threads,
    /// The tuned systems' kernels run on it; the idiomatic ones, compiled once, ignore it.
    tier: SimdTier,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcsVariant {
    Table,
    Sparse,
    Contiguous,
}

fn move_system<S: Scalar, K: Storage>(
    params: Res<StepParams<S>>,
    mut query: Query<(&mut Position<S, K>, &Velocity<S, K>)>,
) {
    let dt = params.dt;
    let step = |(mut p, v): (
        bevy_ecs::change_detection::Mut<Position<S, K>>,
        &Velocity<S, K>,
    )| {
        (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
    };
    match params.threads {
        Threads::One => query.iter_mut().for_each(step),
        Threads::All => query.par_iter_mut().for_each(step),
    }
}

fn regen_system<S: Scalar, K: Storage>(
    params: Res<StepParams<S>>,
    mut query: Query<(&mut Energy<S, K>, &Regen<S, K>)>,
) {
    let dt = params.dt;
    let step = |(mut e, r): (bevy_ecs::change_detection::Mut<Energy<S, K>>, &Regen<S, K>)| {
        e.value = regen_one(e.value, r.per_second, dt);
    };
    match params.threads {
        Threads::One => query.iter_mut().for_each(step),
        Threads::All => query.par_iter_mut().for_each(step),
    }
}

fn seek_system<S: Scalar, K: Storage>(
    params: Res<StepParams<S>>,
    mut seekers: Query<(&Position<S, K>, &mut Velocity<S, K>, &SeekTarget<K>)>,
    positions: Query<&Position<S, K>>,
) {
    let dt = params.dt;
    let step = |(p, mut v, target): (
        &Position<S, K>,
        bevy_ecs::change_detection::Mut<Velocity<S, K>>,
        &SeekTarget<K>,
    )| {
        if let Some(Ok(t)) = target.0.map(|e| positions.get(e)) {
            (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
        }
    };
    match params.threads {
        Threads::One => seekers.iter_mut().for_each(step),
        Threads::All => seekers.par_iter_mut().for_each(step),
    }
}

fn seek_contiguous_system<S: Scalar>(
    params: Res<StepParams<S>>,
    mut seekers: Query<(
        &Position<S, InTable>,
        &mut Velocity<S, InTable>,
        &SeekTarget<InTable>,
    )>,
    positions: Query<&Position<S, InTable>>,
) {
    let (dt, threads) = (params.dt, params.threads);
    let tables = seekers
        .contiguous_iter_mut()
        .expect("table-stored components are always dense");
    let positions = &positions;
    for (own, mut velocities, targets) in tables {
        let velocities = velocities.bypass_change_detection();
        let c = chunk_len(threads, velocities.len());
        let parts = velocities
            .chunks_mut(c)
            .zip(own.chunks(c).zip(targets.chunks(c)));
        for_each_part(threads, parts, |(velocities, (own, targets))| {
            for ((v, p), target) in velocities.iter_mut().zip(own).zip(targets) {
                if let Some(Ok(t)) = target.0.map(|e| positions.get(e)) {
                    (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
                }
            }
        });
    }
}

fn move_contiguous_system<S: Scalar>(
    params: Res<StepParams<S>>,
    mut query: Query<(&mut Position<S, InTable>, &Velocity<S, InTable>)>,
) {
    let (dt, threads, tier) = (params.dt, params.threads, params.tier);
    let tables = query
        .contiguous_iter_mut()
        .expect("table-stored components are always dense");
    for (mut positions, velocities) in tables {
        let positions = positions.bypass_change_detection();
        let c = chunk_len(threads, positions.len());
        let parts = positions.chunks_mut(c).zip(velocities.chunks(c));
        for_each_part(threads, parts, |(positions, velocities)| {
            simd::run(
                tier,
                MoveInterleaved {
                    positions,
                    velocities,
                    dt,
                    one_cursor: false,
                },
            );
        });
    }
}

fn regen_contiguous_system<S: Scalar>(
    params: Res<StepParams<S>>,
    mut query: Query<(&mut Energy<S, InTable>, &Regen<S, InTable>)>,
) {
    let (dt, threads, tier) = (params.dt, params.threads, params.tier);
    let tables = query
        .contiguous_iter_mut()
        .expect("table-stored components are always dense");
    for (mut energies, regens) in tables {
        let energies = energies.bypass_change_detection();
        let c = chunk_len(threads, energies.len());
        let parts = energies.chunks_mut(c).zip(regens.chunks(c));
        for_each_part(threads, parts, |(energies, regens)| {
            simd::run(
                tier,
                RegenTable {
                    energies,
                    regens,
                    dt,
                },
            );
        });
    }
}

/// A schedule holding one system, run on the calling thread (the system itself fans out).
fn schedule_of<M>(
    system: impl bevy_ecs::schedule::IntoScheduleConfigs<bevy_ecs::system::ScheduleSystem, M>,
) -> Schedule {
    let mut schedule = Schedule::default();
    schedule.set_executor(SingleThreadedExecutor::new());
    schedule.add_systems(system);
    schedule
}

/// Entity ids a prepared world holds beyond the count ([`Layout::prepare`]), for the entities
/// the world spawns itself (its schedules' first runs) and for churn's despawned ids, which Bevy
/// holds back 128 at a time before it reuses them. 24 KB of index.
const WORLD_IDS: u32 = 1024;

/// The ECS layout; `K` picks table or sparse-set storage for every component.
pub struct EcsLayout<S: Scalar, K: Storage = InTable> {
    variant: EcsVariant,
    world: World,
    move_schedule: Schedule,
    regen_schedule: Schedule,
    seek_schedule: Schedule,
    /// Entities in logical order: Bevy's own table order is its business, ours is this list.
    entities: Vec<Entity>,
    /// Every component of an entity, for export and checksums; archetypes kept current in `push`.
    everything: QueryState<Everything<S, K>>,
    /// The most entities this world held: its tables' capacity, which Bevy never shrinks.
    high_water: usize,
    /// The tuned variant's kernels run on it; the idiomatic variants stay on the baseline.
    tier: SimdTier,
    /// The seek kernel asked for (the tuned variant's), and its targets resolved to table rows.
    kernel: SeekKernel,
    resolved: ResolvedTargets,
    _types: PhantomData<fn() -> (S, K)>,
}

impl<S: Scalar> EcsLayout<S, InTable> {
    pub fn table() -> Self {
        Self::with_schedules(
            EcsVariant::Table,
            schedule_of(move_system::<S, InTable>),
            schedule_of(regen_system::<S, InTable>),
            schedule_of(seek_system::<S, InTable>),
        )
    }

    pub fn contiguous() -> Self {
        Self::with_schedules(
            EcsVariant::Contiguous,
            schedule_of(move_contiguous_system::<S>),
            schedule_of(regen_contiguous_system::<S>),
            schedule_of(seek_contiguous_system::<S>),
        )
    }
}

impl<S: Scalar> EcsLayout<S, InSparseSet> {
    pub fn sparse() -> Self {
        Self::with_schedules(
            EcsVariant::Sparse,
            schedule_of(move_system::<S, InSparseSet>),
            schedule_of(regen_system::<S, InSparseSet>),
            schedule_of(seek_system::<S, InSparseSet>),
        )
    }
}

impl<S: Scalar, K: Storage> EcsLayout<S, K> {
    /// All seven components of one listed entity.
    fn components<'a>(
        &'a self,
        query: &'a Query<'_, '_, Everything<S, K>>,
        entity: Entity,
    ) -> Components<'a, S, K> {
        // After `world_mut` added archetypes the prepared query may not know, read directly.
        query
            .get(entity)
            .ok()
            .or_else(|| {
                let e = self.world.get_entity(entity).ok()?;
                Some((
                    e.get()?,
                    e.get()?,
                    e.get()?,
                    e.get()?,
                    e.get()?,
                    e.get()?,
                    e.get()?,
                ))
            })
            .expect("every listed entity has all seven components")
    }

    fn with_schedules(
        variant: EcsVariant,
        move_schedule: Schedule,
        regen_schedule: Schedule,
        seek_schedule: Schedule,
    ) -> Self {
        // The par_iter systems run on Bevy's compute pool; make sure it exists.
        crate::threads::pool();
        let mut world = World::new();
        let everything = world.query::<Everything<S, K>>();
        Self {
            variant,
            everything,
            world,
            move_schedule,
            regen_schedule,
            seek_schedule,
            entities: Vec::new(),
            high_water: 0,
            tier: SimdTier::Baseline,
            kernel: SeekKernel::Idiomatic,
            resolved: ResolvedTargets::default(),
            _types: PhantomData,
        }
    }

    /// Spawns a batch, each entity born with its target where that target is already spawned;
    /// targets among the batch itself are set once it is. One `spawn_batch`: it reserves the
    /// table's room for the batch and finds the bundle's archetype once, where a `spawn` a time
    /// does both for every entity; on a prepared world it takes the ids `prepare` freed.
    fn spawn(&mut self, ids: &[u64], states: &[EntityState<S>], targets: Option<&[Option<usize>]>) {
        self.resolved.invalidate();
        let first = self.entities.len();
        let born_with = born_with(&self.entities, targets);
        let born_with = |k: usize| born_with.get(k).copied().flatten();
        let entities = &mut self.entities;
        let world = &mut self.world;
        let bundle = |k: usize| {
            let (id, s) = (ids[k], &states[k]);
            (
                EntityId::<K>::new(id),
                Position::<S, K>::new(s.x, s.y),
                Velocity::<S, K>::new(s.vx, s.vy),
                Health::<S, K>::new(s.hp),
                Energy::<S, K>::new(s.energy),
                Regen::<S, K>::new(s.regen),
                Armor::<S, K>::new(s.armor),
                SeekTarget::<K>::new(born_with(k)),
            )
        };
        let spawned: Vec<Entity> = world.spawn_batch((0..ids.len()).map(bundle)).collect();
        entities.extend(spawned);
        self.high_water = self.high_water.max(self.entities.len());
        self.everything.update_archetypes(&self.world);
        if let Some(targets) = targets {
            // One prepared query for all of them: `World::query` matches every archetype
            // afresh, once per entity when `set_targets` is called for each.
            let mut query = self.world.query::<&mut SeekTarget<K>>();
            for (k, &t) in targets.iter().enumerate() {
                let Some(t) = t.filter(|&t| t >= first) else {
                    continue;
                };
                if let Ok(mut held) = query.get_mut(&mut self.world, self.entities[first + k]) {
                    held.0 = Some(self.entities[t]);
                }
            }
        }
    }

    /// A switch's read out of table storage: the one table's column slices
    /// (`Query::contiguous_iter`, Bevy's fastest public iteration), row for row, when its rows
    /// are the logical order ([`rows_are_logical`]). `false`: nothing was visited.
    fn read_columns(&self, rows: Rows<'_>, visit: &mut dyn FnMut(u64, &EntityState<S>)) -> bool {
        let Some(mut state) = self.world.try_query::<(Entity, Everything<S, K>)>() else {
            return false;
        };
        let query = state.query(&self.world);
        let Ok(mut tables) = query.contiguous_iter_inner() else {
            return false;
        };
        let Some((entities, (ids, positions, velocities, healths, energies, regens, armors))) =
            tables.next()
        else {
            return rows.is_empty();
        };
        if tables.next().is_some() || !rows_are_logical(entities, &self.entities, &rows) {
            return false;
        }
        Columns {
            ids,
            positions,
            velocities,
            healths,
            energies,
            regens,
            armors,
        }
        .visit(&rows, visit);
        true
    }

    /// Each of `entities`, looked up through the prepared query of all seven components.
    fn visit_entities(
        &self,
        entities: impl IntoIterator<Item = Entity>,
        visit: &mut dyn FnMut(u64, &EntityState<S>),
    ) {
        let query = self.everything.query_manual(&self.world);
        for entity in entities {
            let (id, state) = state_of(self.components(&query, entity));
            visit(id, &state);
        }
    }

    /// The world, for experiments that query it directly (random access, migration).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Entities in logical order.
    pub fn entities(&self) -> &[Entity] {
        &self.entities
    }
}

impl<S: Scalar, K: Storage> Layout<S> for EcsLayout<S, K> {
    fn kind(&self) -> LayoutKind {
        match self.variant {
            EcsVariant::Table => LayoutKind::EcsTable,
            EcsVariant::Sparse => LayoutKind::EcsSparse,
            EcsVariant::Contiguous => LayoutKind::EcsContiguous,
        }
    }

    fn len(&self) -> usize {
        self.entities.len()
    }

    fn set_simd(&mut self, tier: SimdTier) -> SimdTier {
        if self.variant == EcsVariant::Contiguous {
            self.tier = tier;
        }
        self.tier
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.entities.try_reserve(additional)?;
        // Bevy's tables grow infallibly; ask the allocator for their size up front so an
        // impossible request fails here, as an error, instead of aborting inside Bevy.
        // No table is reserved, and none needs to be: their doublings are remapped, and the
        // growth that stalls a frame is the entity index's, which `prepare` does up front.
        // Bevy 0.19 has no public table reserve anyway; the one way round it (a `spawn_batch`
        // whose size hint claims the whole count) also allocates and frees that many entity
        // ids, which makes the first batch stall and every later one slower (the freed ids come
        // back in reverse; docs/results/switching.md, "Headless: every layout").
        Ok(can_allocate(
            additional.saturating_mul(bytes_per_entity::<S>(K::TYPE)),
        )?)
    }

    fn prepares(&self) -> bool {
        true
    }

    /// Bevy grows its entity index (`Entities::meta`, 24 bytes an entity here) by filling it to
    /// its new capacity in one go (`ensure_index_index_is_valid`): the spawn that crosses 8.4M
    /// entities writes the whole new index, every page of it touched for the first time: that one
    /// spawn stalls its frame, where the table's own doublings, remapped
    /// (`memory::map_large_allocations`), cost little (docs/results/switching.md, "Bevy's stall:
    /// its entity index"; `docs/runs/bevy-prepare-2026-12-04`). So the ids are allocated
    /// here, and the index grown past the last of them by spawning and despawning it. They go
    /// back to Bevy's allocator at once (more than its local buffer of 128, so `free_many` puts
    /// them where the next allocation finds them), which gives out freed ids before fresh ones:
    /// the spawns then land on these ids with no growth left to pay for.
    ///
    /// The world takes ids of its own too: the first run of the move schedule spawns two
    /// entities. With the index grown exactly to the count, the first of those would cross its
    /// end and double it, in the first frame that moves the population. So the index is grown
    /// [`WORLD_IDS`] past the count.
    fn prepare(&mut self, count: usize) {
        if !self.entities.is_empty() || self.prepared_room() > count {
            return;
        }
        let Some(total) = u32::try_from(count)
            .ok()
            .and_then(|n| n.checked_add(WORLD_IDS))
        else {
            return;
        };
        let mut ids: Vec<Entity> = self.world.entity_allocator().alloc_many(total).collect();
        if let Some(last) = ids.last_mut()
            && self.world.spawn_empty_at(*last).is_ok()
        {
            match self.world.despawn_no_free(*last) {
                Some(again) => *last = again,
                // Still spawned (and empty, so no query sees it): not an id to hand out.
                None => {
                    ids.pop();
                }
            }
        }
        // Freed ids are a stack, taken from the top: the lowest on top, so that the fill takes
        // them from the lowest up. From the highest down, the first batch would grow every
        // sparse set's index to the whole count at once, a frame far over its share
        // (`docs/runs/copy-prefetch-2026-12-05`).
        ids.reverse();
        self.world.entity_allocator_mut().free_many(&ids);
    }

    /// Every slot of Bevy's index not held by a live entity: the ids set aside by `prepare`,
    /// those freed by despawns (which spawns reuse first) and the fresh ones below its length,
    /// which is always its capacity.
    fn prepared_room(&self) -> usize {
        (self.world.entities().len() as usize).saturating_sub(self.entities.len())
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.spawn(ids, states, None);
    }

    fn swap_remove(&mut self, index: usize) {
        let entity = self.entities.swap_remove(index);
        self.resolved.invalidate();
        self.world.despawn(entity);
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.resolved.invalidate();
        if len < self.entities.len() {
            // From the tail backwards: each despawn then empties the table's last row, with no
            // row moved into a hole.
            for entity in self.entities.drain(len..).rev() {
                self.world.despawn(entity);
            }
        }
        self.give_back_memory();
        self.released()
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        self.world.insert_resource(StepParams { dt, threads, tier });
        self.move_schedule.run(&mut self.world);
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        self.world.insert_resource(StepParams { dt, threads, tier });
        self.regen_schedule.run(&mut self.world);
        // The end of a frame, as Bevy's `App::update` ends one: every despawn records a
        // `RemovedComponents` message per component, kept until the trackers are cleared. A world
        // run without an `App` that never clears them grows by about 100 bytes per removed entity
        // for as long as it churns (docs/results/reliability.md, "Soak: random actions against a
        // SoA reference").
        self.world.clear_trackers();
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let mut query = self.world.query::<(&Position<S, K>, &Health<S, K>)>();
        let query = query.query(&self.world);
        match query.contiguous_iter() {
            // Table storage: whole column slices, split across the pool like the other layouts.
            Ok(tables) => {
                let mut rest = out;
                for (positions, healths) in tables {
                    let (head, tail) = rest.split_at(positions.len());
                    rest = tail;
                    let c = chunk_len(threads, positions.len());
                    let parts =
                        sink_chunks(head, c).zip(positions.chunks(c).zip(healths.chunks(c)));
                    for_each_part(threads, parts, |(SinkPart(out), (positions, healths))| {
                        out.write_iter(
                            positions
                                .iter()
                                .zip(healths)
                                .map(|(p, h)| point_bytes(p.x, p.y, h.hp)),
                        );
                    });
                }
            }
            // Sparse sets are not dense: one pass in query order.
            Err(_) => {
                out.write_iter(query.iter().map(|(p, h)| point_bytes(p.x, p.y, h.hp)));
            }
        }
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        if self.read_columns(Rows::Range(range.clone()), visit) {
            return;
        }
        // Sparse sets, or a world `world_mut` gave more archetypes: one entity lookup per entity
        // through a prepared query, instead of one per component.
        self.visit_entities(self.entities[range].iter().copied(), visit);
    }

    fn for_each_entity_at(&self, at: &[usize], visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        if self.read_columns(Rows::At(at), visit) {
            return;
        }
        self.visit_entities(at.iter().map(|&i| self.entities[i]), visit);
    }

    fn marks(&mut self) -> Option<&mut dyn Marks> {
        Some(self)
    }

    fn memory(&self) -> MemoryUse {
        let len = self.len() as u64;
        MemoryUse {
            payload_bytes: len * (size_of::<EntityState<S>>() + size_of::<u64>()) as u64,
            // The model counts our list at its length; its slack is counted here.
            allocated_bytes: len * bytes_per_entity::<S>(K::TYPE) as u64
                + (self.entities.capacity() - self.entities.len()) as u64
                    * size_of::<Entity>() as u64
                + self.resolved.allocated_bytes(),
            modelled: true,
        }
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        if self.kernel == SeekKernel::Tuned && self.seek_resolved(dt, threads) {
            return;
        }
        let tier = self.tier;
        self.world.insert_resource(StepParams { dt, threads, tier });
        self.seek_schedule.run(&mut self.world);
    }

    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        self.spawn(ids, states, Some(targets));
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let mut positions = self.world.query::<&Position<S, K>>();
        let positions = positions.query(&self.world);
        let entities = &self.entities;
        let pushes = near.push_apart(threads, entities.len(), |i| {
            let p = positions
                .get(entities[i])
                .expect("every listed entity has a position");
            [p.x, p.y]
        });
        let mut velocities = self.world.query::<&mut Velocity<S, K>>();
        for (&entity, &push) in entities.iter().zip(pushes) {
            if let Ok(mut v) = velocities.get_mut(&mut self.world, entity) {
                (v.x, v.y) = avoid_one(v.x, v.y, push, dt);
            }
        }
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.resolved.invalidate();
        let mut query = self.world.query::<&mut SeekTarget<K>>();
        for (&seeker, target) in self.entities[first..].iter().zip(targets) {
            let target = target.map(|t| self.entities[t]);
            if let Ok(mut held) = query.get_mut(&mut self.world, seeker) {
                held.0 = target;
            }
        }
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        let target = self.world.get::<SeekTarget<K>>(self.entities[index])?.0?;
        Some(self.world.get::<EntityId<K>>(target)?.0)
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        if let Some(mut v) = self.world.get_mut::<Velocity<S, K>>(self.entities[index]) {
            (v.x, v.y) = (vx, vy);
        }
    }

    fn set_seek_kernel(&mut self, kernel: SeekKernel) -> SeekKernel {
        self.kernel = match self.variant {
            EcsVariant::Contiguous => kernel,
            EcsVariant::Table | EcsVariant::Sparse => SeekKernel::Idiomatic,
        };
        if self.kernel == SeekKernel::Idiomatic {
            self.resolved.release();
        }
        self.kernel
    }
}

impl<S: Scalar, K: Storage> EcsLayout<S, K> {
    /// The tuned seek kernel over the one table that holds every entity: each target resolved
    /// to its table row once (Bevy's own entity index: `Entities::get_spawned`), then a gather
    /// from the position column (`contiguous_iter`), prefetched ahead. `false`: the entities
    /// are not in one dense table (they always are in the tuned variant), and nothing ran.
    fn seek_resolved(&mut self, dt: S, threads: Threads) -> bool {
        let n = self.entities.len();
        if !self.resolved.is_fresh(n) {
            let mut state = self.world.query::<&SeekTarget<K>>();
            let Ok(mut tables) = state.contiguous_iter(&self.world) else {
                return false;
            };
            let (Some(targets), None) = (tables.next(), tables.next()) else {
                return n == 0;
            };
            if targets.len() != n {
                return false;
            }
            let entities = self.world.entities();
            self.resolved.get(threads, n, |i| {
                let location = entities.get_spawned(targets[i].0?).ok()?;
                Some(location.table_row.index())
            });
        }
        let mut state = self.world.query::<(&Position<S, K>, &mut Velocity<S, K>)>();
        let Ok(mut tables) = state.contiguous_iter_mut(&mut self.world) else {
            return false;
        };
        let (Some((positions, mut velocities)), None) = (tables.next(), tables.next()) else {
            return n == 0;
        };
        let velocities = velocities.bypass_change_detection();
        let resolved = self.resolved.get(threads, n, |_| None);
        seek_resolved_rows(threads, resolved, positions, velocities, dt);
        true
    }
}

impl<S: Scalar, K: Storage> InHostMemory for EcsLayout<S, K> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        let query = self.everything.query_manual(&self.world);
        for i in range {
            push_regions(i, self.components(&query, self.entities[i]), out);
        }
    }
}

impl<S: Scalar, K: Storage> EcsLayout<S, K> {
    /// The list of entities shrinks here; Bevy's tables cannot, so the swarm rebuilds the world
    /// when [`Layout::truncate`] says so.
    fn give_back_memory(&mut self) {
        shrink_if_sparse(&mut self.entities);
    }

    /// Sooner than the other layouts compact (half, not a quarter; from 16k entities): an ECS
    /// entity costs three to four times a `Vec` layout's bytes, and nothing of it comes back
    /// otherwise: after a shrink the kept tables would be a large share of the process
    /// (docs/results/reliability.md, "Soak: random actions against a SoA reference").
    fn released(&self) -> Released {
        // A world prepared for more than it holds (`prepare`) keeps its index's room as well.
        let held = self.high_water.max(self.world.entities().len() as usize);
        if held >= REBUILD_FROM && self.entities.len() < held / 2 {
            Released::RebuildWouldFree
        } else {
            Released::InPlace
        }
    }
}

/// An entity's id and state from its seven components, in any ECS that stores our structs
/// (Bevy's, hecs', flecs', shipyard's).
pub fn state_of<S: Scalar, K: Storage>(
    (id, p, v, h, e, r, a): Components<'_, S, K>,
) -> (u64, EntityState<S>) {
    let state = EntityState {
        x: p.x,
        y: p.y,
        vx: v.x,
        vy: v.y,
        hp: h.hp,
        energy: e.value,
        regen: r.per_second,
        armor: a.value,
    };
    (id.0, state)
}

/// One table's (archetype's, packed arrays') seven columns as slices, row for row: what a layout
/// switch reads out of an ECS instead of one lookup per entity.
pub struct Columns<'a, S: Scalar, K: Storage> {
    pub ids: &'a [EntityId<K>],
    pub positions: &'a [Position<S, K>],
    pub velocities: &'a [Velocity<S, K>],
    pub healths: &'a [Health<S, K>],
    pub energies: &'a [Energy<S, K>],
    pub regens: &'a [Regen<S, K>],
    pub armors: &'a [Armor<S, K>],
}

impl<S: Scalar, K: Storage> Columns<'_, S, K> {
    /// Visits `rows`, each as an entity's id and state.
    pub fn visit(&self, rows: &Rows<'_>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        rows.for_each(|r| {
            let (id, state) = state_of((
                &self.ids[r],
                &self.positions[r],
                &self.velocities[r],
                &self.healths[r],
                &self.energies[r],
                &self.regens[r],
                &self.armors[r],
            ));
            visit(id, &state);
        });
    }
}

/// The logical entities a bulk read visits: a stretch (a switch's chunk,
/// [`crate::layout::Layout::for_each_entity_in`]), or picks in any order (a reorder's,
/// [`crate::layout::Layout::for_each_entity_at`], where a lookup per entity through the
/// library cost more than the gather from its columns).
pub enum Rows<'a> {
    Range(Range<usize>),
    At(&'a [usize]),
}

impl Rows<'_> {
    pub fn is_empty(&self) -> bool {
        match self {
            Rows::Range(range) => range.is_empty(),
            Rows::At(at) => at.is_empty(),
        }
    }

    /// Each row, in order.
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        match self {
            Rows::Range(range) => range.clone().for_each(f),
            Rows::At(at) => at.iter().for_each(|&i| f(i)),
        }
    }

    /// Whether `f` holds for every row.
    pub fn all(&self, mut f: impl FnMut(usize) -> bool) -> bool {
        match self {
            Rows::Range(range) => range.clone().all(f),
            Rows::At(at) => at.iter().all(|&i| f(i)),
        }
    }
}

/// Whether the storage's `rows` hold the list's entities at the same places: then row *i* of
/// the one table is logical entity *i*. Every ECS here removes an entity by moving its table's
/// last row into the hole, as the swarm's logical order does (`swap_remove`), and appends
/// spawns, so the two stay aligned while one table holds everyone; this check is what lets a
/// bulk read rely on it, and the per-entity lookups remain the way when it fails.
pub fn rows_are_logical<E: PartialEq>(rows: &[E], list: &[E], which: &Rows<'_>) -> bool {
    rows.len() == list.len()
        && match which {
            Rows::Range(range) => rows.get(range.clone()) == list.get(range.clone()),
            Rows::At(_) => which.all(|i| rows.get(i) == list.get(i)),
        }
}

/// Where an entity's seven components sit, from references into any ECS's live storage.
pub fn push_regions<S: Scalar, K: Storage>(
    entity: usize,
    (id, p, v, h, e, r, a): Components<'_, S, K>,
    out: &mut Vec<Region>,
) {
    for (value, field) in [
        (&p.x, Field::X),
        (&p.y, Field::Y),
        (&v.x, Field::Vx),
        (&v.y, Field::Vy),
        (&h.hp, Field::Hp),
        (&e.value, Field::Energy),
        (&r.per_second, Field::Regen),
        (&a.value, Field::Armor),
    ] {
        out.push(Region::of(value, field, entity));
    }
    out.push(Region::of(&id.0, Field::Id, entity));
}

/// What Bevy stores per entity for our eight components, counted from its storage design:
/// per component the value plus two change ticks (added, changed: 4 B each), plus the table's and
/// the archetype's entity lists, the entity's record (location, generation, spawn tick) and our
/// own list of handles. In
/// sparse sets, each component also keeps its own entity list and a slot in its sparse array.
/// Capacities are not public, so growth slack is not included; the bench measures resident
/// memory to cover that, and `tests/estimates.rs` holds the estimate made from this to what the
/// heap really gives. The one model of the ECS's bytes per entity: the memory check and the
/// readout both use it.
pub fn bytes_per_entity<S: Scalar>(storage: StorageType) -> usize {
    const COMPONENTS: usize = 8;
    let values = size_of::<EntityState<S>>() + size_of::<u64>() + size_of::<Option<Entity>>();
    let ticks = COMPONENTS * 2 * 4;
    let table_entities = size_of::<Entity>();
    let archetype_entities = size_of::<Entity>() + 4;
    // The entity's record: its location, its generation and the tick it was spawned at.
    let location = size_of::<bevy_ecs::entity::EntityLocation>() + 4 + 4;
    let ours = size_of::<Entity>();
    let sparse_sets = match storage {
        StorageType::Table => 0,
        StorageType::SparseSet => COMPONENTS * (size_of::<Entity>() + 4),
    };
    values + ticks + table_entities + archetype_entities + location + ours + sparse_sets
}

impl<S: Scalar, K: Storage> Marks for EcsLayout<S, K> {
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let mut e = self.world_mut().entity_mut(entity);
        with_marker!(bit, M => { e.insert(M {}); });
    }

    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let mut e = self.world_mut().entity_mut(entity);
        with_marker!(bit, M => { e.remove::<M>(); });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::regions::Field;

    /// Whether `r` lies inside the bytes of `slice`.
    fn inside<T>(r: &Region, slice: &[T]) -> bool {
        let start = slice.as_ptr().addr();
        r.addr >= start && r.end() <= start + size_of_val(slice)
    }

    /// A world prepared for far more than it holds says a rebuild would free memory, as one
    /// that shrank does: its index keeps the room it was prepared with.
    #[test]
    fn a_world_prepared_for_more_than_it_holds_asks_for_a_rebuild() {
        let n = 2 * REBUILD_FROM;
        let mut states = Vec::new();
        crate::workload::spawn_range(
            crate::workload::SpawnPattern::default(),
            3,
            0,
            n,
            &mut states,
        );
        let ids: Vec<u64> = (0..n as u64).collect();
        let mut prepared = EcsLayout::<f32>::table();
        prepared.prepare(n);
        // Bevy's index holds the count and `WORLD_IDS` more: past half of it, nothing to free.
        let half = n / 2 + WORLD_IDS as usize;
        prepared.push(&ids[..half], &states[..half]);
        assert_eq!(prepared.released(), Released::InPlace, "half full");
        // Above half of what it held (the high water), below half of the index's room.
        let kept = 3 * REBUILD_FROM / 4;
        assert_eq!(prepared.truncate(kept), Released::RebuildWouldFree);
        let mut plain = EcsLayout::<f32>::table();
        plain.push(&ids[..kept], &states[..kept]);
        assert_eq!(plain.released(), Released::InPlace, "never held more");
    }

    /// A prepared world takes its spawns on the ids set aside, so Bevy's entity index never
    /// grows while it fills (the growth that stalls a frame), and it holds what was pushed.
    #[test]
    fn a_prepared_world_fills_without_growing_bevys_entity_index() {
        let n = 50_000;
        let mut states = Vec::new();
        crate::workload::spawn_range(
            crate::workload::SpawnPattern::default(),
            3,
            0,
            n,
            &mut states,
        );
        let ids: Vec<u64> = (0..n as u64).collect();
        let mut plain = EcsLayout::<f32>::table();
        let mut prepared = EcsLayout::<f32>::table();
        prepared.prepare(n);
        let index_len = prepared.world.entities().len();
        assert!(index_len as usize > n, "the index grown up front");
        for (layout, batches) in [(&mut plain, 7), (&mut prepared, 7)] {
            for k in 0..batches {
                let r = k * n / batches..(k + 1) * n / batches;
                layout.push(&ids[r.clone()], &states[r]);
            }
        }
        // The first frame runs the schedules for the first time, which take ids of their own.
        for layout in [&mut plain, &mut prepared] {
            layout.step_move(0.01, crate::threads::Threads::One);
            layout.step_regen(0.01, crate::threads::Threads::One);
            layout.step_seek(0.01, crate::threads::Threads::One);
        }
        assert_eq!(
            prepared.world.entities().len(),
            index_len,
            "no growth while filling, nor in the first frame"
        );
        let read = |layout: &EcsLayout<f32>| {
            let mut seen = Vec::new();
            layout.for_each_entity_in(0..n, &mut |id, s| seen.push((id, *s)));
            seen
        };
        assert_eq!(read(&prepared), read(&plain));
        assert_eq!(read(&prepared).len(), n);
    }

    #[test]
    fn regions_lie_inside_bevys_column_slices() {
        for mut layout in [EcsLayout::<f32>::table(), EcsLayout::<f32>::contiguous()] {
            let mut states = Vec::new();
            crate::workload::spawn_range(
                crate::workload::SpawnPattern::default(),
                1,
                0,
                1000,
                &mut states,
            );
            let ids: Vec<u64> = (0..1000).collect();
            layout.push(&ids, &states);
            let mut regions = Vec::new();
            layout.regions(0..1000, &mut regions);
            let mut state = layout
                .world
                .query::<(&Position<f32, InTable>, &Health<f32, InTable>)>();
            let query = state.query(&layout.world);
            let tables: Vec<_> = query.contiguous_iter().unwrap().collect();
            assert_eq!(tables.len(), 1, "one archetype, one table");
            let (positions, healths) = tables[0];
            assert_eq!(positions.len(), 1000);
            for r in &regions {
                match r.field {
                    Field::X | Field::Y => assert!(inside(r, positions), "{r:?}"),
                    Field::Hp => assert!(inside(r, healths), "{r:?}"),
                    _ => assert!(!inside(r, positions) && !inside(r, healths), "{r:?}"),
                }
            }
        }
    }
}

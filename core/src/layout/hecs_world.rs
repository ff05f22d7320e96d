//! hecs: a small, flat archetype ECS in pure Rust. Like Bevy, it keeps the entities of one
//! component set in an archetype, one column per component; unlike Bevy it keeps no change ticks
//! and has no scheduler, so a system is a plain function over a query.
//!
//! Forms:
//! - **idiomatic**: `World::query_mut` iterated with a `for` loop, as hecs' README writes a
//!   system; on all cores `World::query` with `iter_batched`, which hecs documents as its way
//!   of handing work to a thread pool (it has none of its own: the batches go to ours).
//! - **tuned**: `World::archetypes` and `Archetype::get` hand out each archetype's columns as
//!   slices, and the loop is Bevy's tuned one ([`crate::layout::interleaved`]), per SIMD tier.
//!
//! The components are the same structs the Bevy layouts store (`Position { x, y }` and so on), so
//! both libraries hold the same bytes per entity.
//!
//! Seeking: each entity holds its target as a `hecs::Entity` in a component ([`HecsTarget`]). The
//! idiomatic system reads the target's position with `World::get` (a borrow check per call); the
//! tuned layout walks the seekers' archetype columns and looks targets up through one `View`
//! (`World::view`: one borrow for the whole pass, then an O(1) lookup per entity). Its tuned
//! seek kernel ([`SeekKernel::Tuned`]) resolves every target to its row once, from
//! `Archetype::ids`, and gathers from the position column with a prefetch ahead.

use std::ops::Range;

use hecs::{Entity, World};

use crate::layout::components::{
    Armor, Components, Energy, EntityId, Health, InTable, Position, Regen, Velocity,
};
use crate::layout::ecs::{Columns, Rows, push_regions, state_of};
use crate::layout::interleaved::{MoveInterleaved, RegenTable};
use crate::layout::listed::Listed;
use crate::layout::markers::with_marker;
use crate::layout::regions::Region;
use crate::layout::seeking::{
    NO_TARGET, ResolvedTargets, SeekKernel, born_with, seek_resolved_rows,
};
use crate::layout::{InHostMemory, Marks, Released};
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::scalar::Scalar;
use crate::simd::{self, SimdTier};
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{
    EntityState, PointSink, SinkPart, avoid_one, move_one, point_bytes, regen_one, seek_one,
    sink_chunks,
};

type Pos<S> = Position<S, InTable>;
type Vel<S> = Velocity<S, InTable>;

/// Every component of an entity, as it is spawned.
type Bundle<S> = (
    EntityId<InTable>,
    Pos<S>,
    Vel<S>,
    Health<S, InTable>,
    Energy<S, InTable>,
    Regen<S, InTable>,
    Armor<S, InTable>,
    HecsTarget,
);

/// The entity this one seeks, as hecs code holds another entity (none for a seeker without a
/// target; a despawned one is found missing by the lookup).
pub struct HecsTarget(pub Option<Entity>);

/// An entity's id and all six components, read-only.
type Everything<'a, S> = Components<'a, S, InTable>;

pub struct HecsLayout<S: Scalar> {
    tuned: bool,
    /// The seek kernel asked for (the tuned layout's), and its targets resolved to rows.
    kernel: SeekKernel,
    resolved: ResolvedTargets,
    world: World,
    entities: Listed<Entity>,
    tier: SimdTier,
    _scalar: std::marker::PhantomData<fn() -> S>,
}

impl<S: Scalar> HecsLayout<S> {
    /// A switch's read: the one archetype's columns (`Archetype::get`, hecs' own bulk access),
    /// row for row, when its rows are the logical order (hecs' despawn moves the last row into
    /// the hole, as the swarm's `swap_remove` does; checked id by id). `false`: nothing visited.
    fn read_columns(&self, which: Rows<'_>, visit: &mut dyn FnMut(u64, &EntityState<S>)) -> bool {
        let mut filled = self.world.archetypes().filter(|a| !a.is_empty());
        let (Some(archetype), None) = (filled.next(), filled.next()) else {
            return which.is_empty();
        };
        let list = self.entities.as_slice();
        let rows = archetype.ids();
        let aligned = rows.len() == list.len()
            && which.all(|i| {
                rows.get(i)
                    .zip(list.get(i))
                    .is_some_and(|(&r, e)| r == e.id())
            });
        let (true, Some(ids), Some(positions), Some(velocities)) = (
            aligned,
            archetype.get::<&EntityId<InTable>>(),
            archetype.get::<&Pos<S>>(),
            archetype.get::<&Vel<S>>(),
        ) else {
            return false;
        };
        let (Some(healths), Some(energies), Some(regens), Some(armors)) = (
            archetype.get::<&Health<S, InTable>>(),
            archetype.get::<&Energy<S, InTable>>(),
            archetype.get::<&Regen<S, InTable>>(),
            archetype.get::<&Armor<S, InTable>>(),
        ) else {
            return false;
        };
        Columns {
            ids: &ids,
            positions: &positions,
            velocities: &velocities,
            healths: &healths,
            energies: &energies,
            regens: &regens,
            armors: &armors,
        }
        .visit(&which, visit);
        true
    }

    pub fn new(tuned: bool) -> Self {
        crate::threads::pool();
        Self {
            tuned,
            kernel: SeekKernel::Idiomatic,
            resolved: ResolvedTargets::default(),
            world: World::new(),
            entities: Listed::default(),
            tier: SimdTier::Baseline,
            _scalar: std::marker::PhantomData,
        }
    }

    /// Spawns a batch (`spawn_batch`), each entity born with its target where that target is
    /// already spawned; targets among the batch itself are set once it is.
    fn spawn(&mut self, ids: &[u64], states: &[EntityState<S>], targets: Option<&[Option<usize>]>) {
        let first = self.entities.len();
        let born_with = born_with(self.entities.as_slice(), targets);
        let born_with = |k: usize| born_with.get(k).copied().flatten();
        let bundles = ids.iter().zip(states).enumerate().map(|(k, (&id, s))| {
            (
                EntityId::<InTable>::new(id),
                Pos::<S>::new(s.x, s.y),
                Vel::<S>::new(s.vx, s.vy),
                Health::<S, InTable>::new(s.hp),
                Energy::<S, InTable>::new(s.energy),
                Regen::<S, InTable>::new(s.regen),
                Armor::<S, InTable>::new(s.armor),
                HecsTarget(born_with(k)),
            )
        });
        let spawned: Vec<Entity> = self.world.spawn_batch(bundles).collect();
        self.resolved.invalidate();
        self.entities.extend(spawned);
        if let Some(targets) = targets {
            for (k, &t) in targets.iter().enumerate() {
                if t.is_some_and(|t| t >= first) {
                    self.set_targets(first + k, &[t]);
                }
            }
        }
    }

    /// Each of `entities`, looked up through one view of all seven components.
    fn visit_entities(
        &self,
        entities: impl IntoIterator<Item = Entity>,
        visit: &mut dyn FnMut(u64, &EntityState<S>),
    ) {
        let view = self.world.view::<Everything<'_, S>>();
        for entity in entities {
            let components = view.get(entity).expect("every listed entity has all seven");
            let (id, state) = state_of(components);
            visit(id, &state);
        }
    }

    /// The world, for experiments that use hecs directly (migration).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Entities in logical order.
    pub fn entities(&self) -> &[Entity] {
        self.entities.as_slice()
    }

    fn with_entity<R>(&self, entity: Entity, f: impl FnOnce(Everything<'_, S>) -> R) -> R {
        let mut query = self.world.query_one::<Everything<'_, S>>(entity);
        f(query
            .get()
            .expect("every listed entity is alive, with all seven components"))
    }
}

impl<S: Scalar> Layout<S> for HecsLayout<S> {
    fn kind(&self) -> LayoutKind {
        if self.tuned {
            LayoutKind::HecsTuned
        } else {
            LayoutKind::Hecs
        }
    }

    fn len(&self) -> usize {
        self.entities.len()
    }

    fn set_simd(&mut self, tier: SimdTier) -> SimdTier {
        if self.tuned {
            self.tier = tier;
        }
        self.tier
    }

    /// Room for the whole population in the archetype now (`World::reserve`), so that a switch
    /// or a growth at 10M does not copy the archetype's columns as they double, a stall of one
    /// frame (`bench --only switch`: docs/results/switching.md).
    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.entities
            .try_reserve(additional, bytes_per_entity::<S>())?;
        self.world
            .reserve::<Bundle<S>>(u32::try_from(additional).unwrap_or(u32::MAX));
        Ok(())
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.spawn(ids, states, None);
    }

    fn swap_remove(&mut self, index: usize) {
        let entity = self.entities.swap_remove(index);
        self.resolved.invalidate();
        self.world
            .despawn(entity)
            .expect("every listed entity is alive");
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.resolved.invalidate();
        for entity in self.entities.drain_from(len) {
            self.world
                .despawn(entity)
                .expect("every listed entity is alive");
        }
        self.give_back_memory();
        self.released()
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        if self.tuned {
            let tier = self.tier;
            for archetype in self.world.archetypes() {
                let (Some(mut positions), Some(velocities)) =
                    (archetype.get::<&mut Pos<S>>(), archetype.get::<&Vel<S>>())
                else {
                    continue;
                };
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
            return;
        }
        let step = |(p, v): (&mut Pos<S>, &Vel<S>)| (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
        match threads {
            Threads::One => self
                .world
                .query_mut::<(&mut Pos<S>, &Vel<S>)>()
                .into_iter()
                .for_each(step),
            Threads::All => {
                let batch = chunk_len(threads, self.len()) as u32;
                let mut query = self.world.query::<(&mut Pos<S>, &Vel<S>)>();
                for_each_part(threads, query.iter_batched(batch), |batch| {
                    batch.for_each(step)
                });
            }
        }
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        type Ene<S> = Energy<S, InTable>;
        type Reg<S> = Regen<S, InTable>;
        if self.tuned {
            let tier = self.tier;
            for archetype in self.world.archetypes() {
                let (Some(mut energies), Some(regens)) =
                    (archetype.get::<&mut Ene<S>>(), archetype.get::<&Reg<S>>())
                else {
                    continue;
                };
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
            return;
        }
        let step = |(e, r): (&mut Ene<S>, &Reg<S>)| e.value = regen_one(e.value, r.per_second, dt);
        match threads {
            Threads::One => self
                .world
                .query_mut::<(&mut Ene<S>, &Reg<S>)>()
                .into_iter()
                .for_each(step),
            Threads::All => {
                let batch = chunk_len(threads, self.len()) as u32;
                let mut query = self.world.query::<(&mut Ene<S>, &Reg<S>)>();
                for_each_part(threads, query.iter_batched(batch), |batch| {
                    batch.for_each(step)
                });
            }
        }
    }

    /// Archetype by archetype, the columns split across the pool: both forms draw alike.
    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let mut rest = out;
        for archetype in self.world.archetypes() {
            let (Some(positions), Some(healths)) = (
                archetype.get::<&Pos<S>>(),
                archetype.get::<&Health<S, InTable>>(),
            ) else {
                continue;
            };
            let (head, tail) = rest.split_at(positions.len());
            rest = tail;
            let c = chunk_len(threads, positions.len());
            let parts = sink_chunks(head, c).zip(positions.chunks(c).zip(healths.chunks(c)));
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

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        if self.read_columns(Rows::Range(range.clone()), visit) {
            return;
        }
        self.visit_entities(self.entities.as_slice()[range].iter().copied(), visit);
    }

    fn for_each_entity_at(&self, at: &[usize], visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        if self.read_columns(Rows::At(at), visit) {
            return;
        }
        self.visit_entities(at.iter().map(|&i| self.entities.get(i)), visit);
    }

    fn marks(&mut self) -> Option<&mut dyn Marks> {
        Some(self)
    }

    fn memory(&self) -> MemoryUse {
        let len = self.len() as u64;
        MemoryUse {
            payload_bytes: len * (size_of::<EntityState<S>>() + size_of::<u64>()) as u64,
            allocated_bytes: len * bytes_per_entity::<S>() as u64
                + self.entities.allocated_bytes()
                + self.resolved.allocated_bytes(),
            modelled: true,
        }
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        if self.kernel == SeekKernel::Tuned && self.seek_resolved(dt, threads) {
            return;
        }
        let world = &self.world;
        if self.tuned {
            let view = world.view::<&Pos<S>>();
            let view = &view;
            for archetype in world.archetypes() {
                let (Some(own), Some(mut velocities), Some(targets)) = (
                    archetype.get::<&Pos<S>>(),
                    archetype.get::<&mut Vel<S>>(),
                    archetype.get::<&HecsTarget>(),
                ) else {
                    continue;
                };
                let c = chunk_len(threads, velocities.len());
                let parts = velocities
                    .chunks_mut(c)
                    .zip(own.chunks(c).zip(targets.chunks(c)));
                for_each_part(threads, parts, |(velocities, (own, targets))| {
                    seek_part_through_view(view, velocities, own, targets, dt)
                });
            }
            return;
        }
        let step = |(p, v, target): (&Pos<S>, &mut Vel<S>, &HecsTarget)| {
            if let Some(t) = target.0.and_then(|e| world.get::<&Pos<S>>(e).ok()) {
                (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
            }
        };
        let mut query = world.query::<(&Pos<S>, &mut Vel<S>, &HecsTarget)>();
        match threads {
            Threads::One => query.iter().for_each(step),
            Threads::All => {
                let batch = chunk_len(threads, self.entities.len()) as u32;
                for_each_part(threads, query.iter_batched(batch), |batch| {
                    batch.for_each(step)
                });
            }
        }
    }

    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        self.spawn(ids, states, Some(targets));
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let (world, entities) = (&self.world, self.entities.as_slice());
        let pushes = near.push_apart(threads, entities.len(), |i| {
            let p = world
                .get::<&Pos<S>>(entities[i])
                .expect("every listed entity has a position");
            [p.x, p.y]
        });
        let mut velocities = self.world.view_mut::<&mut Vel<S>>();
        for (&entity, &push) in entities.iter().zip(pushes) {
            if let Some(v) = velocities.get_mut(entity) {
                (v.x, v.y) = avoid_one(v.x, v.y, push, dt);
            }
        }
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.resolved.invalidate();
        let entities = self.entities.as_slice();
        for (&seeker, target) in entities[first..].iter().zip(targets) {
            if let Ok(mut held) = self.world.get::<&mut HecsTarget>(seeker) {
                held.0 = target.map(|t| entities[t]);
            }
        }
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        let seeker = self.entities.get(index);
        let target = self.world.get::<&HecsTarget>(seeker).ok()?.0?;
        let id = self.world.get::<&EntityId<InTable>>(target).ok()?;
        Some(id.0)
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        if let Ok(mut v) = self.world.get::<&mut Vel<S>>(self.entities.get(index)) {
            (v.x, v.y) = (vx, vy);
        }
    }

    fn set_seek_kernel(&mut self, kernel: SeekKernel) -> SeekKernel {
        self.kernel = if self.tuned {
            kernel
        } else {
            SeekKernel::Idiomatic
        };
        if self.kernel == SeekKernel::Idiomatic {
            self.resolved.release();
        }
        self.kernel
    }
}

/// The tuned layout's idiomatic seek over one part of an archetype: each target's position
/// looked up through the pass's one `View`.
///
/// Out of line on purpose: inlined into `step_seek`, beside the tuned kernel's branch, its loop
/// spills and reloads values on the stack each entity, more instructions and L1d accesses per
/// entity than out of line (`cargo bench --bench counts`, `hecs-tuned seek`;
/// benches/counts-baseline.json holds the counts).
#[inline(never)]
fn seek_part_through_view<S: Scalar>(
    view: &hecs::ViewBorrow<'_, &Pos<S>>,
    velocities: &mut [Vel<S>],
    own: &[Pos<S>],
    targets: &[HecsTarget],
    dt: S,
) {
    for ((v, p), target) in velocities.iter_mut().zip(own).zip(targets) {
        if let Some(t) = target.0.and_then(|e| view.get(e)) {
            (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
        }
    }
}

impl<S: Scalar> HecsLayout<S> {
    /// The tuned seek kernel over the one archetype that holds every entity: each target
    /// resolved to its row once (a live handle's id, found in `Archetype::ids`), then a gather
    /// from the position column, prefetched ahead. `false`: the entities are spread over more
    /// than one archetype (they never are here), and nothing ran.
    fn seek_resolved(&mut self, dt: S, threads: Threads) -> bool {
        let Self {
            world, resolved, ..
        } = self;
        let mut filled = world.archetypes().filter(|a| !a.is_empty());
        let (Some(archetype), None) = (filled.next(), filled.next()) else {
            return world.is_empty();
        };
        let (Some(positions), Some(mut velocities), Some(targets)) = (
            archetype.get::<&Pos<S>>(),
            archetype.get::<&mut Vel<S>>(),
            archetype.get::<&HecsTarget>(),
        ) else {
            return false;
        };
        let (rows, targets): (&[u32], &[HecsTarget]) = (archetype.ids(), &targets);
        // Each entity id's row, built only when the targets must be resolved again.
        let mut row_of = Vec::new();
        if !resolved.is_fresh(rows.len()) {
            let ids = rows.iter().map(|&id| id as usize + 1).max().unwrap_or(0);
            row_of = vec![NO_TARGET; ids];
            for (row, &id) in rows.iter().enumerate() {
                row_of[id as usize] = row as u32;
            }
        }
        let resolved = resolved.get(threads, rows.len(), |i| {
            let target = targets[i].0.filter(|&e| world.contains(e))?;
            row_of
                .get(target.id() as usize)
                .filter(|&&row| row != NO_TARGET)
                .map(|&row| row as usize)
        });
        seek_resolved_rows(threads, resolved, &positions, &mut velocities, dt);
        true
    }
}

impl<S: Scalar> InHostMemory for HecsLayout<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            self.with_entity(self.entities.get(i), |components| {
                push_regions(i, components, out)
            });
        }
    }
}

impl<S: Scalar> HecsLayout<S> {
    fn give_back_memory(&mut self) {
        self.entities.release_unused();
    }

    /// hecs' archetypes keep their capacity: after a big shrink the swarm rebuilds the world.
    fn released(&self) -> Released {
        if self.entities.rebuild_due() {
            Released::RebuildWouldFree
        } else {
            Released::InPlace
        }
    }
}

/// What hecs stores per entity for our seven components, counted from its design: the values
/// (no change ticks), the archetype's entity-id column (`u32`) and the entity's meta record
/// (generation and location: three `u32`s), plus our list's handle.
pub fn bytes_per_entity<S: Scalar>() -> usize {
    size_of::<EntityState<S>>()
        + size_of::<u64>()
        + size_of::<HecsTarget>()
        + 4
        + 12
        + size_of::<Entity>()
}

impl<S: Scalar> Marks for HecsLayout<S> {
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => world.insert_one(entity, M {}).expect("a listed entity"));
    }

    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => { world.remove_one::<M>(entity).expect("a marked entity"); });
    }
}

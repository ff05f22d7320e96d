//! shipyard: sparse sets, the model of EnTT. Each component type is its own packed array (the
//! values, densely, and the entity of each) with a sparse index from entity to slot, so adding or
//! removing one component never moves the others; the price is that a system over two
//! components walks one array and finds the other's slot through the sparse index, entity by
//! entity.
//!
//! Forms:
//! - **idiomatic**: `World::run` with a `ViewMut` and a `View`, iterated as `(&mut a, &b).iter()`
//!   (on all cores `par_iter`, shipyard's rayon-backed iterator), as its guide writes a system.
//! - **tuned**: one packed array walked alone (`(&mut positions).iter()`, which shipyard iterates
//!   without the sparse lookup) beside the other component's packed values
//!   (`View::as_slice`): both arrays list the entities in the same order here, because every
//!   entity is added with all its components in one call and deleted whole (each storage
//!   swap-removes the same slot). Public API only, and the equivalence tests check the result
//!   bit for bit. shipyard has no parallel form of that walk, so on all cores the tuned form runs
//!   the idiomatic `par_iter`.
//!
//! The components are the same structs the Bevy layouts store.
//!
//! Seeking: each entity holds its target as a shipyard `EntityId` in a component
//! ([`ShipyardTarget`]), read through the positions' sparse set (`Get` on a `View`, which checks
//! the entity's generation). The idiomatic system iterates `(&positions, &mut velocities,
//! &targets)`; the tuned one walks the velocities' packed array alone beside the other two's
//! packed values, as its move does. Its tuned seek kernel ([`SeekKernel::Tuned`]) resolves every
//! target to its slot in the positions' packed array once (`SparseSet::index_of`), and gathers
//! from that array with a prefetch ahead; on all cores it runs the idiomatic `par_iter`, as its
//! move does (shipyard lends no packed array mutably, so the walk cannot be split).

use std::ops::Range;

use shipyard::{EntitiesViewMut, EntityId, Get, IntoIter, View, ViewMut, World, track};

use crate::layout::components::{
    Armor, Energy, EntityId as OurId, Health, InTable, Position, Regen, Storage, Velocity,
};
use crate::layout::ecs::{Columns, Rows, push_regions, state_of};
use crate::layout::listed::{Listed, OrderProof};
use crate::layout::markers::with_marker;
use crate::layout::regions::Region;
use crate::layout::seeking::{
    NO_TARGET, PREFETCH_AHEAD, ResolvedTargets, SeekKernel, born_with, prefetch,
};
use crate::layout::{InHostMemory, Marks, Released};
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::scalar::Scalar;
use crate::simd::{self, Kernel, SimdTier};
use crate::threads::Threads;
use crate::workload::{
    EntityState, PointSink, avoid_one, move_one, point_bytes, regen_one, seek_one,
    seek_one_unpredictable,
};

type Pos<S> = Position<S, InTable>;
type Vel<S> = Velocity<S, InTable>;
type Hp<S> = Health<S, InTable>;
type Ene<S> = Energy<S, InTable>;
type Reg<S> = Regen<S, InTable>;
type Arm<S> = Armor<S, InTable>;

macro_rules! shipyard_component {
    ($($name:ident),+) => {
        $(impl<S: Scalar, K: Storage> shipyard::Component for $name<S, K> {
            type Tracking = track::Untracked;
        })+
    };
}
shipyard_component!(Position, Velocity, Health, Energy, Regen, Armor);

impl<K: Storage> shipyard::Component for OurId<K> {
    type Tracking = track::Untracked;
}

/// The entity this one seeks, as shipyard code holds another entity (none for a seeker without a
/// target).
pub struct ShipyardTarget(pub Option<EntityId>);

impl shipyard::Component for ShipyardTarget {
    type Tracking = track::Untracked;
}

/// The seek system for one entity: the target's position through the positions' sparse set.
#[inline]
fn seek_through<S: Scalar>(
    positions: &View<'_, Pos<S>>,
    p: &Pos<S>,
    v: &mut Vel<S>,
    target: &ShipyardTarget,
    dt: S,
) {
    if let Some(t) = target.0.and_then(|e| positions.get(e).ok()) {
        (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
    }
}

/// The seven views a read of whole entities borrows.
type AllViews<'v, S> = (
    View<'v, OurId<InTable>>,
    View<'v, Pos<S>>,
    View<'v, Vel<S>>,
    View<'v, Hp<S>>,
    View<'v, Ene<S>>,
    View<'v, Reg<S>>,
    View<'v, Arm<S>>,
);

pub struct ShipyardLayout<S: Scalar> {
    tuned: bool,
    /// The seek kernel asked for (the tuned layout's), and its targets resolved to slots.
    kernel: SeekKernel,
    resolved: ResolvedTargets,
    world: World,
    entities: Listed<EntityId>,
    /// Entities deleted and not yet replaced: the ids shipyard holds for reuse ([`Self::spawn`]).
    reusable: usize,
    /// Where the packed arrays are proved to hold `entities` row for row ([`Self::read_columns`]).
    order_proof: OrderProof,
    tier: SimdTier,
    _scalar: std::marker::PhantomData<fn() -> S>,
}

impl<S: Scalar> ShipyardLayout<S> {
    pub fn new(tuned: bool) -> Self {
        Self {
            tuned,
            kernel: SeekKernel::Idiomatic,
            resolved: ResolvedTargets::default(),
            world: World::new(),
            entities: Listed::default(),
            reusable: 0,
            order_proof: OrderProof::default(),
            tier: SimdTier::Baseline,
            _scalar: std::marker::PhantomData,
        }
    }

    /// Adds a batch, each entity born with its target where that target is already added;
    /// targets among the batch itself are set once it is. The ids deleted entities left are
    /// taken first, one entity at a time with every storage borrowed once; the rest go in one
    /// `bulk_add_entity`. A bulk add always takes fresh ids (shipyard 0.11's `bulk_generate`),
    /// so a world that churned through bulk adds alone would grow its entity index, and every
    /// component's sparse array with it, by each spawn, without bound (`replay` of `count 1343`,
    /// `churn 7973` shows it; the soak's seed 765187552).
    fn spawn(&mut self, ids: &[u64], states: &[EntityState<S>], targets: Option<&[Option<usize>]>) {
        self.resolved.invalidate();
        let first = self.entities.len();
        let born_with = born_with(self.entities.as_slice(), targets);
        let born_with = |k: usize| born_with.get(k).copied().flatten();
        let bundle = |k: usize| {
            let (id, s) = (ids[k], &states[k]);
            (
                OurId::<InTable>::new(id),
                Pos::<S>::new(s.x, s.y),
                Vel::<S>::new(s.vx, s.vy),
                Hp::<S>::new(s.hp),
                Ene::<S>::new(s.energy),
                Reg::<S>::new(s.regen),
                Arm::<S>::new(s.armor),
                ShipyardTarget(born_with(k)),
            )
        };
        let reused = self.reusable.min(ids.len());
        self.reusable -= reused;
        let mut spawned: Vec<EntityId> = Vec::with_capacity(ids.len());
        if reused > 0 {
            self.world.run(
                |mut entities: EntitiesViewMut,
                 mut our_ids: ViewMut<OurId<InTable>>,
                 mut positions: ViewMut<Pos<S>>,
                 mut velocities: ViewMut<Vel<S>>,
                 mut healths: ViewMut<Hp<S>>,
                 mut energies: ViewMut<Ene<S>>,
                 mut regens: ViewMut<Reg<S>>,
                 mut armors: ViewMut<Arm<S>>,
                 mut targets: ViewMut<ShipyardTarget>| {
                    for k in 0..reused {
                        let storages = (
                            &mut our_ids,
                            &mut positions,
                            &mut velocities,
                            &mut healths,
                            &mut energies,
                            &mut regens,
                            &mut armors,
                            &mut targets,
                        );
                        spawned.push(entities.add_entity(storages, bundle(k)));
                    }
                },
            );
        }
        // Not with nothing left: shipyard 0.11's bulk add indexes its last new entity even
        // when there is none (out of bounds).
        if reused < ids.len() {
            spawned.extend(self.world.bulk_add_entity((reused..ids.len()).map(bundle)));
        }
        self.entities.extend(spawned);
        if let Some(targets) = targets {
            // One borrow of the storage for the whole batch, not one `World::run` per entity.
            let entities = self.entities.as_slice();
            self.world.run(|mut held: ViewMut<ShipyardTarget>| {
                for (k, &t) in targets.iter().enumerate() {
                    let Some(t) = t.filter(|&t| t >= first) else {
                        continue;
                    };
                    if let Ok(mut slot) = (&mut held).get(entities[first + k]) {
                        slot.0 = Some(entities[t]);
                    }
                }
            });
        }
    }

    /// The world, for experiments that use shipyard directly (migration).
    pub fn world_mut(&mut self) -> &mut World {
        self.order_proof.forget();
        &mut self.world
    }

    /// Entities in logical order.
    pub fn entities(&self) -> &[EntityId] {
        self.entities.as_slice()
    }

    /// A switch's read: the seven packed arrays (`SparseSet::as_slice`), row for row, when each
    /// array's rows are the logical order (shipyard's delete moves each array's last row into
    /// the hole, as the swarm's `swap_remove` does; proved a block of rows at a time in every
    /// array, until the next add or removal: [`OrderProof`]).
    /// `false`: nothing was visited.
    fn read_columns(&self, which: Rows<'_>, visit: &mut dyn FnMut(u64, &EntityState<S>)) -> bool {
        let (id, p, v, h, e, r, a) = self.views();
        let len = self.entities.len();
        let lengths = [
            id.len(),
            p.len(),
            v.len(),
            h.len(),
            e.len(),
            r.len(),
            a.len(),
        ];
        let aligned = lengths.iter().all(|&n| n == len)
            && self.order_proof.rows_hold(&self.entities, &which, |k| {
                let entity = Some(self.entities.get(k));
                [id.id_at(k), p.id_at(k), v.id_at(k), h.id_at(k)]
                    .into_iter()
                    .chain([e.id_at(k), r.id_at(k), a.id_at(k)])
                    .all(|at| at == entity)
            });
        if !aligned {
            return false;
        }
        Columns {
            ids: id.as_slice(),
            positions: p.as_slice(),
            velocities: v.as_slice(),
            healths: h.as_slice(),
            energies: e.as_slice(),
            regens: r.as_slice(),
            armors: a.as_slice(),
        }
        .visit(&which, visit);
        true
    }

    /// Each of `entities`, read through one set of views.
    fn visit_entities(
        &self,
        entities: impl IntoIterator<Item = EntityId>,
        visit: &mut dyn FnMut(u64, &EntityState<S>),
    ) {
        let (id, p, v, h, e, r, a) = self.views();
        for entity in entities {
            let (id, state) = state_of((
                &id[entity],
                &p[entity],
                &v[entity],
                &h[entity],
                &e[entity],
                &r[entity],
                &a[entity],
            ));
            visit(id, &state);
        }
    }

    fn views(&self) -> AllViews<'_, S> {
        self.world
            .borrow::<AllViews<'_, S>>()
            .expect("nothing else borrows the storages")
    }
}

/// The tuned move: the packed positions walked alone, the packed velocities beside them.
struct MovePacked<'a, 'v, S: Scalar> {
    positions: &'a mut ViewMut<'v, Pos<S>>,
    velocities: &'a [Vel<S>],
    dt: S,
}

impl<S: Scalar> Kernel for MovePacked<'_, '_, S> {
    #[inline(always)]
    fn run(self) {
        for (p, v) in self.positions.iter().zip(self.velocities) {
            (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, self.dt);
        }
    }
}

/// The tuned regen, walked the same way.
struct RegenPacked<'a, 'v, S: Scalar> {
    energies: &'a mut ViewMut<'v, Ene<S>>,
    regens: &'a [Reg<S>],
    dt: S,
}

impl<S: Scalar> Kernel for RegenPacked<'_, '_, S> {
    #[inline(always)]
    fn run(self) {
        for (e, r) in self.energies.iter().zip(self.regens) {
            e.value = regen_one(e.value, r.per_second, self.dt);
        }
    }
}

impl<S: Scalar> Layout<S> for ShipyardLayout<S> {
    fn kind(&self) -> LayoutKind {
        if self.tuned {
            LayoutKind::ShipyardTuned
        } else {
            LayoutKind::Shipyard
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

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        Ok(self
            .entities
            .try_reserve(additional, bytes_per_entity::<S>())?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.spawn(ids, states, None);
    }

    fn swap_remove(&mut self, index: usize) {
        self.resolved.invalidate();
        let entity = self.entities.swap_remove(index);
        self.world.delete_entity(entity);
        self.reusable += 1;
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.resolved.invalidate();
        let world = &mut self.world;
        for entity in self.entities.drain_from(len) {
            world.delete_entity(entity);
            self.reusable += 1;
        }
        self.give_back_memory();
        self.released()
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        let packed = self.tuned && threads == Threads::One;
        self.world
            .run(|mut positions: ViewMut<Pos<S>>, velocities: View<Vel<S>>| {
                if packed {
                    let velocities = velocities.as_slice();
                    simd::run(
                        tier,
                        MovePacked {
                            positions: &mut positions,
                            velocities,
                            dt,
                        },
                    );
                    return;
                }
                let step = |(p, v): (&mut Pos<S>, &Vel<S>)| {
                    (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, dt);
                };
                match threads {
                    Threads::One => (&mut positions, &velocities).iter().for_each(step),
                    Threads::All => {
                        use rayon::iter::ParallelIterator;
                        (&mut positions, &velocities).par_iter().for_each(step);
                    }
                }
            });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        let packed = self.tuned && threads == Threads::One;
        self.world
            .run(|mut energies: ViewMut<Ene<S>>, regens: View<Reg<S>>| {
                if packed {
                    let regens = regens.as_slice();
                    simd::run(
                        tier,
                        RegenPacked {
                            energies: &mut energies,
                            regens,
                            dt,
                        },
                    );
                    return;
                }
                let step = |(e, r): (&mut Ene<S>, &Reg<S>)| {
                    e.value = regen_one(e.value, r.per_second, dt);
                };
                match threads {
                    Threads::One => (&mut energies, &regens).iter().for_each(step),
                    Threads::All => {
                        use rayon::iter::ParallelIterator;
                        (&mut energies, &regens).par_iter().for_each(step);
                    }
                }
            });
    }

    /// The positions' packed array, each entity's health found through the sparse index: one
    /// pass on one thread (shipyard's parallel iterator cannot write into our sink's chunks).
    fn gather_points(&mut self, out: PointSink<'_>, _threads: Threads) {
        let (positions, healths) = self
            .world
            .borrow::<(View<Pos<S>>, View<Hp<S>>)>()
            .expect("nothing else borrows the storages");
        out.write_iter(
            (&positions, &healths)
                .iter()
                .map(|(p, h)| point_bytes(p.x, p.y, h.hp)),
        );
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
        let entities = self.entities.as_slice();
        self.visit_entities(at.iter().map(|&i| entities[i]), visit);
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
        let packed = self.tuned && threads == Threads::One;
        if packed && self.kernel == SeekKernel::Tuned {
            self.seek_resolved(dt);
            return;
        }
        self.world.run(
            |positions: View<Pos<S>>,
             mut velocities: ViewMut<Vel<S>>,
             targets: View<ShipyardTarget>| {
                if packed {
                    let own = positions.as_slice();
                    let held = targets.as_slice();
                    for ((v, p), target) in (&mut velocities).iter().zip(own).zip(held) {
                        seek_through(&positions, p, v, target, dt);
                    }
                    return;
                }
                let step = |(p, v, target): (&Pos<S>, &mut Vel<S>, &ShipyardTarget)| {
                    seek_through(&positions, p, v, target, dt);
                };
                match threads {
                    Threads::One => (&positions, &mut velocities, &targets)
                        .iter()
                        .for_each(step),
                    Threads::All => {
                        use rayon::iter::ParallelIterator;
                        (&positions, &mut velocities, &targets)
                            .par_iter()
                            .for_each(step);
                    }
                }
            },
        );
    }

    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        self.spawn(ids, states, Some(targets));
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let entities = self.entities.as_slice();
        self.world
            .run(|positions: View<Pos<S>>, mut velocities: ViewMut<Vel<S>>| {
                let pushes = near.push_apart(threads, entities.len(), |i| {
                    let p = (&positions)
                        .get(entities[i])
                        .expect("every listed entity has a position");
                    [p.x, p.y]
                });
                for (&entity, &push) in entities.iter().zip(pushes) {
                    if let Ok(mut v) = (&mut velocities).get(entity) {
                        (v.x, v.y) = avoid_one(v.x, v.y, push, dt);
                    }
                }
            });
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.resolved.invalidate();
        let entities = self.entities.as_slice();
        self.world.run(|mut held: ViewMut<ShipyardTarget>| {
            for (&seeker, target) in entities[first..].iter().zip(targets) {
                if let Ok(mut t) = (&mut held).get(seeker) {
                    t.0 = target.map(|t| entities[t]);
                }
            }
        });
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        let (held, ids) = self
            .world
            .borrow::<(View<ShipyardTarget>, View<OurId<InTable>>)>()
            .expect("nothing else borrows the storages");
        let target = (&held).get(self.entities.get(index)).ok()?.0?;
        (&ids).get(target).ok().map(|id| id.0)
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        let entity = self.entities.get(index);
        self.world.run(|mut velocities: ViewMut<Vel<S>>| {
            if let Ok(mut v) = (&mut velocities).get(entity) {
                (v.x, v.y) = (vx, vy);
            }
        });
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

impl<S: Scalar> ShipyardLayout<S> {
    /// The tuned seek kernel on one thread: each target resolved to its slot in the positions'
    /// packed array once (`index_of`, which checks the generation: a removed target resolves
    /// to none), then the velocities walked in their packed order (the positions' order too:
    /// see the module doc) with the targets' positions prefetched ahead.
    fn seek_resolved(&mut self, dt: S) {
        let resolved = &mut self.resolved;
        self.world.run(
            |positions: View<Pos<S>>,
             mut velocities: ViewMut<Vel<S>>,
             targets: View<ShipyardTarget>| {
                let held = targets.as_slice();
                let resolved = resolved.get(Threads::One, held.len(), |i| {
                    held[i].0.and_then(|e| positions.index_of(e))
                });
                let own = positions.as_slice();
                for (k, v) in (&mut velocities).iter().enumerate() {
                    if let Some(&ahead) = resolved.get(k + PREFETCH_AHEAD)
                        && ahead != NO_TARGET
                    {
                        prefetch(&own[ahead as usize]);
                    }
                    let t = resolved[k];
                    if t != NO_TARGET {
                        let (p, target) = (&own[k], &own[t as usize]);
                        (v.x, v.y) =
                            seek_one_unpredictable(p.x, p.y, v.x, v.y, target.x, target.y, dt);
                    }
                }
            },
        );
    }
}

impl<S: Scalar> InHostMemory for ShipyardLayout<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        let (id, p, v, h, e, r, a) = self.views();
        for i in range {
            let entity = self.entities.get(i);
            push_regions(
                i,
                (
                    &id[entity],
                    &p[entity],
                    &v[entity],
                    &h[entity],
                    &e[entity],
                    &r[entity],
                    &a[entity],
                ),
                out,
            );
        }
    }
}

impl<S: Scalar> ShipyardLayout<S> {
    fn give_back_memory(&mut self) {
        self.entities.release_unused();
    }

    /// shipyard's packed arrays keep their capacity: after a big shrink the swarm rebuilds.
    fn released(&self) -> Released {
        if self.entities.rebuild_due() {
            Released::RebuildWouldFree
        } else {
            Released::InPlace
        }
    }
}

/// What shipyard stores per entity for our seven components, counted from its design: per
/// component the value, the packed array's `EntityId` and the sparse index's `EntityId` (8 B
/// each), plus the entity's own record and our list's handle.
pub fn bytes_per_entity<S: Scalar>() -> usize {
    let components = size_of::<EntityState<S>>() + size_of::<u64>() + size_of::<ShipyardTarget>();
    components + 8 * 2 * size_of::<EntityId>() + 2 * size_of::<EntityId>()
}

impl<S: Scalar> Marks for ShipyardLayout<S> {
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => world.add_component(entity, M {}));
    }

    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => { world.delete_component::<M>(entity); });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{SpawnPattern, spawn_range};

    /// Churn reuses the ids removed entities left: the entity index, and every component's
    /// sparse array with it, stays as large as the most entities alive at once (250 here).
    /// Through bulk adds alone it would grow by every spawn. Every other round half of its spawns
    /// reuse ids and half are fresh (one bulk add); in the others all reuse them (no bulk add).
    #[test]
    fn churn_reuses_the_ids_removals_leave() {
        for tuned in [false, true] {
            let mut layout = ShipyardLayout::<f32>::new(tuned);
            let mut states = Vec::new();
            spawn_range(SpawnPattern::default(), 3, 0, 400, &mut states);
            let ids: Vec<u64> = (0..400).collect();
            layout.push(&ids[..200], &states[..200]);
            let mut next = 200;
            let mut widest = 0;
            for round in 0..50 {
                let (removed, born) = if round % 2 == 0 { (50, 100) } else { (100, 50) };
                for k in 0..removed {
                    layout.swap_remove((k * 7) % layout.len());
                }
                let ids: Vec<u64> = (next..next + born).collect();
                layout.push(&ids, &states[..born as usize]);
                next += born;
                let index = layout.entities().iter().map(|e| e.index()).max();
                widest = widest.max(index.unwrap_or(0));
            }
            assert!(
                widest < 250,
                "tuned {tuned}: index up to {widest} for at most 250 entities alive"
            );
            assert_eq!(layout.len(), 200);
            let mut seen = Vec::new();
            layout.for_each_entity_in(0..layout.len(), &mut |id, _| seen.push(id));
            assert_eq!(seen[150..], (next - 50..next).collect::<Vec<_>>()[..]);
        }
    }

    /// A caller that moves rows through the world (`world_mut`: the migration bench adds and
    /// removes components) leaves the packed arrays out of our order; the reads that follow see
    /// it and look each entity up, though the rows had been proved before.
    #[test]
    fn reads_look_up_entities_after_the_world_was_lent() {
        let mut layout = ShipyardLayout::<f32>::new(true);
        let mut states = Vec::new();
        spawn_range(SpawnPattern::default(), 3, 0, 3000, &mut states);
        let ids: Vec<u64> = (0..3000).collect();
        layout.push(&ids, &states);
        let read = |layout: &ShipyardLayout<f32>, at: &[usize]| {
            let mut seen = Vec::new();
            layout.for_each_entity_at(at, &mut |id, s| seen.push((id, s.x, s.vx)));
            seen
        };
        let expected = |at: &[usize]| -> Vec<_> {
            at.iter()
                .map(|&k| (ids[k], states[k].x, states[k].vx))
                .collect()
        };
        assert_eq!(read(&layout, &[0, 2999]), expected(&[0, 2999]));
        // Entity 0's position leaves its packed array and comes back at the end: row 0 of that
        // array now holds entity 2999's.
        let first = layout.entities()[0];
        let world = layout.world_mut();
        let position = world.remove::<(Pos<f32>,)>(first).0.expect("it had one");
        world.add_component(first, position);
        assert_eq!(read(&layout, &[0, 2999]), expected(&[0, 2999]));
        let mut all = Vec::new();
        layout.for_each_entity_in(0..3000, &mut |id, s| all.push((id, s.x, s.vx)));
        assert_eq!(
            all,
            expected(&ids.iter().map(|&i| i as usize).collect::<Vec<_>>())
        );
    }
}

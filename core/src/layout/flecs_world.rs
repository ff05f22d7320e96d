//! flecs: the C archetype ECS (compiled from the source `flecs_ecs` bundles), through its Rust
//! binding. Entities of one component set share a table, one column per component, like Bevy's
//! and hecs'; systems are entities too, run by a pipeline, on flecs' own worker threads when
//! the world has them.
//!
//! Forms:
//! - **idiomatic**: a system per step built with `World::system` and `par_each`, as flecs'
//!   examples write one (`each` with a closure per entity), run by `World::progress_time`
//!   through a pipeline of its own; dt comes from a singleton component, flecs' way of handing
//!   a system a parameter.
//! - **tuned**: the same systems with `par_run`, which hands each table's columns as field
//!   slices (`TableIter::field_mut`, `FieldMut::as_mut_slice`), and Bevy's tuned loop over them
//!   ([`crate::layout::interleaved`]), per SIMD tier.
//!
//! On all cores the world gets one worker thread per core (`World::set_threads`) and flecs
//! splits each table among them; on one thread it has none. The components are the same structs
//! the Bevy layouts store (flecs' derive is on them too).
//!
//! Seeking: each entity holds its target as a flecs `Entity` in a component ([`FlecsTarget`]).
//! Both forms read the target's position with `EntityView::try_get` after `World::is_alive`
//! (flecs recycles ids, so a dead target's id is told apart by its generation); the idiomatic
//! system runs `each_entity`, the tuned one `run` over the seekers' field slices. Seek runs on
//! the calling thread whatever the thread setting (`System::run`): the same lookups from flecs'
//! worker threads corrupt the world (a pipeline destructor recursing until the stack
//! overflows, targets found alive after their entity was deleted), which the binding's
//! per-lookup table locks do not prevent. The tuned layout's tuned seek kernel
//! ([`SeekKernel::Tuned`]) resolves every target to its row once, through flecs' entity record
//! (`EntityView::range`, checked against the table's entity column), and gathers from the
//! seekers' own position slice with a prefetch ahead: every entity sits in one table.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

// The binding's traits carry most of its methods (`id`, `with`, `par_each`, ...): its prelude.
use flecs_ecs::prelude::*;

use crate::layout::components::{
    Armor, Energy, EntityId as OurId, Health, InTable, Position, Regen, Velocity,
};
use crate::layout::ecs::{Columns, Rows, push_regions, rows_are_logical, state_of};
use crate::layout::interleaved::{MoveInterleaved, RegenTable};
use crate::layout::listed::Listed;
use crate::layout::markers::MARKERS;
use crate::layout::regions::Region;
use crate::layout::seeking::{ResolvedTargets, SeekKernel, born_with, seek_resolved_rows};
use crate::layout::{InHostMemory, Marks, Released, SortsInPlace};
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::order::Order;
use crate::scalar::Scalar;
use crate::simd::{self, SimdTier};
use crate::threads::{Threads, core_count};
use crate::workload::{
    EntityState, PointSink, avoid_one, move_one, point_bytes, regen_one, seek_one,
};

type Pos<S> = Position<S, InTable>;
type Vel<S> = Velocity<S, InTable>;
type Hp<S> = Health<S, InTable>;
type Ene<S> = Energy<S, InTable>;
type Reg<S> = Regen<S, InTable>;
type Arm<S> = Armor<S, InTable>;

/// What a step's systems read besides the components: a singleton.
#[derive(Component, Clone, Copy)]
struct Step<S: Scalar> {
    dt: S,
    /// The tuned systems' kernels run on it; the idiomatic ones ignore it.
    tier: SimdTier,
}

/// The entity this one seeks, as flecs code holds another entity (none for a seeker without a
/// target).
#[derive(Component, Clone, Copy)]
pub struct FlecsTarget(Option<Entity>);

/// The phases that put each system in a pipeline of its own, so that `move` and `regen` run
/// (and are timed) apart, as in every other layout.
#[derive(Component)]
struct MovePhase;
#[derive(Component)]
struct RegenPhase;
#[derive(Component)]
struct SeekPhase;

pub struct FlecsLayout<S: Scalar> {
    tuned: bool,
    /// flecs' `World` may move between threads but not be shared (`Send`, not `Sync`); the lock
    /// makes the layout shareable. The steps reach it through `get_mut`, with no locking.
    world: Mutex<World>,
    move_pipeline: Entity,
    regen_pipeline: Entity,
    /// The seek system, run on its own (`System::run`), never by a pipeline's workers.
    seek_system: Entity,
    /// What the tuned layout's seek system shares with the layout: the kernel asked for, and
    /// the targets resolved to table rows (a registered system's closure lives in the world, so
    /// it reaches them through this handle).
    tuned_seek: Arc<Mutex<TunedSeek>>,
    entities: Listed<Entity>,
    /// The worker threads the world has now: 1 for none.
    worker_threads: i32,
    tier: SimdTier,
    /// The tag entities that stand for the marker components ([`Marks`]).
    marker_tags: Vec<Entity>,
    _scalar: std::marker::PhantomData<fn() -> S>,
}

impl<S: Scalar> FlecsLayout<S> {
    pub fn new(tuned: bool) -> Self {
        let world = World::new();
        world.component::<Step<S>>().add_trait::<flecs::Singleton>();
        world.set(Step {
            dt: S::default(),
            tier: SimdTier::Baseline,
        });
        let pipeline_of = |phase: Entity| {
            world
                .pipeline()
                .with(flecs::system::System::ID)
                .with(phase)
                .build()
                .entity()
                .id()
        };
        let move_phase = world.component::<MovePhase>().id();
        let regen_phase = world.component::<RegenPhase>().id();
        let seek_phase = world.component::<SeekPhase>().id();
        let seek_system;
        let tuned_seek = Arc::new(Mutex::new(TunedSeek::default()));
        let (move_pipeline, regen_pipeline) = (pipeline_of(move_phase), pipeline_of(regen_phase));

        if tuned {
            world
                .system::<(&mut Pos<S>, &Vel<S>, &Step<S>)>()
                .kind(move_phase)
                .par_run(|mut it| {
                    while it.next() {
                        let step = *it.field::<Step<S>>(2).get(0).expect("the singleton");
                        let mut positions = it.field_mut::<Pos<S>>(0);
                        let velocities = it.field::<Vel<S>>(1);
                        simd::run(
                            step.tier,
                            MoveInterleaved {
                                positions: positions.as_mut_slice(),
                                velocities: velocities.as_slice(),
                                dt: step.dt,
                                one_cursor: false,
                            },
                        );
                    }
                });
            world
                .system::<(&mut Ene<S>, &Reg<S>, &Step<S>)>()
                .kind(regen_phase)
                .par_run(|mut it| {
                    while it.next() {
                        let step = *it.field::<Step<S>>(2).get(0).expect("the singleton");
                        let mut energies = it.field_mut::<Ene<S>>(0);
                        let regens = it.field::<Reg<S>>(1);
                        simd::run(
                            step.tier,
                            RegenTable {
                                energies: energies.as_mut_slice(),
                                regens: regens.as_slice(),
                                dt: step.dt,
                            },
                        );
                    }
                });
            let shared = Arc::clone(&tuned_seek);
            seek_system = world
                .system::<(&Pos<S>, &mut Vel<S>, &FlecsTarget, &Step<S>)>()
                .kind(seek_phase)
                .run(move |mut it| {
                    let mut tuned = shared.lock().unwrap_or_else(PoisonError::into_inner);
                    while it.next() {
                        let step = *it.field::<Step<S>>(3).get(0).expect("the singleton");
                        let own = it.field::<Pos<S>>(0);
                        let mut velocities = it.field_mut::<Vel<S>>(1);
                        let targets = it.field::<FlecsTarget>(2);
                        let world = it.world();
                        if tuned.kernel == SeekKernel::Tuned {
                            // Every entity is in this one table (all are born with the same
                            // components), so a target's row indexes these slices.
                            let rows = it.entities();
                            let held = targets.as_slice();
                            let resolved = tuned.resolved.get_here(held.len(), |i| {
                                let t = held[i].0.filter(|&t| world.is_alive(t))?;
                                let row = world.entity_from_id(t).range()?.offset();
                                let row = usize::try_from(row).ok()?;
                                (rows.get(row) == Some(&t)).then_some(row)
                            });
                            seek_resolved_rows(
                                Threads::One,
                                resolved,
                                own.as_slice(),
                                velocities.as_mut_slice(),
                                step.dt,
                            );
                            continue;
                        }
                        for ((v, p), target) in velocities
                            .as_mut_slice()
                            .iter_mut()
                            .zip(own.as_slice())
                            .zip(targets.as_slice())
                        {
                            seek_through(world, p, v, target.0, step.dt);
                        }
                    }
                })
                .id();
        } else {
            seek_system = world
                .system::<(&Pos<S>, &mut Vel<S>, &FlecsTarget, &Step<S>)>()
                .kind(seek_phase)
                .each_entity(|e, (p, v, target, step)| {
                    seek_through(e.world(), p, v, target.0, step.dt);
                })
                .id();
            world
                .system::<(&mut Pos<S>, &Vel<S>, &Step<S>)>()
                .kind(move_phase)
                .par_each(|(p, v, step)| {
                    (p.x, p.y) = move_one(p.x, p.y, v.x, v.y, step.dt);
                });
            world
                .system::<(&mut Ene<S>, &Reg<S>, &Step<S>)>()
                .kind(regen_phase)
                .par_each(|(e, r, step)| {
                    e.value = regen_one(e.value, r.per_second, step.dt);
                });
        }
        Self {
            tuned,
            world: Mutex::new(world),
            move_pipeline,
            regen_pipeline,
            seek_system,
            tuned_seek,
            entities: Listed::default(),
            worker_threads: 1,
            tier: SimdTier::Baseline,
            marker_tags: Vec::new(),
            _scalar: std::marker::PhantomData,
        }
    }

    /// Creates a batch through flecs' bulk creation, each entity born with its target where that
    /// target already exists; targets among the batch itself are set once it is.
    fn spawn(&mut self, ids: &[u64], states: &[EntityState<S>], targets: Option<&[Option<usize>]>) {
        if ids.is_empty() {
            return;
        }
        self.tuned_seek().resolved.invalidate();
        let world = self
            .world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let our_ids: Vec<OurId<InTable>> = ids.iter().map(|&id| OurId::new(id)).collect();
        let positions: Vec<Pos<S>> = states.iter().map(|s| Pos::new(s.x, s.y)).collect();
        let velocities: Vec<Vel<S>> = states.iter().map(|s| Vel::new(s.vx, s.vy)).collect();
        let hps: Vec<Hp<S>> = states.iter().map(|s| Hp::new(s.hp)).collect();
        let energies: Vec<Ene<S>> = states.iter().map(|s| Ene::new(s.energy)).collect();
        let regens: Vec<Reg<S>> = states.iter().map(|s| Reg::new(s.regen)).collect();
        let armors: Vec<Arm<S>> = states.iter().map(|s| Arm::new(s.armor)).collect();
        let first = self.entities.len();
        let handles = born_with(self.entities.as_slice(), targets);
        let born_with: Vec<FlecsTarget> = (0..ids.len())
            .map(|k| FlecsTarget(handles.get(k).copied().flatten()))
            .collect();
        // flecs counts a bulk in `i32`; a push is at most one of the swarm's batches (64 Ki).
        for start in (0..ids.len()).step_by(i32::MAX as usize) {
            let end = ids.len().min(start + i32::MAX as usize);
            let mut bulk = world.entity_bulk((end - start) as u32);
            let spawned = bulk
                .set(&our_ids[start..end])
                .set(&positions[start..end])
                .set(&velocities[start..end])
                .set(&hps[start..end])
                .set(&energies[start..end])
                .set(&regens[start..end])
                .set(&armors[start..end])
                .set(&born_with[start..end])
                .build();
            self.entities.extend(spawned);
        }
        if let Some(targets) = targets {
            for (k, &t) in targets.iter().enumerate() {
                if t.is_some_and(|t| t >= first) {
                    self.set_targets(first + k, &[t]);
                }
            }
        }
    }

    /// The world, for experiments that use flecs directly (migration).
    pub fn world_mut(&mut self) -> &mut World {
        self.world_here()
    }

    /// Entities in logical order.
    pub fn entities(&self) -> &[Entity] {
        self.entities.as_slice()
    }

    /// A switch's read: the table's columns as field slices (`Query::run`, flecs' fastest
    /// public iteration), row for row, when one table holds every entity and its rows are the
    /// logical order (flecs' delete moves the table's last row into the hole, as the swarm's
    /// `swap_remove` does; checked entity by entity). `false`: nothing was visited.
    fn read_columns(&self, rows: Rows<'_>, visit: &mut dyn FnMut(u64, &EntityState<S>)) -> bool {
        if rows.is_empty() {
            return true;
        }
        let world = self.world_locked();
        let query = world
            .query::<(
                &OurId<InTable>,
                &Pos<S>,
                &Vel<S>,
                &Hp<S>,
                &Ene<S>,
                &Reg<S>,
                &Arm<S>,
            )>()
            .build();
        let list = self.entities.as_slice();
        let mut read = false;
        query.run(|mut it| {
            while it.next() {
                // The one table that holds all of them is the only one there is.
                if read || !rows_are_logical(it.entities(), list, &rows) {
                    continue;
                }
                let (ids, positions, velocities) = (
                    it.field::<OurId<InTable>>(0),
                    it.field::<Pos<S>>(1),
                    it.field::<Vel<S>>(2),
                );
                let (healths, energies, regens, armors) = (
                    it.field::<Hp<S>>(3),
                    it.field::<Ene<S>>(4),
                    it.field::<Reg<S>>(5),
                    it.field::<Arm<S>>(6),
                );
                Columns {
                    ids: ids.as_slice(),
                    positions: positions.as_slice(),
                    velocities: velocities.as_slice(),
                    healths: healths.as_slice(),
                    energies: energies.as_slice(),
                    regens: regens.as_slice(),
                    armors: armors.as_slice(),
                }
                .visit(&rows, visit);
                read = true;
            }
        });
        read
    }

    fn world_here(&mut self) -> &mut World {
        self.world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Each of `entities`, its seven components read in one `get`.
    fn visit_entities(
        &self,
        entities: impl IntoIterator<Item = Entity>,
        visit: &mut dyn FnMut(u64, &EntityState<S>),
    ) {
        let world = self.world_locked();
        for entity in entities {
            world.entity_from_id(entity).get::<(
                &OurId<InTable>,
                &Pos<S>,
                &Vel<S>,
                &Hp<S>,
                &Ene<S>,
                &Reg<S>,
                &Arm<S>,
            )>(|components| {
                let (id, state) = state_of(components);
                visit(id, &state);
            });
        }
    }

    fn world_locked(&self) -> std::sync::MutexGuard<'_, World> {
        self.world
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs one step's pipeline with `dt`, on `threads`.
    fn run_pipeline(&mut self, pipeline: Entity, dt: S, threads: Threads) {
        let workers = match threads {
            Threads::One => 1,
            Threads::All => core_count() as i32,
        };
        let (tier, change_workers) = (self.tier, workers != self.worker_threads);
        self.worker_threads = workers;
        let world = self.world_here();
        if change_workers {
            world.set_threads(workers);
        }
        world.set(Step { dt, tier });
        world.set_pipeline(pipeline);
        world.progress_time(dt.to_f64() as f32);
    }
}

impl<S: Scalar> Layout<S> for FlecsLayout<S> {
    fn kind(&self) -> LayoutKind {
        if self.tuned {
            LayoutKind::FlecsTuned
        } else {
            LayoutKind::Flecs
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

    /// flecs' bulk creation (`ecs_bulk_init` through `entity_bulk`): every entity of the batch
    /// created straight into the table of all seven components, one column copy each. An entity
    /// filled with one `set` per component moves to another table at every `set` (seven table
    /// moves, the slowest fill `bench --only peers` times), too slow for a switch into flecs at
    /// 1M to keep to its share of a frame.
    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.spawn(ids, states, None);
    }

    fn swap_remove(&mut self, index: usize) {
        self.tuned_seek().resolved.invalidate();
        let entity = self.entities.swap_remove(index);
        self.world_here().entity_from_id(entity).destruct();
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.tuned_seek().resolved.invalidate();
        let world = self
            .world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for entity in self.entities.drain_from(len) {
            world.entity_from_id(entity).destruct();
        }
        self.give_back_memory();
        self.released()
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        self.run_pipeline(self.move_pipeline, dt, threads);
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        self.run_pipeline(self.regen_pipeline, dt, threads);
    }

    /// Table by table, on the calling thread: each table's columns as slices into the sink.
    fn gather_points(&mut self, out: PointSink<'_>, _threads: Threads) {
        let world = self.world_here();
        let query = world.query::<(&Pos<S>, &Hp<S>)>().build();
        let mut rest = Some(out);
        query.run(|mut it| {
            while it.next() {
                let positions = it.field::<Pos<S>>(0);
                let healths = it.field::<Hp<S>>(1);
                let (positions, healths) = (positions.as_slice(), healths.as_slice());
                let (head, tail) = rest.take().expect("one sink").split_at(positions.len());
                rest = Some(tail);
                head.write_iter(
                    positions
                        .iter()
                        .zip(healths)
                        .map(|(p, h)| point_bytes(p.x, p.y, h.hp)),
                );
            }
        });
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
                + self.tuned_seek().resolved.allocated_bytes(),
            modelled: true,
        }
    }

    fn sorts_in_place(&mut self) -> Option<&mut dyn SortsInPlace> {
        Some(self)
    }

    fn step_seek(&mut self, dt: S, _threads: Threads) {
        let (tier, system) = (self.tier, self.seek_system);
        let world = self.world_here();
        world.set(Step { dt, tier });
        world
            .system_from(world.entity_from_id(system))
            .run_dt(dt.to_f64() as f32);
    }

    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        self.spawn(ids, states, Some(targets));
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, _threads: Threads) {
        // flecs' world handle is not shared between threads: the pass runs on this one.
        let world = self.world.get_mut().unwrap_or_else(PoisonError::into_inner);
        let entities = self.entities.as_slice();
        let pushes = near.push_apart_here(entities.len(), |i| {
            world
                .entity_from_id(entities[i])
                .get::<&Pos<S>>(|p| [p.x, p.y])
        });
        for (&entity, &push) in entities.iter().zip(pushes) {
            world
                .entity_from_id(entity)
                .get::<&mut Vel<S>>(|v| (v.x, v.y) = avoid_one(v.x, v.y, push, dt));
        }
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.tuned_seek().resolved.invalidate();
        let entities = self.entities.as_slice();
        let world = self
            .world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (&seeker, target) in entities[first..].iter().zip(targets) {
            world
                .entity_from_id(seeker)
                .set(FlecsTarget(target.map(|t| entities[t])));
        }
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        let world = self.world_locked();
        let target = world
            .entity_from_id(self.entities.get(index))
            .try_get::<&FlecsTarget>(|t| t.0)??;
        if !world.is_alive(target) {
            return None;
        }
        world
            .entity_from_id(target)
            .try_get::<&OurId<InTable>>(|id| id.0)
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        let entity = self.entities.get(index);
        self.world_here()
            .entity_from_id(entity)
            .get::<&mut Vel<S>>(|v| (v.x, v.y) = (vx, vy));
    }

    fn set_seek_kernel(&mut self, kernel: SeekKernel) -> SeekKernel {
        let tuned = self.tuned;
        let mut state = self.tuned_seek();
        state.kernel = if tuned { kernel } else { SeekKernel::Idiomatic };
        if state.kernel == SeekKernel::Idiomatic {
            state.resolved.release();
        }
        state.kernel
    }
}

/// flecs' `order_by`: a query ordered by our id component sorts the table itself when its
/// iterator is first taken (a quicksort that swaps whole rows, `ecs_table_swap_rows`, and the
/// entity records with them); the table's rows are then read back as the logical order. The
/// query is dropped after that one pass, so no later iteration sorts again behind the swarm's
/// back (flecs re-sorts an ordered query's tables whenever they changed).
impl<S: Scalar> SortsInPlace for FlecsLayout<S> {
    fn sort_in_place(&mut self, order: Order) -> bool {
        if !order.by_id() {
            return false;
        }
        self.tuned_seek().resolved.invalidate();
        let mut sorted = Vec::with_capacity(self.entities.len());
        let world = self.world_here();
        let mut builder = world.query::<&OurId<InTable>>();
        match order {
            Order::Id => builder.order_by::<OurId<InTable>>(by_key::<ById>),
            Order::Group | Order::Cell => builder.order_by::<OurId<InTable>>(by_key::<ByGroup>),
        };
        let query = builder.build();
        query.run(|mut it| {
            while it.next() {
                sorted.extend_from_slice(it.entities());
            }
        });
        drop(query);
        self.entities.replace(sorted);
        true
    }
}

/// An order as a type, so that each order's compare function is a function of its own: flecs
/// takes a plain function pointer, with no room for the order as a value.
trait OrderKey {
    const ORDER: Order;
}
struct ById;
struct ByGroup;
impl OrderKey for ById {
    const ORDER: Order = Order::Id;
}
impl OrderKey for ByGroup {
    const ORDER: Order = Order::Group;
}

fn by_key<K: OrderKey>(_: Entity, a: &OurId<InTable>, _: Entity, b: &OurId<InTable>) -> i32 {
    K::ORDER
        .key(a.0, [0.0; 2])
        .cmp(&K::ORDER.key(b.0, [0.0; 2])) as i32
}

impl<S: Scalar> InHostMemory for FlecsLayout<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        let world = self.world_locked();
        for i in range {
            world.entity_from_id(self.entities.get(i)).get::<(
                &OurId<InTable>,
                &Pos<S>,
                &Vel<S>,
                &Hp<S>,
                &Ene<S>,
                &Reg<S>,
                &Arm<S>,
            )>(|components| {
                push_regions(i, components, out)
            });
        }
    }
}

impl<S: Scalar> FlecsLayout<S> {
    fn give_back_memory(&mut self) {
        self.entities.release_unused();
    }

    /// flecs' tables keep their capacity: after a big shrink the swarm rebuilds the world.
    fn released(&self) -> Released {
        if self.entities.rebuild_due() {
            Released::RebuildWouldFree
        } else {
            Released::InPlace
        }
    }
}

/// The tuned seek kernel's state, shared with the tuned layout's seek system.
struct TunedSeek {
    kernel: SeekKernel,
    resolved: ResolvedTargets,
}

impl Default for TunedSeek {
    fn default() -> Self {
        Self {
            kernel: SeekKernel::Idiomatic,
            resolved: ResolvedTargets::default(),
        }
    }
}

impl<S: Scalar> FlecsLayout<S> {
    /// The shared tuned-seek state, locked (nothing else holds it while the layout is borrowed
    /// mutably: the seek system runs inside `step_seek`).
    fn tuned_seek(&self) -> std::sync::MutexGuard<'_, TunedSeek> {
        self.tuned_seek
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The seek system for one entity: `target`'s position, if it is alive, through flecs' own lookup.
fn seek_through<S: Scalar>(
    world: WorldRef<'_>,
    p: &Pos<S>,
    v: &mut Vel<S>,
    target: Option<Entity>,
    dt: S,
) {
    let Some(target) = target.filter(|&t| world.is_alive(t)) else {
        return;
    };
    world.entity_from_id(target).try_get::<&Pos<S>>(|t| {
        (v.x, v.y) = seek_one(p.x, p.y, v.x, v.y, t.x, t.y, dt);
    });
}

/// What flecs stores per entity for our seven components, counted from its design: the values
/// (no change ticks), the table's entity column (`u64`), the entity index's dense id and its
/// record (table, row, and a dense index: 24 B), plus our list's handle.
pub fn bytes_per_entity<S: Scalar>() -> usize {
    size_of::<EntityState<S>>()
        + size_of::<u64>()
        + size_of::<FlecsTarget>()
        + 8
        + 8
        + 24
        + size_of::<Entity>()
}

/// flecs carries markers as tag entities, flecs' own way of adding a component made at run time
/// (no Rust type needed), made the first time a marker is asked for.
impl<S: Scalar> Marks for FlecsLayout<S> {
    fn mark(&mut self, index: usize, bit: u8) {
        let (entity, tag) = (self.entities()[index], self.marker_tag(bit));
        self.world_mut().entity_from_id(entity).add(tag);
    }

    fn unmark(&mut self, index: usize, bit: u8) {
        let (entity, tag) = (self.entities()[index], self.marker_tag(bit));
        self.world_mut().entity_from_id(entity).remove(tag);
    }
}

impl<S: Scalar> FlecsLayout<S> {
    /// The tag entity that stands for marker `bit`, made the first time it is asked for.
    fn marker_tag(&mut self, bit: u8) -> Entity {
        let bit = usize::from(bit.min(MARKERS - 1));
        while self.marker_tags.len() <= bit {
            let tag = self.world_mut().entity().id();
            self.marker_tags.push(tag);
        }
        self.marker_tags[bit]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{SpawnPattern, spawn_range};

    /// Handles through flecs' recycled ids: a removed target is found gone, a kept one found.
    #[test]
    fn targets_survive_removals_and_die_with_their_entity() {
        for tuned in [false, true] {
            let mut layout = FlecsLayout::<f32>::new(tuned);
            let mut states = Vec::new();
            spawn_range(SpawnPattern::default(), 1, 0, 300, &mut states);
            let ids: Vec<u64> = (0..300).collect();
            layout.push(&ids, &states);
            let targets: Vec<Option<usize>> = (0..300).map(|i| (i > 0).then_some(i / 2)).collect();
            layout.set_targets(0, &targets);
            assert_eq!(layout.target_at(299), Some(149));
            assert_eq!(layout.target_at(10), Some(5));
            // Remove entity 149 (logical index 149): the last (299) moves into its place.
            layout.swap_remove(149);
            assert_eq!(
                layout.target_at(149),
                None,
                "299's target was 149, now gone"
            );
            assert_eq!(layout.target_at(10), Some(5));
            // New entities recycle the freed id; the old handle must stay dead.
            layout.push(&[300, 301], &states[..2]);
            assert_eq!(layout.target_at(149), None);
            layout.step_seek(0.016, Threads::One);
            layout.step_seek(0.016, Threads::All);
            layout.truncate(100);
            assert_eq!(layout.target_at(10), Some(5));
        }
    }
}

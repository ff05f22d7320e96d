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

use std::ops::Range;
use std::sync::Mutex;

// The binding's traits carry most of its methods (`id`, `with`, `par_each`, ...): its prelude.
use flecs_ecs::prelude::*;

use crate::layout::ecs::{
    Armor, Energy, EntityId as OurId, Health, InTable, Position, Regen, Velocity, push_regions,
    state_of,
};
use crate::layout::interleaved::{MoveInterleaved, RegenTable};
use crate::layout::listed::Listed;
use crate::layout::regions::Region;
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::MemoryUse;
use crate::scalar::Scalar;
use crate::simd::{self, SimdTier};
use crate::threads::{Threads, core_count};
use crate::workload::{EntityState, PointSink, move_one, point_bytes, regen_one};

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

/// The phases that put each system in a pipeline of its own, so that `move` and `regen` run
/// (and are timed) apart, as in every other layout.
#[derive(Component)]
struct MovePhase;
#[derive(Component)]
struct RegenPhase;

pub struct FlecsLayout<S: Scalar> {
    tuned: bool,
    /// flecs' `World` may move between threads but not be shared (`Send`, not `Sync`); the lock
    /// makes the layout shareable. The steps reach it through `get_mut`, with no locking.
    world: Mutex<World>,
    move_pipeline: Entity,
    regen_pipeline: Entity,
    entities: Listed<Entity>,
    /// The worker threads the world has now: 1 for none.
    worker_threads: i32,
    tier: SimdTier,
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
        } else {
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
            entities: Listed::default(),
            worker_threads: 1,
            tier: SimdTier::Baseline,
            _scalar: std::marker::PhantomData,
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

    fn world_here(&mut self) -> &mut World {
        self.world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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

    fn set_simd(&mut self, tier: SimdTier) {
        if self.tuned {
            self.tier = tier;
        }
    }

    fn simd(&self) -> SimdTier {
        self.tier
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        Ok(self
            .entities
            .try_reserve(additional, bytes_per_entity::<S>())?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        let world = self
            .world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let spawned = ids.iter().zip(states).map(|(&id, s)| {
            world
                .entity()
                .set(OurId::<InTable>::new(id))
                .set(Pos::<S>::new(s.x, s.y))
                .set(Vel::<S>::new(s.vx, s.vy))
                .set(Hp::<S>::new(s.hp))
                .set(Ene::<S>::new(s.energy))
                .set(Reg::<S>::new(s.regen))
                .set(Arm::<S>::new(s.armor))
                .id()
        });
        self.entities.extend(spawned.collect::<Vec<_>>());
    }

    fn swap_remove(&mut self, index: usize) {
        let entity = self.entities.swap_remove(index);
        self.world_here().entity_from_id(entity).destruct();
    }

    fn truncate(&mut self, len: usize) {
        let world = self
            .world
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for entity in self.entities.drain_from(len) {
            world.entity_from_id(entity).destruct();
        }
        self.release_unused();
    }

    fn release_unused(&mut self) {
        self.entities.release_unused();
    }

    /// flecs' tables keep their capacity: after a big shrink the swarm rebuilds the world.
    fn rebuild_releases_memory(&self) -> bool {
        self.entities.rebuild_due()
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

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        let world = self.world_locked();
        for &entity in &self.entities.as_slice()[range] {
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

    fn memory(&self) -> MemoryUse {
        let len = self.len() as u64;
        MemoryUse {
            payload_bytes: len * (size_of::<EntityState<S>>() + size_of::<u64>()) as u64,
            allocated_bytes: len * bytes_per_entity::<S>() as u64 + self.entities.allocated_bytes(),
        }
    }
}

/// What flecs stores per entity for our seven components, counted from its design: the values
/// (no change ticks), the table's entity column (`u64`), the entity index's dense id and its
/// record (table, row, and a dense index: 24 B), plus our list's handle.
pub fn bytes_per_entity<S: Scalar>() -> usize {
    size_of::<EntityState<S>>() + size_of::<u64>() + 8 + 8 + 24 + size_of::<Entity>()
}

//! The storages under test, one file each, one trait. A layout owns its entities and knows nothing
//! of Bevy's app, the renderer or the UI.
//!
//! Every layout keeps the entities in the same *logical order*: pushes append, `swap_remove(i)`
//! moves the last entity into slot `i`. Because every layout applies the same operations to the
//! same order, "remove the entity at index 7" means the same entity everywhere, and resize and
//! churn (written once, in `entity_layouts::swarm`) need no per-layout id map. Where the bytes actually
//! sit is each layout's own business: that is the thing being measured.

mod aos;
mod boxed;
pub mod chunks;
mod components;
mod dyn_agents;
mod ecs;
mod flecs_world;
mod hecs_world;
pub mod interleaved;
mod kernels;
mod listed;
pub mod regions;
mod seeking;
mod shipyard_world;
pub mod slots;
mod soa;

use std::any::TypeId;
use std::collections::TryReserveError;
use std::fmt;
use std::ops::Range;
use std::time::Duration;

pub use aos::Aos;
pub use boxed::BoxedEntities;
pub use chunks::Chunks;
pub use components::{
    Armor, Energy, EntityId, Health, InSparseSet, InTable, Position, Regen, Storage, Velocity,
};
pub use dyn_agents::DynAgents;
pub use ecs::{EcsLayout, EcsVariant};
pub use flecs_world::FlecsLayout;
pub use hecs_world::HecsLayout;
pub use interleaved::MoveInterleaved;
pub use shipyard_world::ShipyardLayout;
pub use soa::Soa;

use crate::memory::MemoryUse;
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{EntityState, PointSink};

/// A storage for entities, driven by `entity_layouts::swarm::Swarm`.
pub trait Layout<S: Scalar>: Send + Sync {
    fn kind(&self) -> LayoutKind;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Makes room for `additional` more entities or says why not, instead of aborting later.
    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError>;
    /// Appends entities in order; `ids` and `states` have the same length.
    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]);
    /// Removes the entity at logical index `index`; the last one takes its place.
    fn swap_remove(&mut self, index: usize);
    /// Keeps the first `len` entities, and gives back memory that a much larger population left
    /// ([`Layout::release_unused`]).
    fn truncate(&mut self, len: usize);
    /// Gives back memory that a much larger population, or heavy churn, left behind: `Vec`s less
    /// than a quarter full shrink ([`shrink_if_sparse`]), boxes scattered over a heap much bigger
    /// than the population are compacted ([`compaction_due`]).
    fn release_unused(&mut self);
    /// Whether moving the entities into a fresh layout of the same kind would give back memory
    /// that `truncate` cannot: Bevy's tables never shrink, so after a big shrink the swarm
    /// rebuilds the ECS world (spread over frames, like a switch).
    fn rebuild_releases_memory(&self) -> bool {
        false
    }
    /// Sets the instruction set the move and regen kernels run on ([`crate::simd`]); instant,
    /// and the entities are untouched. Layouts without multiversioned kernels (boxed, dyn, the
    /// idiomatic ECS, gpu) ignore it: their loops are compiled for the baseline only.
    fn set_simd(&mut self, _tier: SimdTier) {}
    /// The tier the kernels run on: the one set, or the baseline for a layout that ignores it.
    fn simd(&self) -> SimdTier {
        SimdTier::Baseline
    }
    /// The move system over every entity.
    fn step_move(&mut self, dt: S, threads: Threads);
    /// The regen system over every entity.
    fn step_regen(&mut self, dt: S, threads: Threads);
    /// The seek system over every entity: each one that holds a target reads the target's
    /// position through its handle and steers toward it ([`crate::workload::seek_one`]). Reads
    /// positions and writes only velocities, so it runs on every core without races.
    fn step_seek(&mut self, dt: S, threads: Threads);
    /// [`Layout::push`], each new entity pointed at its target as it is spawned: `targets[k]`
    /// is the logical index of entity `ids[k]`'s target, either already here (below `len()`) or
    /// among these new ones. What a switch's copy and growth call; a layout whose entities can
    /// carry their target from birth (the ECS libraries: one more component in the spawned
    /// bundle) overrides it to save a lookup per entity.
    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        let first = self.len();
        self.push(ids, states);
        self.set_targets(first, targets);
    }
    /// Points the entities at logical indices `first..first + targets.len()` at their targets,
    /// each given as the logical index of an entity of this layout (below `len()`), or at none.
    /// The layout keeps a handle of its own kind, the way users of this storage refer to another
    /// entity, and that handle survives swap-removes, churn and shrinks; a target removed later
    /// leaves its seekers with a handle that finds nothing.
    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]);
    /// The id of the entity that the one at logical index `index` seeks, read through the handle
    /// it holds: `None` when it holds none or its target is gone.
    fn target_at(&self, index: usize) -> Option<u64>;
    /// Overwrites the velocity of the entity at logical index `index` (a switch in flight keeps
    /// the copy of a seeker whose target is not copied yet in step with the original this way).
    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S);
    /// Writes every entity's packed point ([`crate::workload::pack_point`]: position and hp) into
    /// `out` (`out.len() == self.len()`), in whatever order is fastest for this layout: the
    /// renderer draws a set of dots, not a sequence. The only per-layout part of rendering. In
    /// the app `out` is wgpu's staging memory for the points buffer.
    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads);
    /// Visits the entities at logical indices `range`, in order (a layout switch spread over
    /// frames reads one chunk per frame this way).
    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>));
    /// Visits every entity in logical order.
    fn for_each_entity(&self, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        self.for_each_entity_in(0..self.len(), visit);
    }
    /// Appends where the entities at logical indices `range` live: each field's (and id's)
    /// address and length in this layout's live storage ([`regions`]; the app's memory view).
    /// A layout whose data is not in this process's memory (the gpu layout) appends nothing.
    fn regions(&self, _range: Range<usize>, _out: &mut Vec<regions::Region>) {}
    /// A hint: the entities at logical indices `range` are about to be read one at a time (a
    /// churn during a switch out of this layout). A layout whose reads are round trips (the
    /// gpu layout) fetches them in one go; the others ignore it.
    fn prepare_reads(&self, _range: Range<usize>) {}
    fn memory(&self) -> MemoryUse;
    /// The simulate time measured on the device, for a layout that simulates somewhere else than
    /// the calling thread (the gpu layout); `None` for the CPU layouts, whose time is the wall
    /// clock around `step_move` and `step_regen`.
    fn device_time(&self) -> Option<DeviceTime> {
        None
    }
    /// Waits until the device has carried out everything submitted so far (benchmarks time a
    /// frame this way); the CPU layouts are done when their calls return.
    fn finish_device_work(&self) {}
    /// What the renderer can draw as is, for a layout that lives on a device, as that layout's
    /// own type (the gpu layout's `GpuPoints`): `layout/` does not know it, `gpu/` builds on
    /// `layout/` and not the other way round (`entity_layouts::catalog` is where both meet).
    fn device_points(&self) -> Option<Box<dyn std::any::Any>> {
        None
    }
}

/// Why a layout could not make room: host memory (a `Vec` said no), or the device's.
#[derive(Debug)]
pub enum ReserveError {
    Host(TryReserveError),
    Device(String),
}

impl From<TryReserveError> for ReserveError {
    fn from(e: TryReserveError) -> Self {
        ReserveError::Host(e)
    }
}

/// A simulate time measured on the device (GPU timestamp queries), or why there is none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceTime {
    Measured(Duration),
    /// Timestamps are on their way back (the first frames after a switch).
    Waiting,
    /// The adapter cannot measure it; reports say so rather than show a CPU time.
    Unavailable(&'static str),
}

/// Gives a `Vec`'s memory back once it is less than a quarter full: a population that shrank
/// from 1M to 10k should not keep 1M entities' worth (the issue a speaker sees as resident
/// memory that never comes down). A quarter, not a half, so that a count that wobbles does not
/// reallocate every time.
pub fn shrink_if_sparse<T>(v: &mut Vec<T>) {
    if v.len() < v.capacity() / 4 {
        v.shrink_to_fit();
    }
}

/// A population below this many entities costs too little memory to be worth compacting.
pub const COMPACT_FROM: usize = 65_536;

/// Whether a layout that held `high_water` entities and now holds `len` should compact: move its
/// survivors into fresh allocations, so that the memory of the ones it dropped can go back to the
/// OS. Boxes scattered over a big heap keep most of its pages resident otherwise (one survivor
/// per page is enough). Resets the mark when it says yes.
pub fn compaction_due(len: usize, high_water: &mut usize) -> bool {
    let due = *high_water >= COMPACT_FROM && len < *high_water / 4;
    if due {
        *high_water = len;
    }
    due
}

/// Every layout and variant, as a user picks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    EcsTable,
    EcsSparse,
    EcsContiguous,
    /// hecs, idiomatic (`query_mut`) and tuned (archetype column slices).
    Hecs,
    HecsTuned,
    /// flecs, idiomatic (`par_each`) and tuned (`par_run` with field slices).
    Flecs,
    FlecsTuned,
    /// shipyard, idiomatic (`(&mut a, &b).iter()`) and tuned (one packed array walked alone).
    Shipyard,
    ShipyardTuned,
    Soa,
    /// Fixed 16 KiB blocks, each holding its entities' fields as arrays (Unity's chunks).
    Chunks,
    Aos,
    Boxed,
    BoxedShuffled,
    /// `Vec<Box<dyn Agent>>` over this many concrete kinds (1, 2, 4 or 12).
    Dyn(u8),
    /// GPU storage buffers, simulated by compute passes (f32 only; needs a GPU adapter).
    Gpu,
}

/// The kind counts the dyn layout offers (the JS study's 1, 2, 4 and 12 shapes).
pub const DYN_KINDS: [u8; 4] = [1, 2, 4, 12];

impl LayoutKind {
    /// Every layout in CPU memory, in the order the panel and the reports list them: what the
    /// CPU benches, the equivalence tests and `verify` (f32 and f64) run.
    pub const CPU: [LayoutKind; 18] = [
        LayoutKind::EcsTable,
        LayoutKind::EcsSparse,
        LayoutKind::EcsContiguous,
        LayoutKind::Hecs,
        LayoutKind::HecsTuned,
        LayoutKind::Flecs,
        LayoutKind::FlecsTuned,
        LayoutKind::Shipyard,
        LayoutKind::ShipyardTuned,
        LayoutKind::Soa,
        LayoutKind::Chunks,
        LayoutKind::Aos,
        LayoutKind::Boxed,
        LayoutKind::BoxedShuffled,
        LayoutKind::Dyn(1),
        LayoutKind::Dyn(2),
        LayoutKind::Dyn(4),
        LayoutKind::Dyn(12),
    ];

    /// Every layout a person can pick: the CPU ones, then the gpu layout.
    pub const ALL: [LayoutKind; 19] = {
        let mut all = [LayoutKind::Gpu; 19];
        let mut i = 0;
        while i < Self::CPU.len() {
            all[i] = Self::CPU[i];
            i += 1;
        }
        all
    };

    /// The name used on the command line and in CSV/JSON.
    pub fn name(self) -> String {
        match self {
            LayoutKind::EcsTable => "ecs-table".into(),
            LayoutKind::EcsSparse => "ecs-sparse".into(),
            LayoutKind::EcsContiguous => "ecs-contiguous".into(),
            LayoutKind::Hecs => "hecs".into(),
            LayoutKind::HecsTuned => "hecs-tuned".into(),
            LayoutKind::Flecs => "flecs".into(),
            LayoutKind::FlecsTuned => "flecs-tuned".into(),
            LayoutKind::Shipyard => "shipyard".into(),
            LayoutKind::ShipyardTuned => "shipyard-tuned".into(),
            LayoutKind::Soa => "soa".into(),
            LayoutKind::Chunks => "chunks".into(),
            LayoutKind::Aos => "aos".into(),
            LayoutKind::Boxed => "boxed".into(),
            LayoutKind::BoxedShuffled => "boxed-shuffled".into(),
            LayoutKind::Dyn(k) => format!("dyn-{k}"),
            LayoutKind::Gpu => "gpu".into(),
        }
    }

    /// What a reader of a table or the panel sees.
    pub fn label(self) -> String {
        match self {
            LayoutKind::EcsTable => "Bevy ECS, table (idiomatic)".into(),
            LayoutKind::EcsSparse => "Bevy ECS, sparse set (idiomatic)".into(),
            LayoutKind::EcsContiguous => "Bevy ECS, contiguous slices (tuned)".into(),
            LayoutKind::Hecs => "hecs, archetypes (idiomatic)".into(),
            LayoutKind::HecsTuned => "hecs, archetype columns (tuned)".into(),
            LayoutKind::Flecs => "flecs, tables (idiomatic)".into(),
            LayoutKind::FlecsTuned => "flecs, table fields (tuned)".into(),
            LayoutKind::Shipyard => "shipyard, sparse sets (idiomatic)".into(),
            LayoutKind::ShipyardTuned => "shipyard, packed walk (tuned)".into(),
            LayoutKind::Soa => "SoA (Vec per field)".into(),
            LayoutKind::Chunks => "16 KiB chunks of arrays (Unity)".into(),
            LayoutKind::Aos => "AoS (Vec<Entity>)".into(),
            LayoutKind::Boxed => "Vec<Box<Entity>>".into(),
            LayoutKind::BoxedShuffled => "Vec<Box<Entity>>, shuffled heap".into(),
            LayoutKind::Dyn(k) => format!("Vec<Box<dyn Agent>>, {k} kinds"),
            LayoutKind::Gpu => "GPU storage buffers (compute)".into(),
        }
    }

    /// Bytes one entity's fields and id take in this layout, before slack and bookkeeping:
    /// what the memory check multiplies by the requested count.
    pub fn payload_bytes_per_entity<S: Scalar>(self) -> usize {
        size_of::<EntityState<S>>() + size_of::<u64>()
    }

    /// A generous estimate of what one entity really costs in this layout (slack included), used
    /// to refuse a count before allocating rather than after.
    pub fn estimated_bytes_per_entity<S: Scalar>(self) -> usize {
        let payload = self.payload_bytes_per_entity::<S>();
        let boxed = crate::memory::glibc_malloc_chunk_bytes(size_of::<EntityState<S>>()) as usize;
        let estimate = match self {
            LayoutKind::EcsTable | LayoutKind::EcsContiguous | LayoutKind::EcsSparse => {
                ecs::bytes_per_entity::<S>()
            }
            LayoutKind::Hecs | LayoutKind::HecsTuned => hecs_world::bytes_per_entity::<S>(),
            LayoutKind::Flecs | LayoutKind::FlecsTuned => flecs_world::bytes_per_entity::<S>(),
            LayoutKind::Shipyard | LayoutKind::ShipyardTuned => {
                shipyard_world::bytes_per_entity::<S>()
            }
            LayoutKind::Soa | LayoutKind::Aos => payload,
            // A last block partly empty; over a population that matters, a few percent.
            LayoutKind::Chunks => payload + payload / 16,
            LayoutKind::Boxed | LayoutKind::BoxedShuffled | LayoutKind::Dyn(_) => {
                // Pointer (16 for a fat `dyn` pointer) + the box's malloc chunk.
                payload + 16 + boxed
            }
            // Ids in host memory, plus the device's columns and points, which a software
            // rasterizer (lavapipe) keeps in host memory too.
            LayoutKind::Gpu => payload + 4,
        };
        // Vec doubling can leave up to half again unused while it grows.
        estimate * 2
    }

    /// Builds an empty layout of this kind if it lives in CPU memory; `None` for the gpu layout,
    /// which `entity_layouts::catalog` builds (`catalog::create` builds every kind).
    ///
    /// The layouts come from [`create_cpu_f32`] and [`create_cpu_f64`], compiled in this crate:
    /// a crate that calls this gets the layouts' code from here (their vtables point into this
    /// crate), not copies of it compiled among its own code. That is what keeps the counted
    /// kernels where the counts check expects them (the crate docs say why).
    pub fn create_cpu<S: Scalar>(self) -> Option<Box<dyn Layout<S>>> {
        let built: Box<dyn std::any::Any> = if TypeId::of::<S>() == TypeId::of::<f32>() {
            Box::new(create_cpu_f32(self)?)
        } else if TypeId::of::<S>() == TypeId::of::<f64>() {
            Box::new(create_cpu_f64(self)?)
        } else {
            Box::new(build_cpu::<S>(self)?)
        };
        // The identity for f32 and f64: each branch above built exactly `Box<dyn Layout<S>>`.
        built
            .downcast::<Box<dyn Layout<S>>>()
            .ok()
            .map(|layout| *layout)
    }

    /// Whether this layout's move and regen kernels are compiled per SIMD tier
    /// ([`Layout::set_simd`]); the others run the baseline whatever the setting.
    pub fn has_simd_kernels(self) -> bool {
        matches!(
            self,
            LayoutKind::Soa
                | LayoutKind::Chunks
                | LayoutKind::EcsContiguous
                | LayoutKind::Aos
                | LayoutKind::HecsTuned
                | LayoutKind::FlecsTuned
                | LayoutKind::ShipyardTuned
        )
    }

    /// How this layout runs on all cores, where that is not by splitting its arrays across
    /// Bevy's pool as the others do: the panel's hover and the bench's `threads` notes say it.
    pub fn parallel_note(self) -> Option<&'static str> {
        match self {
            LayoutKind::EcsTable | LayoutKind::EcsSparse => Some("Bevy's par_iter_mut"),
            LayoutKind::Hecs => Some(
                "hecs' iter_batched, its batches on Bevy's pool (hecs has no threads of its own)",
            ),
            LayoutKind::Flecs | LayoutKind::FlecsTuned => {
                Some("flecs' own worker threads (World::set_threads), each table split among them")
            }
            LayoutKind::Shipyard => Some("shipyard's par_iter (rayon's pool)"),
            LayoutKind::ShipyardTuned => Some(
                "shipyard's par_iter, the idiomatic path: the packed walk has no parallel form",
            ),
            _ => None,
        }
    }

    /// Whether this layout is an ECS library's world (Bevy's or a peer's): entities in tables or
    /// sparse sets that the library owns, never shrunk by it, so rebuilt after a big shrink.
    pub fn is_ecs(self) -> bool {
        matches!(
            self,
            LayoutKind::EcsTable
                | LayoutKind::EcsSparse
                | LayoutKind::EcsContiguous
                | LayoutKind::Hecs
                | LayoutKind::HecsTuned
                | LayoutKind::Flecs
                | LayoutKind::FlecsTuned
                | LayoutKind::Shipyard
                | LayoutKind::ShipyardTuned
        )
    }

    /// Why this layout cannot run the seek system, if it cannot: the driver refuses seek (and a
    /// switch into this layout while seek is on) with this reason instead of running it.
    pub fn seek_unavailable(self) -> Option<&'static str> {
        match self {
            LayoutKind::Gpu => Some(
                "the gpu layout has no seek pass yet (its targets would need a handle table on the device, kept in step with its compaction); seek runs on every CPU layout",
            ),
            _ => None,
        }
    }

    /// Whether this is the layout that lives on the GPU.
    pub fn is_gpu(self) -> bool {
        self == LayoutKind::Gpu
    }
}

impl fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Every CPU layout at `f32`, compiled in this crate ([`LayoutKind::create_cpu`] says why).
#[inline(never)]
pub fn create_cpu_f32(kind: LayoutKind) -> Option<Box<dyn Layout<f32>>> {
    build_cpu::<f32>(kind)
}

/// Every CPU layout at `f64`, compiled in this crate ([`LayoutKind::create_cpu`] says why).
#[inline(never)]
pub fn create_cpu_f64(kind: LayoutKind) -> Option<Box<dyn Layout<f64>>> {
    build_cpu::<f64>(kind)
}

fn build_cpu<S: Scalar>(kind: LayoutKind) -> Option<Box<dyn Layout<S>>> {
    Some(match kind {
        LayoutKind::EcsTable => Box::new(EcsLayout::<S>::table()),
        LayoutKind::EcsSparse => Box::new(EcsLayout::<S, InSparseSet>::sparse()),
        LayoutKind::EcsContiguous => Box::new(EcsLayout::<S>::contiguous()),
        LayoutKind::Hecs => Box::new(HecsLayout::<S>::new(false)),
        LayoutKind::HecsTuned => Box::new(HecsLayout::<S>::new(true)),
        LayoutKind::Flecs => Box::new(FlecsLayout::<S>::new(false)),
        LayoutKind::FlecsTuned => Box::new(FlecsLayout::<S>::new(true)),
        LayoutKind::Shipyard => Box::new(ShipyardLayout::<S>::new(false)),
        LayoutKind::ShipyardTuned => Box::new(ShipyardLayout::<S>::new(true)),
        LayoutKind::Soa => Box::new(Soa::<S>::default()),
        LayoutKind::Chunks => Box::new(Chunks::<S>::default()),
        LayoutKind::Aos => Box::new(Aos::<S>::default()),
        LayoutKind::Boxed => Box::new(BoxedEntities::<S>::new(false)),
        LayoutKind::BoxedShuffled => Box::new(BoxedEntities::<S>::new(true)),
        LayoutKind::Dyn(k) => Box::new(DynAgents::<S>::new(k)),
        LayoutKind::Gpu => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_lowercase() {
        let names: std::collections::HashSet<String> =
            LayoutKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), LayoutKind::ALL.len());
        assert!(names.iter().all(|n| *n == n.to_ascii_lowercase()));
    }

    /// Every CPU layout, driven by random pushes, swap-removes, truncates and seeks, against a
    /// plain model of ids and targets: each seeker's handle names its target for as long as the
    /// target lives, and nothing after (flecs recycles ids, Bevy and hecs reuse entity slots,
    /// the slot map reuses slots).
    #[test]
    fn handles_follow_targets_through_random_operations() {
        use rand::{RngExt, SeedableRng};
        use std::collections::HashMap;
        for kind in LayoutKind::CPU {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
            let mut layout = kind.create_cpu::<f32>().unwrap();
            // The model: ids in logical order, and each id's target id.
            let mut ids: Vec<u64> = Vec::new();
            let mut target_of: HashMap<u64, u64> = HashMap::new();
            let mut next = 0u64;
            for round in 0..400 {
                match rng.random_range(0..10) {
                    0..=4 => {
                        let n = rng.random_range(1..40);
                        let new: Vec<u64> = (next..next + n).collect();
                        next += n;
                        let states = vec![EntityState::<f32>::default(); new.len()];
                        let first = layout.len();
                        layout.push(&new, &states);
                        ids.extend(&new);
                        // Each new entity seeks a random live one (earlier or in this batch).
                        let targets: Vec<Option<usize>> = new
                            .iter()
                            .map(|&id| {
                                let t = rng.random_range(0..ids.len());
                                target_of.insert(id, ids[t]);
                                Some(t)
                            })
                            .collect();
                        layout.set_targets(first, &targets);
                    }
                    5..=7 if !ids.is_empty() => {
                        let victim = rng.random_range(0..ids.len());
                        layout.swap_remove(victim);
                        ids.swap_remove(victim);
                    }
                    8 => {
                        let keep = rng.random_range(0..=ids.len());
                        layout.truncate(keep);
                        ids.truncate(keep);
                    }
                    _ => layout.step_seek(0.016, Threads::BOTH[round % 2]),
                }
                assert_eq!(layout.len(), ids.len(), "{kind} round {round}");
                let mut held = Vec::new();
                layout.for_each_entity(&mut |id, _| held.push(id));
                assert_eq!(held, ids, "{kind} round {round}: logical order");
                for (i, id) in ids.iter().enumerate() {
                    let expected = target_of.get(id).copied().filter(|t| ids.contains(t));
                    assert_eq!(
                        layout.target_at(i),
                        expected,
                        "{kind} round {round}: {id} at {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn estimates_cover_at_least_the_payload() {
        for kind in LayoutKind::ALL {
            assert!(
                kind.estimated_bytes_per_entity::<f32>() >= kind.payload_bytes_per_entity::<f32>()
            );
        }
    }
}

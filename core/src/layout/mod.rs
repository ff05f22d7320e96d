//! The storages under test, one file each, one trait. A layout owns its entities and knows nothing
//! of Bevy's app, the renderer or the UI.
//!
//! Every layout keeps the entities in the same *logical order*: pushes append, `swap_remove(i)`
//! moves the last entity into slot `i`. Because every layout applies the same operations to the
//! same order, "remove the entity at index 7" means the same entity everywhere, and resize and
//! churn (written once, in `entity_layouts::runtime::swarm`) need no per-layout id map. Where the bytes actually
//! sit is each layout's own business: that is the thing being measured.

// The layouts, one file each, and the factory that builds them: above this file (they implement
// its trait), so it names none of them.
pub mod aos;
pub mod boxed;
pub mod chunks;
pub mod dyn_agents;
pub mod ecs;
pub mod factory;
pub mod flecs_world;
pub mod hecs_world;
pub mod shipyard_world;
pub mod soa;
// What they are built from, below this file.
mod components;
pub mod facts;
pub mod interleaved;
mod kernels;
mod listed;
pub mod markers;
pub mod regions;
pub mod seeking;
pub mod slots;

use std::collections::TryReserveError;
use std::ops::Range;

pub use components::{
    Armor, Energy, EntityId, Health, InSparseSet, InTable, Position, Regen, Storage, Velocity,
};
pub use facts::{DYN_KINDS, Family, Footprint, LayoutKind, LayoutRow, TABLE};
pub use seeking::SeekKernel;

use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::order::Order;
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{EntityState, PointSink};

/// A storage for entities, driven by `entity_layouts::runtime::swarm::Swarm`: what every layout
/// does. The population (pushes, swap-removes, truncation), the three systems every layout runs
/// (move, regen, and seek: each entity reads another through the handle it holds), and the
/// neighbour system (avoid: each entity reads the entities near it through a grid), and the
/// readout (points for the renderer, entities in logical order, memory). The facts about a layout
/// (its name, its key, what it is) are its row of [`facts::TABLE`].
///
/// What only some layouts can do is a trait of its own, so that no layout carries methods that
/// are never called:
/// - [`InHostMemory`]: where each entity's bytes are (the app's memory view). Every layout in
///   this process's memory has it; the gpu layout, whose bytes are on the device, does not.
/// - [`SortsInPlace`]: the library's own sort of its storage, in one call (flecs' `order_by`);
///   the others are sorted by the swarm's rebuild, which every layout shares.
/// - [`Marks`]: zero-sized marker components on an entity, through the library's own call (the
///   ECS libraries; the arrays have no archetypes).
pub trait Layout<S: Scalar>: Send + Sync {
    fn kind(&self) -> LayoutKind;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Makes room for `additional` more entities or says why not, instead of aborting later.
    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError>;
    /// Whether [`Layout::prepare`] does anything: work a fresh layout can do before it is
    /// filled, that would otherwise stall the one push that triggers it.
    fn prepares(&self) -> bool {
        false
    }
    /// Readies a fresh, empty layout for `count` pushes (room already made), so that no push
    /// among them pays for a growth in one go. Slow and of no use to a frame: the swarm calls it
    /// on a thread of its own while the layout is not yet in use.
    fn prepare(&mut self, _count: usize) {}
    /// How many more entities the layout takes before the growth that [`Layout::prepare`] does
    /// up front: a layout that is to grow past them is worth preparing afresh.
    fn prepared_room(&self) -> usize {
        0
    }
    /// Appends entities in order; `ids` and `states` have the same length.
    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]);
    /// [`Layout::push`], each new entity pointed at its target as it is spawned: `targets[k]`
    /// is the logical index of entity `ids[k]`'s target, either already here (below `len()`) or
    /// among these new ones. What growth and a switch's copy call; a layout whose entities can
    /// carry their target from birth (the ECS libraries: one more component in the spawned
    /// bundle) overrides it to save a lookup per entity.
    fn push_seeking(&mut self, ids: &[u64], states: &[EntityState<S>], targets: &[Option<usize>]) {
        let first = self.len();
        self.push(ids, states);
        self.set_targets(first, targets);
    }
    /// Removes the entity at logical index `index`; the last one takes its place.
    fn swap_remove(&mut self, index: usize);
    /// Keeps the first `len` entities, and gives back the memory that a much larger population,
    /// or heavy churn, left behind: `Vec`s less than a quarter full shrink
    /// ([`shrink_if_sparse`]), boxes scattered over a heap much bigger than the population are
    /// compacted ([`compaction_due`]). `truncate(len())` only gives memory back. Says whether
    /// moving the entities into a fresh layout of the same kind would give back what it cannot:
    /// the ECS libraries never shrink their tables, so after a big shrink the swarm rebuilds the
    /// world (spread over frames, like a switch).
    fn truncate(&mut self, len: usize) -> Released;
    /// Runs the move and regen kernels on `tier` ([`crate::simd`]) from the next step on, and
    /// returns the tier they run on: `tier`, or the baseline for a layout whose loops are
    /// compiled for the baseline only (boxed, dyn, the idiomatic ECS, gpu). Instant; the
    /// entities are untouched.
    fn set_simd(&mut self, _tier: SimdTier) -> SimdTier {
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
    /// The neighbour system over every entity: each one is pushed away from every entity within
    /// the radius ([`crate::workload::avoid_pair`], [`crate::workload::avoid_one`]). `near`
    /// holds the grid, its form and each entity's push ([`crate::neighbours`]); the layout
    /// gives it every position through its own reads, and applies the pushes to its velocities.
    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads);
    /// Points the entities at logical indices `first..first + targets.len()` at their targets,
    /// each given as the logical index of an entity of this layout (below `len()`), or at none.
    /// The layout keeps a handle of its own kind, and that handle survives swap-removes, churn
    /// and shrinks; a target removed later leaves its seekers with a handle that finds nothing.
    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]);
    /// The id of the entity that the one at logical index `index` seeks, read through the handle
    /// it holds: `None` when it holds none or its target is gone.
    fn target_at(&self, index: usize) -> Option<u64>;
    /// Overwrites the velocity of the entity at logical index `index` (a switch in flight keeps
    /// the copy of a seeker whose target is not copied yet in step with the original this way).
    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S);
    /// Runs `kernel` from the next seek on, and returns the kernel it runs: `kernel`, or the
    /// idiomatic one for a layout without a tuned seek ([`LayoutRow::tuned_seek`]). Instant;
    /// the entities are untouched, and both kernels give the same results.
    fn set_seek_kernel(&mut self, _kernel: SeekKernel) -> SeekKernel {
        SeekKernel::Idiomatic
    }
    /// Writes every entity's packed point ([`crate::workload::pack_point`]: position and hp) into
    /// `out` (`out.len() == self.len()`), in whatever order is fastest for this layout: the
    /// renderer draws a set of dots, not a sequence. The only per-layout part of rendering. In
    /// the app `out` is wgpu's staging memory for the points buffer.
    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads);
    /// Visits the entities at logical indices `range`, in order (a layout switch spread over
    /// frames reads one chunk per frame this way).
    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>));
    /// Visits the entities at logical indices `at`, in that order (a reorder reads the
    /// population in its new order this way). Each one is a range of one here; an ECS looks
    /// them up through one prepared query instead of preparing one per entity.
    fn for_each_entity_at(&self, at: &[usize], visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for &i in at {
            self.for_each_entity_in(i..i + 1, visit);
        }
    }
    /// Visits every entity in logical order.
    fn for_each_entity(&self, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        self.for_each_entity_in(0..self.len(), visit);
    }
    fn memory(&self) -> MemoryUse;
    /// Gives back memory without removing anything ([`Layout::truncate`] to its length).
    fn release_unused(&mut self) -> Released {
        let len = self.len();
        self.truncate(len)
    }
    /// The library's own sort of its storage, where it has one ([`SortsInPlace`]).
    fn sorts_in_place(&mut self) -> Option<&mut dyn SortsInPlace> {
        None
    }
    /// Marker components on entities, where the layout is an ECS library's ([`Marks`]).
    fn marks(&mut self) -> Option<&mut dyn Marks> {
        None
    }
}

/// An ECS library's entities can carry zero-sized marker components ([`markers::Marker`]),
/// added and removed through the library's own call: Bevy's `EntityWorldMut::insert`, hecs'
/// `insert_one`, flecs' `add` of a tag entity, shipyard's `add_component`. Each marker moves
/// the entity to another archetype (or sparse set) and changes nothing of its state.
pub trait Marks {
    /// Adds marker `bit` (below [`markers::MARKERS`]) to the entity at logical index `index`,
    /// which lacks it.
    fn mark(&mut self, index: usize, bit: u8);
    /// Removes marker `bit` from the entity at `index`, which has it.
    fn unmark(&mut self, index: usize, bit: u8);
}

/// A layout in this process's memory: every layout but the gpu one. What the core builds
/// ([`factory`]), and what the swarm holds beside the device's layout.
pub trait HostLayout<S: Scalar>: Layout<S> + InHostMemory {}

impl<S: Scalar, L: Layout<S> + InHostMemory> HostLayout<S> for L {}

/// A library that sorts its own storage in place, in one call: flecs' `order_by`, what a user
/// of that library writes instead of rebuilding the world. The swarm's reorder rebuilds every
/// layout alike, spread over frames; this is the library's way beside it, one call that no
/// frame can share out (the bench times both).
pub trait SortsInPlace {
    /// Sorts every entity into `order` with the library's own sort. Afterwards logical index `i`
    /// holds the `i`-th entity of that order; states, handles and targets are unchanged.
    /// `false`, with nothing changed, for an order the library cannot sort by: the cell order,
    /// whose key is a position with ties broken by the id, two components where flecs'
    /// `order_by` compares one.
    fn sort_in_place(&mut self, order: Order) -> bool;
}

/// A layout whose entities live in this process's memory says where ([`regions`]: the app's
/// memory view).
pub trait InHostMemory {
    /// Appends where the entities at logical indices `range` live: each field's (and id's)
    /// address and length in this layout's live storage.
    fn regions(&self, range: Range<usize>, out: &mut Vec<regions::Region>);
}

/// What [`Layout::truncate`] left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// Everything that could be given back, was.
    InPlace,
    /// A fresh layout of the same kind, holding the same entities, would give back more: the
    /// library keeps its tables' capacity.
    RebuildWouldFree,
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

/// Gives a `Vec`'s memory back once it is less than a quarter full: a population that shrank
/// from 1M to 10k should not keep 1M entities' worth (the problem a speaker sees as resident
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

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut built = kind.create_cpu::<f32>().unwrap();
            let layout = built.as_mut();
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
                        let _ = layout.truncate(keep);
                        ids.truncate(keep);
                    }
                    _ => layout.step_seek(0.016, Threads::BOTH[round % 2]),
                }
                assert_eq!(layout.len(), ids.len(), "{kind} round {round}");
                let mut held = Vec::new();
                layout.for_each_entity_in(0..layout.len(), &mut |id, _| held.push(id));
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
}

//! Who is in the swarm: admission (a count within the ceiling and this machine's memory, refused
//! before anything is allocated), growing with freshly seeded entities, shrinking from the tail,
//! churning, and each id's logical index. Every operation here is an event of a transition under
//! way ([`super::transition`]), which mirrors it on the part it copied.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Swarm;
use super::order::Order;
use crate::error::SimError;
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::{available_bytes, largest_allocation};
use crate::runtime::catalog::{AllLayouts, capacity_limit};
use crate::runtime::id_index::IdIndex;
use crate::workload::{EntityState, SpawnPattern, mix, spawn_range};

/// The default ceiling on a population: far past the app's 10M slider, and still a count whose
/// memory a bench machine can plausibly hold.
pub const MAX_ENTITIES: usize = 100_000_000;
/// The most spawns plus removals per frame the churn setting accepts (churn is the swarm's; the
/// driver, the parsers and the panel take the limit from here).
pub const MAX_CHURN: usize = 100_000;

/// Entities spawned or copied per call of a layout: the scratch buffers stay small when a swarm
/// grows or switches by millions.
pub(super) const BATCH: usize = 64 * 1024;

/// What the swarm keeps per entity beside its layout: the id in logical order, and the id's
/// place in the index, counted as the hashed form's bucket (a key, a value and a control byte),
/// the larger of the index's two forms.
const SWARM_BYTES_PER_ENTITY: usize = size_of::<u64>() + size_of::<(u64, u32)>() + 1;

/// Who is in the swarm, whatever layout holds them: every id in logical order and each id's
/// place there, the next id to give out, the order the population was last arranged in, and how
/// entities are born.
pub(super) struct Population {
    pub(super) seed: u64,
    pub(super) pattern: SpawnPattern,
    /// The id the next spawned entity gets; ids are never reused.
    pub(super) next_id: u64,
    /// How many churn rounds have run: each round draws its victims from its own stream.
    pub(super) churn_round: u64,
    pub(super) max_entities: usize,
    /// Every entity's id in logical order, and each id's logical index: how a seeker's target id
    /// becomes the logical index a layout turns into a handle. Kept whether seek runs or not, so
    /// that turning it on never stalls.
    pub(super) ids: Vec<u64>,
    pub(super) index: IdIndex,
    /// The order the last sort arranged the population in ([`Swarm::order`]).
    pub(super) order: Order,
    /// Sorts that landed ([`Swarm::sorts_landed`]).
    pub(super) sorts_landed: u64,
}

impl Population {
    pub(super) fn new(seed: u64) -> Self {
        Self {
            seed,
            pattern: SpawnPattern::default(),
            next_id: 0,
            churn_round: 0,
            max_entities: MAX_ENTITIES,
            ids: Vec::new(),
            index: IdIndex::default(),
            order: Order::Id,
            sorts_landed: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Records the ids a layout just took at the end of the logical order.
    pub(super) fn remember(&mut self, ids: &[u64]) {
        self.index.append(&mut self.ids, ids);
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

    /// Becomes exactly `ids`, in id order (an import); the next id moves past them.
    pub(super) fn take_over(&mut self, ids: &[u64]) {
        let past_last = ids.iter().max().map_or(0, |&id| id + 1);
        self.next_id = self.next_id.max(past_last);
        self.order = Order::Id;
        self.ids.clear();
        self.index = IdIndex::default();
        self.remember(ids);
    }

    /// A sort landed: its ids, in its order, are the logical order now.
    pub(super) fn take_sorted(&mut self, ids: Vec<u64>, index: IdIndex, order: Order) {
        self.ids = ids;
        self.index = index;
        self.order = order;
        self.sorts_landed += 1;
    }
}

/// Whether growing from `len` by `additional` entities in `kind` stays within `max_entities`
/// and this machine's available memory (`bytes_per_entity` each). Allocates nothing.
fn fits(
    max_entities: usize,
    kind: LayoutKind,
    len: usize,
    additional: usize,
    bytes_per_entity: usize,
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
            layout: kind.name().into(),
            limit: limit.limit,
        });
    }
    let needed = additional as u64 * bytes_per_entity as u64;
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

/// [`fits`], then reserves room for `additional` more entities in `layout`, so that an
/// impossible allocation is an error here rather than an abort later. Nothing changes on error.
pub(super) fn make_room<S: AllLayouts>(
    max_entities: usize,
    layout: &mut dyn Layout<S>,
    additional: usize,
) -> Result<(), SimError> {
    let (kind, len) = (layout.kind(), layout.len());
    let per_entity = Swarm::<S>::estimated_bytes_per_entity(kind);
    fits(max_entities, kind, len, additional, per_entity)?;
    layout.try_reserve(additional).map_err(|e| {
        if let ReserveError::Device(reason) = e {
            return SimError::DeviceOutOfMemory {
                requested: len + additional,
                layout: kind.name().into(),
                reason,
            };
        }
        let needed = additional as u64 * per_entity as u64;
        // The allocator said no although the machine has the memory: a limit the OS does not
        // report as available memory (an address-space limit). What it grants is what counts.
        out_of_memory(
            kind,
            len + additional,
            len,
            needed,
            largest_allocation() as u64,
        )
    })
}

impl<S: AllLayouts> Swarm<S> {
    /// What the swarm's spawn buffers hold at most, whatever the count: a batch's states, ids
    /// and targets.
    pub const SPAWN_BUFFER_BYTES: usize =
        BATCH * (size_of::<EntityState<S>>() + size_of::<u64>() + size_of::<Option<usize>>());

    /// A generous estimate of what one more entity in `kind` costs this swarm, with which a
    /// count is refused before anything is allocated: the layout's estimate, and the swarm's
    /// own part doubled, as the layout's is, for the room a doubling `Vec` leaves unused.
    /// `tests/estimates.rs` holds it to what the heap really gives.
    pub fn estimated_bytes_per_entity(kind: LayoutKind) -> usize {
        kind.estimated_bytes_per_entity::<S>() + 2 * SWARM_BYTES_PER_ENTITY
    }

    /// Lowers (or raises) the ceiling `resize` and `grow` enforce.
    pub fn set_max_entities(&mut self, max: usize) {
        self.population.max_entities = max;
    }

    pub fn max_entities(&self) -> usize {
        self.population.max_entities
    }

    /// Whether a population of `n` entities in `kind` is within the ceiling and this machine's
    /// memory, without allocating anything (the app checks a slider move this way before it
    /// grows over many frames).
    pub fn check_fits(&self, kind: LayoutKind, n: usize) -> Result<(), SimError> {
        let max = self.population.max_entities;
        if n > max {
            return Err(SimError::TooManyEntities { requested: n, max });
        }
        let len = self.len();
        let per_entity = Self::estimated_bytes_per_entity(kind);
        fits(max, kind, len, n.saturating_sub(len), per_entity)
    }

    /// Makes room for `additional` more entities up front, so that growing by that many later
    /// never reallocates: a doubling `Vec` is moved by remapping pages in a fresh process, but
    /// once big layouts have been freed the allocator may copy all of it within one frame.
    /// Bevy's tables offer no way to reserve; for the ECS this only checks memory.
    pub fn reserve(&mut self, additional: usize) -> Result<(), SimError> {
        self.wait_for_frees();
        make_room(self.population.max_entities, &mut *self.layout, additional)
    }

    /// Grows to or shrinks to `n` entities: growing appends freshly seeded entities with new ids,
    /// shrinking drops from the tail. On error the population is left exactly as it was.
    pub fn resize(&mut self, n: usize) -> Result<(), SimError> {
        let len = self.len();
        if n > len {
            return self.grow(n - len);
        }
        self.population.forget_from(n);
        let _ = self.layout.truncate(n);
        if let Some(transition) = self.transition.take() {
            let next = transition.on_shrunk(&self.population, self.kind(), self.settings);
            self.settle(next);
        }
        self.release_memory();
        Ok(())
    }

    /// Appends `count` freshly seeded entities (the app spreads a big resize over frames this way).
    pub fn grow(&mut self, count: usize) -> Result<(), SimError> {
        self.wait_for_frees();
        let max = self.population.max_entities;
        make_room(max, &mut *self.layout, count)?;
        if let Some(transition) = self.transition.as_mut() {
            transition.reserve(max, count)?;
        }
        self.spawn_unchecked(count);
        Ok(())
    }

    fn spawn_unchecked(&mut self, count: usize) {
        let mut left = count;
        while left > 0 {
            let n = left.min(BATCH);
            let (population, scratch) = (&mut self.population, &mut self.scratch);
            scratch.states.clear();
            spawn_range(
                population.pattern,
                population.seed,
                population.next_id,
                n,
                &mut scratch.states,
            );
            scratch.ids.clear();
            scratch
                .ids
                .extend(population.next_id..population.next_id + n as u64);
            // Remembered first, so that a target among this batch resolves too.
            let first = self.layout.len();
            population.remember(&scratch.ids);
            if let Some(transition) = self.transition.as_mut() {
                transition.on_spawned(&scratch.ids);
            }
            self.resolve_targets(first, first + n);
            let scratch = &self.scratch;
            self.layout
                .push_seeking(&scratch.ids, &scratch.states, &scratch.targets);
            self.population.next_id += n as u64;
            left -= n;
        }
    }

    /// One churn round: spawn `k` new entities, then swap-remove `k` entities picked at random
    /// (the same picks in every layout, since all keep the same logical order).
    pub fn churn(&mut self, k: usize) -> Result<(), SimError> {
        self.grow(k)?;
        let population = &mut self.population;
        let mut rng = ChaCha8Rng::seed_from_u64(mix(population.seed ^ mix(population.churn_round)));
        population.churn_round += 1;
        // Each removal below the copied part reads the entity that fills the hole, always one
        // of the last `k` (entities only ever move down): a layout whose reads are round trips
        // fetches those in one read.
        if let Some(transition) = &self.transition {
            let len = self.len();
            self.layout
                .prepare_reads(transition.copied().max(len.saturating_sub(k))..len);
        }
        for _ in 0..k {
            let victim = rng.random_range(0..self.len());
            self.swap_remove(victim);
        }
        if let Some(transition) = self.transition.take() {
            let next = transition.on_churned(&self.population, self.kind(), self.settings);
            self.settle(next);
        }
        Ok(())
    }

    /// `swap_remove` on the layout, mirrored on the part a transition copied.
    fn swap_remove(&mut self, index: usize) {
        if let Some(transition) = self.transition.as_mut() {
            transition.on_removed(index, &self.layout, &self.population);
        }
        self.layout.swap_remove(index);
        let population = &mut self.population;
        let victim = population.index.swap_remove(&mut population.ids, index);
        if let Some(transition) = self.transition.as_mut() {
            transition.on_gone(victim);
        }
    }
}

pub(super) fn out_of_memory(
    kind: LayoutKind,
    requested: usize,
    len: usize,
    needed: u64,
    available: u64,
) -> SimError {
    let per_entity = (needed / (requested - len).max(1) as u64).max(1);
    SimError::OutOfMemory {
        requested,
        layout: kind.name().into(),
        needed_mib: needed >> 20,
        available_mib: available >> 20,
        fits: len + (available / per_entity) as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The population as a plain list of ids: grows append fresh ids, shrinks drop the tail,
    /// a churn round appends `k` and swap-removes `k` drawn from the round's own stream.
    struct Model {
        ids: Vec<u64>,
        next: u64,
        round: u64,
    }

    impl Model {
        fn resize(&mut self, n: usize) {
            if n < self.ids.len() {
                self.ids.truncate(n);
            } else {
                let add = n - self.ids.len();
                self.ids.extend(self.next..self.next + add as u64);
                self.next += add as u64;
            }
        }

        fn churn(&mut self, seed: u64, k: usize) {
            let len = self.ids.len();
            self.resize(len + k);
            let mut rng = ChaCha8Rng::seed_from_u64(mix(seed ^ mix(self.round)));
            self.round += 1;
            for _ in 0..k {
                let victim = rng.random_range(0..self.ids.len());
                self.ids.swap_remove(victim);
            }
        }
    }

    /// Random resizes and churn rounds keep the swarm's ids, its id index and its layout's
    /// logical order exactly the model's, in a `Vec` layout and in an ECS world.
    #[test]
    fn random_resizes_and_churn_follow_the_model() {
        for (seed, kind) in [(1, LayoutKind::Soa), (2, LayoutKind::Hecs)] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut swarm = Swarm::<f32>::new(kind, seed).unwrap();
            let mut model = Model {
                ids: Vec::new(),
                next: 0,
                round: 0,
            };
            for step in 0..80 {
                if rng.random_range(0..2) == 0 {
                    let n = rng.random_range(0..4000);
                    swarm.resize(n).unwrap();
                    model.resize(n);
                } else {
                    let k = rng.random_range(0..300);
                    swarm.churn(k).unwrap();
                    model.churn(seed, k);
                }
                assert_eq!(swarm.population.ids, model.ids, "{kind} step {step}");
                assert_eq!(swarm.export().ids, model.ids, "{kind} step {step}: layout");
                for (i, &id) in model.ids.iter().enumerate() {
                    assert_eq!(
                        swarm.population.index.get(id),
                        Some(i as u32),
                        "{kind} step {step}"
                    );
                }
                assert_eq!(swarm.next_id(), model.next);
            }
        }
    }

    /// The model check is a real one: a swarm whose index lost an entry, or whose order moved,
    /// is told apart from the model.
    #[test]
    fn a_swarm_out_of_step_with_its_index_is_caught() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 3, 100).unwrap();
        let ids = swarm.population.ids.clone();
        swarm.population.index.remove(ids[50]);
        assert_ne!(swarm.population.index.get(ids[50]), Some(50));
        let mut other = Swarm::<f32>::with_count(LayoutKind::Soa, 3, 100).unwrap();
        other.churn(10).unwrap();
        assert_ne!(other.population.ids, (0..100).collect::<Vec<u64>>());
    }

    #[test]
    fn counts_past_the_ceiling_or_the_memory_are_refused_and_change_nothing() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Aos, 5, 1000).unwrap();
        swarm.set_max_entities(5000);
        let before = swarm.export();
        assert!(matches!(
            swarm.resize(5001),
            Err(SimError::TooManyEntities {
                requested: 5001,
                max: 5000
            })
        ));
        assert!(matches!(
            swarm.check_fits(LayoutKind::Aos, 6000),
            Err(SimError::TooManyEntities { .. })
        ));
        swarm.set_max_entities(usize::MAX);
        assert!(matches!(
            swarm.grow(1 << 40),
            Err(SimError::OutOfMemory { .. })
        ));
        assert_eq!(swarm.export(), before);
        assert_eq!(swarm.check_fits(LayoutKind::Aos, 5000), Ok(()));
    }
}

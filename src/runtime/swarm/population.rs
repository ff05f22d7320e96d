//! Who is in the swarm: admission (a count within the ceiling and this machine's memory, refused
//! before anything is allocated), growing with freshly seeded entities, shrinking from the tail,
//! churning, and each id's logical index. Every operation here is mirrored on the part of a
//! pending switch already copied ([`super::switch`]), so that the copy always holds exactly
//! the population's first entities.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::Swarm;
use crate::error::SimError;
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::{available_bytes, largest_allocation};
use crate::runtime::catalog::{AllLayouts, capacity_limit};
use crate::runtime::id_index::IdIndex;
use crate::workload::{EntityState, mix, spawn_range};

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
        self.max_entities = max;
    }

    pub fn max_entities(&self) -> usize {
        self.max_entities
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
                layout: kind.name().into(),
                limit: limit.limit,
            });
        }
        let needed = additional as u64 * Self::estimated_bytes_per_entity(kind) as u64;
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
    pub(super) fn make_room(
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
                    layout: kind.name().into(),
                    reason,
                };
            }
            let needed = additional as u64 * Self::estimated_bytes_per_entity(kind) as u64;
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
            // A move made to grow is of no use now, and its index would outlast the shrink.
            if self.switch.as_ref().is_some_and(|s| s.for_growth.is_some()) {
                self.cancel_switch();
            }
            self.forget_from(n);
            let _ = self.layout.truncate(n);
            self.truncate_copy(n);
            self.release_memory();
            Ok(())
        } else {
            self.grow(n - len)
        }
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
            self.queue_for_reorder();
            self.resolve_targets(first, first + n);
            self.layout
                .push_with_targets(&self.id_buffer, &self.spawn_buffer, &self.target_buffer);
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
        self.prepare_copy_for_churn(k);
        for _ in 0..k {
            let victim = rng.random_range(0..self.len());
            self.swap_remove(victim);
        }
        self.finish_switch_if_copied();
        Ok(())
    }

    /// `swap_remove` on the layout, mirrored on the copied part of a pending switch.
    fn swap_remove(&mut self, index: usize) {
        self.swap_remove_in_copy(index);
        self.layout.swap_remove(index);
        let victim = self.index.swap_remove(&mut self.ids, index);
        self.forget_waiting_for(victim);
    }

    /// Records the ids the layout just took at `first..` (they are in `id_buffer`).
    pub(super) fn remember(&mut self, first: usize) {
        debug_assert_eq!(first, self.ids.len());
        self.index.append(&mut self.ids, &self.id_buffer);
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
                assert_eq!(swarm.ids, model.ids, "{kind} step {step}");
                assert_eq!(swarm.export().ids, model.ids, "{kind} step {step}: layout");
                for (i, &id) in model.ids.iter().enumerate() {
                    assert_eq!(swarm.index.get(id), Some(i as u32), "{kind} step {step}");
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
        let ids = swarm.ids.clone();
        swarm.index.remove(ids[50]);
        assert_ne!(swarm.index.get(ids[50]), Some(50));
        let mut other = Swarm::<f32>::with_count(LayoutKind::Soa, 3, 100).unwrap();
        other.churn(10).unwrap();
        assert_ne!(other.ids, (0..100).collect::<Vec<u64>>());
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

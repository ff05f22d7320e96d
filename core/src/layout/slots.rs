//! Generational handles for the layouts that keep their entities packed in dense arrays (`soa`,
//! `chunks`, `aos`, `boxed`, `dyn-K`): what real code with swap-remove needs to refer to another
//! entity. A dense index moves when another entity is swap-removed into its place; a handle does
//! not. A handle names a slot and the slot's generation when the handle was made; the slot knows
//! where its entity sits now, and a freed slot's generation moves on, so a handle to a removed
//! entity is told apart from one to whoever reuses the slot (the slotmap crate's model, in the
//! few lines the layouts need: no values stored here, only where they are).

/// Another entity, as a seeker holds it: `slot` and its `generation` when the handle was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    slot: u32,
    generation: u32,
}

impl Handle {
    /// No entity: what a seeker without a target holds.
    pub const NONE: Handle = Handle {
        slot: u32::MAX,
        generation: 0,
    };
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    /// Odd while the slot holds an entity, even while it is free: a handle made for an entity
    /// never matches the slot again once the entity is gone.
    generation: u32,
    dense: u32,
}

/// Slots for a dense array of entities, kept in step with its pushes and swap-removes.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    slots: Vec<Slot>,
    /// The handle of the entity at each dense index (its slot, and that slot's generation): a
    /// handle to an entity is one read, which a switch's copy does for every entity.
    slot_of: Vec<Handle>,
    free: Vec<u32>,
}

impl Slots {
    pub fn len(&self) -> usize {
        self.slot_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot_of.is_empty()
    }

    pub fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.slot_of.try_reserve(additional)?;
        self.slots
            .try_reserve(additional.saturating_sub(self.free.len()))
    }

    /// Gives the next `n` dense indices (appended entities) a slot each.
    pub fn push(&mut self, n: usize) {
        for _ in 0..n {
            let dense = self.slot_of.len() as u32;
            let handle = match self.free.pop() {
                Some(slot) => {
                    let s = &mut self.slots[slot as usize];
                    s.generation = s.generation.wrapping_add(1);
                    s.dense = dense;
                    Handle {
                        slot,
                        generation: s.generation,
                    }
                }
                None => {
                    self.slots.push(Slot {
                        generation: 1,
                        dense,
                    });
                    Handle {
                        slot: (self.slots.len() - 1) as u32,
                        generation: 1,
                    }
                }
            };
            self.slot_of.push(handle);
        }
    }

    /// The entity at `dense` is removed and the last one takes its place, as the array does.
    pub fn swap_remove(&mut self, dense: usize) {
        let gone = self.slot_of.swap_remove(dense);
        self.release(gone.slot);
        if let Some(moved) = self.slot_of.get(dense) {
            self.slots[moved.slot as usize].dense = dense as u32;
        }
    }

    /// Keeps the first `len` entities.
    pub fn truncate(&mut self, len: usize) {
        while self.slot_of.len() > len {
            let gone = self.slot_of.pop().expect("longer than len");
            self.release(gone.slot);
        }
    }

    /// Whether the slot table is much bigger than the population (after a big shrink), so that
    /// [`Targets::release_unused`] renumbers it.
    fn oversized(&self) -> bool {
        self.slots.len() >= super::COMPACT_FROM && self.slot_of.len() < self.slots.len() / 4
    }

    /// Gives back memory a much larger population left, as the layouts' arrays do.
    pub fn release_unused(&mut self) {
        super::shrink_if_sparse(&mut self.slot_of);
    }

    fn release(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        s.generation = s.generation.wrapping_add(1);
        self.free.push(slot);
    }

    /// A handle to the entity now at `dense`.
    #[inline]
    pub fn handle_at(&self, dense: usize) -> Handle {
        self.slot_of[dense]
    }

    /// Where the entity `handle` names sits now, or `None` if it is gone (or `handle` is
    /// [`Handle::NONE`]).
    #[inline]
    pub fn dense(&self, handle: Handle) -> Option<usize> {
        let s = self.slots.get(handle.slot as usize)?;
        (s.generation == handle.generation).then_some(s.dense as usize)
    }

    /// Bytes these slots take (the memory view and the memory experiments count them).
    pub fn allocated_bytes(&self) -> u64 {
        (self.slots.capacity() * size_of::<Slot>()
            + self.slot_of.capacity() * size_of::<Handle>()
            + self.free.capacity() * size_of::<u32>()) as u64
    }
}

/// Each entity's target as handles, beside the dense arrays: set by logical index, read back as
/// the dense index the handle resolves to now.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub slots: Slots,
    /// The target of the entity at each dense index.
    pub handles: Vec<Handle>,
}

impl Targets {
    /// What one entity costs here: its slot, the handle the slot table keeps for it, and its
    /// target's handle.
    pub const fn bytes_per_entity() -> usize {
        size_of::<Slot>() + 2 * size_of::<Handle>()
    }

    pub fn try_reserve(
        &mut self,
        additional: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.slots.try_reserve(additional)?;
        self.handles.try_reserve(additional)
    }

    /// `n` entities appended, without targets yet.
    pub fn push(&mut self, n: usize) {
        self.slots.push(n);
        self.handles.resize(self.handles.len() + n, Handle::NONE);
    }

    pub fn swap_remove(&mut self, dense: usize) {
        self.slots.swap_remove(dense);
        self.handles.swap_remove(dense);
    }

    pub fn truncate(&mut self, len: usize) {
        self.slots.truncate(len);
        self.handles.truncate(len);
    }

    /// Gives back memory a much larger population left: after a big shrink the slot table is
    /// renumbered (slot = dense index, a fresh generation) and every surviving handle rewritten
    /// to match, so that 10M slots do not stay allocated for 10k entities.
    pub fn release_unused(&mut self) {
        if self.slots.oversized() {
            let targets: Vec<Option<usize>> =
                (0..self.handles.len()).map(|d| self.target_of(d)).collect();
            self.slots = Slots::default();
            self.slots.push(targets.len());
            self.handles = vec![Handle::NONE; targets.len()];
            self.set(0, &targets);
        }
        self.slots.release_unused();
        super::shrink_if_sparse(&mut self.handles);
    }

    /// Points the entities at `first..` at the entities at the given dense indices (or none),
    /// their handles read with a prefetch ahead (a switch's copy sets one for every entity).
    pub fn set(&mut self, first: usize, targets: &[Option<usize>]) {
        let handles = super::seeking::prefetched_targets(&self.slots.slot_of, targets);
        for (handle, target) in self.handles[first..].iter_mut().zip(handles) {
            *handle = target.unwrap_or(Handle::NONE);
        }
    }

    /// Where the target of the entity at `dense` sits now.
    #[inline]
    pub fn target_of(&self, dense: usize) -> Option<usize> {
        self.slots.dense(self.handles[dense])
    }

    pub fn allocated_bytes(&self) -> u64 {
        self.slots.allocated_bytes() + (self.handles.capacity() * size_of::<Handle>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dense array of ids beside its slots, against the truth: every handle made for an entity
    /// finds it wherever swap-removes moved it, and a handle to a removed one finds nothing,
    /// even after its slot is reused.
    #[test]
    fn handles_follow_their_entity_and_die_with_it() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut slots = Slots::default();
        let mut ids: Vec<u64> = Vec::new();
        let mut made: Vec<(u64, Handle)> = Vec::new();
        let mut alive = std::collections::HashSet::new();
        let mut next = 0u64;
        for round in 0..2_000 {
            if ids.is_empty() || rng.random_range(0..3) > 0 {
                let n = rng.random_range(1..5);
                slots.push(n);
                for _ in 0..n {
                    ids.push(next);
                    alive.insert(next);
                    made.push((next, slots.handle_at(ids.len() - 1)));
                    next += 1;
                }
            } else if round % 97 == 0 {
                let keep = rng.random_range(0..=ids.len());
                for id in ids.drain(keep..) {
                    alive.remove(&id);
                }
                slots.truncate(keep);
            } else {
                let victim = rng.random_range(0..ids.len());
                alive.remove(&ids.swap_remove(victim));
                slots.swap_remove(victim);
            }
            for &(id, handle) in made.iter().rev().take(50) {
                match slots.dense(handle) {
                    Some(dense) => assert_eq!(ids[dense], id, "round {round}"),
                    None => assert!(!alive.contains(&id), "round {round}: {id} lost"),
                }
            }
        }
        assert_eq!(slots.dense(Handle::NONE), None);
        // A big shrink renumbers the slots; every surviving target still resolves.
        let mut targets = Targets::default();
        targets.push(100_000);
        let wanted: Vec<Option<usize>> = (0..100_000)
            .map(|i| (i % 3 != 0).then(|| (i * 7919) % 100_000))
            .collect();
        targets.set(0, &wanted);
        for _ in 0..40_000 {
            targets.swap_remove(0);
        }
        targets.truncate(10_000);
        let before: Vec<Option<usize>> = (0..10_000).map(|d| targets.target_of(d)).collect();
        targets.release_unused();
        assert!(targets.slots.slots.len() <= 10_000);
        let after: Vec<Option<usize>> = (0..10_000).map(|d| targets.target_of(d)).collect();
        assert_eq!(before, after);
        assert!(after.iter().any(Option::is_some));
        // A slot freed and reused: the old handle stays dead.
        let mut slots = Slots::default();
        slots.push(1);
        let old = slots.handle_at(0);
        slots.swap_remove(0);
        slots.push(1);
        assert_eq!(slots.dense(old), None);
        assert_eq!(slots.dense(slots.handle_at(0)), Some(0));
    }
}

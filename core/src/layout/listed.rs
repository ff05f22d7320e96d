//! What the ECS-library layouts (hecs, flecs, shipyard) share: our logical order as a list of the
//! library's entity handles, beside the library's own storage, and the high-water mark that says
//! when a world whose tables never shrink is worth rebuilding (as Bevy's is, [`super::EcsLayout`]).

use std::collections::TryReserveError;

use crate::layout::shrink_if_sparse;
use crate::memory::can_allocate;

/// The smallest world worth rebuilding after a shrink (Bevy's figure, `ecs.rs`).
const REBUILD_FROM: usize = 16_384;

/// A library's entity handles in logical order.
pub struct Listed<E> {
    entities: Vec<E>,
    /// The most entities the world held: its tables' capacity, which these libraries keep.
    high_water: usize,
}

impl<E: Copy> Default for Listed<E> {
    fn default() -> Self {
        Self {
            entities: Vec::new(),
            high_water: 0,
        }
    }
}

impl<E: Copy> Listed<E> {
    pub fn len(&self) -> usize {
        self.entities.len()
    }

    pub fn get(&self, index: usize) -> E {
        self.entities[index]
    }

    pub fn as_slice(&self) -> &[E] {
        &self.entities
    }

    /// Room for `additional` handles here, and (asked of the allocator up front, since the
    /// libraries grow their tables infallibly) for `bytes_per_entity` each in the world.
    pub fn try_reserve(
        &mut self,
        additional: usize,
        bytes_per_entity: usize,
    ) -> Result<(), TryReserveError> {
        self.entities.try_reserve(additional)?;
        can_allocate(additional.saturating_mul(bytes_per_entity))
    }

    pub fn extend(&mut self, spawned: impl IntoIterator<Item = E>) {
        self.entities.extend(spawned);
        self.high_water = self.high_water.max(self.entities.len());
    }

    /// The same handles in a new order (the library sorted its storage).
    pub fn replace(&mut self, reordered: Vec<E>) {
        debug_assert_eq!(reordered.len(), self.entities.len());
        self.entities = reordered;
    }

    /// Takes the handle at `index` out; the last one takes its place.
    pub fn swap_remove(&mut self, index: usize) -> E {
        self.entities.swap_remove(index)
    }

    /// The handles from `len` on, last first: despawned in that order, each empties its table's
    /// last row and no row moves into a hole.
    pub fn drain_from(&mut self, len: usize) -> impl Iterator<Item = E> + '_ {
        let len = len.min(self.entities.len());
        self.entities.drain(len..).rev()
    }

    pub fn release_unused(&mut self) {
        shrink_if_sparse(&mut self.entities);
    }

    /// Half the high water, as for Bevy's world: nothing of the tables comes back otherwise.
    pub fn rebuild_due(&self) -> bool {
        self.high_water >= REBUILD_FROM && self.entities.len() < self.high_water / 2
    }

    pub fn allocated_bytes(&self) -> u64 {
        (self.entities.capacity() * size_of::<E>()) as u64
    }
}

//! What the ECS-library layouts (hecs, flecs, shipyard) share: our logical order as a list of the
//! library's entity handles, beside the library's own storage, and the high-water mark that says
//! when a world whose tables never shrink is worth rebuilding (as Bevy's is, [`super::EcsLayout`]).
//! And a proof, kept until the list changes, that the library's storage holds the list's
//! entities row for row ([`OrderProof`]).

use std::collections::TryReserveError;
use std::sync::{Mutex, PoisonError};

use crate::layout::ecs::Rows;
use crate::layout::shrink_if_sparse;
use crate::memory::can_allocate;

/// The smallest world worth rebuilding after a shrink (Bevy's figure, `ecs.rs`).
const REBUILD_FROM: usize = 16_384;

/// A library's entity handles in logical order.
pub struct Listed<E> {
    entities: Vec<E>,
    /// The most entities the world held: its tables' capacity, which these libraries keep.
    high_water: usize,
    /// Changes to the list (adds, removals, a new order): what an [`OrderProof`] was proved at.
    changes: u64,
}

impl<E: Copy> Default for Listed<E> {
    fn default() -> Self {
        Self {
            entities: Vec::new(),
            high_water: 0,
            changes: 0,
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
        self.changes += 1;
        self.entities.extend(spawned);
        self.high_water = self.high_water.max(self.entities.len());
    }

    /// The same handles in a new order (the library sorted its storage).
    pub fn replace(&mut self, reordered: Vec<E>) {
        debug_assert_eq!(reordered.len(), self.entities.len());
        self.changes += 1;
        self.entities = reordered;
    }

    /// Takes the handle at `index` out; the last one takes its place.
    pub fn swap_remove(&mut self, index: usize) -> E {
        self.changes += 1;
        self.entities.swap_remove(index)
    }

    /// The handles from `len` on, last first: despawned in that order, each empties its table's
    /// last row and no row moves into a hole.
    pub fn drain_from(&mut self, len: usize) -> impl Iterator<Item = E> + '_ {
        let len = len.min(self.entities.len());
        self.changes += 1;
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

/// The rows an [`OrderProof`] proves at once: a few microseconds of sequential reads, so that
/// a paced copy pays for its proof in proportion to the rows it reads.
const PROOF_BLOCK: usize = 1024;

/// Which blocks of a library's storage are proved to hold the [`Listed`] entities row for row,
/// since the list last changed. A copy that reads the storage's columns by row needs that for
/// every row it reads; a reorder reads its rows in a new order, and checking each one where it
/// lies (shipyard: the entity of each of seven packed arrays, seven random reads beside the
/// values' own) is a large part of shipyard's sort. Proved a block at a time in storage order
/// instead, the whole storage costs seven sequential reads a row, once until the next add or
/// removal, and the sort is faster for it, headless and in the window (docs/results/order.md,
/// "Sorting at 1M in the window, timed").
#[derive(Debug, Default)]
pub struct OrderProof {
    state: Mutex<Proved>,
}

#[derive(Debug, Default)]
struct Proved {
    /// The list's changes the blocks were proved at; `None`: nothing is proved.
    at: Option<u64>,
    /// One bit per block of [`PROOF_BLOCK`] rows.
    blocks: Vec<u64>,
}

impl OrderProof {
    /// Whether each of `which` rows holds the entity `list` holds there: `row_holds(row)` is asked
    /// of every row of each block not proved since `list` last changed.
    pub fn rows_hold<E: Copy>(
        &self,
        list: &Listed<E>,
        which: &Rows<'_>,
        row_holds: impl Fn(usize) -> bool,
    ) -> bool {
        let mut proved = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let len = list.len();
        if proved.at != Some(list.changes) {
            proved.at = Some(list.changes);
            proved.blocks.clear();
            proved
                .blocks
                .resize(len.div_ceil(PROOF_BLOCK).div_ceil(64), 0);
        }
        which.all(|row| {
            if row >= len {
                return false;
            }
            let block = row / PROOF_BLOCK;
            let (word, bit) = (block / 64, 1u64 << (block % 64));
            if proved.blocks[word] & bit != 0 {
                return true;
            }
            let holds = (block * PROOF_BLOCK..((block + 1) * PROOF_BLOCK).min(len)).all(&row_holds);
            if holds {
                proved.blocks[word] |= bit;
            }
            holds
        })
    }

    /// The storage changed behind the list (a caller holding the library's world): prove again.
    pub fn forget(&mut self) {
        self.state
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `rows` hold in `storage`, through `proof`, counting the rows asked.
    fn holds(
        proof: &OrderProof,
        list: &Listed<u32>,
        storage: &[u32],
        rows: &Rows<'_>,
        asked: &mut usize,
    ) -> bool {
        let count = std::cell::Cell::new(0);
        let held = proof.rows_hold(list, rows, |r| {
            count.set(count.get() + 1);
            storage[r] == list.get(r)
        });
        *asked += count.get();
        held
    }

    /// A row is proved with its block, once until the list changes; a row that does not hold
    /// fails, and so does every read after a change until the storage holds again.
    #[test]
    fn a_proof_holds_until_the_list_changes() {
        let mut list = Listed::default();
        list.extend(0..3000u32);
        let mut storage: Vec<u32> = (0..3000).collect();
        let mut proof = OrderProof::default();
        let mut asked = 0;
        assert!(holds(
            &proof,
            &list,
            &storage,
            &Rows::At(&[5, 2500]),
            &mut asked
        ));
        assert_eq!(
            asked,
            1024 + (3000 - 2048),
            "two blocks, the last one short"
        );
        assert!(holds(
            &proof,
            &list,
            &storage,
            &Rows::Range(0..10),
            &mut asked
        ));
        assert!(holds(
            &proof,
            &list,
            &storage,
            &Rows::At(&[2999, 1]),
            &mut asked
        ));
        assert_eq!(asked, 1024 + 952, "proved blocks are not asked again");
        assert!(
            !holds(&proof, &list, &storage, &Rows::At(&[3000]), &mut asked),
            "past the list"
        );

        // The storage moves a row without the list (a caller holding the world): unseen until
        // the proof is forgotten, as the layouts forget it when they lend their world.
        storage.swap(0, 1);
        assert!(
            holds(&proof, &list, &storage, &Rows::At(&[3]), &mut asked),
            "not seen"
        );
        proof.forget();
        assert!(!holds(
            &proof,
            &list,
            &storage,
            &Rows::At(&[1500, 3]),
            &mut asked
        ));
        assert!(
            holds(&proof, &list, &storage, &Rows::At(&[1500]), &mut asked),
            "another block"
        );
        storage.swap(0, 1);
        assert!(
            holds(&proof, &list, &storage, &Rows::At(&[3]), &mut asked),
            "asked again"
        );

        // A change to the list drops every proof.
        list.swap_remove(0);
        storage.swap_remove(0);
        assert!(holds(
            &proof,
            &list,
            &storage,
            &Rows::At(&[0, 2998]),
            &mut asked
        ));
        storage.swap(5, 6);
        assert!(
            holds(&proof, &list, &storage, &Rows::At(&[5]), &mut asked),
            "proved before"
        );
        list.swap_remove(100);
        storage.swap_remove(100);
        assert!(
            !holds(&proof, &list, &storage, &Rows::At(&[5]), &mut asked),
            "proved again"
        );
    }
}

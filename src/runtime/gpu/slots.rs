//! Where each entity of the gpu layout sits between two flushes. Appends and swap-removes arrive
//! one call at a time (the swarm's churn removes one victim after another), and a GPU round trip
//! per call would cost more than the frame; so they only update this map from logical index to
//! buffer slot, and one flush carries out the whole batch as a list of (destination, source)
//! moves. Appends go to fresh slots past everything written, so a flush never waits for them.

use std::collections::HashMap;

/// Logical index -> buffer slot, for the entities not in their own slot.
#[derive(Clone, Debug, Default)]
pub struct SlotMap {
    moved: HashMap<usize, usize>,
    /// Slots `0..written` hold data; appends go to `written`.
    written: usize,
}

impl SlotMap {
    /// The slot that holds logical entity `index`.
    pub fn slot(&self, index: usize) -> usize {
        self.moved.get(&index).copied().unwrap_or(index)
    }

    /// Slots in use, the appended ones included (what a buffer must hold until the next flush).
    pub fn written(&self) -> usize {
        self.written
    }

    /// Whether every entity is in its own slot.
    pub fn is_flat(&self) -> bool {
        self.moved.is_empty()
    }

    /// Appends `n` entities after logical index `len - 1`; returns the first slot to write them
    /// to (they take consecutive slots).
    pub fn push(&mut self, len: usize, n: usize) -> usize {
        let first = self.written;
        if first != len {
            self.moved.extend((0..n).map(|k| (len + k, first + k)));
        }
        self.written += n;
        first
    }

    /// The last of `len` entities takes logical index `index`'s place.
    pub fn swap_remove(&mut self, index: usize, len: usize) {
        let last = len - 1;
        let slot = self.moved.remove(&last).unwrap_or(last);
        if index != last {
            self.moved.insert(index, slot);
        }
    }

    /// Keeps the first `len` entities.
    pub fn truncate(&mut self, len: usize) {
        self.moved.retain(|&index, _| index < len);
        if self.moved.is_empty() {
            self.written = self.written.min(len);
        }
    }

    /// The (destination, source) slot moves that put `len` entities in their own slots, in any
    /// order (the flush reads every source before it writes any destination). Afterwards every
    /// entity is in its own slot and slots past `len` are free.
    pub fn take_moves(&mut self, len: usize) -> Vec<[u32; 2]> {
        let moves = self
            .moved
            .drain()
            .filter(|&(index, slot)| index != slot)
            .map(|(index, slot)| [index as u32, slot as u32])
            .collect();
        self.written = len;
        moves
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Random appends, swap-removes and truncations against a `Vec` of values; after each flush
    /// the slots, moved as the flush moves them, must hold exactly the `Vec`.
    #[test]
    fn flushed_slots_match_a_vec_that_saw_the_same_operations() {
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut model: Vec<u64> = Vec::new();
            let mut slots: Vec<u64> = Vec::new();
            let mut map = SlotMap::default();
            let mut next = 0u64;
            for _ in 0..rng.random_range(1..60) {
                match rng.random_range(0..10) {
                    0..=3 => {
                        let n = rng.random_range(0..5);
                        let first = map.push(model.len(), n);
                        slots.resize(map.written(), u64::MAX);
                        for k in 0..n {
                            slots[first + k] = next;
                            model.push(next);
                            next += 1;
                        }
                    }
                    4..=7 if !model.is_empty() => {
                        let i = rng.random_range(0..model.len());
                        map.swap_remove(i, model.len());
                        model.swap_remove(i);
                    }
                    8 => {
                        let len = rng.random_range(0..=model.len());
                        map.truncate(len);
                        model.truncate(len);
                    }
                    _ => {
                        let moves = map.take_moves(model.len());
                        let read: Vec<u64> = moves.iter().map(|m| slots[m[1] as usize]).collect();
                        for (m, v) in moves.iter().zip(read) {
                            slots[m[0] as usize] = v;
                        }
                        slots.truncate(model.len());
                        assert_eq!(slots, model, "seed {seed}");
                    }
                }
                for (i, v) in model.iter().enumerate() {
                    assert_eq!(slots[map.slot(i)], *v, "seed {seed}, index {i}");
                }
            }
        }
    }
}

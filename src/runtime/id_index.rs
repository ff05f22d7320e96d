//! Each live entity's logical index by its id: how the swarm turns a seeker's target id (a pure
//! function of the seed and the seeker's id) into the logical index a layout makes a handle of.
//! Looked up once per entity a switch copies or growth spawns, so it must be one read, not a
//! hash probe's two: ids are handed out in order and never reused, so while the ids issued are
//! not many more than the entities alive, a plain array indexed by id holds the map (4 bytes an
//! id); after heavy churn has issued more than [`DENSE_UP_TO`] times as many ids as are alive,
//! a hash map takes over.

use rustc_hash::FxHashMap;

/// The array stays while it has at most this many slots per live entity (and [`DENSE_MIN`]).
const DENSE_UP_TO: usize = 4;
/// Below this many ids the array is kept whatever the density.
const DENSE_MIN: usize = 1 << 16;
const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub enum IdIndex {
    /// `at[id]` is the logical index of entity `id`, or [`NONE`].
    Dense {
        at: Vec<u32>,
        live: usize,
        /// Live entities this index is known to be filling toward ([`Self::expecting`]): the
        /// array is judged by that count until it is reached, not by the few mapped so far.
        expected: usize,
    },
    Sparse(FxHashMap<u64, u32>),
}

impl Default for IdIndex {
    fn default() -> Self {
        IdIndex::expecting(0)
    }
}

impl IdIndex {
    /// An empty index that is about to map `n` entities, whatever order their ids come in. A
    /// sort by group appends ids 65 apart: judged by the entities mapped so far, a million-id
    /// array with its first few thousand entries looks like heavy churn, and the index would
    /// turn into a hash map a few thousand entities into the sort. The hash map would then
    /// rehash mid-sort (a frame over its share) and stay the swarm's index after it: every
    /// lookup a hash probe, and the next sort's list of ids several times slower to collect and
    /// sort (docs/results/order.md, "Sorting at 1M in the window, timed").
    pub fn expecting(n: usize) -> Self {
        IdIndex::Dense {
            at: Vec::new(),
            live: 0,
            expected: n,
        }
    }

    /// The logical index of entity `id`, if it is alive.
    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        match self {
            IdIndex::Dense { at, .. } => at.get(id as usize).copied().filter(|&i| i != NONE),
            IdIndex::Sparse(map) => map.get(&id).copied(),
        }
    }

    /// Starts reading the entry of `id` into the cache, for a [`Self::get`] soon after: the
    /// array's entries are random reads where many are looked up in a row (a switch's targets).
    /// The hash map's are not prefetched: it holds few ids, after heavy churn only.
    #[inline]
    pub fn prefetch(&self, id: u64) {
        if let IdIndex::Dense { at, .. } = self
            && let Some(entry) = at.get(id as usize)
        {
            crate::layout::seeking::prefetch(entry);
        }
    }

    pub fn contains(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Entity `id` is now at logical index `index` (a new entity, or one that moved).
    pub fn insert(&mut self, id: u64, index: u32) {
        match self {
            IdIndex::Dense { at, live, .. } => {
                let slot = id as usize;
                if slot >= at.len() {
                    at.resize(slot + 1, NONE);
                }
                if at[slot] == NONE {
                    *live += 1;
                }
                at[slot] = index;
                self.keep_dense_or_not();
            }
            IdIndex::Sparse(map) => {
                map.insert(id, index);
            }
        }
    }

    /// Entity `id` is gone.
    pub fn remove(&mut self, id: u64) {
        match self {
            IdIndex::Dense { at, live, .. } => {
                if let Some(slot) = at.get_mut(id as usize)
                    && *slot != NONE
                {
                    *slot = NONE;
                    *live -= 1;
                }
            }
            IdIndex::Sparse(map) => {
                map.remove(&id);
            }
        }
    }

    /// `new` appended to the logical order `ids` that this index maps.
    pub fn append(&mut self, ids: &mut Vec<u64>, new: &[u64]) {
        let first = ids.len();
        for (k, &id) in new.iter().enumerate() {
            self.insert(id, (first + k) as u32);
        }
        ids.extend_from_slice(new);
    }

    /// The id at `at` leaves the logical order `ids` that this index maps, the last one moving
    /// into its place (a swap-remove, as the layouts do it); returns the id removed.
    pub fn swap_remove(&mut self, ids: &mut Vec<u64>, at: usize) -> u64 {
        let victim = ids.swap_remove(at);
        self.remove(victim);
        if let Some(&moved) = ids.get(at) {
            self.insert(moved, at as u32);
        }
        victim
    }

    /// Every live id, smallest first: a walk of the array (no sort) while it is the array.
    pub fn ids_ascending(&self) -> Vec<u64> {
        match self {
            IdIndex::Dense { at, live, .. } => {
                let mut ids = Vec::with_capacity(*live);
                ids.extend(
                    at.iter()
                        .enumerate()
                        .filter(|&(_, &i)| i != NONE)
                        .map(|(id, _)| id as u64),
                );
                ids
            }
            IdIndex::Sparse(map) => {
                let mut ids: Vec<u64> = map.keys().copied().collect();
                ids.sort_unstable();
                ids
            }
        }
    }

    /// The map of exactly `ids`, in logical order (after most of a population went).
    pub fn rebuild(ids: &[u64]) -> Self {
        let top = ids.iter().max().map_or(0, |&id| id as usize + 1);
        let mut index = if top <= (DENSE_UP_TO * ids.len()).max(DENSE_MIN) {
            IdIndex::Dense {
                at: vec![NONE; top],
                live: 0,
                expected: 0,
            }
        } else {
            IdIndex::Sparse(FxHashMap::with_capacity_and_hasher(
                ids.len(),
                Default::default(),
            ))
        };
        for (i, &id) in ids.iter().enumerate() {
            index.insert(id, i as u32);
        }
        index
    }

    /// Gives back what the map holds beyond what its live ids need (after churn or a shrink):
    /// a hash map keeps its largest capacity otherwise, 16 bytes a slot.
    pub fn shrink_to_fit(&mut self) {
        match self {
            IdIndex::Dense { at, .. } => {
                while at.last() == Some(&NONE) {
                    at.pop();
                }
                at.shrink_to_fit();
            }
            IdIndex::Sparse(map) => map.shrink_to_fit(),
        }
    }

    /// Turns the array into a hash map once it holds too many dead ids per live one.
    fn keep_dense_or_not(&mut self) {
        if let IdIndex::Dense { live, expected, .. } = self
            && *live >= *expected
        {
            *expected = 0;
        }
        if let IdIndex::Dense { at, live, expected } = self
            && at.len() > (DENSE_UP_TO * (*live).max(*expected)).max(DENSE_MIN)
        {
            let map = at
                .iter()
                .enumerate()
                .filter(|&(_, &i)| i != NONE)
                .map(|(id, &i)| (id as u64, i))
                .collect();
            *self = IdIndex::Sparse(map);
        }
    }

    pub fn is_dense(&self) -> bool {
        matches!(self, IdIndex::Dense { .. })
    }

    /// Bytes the map takes.
    pub fn allocated_bytes(&self) -> u64 {
        match self {
            IdIndex::Dense { at, .. } => (at.capacity() * size_of::<u32>()) as u64,
            // hashbrown: a key, a value and a control byte per bucket.
            IdIndex::Sparse(map) => (map.capacity() * (size_of::<(u64, u32)>() + 1)) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The map against a plain hash map through growth, removals, moves and a churn that issues
    /// many more ids than stay alive (the array gives way to a hash map), then a rebuild.
    #[test]
    fn agrees_with_a_hash_map_dense_and_sparse() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let mut index = IdIndex::default();
        let mut truth = std::collections::HashMap::new();
        let mut alive: Vec<u64> = Vec::new();
        let mut next = 0u64;
        for round in 0..300_000 {
            if alive.len() < 1000 || rng.random_range(0..2) == 0 {
                index.insert(next, alive.len() as u32);
                truth.insert(next, alive.len() as u32);
                alive.push(next);
                next += 1;
            } else {
                let victim = rng.random_range(0..alive.len());
                let gone = alive.swap_remove(victim);
                index.remove(gone);
                truth.remove(&gone);
                if let Some(&moved) = alive.get(victim) {
                    index.insert(moved, victim as u32);
                    truth.insert(moved, victim as u32);
                }
            }
            if round % 997 == 0 {
                for id in next.saturating_sub(3000)..next {
                    assert_eq!(index.get(id), truth.get(&id).copied(), "round {round}");
                }
            }
        }
        assert!(!index.is_dense(), "300k ids issued for about 1,000 alive");
        let rebuilt = IdIndex::rebuild(&alive);
        for id in 0..next {
            assert_eq!(rebuilt.get(id), truth.get(&id).copied());
        }
        let small = IdIndex::rebuild(&[3, 1, 2]);
        assert!(small.is_dense());
        assert_eq!(
            (small.get(1), small.get(0), small.get(9)),
            (Some(1), None, None)
        );
    }

    /// A sort by group fills a fresh index with ids 65 apart: told how many are coming, it stays
    /// an array all the way (and maps the same as one filled in id order); left to judge by the
    /// entities mapped so far, it turns into a hash map early on. Once full, churn is judged as
    /// ever.
    #[test]
    fn an_index_told_its_count_stays_an_array_while_scattered_ids_fill_it() {
        let n = 200_000u64;
        let by_group: Vec<u64> = (0..65).flat_map(|g| (g..n).step_by(65)).collect();
        let mut told = IdIndex::expecting(n as usize);
        let mut untold = IdIndex::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for chunk in by_group.chunks(4_096) {
            told.append(&mut a, chunk);
            untold.append(&mut b, chunk);
            assert!(told.is_dense(), "at {} of {n}", a.len());
        }
        assert!(
            !untold.is_dense(),
            "judged by the first ids, it gave up the array"
        );
        for id in (0..n).step_by(97) {
            assert_eq!(told.get(id), untold.get(id));
        }
        // Full now: most of it leaving and new ids coming is churn again.
        for _ in 0..(n as usize - 1_000) {
            told.swap_remove(&mut a, 0);
        }
        let mut next = n;
        while told.is_dense() && next < 10 * n {
            told.append(&mut a, &[next]);
            next += 1;
        }
        assert!(
            !told.is_dense(),
            "a full index gives way to churn as any does"
        );
    }
}

//! The ids a reorder ([`super::reorder`]) copies, in the new order, handed out as the copy goes.

use super::order::Order;
use crate::runtime::id_index::IdIndex;
use crate::workload::GROUPS;

/// The ids a reorder copies, in its order, handed out as the copy goes: no list of every id is
/// built on the request's frame. Ids are issued in increasing order and never reused, so the
/// ids alive at the request are found by walking the ids issued below it (by group, each
/// group's ids [`GROUPS`] apart), and those spawned since follow in spawn order. Building that
/// list at the request would stall the frame of the key press at 10M (docs/results/order.md,
/// "Sorting at 1M in the window, timed"). Where
/// the id index is a hash map (far more ids issued than alive), the walk would mostly meet dead
/// ids: the ids are listed up front instead.
#[derive(Clone, Debug)]
pub(super) struct Queue {
    walk: Option<Walk>,
    /// The ids listed up front, where there is no walk.
    listed: Vec<u64>,
    /// How many of `listed` were handed out.
    listed_next: usize,
    /// The ids spawned since the request, handed out last, and how many of them were.
    pub(super) spawned: Vec<u64>,
    spawned_next: usize,
}

/// The ids below `end`, group by group: `group`, then every `step` ids (one group of step 1
/// for the id order).
#[derive(Clone, Copy, Debug)]
struct Walk {
    end: u64,
    step: u64,
    groups: u64,
    group: u64,
    next: u64,
}

impl Walk {
    fn next(&mut self) -> Option<u64> {
        while self.group < self.groups {
            if self.next < self.end {
                let id = self.next;
                self.next += self.step;
                return Some(id);
            }
            self.group += 1;
            self.next = self.group;
        }
        None
    }
}

impl Queue {
    /// The ids `index` maps now, ids below `end` issued, in `order`; `positions` holds where
    /// each entity stands, by logical index, for the cell order (listed up front: its key is
    /// no function of the id).
    pub(super) fn new(order: Order, end: u64, index: &IdIndex, positions: &[[f64; 2]]) -> Self {
        if !index.is_dense() || !order.by_id() {
            let at = |id: u64| index.get(id).map_or([0.0; 2], |i| positions[i as usize]);
            return Self::listed(order.arrange(index.ids_ascending(), at));
        }
        let step = if order == Order::Group { GROUPS } else { 1 };
        Self {
            walk: Some(Walk {
                end,
                step,
                groups: step,
                group: 0,
                next: 0,
            }),
            ..Self::listed(Vec::new())
        }
    }

    /// Exactly `ids`, in that order (then those spawned since).
    pub(super) fn listed(ids: Vec<u64>) -> Self {
        Self {
            walk: None,
            listed: ids,
            listed_next: 0,
            spawned: Vec::new(),
            spawned_next: 0,
        }
    }

    /// The next id to copy, alive or not (the caller skips the dead).
    pub(super) fn next(&mut self) -> Option<u64> {
        if let Some(walk) = self.walk.as_mut() {
            if let Some(id) = walk.next() {
                return Some(id);
            }
            self.walk = None;
        }
        if let Some(&id) = self.listed.get(self.listed_next) {
            self.listed_next += 1;
            return Some(id);
        }
        let id = self.spawned.get(self.spawned_next).copied()?;
        self.spawned_next += 1;
        Some(id)
    }

    pub(super) fn is_done(&self) -> bool {
        self.walk.is_none_or(|w| w.group >= w.groups)
            && self.listed_next == self.listed.len()
            && self.spawned_next == self.spawned.len()
    }

    /// Whether the alive ids it hands out are `ids`, in that order: the population is in this
    /// order already. Stops at the first difference (churn swaps entities in from the end, so a
    /// population that strayed differs early).
    pub(super) fn matches(mut self, ids: &[u64], index: &IdIndex) -> bool {
        let mut expected = ids.iter();
        while let Some(id) = self.next() {
            if index.contains(id) && expected.next() != Some(&id) {
                return false;
            }
        }
        expected.next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The queue hands out the alive ids in the order a sorted list of them has, walking the ids
    /// issued (an array index) or listing them (a hash map index, after heavy churn), then the
    /// spawned ones; and it tells a population in its order from one a swap has moved.
    #[test]
    fn the_queue_hands_out_the_alive_ids_in_order_from_either_index() {
        for (issued, keep_every) in [(150_000u64, 3), (400_000, 50)] {
            let mut ids = Vec::new();
            let mut index = IdIndex::default();
            index.append(&mut ids, &(0..issued).collect::<Vec<_>>());
            for id in (0..issued).filter(|id| id % keep_every != 1) {
                let at = index.get(id).unwrap() as usize;
                index.swap_remove(&mut ids, at);
            }
            assert_eq!(index.is_dense(), keep_every == 3, "{issued}");
            for order in Order::BOTH {
                let mut queue = Queue::new(order, issued, &index, &[]);
                queue.spawned.extend([issued + 5, issued + 2]);
                let mut handed = Vec::new();
                while let Some(id) = queue.next() {
                    if index.contains(id) || id >= issued {
                        handed.push(id);
                    }
                }
                assert!(queue.is_done());
                let mut expected = order.arrange(index.ids_ascending(), |_| [0.0; 2]);
                expected.extend([issued + 5, issued + 2]);
                assert_eq!(handed, expected, "{order}, {issued} issued");
                let arranged = order.arrange(index.ids_ascending(), |_| [0.0; 2]);
                let fresh = || Queue::new(order, issued, &index, &[]);
                assert!(fresh().matches(&arranged, &index), "{order}");
                let mut swapped = arranged.clone();
                swapped.swap(3, 40);
                assert!(!fresh().matches(&swapped, &index), "{order}: a swap");
                assert!(
                    !fresh().matches(&arranged[1..], &index),
                    "{order}: one short"
                );
            }
        }
    }
}

//! The storage order: which entity sits next to which. Seek reads each entity's target, an
//! earlier member of its own group ([`crate::workload::target_of`]). In id order the members of
//! a group are [`GROUPS`] slots apart and a target lies anywhere in the storage; sorted by
//! group, a seeker and its target share a stretch of the storage a group long.
//!
//! A reorder rebuilds the population in the new order in a fresh layout of the same kind, at
//! once: every id, state and target is kept (targets are found again by id), so every result
//! is the same by id. This is how a user of Bevy or hecs reorders (neither can sort a table in
//! place); it is the bench's measure of what an order is worth, in every layout alike.

use super::{Snapshot, Swarm};
use crate::catalog::AllLayouts;
use crate::error::SimError;
use crate::workload::{GROUPS, target_of};

/// A storage order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// By id: the order entities are born in, as a population that was never sorted has it.
    Id,
    /// By seek group, and by id within a group: seekers beside their targets.
    Group,
}

impl Order {
    pub const BOTH: [Order; 2] = [Order::Id, Order::Group];

    pub fn name(self) -> &'static str {
        match self {
            Order::Id => "id",
            Order::Group => "group",
        }
    }

    /// Where entity `id` goes: entities are stored by increasing key.
    fn key(self, id: u64) -> (u64, u64) {
        match self {
            Order::Id => (0, id),
            Order::Group => (id % GROUPS, id),
        }
    }
}

impl<S: AllLayouts> Swarm<S> {
    /// Rebuilds the population in `order`, at once, in a fresh layout of the same kind. A
    /// pending switch is dropped first. On error (no memory for the copy) nothing changes.
    pub fn reorder(&mut self, order: Order) -> Result<(), SimError> {
        self.cancel_switch();
        let snapshot = self.export();
        let mut at: Vec<usize> = (0..snapshot.ids.len()).collect();
        at.sort_unstable_by_key(|&i| order.key(snapshot.ids[i]));
        let sorted = Snapshot {
            ids: at.iter().map(|&i| snapshot.ids[i]).collect(),
            states: at.iter().map(|&i| snapshot.states[i]).collect(),
        };
        drop(snapshot);
        self.import(&sorted)
    }

    /// How far the order is from keeping seekers beside their targets (spawns append and
    /// removals swap, so churn spreads a sorted population out again): of the seekers whose
    /// target is alive, the share stored more than `slots` entities from it; and the share of
    /// would-be seekers whose target is alive at all (churn removes targets, and a seeker
    /// without one skips the read).
    pub fn target_spread(&self, slots: usize) -> TargetSpread {
        let (mut seekers, mut live, mut far) = (0usize, 0usize, 0usize);
        for (i, &id) in self.ids.iter().enumerate() {
            let Some(target) = target_of(self.seed, id) else {
                continue;
            };
            seekers += 1;
            if let Some(j) = self.index.get(target) {
                live += 1;
                far += usize::from((j as usize).abs_diff(i) > slots);
            }
        }
        let share = |part: usize, of: usize| {
            if of == 0 {
                0.0
            } else {
                part as f64 / of as f64
            }
        };
        TargetSpread {
            far: share(far, live),
            live: share(live, seekers),
        }
    }
}

/// What [`Swarm::target_spread`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetSpread {
    /// Of the seekers with a live target, the share stored far from it.
    pub far: f64,
    /// Of the entities that have a target, the share whose target is alive.
    pub live: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;
    use crate::workload::{Dt, SEED};

    #[test]
    fn a_reorder_keeps_every_entity_state_and_target_in_every_layout() {
        for kind in LayoutKind::CPU {
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, 3_000).unwrap();
            swarm.churn(500).unwrap();
            let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 3_000).unwrap();
            reference.churn(500).unwrap();
            for order in [Order::Group, Order::Id, Order::Group] {
                swarm.reorder(order).unwrap();
                swarm.check_targets().unwrap();
                for _ in 0..3 {
                    swarm.step_seek(Dt::default(), crate::threads::Threads::One);
                    swarm.step(Dt::default(), crate::threads::Threads::One);
                    reference.step_seek(Dt::default(), crate::threads::Threads::One);
                    reference.step(Dt::default(), crate::threads::Threads::One);
                }
                assert_eq!(swarm.len(), reference.len(), "{kind} {order:?}");
                assert_eq!(swarm.checksum(), reference.checksum(), "{kind} {order:?}");
            }
        }
    }

    #[test]
    fn sorted_by_group_seekers_sit_by_their_targets_and_churn_spreads_them() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 65_000).unwrap();
        assert_eq!(swarm.target_spread(1).live, 1.0);
        // In id order a target is a multiple of GROUPS slots away, anywhere below its seeker.
        let page = 4096 / 36;
        let before = swarm.target_spread(page).far;
        swarm.reorder(Order::Group).unwrap();
        let sorted = swarm.target_spread(page).far;
        assert!(before > 0.9, "{before}");
        // A group is 1,000 entities long here: most targets are within a page's worth of it.
        let group = 65_000 / GROUPS as usize;
        assert!(swarm.target_spread(group).far == 0.0);
        assert!(sorted < before, "{sorted} vs {before}");
        for _ in 0..10 {
            swarm.churn(3_250).unwrap();
        }
        assert!(swarm.target_spread(group).far > 0.1);
        // Churn removed targets too: fewer seekers read one.
        assert!(swarm.target_spread(group).live < 1.0);
        // And the mutation: the same measure in id order says the order is not kept.
        swarm.reorder(Order::Id).unwrap();
        assert!(swarm.target_spread(group).far > 0.9);
    }
}

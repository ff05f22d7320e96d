//! The storage order: which entity sits next to which. Seek reads each entity's target, an
//! earlier member of its own group ([`crate::workload::target_of`]). In id order the members of
//! a group are [`GROUPS`] slots apart and a target lies anywhere in the storage; sorted by
//! group, a seeker and its target share a stretch of the storage a group long. The swarm
//! rebuilds a population in an order; a library that sorts its own storage
//! ([`crate::layout::SortsInPlace`]: flecs' `order_by`) sorts by the same key.

use std::fmt;
use std::str::FromStr;

use crate::workload::GROUPS;

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
    pub fn key(self, id: u64) -> (u64, u64) {
        match self {
            Order::Id => (0, id),
            Order::Group => (id % GROUPS, id),
        }
    }

    /// `ids`, smallest first, put in this order: a stable counting sort by group, with no
    /// comparison sort (a million ids in a few milliseconds, within a frame's share).
    pub fn arrange(self, ascending: Vec<u64>) -> Vec<u64> {
        match self {
            Order::Id => ascending,
            Order::Group => {
                let group = |id: u64| (id % GROUPS) as usize;
                let mut starts = vec![0usize; GROUPS as usize + 1];
                for &id in &ascending {
                    starts[group(id) + 1] += 1;
                }
                for g in 1..starts.len() {
                    starts[g] += starts[g - 1];
                }
                let mut sorted = vec![0u64; ascending.len()];
                for &id in &ascending {
                    let slot = &mut starts[group(id)];
                    sorted[*slot] = id;
                    *slot += 1;
                }
                sorted
            }
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Order {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Order::BOTH
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("unknown order '{s}'; accepted: id, group"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counting sort gives what a comparison sort by (group, id) gives.
    #[test]
    fn arrange_sorts_by_group_then_id() {
        let ids: Vec<u64> = (0..5_000u64).filter(|id| id % 7 != 3).collect();
        for order in Order::BOTH {
            let mut expected = ids.clone();
            expected.sort_by_key(|&id| order.key(id));
            assert_eq!(order.arrange(ids.clone()), expected, "{order}");
        }
        assert_eq!("group".parse::<Order>(), Ok(Order::Group));
        assert!(
            "size"
                .parse::<Order>()
                .unwrap_err()
                .contains("accepted: id, group")
        );
    }
}

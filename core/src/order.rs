//! The storage order: which entity sits next to which. Seek reads each entity's target, an
//! earlier member of its own group ([`crate::workload::target_of`]). In id order the members of
//! a group are [`GROUPS`] slots apart and a target lies anywhere in the storage; sorted by
//! group, a seeker and its target share a stretch of the storage a group long. The neighbour
//! pass reads the entities near each one: sorted by cell (along a Z-order curve over the
//! world), entities near in the world are near in the storage, until motion scatters them. The
//! swarm rebuilds a population in an order; a library that sorts its own storage
//! ([`crate::layout::SortsInPlace`]: flecs' `order_by`) sorts by the same key where the key is
//! the id's.

use std::fmt;
use std::str::FromStr;

use crate::workload::{GROUPS, WORLD_HEIGHT, WORLD_WIDTH};

/// A storage order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// By id: the order entities are born in, as a population that was never sorted has it.
    Id,
    /// By seek group, and by id within a group: seekers beside their targets.
    Group,
    /// By where each entity stood when the sort began, along a Z-order (Morton) curve over the
    /// world ([`cell_key`]), and by id at the same key: neighbours beside each other.
    Cell,
}

impl Order {
    /// The orders keyed by the id alone.
    pub const BOTH: [Order; 2] = [Order::Id, Order::Group];
    pub const ALL: [Order; 3] = [Order::Id, Order::Group, Order::Cell];

    pub fn name(self) -> &'static str {
        match self {
            Order::Id => "id",
            Order::Group => "group",
            Order::Cell => "cell",
        }
    }

    /// Whether the order is a function of the id alone (the cell order is one of positions).
    pub fn by_id(self) -> bool {
        self != Order::Cell
    }

    /// Where entity `id` at `position` goes: entities are stored by increasing key.
    pub fn key(self, id: u64, position: [f64; 2]) -> (u64, u64) {
        match self {
            Order::Id => (0, id),
            Order::Group => (id % GROUPS, id),
            Order::Cell => (u64::from(cell_key(position)), id),
        }
    }

    /// `ids`, smallest first, put in this order; `position(id)` is where entity `id` stands
    /// (read only for the cell order). By group: a stable counting sort, with no comparison
    /// sort (a million ids in a few milliseconds, within a frame's share). By cell: a sort of
    /// (key, id) pairs.
    pub fn arrange(self, ascending: Vec<u64>, position: impl Fn(u64) -> [f64; 2]) -> Vec<u64> {
        match self {
            Order::Id => ascending,
            Order::Cell => {
                let mut keyed: Vec<(u32, u64)> = ascending
                    .iter()
                    .map(|&id| (cell_key(position(id)), id))
                    .collect();
                keyed.sort_unstable();
                keyed.into_iter().map(|(_, id)| id).collect()
            }
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
        Order::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| format!("unknown order '{s}'; accepted: id, group, cell"))
    }
}

/// Bits per axis of [`cell_key`]'s grid: cells far finer than any neighbour radius the bench
/// runs, so that one neighbour cell's entities are a few runs of the curve.
pub const CELL_KEY_BITS: u32 = 16;

/// Where `position` lies along a Z-order curve over the world: `x` and `y` quantized to
/// [`CELL_KEY_BITS`] bits each, their bits interleaved (x in the even bits). Points close in
/// the world get close keys, except across the curve's seams.
pub fn cell_key([x, y]: [f64; 2]) -> u32 {
    let cells = f64::from(1u32 << CELL_KEY_BITS);
    let max = (1u32 << CELL_KEY_BITS) - 1;
    let quantize = |v: f64, extent: f64| ((v / extent * cells) as u32).min(max);
    spread(quantize(x, WORLD_WIDTH)) | (spread(quantize(y, WORLD_HEIGHT)) << 1)
}

/// The low 16 bits of `v`, one every other bit.
fn spread(v: u32) -> u32 {
    let mut v = v & 0xFFFF;
    v = (v | (v << 8)) & 0x00FF_00FF;
    v = (v | (v << 4)) & 0x0F0F_0F0F;
    v = (v | (v << 2)) & 0x3333_3333;
    (v | (v << 1)) & 0x5555_5555
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each order's arrangement is what a comparison sort by its key gives.
    #[test]
    fn arrange_sorts_by_key_then_id() {
        let ids: Vec<u64> = (0..5_000u64).filter(|id| id % 7 != 3).collect();
        // Positions with repeats, so that the cell order breaks ties by id.
        let position = |id: u64| [(id % 1_600) as f64, ((id / 3) % 900) as f64];
        for order in Order::ALL {
            let mut expected = ids.clone();
            expected.sort_by_key(|&id| order.key(id, position(id)));
            assert_eq!(order.arrange(ids.clone(), position), expected, "{order}");
        }
        assert_eq!("cell".parse::<Order>(), Ok(Order::Cell));
        assert!(
            "size"
                .parse::<Order>()
                .unwrap_err()
                .contains("accepted: id, group, cell")
        );
    }

    /// The curve visits the four quarters of a square in Z order, and the world's far corner
    /// is its last key.
    #[test]
    fn the_cell_key_follows_a_z_curve() {
        let (w, h) = (WORLD_WIDTH, WORLD_HEIGHT);
        let quarters = [
            [0.1, 0.1],
            [w * 0.6, 0.1],
            [0.1, h * 0.6],
            [w * 0.6, h * 0.6],
        ];
        let keys = quarters.map(cell_key);
        assert!(keys.windows(2).all(|k| k[0] < k[1]), "{keys:?}");
        assert_eq!(cell_key([w - 0.001, h - 0.001]), u32::MAX);
        assert_eq!(cell_key([0.0, 0.0]), 0);
    }
}

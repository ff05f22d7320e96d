//! Where a layout's entities really are: for a range of entities, the stretches of live memory
//! (address, length, field) that hold them, read from the storage itself, never typed by hand.
//! The app's memory view draws them as cache lines; the tests check them against each storage's
//! shape (SoA's `x` advances 4 B per entity at f32, AoS's 32 B, each boxed region is a box).

use crate::scalar::Scalar;
use crate::workload::EntityState;

/// What a byte of storage holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    X,
    Y,
    Vx,
    Vy,
    Hp,
    Energy,
    Regen,
    Armor,
    /// The entity's id (ours, or Bevy's `EntityId` component).
    Id,
}

impl Field {
    /// The eight state fields in [`EntityState`] order.
    pub const STATE: [Field; 8] = [
        Field::X,
        Field::Y,
        Field::Vx,
        Field::Vy,
        Field::Hp,
        Field::Energy,
        Field::Regen,
        Field::Armor,
    ];
    /// The state fields, then the id.
    pub const ALL: [Field; 9] = {
        let mut all = [Field::Id; 9];
        let mut i = 0;
        while i < Self::STATE.len() {
            all[i] = Self::STATE[i];
            i += 1;
        }
        all
    };

    pub fn name(self) -> &'static str {
        match self {
            Field::X => "x",
            Field::Y => "y",
            Field::Vx => "vx",
            Field::Vy => "vy",
            Field::Hp => "hp",
            Field::Energy => "energy",
            Field::Regen => "regen",
            Field::Armor => "armor",
            Field::Id => "id",
        }
    }

    /// What `move` reads (it writes x and y back).
    pub fn read_by_move(self) -> bool {
        matches!(self, Field::X | Field::Y | Field::Vx | Field::Vy)
    }

    /// What `regen` reads (it writes energy back).
    pub fn read_by_regen(self) -> bool {
        matches!(self, Field::Energy | Field::Regen)
    }

    pub fn written(self) -> bool {
        matches!(self, Field::X | Field::Y | Field::Energy)
    }

    /// The memory view's colour for this field (sRGB), here so that the app and its tests agree.
    pub fn rgb(self) -> [u8; 3] {
        match self {
            Field::X => [235, 85, 75],
            Field::Y => [245, 150, 55],
            Field::Vx => [70, 140, 245],
            Field::Vy => [90, 205, 245],
            Field::Hp => [110, 200, 95],
            Field::Energy => [180, 110, 235],
            Field::Regen => [235, 105, 185],
            Field::Armor => [150, 150, 140],
            Field::Id => [95, 100, 160],
        }
    }
}

/// `len` bytes at `addr` holding `field` of the entity at logical index `entity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub addr: usize,
    pub len: usize,
    pub field: Field,
    pub entity: usize,
}

impl Region {
    pub fn of<T>(value: &T, field: Field, entity: usize) -> Self {
        Self {
            addr: std::ptr::from_ref(value).addr(),
            len: size_of::<T>(),
            field,
            entity,
        }
    }

    pub fn end(&self) -> usize {
        self.addr + self.len
    }
}

/// The eight fields of one `EntityState` wherever it sits (an AoS slot, a box).
pub fn state_regions<S: Scalar>(entity: usize, state: &EntityState<S>, out: &mut Vec<Region>) {
    let fields = [
        &state.x,
        &state.y,
        &state.vx,
        &state.vy,
        &state.hp,
        &state.energy,
        &state.regen,
        &state.armor,
    ];
    for (value, field) in fields.into_iter().zip(Field::STATE) {
        out.push(Region::of(value, field, entity));
    }
}

/// The 64-byte cache lines that hold any byte of `regions` for which `wanted` says yes.
pub fn cache_lines(regions: &[Region], wanted: impl Fn(Field) -> bool) -> usize {
    let mut lines: Vec<usize> = regions
        .iter()
        .filter(|r| wanted(r.field) && r.len > 0)
        .flat_map(|r| (r.addr / 64)..=((r.end() - 1) / 64))
        .collect();
    lines.sort_unstable();
    lines.dedup();
    lines.len()
}

/// Each entity's first state byte, in the order the regions list the entities (ids, kept in
/// their own array by every layout, do not count).
pub fn entity_starts(regions: &[Region]) -> Vec<usize> {
    let mut starts: Vec<(usize, usize)> = Vec::new();
    for r in regions.iter().filter(|r| r.field != Field::Id) {
        match starts.last_mut() {
            Some((entity, addr)) if *entity == r.entity => *addr = (*addr).min(r.addr),
            _ => starts.push((r.entity, r.addr)),
        }
    }
    starts.into_iter().map(|(_, addr)| addr).collect()
}

/// The median distance in bytes between consecutive entities' first state bytes (the boxed
/// view's figure: a box's size in allocation order, a random jump once shuffled). Ids, kept in
/// their own array by every layout, do not count.
pub fn median_stride(regions: &[Region]) -> Option<u64> {
    let mut gaps: Vec<u64> = entity_starts(regions)
        .windows(2)
        .map(|w| w[1].abs_diff(w[0]) as u64)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    Some(gaps[gaps.len() / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entity_state_is_eight_adjacent_fields() {
        let state = EntityState::<f32>::from_array([0.0; 8]);
        let mut out = Vec::new();
        state_regions(3, &state, &mut out);
        assert_eq!(out.len(), 8);
        for pair in out.windows(2) {
            assert_eq!(pair[1].addr, pair[0].addr + 4);
        }
        assert!(out.iter().all(|r| r.entity == 3 && r.len == 4));
    }

    #[test]
    fn lines_and_strides() {
        let r = |addr, field, entity| Region {
            addr,
            len: 4,
            field,
            entity,
        };
        // Two entities, x in one line, vx straddling into the next.
        let regions = [
            r(0, Field::X, 0),
            r(62, Field::Vx, 0),
            r(9000, Field::Id, 1),
            r(100, Field::Hp, 1),
        ];
        assert_eq!(cache_lines(&regions, Field::read_by_move), 2);
        assert_eq!(cache_lines(&regions, |f| f == Field::Hp), 1);
        assert_eq!(median_stride(&regions), Some(100));
        assert_eq!(median_stride(&regions[..1]), None);
    }
}

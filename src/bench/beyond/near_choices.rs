//! The two choices the neighbour system made, measured against what each was chosen over (cells
//! of the `neighbours` experiment, over one population's positions in `soa`'s shape):
//! - each pair's push summed in fixed point, whose sum does not depend on the order its terms
//!   come in, against a float sum in a fixed order: each entity's neighbours sorted by id, then
//!   added. Both read the same grid; only the summing differs.
//! - the storage sorted along a Z-order (Morton) curve, against a Hilbert curve, which never
//!   jumps across a seam, so a cell's neighbours lie in fewer runs of the storage.

use crate::neighbours::{AvoidForm, Grid, Neighbours};
use crate::order::{CELL_KEY_BITS, cell_key};
use crate::threads::Threads;
use crate::workload::{AvoidConstants, Push, WORLD_HEIGHT, WORLD_WIDTH, avoid_pair, shortest};

/// A space-filling curve the storage can be sorted along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Curve {
    Morton,
    Hilbert,
}

impl Curve {
    pub const BOTH: [Curve; 2] = [Curve::Morton, Curve::Hilbert];

    pub fn name(self) -> &'static str {
        match self {
            Curve::Morton => "morton",
            Curve::Hilbert => "hilbert",
        }
    }

    /// Where `position` lies along the curve, at [`CELL_KEY_BITS`] bits an axis.
    pub fn key(self, position: [f64; 2]) -> u32 {
        match self {
            Curve::Morton => cell_key(position),
            Curve::Hilbert => {
                let cells = f64::from(1u32 << CELL_KEY_BITS);
                let max = (1u32 << CELL_KEY_BITS) - 1;
                let quantize = |v: f64, extent: f64| ((v / extent * cells) as u32).min(max);
                hilbert(
                    CELL_KEY_BITS,
                    quantize(position[0], WORLD_WIDTH),
                    quantize(position[1], WORLD_HEIGHT),
                )
            }
        }
    }
}

/// The distance along a Hilbert curve over a square of `2^bits` cells a side to cell `(x, y)`:
/// quadrant by quadrant from the largest, each quadrant's frame turned so that the curve
/// enters it where the last one left.
pub fn hilbert(bits: u32, mut x: u32, mut y: u32) -> u32 {
    let side = 1u64 << bits;
    let mut d = 0u64;
    let mut s = side / 2;
    while s > 0 {
        let rx = u64::from(u64::from(x) & s != 0);
        let ry = u64::from(u64::from(y) & s != 0);
        d += s * s * ((3 * rx) ^ ry);
        if ry == 0 {
            if rx == 1 {
                x = (side - 1) as u32 - x;
                y = (side - 1) as u32 - y;
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    d as u32
}

/// `positions` (logical order) stored along `curve`, ties by index: the stored positions and
/// each one's logical index (its id).
pub fn along(curve: Curve, positions: &[[f32; 2]]) -> (Vec<[f32; 2]>, Vec<u32>) {
    let mut keyed: Vec<(u32, u32)> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (curve.key([f64::from(p[0]), f64::from(p[1])]), i as u32))
        .collect();
    keyed.sort_unstable();
    let ids: Vec<u32> = keyed.iter().map(|&(_, i)| i).collect();
    (ids.iter().map(|&i| positions[i as usize]).collect(), ids)
}

/// One idiomatic pass over `stored` (the grid built, then every pair): its time is what a
/// curve's order buys.
pub fn pass(near: &mut Neighbours<f32>, stored: &[[f32; 2]]) -> u64 {
    near.set_form(AvoidForm::Idiomatic);
    let pushes = near.push_apart(Threads::One, stored.len(), |i| stored[i]);
    pushes.iter().map(|p| u64::from(p.within)).sum()
}

/// Every entity's push over `grid`, summed in fixed point (what the avoid system does).
pub fn fixed_point_sums(grid: Grid<'_>, stored: &[[f32; 2]], out: &mut Vec<Push>) {
    let c = AvoidConstants::<f32>::new(grid.shape.radius);
    out.clear();
    for (i, &[x, y]) in stored.iter().enumerate() {
        let cell = grid.cells[i] as usize;
        let (col, row) = (cell % grid.shape.cols, cell / grid.shape.cols);
        let mut push = Push::default();
        grid.shape.around(grid.starts, col, row, |run| {
            for &j in &grid.members[run] {
                let [nx, ny] = stored[j as usize];
                avoid_pair(&c, x, y, nx, ny, &mut push);
            }
        });
        out.push(push);
    }
}

/// Every entity's push over `grid` as floats summed in a fixed order: the pushes from the
/// entities within the radius gathered with their ids, sorted by id, then added.
pub fn id_order_sums(
    grid: Grid<'_>,
    stored: &[[f32; 2]],
    ids: &[u32],
    scratch: &mut Vec<(u32, f32, f32)>,
    out: &mut Vec<[f32; 2]>,
) {
    let [r2, inv_r, inv_r2] = AvoidConstants::<f32>::new(grid.shape.radius).radius_terms();
    let (w, h) = (WORLD_WIDTH as f32, WORLD_HEIGHT as f32);
    out.clear();
    for (i, &[x, y]) in stored.iter().enumerate() {
        let cell = grid.cells[i] as usize;
        let (col, row) = (cell % grid.shape.cols, cell / grid.shape.cols);
        scratch.clear();
        grid.shape.around(grid.starts, col, row, |run| {
            for &j in &grid.members[run] {
                let [nx, ny] = stored[j as usize];
                let (dx, dy) = (shortest(nx - x, w, w / 2.0), shortest(ny - y, h, h / 2.0));
                let d2 = dx * dx + dy * dy;
                if d2 < r2 {
                    let fall = (1.0 - d2 * inv_r2) * inv_r;
                    scratch.push((ids[j as usize], -dx * fall, -dy * fall));
                }
            }
        });
        scratch.sort_unstable_by_key(|t| t.0);
        let sum = scratch
            .iter()
            .fold([0.0f32; 2], |[sx, sy], &(_, px, py)| [sx + px, sy + py]);
        out.push(sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over a 4 x 4 square the curve visits every cell once, each step to a cell beside the
    /// last, from the corner at the origin to the one across the bottom edge.
    #[test]
    fn the_hilbert_curve_steps_from_each_cell_to_one_beside_it() {
        let mut at = [(0u32, 0u32); 16];
        for x in 0..4 {
            for y in 0..4 {
                at[hilbert(2, x, y) as usize] = (x, y);
            }
        }
        let mut seen = at.to_vec();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 16, "every cell once");
        for pair in at.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert_eq!(a.0.abs_diff(b.0) + a.1.abs_diff(b.1), 1, "{a:?} -> {b:?}");
        }
        assert_eq!((at[0], at[15]), ((0, 0), (3, 0)));
    }

    /// Both sums see the same neighbours: the fixed point's, taken back to floats, is within
    /// its truncation of the float sum's, entity by entity.
    #[test]
    fn the_two_sums_agree_within_the_fixed_point() {
        let positions: Vec<[f32; 2]> = (0..3000)
            .map(|i| {
                let t = i as f32;
                [(t * 7.31) % 1600.0, (t * 3.17) % 900.0]
            })
            .collect();
        let (stored, ids) = along(Curve::Hilbert, &positions);
        let mut near = Neighbours::<f32>::default();
        pass(&mut near, &stored);
        let grid = near.grid().unwrap();
        let (mut fixed, mut floats, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
        fixed_point_sums(grid, &stored, &mut fixed);
        id_order_sums(grid, &stored, &ids, &mut scratch, &mut floats);
        let one = crate::workload::AVOID_FIXED_ONE as f32;
        let mut pushed = 0;
        for (f, p) in fixed.iter().zip(&floats) {
            let slack = f.within as f32 / one + 1e-4;
            assert!((f.x as f32 / one - p[0]).abs() <= slack, "{f:?} {p:?}");
            assert!((f.y as f32 / one - p[1]).abs() <= slack, "{f:?} {p:?}");
            pushed += usize::from(f.within > 1);
        }
        assert!(pushed > 100, "only {pushed} entities had a neighbour");
    }
}

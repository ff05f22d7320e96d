//! The tuned inner loops of the archetype ECS layouts (Bevy's contiguous slices, hecs' archetype
//! columns, flecs' table fields): `move` over a column of `{ x, y }` positions beside one of
//! velocities, and `regen` over two one-value columns, each compiled per SIMD tier. One kernel
//! for every library, generic over the component structs through [`Pair`] and [`One`], so that
//! where two ECS libraries differ in the tables, the difference is their storage and iteration,
//! not the loop.

use crate::layout::components::{Energy, InTable, Position, Regen, Storage, Velocity};
use crate::scalar::Scalar;
use crate::simd::Kernel;
use crate::workload::{WORLD_HEIGHT, WORLD_WIDTH, move_coordinate, move_one, regen_one};

/// A two-value component (`Position { x, y }`, `Velocity { x, y }`) as the kernels see it.
pub trait Pair<S>: Send + Sync {
    fn x(&self) -> S;
    fn y(&self) -> S;
    fn set(&mut self, x: S, y: S);
}

/// A one-value component (`Energy`, `Regen`) as the kernels see it.
pub trait One<S>: Send + Sync {
    fn get(&self) -> S;
    fn set(&mut self, v: S);
}

impl<S: Scalar, K: Storage> Pair<S> for Position<S, K> {
    #[inline(always)]
    fn x(&self) -> S {
        self.x
    }
    #[inline(always)]
    fn y(&self) -> S {
        self.y
    }
    #[inline(always)]
    fn set(&mut self, x: S, y: S) {
        (self.x, self.y) = (x, y);
    }
}

impl<S: Scalar, K: Storage> Pair<S> for Velocity<S, K> {
    #[inline(always)]
    fn x(&self) -> S {
        self.x
    }
    #[inline(always)]
    fn y(&self) -> S {
        self.y
    }
    #[inline(always)]
    fn set(&mut self, x: S, y: S) {
        (self.x, self.y) = (x, y);
    }
}

impl<S: Scalar, K: Storage> One<S> for Energy<S, K> {
    #[inline(always)]
    fn get(&self) -> S {
        self.value
    }
    #[inline(always)]
    fn set(&mut self, v: S) {
        self.value = v;
    }
}

impl<S: Scalar, K: Storage> One<S> for Regen<S, K> {
    #[inline(always)]
    fn get(&self) -> S {
        self.per_second
    }
    #[inline(always)]
    fn set(&mut self, v: S) {
        self.per_second = v;
    }
}

/// [`move_interleaved`] as a kernel compiled per SIMD tier; `one_cursor` runs the same loop with
/// a single cursor ([`move_interleaved_one_cursor`]), the bench's control.
pub struct MoveInterleaved<'a, S: Scalar, P = Position<S, InTable>, V = Velocity<S, InTable>> {
    pub positions: &'a mut [P],
    pub velocities: &'a [V],
    pub dt: S,
    pub one_cursor: bool,
}

impl<S: Scalar, P: Pair<S>, V: Pair<S>> Kernel for MoveInterleaved<'_, S, P, V> {
    #[inline(always)]
    fn run(self) {
        if self.one_cursor {
            move_interleaved_one_cursor(self.positions, self.velocities, self.dt);
        } else {
            move_interleaved(self.positions, self.velocities, self.dt);
        }
    }
}

/// The tuned regen loop over one column of energies and one of rates, compiled per SIMD tier.
pub struct RegenTable<'a, S: Scalar, E, R> {
    pub energies: &'a mut [E],
    pub regens: &'a [R],
    pub dt: S,
}

impl<S: Scalar, E: One<S>, R: One<S>> Kernel for RegenTable<'_, S, E, R> {
    #[inline(always)]
    fn run(self) {
        for (e, r) in self.energies.iter_mut().zip(self.regens) {
            e.set(regen_one(e.get(), r.get(), self.dt));
        }
    }
}

/// Entities per block of [`move_interleaved`]: 16 coordinates, two AVX registers of `f32`.
const LANES: usize = 8;

/// The extent each coordinate of an interleaved block wraps in: `[WIDTH, HEIGHT, WIDTH, ...]`.
#[inline(always)]
fn interleaved_extent<S: Scalar>() -> [S; 2 * LANES] {
    std::array::from_fn(|i| {
        S::from_f64(if i % 2 == 0 {
            WORLD_WIDTH
        } else {
            WORLD_HEIGHT
        })
    })
}

/// `move` for one block of [`LANES`] entities whose `Position { x, y }` / `Velocity { x, y }`
/// interleave the same way, so the block is one flat stream of coordinates `[x0, y0, x1, y1,
/// ...]` against a repeating `[WIDTH, HEIGHT]` extent: the same `move_coordinate` per
/// coordinate, in a loop the compiler vectorizes as it does SoA's columns (a loop over `(p.x,
/// p.y)` pairs with two different wraps does not, and runs slower than SoA: the
/// `ecs-contiguous-pairs` control, docs/results/ecs-vs-soa.md). Copying
/// through small arrays keeps it safe Rust: no cast of the component slices.
#[inline(always)]
fn move_block<S: Scalar, P: Pair<S>, V: Pair<S>>(
    ps: &mut [P],
    vs: &[V],
    dt: S,
    extent: &[S; 2 * LANES],
) {
    let mut flat: [S; 2 * LANES] = std::array::from_fn(|i| {
        let p = &ps[i / 2];
        if i % 2 == 0 { p.x() } else { p.y() }
    });
    let speed: [S; 2 * LANES] = std::array::from_fn(|i| {
        let v = &vs[i / 2];
        if i % 2 == 0 { v.x() } else { v.y() }
    });
    for ((c, v), e) in flat.iter_mut().zip(speed).zip(extent) {
        *c = move_coordinate(*c, v, dt, *e);
    }
    for (p, xy) in ps.iter_mut().zip(flat.chunks_exact(2)) {
        p.set(xy[0], xy[1]);
    }
}

/// `move` over the interleaved columns in blocks, one cursor from the front: two streams, the
/// positions (read and written) and the velocities. Kept as the bench's control for
/// [`move_interleaved`] ([`MoveInterleaved`] with `one_cursor`).
#[inline(always)]
fn move_interleaved_one_cursor<S: Scalar, P: Pair<S>, V: Pair<S>>(
    positions: &mut [P],
    velocities: &[V],
    dt: S,
) {
    let extent = interleaved_extent();
    let mut p_blocks = positions.chunks_exact_mut(LANES);
    let mut v_blocks = velocities.chunks_exact(LANES);
    for (ps, vs) in (&mut p_blocks).zip(&mut v_blocks) {
        move_block(ps, vs, dt, &extent);
    }
    for (p, v) in p_blocks
        .into_remainder()
        .iter_mut()
        .zip(v_blocks.remainder())
    {
        let (x, y) = move_one(p.x(), p.y(), v.x(), v.y(), dt);
        p.set(x, y);
    }
}

/// Cursors [`move_interleaved`] walks the columns with, each over its own share.
const CURSORS: usize = 4;

/// `move` over the interleaved columns at SoA speed: [`CURSORS`] cursors, each walking its own
/// share of the entities in step with the others, so that as many bytes are in flight from
/// memory as in SoA's move. With one cursor (two streams, 8 bytes per entity each, against
/// SoA's four streams of 4), the same bytes and the same instructions run slower than SoA at
/// 10M entities, the move alone carrying the gap, while the ECS with one component per
/// coordinate runs at SoA speed (`bench --only ecs-vs-soa`, the one-cursor control:
/// docs/results/ecs-vs-soa.md). Each entity's arithmetic is unchanged, so results are
/// bit-identical. Four cursors at every count: in the caches too they are faster than one on
/// every tier, and the one-cursor loop slows down with SIMD width (`docs/runs/simd-cursors`).
#[inline(always)]
fn move_interleaved<S: Scalar, P: Pair<S>, V: Pair<S>>(
    positions: &mut [P],
    velocities: &[V],
    dt: S,
) {
    let extent = interleaved_extent();
    let share = positions.len().min(velocities.len()) / (CURSORS * LANES) * LANES;
    let (mut rest_p, mut rest_v) = (positions, velocities);
    let [a, b, c, d]: [(&mut [P], &[V]); CURSORS] = std::array::from_fn(|_| {
        let (p, more_p) = std::mem::take(&mut rest_p).split_at_mut(share);
        let (v, more_v) = rest_v.split_at(share);
        (rest_p, rest_v) = (more_p, more_v);
        (p, v)
    });
    // Written out rather than looped over the cursors: a loop of four costs a mispredicted
    // branch every round (cachegrind, `cargo bench --bench counts`).
    for block in (0..share).step_by(LANES) {
        let range = block..block + LANES;
        move_block(&mut a.0[range.clone()], &a.1[range.clone()], dt, &extent);
        move_block(&mut b.0[range.clone()], &b.1[range.clone()], dt, &extent);
        move_block(&mut c.0[range.clone()], &c.1[range.clone()], dt, &extent);
        move_block(&mut d.0[range.clone()], &d.1[range], dt, &extent);
    }
    // What the equal shares leave: fewer than CURSORS blocks and a remainder.
    move_interleaved_one_cursor(rest_p, rest_v, dt);
}

//! The inner loops of the layouts whose fields sit in plain arrays (`soa`, `chunks`, `aos`), as
//! [`Kernel`]s, so that each compiles once per SIMD tier ([`crate::simd`]). The math is
//! `workload`'s, unchanged; only the vector width the compiler may use differs.

use crate::scalar::Scalar;
use crate::simd::{self, Kernel, SimdTier};
use crate::workload::{EntityState, move_one, regen_one};

/// `move` over four columns of equal length.
pub fn move_columns<S: Scalar>(
    tier: SimdTier,
    x: &mut [S],
    y: &mut [S],
    vx: &[S],
    vy: &[S],
    dt: S,
) {
    struct MoveColumns<'a, S> {
        x: &'a mut [S],
        y: &'a mut [S],
        vx: &'a [S],
        vy: &'a [S],
        dt: S,
    }
    impl<S: Scalar> Kernel for MoveColumns<'_, S> {
        #[inline(always)]
        fn run(self) {
            let dt = self.dt;
            for (((x, y), &vx), &vy) in self.x.iter_mut().zip(self.y).zip(self.vx).zip(self.vy) {
                (*x, *y) = move_one(*x, *y, vx, vy, dt);
            }
        }
    }
    simd::run(tier, MoveColumns { x, y, vx, vy, dt });
}

/// `regen` over two columns of equal length.
pub fn regen_columns<S: Scalar>(tier: SimdTier, energy: &mut [S], regen: &[S], dt: S) {
    struct RegenColumns<'a, S> {
        energy: &'a mut [S],
        regen: &'a [S],
        dt: S,
    }
    impl<S: Scalar> Kernel for RegenColumns<'_, S> {
        #[inline(always)]
        fn run(self) {
            for (e, &r) in self.energy.iter_mut().zip(self.regen) {
                *e = regen_one(*e, r, self.dt);
            }
        }
    }
    simd::run(tier, RegenColumns { energy, regen, dt });
}

/// `move` over whole records (array of structs).
pub fn move_records<S: Scalar>(tier: SimdTier, records: &mut [EntityState<S>], dt: S) {
    struct MoveRecords<'a, S> {
        records: &'a mut [EntityState<S>],
        dt: S,
    }
    impl<S: Scalar> Kernel for MoveRecords<'_, S> {
        #[inline(always)]
        fn run(self) {
            for e in self.records {
                (e.x, e.y) = move_one(e.x, e.y, e.vx, e.vy, self.dt);
            }
        }
    }
    simd::run(tier, MoveRecords { records, dt });
}

/// `regen` over whole records (array of structs).
pub fn regen_records<S: Scalar>(tier: SimdTier, records: &mut [EntityState<S>], dt: S) {
    struct RegenRecords<'a, S> {
        records: &'a mut [EntityState<S>],
        dt: S,
    }
    impl<S: Scalar> Kernel for RegenRecords<'_, S> {
        #[inline(always)]
        fn run(self) {
            for e in self.records {
                e.energy = regen_one(e.energy, e.regen, self.dt);
            }
        }
    }
    simd::run(tier, RegenRecords { records, dt });
}

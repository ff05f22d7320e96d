//! The seek system's first half on every core, for the layouts whose entities keep position and
//! velocity in one place (`aos`' records, `chunks`' blocks, `boxed`' and `dyn`'s objects): safe
//! Rust cannot hand out one record's velocity mutably while other threads read that record's
//! position as someone's target, so those layouts seek on all cores in two passes: the new
//! velocities are computed into a buffer from storage that every thread only reads, then written
//! back. On one thread they seek in place, entity by entity. (`soa` and the ECS layouts keep
//! velocities in columns of their own and seek in one pass on any number of threads.)

use crate::scalar::Scalar;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::seek_one;

/// Computes every entity's velocity after seeking into `out` (`out.len()` entities):
/// `own(i)` is entity `i`'s `[x, y, vx, vy]`, `target(i)` the dense index its handle resolves to,
/// `position(t)` that entity's `[x, y]`. An entity without a live target keeps its velocity.
pub fn seek_into<S: Scalar>(
    threads: Threads,
    out: &mut [[S; 2]],
    dt: S,
    own: impl Fn(usize) -> [S; 4] + Sync,
    target: impl Fn(usize) -> Option<usize> + Sync,
    position: impl Fn(usize) -> [S; 2] + Sync,
) {
    let c = chunk_len(threads, out.len());
    for_each_part(threads, out.chunks_mut(c).enumerate(), |(part, out)| {
        for (i, v) in (part * c..).zip(out) {
            let [x, y, vx, vy] = own(i);
            *v = match target(i) {
                Some(t) => {
                    let [tx, ty] = position(t);
                    let (vx, vy) = seek_one(x, y, vx, vy, tx, ty, dt);
                    [vx, vy]
                }
                None => [vx, vy],
            };
        }
    });
}

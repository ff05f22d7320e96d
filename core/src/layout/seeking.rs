//! The seek system's shared halves.
//!
//! - [`seek_into`]: the first half on every core, for the layouts whose entities keep position
//!   and velocity in one place (`aos`' records, `chunks`' blocks, `boxed`' and `dyn`'s objects):
//!   safe Rust cannot hand out one record's velocity mutably while other threads read that
//!   record's position as someone's target, so those layouts seek on all cores in two passes: the
//!   new velocities are computed into a buffer from storage that every thread only reads, then
//!   written back. On one thread they seek in place, entity by entity. (`soa` and the ECS layouts
//!   keep velocities in columns of their own and seek in one pass on any number of threads.)
//! - [`SeekKernel::Tuned`]: the seek a programmer writes once the idiomatic one is the frame's
//!   cost. Every handle is resolved to a dense index once ([`ResolvedTargets`]), and again only
//!   after a structural change; the gather ([`seek_resolved_columns`]) then prefetches a few
//!   seekers ahead, so that the misses overlap instead of queueing, and picks its wrap and clamp
//!   without branches ([`seek_one_unpredictable`]). Same arithmetic, same results; what it saves
//!   is the slot lookup per seeker, the wait for each miss and the mispredicted branches.

use crate::layout::components::{Position, Storage, Velocity};
use crate::scalar::Scalar;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{seek_one, seek_one_unpredictable};

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

/// The form of the seek system a layout runs: the gap between the two is a result of its own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SeekKernel {
    /// Each seeker reads its target through the handle it holds, the way a user of the storage
    /// writes it: the handle's slot (or the library's entity index), then the target's fields.
    #[default]
    Idiomatic,
    /// The handles resolved to dense indices once, and again only after the population or a
    /// target changed ([`ResolvedTargets`]); the gather then prefetches the targets' positions
    /// [`PREFETCH_AHEAD`] seekers ahead, so that several misses are in flight at once; the
    /// arithmetic picks its cases by selects ([`seek_one_unpredictable`]), not branches.
    Tuned,
}

impl SeekKernel {
    pub const BOTH: [SeekKernel; 2] = [SeekKernel::Idiomatic, SeekKernel::Tuned];

    pub fn name(self) -> &'static str {
        match self {
            SeekKernel::Idiomatic => "idiomatic",
            SeekKernel::Tuned => "tuned",
        }
    }
}

impl std::fmt::Display for SeekKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How many seekers ahead the tuned gather prefetches its target: far enough that a miss to
/// DRAM (a few hundred cycles) is under way before the seeker that needs it, near enough that
/// the prefetched line is still in the L1 when it is read.
// Chosen on soa's tuned seek at 1M (docs/runs/order-tuned/prefetch.md has the figures and how
// they were taken): 8 to 64 ahead measured alike, 4 ahead hid less, and none at all was
// slowest in id order and after churn; sorted by group the distance did not matter.
pub const PREFETCH_AHEAD: usize = 16;

/// A seeker without a live target, among [`ResolvedTargets`].
pub const NO_TARGET: u32 = u32::MAX;

/// Every entity's target as the dense index its handle resolves to: the tuned seek's first
/// half, kept until the layout's population or a target changes ([`Self::invalidate`]).
#[derive(Clone, Debug, Default)]
pub struct ResolvedTargets {
    dense: Vec<u32>,
    fresh: bool,
}

impl ResolvedTargets {
    /// A push, a removal or a new target: resolve again before the next tuned seek.
    pub fn invalidate(&mut self) {
        self.fresh = false;
    }

    /// Whether the targets of `len` entities are resolved and nothing changed since.
    pub fn is_fresh(&self, len: usize) -> bool {
        self.fresh && self.dense.len() == len
    }

    /// The `len` entities' targets, resolved first by `resolve` (on `threads`) where the
    /// population changed since the last call.
    pub fn get(
        &mut self,
        threads: Threads,
        len: usize,
        resolve: impl Fn(usize) -> Option<usize> + Sync,
    ) -> &[u32] {
        if !self.is_fresh(len) {
            self.dense.resize(len, NO_TARGET);
            let c = chunk_len(threads, len);
            for_each_part(
                threads,
                self.dense.chunks_mut(c).enumerate(),
                |(part, out)| {
                    for (i, t) in (part * c..).zip(out) {
                        // Dense indices fit: every slot table stores them as `u32`.
                        *t = resolve(i).map_or(NO_TARGET, |d| d as u32);
                    }
                },
            );
            self.fresh = true;
        }
        &self.dense
    }

    /// [`Self::get`] on the calling thread, for a `resolve` that cannot be shared between
    /// threads (flecs' world handle).
    pub fn get_here(
        &mut self,
        len: usize,
        mut resolve: impl FnMut(usize) -> Option<usize>,
    ) -> &[u32] {
        if !self.is_fresh(len) {
            self.dense.clear();
            // Dense indices fit: every slot table stores them as `u32`.
            self.dense
                .extend((0..len).map(|i| resolve(i).map_or(NO_TARGET, |d| d as u32)));
            self.fresh = true;
        }
        &self.dense
    }

    /// Gives the memory back (the idiomatic kernel needs none of it).
    pub fn release(&mut self) {
        self.dense = Vec::new();
        self.fresh = false;
    }

    pub fn allocated_bytes(&self) -> u64 {
        (self.dense.capacity() * size_of::<u32>()) as u64
    }
}

/// Hints the CPU to bring `value`'s cache line into the L1: it reads nothing and cannot fault,
/// so a prefetch of a line that is never used costs only the bandwidth.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has (it is in the target's
        // baseline); it dereferences nothing, and the pointer comes from a live reference. The
        // unsafe buys the tuned seek's prefetch (docs/results/order.md, "A tuned seek").
        #[allow(unsafe_code)]
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast())
        }
    }
    // Elsewhere the hint's intrinsic is not stable Rust yet; the tuned seek still resolves its
    // targets once, and runs without the prefetch.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// `table[t]` for each target `t`, in order (none where there is no target or `t` is past the
/// table's end). `table` is a layout's own list of handles, and the targets lie anywhere in it,
/// so these are random reads, one for every entity a switch copies: each is prefetched
/// [`PREFETCH_AHEAD`] targets ahead, so that their misses overlap instead of each stalling the
/// work done with it (with the swarm's own lookups done the same way, a switch's copy is faster
/// for it: docs/results/switching.md, "How a switch is paced").
pub fn prefetched_targets<'a, T: Copy>(
    table: &'a [T],
    targets: &'a [Option<usize>],
) -> impl Iterator<Item = Option<T>> + 'a {
    targets.iter().enumerate().map(move |(k, target)| {
        if let Some(&Some(ahead)) = targets.get(k + PREFETCH_AHEAD)
            && let Some(entry) = table.get(ahead)
        {
            prefetch(entry);
        }
        target.and_then(|t| table.get(t).copied())
    })
}

/// The handle each entity of a spawned batch is born with ([`prefetched_targets`]), read in a
/// loop of its own before the spawn: none for all where there are no targets, and none for a
/// target among the batch itself, set once it is spawned.
pub fn born_with<T: Copy>(table: &[T], targets: Option<&[Option<usize>]>) -> Vec<Option<T>> {
    prefetched_targets(table, targets.unwrap_or_default()).collect()
}

/// The tuned gather's loop over one part of the seekers: `mine` their targets resolved to dense
/// indices, `prefetch_at(t)` hints the position of the entity at `t`, `seek(k, t)` steers the
/// part's `k`-th seeker toward the entity at `t`. Seekers without a live target are skipped.
#[inline(always)]
pub fn for_each_resolved(
    mine: &[u32],
    prefetch_at: impl Fn(usize),
    mut seek: impl FnMut(usize, usize),
) {
    for (k, &t) in mine.iter().enumerate() {
        if let Some(&ahead) = mine.get(k + PREFETCH_AHEAD)
            && ahead != NO_TARGET
        {
            prefetch_at(ahead as usize);
        }
        if t != NO_TARGET {
            seek(k, t as usize);
        }
    }
}

/// The tuned seek over columns (`soa`'s): `targets` resolved to dense indices, `x`/`y` every
/// entity's position, `vx`/`vy` its velocity. The same arithmetic as every other seek
/// ([`seek_one_unpredictable`] picks what [`seek_one`] does), in the same order per seeker:
/// bit-identical results.
pub fn seek_resolved_columns<S: Scalar>(
    threads: Threads,
    targets: &[u32],
    x: &[S],
    y: &[S],
    vx: &mut [S],
    vy: &mut [S],
    dt: S,
) {
    let c = chunk_len(threads, vx.len());
    let parts = vx.chunks_mut(c).zip(vy.chunks_mut(c)).enumerate();
    for_each_part(threads, parts, |(part, (vx, vy))| {
        let first = part * c;
        let mine = &targets[first..first + vx.len()];
        let prefetch_at = |t: usize| {
            prefetch(&x[t]);
            prefetch(&y[t]);
        };
        for_each_resolved(mine, prefetch_at, |k, t| {
            let i = first + k;
            (vx[k], vy[k]) = seek_one_unpredictable(x[i], y[i], vx[k], vy[k], x[t], y[t], dt);
        });
    });
}

/// The tuned seek over an ECS table's rows: `targets` resolved to rows, `positions` and
/// `velocities` the table's two columns (Bevy's and hecs' tuned layouts hand them out as
/// slices). The same arithmetic as every other seek ([`seek_one_unpredictable`]).
pub fn seek_resolved_rows<S: Scalar, K: Storage>(
    threads: Threads,
    targets: &[u32],
    positions: &[Position<S, K>],
    velocities: &mut [Velocity<S, K>],
    dt: S,
) {
    let c = chunk_len(threads, velocities.len());
    for_each_part(
        threads,
        velocities.chunks_mut(c).enumerate(),
        |(part, velocities)| {
            let first = part * c;
            let mine = &targets[first..first + velocities.len()];
            for_each_resolved(
                mine,
                |t| prefetch(&positions[t]),
                |k, t| {
                    let (p, v, to) = (&positions[first + k], &mut velocities[k], &positions[t]);
                    (v.x, v.y) = seek_one_unpredictable(p.x, p.y, v.x, v.y, to.x, to.y, dt);
                },
            );
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{Layout, LayoutKind};
    use crate::workload::spawn;

    /// Retargeting without a push or a removal (a switch's copy does it for seekers that waited
    /// for their target) is a change the tuned seek sees: each layout with the tuned seek, asked
    /// for it, steers exactly as it does with the idiomatic one, before and after.
    #[test]
    fn the_tuned_seek_follows_a_retarget_without_a_structural_change() {
        for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_tuned_seek()) {
            let ids: Vec<u64> = (0..500).collect();
            let states: Vec<_> = ids.iter().map(|&id| spawn::<f32>(7, id)).collect();
            let mut seekers = [SeekKernel::Idiomatic, SeekKernel::Tuned].map(|kernel| {
                let mut layout = kind.create_cpu::<f32>().expect("a CPU layout");
                assert_eq!(layout.set_seek_kernel(kernel), kernel);
                layout.push_seeking(&ids, &states, &vec![Some(0); ids.len()]);
                layout
            });
            let velocities = |layout: &dyn Layout<f32>| {
                let mut out = Vec::new();
                layout.for_each_entity_in(0..layout.len(), &mut |_, s| out.push((s.vx, s.vy)));
                out
            };
            for retarget in [None, Some(3), Some(499)] {
                for layout in &mut seekers {
                    if let Some(t) = retarget {
                        layout.set_targets(0, &vec![Some(t); 500]);
                    }
                    layout.step_seek(0.5, Threads::One);
                }
                let [idiomatic, tuned] = &seekers;
                let (want, got) = (velocities(idiomatic.as_ref()), velocities(tuned.as_ref()));
                let first_wrong = want.iter().zip(&got).position(|(a, b)| a != b);
                assert_eq!(first_wrong, None, "{kind}, retargeted at {retarget:?}");
            }
        }
    }
}

//! One frame of a seeded swarm, timed: the measurement the layouts sweep, the crossings, the
//! headline, threads, the gpu layout, the C++ comparison and the peers all start from.

use crate::bench::report::experiment::BenchError;
use crate::bench::report::harness::{Method, Stats, measure};
use crate::layout::LayoutKind;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::swarm::Swarm;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{Dt, SEED};

/// Builds `n` entities in `kind` and times one frame (move, then regen) on `threads`.
pub fn frame_stats<S: AllLayouts>(
    kind: LayoutKind,
    n: usize,
    threads: Threads,
    method: &Method,
) -> Result<Stats, BenchError> {
    frame_stats_on::<S>(kind, n, threads, SimdTier::Baseline, method)
}

/// [`frame_stats`] with the kernels on `tier` (layouts without SIMD kernels ignore it).
pub fn frame_stats_on<S: AllLayouts>(
    kind: LayoutKind,
    n: usize,
    threads: Threads,
    tier: SimdTier,
    method: &Method,
) -> Result<Stats, BenchError> {
    let mut swarm = Swarm::<S>::with_count(kind, SEED, n)?;
    swarm.set_simd(tier);
    let dt = Dt::default();
    Ok(measure(method, || {
        swarm.step(dt, threads);
        std::hint::black_box(&mut swarm);
    }))
}

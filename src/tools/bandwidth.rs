//! This machine's streaming limit, and a layout's frame expressed against it. A frame must touch
//! [`FRAME_BYTES_F32`] per entity (move reads x, y, vx, vy and writes x, y: 24 B; regen reads
//! energy, regen and writes energy: 12 B), so a layout's effective bandwidth is that times the
//! count over the simulate time, whatever it really dragged through the caches. The limit is a
//! STREAM-style triad (`a = b + s * c`) over arrays far larger than the caches: the bench's
//! `bandwidth` experiment measures it with its harness, the app once at start-up on a thread of
//! its own ([`measure_limit`]).

use std::time::Instant;

/// Bytes one frame must read and write per entity at f32.
pub const FRAME_BYTES_F32: f64 = 36.0;

/// Bytes the triad moves per element: reads `b` and `c`, writes `a` (8 B each).
pub const TRIAD_BYTES: f64 = 24.0;

/// The STREAM triad over one slice of each array.
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], scalar: f64) {
    for ((a, &b), &c) in a.iter_mut().zip(b).zip(c) {
        *a = b + scalar * c;
    }
}

/// A layout's effective bandwidth in GB/s: `n` entities' frame bytes over `simulate_ms`.
pub fn effective_gbs(n: usize, simulate_ms: f64) -> Option<f64> {
    (simulate_ms > 0.0 && n > 0).then(|| FRAME_BYTES_F32 * n as f64 / (simulate_ms * 1e6))
}

/// The streaming limit, one thread and all, and how it was measured.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamLimit {
    pub one_thread_gbs: f64,
    pub all_threads_gbs: f64,
    pub threads: usize,
    /// Bytes of the three arrays together.
    pub array_bytes: usize,
    pub passes: usize,
}

impl StreamLimit {
    pub fn describe(&self) -> String {
        format!(
            "STREAM triad over 3 × {} MiB, best of {} passes: {:.1} GB/s on 1 thread, {:.1} GB/s on {}",
            (self.array_bytes / 3) >> 20,
            self.passes,
            self.one_thread_gbs,
            self.all_threads_gbs,
            self.threads
        )
    }
}

/// Measures the triad over three arrays of `elements` f64 each, best of `passes`, on one
/// thread and on `threads` (plain scoped threads: the app's task pool keeps running frames).
pub fn measure_limit(elements: usize, passes: usize, threads: usize) -> StreamLimit {
    let threads = threads.max(1);
    let mut a = vec![1.0f64; elements];
    let b = vec![2.0f64; elements];
    let c = vec![0.5f64; elements];
    let gbs = |seconds: f64| TRIAD_BYTES * elements as f64 / (seconds * 1e9);
    let mut best = |parts: usize| {
        let len = elements.div_ceil(parts).max(1);
        let mut fastest = f64::MAX;
        for _ in 0..passes.max(1) {
            let t = Instant::now();
            std::thread::scope(|scope| {
                for ((a, b), c) in a.chunks_mut(len).zip(b.chunks(len)).zip(c.chunks(len)) {
                    scope.spawn(move || triad(a, b, c, 3.0));
                }
            });
            fastest = fastest.min(t.elapsed().as_secs_f64());
        }
        std::hint::black_box(&a);
        gbs(fastest)
    };
    let one_thread_gbs = best(1);
    let all_threads_gbs = best(threads);
    StreamLimit {
        one_thread_gbs,
        all_threads_gbs,
        threads,
        array_bytes: 3 * elements * size_of::<f64>(),
        passes: passes.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_triad_computes_and_the_limit_is_positive() {
        let (mut a, b, c) = (vec![0.0; 4], vec![1.0; 4], vec![2.0; 4]);
        triad(&mut a, &b, &c, 3.0);
        assert_eq!(a, vec![7.0; 4]);
        let limit = measure_limit(1 << 16, 2, 2);
        assert!(limit.one_thread_gbs > 0.0 && limit.all_threads_gbs > 0.0);
        assert_eq!(limit.array_bytes, 3 << 19);
        assert!(
            limit.describe().starts_with("STREAM triad"),
            "{}",
            limit.describe()
        );
    }

    #[test]
    fn effective_bandwidth_is_frame_bytes_over_time() {
        // 1M entities in 1 ms: 36 MB per ms = 36 GB/s.
        assert_eq!(effective_gbs(1_000_000, 1.0), Some(36.0));
        assert_eq!(effective_gbs(1_000_000, 0.0), None);
    }
}

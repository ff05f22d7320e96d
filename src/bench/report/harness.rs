//! How every number in the bench is taken, the JS study's method made explicit: warm-up passes,
//! inner repeats so each sample lasts milliseconds, then the median (with p10/p90 and the count)
//! of at least 15 samples. `std::hint::black_box` keeps the optimizer from deleting the work.

use std::time::{Duration, Instant};

/// Knobs of the measuring loop; `quick()` is the CI-sized variant.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    /// Passes run before the samples, the first of them the one that sizes a sample. `0` runs
    /// that sizing pass only, and counts it as the first sample when one pass fills a sample
    /// (passes of seconds, whose median drops the first pass's one-off costs).
    pub warmup_passes: usize,
    pub min_samples: usize,
    pub max_samples: usize,
    /// Inner repeats are chosen so one sample takes about this long.
    pub target_sample: Duration,
    /// Past this much time on one cell, stop once `min_samples` are in.
    pub cell_budget: Duration,
}

/// Adaptive sampling, as criterion stops once its estimate is tight: a cell whose samples are so
/// slow that [`Method::min_samples`] would run past [`SETTLED_AFTER`] stops as soon as it holds
/// [`SETTLED_SAMPLES`] and its middle half lies within [`SETTLED_SPREAD`] of the median. Fast
/// cells never reach it (15 samples of 4 ms fit the budget); a slow, steady cell takes 7 samples
/// instead of 15, and a noisy one still takes every sample it would have.
pub const SETTLED_SAMPLES: usize = 7;
/// See [`SETTLED_SAMPLES`].
pub const SETTLED_AFTER: Duration = Duration::from_secs(2);
/// See [`SETTLED_SAMPLES`]: (p75 - p25) / p50.
pub const SETTLED_SPREAD: f64 = 0.03;
/// Warm-up work past the first pass is capped at this much: three warm-up passes of a slow
/// seek at 10M would add seconds and warm nothing that one pass did not.
pub const WARMUP_CAP: Duration = Duration::from_millis(500);

impl Method {
    pub fn full() -> Self {
        Self {
            warmup_passes: 3,
            min_samples: 15,
            max_samples: 41,
            target_sample: Duration::from_millis(4),
            cell_budget: Duration::from_millis(600),
        }
    }

    pub fn quick() -> Self {
        Self {
            warmup_passes: 1,
            min_samples: 5,
            max_samples: 9,
            target_sample: Duration::from_millis(1),
            cell_budget: Duration::from_millis(40),
        }
    }

    /// The method for one round of an interleaved comparison: a few samples per round, many
    /// rounds, so that a drift in the machine's load hits every contender alike.
    pub fn per_round(&self) -> Self {
        let samples = self.min_samples.min(7);
        Self {
            min_samples: samples,
            max_samples: samples,
            ..*self
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{} warm-up passes (at most {} ms past the first); inner repeats so each sample lasts >= {} ms; p50 of {}..{} samples (p10, p90 beside it), or of {} once a cell has run {} s and its middle half lies within {}% of the median; std::hint::black_box on results",
            self.warmup_passes,
            WARMUP_CAP.as_millis(),
            self.target_sample.as_secs_f64() * 1e3,
            self.min_samples,
            self.max_samples,
            SETTLED_SAMPLES.min(self.min_samples),
            SETTLED_AFTER.as_secs(),
            SETTLED_SPREAD * 100.0,
        )
    }
}

/// Distribution of one measured cell, in milliseconds per call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub p10: f64,
    pub p50: f64,
    pub p90: f64,
    pub samples: usize,
}

impl Stats {
    /// The same distribution in another unit: `factor` times each value.
    pub fn scaled(self, factor: f64) -> Self {
        Self {
            p10: self.p10 * factor,
            p50: self.p50 * factor,
            p90: self.p90 * factor,
            samples: self.samples,
        }
    }

    pub fn from_samples(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Self {
            p10: at(0.1),
            p50: at(0.5),
            p90: at(0.9),
            samples: samples.len(),
        }
    }
}

/// Times `f` (one call = one unit of work, e.g. one frame) and returns ms per call.
pub fn measure(method: &Method, mut f: impl FnMut()) -> Stats {
    let once = {
        let t = Instant::now();
        f();
        t.elapsed().max(Duration::from_nanos(20))
    };
    let repeats = ((method.target_sample.as_secs_f64() / once.as_secs_f64()).ceil() as usize)
        .clamp(1, 1_000_000);
    let warming = Instant::now();
    for _ in 0..method.warmup_passes.saturating_sub(1) * repeats {
        if warming.elapsed() > WARMUP_CAP {
            break;
        }
        f();
    }
    let started = Instant::now();
    let mut samples = Vec::with_capacity(method.max_samples);
    if method.warmup_passes == 0 && repeats == 1 {
        samples.push(once.as_secs_f64() * 1e3);
    }
    while samples.len() < method.max_samples {
        let t = Instant::now();
        for _ in 0..repeats {
            f();
        }
        samples.push(t.elapsed().as_secs_f64() * 1e3 / repeats as f64);
        let elapsed = started.elapsed();
        if samples.len() >= method.min_samples && elapsed > method.cell_budget {
            break;
        }
        if samples.len() >= SETTLED_SAMPLES.min(method.min_samples)
            && elapsed > SETTLED_AFTER
            && settled(&samples)
        {
            break;
        }
    }
    Stats::from_samples(samples)
}

/// Whether the samples' middle half lies within [`SETTLED_SPREAD`] of their median.
fn settled(samples: &[f64]) -> bool {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    (at(0.75) - at(0.25)) <= SETTLED_SPREAD * at(0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_sample() {
        let s = Stats::from_samples((1..=11).map(f64::from).rev().collect());
        assert_eq!((s.p10, s.p50, s.p90, s.samples), (2.0, 6.0, 10.0, 11));
    }

    #[test]
    fn a_settled_cell_stops_early_and_a_noisy_one_does_not() {
        assert!(settled(&[10.0, 10.1, 10.0, 10.2, 9.9, 10.0, 10.1]));
        assert!(!settled(&[10.0, 12.0, 9.0, 11.5, 10.0, 8.5, 10.9]));
        // Slow, steady samples: stops at SETTLED_SAMPLES once past SETTLED_AFTER.
        let method = Method {
            warmup_passes: 1,
            min_samples: 15,
            max_samples: 41,
            target_sample: Duration::from_millis(1),
            cell_budget: Duration::from_millis(100),
        };
        let stats = measure(&method, || std::thread::sleep(Duration::from_millis(300)));
        assert_eq!(stats.samples, SETTLED_SAMPLES);
    }

    /// Without a warm-up, a pass that fills a sample counts from the first: three samples are
    /// three passes.
    #[test]
    fn without_a_warm_up_the_first_slow_pass_is_a_sample() {
        let mut calls = 0;
        let method = Method {
            warmup_passes: 0,
            min_samples: 3,
            max_samples: 3,
            target_sample: Duration::from_millis(1),
            cell_budget: Duration::from_secs(60),
        };
        let stats = measure(&method, || {
            calls += 1;
            std::thread::sleep(Duration::from_millis(2));
        });
        assert_eq!((calls, stats.samples), (3, 3));
        let warmed = Method {
            warmup_passes: 1,
            ..method
        };
        calls = 0;
        measure(&warmed, || {
            calls += 1;
            std::thread::sleep(Duration::from_millis(2));
        });
        assert_eq!(calls, 4);
    }

    #[test]
    fn measure_takes_at_least_the_minimum_samples() {
        let mut calls = 0u64;
        let stats = measure(&Method::quick(), || {
            calls += 1;
            std::hint::black_box(calls);
        });
        assert!(stats.samples >= Method::quick().min_samples);
        assert!(stats.p50 > 0.0 && stats.p10 <= stats.p50 && stats.p50 <= stats.p90);
    }
}

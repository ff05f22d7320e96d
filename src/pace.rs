//! How much of a frame growing the population and switching its layout may take. A speaker who
//! drags the count to 10M or flips into flecs at 1M must not see the window freeze: the work is
//! spread over frames, each frame doing at most its share.
//!
//! Two paces:
//! - [`Pace::Budget`]: work until a time budget is spent ([`COPY_BUDGET`], a quarter of a 60 Hz
//!   frame), in batches sized from the rate measured so far, so that a slow layout (flecs, Bevy's
//!   sparse sets) and a fast one (SoA) both stay within it on any machine. The app's pace.
//! - [`Pace::Entities`]: exactly this many entities a frame, whatever they cost: runs that must be
//!   reproduced frame for frame (`replay`, the tests, `--grow-chunk`).
//!
//! Where a switch's chunks fall never changes the result (the copy follows everything done to the
//! population meanwhile, and the old layout is the one read until the copy takes over), so a switch
//! is paced by time everywhere. Where growth's chunks fall does change it (an entity born a frame
//! later has moved one step less), so growth is paced by time only in the live app.

use std::time::{Duration, Instant};

/// The share of a frame that growing and switching may take together: a quarter of the 16.67 ms
/// budget of 60 Hz, so that a frame that also simulates and draws a million entities stays near
/// its line, and half of what a person notices as a hitch (the switch targets: no frame copies
/// for more than 8 ms).
pub const COPY_BUDGET: Duration = Duration::from_millis(4);

/// The first batch of a paced run, before any rate is known: small enough that the slowest fill
/// measured (flecs' entity-by-entity `set`s, 0.4M entities/s) stays well inside the budget.
const FIRST_BATCH: usize = 1_024;
/// The smallest batch: below this the clock read and the call overhead show.
const MIN_BATCH: usize = 256;
/// The largest batch: scratch buffers stay small, and a rate that was measured too fast cannot
/// overshoot the budget by more than one such batch.
const MAX_BATCH: usize = 1 << 18;
/// Batches are sized for this share of the time left, so that one that runs slower than the
/// last (a page fault on fresh memory, a table that grows) still ends near the deadline.
const AIM: f64 = 0.5;

/// How a frame's share of growing or switching is measured out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Work until this much of the frame is spent.
    Budget(Duration),
    /// Exactly this many entities a frame (`usize::MAX`: everything at once).
    Entities(usize),
}

impl Default for Pace {
    fn default() -> Self {
        Pace::Budget(COPY_BUDGET)
    }
}

/// A paced run's batch sizes, from the time per entity measured in its earlier batches (of this
/// frame and the ones before; [`Pacer::reset`] when what is filled changes).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Seconds per entity, smoothed over the last batches.
    seconds_per_entity: Option<f64>,
}

impl Pacer {
    /// Forgets the measured rate: the next run starts with a small batch again.
    pub fn reset(&mut self) {
        self.seconds_per_entity = None;
    }

    /// About how many entities fit in `budget` at the rate measured so far.
    pub fn estimate(&self, budget: Duration) -> usize {
        match self.seconds_per_entity {
            Some(s) if s > 0.0 => ((budget.as_secs_f64() / s) as usize).clamp(MIN_BATCH, MAX_BATCH),
            _ => FIRST_BATCH,
        }
    }

    /// Calls `step(batch)` until `pace` says the frame's share is done, or `step` does fewer than it
    /// was asked (nothing more to do). `step` returns how many entities it handled. Under a budget
    /// the frame's share ends at `deadline`; at least one batch runs, so a run always progresses.
    /// Returns how many entities were handled in all.
    pub fn run<E>(
        &mut self,
        pace: Pace,
        deadline: Instant,
        mut step: impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<usize, E> {
        let mut done = 0;
        match pace {
            Pace::Entities(n) => {
                if n > 0 {
                    done = step(n)?;
                }
            }
            Pace::Budget(_) => loop {
                let start = Instant::now();
                let left = deadline.saturating_duration_since(start);
                if done > 0 && left.is_zero() {
                    break;
                }
                let batch = match self.seconds_per_entity {
                    Some(_) => self.estimate(left.mul_f64(AIM)),
                    None => FIRST_BATCH,
                };
                let n = step(batch)?;
                done += n;
                if n > 0 {
                    // A slower batch is believed at once, a faster one only half way: the next
                    // batch errs toward ending early rather than late.
                    let per = start.elapsed().as_secs_f64() / n as f64;
                    self.seconds_per_entity = Some(match self.seconds_per_entity {
                        Some(old) if per < old => 0.5 * (old + per),
                        _ => per,
                    });
                }
                if n < batch {
                    break;
                }
            },
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    #[test]
    fn entities_pace_asks_for_exactly_its_count_once() {
        let mut asked = Vec::new();
        let done = Pacer::default()
            .run(Pace::Entities(250), Instant::now(), |n| {
                asked.push(n);
                Ok::<_, Infallible>(n.min(100))
            })
            .unwrap();
        assert_eq!((asked, done), (vec![250], 100));
    }

    #[test]
    fn a_budget_run_stops_when_the_work_does() {
        let mut left = 5_000usize;
        let far = Instant::now() + Duration::from_secs(3600);
        let done = Pacer::default()
            .run(Pace::Budget(COPY_BUDGET), far, |n| {
                let k = n.min(left);
                left -= k;
                Ok::<_, Infallible>(k)
            })
            .unwrap();
        assert_eq!((done, left), (5_000, 0));
    }

    #[test]
    fn a_spent_budget_still_does_one_batch_and_then_stops() {
        let mut calls = 0;
        let past = Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        let done = Pacer::default()
            .run(Pace::Budget(COPY_BUDGET), past, |n| {
                calls += 1;
                Ok::<_, Infallible>(n)
            })
            .unwrap();
        assert_eq!((calls, done), (1, FIRST_BATCH));
    }

    #[test]
    fn batches_follow_the_measured_rate() {
        let mut pacer = Pacer::default();
        // 1 µs an entity: the first batch is the probe, the next ones are sized from it.
        let mut sizes = Vec::new();
        let deadline = Instant::now() + Duration::from_millis(40);
        pacer
            .run(Pace::Budget(COPY_BUDGET), deadline, |n| {
                sizes.push(n);
                std::thread::sleep(Duration::from_micros(n as u64));
                Ok::<_, Infallible>(n)
            })
            .unwrap();
        assert_eq!(sizes[0], FIRST_BATCH);
        assert!(sizes.len() >= 2, "{sizes:?}");
        // Never more than the time left allows at the measured rate (sleep only oversleeps).
        assert!(sizes[1..].iter().all(|&n| n <= 40_000), "{sizes:?}");
        assert!(pacer.estimate(Duration::from_millis(4)) <= 4_000);
    }

    #[test]
    fn errors_stop_the_run() {
        let result = Pacer::default().run(Pace::Budget(COPY_BUDGET), Instant::now(), |_| {
            Err::<usize, _>("no memory")
        });
        assert_eq!(result, Err("no memory"));
    }
}

//! How much of a frame growing the population and switching its layout may take. A speaker who
//! drags the count to 10M or flips into flecs at 1M must not see the window freeze, and must not
//! wait minutes either: the work is spread over frames, each frame doing at most its share, and
//! the share follows the frame the machine really runs.
//!
//! Three paces:
//! - [`Pace::FrameShare`]: work for half of the frame this machine runs (the median of the last
//!   frames, without their copying), and never less than [`MIN_SHARE`]: at 60 Hz that is 8 ms;
//!   where the window's frames are slow (a million points on a software rasterizer) the share
//!   grows with them, so a switch finishes in far fewer frames than a fixed [`MIN_SHARE`] would
//!   take, while each frame grows by at most half. The app's pace ([`FrameClock`] measures the
//!   frames).
//! - [`Pace::Budget`]: work until a fixed time budget is spent (tests, experiments that want one).
//! - [`Pace::Entities`]: exactly this many entities a frame, whatever they cost: runs that must be
//!   reproduced frame for frame (`replay`, the tests, `--grow-chunk`).
//!
//! Under a time pace the work goes in batches sized from the rate measured so far ([`Pacer`]), so
//! that a slow layout (flecs, Bevy's sparse sets) and a fast one (SoA) both end near the deadline.
//!
//! Where a switch's chunks fall never changes the result (the copy follows everything done to the
//! population meanwhile, and the old layout is the one read until the copy takes over), so a switch
//! is paced by time everywhere. Where growth's chunks fall does change it (an entity born a frame
//! later has moved one step less), so growth is paced by time only in the live app.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The least share of a frame that growing and switching may take together: a quarter of the
/// 16.67 ms budget of 60 Hz, so that a frame that also simulates and draws a million entities
/// stays near its line.
pub const MIN_SHARE: Duration = Duration::from_millis(4);
/// The share's part of the frame the machine runs: a frame that copies grows by at most half.
/// Half, not a quarter: in the window at 1M on a 2-core machine with software rendering (slow
/// frames, copying slower than headless, the rasterizer's threads sharing the cores), a quarter
/// leaves the switches into Bevy's and hecs' layouts of the tour in
/// `assets/talks/switch-tour.txt` unfinished for seconds, where half finishes them in time
/// (docs/results/switching.md, "The app at 1M: a tour of every layout"). At 60 Hz half is 8 ms,
/// the most one frame of a switch is meant to copy (the switch bench's target).
pub const SHARE_OF_FRAME: f64 = 0.5;
/// The most a share may be, however slow the frames: past 4 Hz the window is no live picture
/// anyway, and one misjudged batch must not stall it for seconds.
pub const MAX_SHARE: Duration = Duration::from_millis(250);
/// The frames the share's median is taken over: half a second at 30 Hz, so that the share
/// follows a new count or layout within a few frames, and one slow frame (a screenshot, a window
/// resize) does not move it.
pub const FRAMES_MEASURED: usize = 15;
/// A gap between two frames longer than this is no frame (the process was stopped, a benchmark
/// did other work between frames): it is not measured.
const LONGEST_FRAME: Duration = Duration::from_secs(2);

/// The first batch of a paced run, before any rate is known: small enough that the slowest fill
/// (flecs' entity-by-entity `set`s, timed by `bench --only peers`) stays well inside the budget.
const FIRST_BATCH: usize = 1_024;
/// The smallest batch: below this the clock read and the call overhead show.
const MIN_BATCH: usize = 256;
/// The largest batch: scratch buffers stay small, and a rate that was measured too fast cannot
/// overshoot the budget by more than one such batch.
const MAX_BATCH: usize = 1 << 18;
/// Batches are sized for this share of the time left, so that one that runs slower than the
/// last (a page fault on fresh memory, a table that grows) still ends near the deadline.
const AIM: f64 = 0.5;

/// Below this many entities a storage's growth costs too little to be worth a frame of its own.
pub const GROWTH_WORTH_A_FRAME: usize = 1 << 16;

/// The entities on either side of a growth point that the batch crossing it covers: Bevy counts
/// its resources among its entities, so its entity index grows a few entities before the
/// population crosses the power of two.
pub const GROWTH_SLACK: usize = 256;

/// Growths cost more than their size says: in a fill from `soa` into Bevy's `ecs-table`, the
/// batch across a power of two costs more from one doubling to the next than the size doubles,
/// since the block that doubles moves from mapped memory into glibc's heap and back
/// (docs/results/switching.md, "A growth gets a frame of its own"). A crossing is predicted at
/// twice its size's share of the last one, so that one predicted to fit does not overrun the
/// frame.
const GROWTH_MARGIN: f64 = 2.0;

/// How many more entities a storage holding `len` takes before the batch that crosses its next
/// growth point ([`GROWTH_SLACK`] entities short of it); 0 when that batch is next. Storages
/// grow where their length crosses a power of two: a `Vec` doubles there (with glibc, a copy of
/// the whole block once freed memory lets the allocator keep it in the heap), and so do Bevy's
/// tables and its entity index, which also writes every slot of the index's new capacity in one
/// call (`Entities::ensure_index_index_is_valid` resizes its metadata to the whole capacity):
/// the stalls of a fill that no public call of Bevy's can move. A layout that reserved its room
/// up front does not grow there at all, and pays only a batch split for the guess.
pub fn room_before_growth(len: usize) -> usize {
    let point = (len + GROWTH_SLACK)
        .next_power_of_two()
        .max(GROWTH_WORTH_A_FRAME);
    point - GROWTH_SLACK - len
}

/// How a frame's share of growing or switching is measured out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Pace {
    /// Work for the share of the frame that [`FrameClock::share`] gives: the app's pace.
    #[default]
    FrameShare,
    /// Work until this much of the frame is spent.
    Budget(Duration),
    /// Exactly this many entities a frame (`usize::MAX`: everything at once).
    Entities(usize),
}

/// The frames a driver runs, as the machine runs them: the time from one frame's start to the
/// next one's, less what that frame spent copying, so that the share does not feed on itself.
/// In the app that interval is the whole frame (drawing and presenting included); headless, it is
/// the driver's own frame.
#[derive(Clone, Debug, Default)]
pub struct FrameClock {
    last_start: Option<Instant>,
    last_copy: Duration,
    /// The last frames' time without copying, oldest first.
    recent: VecDeque<Duration>,
}

impl FrameClock {
    /// Notes that a frame starts at `now`: the previous one is measured.
    pub fn frame_started(&mut self, now: Instant) {
        if let Some(last) = self.last_start {
            let interval = now.saturating_duration_since(last);
            if interval <= LONGEST_FRAME {
                if self.recent.len() == FRAMES_MEASURED {
                    self.recent.pop_front();
                }
                self.recent
                    .push_back(interval.saturating_sub(self.last_copy));
            }
        }
        self.last_start = Some(now);
        self.last_copy = Duration::ZERO;
    }

    /// Notes what the frame under way spent growing and switching.
    pub fn copied(&mut self, spent: Duration) {
        self.last_copy += spent;
    }

    /// The median of the last frames without their copying (none before two frames ran).
    pub fn frame_p50(&self) -> Option<Duration> {
        if self.recent.is_empty() {
            return None;
        }
        let mut sorted: Vec<Duration> = self.recent.iter().copied().collect();
        sorted.sort_unstable();
        Some(sorted[sorted.len() / 2])
    }

    /// The share of the next frame that growing and switching may take: [`SHARE_OF_FRAME`] of
    /// the frame the machine runs, within [`MIN_SHARE`] and [`MAX_SHARE`].
    pub fn share(&self) -> Duration {
        self.frame_p50()
            .map_or(MIN_SHARE, |p50| p50.mul_f64(SHARE_OF_FRAME))
            .clamp(MIN_SHARE, MAX_SHARE)
    }
}

/// A paced run's batch sizes, from the time per entity measured in its earlier batches (of this
/// frame and the ones before; [`Pacer::reset`] when what is filled changes).
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Seconds per entity, smoothed over the last batches.
    seconds_per_entity: Option<f64>,
    /// The last growth point crossed ([`Self::run_growing`]): the length it was crossed at, and
    /// what the one entity that crossed it took.
    last_growth: Option<(usize, Duration)>,
}

impl Pacer {
    /// Forgets the measured rate: the next run starts with a small batch again.
    pub fn reset(&mut self) {
        self.seconds_per_entity = None;
        self.last_growth = None;
    }

    /// What crossing the growth point at `len` may take: the last crossing scaled by length (a
    /// growth copies or writes the storage it doubles), and by [`GROWTH_MARGIN`]; nothing before
    /// one was measured.
    fn predicted_growth(&self, len: usize) -> Duration {
        self.last_growth.map_or(Duration::ZERO, |(at, took)| {
            took.mul_f64(GROWTH_MARGIN * len as f64 / at.max(1) as f64)
        })
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
        step: impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<usize, E> {
        self.run_from(pace, deadline, None, step)
    }

    /// [`Self::run`] over a storage that holds `len` entities now and takes every entity that
    /// `step` handles: under a time pace no batch crosses a growth point
    /// ([`room_before_growth`]) but a small one of its own (the [`GROWTH_SLACK`] entities on
    /// either side), where the frame has time for the growth as the last one measured predicts,
    /// or else first thing in the next frame: a frame pays for a growth or for its share of
    /// copying, not for both on top of each other. Under [`Pace::Entities`] the batches are as [`Self::run`] makes them, so that
    /// a reproducible run's frames stay where they were.
    pub fn run_growing<E>(
        &mut self,
        pace: Pace,
        deadline: Instant,
        len: usize,
        step: impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<usize, E> {
        self.run_from(pace, deadline, Some(len), step)
    }

    fn run_from<E>(
        &mut self,
        pace: Pace,
        deadline: Instant,
        grows_from: Option<usize>,
        mut step: impl FnMut(usize) -> Result<usize, E>,
    ) -> Result<usize, E> {
        let mut done = 0;
        match pace {
            Pace::Entities(n) => {
                if n > 0 {
                    done = step(n)?;
                }
            }
            Pace::Budget(_) | Pace::FrameShare => loop {
                let start = Instant::now();
                let left = deadline.saturating_duration_since(start);
                if done > 0 && left.is_zero() {
                    break;
                }
                let room = grows_from.map(|len| room_before_growth(len + done));
                if room == Some(0) {
                    let at = grows_from.unwrap_or(0) + done;
                    if done > 0 && self.predicted_growth(at) > left {
                        break;
                    }
                    let n = step(2 * GROWTH_SLACK)?;
                    done += n;
                    self.last_growth = Some((at, start.elapsed()));
                    if n < 2 * GROWTH_SLACK {
                        break;
                    }
                    continue;
                }
                let batch = match self.seconds_per_entity {
                    Some(_) => self.estimate(left.mul_f64(AIM)),
                    None => FIRST_BATCH,
                };
                let batch = room.map_or(batch, |room| batch.min(room));
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
            .run(Pace::Budget(MIN_SHARE), far, |n| {
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
            .run(Pace::Budget(MIN_SHARE), past, |n| {
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
            .run(Pace::Budget(MIN_SHARE), deadline, |n| {
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
    fn the_share_is_half_the_frame_without_its_copying() {
        let mut clock = FrameClock::default();
        assert_eq!(clock.share(), MIN_SHARE, "nothing measured yet");
        let mut now = Instant::now();
        // 60 ms frames, 15 ms of each spent copying: 45 ms without it, a share of 22.5 ms.
        for _ in 0..FRAMES_MEASURED + 3 {
            clock.frame_started(now);
            clock.copied(Duration::from_millis(15));
            now += Duration::from_millis(60);
        }
        assert_eq!(clock.frame_p50(), Some(Duration::from_millis(45)));
        assert_eq!(clock.share(), Duration::from_micros(22_500));
        // One slow frame does not move the median; a gap of seconds is not measured at all.
        clock.frame_started(now + Duration::from_millis(900));
        clock.frame_started(now + Duration::from_secs(10));
        assert_eq!(clock.share(), Duration::from_micros(22_500));
    }

    #[test]
    fn the_share_stays_within_its_bounds() {
        let mut fast = FrameClock::default();
        let mut slow = FrameClock::default();
        let start = Instant::now();
        for k in 0..FRAMES_MEASURED as u32 {
            fast.frame_started(start + Duration::from_millis(2) * k);
            slow.frame_started(start + Duration::from_millis(1_900) * k);
        }
        assert_eq!((fast.share(), slow.share()), (MIN_SHARE, MAX_SHARE));
    }

    #[test]
    fn growth_points_are_powers_of_two_past_the_least_worth_a_frame() {
        let short = |point: usize| point - GROWTH_SLACK;
        assert_eq!(room_before_growth(0), short(GROWTH_WORTH_A_FRAME));
        assert_eq!(room_before_growth(short(GROWTH_WORTH_A_FRAME)), 0);
        assert_eq!(
            room_before_growth(short(GROWTH_WORTH_A_FRAME) + 1),
            short(2 * GROWTH_WORTH_A_FRAME) - short(GROWTH_WORTH_A_FRAME) - 1
        );
        assert_eq!(room_before_growth(short(1 << 20)), 0);
        assert_eq!(room_before_growth(1_000_000), short(1 << 20) - 1_000_000);
    }

    /// A storage whose every growth point stalls for 3 ms, filled at 4 ms a frame: no batch
    /// crosses a growth point but a small one of its own, and once a crossing was measured, one
    /// predicted not to fit waits for the next frame instead of landing on a spent share.
    #[test]
    fn a_growth_gets_a_batch_of_its_own_and_waits_for_a_frame_with_room() {
        const STALL: Duration = Duration::from_millis(3);
        let mut pacer = Pacer::default();
        let mut len = (1 << 17) - 20_000;
        let mut batches = Vec::new();
        let mut frames = Vec::new();
        for _ in 0..40 {
            let frame_start = Instant::now();
            let deadline = frame_start + MIN_SHARE;
            let before = len;
            let mut crossed_at = None;
            pacer
                .run_growing(Pace::Budget(MIN_SHARE), deadline, len, |n| {
                    let crosses =
                        (len..len + n).any(|l| l >= GROWTH_WORTH_A_FRAME && l.is_power_of_two());
                    if crosses {
                        assert!(
                            n <= 2 * GROWTH_SLACK,
                            "a crossing goes alone, at {len}: {n}"
                        );
                        crossed_at = Some(frame_start.elapsed());
                        std::thread::sleep(STALL);
                    } else {
                        std::thread::sleep(Duration::from_nanos(50) * n as u32);
                    }
                    batches.push((len, n));
                    len += n;
                    Ok::<_, Infallible>(n)
                })
                .unwrap();
            frames.push((before, len, crossed_at));
        }
        assert!(len > 1 << 18, "it got past two growth points: {len}");
        // The first crossing (nothing measured yet) may land mid-frame; every later one, predicted
        // at 3 ms and more, comes first in its frame or where the frame had room for it.
        let crossings: Vec<_> = frames.iter().filter_map(|f| f.2).collect();
        assert!(crossings.len() >= 2, "{frames:?}");
        for at in &crossings[1..] {
            assert!(
                *at + STALL <= MIN_SHARE + Duration::from_millis(2),
                "a later crossing started {at:?} into a 4 ms share: {frames:?}"
            );
        }
    }

    #[test]
    fn entities_pace_ignores_growth_points() {
        let mut asked = Vec::new();
        Pacer::default()
            .run_growing(Pace::Entities(100_000), Instant::now(), 60_000, |n| {
                asked.push(n);
                Ok::<_, Infallible>(n)
            })
            .unwrap();
        assert_eq!(asked, vec![100_000]);
    }

    #[test]
    fn errors_stop_the_run() {
        let result = Pacer::default().run(Pace::Budget(MIN_SHARE), Instant::now(), |_| {
            Err::<usize, _>("no memory")
        });
        assert_eq!(result, Err("no memory"));
    }
}

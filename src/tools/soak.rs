//! Soak: what an hour of a speaker's slider dragging does to a long-running swarm, without a GPU.
//! Seeded random actions (counts from 0 to a maximum, every layout, threads, churn, seek, sorts
//! and re-sort thresholds, pause, switches that start while another is still copying, and back
//! again) drive `Driver::frame_step`
//! frame after frame. A reference driver replays the same actions in plain SoA, and takes the
//! driver's logical order each time one of its sorts lands; every few frames
//! their checksums must agree. Resident memory is sampled, and when the swarm settles back at a
//! small count without churn it must hold at most 1.5x what it held the first time it was there.
//!
//! The same generator writes random scripts for the app (`random_actions` + `script::to_text`),
//! so the windowed soak replays through the same core.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::SimError;
use crate::layout::{LayoutKind, SeekKernel};
use crate::memory::resident_bytes;
use crate::runtime::action::{Action, Outcome};
use crate::runtime::driver::{Driver, GROW_CHUNK};
use crate::runtime::pace::Pace;
use crate::runtime::swarm::{MAX_CHURN, Order};
use crate::runtime::values::ResortAbove;
use crate::simd::SimdChoice;
use crate::threads::Threads;

/// Counts the swarm keeps coming back to, so that memory after a return can be compared.
pub const SMALL_COUNTS: [usize; 2] = [10_000, 50_000];
/// Populations up to this many entities get every seeker's handle checked at each check.
const TARGETS_CHECKED_UP_TO: usize = 200_000;
/// Resident memory back at a small count may be at most this much its first visit's.
pub const MEMORY_GROWTH_LIMIT: f64 = 1.5;

/// What a soak is asked to do.
#[derive(Clone, Copy, Debug)]
pub struct SoakConfig {
    pub duration: Duration,
    pub seed: u64,
    pub max_count: usize,
    /// Compare with the reference every this many frames.
    pub check_every: u64,
}

/// What a soak did.
#[derive(Clone, Debug, Default)]
pub struct SoakReport {
    pub actions: u64,
    pub refused: u64,
    pub frames: u64,
    /// Layout switches asked for (some replaced or cancelled before they landed).
    pub switches: u64,
    /// Switches that landed (the swarm's layout changed).
    pub switches_landed: u64,
    /// Sorts that landed (the swarm's logical order changed), each followed by the reference.
    pub sorts_landed: u64,
    pub checks: u64,
    pub mismatches: Vec<String>,
    /// Resident memory, largest and last sampled; `None` where the OS never said.
    pub peak_rss: Option<u64>,
    pub final_rss: Option<u64>,
    /// Resident memory at the first visit of each small count, and the largest later one.
    pub small_count_rss: HashMap<usize, (u64, u64)>,
    pub memory_failures: Vec<String>,
    /// Samples over the limit that came back under it once the allocator was asked again to
    /// return freed memory (`malloc_trim`): freed but not yet given back, not kept.
    pub memory_rechecked: u64,
    pub elapsed: Duration,
}

impl SoakReport {
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty() && self.memory_failures.is_empty()
    }
}

/// One random action for a swarm of at most `max_count` entities, and the frames to wait after
/// it. Layout switches come often, so that many start while the previous one is still copying;
/// a quarter of them go straight back to the layout being left. With `sorts`, some are sorts
/// and re-sort thresholds; without, those turns pause instead.
pub fn random_action(
    rng: &mut ChaCha8Rng,
    driver_layout: LayoutKind,
    max_count: usize,
    sorts: bool,
) -> (Action, u64) {
    let wait = rng.random_range(1..=12u64);
    let action = match rng.random_range(0..100u32) {
        0..=34 => {
            if rng.random_range(0..4u32) == 0 {
                Action::Layout(driver_layout)
            } else {
                Action::Layout(LayoutKind::CPU[rng.random_range(0..LayoutKind::CPU.len())])
            }
        }
        35..=59 => Action::Count(if rng.random_range(0..3u32) == 0 {
            SMALL_COUNTS[rng.random_range(0..SMALL_COUNTS.len())]
        } else {
            // Log-uniform from 1 to the maximum, and now and then nothing at all.
            let top = (max_count.max(2) as f64).ln();
            match rng.random_range(0..20u32) {
                0 => 0,
                _ => rng.random_range(0.0..top).exp() as usize,
            }
        }),
        60..=64 => Action::Threads(Threads::BOTH[rng.random_range(0..2)]),
        65..=69 => Action::Simd(SimdChoice::BOTH[rng.random_range(0..2)]),
        70..=81 => Action::Churn(match rng.random_range(0..4u32) {
            0 => 0,
            1 => MAX_CHURN,
            _ => rng.random_range(0..=MAX_CHURN / 10),
        }),
        82..=85 => Action::Seek(rng.random_range(0..2u32) == 0),
        86..=87 => Action::SeekKernel(SeekKernel::BOTH[rng.random_range(0..2)]),
        88..=91 if sorts => Action::Order(Order::BOTH[rng.random_range(0..2)]),
        92..=93 if sorts => Action::Resort(match rng.random_range(0..3u32) {
            0 => None,
            _ => ResortAbove::new(rng.random_range(ResortAbove::MIN..=ResortAbove::MAX)),
        }),
        _ => Action::Pause(rng.random_range(0..3u32) == 0),
    };
    (action, wait)
}

/// A random script of `len` actions (with their waits) for the app. No sorts: a sort is paced
/// by time, so it lands on one frame in the app and on another in the script's replay, and
/// churn (which picks its victims by logical index) then removes other entities in each; the
/// soak, whose reference follows each sort as it lands, covers them.
pub fn random_actions(seed: u64, len: usize, max_count: usize) -> Vec<Action> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut layout = LayoutKind::Soa;
    let mut out = Vec::with_capacity(2 * len);
    for _ in 0..len {
        let (action, wait) = random_action(&mut rng, layout, max_count, false);
        if let Action::Layout(kind) = action {
            layout = kind;
        }
        out.push(action);
        out.push(Action::Wait(wait));
    }
    out
}

/// Runs a soak; `progress` is called every few seconds with a one-line summary.
pub fn run(config: &SoakConfig, mut progress: impl FnMut(&str)) -> Result<SoakReport, SimError> {
    let started = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let new_driver = |kind| {
        // Growth by count, so that the driver and its reference grow alike; switches by time,
        // as in the app (where their chunks fall changes nothing, which the soak checks too).
        Driver::<f32>::new(kind, config.seed).map(|d| {
            d.with_max_entities(config.max_count.max(1))
                .with_grow_pace(Pace::Entities(GROW_CHUNK))
        })
    };
    let mut driver = new_driver(LayoutKind::EcsTable)?;
    let mut reference = new_driver(LayoutKind::Soa)?;
    let mut report = SoakReport::default();
    let mut last_progress = Instant::now();
    let mut previous_layout = driver.swarm().kind();
    let mut waiting = 0u64;
    let mut sorts_followed = 0;
    // The last actions, for a failure to say what led to it.
    let mut recent: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    while started.elapsed() < config.duration {
        if waiting == 0 {
            let (action, wait) = random_action(&mut rng, previous_layout, config.max_count, true);
            waiting = wait;
            report.actions += 1;
            if let Action::Layout(_) = action {
                report.switches += 1;
                previous_layout = driver.requested_layout();
            }
            if recent.len() == 8 {
                recent.pop_front();
            }
            recent.push_back(format!("{action} @{}", report.frames));
            let applied = driver.apply(&action);
            // The reference stays in SoA and sorts only when the driver's sort lands (below);
            // everything else it does alike.
            let reference_applied = match action {
                Action::Layout(_) | Action::Order(_) | Action::Resort(_) => {
                    Ok(Outcome::NotForDriver)
                }
                _ => reference.apply(&action),
            };
            match (applied, reference_applied) {
                (Ok(_), Ok(_)) => {}
                (Err(_), Err(_)) => report.refused += 1,
                (a, b) => report.mismatches.push(format!(
                    "frame {}: {action:?} accepted by one driver only ({a:?} vs {b:?})",
                    report.frames
                )),
            }
        }
        waiting -= 1;
        let kind_before = driver.swarm().kind();
        let frame = driver.frame_step();
        let reference_frame = reference.frame_step();
        if driver.swarm().kind() != kind_before {
            report.switches_landed += 1;
        }
        // A sort that landed changed which entity sits at which logical index, and churn picks
        // its victims by logical index: the reference takes the same order at once. A sort paced
        // by time lands on a frame of its own in the driver, so the reference cannot sort
        // alongside it.
        if driver.swarm().sorts_landed() != sorts_followed {
            sorts_followed = driver.swarm().sorts_landed();
            report.sorts_landed += 1;
            reference.reorder_like(driver.swarm().ids(), driver.swarm().order())?;
        }
        if frame.error.is_some() != reference_frame.error.is_some() {
            report.mismatches.push(format!(
                "frame {}: {:?} vs the reference's {:?}",
                report.frames, frame.error, reference_frame.error
            ));
        }
        report.frames += 1;
        if report.frames.is_multiple_of(config.check_every.max(1)) {
            report.checks += 1;
            // Every handle checked, at the counts where that costs milliseconds, not seconds.
            for (who, d) in [("driver", &driver), ("reference", &reference)] {
                if d.swarm().len() > TARGETS_CHECKED_UP_TO {
                    continue;
                }
                if let Err(e) = d.swarm().check_targets() {
                    report
                        .mismatches
                        .push(format!("frame {}: the {who}'s handles: {e}", report.frames));
                }
            }
            if driver.swarm().checksum() != reference.swarm().checksum()
                || driver.swarm().len() != reference.swarm().len()
            {
                report.mismatches.push(format!(
                    "frame {}: {} entities in {} with checksum {:016x}, the SoA reference {} with {:016x}",
                    report.frames,
                    driver.swarm().len(),
                    driver.swarm().kind(),
                    driver.swarm().checksum(),
                    reference.swarm().len(),
                    reference.swarm().checksum()
                ));
            }
            let failures = report.memory_failures.len();
            check_memory(&mut driver, &mut reference, &mut report);
            if report.memory_failures.len() > failures
                && let Some(line) = report.memory_failures.last_mut()
            {
                line.push_str(&format!(
                    "; after: {}",
                    recent.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        if last_progress.elapsed() >= Duration::from_secs(5) {
            last_progress = Instant::now();
            progress(&format!(
                "[{:6.0} s] frames {} actions {} switches {} ({} landed) sorts landed {} now {} entities in {} · rss {} · mismatches {} · memory failures {}",
                started.elapsed().as_secs_f64(),
                report.frames,
                report.actions,
                report.switches,
                report.switches_landed,
                report.sorts_landed,
                driver.swarm().len(),
                driver.swarm().kind(),
                mib_or_unknown(report.final_rss),
                report.mismatches.len(),
                report.memory_failures.len(),
            ));
        }
    }
    report.elapsed = started.elapsed();
    report.final_rss = resident_bytes().or(report.final_rss);
    Ok(report)
}

/// `123 MiB`, or `unknown` where the OS did not say.
pub fn mib_or_unknown(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unknown".to_string(), |b| format!("{} MiB", b >> 20))
}

/// Samples resident memory; at a settled small count, compares it with the first visit there.
fn check_memory(driver: &mut Driver, reference: &mut Driver, report: &mut SoakReport) {
    // Churn's spawns and removals are working memory of their own (100,000 a frame at 10,000
    // entities is eleven times the population): compare only churn-free visits.
    let settled = !driver.growing()
        && !reference.growing()
        && driver.swarm().transition().is_none()
        && reference.swarm().transition().is_none()
        && driver.churn() == 0;
    if settled {
        // Layouts replaced by switches are freed on other threads: wait, so they are not counted.
        driver.wait_for_frees();
        reference.wait_for_frees();
    }
    let Some(mut rss) = resident_bytes() else {
        return;
    };
    report.peak_rss = report.peak_rss.max(Some(rss));
    report.final_rss = Some(rss);
    if !settled || !SMALL_COUNTS.contains(&driver.swarm().len()) {
        return;
    }
    let first = report
        .small_count_rss
        .get(&driver.swarm().len())
        .map_or(rss, |&(first, _)| first);
    if rss as f64 > MEMORY_GROWTH_LIMIT * first as f64 {
        // Over the limit: ask once more for what is freed and not yet returned. Memory that is
        // still resident after that is kept, and a failure.
        crate::memory::release_to_os();
        if let Some(again) = resident_bytes()
            && (again as f64) <= MEMORY_GROWTH_LIMIT * first as f64
        {
            report.memory_rechecked += 1;
            rss = again;
        }
    }
    let (first, worst) = report
        .small_count_rss
        .entry(driver.swarm().len())
        .or_insert((rss, rss));
    *worst = (*worst).max(rss);
    if rss as f64 > MEMORY_GROWTH_LIMIT * *first as f64 {
        report.memory_failures.push(format!(
            "frame {}: {} MiB resident back at {} entities ({}), {} MiB at the first visit",
            report.frames,
            rss >> 20,
            driver.swarm().len(),
            driver.swarm().kind(),
            *first >> 20
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sort spread over frames, with churn every frame, lands in the driver on a frame of its
    /// own; the reference, taking the driver's order when it lands, removes the same entities
    /// from then on. Without following, churn (which picks victims by logical index) removes
    /// others, and the checksums part.
    #[test]
    fn the_reference_follows_a_sort_that_lands_and_churn_stays_in_step() {
        for follow in [true, false] {
            let new_driver = |kind| {
                Driver::<f32>::new(kind, 3)
                    .unwrap()
                    .with_grow_pace(Pace::Entities(GROW_CHUNK))
                    .with_switch_pace(Pace::Entities(700))
            };
            let (mut driver, mut reference) =
                (new_driver(LayoutKind::Aos), new_driver(LayoutKind::Soa));
            for d in [&mut driver, &mut reference] {
                d.apply(&Action::Count(5_000)).unwrap();
                d.apply(&Action::Churn(40)).unwrap();
                d.frame_step();
            }
            driver.apply(&Action::Order(Order::Group)).unwrap();
            let mut followed = 0;
            let mut in_step = true;
            for _ in 0..30 {
                driver.frame_step();
                reference.frame_step();
                if follow && driver.swarm().sorts_landed() != followed {
                    followed = driver.swarm().sorts_landed();
                    reference
                        .reorder_like(driver.swarm().ids(), driver.swarm().order())
                        .unwrap();
                }
                in_step &= driver.swarm().checksum() == reference.swarm().checksum();
            }
            assert_eq!(driver.swarm().sorts_landed(), 1);
            assert_eq!(driver.swarm().order(), Order::Group);
            assert_eq!(in_step, follow, "follow: {follow}");
            if follow {
                assert_eq!(reference.swarm().ids(), driver.swarm().ids());
                assert_eq!(reference.swarm().order(), Order::Group);
            }
        }
    }

    /// The soak's actions include sorts and re-sort thresholds; the app's random scripts,
    /// which must replay frame for frame, do not.
    #[test]
    fn the_soak_sorts_and_the_app_scripts_do_not() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let soak: Vec<Action> = (0..2_000)
            .map(|_| random_action(&mut rng, LayoutKind::Soa, 100_000, true).0)
            .collect();
        assert!(
            soak.iter()
                .any(|a| matches!(a, Action::Order(Order::Group)))
        );
        assert!(soak.iter().any(|a| matches!(a, Action::Resort(Some(_)))));
        let sorts = |a: &Action| matches!(a, Action::Order(_) | Action::Resort(_));
        assert!(!random_actions(11, 2_000, 100_000).iter().any(sorts));
    }
}

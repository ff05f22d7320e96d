//! Why a layout costs what it costs: instructions, cache accesses and misses, branch misses per
//! entity per frame, the C++ article's `perf stat` table for our layouts.
//!
//! Two sources, never mixed in one column:
//! - **real**: the CPU's own counters through Linux's `perf_event_open` ([`pmu`]), counted around
//!   the frames only. Most VMs and containers (and every machine this project is developed on)
//!   have no PMU, so this often says why it cannot count.
//! - **simulated**: valgrind's cachegrind ([`cachegrind`]), which executes the same binary on a
//!   simulated cache of a pinned geometry. Deterministic: the same binary and input give the same
//!   counts on any machine, which is what makes them a regression check that noise cannot break.
//!   Cachegrind models two levels only (L1 and the last level) and no timing, so it gives no
//!   cycles and no IPC.
//!
//! The counted work is exactly the frame the other experiments time: [`crate::runtime::swarm::Swarm::step`],
//! move then regen, one thread, f32, after the population is complete and warmed up; or one
//! other system alone ([`CountedSystem`]): seek, every entity reading its target by handle, or the
//! neighbour pass, every entity reading the entities near it.

pub mod baseline;
pub mod cachegrind;
pub mod pmu;

use crate::error::SimError;
use crate::layout::{LayoutKind, SeekKernel};
use crate::neighbours::AvoidForm;
use crate::runtime::swarm::{Order, Swarm};
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::Dt;

/// The seed the counted populations spawn from (the bench's).
pub const SEED: u64 = crate::workload::SEED;

/// What to count: `frames` frames of `layout` at `n` entities, after `warmup` frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    pub layout: LayoutKind,
    pub n: usize,
    pub warmup: usize,
    pub frames: usize,
    /// The SIMD tier the kernels run on; the counters experiment and the regression check
    /// count the baseline, the `simd` experiment each tier cachegrind can run.
    pub simd: SimdTier,
    /// The system the counted frames run.
    pub system: CountedSystem,
    /// The storage order, arranged before the warm-up (what the counts of seek in both orders
    /// compare).
    pub order: Order,
    /// The seek kernel.
    pub seek_kernel: SeekKernel,
}

impl FrameSpec {
    /// Enough frames that the frame dominates what little else the subtraction leaves, few
    /// enough that 10M entities under cachegrind finish in a minute or two.
    pub fn for_count(layout: LayoutKind, n: usize) -> Self {
        let (warmup, frames) = match n {
            0..=100_000 => (2, 8),
            100_001..=2_000_000 => (1, 2),
            _ => (1, 1),
        };
        Self {
            layout,
            n,
            warmup,
            frames,
            simd: SimdTier::Baseline,
            system: CountedSystem::Frame,
            order: Order::Id,
            seek_kernel: SeekKernel::Idiomatic,
        }
    }

    /// The neighbour pass alone in `form` and `order`: one warm-up frame (the grid's first
    /// allocation) and two counted, a pass reading every neighbour being the costliest system
    /// to run under cachegrind.
    pub fn avoid(layout: LayoutKind, n: usize, order: Order, form: AvoidForm) -> Self {
        Self {
            warmup: 1,
            frames: 2,
            system: CountedSystem::Avoid(form),
            order,
            ..Self::for_count(layout, n)
        }
    }

    /// [`Self::seek`] in `order`, with `kernel`.
    pub fn seek_with(layout: LayoutKind, n: usize, order: Order, kernel: SeekKernel) -> Self {
        Self {
            order,
            seek_kernel: kernel,
            ..Self::seek(layout, n)
        }
    }

    /// [`Self::for_count`] for the seek system alone.
    pub fn seek(layout: LayoutKind, n: usize) -> Self {
        Self {
            system: CountedSystem::Seek,
            ..Self::for_count(layout, n)
        }
    }

    /// The name the counts baseline keys this spec's row by: the layout, then the system when
    /// it is not move + regen (` seek`, ` avoid tuned`).
    pub fn row(&self) -> String {
        let mut row = self.layout.name().to_string();
        match self.system {
            CountedSystem::Frame => {}
            CountedSystem::Seek => row.push_str(" seek"),
            CountedSystem::Avoid(AvoidForm::Idiomatic) => row.push_str(" avoid"),
            CountedSystem::Avoid(AvoidForm::Tuned) => row.push_str(" avoid tuned"),
        }
        if self.system == CountedSystem::Seek && self.seek_kernel == SeekKernel::Tuned {
            row.push_str(" tuned");
        }
        if self.order != Order::Id {
            row.push_str(&format!(" by {}", self.order));
        }
        row
    }

    /// Entity-frames the counts are divided by.
    pub fn entity_frames(&self) -> f64 {
        (self.n as f64 * self.frames as f64).max(1.0)
    }
}

/// The system a counted frame runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CountedSystem {
    /// The frame the other experiments time: move, then regen.
    #[default]
    Frame,
    /// Seek alone.
    Seek,
    /// The neighbour pass alone, in a form.
    Avoid(AvoidForm),
}

impl CountedSystem {
    pub const ALL: [CountedSystem; 4] = [
        CountedSystem::Frame,
        CountedSystem::Seek,
        CountedSystem::Avoid(AvoidForm::Idiomatic),
        CountedSystem::Avoid(AvoidForm::Tuned),
    ];

    /// The name `count-frames --system` takes.
    pub fn name(self) -> &'static str {
        match self {
            CountedSystem::Frame => "frame",
            CountedSystem::Seek => "seek",
            CountedSystem::Avoid(AvoidForm::Idiomatic) => "avoid",
            CountedSystem::Avoid(AvoidForm::Tuned) => "avoid-tuned",
        }
    }
}

impl std::str::FromStr for CountedSystem {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        CountedSystem::ALL
            .into_iter()
            .find(|c| c.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = CountedSystem::ALL.iter().map(|c| c.name()).collect();
                format!("unknown system '{text}' (one of {})", names.join(", "))
            })
    }
}

/// Builds the population, runs the warm-up frames, then hands `count` a closure that runs the
/// counted frames: `count` decides what happens around them (start and stop the PMU, or nothing
/// under cachegrind, where the two-run subtraction isolates them). Returns what `count` returned
/// and the population's checksum, so a caller can tell that the frames really ran.
pub fn run_frames<T>(
    spec: &FrameSpec,
    count: impl FnOnce(&mut dyn FnMut()) -> T,
) -> Result<(T, u64), SimError> {
    let mut swarm = Swarm::<f32>::with_count(spec.layout, SEED, spec.n)?;
    swarm.set_simd(spec.simd);
    swarm.set_seek_kernel(spec.seek_kernel);
    if let CountedSystem::Avoid(form) = spec.system {
        swarm.set_avoid_form(form);
    }
    // Only when asked: arranging the ids allocates, and the heap's offsets decide conflict
    // misses in the pinned cache (chunks' blocks), so the other rows must not see it.
    if spec.order != Order::Id {
        swarm.reorder(spec.order)?;
    }
    let dt = Dt::default();
    let step = |swarm: &mut Swarm<f32>| match spec.system {
        CountedSystem::Frame => swarm.step(dt, Threads::One),
        CountedSystem::Seek => swarm.step_seek(dt, Threads::One),
        CountedSystem::Avoid(_) => swarm.step_avoid(dt, Threads::One),
    };
    for _ in 0..spec.warmup {
        step(&mut swarm);
    }
    let frames = spec.frames;
    let out = count(&mut || {
        for _ in 0..frames {
            step(&mut swarm);
            std::hint::black_box(&mut swarm);
        }
    });
    Ok((out, swarm.checksum()))
}

/// One counted run, divided by entity-frames: every field is per entity per frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PerEntity {
    pub instructions: f64,
    /// Data reads and writes that reached the L1 data cache (real: reads only, which is what
    /// the generic L1d event counts on most CPUs).
    pub l1d_accesses: f64,
    pub l1d_misses: f64,
    /// Accesses that reached the last-level cache (the article's "cache references").
    pub ll_accesses: f64,
    /// Accesses that went to memory (the article's "cache misses").
    pub ll_misses: f64,
    pub branches: f64,
    pub branch_misses: f64,
    /// Real counters only: cachegrind has no notion of time.
    pub cycles: Option<f64>,
}

impl PerEntity {
    pub fn ipc(&self) -> Option<f64> {
        self.cycles
            .filter(|&c| c > 0.0)
            .map(|c| self.instructions / c)
    }

    /// Share of L1d accesses that missed, in percent.
    pub fn l1d_miss_pct(&self) -> f64 {
        pct(self.l1d_misses, self.l1d_accesses)
    }

    /// Share of last-level accesses that went to memory, in percent (the article's "29.7%").
    pub fn ll_miss_pct(&self) -> f64 {
        pct(self.ll_misses, self.ll_accesses)
    }

    /// Where each data access was served: L1, the last level, memory (per entity; the plot's
    /// stacked bars). Simulated counts only: the real L1d event counts reads, the LL events
    /// count instruction fetches and prefetches too, so the three would not add up.
    pub fn served(&self) -> [f64; 3] {
        [
            (self.l1d_accesses - self.l1d_misses).max(0.0),
            (self.l1d_misses - self.ll_misses).max(0.0),
            self.ll_misses,
        ]
    }
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else if whole.is_nan() || part.is_nan() {
        f64::NAN
    } else {
        0.0
    }
}

/// The metric names of [`PerEntity`]'s fields in bench records, in table order.
pub const METRICS: [&str; 8] = [
    "instructions",
    "l1d_accesses",
    "l1d_misses",
    "ll_accesses",
    "ll_misses",
    "branches",
    "branch_misses",
    "cycles",
];

impl PerEntity {
    /// `(metric, value)` for every field this run has (a NaN one was not counted: left out).
    pub fn fields(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            ("instructions", self.instructions),
            ("l1d_accesses", self.l1d_accesses),
            ("l1d_misses", self.l1d_misses),
            ("ll_accesses", self.ll_accesses),
            ("ll_misses", self.ll_misses),
            ("branches", self.branches),
            ("branch_misses", self.branch_misses),
        ];
        if let Some(c) = self.cycles {
            out.push(("cycles", c));
        }
        out.retain(|(_, v)| v.is_finite());
        out
    }

    /// Rebuilds a run from `(metric, value)` pairs (bench records read back); `None` without
    /// the instruction count. A figure that was not counted (a PMU without that event) is NaN,
    /// which tables print as "n/a": never a 0 that reads as "no misses".
    pub fn from_fields(get: impl Fn(&str) -> Option<f64>) -> Option<Self> {
        let or_nan = |metric: &str| get(metric).unwrap_or(f64::NAN);
        Some(Self {
            instructions: get("instructions")?,
            l1d_accesses: or_nan("l1d_accesses"),
            l1d_misses: or_nan("l1d_misses"),
            ll_accesses: or_nan("ll_accesses"),
            ll_misses: or_nan("ll_misses"),
            branches: or_nan("branches"),
            branch_misses: or_nan("branch_misses"),
            cycles: get("cycles"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_adds_up_to_the_accesses() {
        let run = PerEntity {
            instructions: 30.0,
            l1d_accesses: 10.0,
            l1d_misses: 2.0,
            ll_accesses: 2.0,
            ll_misses: 0.5,
            ..PerEntity::default()
        };
        let [l1, ll, mem] = run.served();
        assert_eq!((l1, ll, mem), (8.0, 1.5, 0.5));
        assert_eq!(l1 + ll + mem, run.l1d_accesses);
        assert_eq!(run.ll_miss_pct(), 25.0);
        assert_eq!(run.ipc(), None);
    }

    #[test]
    fn fields_round_trip() {
        let run = PerEntity {
            instructions: 31.5,
            l1d_accesses: 9.0,
            l1d_misses: 1.0,
            ll_accesses: 1.1,
            ll_misses: 0.9,
            branches: 4.0,
            branch_misses: 0.01,
            cycles: Some(12.0),
        };
        let fields = run.fields();
        let back = PerEntity::from_fields(|m| fields.iter().find(|f| f.0 == m).map(|f| f.1));
        assert_eq!(back, Some(run));
        assert_eq!(run.ipc(), Some(31.5 / 12.0));
        // A PMU without L1d events: those figures are not counted, not zero.
        let partial = PerEntity::from_fields(|m| (m != "l1d_misses").then_some(1.0)).unwrap();
        assert!(partial.l1d_misses.is_nan() && partial.l1d_miss_pct().is_nan());
        assert!(!partial.fields().iter().any(|f| f.0 == "l1d_misses"));
    }

    /// The seek rows in the other order and kernel count the same frames: sorted and tuned,
    /// the population ends as it does in id order with the idiomatic kernel.
    #[test]
    fn seek_counted_sorted_and_tuned_computes_the_same_population() {
        let plain = FrameSpec::seek(LayoutKind::Soa, 3000);
        let sorted = FrameSpec::seek_with(LayoutKind::Soa, 3000, Order::Group, SeekKernel::Tuned);
        assert_eq!(
            (plain.row(), sorted.row()),
            (
                "soa seek".to_string(),
                "soa seek tuned by group".to_string()
            )
        );
        let ((), a) = run_frames(&plain, |frames| frames()).unwrap();
        let ((), b) = run_frames(&sorted, |frames| frames()).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn the_counted_frames_run_after_the_warm_up() {
        let spec = FrameSpec {
            layout: LayoutKind::Soa,
            n: 1000,
            warmup: 2,
            frames: 3,
            simd: SimdTier::Baseline,
            system: CountedSystem::Frame,
            order: Order::Id,
            seek_kernel: SeekKernel::Idiomatic,
        };
        let ((), counted) = run_frames(&spec, |frames| frames()).unwrap();
        let ((), skipped) = run_frames(&spec, |_| ()).unwrap();
        // The same population stepped 5 frames by hand ends in the same state.
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 1000).unwrap();
        for _ in 0..5 {
            swarm.step(Dt::default(), Threads::One);
        }
        assert_eq!(counted, swarm.checksum());
        assert_ne!(skipped, counted, "the counted frames must change the state");
    }
}

//! The project's public proof that the comparison is fair: every layout and variant, on one thread
//! and on all, on every SIMD tier this CPU has, with layout switches (at once, and spread over
//! frames as the app does them) and with churn, computes bit-identical states from one seed; with
//! move and regen alone, and with seek too (every entity reading its target through the handle
//! its layout holds, and, where a layout has it, through the tuned seek's resolved targets); and
//! in both storage orders (by id, and sorted by seek group over frames).

use crate::error::SimError;
use crate::layout::{LayoutKind, SeekKernel};
use crate::neighbours::AvoidForm;
use crate::runtime::action::Action;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::driver::Driver;
use crate::runtime::swarm::{MAX_CHURN, MAX_ENTITIES, Order};
use crate::simd::{SimdTier, available};
use crate::threads::Threads;
use crate::workload::{Dt, EntityState, Systems};

pub mod fused;

#[derive(Clone, Copy, Debug)]
pub struct VerifyConfig {
    pub count: usize,
    pub frames: usize,
    pub seed: u64,
    pub dt: Dt,
    /// Switch layout every this many frames in the switching runs.
    pub switch_every: usize,
}

impl Default for VerifyConfig {
    fn default() -> Self {
        Self {
            count: 10_000,
            frames: 60,
            seed: 42,
            dt: Dt::default(),
            switch_every: 3,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub name: String,
    pub checksum: u64,
}

/// Runs that must all end in the same state.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub runs: Vec<Run>,
}

impl Group {
    /// Runs whose checksum differs from the group's first run.
    pub fn mismatches(&self) -> Vec<&Run> {
        let Some(reference) = self.runs.first() else {
            return Vec::new();
        };
        self.runs
            .iter()
            .filter(|r| r.checksum != reference.checksum)
            .collect()
    }
}

/// How a run changes layout (or storage order) while it steps.
#[derive(Clone, Copy, Debug)]
enum Switches {
    Never,
    /// Rebuilt in this order on the second frame, spread over the next few, as the app does.
    Sorted(Order),
    /// To the next layout of `LayoutKind::CPU` every this many frames, all entities at once.
    AtOnce {
        every: usize,
    },
    /// The same, but copying `per_frame` entities a frame while churn and stepping go on, as the
    /// app does (a switch still pending when the next one is due is replaced by it, or cancelled
    /// when the next layout is the one the swarm is still in).
    Spread {
        every: usize,
        per_frame: usize,
    },
}

/// The kernels a run steps with: the SIMD tier of frame `f` is `tiers[f % tiers.len()]`, and the
/// seek kernel.
#[derive(Clone, Copy)]
struct Kernels<'a> {
    tiers: &'a [SimdTier],
    seek: SeekKernel,
    avoid: AvoidForm,
}

/// One run: `count` entities of `config.seed` in `kind`, stepped for `config.frames` frames by
/// `Driver::frame_step` (the app's frame) with `churn` spawns+removals a frame, switching layout
/// as `switches` says, on `kernels`; returns the final checksum.
fn run_one<S: AllLayouts>(
    config: &VerifyConfig,
    kind: LayoutKind,
    threads: Threads,
    churn: usize,
    systems: Systems,
    switches: Switches,
    kernels: Kernels<'_>,
) -> Result<u64, SimError> {
    let Kernels {
        tiers,
        seek: kernel,
        avoid,
    } = kernels;
    let (every, per_frame) = match switches {
        Switches::Never => (None, usize::MAX),
        // A sort is spread over about three frames, with churn and steps between.
        Switches::Sorted(_) => (None, config.count / 3 + 1),
        Switches::AtOnce { every } => (Some(every), usize::MAX),
        Switches::Spread { every, per_frame } => (Some(every), per_frame),
    };
    // The whole population is spawned on the first frame, before its churn and step.
    let mut driver = Driver::<S>::new(kind, config.seed)?
        .with_chunks(usize::MAX, per_frame)
        .with_dt(config.dt)
        .with_max_entities(MAX_ENTITIES)
        .without_freeze_guard()
        .with_simd_tier(tiers[0]);
    for action in [
        Action::Count(config.count),
        Action::Threads(threads),
        Action::Churn(churn),
        Action::Seek(systems.seeks()),
        Action::SeekKernel(kernel),
        Action::Avoid(systems.avoids()),
        Action::AvoidForm(avoid),
    ] {
        driver.apply(&action)?;
    }
    for frame in 0..config.frames {
        if let Some(every) = every
            && frame > 0
            && frame % every == 0
        {
            let here = LayoutKind::CPU
                .iter()
                .position(|&k| k == driver.swarm().kind())
                .unwrap_or(0);
            let next = LayoutKind::CPU[(here + 1) % LayoutKind::CPU.len()];
            driver.apply(&Action::Layout(next))?;
        }
        if frame == 1
            && let Switches::Sorted(order) = switches
        {
            driver.apply(&Action::Order(order))?;
        }
        if tiers.len() > 1 {
            driver = driver.with_simd_tier(tiers[frame % tiers.len()]);
        }
        if let Some(e) = driver.frame_step().error {
            return Err(e);
        }
    }
    Ok(driver.swarm().checksum())
}

/// The kernels every run steps with unless it says otherwise.
const PLAIN: Kernels<'static> = Kernels {
    tiers: &[SimdTier::Baseline],
    seek: SeekKernel::Idiomatic,
    avoid: AvoidForm::Idiomatic,
};

/// The verify suite in scalar `S`: for every set of systems, a group without churn and a group
/// with churn, each holding every layout on one and all threads, in each kernel and form, plus
/// runs that switch layout every few frames and runs sorted by group and by cell.
pub fn run_suite<S: AllLayouts>(config: &VerifyConfig) -> Result<Vec<Group>, SimError> {
    // A tenth of the population per frame, at least one: enough to reorder everything quickly
    // (within what the churn setting accepts).
    let churn = (config.count / 10).clamp(1, MAX_CHURN);
    let mut groups = Vec::new();
    for systems in Systems::EVERY {
        for (group, churn) in [("no churn", 0), ("churn", churn)] {
            let run = |name: String, kind, threads, switches, kernels| -> Result<Run, SimError> {
                let checksum =
                    run_one::<S>(config, kind, threads, churn, systems, switches, kernels)?;
                Ok(Run { name, checksum })
            };
            let mut runs = Vec::new();
            for kind in LayoutKind::CPU {
                for threads in Threads::BOTH {
                    let name = format!("{kind} threads={threads}");
                    runs.push(run(name, kind, threads, Switches::Never, PLAIN)?);
                }
            }
            let tuned_seek = Kernels {
                seek: SeekKernel::Tuned,
                ..PLAIN
            };
            // The tuned seek where a layout has it, on one and all threads, and through a
            // switch into and out of it spread over frames: the same bits as the idiomatic one.
            if systems.seeks() {
                for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_tuned_seek()) {
                    for threads in Threads::BOTH {
                        let name = format!("{kind} threads={threads}, tuned seek");
                        runs.push(run(name, kind, threads, Switches::Never, tuned_seek)?);
                    }
                }
                let every = config.switch_every.max(1);
                let name = format!(
                    "switching every {every} frames spread over frames, threads=all, tuned seek"
                );
                let per_frame = config.count / 2 + 1;
                let switches = Switches::Spread { every, per_frame };
                runs.push(run(
                    name,
                    LayoutKind::CPU[0],
                    Threads::All,
                    switches,
                    tuned_seek,
                )?);
            }
            // The tuned neighbour pass in every layout, on one and all threads: the same bits.
            if systems.avoids() {
                let tuned = Kernels {
                    avoid: AvoidForm::Tuned,
                    ..PLAIN
                };
                for kind in LayoutKind::CPU {
                    for threads in Threads::BOTH {
                        let name = format!("{kind} threads={threads}, tuned neighbours");
                        runs.push(run(name, kind, threads, Switches::Never, tuned)?);
                    }
                }
            }
            // Every wider tier on the layouts compiled per tier, and one run that changes tier
            // every frame (the app's switch: instant, every entity kept).
            for tier in &available()[1..] {
                let on_tier = Kernels {
                    tiers: std::slice::from_ref(tier),
                    ..PLAIN
                };
                for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_simd_kernels()) {
                    let name = format!("{kind} threads=1 simd={tier}");
                    runs.push(run(name, kind, Threads::One, Switches::Never, on_tier)?);
                }
            }
            if available().len() > 1 {
                let name = format!(
                    "chunks threads=all, SIMD tier changing every frame ({})",
                    crate::simd::available_names()
                );
                let every_tier = Kernels {
                    tiers: available(),
                    ..PLAIN
                };
                let (chunks, all) = (LayoutKind::Chunks, Threads::All);
                runs.push(run(name, chunks, all, Switches::Never, every_tier)?);
            }
            let every = config.switch_every.max(1);
            // About half the population a frame: most spread switches take two or three frames,
            // with churn and steps in between.
            let per_frame = config.count / 2 + 1;
            let best = Kernels {
                tiers: &[crate::simd::SimdChoice::Best.tier()],
                ..PLAIN
            };
            for threads in Threads::BOTH {
                for (how, switches) in [
                    ("at once", Switches::AtOnce { every }),
                    ("spread over frames", Switches::Spread { every, per_frame }),
                ] {
                    let name = format!("switching every {every} frames {how}, threads={threads}");
                    runs.push(run(name, LayoutKind::CPU[0], threads, switches, best)?);
                }
            }
            // Sorted by group on the second frame, spread over the next ones: every layout
            // holds the same entities in the same states as in id order (no churn); with churn,
            // whose victims are picked by logical index, the sorted runs agree among themselves.
            let by_group = Switches::Sorted(Order::Group);
            let mut sorted = Vec::new();
            for kind in LayoutKind::CPU {
                let name = format!("{kind} threads=1, sorted by group");
                sorted.push(run(name, kind, Threads::One, by_group, PLAIN)?);
            }
            if systems.seeks() {
                for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_tuned_seek()) {
                    let name = format!("{kind} threads=1, sorted by group, tuned seek");
                    sorted.push(run(name, kind, Threads::One, by_group, tuned_seek)?);
                }
            }
            // Sorted by cell, where the neighbours run: their order is one of positions, the
            // same in every layout, so these agree with the rest as the runs sorted by group do.
            let mut by_cell = Vec::new();
            if systems.avoids() {
                for kind in LayoutKind::CPU {
                    for avoid in AvoidForm::BOTH {
                        let name = format!("{kind} threads=1, sorted by cell, {avoid} neighbours");
                        let kernels = Kernels { avoid, ..PLAIN };
                        let cell = Switches::Sorted(Order::Cell);
                        by_cell.push(run(name, kind, Threads::One, cell, kernels)?);
                    }
                }
            }
            let seek = match (systems.seeks(), systems.avoids()) {
                (false, false) => "",
                (true, false) => "seek, ",
                (false, true) => "neighbours, ",
                (true, true) => "seek and neighbours, ",
            };
            // With churn, whose victims are picked by logical index, each order's runs agree
            // among themselves.
            for (order, sorted) in [("group", sorted), ("cell", by_cell)] {
                if sorted.is_empty() {
                    continue;
                }
                if churn > 0 {
                    groups.push(Group {
                        name: format!(
                            "{} {seek}{group}, sorted by {order} ({churn} spawned+removed per frame)",
                            S::NAME
                        ),
                        runs: sorted,
                    });
                } else {
                    runs.extend(sorted);
                }
            }
            let name = if churn > 0 {
                format!(
                    "{} {seek}{group} ({churn} spawned+removed per frame)",
                    S::NAME
                )
            } else {
                format!("{} {seek}{group}", S::NAME)
            };
            groups.push(Group { name, runs });
        }
    }
    Ok(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_reports_the_runs_that_differ() {
        let run = |name: &str, checksum| Run {
            name: name.into(),
            checksum,
        };
        let group = Group {
            name: "g".into(),
            runs: vec![run("a", 1), run("b", 1), run("c", 2)],
        };
        assert_eq!(group.mismatches(), vec![&group.runs[2]]);
    }

    #[test]
    fn ulps_count_floats_between_and_coordinates_compare_across_the_edge() {
        assert_eq!(ulps(1.0, 1.0), 0);
        assert_eq!(ulps(1.0, f32::from_bits(1.0f32.to_bits() + 3)), 3);
        assert_eq!(ulps(-0.0, 0.0), 0);
        assert_eq!(ulps(f32::from_bits(1), -f32::from_bits(1)), 2);
        let below_edge = f32::from_bits(1600.0f32.to_bits() - 1);
        assert_eq!(coordinate_ulps(0.0, below_edge, 1600.0), 1);
        assert!(coordinate_ulps(0.0, 800.0, 1600.0) > 1_000_000);
    }
}

/// The gpu layout against the CPU's SoA: the same entities after the same frames, compared field
/// by field after reading the GPU's state back.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuComparison {
    pub name: String,
    pub frames: usize,
    pub entities: usize,
    /// Whether both hold the same ids: in the same logical order where both are layouts, each
    /// exactly once against the fused reference.
    pub same_entities: bool,
    /// The largest difference in units in the last place over every field of every entity
    /// (positions compared across the wrap: x = 0.0001 and x = 1599.9999 are neighbours).
    pub max_ulps: u32,
    /// Entities with at least one field that is not bit-identical.
    pub differing: usize,
    /// The order the gpu run's entities ended in (sorted by group where the run asked for it).
    pub order: Order,
}

/// Units in the last place between two `f32`s (0: the same bits).
pub fn ulps(a: f32, b: f32) -> u32 {
    // Map the sign-magnitude bits onto a line where adjacent floats are adjacent integers.
    let key = |v: f32| {
        let bits = v.to_bits() as i32;
        if bits < 0 { i32::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

/// `ulps`, except that a coordinate on either side of the world's edge compares across it.
// Used by `compare_gpu` (the `gpu` feature) and the tests.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn coordinate_ulps(a: f32, b: f32, extent: f32) -> u32 {
    let direct = ulps(a, b);
    if (a - b).abs() > extent / 2.0 {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        return direct.min(ulps(lo + extent, hi));
    }
    direct
}

/// Runs SoA and the gpu layout side by side from one seed: one run straight on the GPU, one that
/// switches CPU -> GPU -> CPU spread over frames; each with and without churn, and with and
/// without seek (the GPU's seek pass against SoA's); then straight on the GPU with seek and the
/// neighbours in each form (the device's grid and pass against SoA's), with and without churn.
#[cfg(feature = "gpu")]
pub fn compare_gpu(config: &VerifyConfig) -> Result<Vec<GpuComparison>, SimError> {
    let churn = (config.count / 10).clamp(1, MAX_CHURN);
    let mut out = Vec::new();
    let runs = [("no churn", 0), ("churn", churn)]
        .into_iter()
        .flat_map(|c| [false, true].map(|seek| (c, seek)))
        .flat_map(|c| [false, true].map(|round_trip| (c, round_trip)))
        .map(|(((how, churn), seek), round_trip)| (how, churn, seek, round_trip, None));
    let near = [("no churn", 0), ("churn", churn)]
        .into_iter()
        .flat_map(|(how, churn)| AvoidForm::BOTH.map(|form| (how, churn, true, false, Some(form))));
    for (how, churn, seek, round_trip, avoid) in runs.chain(near) {
        let start = if round_trip {
            LayoutKind::Soa
        } else {
            LayoutKind::Gpu
        };
        let (mut gpu, mut reference) = (
            gpu_run(config, start, churn, seek, avoid)?,
            gpu_run(config, LayoutKind::Soa, churn, seek, avoid)?,
        );
        let sorted = seek && !round_trip && avoid.is_none();
        for frame in 0..config.frames {
            if round_trip && frame == 1 {
                gpu.apply(&Action::Layout(LayoutKind::Gpu))?;
            }
            if round_trip && frame + 5 == config.frames {
                gpu.apply(&Action::Layout(LayoutKind::Soa))?;
            }
            // With seek, the run on the GPU is sorted by group too, beside a sorted SoA: the
            // sort is paced by entities, not time (`with_chunks`), so both land on one frame.
            if sorted && frame == 1 {
                gpu.apply(&Action::Order(Order::Group))?;
                reference.apply(&Action::Order(Order::Group))?;
            }
            for d in [&mut gpu, &mut reference] {
                if let Some(e) = d.frame_step().error {
                    return Err(e);
                }
            }
        }
        let (a, b) = (gpu.swarm().export(), reference.swarm().export());
        let worst: Vec<u32> = a.states.iter().zip(&b.states).map(state_ulps).collect();
        let path = if round_trip {
            "soa -> gpu -> soa, spread over frames"
        } else {
            "gpu throughout"
        };
        let seeking = match (seek, sorted) {
            (true, true) => ", seek, sorted by group",
            (true, false) => ", seek",
            _ => "",
        };
        let neighbours = avoid.map_or(String::new(), |form| format!(", {form} neighbours"));
        out.push(GpuComparison {
            name: format!("{path}, {how}{seeking}{neighbours}"),
            frames: config.frames,
            entities: a.ids.len(),
            same_entities: a.ids == b.ids,
            max_ulps: worst.iter().copied().max().unwrap_or(0),
            differing: worst.iter().filter(|&&u| u > 0).count(),
            order: gpu.swarm().order(),
        });
    }
    Ok(out)
}

/// One side of a GPU comparison: `config.count` entities of `kind` with `churn`, `seek` and the
/// neighbours in a form, switches and sorts spread over about three frames, as `compare_gpu`
/// steps them.
#[cfg(feature = "gpu")]
fn gpu_run(
    config: &VerifyConfig,
    kind: LayoutKind,
    churn: usize,
    seek: bool,
    avoid: Option<AvoidForm>,
) -> Result<Driver<f32>, SimError> {
    let mut d = Driver::<f32>::new(kind, config.seed)?
        .with_chunks(usize::MAX, config.count / 3 + 1)
        .with_dt(config.dt)
        .with_max_entities(MAX_ENTITIES)
        .without_freeze_guard();
    d.apply(&Action::Count(config.count))?;
    d.apply(&Action::Churn(churn))?;
    d.apply(&Action::Seek(seek))?;
    if let Some(form) = avoid {
        d.apply(&Action::AvoidForm(form))?;
        d.apply(&Action::Avoid(true))?;
    }
    Ok(d)
}

/// The largest difference between two states of one entity, field by field, in units in the
/// last place (positions across the world's edge).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn state_ulps((s, r): (&EntityState<f32>, &EntityState<f32>)) -> u32 {
    use crate::workload::{WORLD_HEIGHT, WORLD_WIDTH};
    [
        coordinate_ulps(s.x, r.x, WORLD_WIDTH as f32),
        coordinate_ulps(s.y, r.y, WORLD_HEIGHT as f32),
        ulps(s.vx, r.vx),
        ulps(s.vy, r.vy),
        ulps(s.hp, r.hp),
        ulps(s.energy, r.energy),
        ulps(s.regen, r.regen),
        ulps(s.armor, r.armor),
    ]
    .into_iter()
    .max()
    .unwrap_or(0)
}

/// The gpu layout against [`fused::reference_states`], which fuses the sites `fusion` names:
/// straight on the GPU without churn (the reference steps one fixed population), with and
/// without seek (sorted by group, as `compare_gpu`'s seeking run), compared by id.
#[cfg(feature = "gpu")]
pub fn compare_gpu_fused(
    config: &VerifyConfig,
    fusion: fused::Fusion,
) -> Result<Vec<GpuComparison>, SimError> {
    let mut out = Vec::new();
    for seek in [false, true] {
        let mut gpu = gpu_run(config, LayoutKind::Gpu, 0, seek, None)?;
        for frame in 0..config.frames {
            if seek && frame == 1 {
                gpu.apply(&Action::Order(Order::Group))?;
            }
            if let Some(e) = gpu.frame_step().error {
                return Err(e);
            }
        }
        let reference = fused::reference_states(
            config.seed,
            config.count,
            config.frames,
            config.dt,
            seek,
            fusion,
        );
        let got = gpu.swarm().export();
        let mut seen = vec![false; reference.len()];
        let mut same_entities = got.ids.len() == reference.len();
        let mut worst = Vec::with_capacity(got.ids.len());
        for (&id, state) in got.ids.iter().zip(&got.states) {
            match reference.get(id as usize) {
                Some(r) if !seen[id as usize] => {
                    seen[id as usize] = true;
                    worst.push(state_ulps((state, r)));
                }
                _ => same_entities = false,
            }
        }
        let seeking = if seek { ", seek, sorted by group" } else { "" };
        out.push(GpuComparison {
            name: format!(
                "gpu throughout, no churn{seeking}, against the CPU fusing {}",
                fusion.describe()
            ),
            frames: config.frames,
            entities: got.ids.len(),
            same_entities,
            max_ulps: worst.iter().copied().max().unwrap_or(0),
            differing: worst.iter().filter(|&&u| u > 0).count(),
            order: gpu.swarm().order(),
        });
    }
    Ok(out)
}

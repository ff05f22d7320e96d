//! The project's public proof that the comparison is fair: every layout and variant, on one thread
//! and on all, with layout switches (at once, and spread over frames as the app does them) and with
//! churn, computes bit-identical states from one seed.

use crate::action::Action;
use crate::driver::{Driver, MAX_CHURN};
use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::scalar::Scalar;
use crate::swarm::MAX_ENTITIES;
use crate::threads::Threads;
use crate::workload::Dt;

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

/// How a run changes layout while it steps.
#[derive(Clone, Copy, Debug)]
enum Switches {
    Never,
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

/// One run: `count` entities of `config.seed` in `kind`, stepped for `config.frames` frames by
/// `Driver::frame_step` (the app's frame) with `churn` spawns+removals a frame, switching layout
/// as `switches` says; returns the final checksum.
fn run_one<S: Scalar>(
    config: &VerifyConfig,
    kind: LayoutKind,
    threads: Threads,
    churn: usize,
    switches: Switches,
) -> Result<u64, SimError> {
    let (every, per_frame) = match switches {
        Switches::Never => (None, usize::MAX),
        Switches::AtOnce { every } => (Some(every), usize::MAX),
        Switches::Spread { every, per_frame } => (Some(every), per_frame),
    };
    // The whole population is spawned on the first frame, before its churn and step.
    let mut driver = Driver::<S>::new(kind, config.seed)?
        .with_chunks(usize::MAX, per_frame)
        .with_dt(config.dt)
        .with_max_entities(MAX_ENTITIES);
    for action in [
        Action::Count(config.count),
        Action::Threads(threads),
        Action::Churn(churn),
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
                .position(|&k| k == driver.kind())
                .unwrap_or(0);
            let next = LayoutKind::CPU[(here + 1) % LayoutKind::CPU.len()];
            driver.apply(&Action::Layout(next))?;
        }
        if let Some(e) = driver.frame_step().error {
            return Err(e);
        }
    }
    Ok(driver.checksum())
}

/// The verify suite in scalar `S`: a group without churn and a group with churn, each holding
/// every layout on one and all threads plus runs that switch layout every few frames.
pub fn run_suite<S: Scalar>(config: &VerifyConfig) -> Result<Vec<Group>, SimError> {
    // A tenth of the population per frame, at least one: enough to reorder everything quickly
    // (within what the churn setting accepts).
    let churn = (config.count / 10).clamp(1, MAX_CHURN);
    let mut groups = Vec::new();
    for (group, churn) in [("no churn", 0), ("churn", churn)] {
        let mut runs = Vec::new();
        for kind in LayoutKind::CPU {
            for threads in Threads::BOTH {
                runs.push(Run {
                    name: format!("{kind} threads={threads}"),
                    checksum: run_one::<S>(config, kind, threads, churn, Switches::Never)?,
                });
            }
        }
        let every = config.switch_every.max(1);
        // About half the population a frame: most spread switches take two or three frames,
        // with churn and steps in between.
        let per_frame = config.count / 2 + 1;
        for threads in Threads::BOTH {
            for (how, switches) in [
                ("at once", Switches::AtOnce { every }),
                ("spread over frames", Switches::Spread { every, per_frame }),
            ] {
                runs.push(Run {
                    name: format!("switching every {every} frames {how}, threads={threads}"),
                    checksum: run_one::<S>(config, LayoutKind::CPU[0], threads, churn, switches)?,
                });
            }
        }
        let name = if churn > 0 {
            format!("{} {group} ({churn} spawned+removed per frame)", S::NAME)
        } else {
            format!("{} {group}", S::NAME)
        };
        groups.push(Group { name, runs });
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
}

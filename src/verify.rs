//! The project's public proof that the comparison is fair: every layout and variant, on one thread
//! and on all, with layout switches and with churn, computes bit-identical states from one seed.

use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::scalar::Scalar;
use crate::swarm::Swarm;
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

/// Steps `swarm` for `frames` frames, with `churn` spawns+removals before each frame, switching
/// to the next layout of `LayoutKind::ALL` every `switch_every` frames when that is set.
pub fn drive<S: Scalar>(
    swarm: &mut Swarm<S>,
    config: &VerifyConfig,
    threads: Threads,
    churn: usize,
    switch_every: Option<usize>,
) -> Result<(), SimError> {
    for frame in 0..config.frames {
        if let Some(every) = switch_every
            && frame > 0
            && frame % every == 0
        {
            let here = LayoutKind::ALL
                .iter()
                .position(|&k| k == swarm.kind())
                .unwrap_or(0);
            swarm.switch_to(LayoutKind::ALL[(here + 1) % LayoutKind::ALL.len()])?;
        }
        if churn > 0 {
            swarm.churn(churn)?;
        }
        swarm.step(config.dt, threads);
    }
    Ok(())
}

fn run_one<S: Scalar>(
    config: &VerifyConfig,
    kind: LayoutKind,
    threads: Threads,
    churn: usize,
    switch_every: Option<usize>,
) -> Result<u64, SimError> {
    let mut swarm = Swarm::<S>::with_count(kind, config.seed, config.count)?;
    drive(&mut swarm, config, threads, churn, switch_every)?;
    Ok(swarm.checksum())
}

/// The verify suite in scalar `S`: a group without churn and a group with churn, each holding
/// every layout on one and all threads plus runs that switch layout every few frames.
pub fn run_suite<S: Scalar>(config: &VerifyConfig) -> Result<Vec<Group>, SimError> {
    // A tenth of the population per frame, at least one: enough to reorder everything quickly.
    let churn = (config.count / 10).max(1);
    let mut groups = Vec::new();
    for (group, churn) in [("no churn", 0), ("churn", churn)] {
        let mut runs = Vec::new();
        for kind in LayoutKind::ALL {
            for threads in Threads::BOTH {
                runs.push(Run {
                    name: format!("{kind} threads={threads}"),
                    checksum: run_one::<S>(config, kind, threads, churn, None)?,
                });
            }
        }
        for threads in Threads::BOTH {
            runs.push(Run {
                name: format!(
                    "switching every {} frames, threads={threads}",
                    config.switch_every
                ),
                checksum: run_one::<S>(
                    config,
                    LayoutKind::ALL[0],
                    threads,
                    churn,
                    Some(config.switch_every.max(1)),
                )?,
            });
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

//! Seek's targets. Every entity's target is a pure function of the seed and its id
//! ([`target_of`]); the swarm resolves a new entity's target id to the logical index of the
//! target in the layout it is pushed into, and the layout keeps a handle of its own kind from
//! then on. A transition's copy may take a seeker before its target (after churn scrambled the
//! order): it waits, without a handle, and after each seek the current layout's result is copied
//! onto it, until its target is copied and its handle set ([`super::copy`]). Either way both
//! layouts compute the same bits.

use super::Swarm;
use crate::layout::regions::{Field, Region};
use crate::layout::seeking::PREFETCH_AHEAD;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::id_index::IdIndex;
use crate::workload::target_of;

impl<S: AllLayouts> Swarm<S> {
    /// The targets of the entities at logical indices `first..end` (already in the population),
    /// as logical indices, into the scratch's targets.
    pub(super) fn resolve_targets(&mut self, first: usize, end: usize) {
        let population = &self.population;
        look_up_targets(
            population.seed,
            &population.index,
            &population.ids[first..end],
            &mut self.scratch.targets,
            |_, _, j| Some(j),
        );
    }

    /// Checks that every entity's handle names the entity `target_of` says it seeks, if that one
    /// is alive, and nothing otherwise; in a transition's copy too, where a seeker copied before
    /// its target holds nothing yet. The first mismatch, for tests and `soak`.
    pub fn check_targets(&self) -> Result<(), String> {
        let population = &self.population;
        let expected =
            |id: u64| target_of(population.seed, id).filter(|t| population.index.contains(*t));
        for (i, &id) in population.ids.iter().enumerate() {
            let held = self.layout.target_at(i);
            if held != expected(id) {
                return Err(format!(
                    "{}: entity {id} at {i} seeks {held:?}, expected {:?}",
                    self.kind(),
                    expected(id)
                ));
            }
        }
        let Some((copy, ids)) = self
            .transition
            .as_ref()
            .and_then(|t| t.copied_ids(population))
        else {
            return Ok(());
        };
        for (i, &id) in ids.iter().enumerate() {
            let held = copy.to.target_at(i);
            let waiting = held.is_none()
                && expected(id)
                    .is_some_and(|t| copy.waiting.get(&t).is_some_and(|w| w.contains(&id)));
            if held != expected(id) && !waiting {
                return Err(format!(
                    "switch copy {}: entity {id} at {i} seeks {held:?}, expected {:?}",
                    copy.to.kind(),
                    expected(id)
                ));
            }
        }
        Ok(())
    }

    /// Where the targets of the entities at `range` keep the fields seek reads (x and y), in the
    /// current layout's storage: what the seek pass brings in for those seekers (the memory
    /// view). Each region names its seeker as its entity.
    pub fn target_regions(&self, range: std::ops::Range<usize>) -> Vec<Region> {
        let mut out = Vec::new();
        let mut one = Vec::new();
        for seeker in range.start.min(self.len())..range.end.min(self.len()) {
            let Some(j) = self
                .layout
                .target_at(seeker)
                .and_then(|t| self.population.index.get(t))
            else {
                continue;
            };
            one.clear();
            self.layout.regions(j as usize..j as usize + 1, &mut one);
            out.extend(
                one.iter()
                    .filter(|r| matches!(r.field, Field::X | Field::Y))
                    .map(|r| Region {
                        entity: seeker,
                        ..*r
                    }),
            );
        }
        out
    }
}

/// For each seeker in `ids`, `place(seeker, its target's id, the target's logical index)` where
/// the target lives (none where it has none or it is gone), into `out`. Each lookup is a random
/// read of the id index (4 bytes an id: 4 MB at 1M), and a switch makes one for every entity it
/// copies: the target ids are worked out first, and each read is prefetched
/// [`PREFETCH_AHEAD`] seekers ahead, so that the misses overlap instead of queuing one after
/// another.
pub(super) fn look_up_targets(
    seed: u64,
    index: &IdIndex,
    ids: &[u64],
    out: &mut Vec<Option<usize>>,
    mut place: impl FnMut(u64, u64, usize) -> Option<usize>,
) {
    // The target ids first, in `out`; each then gives way to its place.
    out.clear();
    out.extend(
        ids.iter()
            .map(|&id| target_of(seed, id).map(|t| t as usize)),
    );
    for k in 0..out.len() {
        if let Some(&Some(ahead)) = out.get(k + PREFETCH_AHEAD) {
            index.prefetch(ahead as u64);
        }
        out[k] = out[k].and_then(|t| {
            let t = t as u64;
            index.get(t).and_then(|j| place(ids[k], t, j as usize))
        });
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::layout::{LayoutKind, SeekKernel};
    use crate::runtime::swarm::Order;
    use crate::threads::Threads;
    use crate::workload::Dt;

    /// Random churn, shrinks, growth and a switch spread over random steps, with seek between
    /// them: after every operation every handle names the target `target_of` gives (or nothing
    /// once it is gone), in the current layout and in the copy, and seeking in two layouts
    /// computes the same bits.
    #[test]
    fn handles_follow_random_operations_and_a_spread_switch() {
        let mut waited = 0;
        for seed in 0..4 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, seed, 2000).unwrap();
            let mut swarm = Swarm::<f32>::with_count(LayoutKind::Aos, seed, 2000).unwrap();
            for step in 0..60 {
                let op = rng.random_range(0..5);
                if op == 0 && swarm.transition().is_none() {
                    let kind = LayoutKind::CPU[rng.random_range(0..LayoutKind::CPU.len())];
                    swarm.begin_switch(kind).unwrap();
                }
                if op == 1 {
                    swarm.copy_step(rng.random_range(1..600));
                }
                let k = rng.random_range(0..200);
                let n = rng.random_range(500..2500);
                for s in [&mut reference, &mut swarm] {
                    match op {
                        2 => s.churn(k).unwrap(),
                        3 => s.resize(n).unwrap(),
                        _ => s.step_seek(Dt::default(), Threads::BOTH[step % 2]),
                    }
                }
                let copy = swarm.transition.as_ref().and_then(|t| t.copy());
                if copy.is_some_and(|c| !c.waiting.is_empty()) {
                    waited += 1;
                }
                assert_eq!(swarm.check_targets(), Ok(()), "seed {seed} step {step}");
                assert_eq!(
                    swarm.checksum(),
                    reference.checksum(),
                    "seed {seed} step {step}"
                );
            }
        }
        assert!(
            waited > 0,
            "some seekers waited for their targets in a copy"
        );
    }

    /// The tuned seek keeps its resolved targets only while nothing changed: through random
    /// churn, shrinks, growth, sorts and switches spread over steps, and kernel flips, a swarm
    /// asking for the tuned seek computes the same bits as one running the idiomatic seek.
    #[test]
    fn the_tuned_seek_computes_the_idiomatic_bits_through_random_operations() {
        let tuned_kinds: Vec<LayoutKind> = LayoutKind::CPU
            .into_iter()
            .filter(|k| k.has_tuned_seek())
            .collect();
        assert!(!tuned_kinds.is_empty());
        let mut tuned_steps = 0;
        for seed in 0..8 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let kind = tuned_kinds[seed as usize % tuned_kinds.len()];
            // The reference goes through every same operation with the idiomatic seek.
            let mut reference = Swarm::<f32>::with_count(kind, seed, 2000).unwrap();
            let mut swarm = Swarm::<f32>::with_count(kind, seed, 2000).unwrap();
            swarm.set_seek_kernel(SeekKernel::Tuned);
            for step in 0..120 {
                let op = rng.random_range(0..10);
                // Into any layout: one without the tuned seek runs the idiomatic one until the
                // swarm is back in one with it.
                let (to, steps) = (
                    LayoutKind::CPU[rng.random_range(0..LayoutKind::CPU.len())],
                    rng.random_range(1..900),
                );
                for s in [&mut reference, &mut swarm] {
                    match op {
                        0 if s.transition().is_none() => s.begin_switch(to).unwrap(),
                        1 if s.transition().is_none() => {
                            s.begin_reorder(Order::BOTH[step % 2]).unwrap()
                        }
                        2 => {
                            s.copy_step(steps);
                        }
                        _ => {}
                    }
                }
                if op == 3 {
                    swarm.set_seek_kernel(SeekKernel::BOTH[rng.random_range(0..2)]);
                }
                let (k, n) = (rng.random_range(0..200), rng.random_range(500..2500));
                let op = rng.random_range(0..4);
                for s in [&mut reference, &mut swarm] {
                    match op {
                        0 => s.churn(k).unwrap(),
                        1 => s.resize(n).unwrap(),
                        _ => s.step_seek(Dt::default(), Threads::BOTH[step % 2]),
                    }
                }
                if op > 1 && swarm.seek_kernel_in_use() == SeekKernel::Tuned {
                    tuned_steps += 1;
                }
                assert_eq!(
                    swarm.checksum(),
                    reference.checksum(),
                    "seed {seed} step {step}: {} with the {} seek",
                    swarm.kind(),
                    swarm.seek_kernel_in_use()
                );
            }
        }
        assert!(tuned_steps > 50, "the tuned seek ran {tuned_steps} times");
    }

    /// The check is a real one: a handle moved to another entity, or taken away from a seeker
    /// whose target lives, is caught, in the current layout and in a copy.
    #[test]
    fn a_wrong_handle_is_caught_in_the_layout_and_in_the_copy() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 3, 2000).unwrap();
        swarm.layout.set_targets(1000, &[Some(999)]);
        assert!(
            swarm
                .check_targets()
                .unwrap_err()
                .contains("entity 1000 at 1000")
        );

        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 3, 2000).unwrap();
        swarm.begin_switch(LayoutKind::Hecs).unwrap();
        swarm.copy_step(1500);
        let copy = swarm.transition.as_mut().unwrap().copy_mut().unwrap();
        copy.to.set_targets(1200, &[None]);
        assert!(
            swarm
                .check_targets()
                .unwrap_err()
                .starts_with("switch copy hecs")
        );
    }

    #[test]
    fn target_regions_are_the_targets_positions_named_by_their_seekers() {
        let swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 5, 1000).unwrap();
        let regions = swarm.target_regions(900..910);
        assert!(!regions.is_empty());
        assert!(
            regions
                .iter()
                .all(|r| (900..910).contains(&r.entity) && matches!(r.field, Field::X | Field::Y))
        );
    }
}

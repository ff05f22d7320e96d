//! The storage order: which entity sits next to which. Seek reads each entity's target, an
//! earlier member of its own group ([`crate::workload::target_of`]). In id order the members of
//! a group are [`GROUPS`] slots apart and a target lies anywhere in the storage; sorted by
//! group, a seeker and its target share a stretch of the storage a group long.
//!
//! A reorder rebuilds the population in the new order in a fresh layout of the same kind: every
//! id, state and target is kept (targets are found again by id), so every result is the same by
//! id. This is how a user of Bevy or hecs reorders (neither can sort a table in place); it is
//! the bench's measure of what an order is worth, in every layout alike. It is a switch that
//! reads in another order ([`super::reorder`]): at once ([`Swarm::reorder`]), or spread over
//! frames like any switch ([`Swarm::begin_reorder`], then [`Swarm::switch_step`]), the
//! population moving, churning and growing meanwhile.

use super::Swarm;
pub use crate::order::Order;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::id_index::IdIndex;
use crate::workload::{GROUPS, target_of};

/// How far from its target a seeker may sit and still count as beside it: one group's stretch
/// of a population of `len` sorted by group (`len` over the [`GROUPS`] groups).
pub fn group_stretch(len: usize) -> usize {
    (len / GROUPS as usize).max(1)
}

impl<S: AllLayouts> Swarm<S> {
    /// Sorts the population into `order` with the library's own in-place sort, where the layout
    /// has one ([`crate::layout::SortsInPlace`]: flecs' `order_by`), in one call: what a user of
    /// that library would write, beside the rebuild that every layout shares
    /// ([`Self::reorder`]). A pending switch or reorder is dropped first. Returns `false`, with
    /// nothing changed, for a layout without one.
    pub fn sort_in_place(&mut self, order: Order) -> bool {
        if self.layout.sorts_in_place().is_none() || !order.by_id() {
            return false;
        }
        self.cancel_switch();
        if let Some(sorter) = self.layout.sorts_in_place()
            && !sorter.sort_in_place(order)
        {
            return false;
        }
        let ids = order.arrange(self.population.index.ids_ascending(), |_| [0.0; 2]);
        let index = IdIndex::rebuild(&ids);
        self.population.take_sorted(ids, index, order);
        true
    }

    /// Where each entity stands now, by logical index, for the cell order (which is a function
    /// of positions); nothing for the orders keyed by the id.
    pub(super) fn positions_for(&self, order: Order) -> Vec<[f64; 2]> {
        let mut positions = Vec::new();
        if !order.by_id() {
            positions.reserve(self.len());
            self.layout
                .for_each_entity(&mut |_, s| positions.push([s.x.to_f64(), s.y.to_f64()]));
        }
        positions
    }

    /// The order the population was last arranged in: by id from birth, or what the last
    /// reorder made it. Entities spawned or moved since are not in it ([`Self::target_spread`]
    /// says how far the storage has strayed).
    pub fn order(&self) -> Order {
        self.population.order
    }

    /// How far the order is from keeping seekers beside their targets (spawns append and
    /// removals swap, so churn spreads a sorted population out again): of the seekers whose
    /// target is alive, the share stored more than `slots` entities from it; and the share of
    /// would-be seekers whose target is alive at all (churn removes targets, and a seeker
    /// without one skips the read).
    pub fn target_spread(&self, slots: usize) -> TargetSpread {
        self.target_spread_of(slots, 1)
    }

    /// [`Self::target_spread`] over about `samples` seekers spread evenly over the storage: a
    /// share known to within a fraction of a percent, in a millisecond at 10M (the app's
    /// panel reads it twice a second).
    pub fn target_spread_sampled(&self, slots: usize, samples: usize) -> TargetSpread {
        self.target_spread_of(slots, (self.len() / samples.max(1)).max(1))
    }

    fn target_spread_of(&self, slots: usize, stride: usize) -> TargetSpread {
        let (mut seekers, mut live, mut far) = (0usize, 0usize, 0usize);
        let population = &self.population;
        for (i, &id) in population.ids.iter().enumerate().step_by(stride) {
            let Some(target) = target_of(population.seed, id) else {
                continue;
            };
            seekers += 1;
            if let Some(j) = population.index.get(target) {
                live += 1;
                far += usize::from((j as usize).abs_diff(i) > slots);
            }
        }
        let share = |part: usize, of: usize| {
            if of == 0 {
                0.0
            } else {
                part as f64 / of as f64
            }
        };
        TargetSpread {
            far: share(far, live),
            live: share(live, seekers),
        }
    }
}

/// What [`Swarm::target_spread`] found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TargetSpread {
    /// Of the seekers with a live target, the share stored far from it.
    pub far: f64,
    /// Of the entities that have a target, the share whose target is alive.
    pub live: f64,
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::layout::{LayoutKind, SeekKernel};
    use crate::threads::Threads;
    use crate::workload::{Dt, SEED};

    #[test]
    fn a_reorder_keeps_every_entity_state_and_target_in_every_layout() {
        for kind in LayoutKind::CPU {
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, 3_000).unwrap();
            swarm.churn(500).unwrap();
            let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 3_000).unwrap();
            reference.churn(500).unwrap();
            for order in [Order::Group, Order::Id, Order::Group] {
                swarm.reorder(order).unwrap();
                swarm.check_targets().unwrap();
                for _ in 0..3 {
                    swarm.step_seek(Dt::default(), crate::threads::Threads::One);
                    swarm.step(Dt::default(), crate::threads::Threads::One);
                    reference.step_seek(Dt::default(), crate::threads::Threads::One);
                    reference.step(Dt::default(), crate::threads::Threads::One);
                }
                assert_eq!(swarm.len(), reference.len(), "{kind} {order:?}");
                assert_eq!(swarm.checksum(), reference.checksum(), "{kind} {order:?}");
            }
        }
    }

    /// flecs' own sort ends where the rebuild does: the same logical order (which the layout's
    /// export reads back from its storage), the same states and targets, the same results after
    /// seeking, under churn; a layout without one says so and is left alone.
    #[test]
    fn flecs_sorts_in_place_into_the_order_a_rebuild_gives() {
        for kind in [LayoutKind::Flecs, LayoutKind::FlecsTuned] {
            let mut sorted = Swarm::<f32>::with_count(kind, SEED, 5_000).unwrap();
            let mut rebuilt = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 5_000).unwrap();
            for (round, order) in [Order::Group, Order::Id, Order::Group]
                .into_iter()
                .enumerate()
            {
                for s in [&mut sorted, &mut rebuilt] {
                    s.churn(400 * round).unwrap();
                    s.step_seek(Dt::default(), Threads::One);
                }
                assert!(sorted.sort_in_place(order), "{kind}");
                rebuilt.reorder(order).unwrap();
                assert_eq!(sorted.order(), order);
                let exported = sorted.export();
                assert!(
                    exported.ids == sorted.population.ids,
                    "{kind} {order}: the storage's order is not the swarm's"
                );
                assert_eq!(exported, rebuilt.export(), "{kind} {order}");
                assert_eq!(sorted.check_targets(), Ok(()), "{kind} {order}");
                for s in [&mut sorted, &mut rebuilt] {
                    s.set_seek_kernel(SeekKernel::Tuned);
                    s.step_seek(Dt::default(), Threads::One);
                    s.step(Dt::default(), Threads::One);
                }
                assert_eq!(sorted.checksum(), rebuilt.checksum(), "{kind} {order}");
            }
        }
        let mut soa = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 100).unwrap();
        assert!(!soa.sort_in_place(Order::Group));
        assert_eq!(soa.order(), Order::Id);
    }

    /// A reorder spread over random steps, with churn, resizes, seek and frames between them, in
    /// every CPU layout: after every operation the population is the reference's (which never
    /// reorders) by id and state, and every handle names its target in the layout and in the
    /// copy (until it takes over: churn picks its victims by logical index, and the orders then
    /// differ). Where nothing was removed meanwhile (every other layout), the copy that takes over
    /// holds the request's entities in the new order, then those spawned since; removals swap,
    /// in the copy as in any layout, and that is all the order loses.
    #[test]
    fn a_spread_reorder_with_work_between_its_steps_keeps_everything() {
        for (n, kind) in LayoutKind::CPU.into_iter().enumerate() {
            let seed = n as u64;
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, seed, 2_000).unwrap();
            let mut swarm = Swarm::<f32>::with_count(kind, seed, 2_000).unwrap();
            for s in [&mut reference, &mut swarm] {
                s.churn(300).unwrap();
            }
            let order = Order::BOTH[(n + 1) % 2];
            swarm.begin_reorder(order).unwrap();
            let requested: Vec<u64> =
                order.arrange(swarm.population.index.ids_ascending(), |_| [0.0; 2]);
            let mut steps = 0;
            while swarm.transition().is_some() {
                assert!(steps < 2_000, "{kind}: the reorder never ends");
                assert_eq!(swarm.transition().unwrap().order(), Some(order));
                swarm.copy_step(rng.random_range(1..400));
                if swarm.transition().is_none() {
                    // Churn picks its victims by logical index: from here on the two differ.
                    break;
                }
                let calm = n % 2 == 0;
                let op = rng.random_range(usize::from(calm)..4);
                let (k, len) = (rng.random_range(0..120), rng.random_range(1_500..2_600));
                for s in [&mut reference, &mut swarm] {
                    match op {
                        0 => s.churn(k).unwrap(),
                        1 if calm => s.resize(s.len() + k).unwrap(),
                        1 => s.resize(len).unwrap(),
                        2 => s.step_seek(Dt::default(), Threads::One),
                        _ => s.step(Dt::default(), Threads::One),
                    }
                }
                assert_eq!(swarm.check_targets(), Ok(()), "{kind} step {steps}");
                assert_eq!(
                    swarm.checksum(),
                    reference.checksum(),
                    "{kind} step {steps}"
                );
                steps += 1;
            }
            assert!(steps > 3, "{kind}: the reorder took {steps} steps");
            assert_eq!((swarm.kind(), swarm.order()), (kind, order));
            let survivors: Vec<u64> = requested
                .iter()
                .copied()
                .filter(|&id| swarm.population.index.contains(id))
                .collect();
            if n % 2 == 0 {
                assert_eq!(survivors, requested, "{kind}: nothing was removed");
                assert_eq!(
                    swarm.population.ids[..requested.len()],
                    requested[..],
                    "{kind}: the request's entities in the new order"
                );
                assert!(
                    swarm.population.ids[requested.len()..].is_sorted(),
                    "{kind}: then the spawned"
                );
            }
            assert_eq!(
                swarm.export().ids,
                swarm.population.ids,
                "{kind}: the layout's order is the swarm's"
            );
            for i in 0..swarm.len() {
                assert_eq!(
                    swarm.population.index.get(swarm.population.ids[i]),
                    Some(i as u32)
                );
            }
            for s in [&mut reference, &mut swarm] {
                s.step_seek(Dt::default(), Threads::One);
            }
            assert_eq!(swarm.checksum(), reference.checksum(), "{kind} after");
        }
    }

    /// The comparison is a real one: a reorder whose copy lost an entity's state (the copy
    /// stepped one frame short) is told apart from the reference.
    #[test]
    fn a_reorder_copy_out_of_step_is_caught() {
        let mut reference = Swarm::<f32>::with_count(LayoutKind::Aos, 4, 1_000).unwrap();
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Aos, 4, 1_000).unwrap();
        swarm.begin_reorder(Order::Group).unwrap();
        swarm.copy_step(500);
        swarm
            .layout
            .step_move(Dt::default().as_scalar(), Threads::One);
        swarm.copy_step(usize::MAX);
        reference.step_move(Dt::default(), Threads::One);
        assert_ne!(swarm.checksum(), reference.checksum());
    }

    #[test]
    fn requests_keep_replace_or_skip_a_reorder() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 2, 1_000).unwrap();
        swarm.begin_reorder(Order::Id).unwrap();
        assert_eq!(
            swarm.transition(),
            None,
            "already in id order: nothing to copy"
        );
        swarm.begin_reorder(Order::Group).unwrap();
        swarm.copy_step(100);
        swarm.begin_reorder(Order::Group).unwrap();
        assert_eq!(
            swarm.transition().unwrap().copied,
            100,
            "the same order: kept"
        );
        swarm.begin_reorder(Order::Id).unwrap();
        assert_eq!(
            swarm.transition(),
            None,
            "back to the order it is in: cancelled"
        );
        assert_eq!(swarm.order(), Order::Id);
        swarm.begin_reorder(Order::Group).unwrap();
        swarm.begin_switch(LayoutKind::Aos).unwrap();
        let p = swarm.transition().unwrap();
        assert_eq!(
            (p.to, p.order()),
            (LayoutKind::Aos, None),
            "a switch replaces it"
        );
    }

    /// A sort by group fills the copy's id index with ids 65 apart; the index that takes over
    /// is still an array (above 65,536 ids, where the array is judged by its density at all).
    #[test]
    fn a_population_sorted_by_group_still_maps_its_ids_through_an_array() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 200_000).unwrap();
        swarm.reorder(Order::Group).unwrap();
        assert_eq!(swarm.order(), Order::Group);
        assert!(swarm.population.index.is_dense());
    }

    #[test]
    fn sorted_by_group_seekers_sit_by_their_targets_and_churn_spreads_them() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 65_000).unwrap();
        assert_eq!(swarm.target_spread(1).live, 1.0);
        // In id order a target is a multiple of GROUPS slots away, anywhere below its seeker.
        let page = 4096 / 36;
        let before = swarm.target_spread(page).far;
        swarm.reorder(Order::Group).unwrap();
        let sorted = swarm.target_spread(page).far;
        assert!(before > 0.9, "{before}");
        // A group is 1,000 entities long here: most targets are within a page's worth of it.
        let group = 65_000 / GROUPS as usize;
        assert!(swarm.target_spread(group).far == 0.0);
        assert!(sorted < before, "{sorted} vs {before}");
        for _ in 0..10 {
            swarm.churn(3_250).unwrap();
        }
        assert!(swarm.target_spread(group).far > 0.1);
        // Churn removed targets too: fewer seekers read one.
        assert!(swarm.target_spread(group).live < 1.0);
        // And the mutation: the same measure in id order says the order is not kept.
        swarm.reorder(Order::Id).unwrap();
        assert!(swarm.target_spread(group).far > 0.9);
    }
}

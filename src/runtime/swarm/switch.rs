//! Moving the population into another layout with every entity's state: at once
//! ([`Swarm::switch_to`]), or a chunk at a time while the population keeps moving
//! ([`Swarm::begin_switch`], then [`Swarm::switch_step`] each frame). Until the last chunk lands,
//! the current layout stays the one that is stepped, read and reported; everything done to the
//! swarm meanwhile is done to the part already copied as well, so when the copy is complete it
//! holds exactly the current population, and it takes over.
//!
//! A reorder ([`super::order`]) is a switch into a fresh layout of the same kind that is filled
//! in another order: it reads the population by id in the new order instead of by logical index,
//! and keeps its own list of the ids it holds, which becomes the swarm's logical order when it
//! takes over. Everything else (pacing, churn and growth meanwhile, seekers that wait for their
//! targets) is the switch's.

use std::thread::JoinHandle;

use rustc_hash::FxHashMap;

use super::Swarm;
use super::order::Order;
use super::population::BATCH;
use super::queue::Queue;
use crate::error::SimError;
use crate::layout::{Layout, LayoutKind};
use crate::runtime::catalog::AllLayouts;
use crate::runtime::id_index::IdIndex;

/// A layout switch spread over calls: `to` receives the entities in logical order, a chunk at a
/// time, while the current layout stays the one that is read (gathered, exported, checksummed).
pub(super) struct PendingSwitch<S: AllLayouts> {
    pub(super) to: Box<dyn Layout<S>>,
    pub(super) copied: usize,
    /// Seekers copied before their target: the target's id -> the seekers' ids. Their handles
    /// are set when the target is copied; until then [`Swarm::step_seek`] copies the old
    /// layout's result onto them.
    pub(super) waiting: FxHashMap<u64, Vec<u64>>,
    /// A reorder: the order the copy is filled in, and the copy's own logical order.
    pub(super) reorder: Option<Reordering>,
    /// The layout to copy into, being prepared on a thread while `to` is an empty stand-in.
    pub(super) preparing: Option<Preparing<S>>,
    /// A move into a layout of the same kind prepared for a count the population is growing
    /// to ([`Swarm::rehome_to_grow`]): growing waits for it, and it never lands on the stand-in.
    pub(super) for_growth: Option<usize>,
    /// The population shrank while the copy was pending: the layout that lands may hold room
    /// for entities that are gone (one prepared for the count at the request, tables grown by
    /// what it had copied), so it is compacted, or rebuilt, as it lands.
    pub(super) shrunk: bool,
}

/// A switch's fresh layout being prepared on a thread of its own ([`super::preparing`]).
pub(super) struct Preparing<S: AllLayouts> {
    pub(super) thread: JoinHandle<Box<dyn Layout<S>>>,
}

/// A copy filled in a new order: the ids still to copy, and the copy's ids and their places.
pub(super) struct Reordering {
    pub(super) order: Order,
    /// Every id to copy, in the new order (ids spawned since the request at the end); the ones
    /// removed meanwhile are skipped when their turn comes.
    pub(super) queue: Queue,
    /// The copy's ids in its logical order, and each one's place there.
    pub(super) ids: Vec<u64>,
    pub(super) index: IdIndex,
}

impl<S: AllLayouts> PendingSwitch<S> {
    pub(super) fn new(to: Box<dyn Layout<S>>) -> Self {
        Self {
            to,
            copied: 0,
            waiting: FxHashMap::default(),
            reorder: None,
            preparing: None,
            for_growth: None,
            shrunk: false,
        }
    }
}

/// Where entity `id` sits in a pending switch's copy, if it was copied (`index` is the swarm's:
/// a plain switch copies the logical order as it is, a reorder keeps its own).
pub(super) fn position_in_copy(
    reorder: &Option<Reordering>,
    copied: usize,
    index: &IdIndex,
    id: u64,
) -> Option<usize> {
    match reorder {
        Some(r) => r.index.get(id).map(|p| p as usize),
        None => index.get(id).map(|j| j as usize).filter(|&j| j < copied),
    }
}

/// How far a spread switch (or a reorder) has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchProgress {
    pub to: LayoutKind,
    pub copied: usize,
    pub len: usize,
    /// A reorder into this order, in a layout of the same kind.
    pub order: Option<Order>,
    /// A move into a layout of the same kind prepared for this count, before growing to it.
    pub for_growth: Option<usize>,
}

impl<S: AllLayouts> Swarm<S> {
    /// Moves every entity, with its current state, into a fresh layout of `kind`, now. The old
    /// layout is dropped only once the new one holds everything; on error the swarm is unchanged.
    pub fn switch_to(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        self.begin_switch(kind)?;
        self.switch_step(usize::MAX);
        Ok(())
    }

    /// Starts moving the population into a fresh layout of `kind`, to be carried out by
    /// [`Self::switch_step`] a chunk at a time. Switching back to the current kind cancels a
    /// pending switch; asking for the kind already pending changes nothing; a third kind replaces
    /// the pending switch. On error (memory) nothing changes.
    pub fn begin_switch(&mut self, kind: LayoutKind) -> Result<(), SimError> {
        if kind == self.kind() {
            self.cancel_switch();
            return Ok(());
        }
        if self.switch.as_ref().is_some_and(|s| s.to.kind() == kind) {
            return Ok(());
        }
        self.wait_for_frees();
        let pending = self.fresh_switch(kind, self.len())?;
        // A switch to a third layout gives way: what it copied is of no use to another storage.
        // Freeing a copy of millions takes a while; the frame of the request should not.
        if let Some(replaced) = self.switch.replace(pending) {
            self.give_up(replaced);
        }
        self.finish_switch_if_copied();
        Ok(())
    }

    /// Copies up to `max` more entities into the layout a pending switch is filling, reading
    /// whole columns out of the current one; when the last one is in, that layout takes over.
    /// Returns how many were copied: none while the layout is still being prepared on its
    /// thread ([`super::preparing`]), which `usize::MAX` (a switch at once) waits for.
    pub fn switch_step(&mut self, max: usize) -> usize {
        if !self.copy_ready(max == usize::MAX) {
            return 0;
        }
        let len = self.len();
        let Some(switch) = self.switch.as_mut() else {
            return 0;
        };
        if switch.reorder.is_some() {
            return self.reorder_step(max);
        }
        let end = len.min(switch.copied.saturating_add(max));
        let copied = end - switch.copied;
        while switch.copied < end {
            let (first, batch_end) = (switch.copied, end.min(switch.copied + BATCH));
            self.id_buffer.clear();
            self.spawn_buffer.clear();
            self.layout
                .for_each_entity_in(first..batch_end, &mut |id, state| {
                    self.id_buffer.push(id);
                    self.spawn_buffer.push(*state);
                });
            Self::targets_in_copy(
                self.seed,
                &self.index,
                switch,
                &self.id_buffer,
                batch_end,
                &mut self.target_buffer,
            );
            switch
                .to
                .push_with_targets(&self.id_buffer, &self.spawn_buffer, &self.target_buffer);
            if !switch.waiting.is_empty() {
                for (k, &id) in self.id_buffer.iter().enumerate() {
                    Self::resolve_waiting(&self.index, switch, first + k, id);
                }
            }
            switch.copied = batch_end;
        }
        self.finish_switch_if_copied();
        copied
    }

    /// Lets the current layout start reading the next `max` entities a pending switch will copy,
    /// so that a layout whose reads are round trips (the gpu layout) has them by the next
    /// [`Self::switch_step`]. Prefetches of more than a few million entities are not worth their
    /// staging memory; those are read when copied.
    pub fn prefetch_switch(&self, max: usize) {
        const MOST: usize = 4 << 20;
        if let Some(switch) = &self.switch
            && max <= MOST
            && let Some(device) = self.layout.on_device()
        {
            let end = self.len().min(switch.copied.saturating_add(max));
            device.prepare_reads(switch.copied..end);
        }
    }

    /// Where a pending switch stands, if there is one.
    pub fn switch_progress(&self) -> Option<SwitchProgress> {
        self.switch.as_ref().map(|s| SwitchProgress {
            to: s.to.kind(),
            copied: s.copied,
            len: self.len(),
            order: s.reorder.as_ref().map(|r| r.order),
            for_growth: s.for_growth,
        })
    }

    /// Drops a pending switch and what it copied so far; the swarm stays in its current layout.
    /// A shrink while the switch was pending could not rebuild or compact the current layout
    /// (the switch was going to replace it): that happens now.
    pub fn cancel_switch(&mut self) {
        if let Some(dropped) = self.switch.take() {
            self.give_up(dropped);
            self.release_memory();
        }
    }

    pub(super) fn finish_switch_if_copied(&mut self) {
        // A move made for growth is worth nothing on its stand-in: it waits for its layout.
        let landed = |s: &PendingSwitch<S>| {
            s.copied == self.len() && (s.for_growth.is_none() || s.preparing.is_none())
        };
        if self.switch.as_ref().is_some_and(landed)
            && let Some(switch) = self.switch.take()
        {
            if let Some(r) = switch.reorder {
                self.ids = r.ids;
                self.index = r.index;
                self.order = r.order;
                self.sorts_landed += 1;
            }
            // A layout still being prepared is of no use now: everything is copied (the
            // population went down to nothing meanwhile), into the stand-in.
            if let Some(preparing) = switch.preparing {
                self.let_go(preparing);
            }
            let old = std::mem::replace(&mut self.layout, switch.to);
            self.simd_in_use = self.layout.set_simd(self.simd);
            self.free_in_background(old);
            // What a shrink meanwhile could not give back: the copy was to replace the layout it
            // shrank (a soak found 32 MB of a Bevy world prepared for 811,172 entities landing
            // with 10,000: its seed 107177123).
            if switch.shrunk {
                self.release_memory();
            }
        }
    }

    /// A shrink to `len`: the copy keeps what it holds of the first `len` entities, and a copy
    /// that now holds them all takes over.
    pub(super) fn truncate_copy(&mut self, len: usize) {
        if let Some(switch) = self.switch.as_mut() {
            switch.shrunk = true;
        }
        if self.switch.as_ref().is_some_and(|s| s.reorder.is_some()) {
            self.forget_dead_in_reorder();
        } else if let Some(switch) = self.switch.as_mut()
            && switch.copied > len
        {
            let _ = switch.to.truncate(len);
            switch.copied = len;
        }
        self.finish_switch_if_copied();
    }

    /// Before `k` removals: each one below the copied part reads the entity that fills the
    /// hole, always one of the last `k` (entities only ever move down); a layout whose reads
    /// are round trips fetches those in one read.
    pub(super) fn prepare_copy_for_churn(&self, k: usize) {
        if let Some(switch) = &self.switch
            && let Some(device) = self.layout.on_device()
        {
            let len = self.len();
            device.prepare_reads(switch.copied.max(len.saturating_sub(k))..len);
        }
    }

    /// The swap-remove at `index`, mirrored on the copied part.
    pub(super) fn swap_remove_in_copy(&mut self, index: usize) {
        let last = self.len() - 1;
        let Some(switch) = self.switch.as_mut() else {
            return;
        };
        if let Some(r) = switch.reorder.as_mut() {
            // The copy has its own order: the victim leaves it as it leaves any layout, with a
            // swap from the copy's end; one not copied yet is skipped when its turn comes.
            if let Some(p) = r.index.get(self.ids[index]) {
                Self::remove_from_reorder(switch, p as usize);
            }
            return;
        }
        if index >= switch.copied {
            return;
        }
        if last < switch.copied {
            switch.to.swap_remove(index);
            switch.copied -= 1;
            return;
        }
        // The entity that moves into the hole has not been copied yet: append it to the copy
        // (its target found as a copied entity's would be), then let the same swap_remove move
        // it into place there too.
        let at = switch.to.len();
        Self::targets_in_copy(
            self.seed,
            &self.index,
            switch,
            &[self.ids[last]],
            switch.copied,
            &mut self.target_buffer,
        );
        let (to, targets) = (&mut switch.to, &self.target_buffer);
        self.layout
            .for_each_entity_in(last..last + 1, &mut |id, state| {
                to.push_with_targets(&[id], std::slice::from_ref(state), targets);
            });
        Self::resolve_waiting(&self.index, switch, at, self.ids[last]);
        switch.to.swap_remove(index);
    }
}

#[cfg(test)]
mod tests {
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::threads::Threads;
    use crate::workload::Dt;

    /// A switch spread over random steps, with random resizes, churn and frames between them,
    /// ends with the same population as a swarm that never switched; each step copies what it
    /// says, and the copy takes over exactly when it holds everything.
    #[test]
    fn a_spread_switch_with_work_between_its_steps_ends_where_staying_does() {
        for seed in 0..4 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut staying = Swarm::<f32>::with_count(LayoutKind::Soa, seed, 3000).unwrap();
            let mut moving = Swarm::<f32>::with_count(LayoutKind::Soa, seed, 3000).unwrap();
            moving.begin_switch(LayoutKind::Chunks).unwrap();
            while moving.switch_progress().is_some() {
                let before = moving.switch_progress().unwrap().copied;
                let asked = rng.random_range(1..700);
                let copied = moving.switch_step(asked);
                assert!(copied <= asked);
                if let Some(p) = moving.switch_progress() {
                    assert_eq!(p.copied, before + copied, "seed {seed}");
                }
                let op = rng.random_range(0..3);
                for swarm in [&mut staying, &mut moving] {
                    match op {
                        0 => swarm.churn(80).unwrap(),
                        1 => swarm.step(Dt::default(), Threads::One),
                        _ => swarm.resize(swarm.len() + 50).unwrap(),
                    }
                }
                assert_eq!(moving.checksum(), staying.checksum(), "seed {seed}");
            }
            assert_eq!(moving.kind(), LayoutKind::Chunks);
            assert_eq!(moving.export(), staying.export(), "seed {seed}");
            assert_eq!(moving.check_targets(), Ok(()));
        }
    }

    /// The comparison is a real one: a copy that skipped one entity's state is told apart.
    #[test]
    fn a_copy_that_missed_an_entity_is_caught() {
        let mut staying = Swarm::<f32>::with_count(LayoutKind::Soa, 8, 500).unwrap();
        let mut moving = Swarm::<f32>::with_count(LayoutKind::Soa, 8, 500).unwrap();
        moving.begin_switch(LayoutKind::Aos).unwrap();
        moving.switch_step(200);
        // Behind the swarm's back: the current layout moves a frame and the part already copied
        // does not, as if the swarm forgot to step the copy.
        moving
            .layout
            .step_move(Dt::default().as_scalar(), Threads::One);
        moving.switch_step(usize::MAX);
        staying.step_move(Dt::default(), Threads::One);
        assert_ne!(moving.checksum(), staying.checksum());
    }

    #[test]
    fn requests_keep_cancel_or_replace_a_pending_switch() {
        let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 2, 1000).unwrap();
        swarm.begin_switch(LayoutKind::Boxed).unwrap();
        swarm.switch_step(10);
        swarm.begin_switch(LayoutKind::Boxed).unwrap();
        assert_eq!(
            swarm.switch_progress().unwrap().copied,
            10,
            "same kind: kept"
        );
        swarm.begin_switch(LayoutKind::Aos).unwrap();
        let p = swarm.switch_progress().unwrap();
        assert_eq!(
            (p.to, p.copied),
            (LayoutKind::Aos, 0),
            "a third kind: replaced"
        );
        swarm.begin_switch(LayoutKind::Soa).unwrap();
        assert_eq!(
            (swarm.kind(), swarm.switch_progress()),
            (LayoutKind::Soa, None),
            "back: cancelled"
        );
        let mut empty = Swarm::<f32>::new(LayoutKind::Soa, 2).unwrap();
        empty.begin_switch(LayoutKind::EcsTable).unwrap();
        assert_eq!(
            empty.kind(),
            LayoutKind::EcsTable,
            "nothing to copy: at once"
        );
    }
}

//! The mechanics of a reorder ([`super::order`]): a switch ([`super::switch`]) into a fresh
//! layout of the same kind that reads the population by id in the new order, and keeps its own
//! list of the ids it holds, which becomes the swarm's logical order when it takes over. Growth,
//! churn and shrinks meanwhile are mirrored on it here.

use super::Swarm;
use super::order::Order;
use super::population::BATCH;
use super::queue::Queue;
use super::switch::{PendingSwitch, Reordering};
use crate::error::SimError;
use crate::runtime::catalog::AllLayouts;
use crate::runtime::id_index::IdIndex;

impl<S: AllLayouts> Swarm<S> {
    /// Starts rebuilding the population in `order`, in a fresh layout of the same kind, to be
    /// carried out by [`Self::switch_step`] a chunk at a time, like a switch. It replaces a
    /// pending switch or a reorder into another order; a reorder into the same order goes on.
    /// A population already in `order` is left as it is. On error (memory) nothing changes.
    pub fn begin_reorder(&mut self, order: Order) -> Result<(), SimError> {
        let pending = self.switch.as_ref().and_then(|s| s.reorder.as_ref());
        if pending.is_some_and(|r| r.order == order) {
            return Ok(());
        }
        let queue = Queue::new(order, self.next_id, &self.index);
        if order == self.order && queue.clone().matches(&self.ids, &self.index) {
            self.cancel_switch();
            return Ok(());
        }
        self.start_reorder(order, queue)
    }

    /// Rebuilds the population at once in exactly the logical order `ids` (the ids alive here,
    /// in another order), to be called `order`: how a reference follows a sort that landed in
    /// the swarm it checks (the soak's), so that churn, which picks its victims by logical
    /// index, removes the same entities from both. Ids not alive here are skipped.
    pub fn reorder_like(&mut self, ids: &[u64], order: Order) -> Result<(), SimError> {
        self.start_reorder(order, Queue::listed(ids.to_vec()))?;
        self.switch_step(usize::MAX);
        Ok(())
    }

    /// Reorders that took over since the swarm was built: a sort's landing, as a count a caller
    /// can compare from frame to frame.
    pub fn sorts_landed(&self) -> u64 {
        self.sorts_landed
    }

    /// The logical order: every entity's id, as the layout stores them.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    fn start_reorder(&mut self, order: Order, queue: Queue) -> Result<(), SimError> {
        self.wait_for_frees();
        let mut pending = self.fresh_switch(self.kind(), self.len())?;
        pending.reorder = Some(Reordering {
            order,
            queue,
            ids: Vec::with_capacity(self.len()),
            index: IdIndex::expecting(self.len()),
        });
        if let Some(replaced) = self.switch.replace(pending) {
            self.give_up(replaced);
        }
        self.finish_switch_if_copied();
        Ok(())
    }

    /// Copies up to `max` more entities into a pending reorder's copy, in its order, reading
    /// each by its logical index in the current layout; when the last is in, the copy and its
    /// order take over. Returns how many were copied.
    pub(super) fn reorder_step(&mut self, max: usize) -> usize {
        let mut copied = 0;
        let mut at = Vec::new();
        while let Some(switch) = self.switch.as_mut() {
            let Some(r) = switch.reorder.as_mut() else {
                break;
            };
            if copied >= max || r.queue.is_done() {
                break;
            }
            let want = (max - copied).min(BATCH);
            at.clear();
            while at.len() < want
                && let Some(id) = r.queue.next()
            {
                // An id removed since the request is skipped.
                if let Some(j) = self.index.get(id) {
                    at.push(j as usize);
                }
            }
            self.id_buffer.clear();
            self.spawn_buffer.clear();
            self.layout.for_each_entity_at(&at, &mut |id, state| {
                self.id_buffer.push(id);
                self.spawn_buffer.push(*state);
            });
            // Placed first, so that a target among this batch resolves to its place.
            let first = r.ids.len();
            r.index.append(&mut r.ids, &self.id_buffer);
            Self::targets_in_copy(
                self.seed,
                &self.index,
                switch,
                &self.id_buffer,
                0,
                &mut self.target_buffer,
            );
            switch
                .to
                .push_with_targets(&self.id_buffer, &self.spawn_buffer, &self.target_buffer);
            switch.copied = first + self.id_buffer.len();
            if !switch.waiting.is_empty() {
                for (k, &id) in self.id_buffer.iter().enumerate() {
                    Self::resolve_waiting(&self.index, switch, first + k, id);
                }
            }
            copied += self.id_buffer.len();
        }
        self.finish_switch_if_copied();
        copied
    }

    /// The entity at `p` in a pending reorder's copy leaves it, with a swap from the copy's end,
    /// as it would leave any layout.
    pub(super) fn remove_from_reorder(switch: &mut PendingSwitch<S>, p: usize) {
        let Some(r) = switch.reorder.as_mut() else {
            return;
        };
        switch.to.swap_remove(p);
        r.index.swap_remove(&mut r.ids, p);
        switch.copied -= 1;
    }

    /// After a shrink: the entities it removed leave a pending reorder's copy too.
    pub(super) fn forget_dead_in_reorder(&mut self) {
        let Some(switch) = self.switch.as_mut() else {
            return;
        };
        let Some(len) = switch.reorder.as_ref().map(|r| r.ids.len()) else {
            return;
        };
        // From the end, so each swap brings in an entity already seen alive.
        for p in (0..len).rev() {
            let id = switch.reorder.as_ref().map_or(0, |r| r.ids[p]);
            if !self.index.contains(id) {
                Self::remove_from_reorder(switch, p);
            }
        }
    }

    /// Entities just spawned join a pending reorder's queue at its end: spawns append, in the
    /// new order as in any.
    pub(super) fn queue_for_reorder(&mut self) {
        if let Some(r) = self.switch.as_mut().and_then(|s| s.reorder.as_mut()) {
            r.queue.spawned.extend_from_slice(&self.id_buffer);
        }
    }
}

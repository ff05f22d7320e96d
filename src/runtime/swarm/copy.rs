//! The copy a transition fills ([`super::transition`]): how a frame's share is copied, reading
//! whole columns out of the layout in use, never one lookup per entity; how churn and shrinks are
//! mirrored on the part copied, so that the copy always holds exactly what the population holds
//! of what it has reached; and how seekers copied before their target wait for it.
//!
//! A switch and a move to grow copy the population's logical order as it is: the copy holds its
//! first `copied` entities, at the same indices. A sort reads the population by id in the new
//! order and keeps its own list of the ids it placed ([`Sorting`]), which becomes the
//! population's logical order when it lands.

use rustc_hash::FxHashMap;

use super::order::Order;
use super::population::{BATCH, Population};
use super::queue::Queue;
use super::settings::Scratch;
use super::targets::look_up_targets;
use crate::runtime::catalog::{AllLayouts, Built};
use crate::runtime::id_index::IdIndex;
use crate::threads::Threads;

/// A sort's own bookkeeping: the ids still to copy, and the copy's ids and their places, which
/// become the population's logical order when it lands.
pub(super) struct Sorting {
    pub(super) order: Order,
    /// Every id to copy, in the new order (ids spawned since the request at the end); the ones
    /// removed meanwhile are skipped when their turn comes.
    pub(super) queue: Queue,
    /// The copy's ids in its logical order, and each one's place there.
    pub(super) ids: Vec<u64>,
    pub(super) index: IdIndex,
}

/// The fresh layout being filled, and how far.
pub(super) struct Copy<S: AllLayouts> {
    pub(super) to: Built<S>,
    /// Entities copied so far: the population's first `copied` (a switch, a move to grow), or
    /// the ids a sort placed ([`Sorting::ids`]).
    pub(super) copied: usize,
    /// Seekers copied before their target: the target's id -> the seekers' ids. Their handles
    /// are set when the target is copied; until then [`Copy::step_seek`] copies the layout in
    /// use's result onto them.
    pub(super) waiting: FxHashMap<u64, Vec<u64>>,
}

/// Where a copy keeps an entity, by its id.
#[derive(Clone, Copy)]
pub(super) enum Places<'a> {
    /// A switch's copy holds the population's first `copied` entities, at their logical indices
    /// (`index` is the population's).
    Prefix { index: &'a IdIndex, copied: usize },
    /// A sort's copy holds the ids it placed, at their places in the new order.
    Sorted(&'a IdIndex),
}

impl Places<'_> {
    pub(super) fn of(self, id: u64) -> Option<usize> {
        match self {
            Places::Prefix { index, copied } => {
                index.get(id).map(|j| j as usize).filter(|&j| j < copied)
            }
            Places::Sorted(index) => index.get(id).map(|p| p as usize),
        }
    }
}

impl<S: AllLayouts> Copy<S> {
    pub(super) fn new(to: Built<S>) -> Self {
        Self {
            to,
            copied: 0,
            waiting: FxHashMap::default(),
        }
    }

    /// Copies up to `max` more of the population's entities, in logical order, reading whole
    /// batches out of `from`. Returns how many were copied.
    pub(super) fn copy_prefix(
        &mut self,
        max: usize,
        from: &Built<S>,
        population: &Population,
        scratch: &mut Scratch<S>,
    ) -> usize {
        let end = population.len().min(self.copied.saturating_add(max));
        let copied = end - self.copied;
        while self.copied < end {
            let (first, batch_end) = (self.copied, end.min(self.copied + BATCH));
            scratch.read(from, first..batch_end);
            let present = Places::Prefix {
                index: &population.index,
                copied: batch_end,
            };
            self.targets_for(population, present, &scratch.ids, &mut scratch.targets);
            self.to
                .push_seeking(&scratch.ids, &scratch.states, &scratch.targets);
            if !self.waiting.is_empty() {
                let places = Places::Prefix {
                    index: &population.index,
                    copied: first,
                };
                for (k, &id) in scratch.ids.iter().enumerate() {
                    self.resolve_waiting(places, first + k, id);
                }
            }
            self.copied = batch_end;
        }
        copied
    }

    /// Copies up to `max` more entities into a sort's copy, in its order, reading each by its
    /// logical index in `from`. Returns how many were copied.
    pub(super) fn copy_sorted(
        &mut self,
        sorting: &mut Sorting,
        max: usize,
        from: &Built<S>,
        population: &Population,
        scratch: &mut Scratch<S>,
    ) -> usize {
        let mut copied = 0;
        let mut at = Vec::new();
        while copied < max && !sorting.queue.is_done() {
            let want = (max - copied).min(BATCH);
            at.clear();
            while at.len() < want
                && let Some(id) = sorting.queue.next()
            {
                // An id removed since the request is skipped.
                if let Some(j) = population.index.get(id) {
                    at.push(j as usize);
                }
            }
            scratch.read_at(from, &at);
            // Placed first, so that a target among this batch resolves to its place.
            let first = sorting.ids.len();
            sorting.index.append(&mut sorting.ids, &scratch.ids);
            let places = Places::Sorted(&sorting.index);
            self.targets_for(population, places, &scratch.ids, &mut scratch.targets);
            self.to
                .push_seeking(&scratch.ids, &scratch.states, &scratch.targets);
            self.copied = first + scratch.ids.len();
            if !self.waiting.is_empty() {
                for (k, &id) in scratch.ids.iter().enumerate() {
                    self.resolve_waiting(places, first + k, id);
                }
            }
            copied += scratch.ids.len();
        }
        copied
    }

    /// The targets of seekers `ids`, about to be copied, as places in the copy (`places`: where
    /// the copy holds what it holds, these seekers included), into `out`: none for a seeker
    /// whose target is not there yet, which then waits for it (a dead target is none in both
    /// layouts).
    fn targets_for(
        &mut self,
        population: &Population,
        places: Places<'_>,
        ids: &[u64],
        out: &mut Vec<Option<usize>>,
    ) {
        let waiting = &mut self.waiting;
        look_up_targets(
            population.seed,
            &population.index,
            ids,
            out,
            |seeker, target, _| {
                let at = places.of(target);
                if at.is_none() {
                    waiting.entry(target).or_default().push(seeker);
                }
                at
            },
        );
    }

    /// The entity `id`, now at `at` in the copy: the seekers that waited for it get their handle
    /// (`places` finds them in the copy).
    fn resolve_waiting(&mut self, places: Places<'_>, at: usize, id: u64) {
        let Some(seekers) = self.waiting.remove(&id) else {
            return;
        };
        for seeker in seekers {
            if let Some(p) = places.of(seeker) {
                self.to.set_targets(p, &[Some(at)]);
            }
        }
    }

    /// The swap-remove at logical index `index`, about to happen in the population, mirrored on
    /// a copy of its first entities.
    pub(super) fn remove_in_prefix(
        &mut self,
        index: usize,
        from: &Built<S>,
        population: &Population,
    ) {
        let last = population.len() - 1;
        if index >= self.copied {
            return;
        }
        if last < self.copied {
            self.to.swap_remove(index);
            self.copied -= 1;
            return;
        }
        // The entity that moves into the hole has not been copied yet: append it to the copy
        // (its target found as a copied entity's would be), then let the same swap-remove move
        // it into place there too.
        let moved = population.ids[last];
        let at = self.to.len();
        let places = Places::Prefix {
            index: &population.index,
            copied: self.copied,
        };
        let mut targets = Vec::with_capacity(1);
        self.targets_for(population, places, &[moved], &mut targets);
        let to = &mut self.to;
        from.for_each_entity_in(last..last + 1, &mut |id, state| {
            to.push_seeking(&[id], std::slice::from_ref(state), &targets);
        });
        self.resolve_waiting(places, at, moved);
        self.to.swap_remove(index);
    }

    /// The entity `victim` leaves a sort's copy, with a swap from the copy's end, as it would
    /// leave any layout (one not copied yet is skipped when its turn comes).
    pub(super) fn remove_sorted(&mut self, sorting: &mut Sorting, victim: u64) {
        if let Some(p) = sorting.index.get(victim) {
            self.remove_sorted_at(sorting, p as usize);
        }
    }

    fn remove_sorted_at(&mut self, sorting: &mut Sorting, p: usize) {
        self.to.swap_remove(p);
        sorting.index.swap_remove(&mut sorting.ids, p);
        self.copied -= 1;
    }

    /// After a shrink: the entities it removed (no longer in `index`) leave a sort's copy too.
    pub(super) fn forget_dead_sorted(&mut self, sorting: &mut Sorting, index: &IdIndex) {
        // From the end, so each swap brings in an entity already seen alive.
        for p in (0..sorting.ids.len()).rev() {
            if !index.contains(sorting.ids[p]) {
                self.remove_sorted_at(sorting, p);
            }
        }
    }

    /// After a shrink to `len`: a copy of the first entities keeps what it holds of the first
    /// `len`.
    pub(super) fn truncate(&mut self, len: usize) {
        if self.copied > len {
            let _ = self.to.truncate(len);
            self.copied = len;
        }
    }

    /// Gives each entity of the copy (`ids`, in the copy's logical order) its velocity in
    /// `from`, where `index` says each id sits.
    pub(super) fn take_velocities(&mut self, from: &Built<S>, ids: &[u64], index: &IdIndex) {
        let at: Vec<usize> = ids
            .iter()
            .map(|&id| index.get(id).expect("every copied entity is alive") as usize)
            .collect();
        let to = &mut self.to;
        let mut p = 0;
        from.for_each_entity_at(&at, &mut |_, state| {
            to.set_velocity_at(p, state.vx, state.vy);
            p += 1;
        });
    }

    /// The seek system on the copy, after it ran in `from`: seekers copied before their target
    /// take `from`'s result, so both compute the same bits.
    pub(super) fn step_seek(
        &mut self,
        dt: S,
        threads: Threads,
        from: &Built<S>,
        index: &IdIndex,
        places: Places<'_>,
    ) {
        self.to.step_seek(dt, threads);
        let to = &mut self.to;
        self.waiting.retain(|target, seekers| {
            if !index.contains(*target) {
                return false;
            }
            seekers.retain(|seeker| {
                let (Some(j), Some(p)) = (index.get(*seeker), places.of(*seeker)) else {
                    return false;
                };
                let j = j as usize;
                let mut velocity = None;
                from.for_each_entity_in(j..j + 1, &mut |_, state| {
                    velocity = Some((state.vx, state.vy));
                });
                if let Some((vx, vy)) = velocity {
                    to.set_velocity_at(p, vx, vy);
                }
                true
            });
            !seekers.is_empty()
        });
    }
}

//! A transition: the population on its way into a fresh layout, carried out a frame's share at a
//! time while the population keeps moving in the layout it is in. This file holds every state a
//! transition can be in and what each event does there; how a chunk is copied and how a removal
//! is mirrored on the copy are in [`super::copy`].
//!
//! A transition has a **kind** (why the population moves) and a **phase** (where it stands):
//!
//! | kind \ phase | preparing (a thread readies the layout) | copying (a frame's share at a time) |
//! |---|---|---|
//! | switch: into another kind (or the same, to give memory back) | big populations into a library that prepares (Bevy) | always, after preparing or at once |
//! | sort: the same kind, filled in another order | as a switch | copies in the new order, keeps its own ids |
//! | grow: the same kind, prepared for a count to grow to | always first: a move to grow is worth nothing unprepared | copies, then waits for nothing |
//!
//! It **lands** (the copy takes over as the current layout) the moment its copy holds the whole
//! population: after a frame's share of copying, a churn or a shrink. A population of none lands
//! at once, a move to grow excepted (it waits for its prepared layout: that is its point).
//!
//! The events, each one method here, and what happens next:
//! - a **request** for a layout or an order ([`answer`]): kept, cancelled or replaced;
//! - a **growth** ([`Transition::on_spawned`]): a sort queues the new ids at its end; a switch
//!   copies them later, as it copies everything after the part copied;
//! - a **removal**, one of churn's ([`Transition::on_removed`]): mirrored on the part copied;
//! - a **shrink** ([`Transition::on_shrunk`]): a move to grow is given up; otherwise the copy
//!   drops what it holds of the entities gone, and may land;
//! - a frame's **share of copying** ([`Transition::step`]): a prepared layout is adopted once its
//!   thread is done, then up to the share is copied, and the copy may land.
//!
//! When a switch or a sort lands, its layout gives back whatever it holds beyond the population
//! (a world prepared for a count that a shrink undercut, tables grown by what it had copied); a
//! move to grow keeps its room, which is what it was made for.

use std::thread::JoinHandle;

use super::copy::{Copy, Places, Sorting};
use super::order::Order;
use super::population::{Population, make_room};
use super::settings::{Scratch, Settings};
use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::runtime::catalog::{AllLayouts, Built};
use crate::threads::Threads;

/// Populations smaller than this are copied into the layout as it is: what a prepare saves them
/// is less than a thread costs.
pub(super) const PREPARE_FROM: usize = 1 << 16;

/// A population that is to grow at least this many times over moves first into a layout
/// prepared for the count ([`Request::Grow`]): copying what is there then costs at most a
/// quarter of spawning what is to come, and every doubling of the index on the way is spared.
/// Smaller growths stay where they are: copying half of 10M to spare the one doubling at 8.4M
/// would add seconds to the gesture.
pub(super) const REHOME_GROWTH: usize = 4;

/// At most one of these is under way in a swarm.
pub(super) struct Transition<S: AllLayouts> {
    pub(super) kind: Kind,
    pub(super) phase: Phase<S>,
}

/// Why the population moves.
pub(super) enum Kind {
    /// Into a fresh layout of `to`: another kind at a person's request, or the kind it is in,
    /// to give back memory that the layout in use keeps (a rebuild, after a shrink).
    Switch { to: LayoutKind },
    /// Into a fresh layout of the same kind, filled in another order.
    Sort(Sorting),
    /// Into a fresh layout of the same kind, prepared for `count` entities, before the
    /// population grows to that count: a world in use cannot be prepared, since every frame
    /// steps it.
    Grow { count: usize },
}

/// Where a transition stands.
pub(super) enum Phase<S: AllLayouts> {
    /// A thread readies the fresh layout for a count (Bevy grows its entity index by hundreds of
    /// megabytes in one spawn otherwise); nothing is copied until it is done.
    Preparing(JoinHandle<Built<S>>),
    /// The fresh layout takes the population a frame's share at a time.
    Copying(Copy<S>),
}

/// What an event leaves.
pub(super) enum Next<S: AllLayouts> {
    /// The transition goes on.
    Goes(Transition<S>),
    /// Its copy holds the whole population and takes over.
    Lands(Landing<S>),
    /// It is given up, and what it had is to be let go.
    Ends(Leftover<S>),
}

/// What a transition given up leaves to free: a thread still preparing a layout (it frees the
/// layout when done), or a copy.
pub(super) enum Leftover<S: AllLayouts> {
    Thread(JoinHandle<Built<S>>),
    Copy(Built<S>),
    Nothing,
}

/// A copy that took over, why it was made, and what is left to let go (a prepare that a
/// population of none did not wait for).
pub(super) struct Landing<S: AllLayouts> {
    pub(super) layout: Built<S>,
    pub(super) kind: Kind,
    pub(super) leftover: Leftover<S>,
}

/// What a person (or the driver) asks of a swarm that may be in a transition, with what the
/// swarm knows that the answer turns on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Request {
    /// Be in this layout.
    Layout(LayoutKind),
    /// Be in this order; `in_order`: the population is in it already.
    Order { order: Order, in_order: bool },
    /// Be about to grow to `target`; `prepared`: a move to grow under way has its layout ready
    /// (its thread is done); `worth`: growing to `target` from here is worth a prepared layout
    /// ([`worth_preparing`]).
    Grow {
        target: usize,
        prepared: bool,
        worth: bool,
    },
}

/// What a request does to the transition under way (or to none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Answer {
    /// Nothing to do: what is under way already does it (or nothing needs doing).
    Keep,
    /// The transition under way, if any, is given up; the population stays where it is.
    Cancel,
    /// The transition under way, if any, is given up for a new one of the request.
    Start,
    /// Not this transition's business: growing goes on in the layout in use.
    Decline,
}

/// The rules of requests, one row each (the tests below hold every one), for a population in
/// the layout `current`:
/// - a layout: the one it is in cancels whatever is under way; the one a switch is under way to
///   keeps it; any other starts a switch there (a sort or a move to grow gives way to it);
/// - an order: the one a sort is under way into keeps it; the one the population is in cancels
///   whatever is under way; any other starts a sort;
/// - a growth: a move to grow prepared for about the count (up to twice it) keeps it, and so
///   does one still preparing; a prepared one for another count is replaced; any other
///   transition declines (growing goes on in the layout in use); with none under way a growth
///   worth a prepared layout starts one, and any other declines.
pub(super) fn answer(request: Request, pending: Option<&Kind>, current: LayoutKind) -> Answer {
    match request {
        Request::Layout(kind) if kind == current => Answer::Cancel,
        Request::Layout(kind) => match pending {
            Some(Kind::Switch { to }) if *to == kind => Answer::Keep,
            _ => Answer::Start,
        },
        Request::Order { order, in_order } => match pending {
            Some(Kind::Sort(sorting)) if sorting.order == order => Answer::Keep,
            _ if in_order => Answer::Cancel,
            _ => Answer::Start,
        },
        Request::Grow {
            target,
            prepared,
            worth,
        } => match pending {
            Some(Kind::Grow { count }) => {
                let fits = (target..=target.saturating_mul(2)).contains(count);
                if fits || !prepared {
                    Answer::Keep
                } else {
                    Answer::Start
                }
            }
            Some(_) => Answer::Decline,
            None if worth => Answer::Start,
            None => Answer::Decline,
        },
    }
}

/// Whether growing a population of `len` in a layout that `prepares` (and has room for
/// `prepared_room` more without growing) to `target` is worth a move into a layout prepared for
/// it: a growth of at least [`PREPARE_FROM`], past the room prepared, [`REHOME_GROWTH`] times
/// over.
pub(super) fn worth_preparing(
    prepares: bool,
    prepared_room: usize,
    len: usize,
    target: usize,
) -> bool {
    let growth = target.saturating_sub(len);
    prepares
        && growth >= PREPARE_FROM
        && growth > prepared_room
        && target >= REHOME_GROWTH.saturating_mul(len)
}

impl<S: AllLayouts> Transition<S> {
    /// A transition of `kind` into a fresh layout of `to`, with room for the population; its
    /// layout is prepared on a thread for `count` entities where that is worth one. `None` for a
    /// move to grow that cannot be prepared (no thread): growing then goes on where it is. On
    /// error (memory) nothing is started.
    pub(super) fn start(
        kind: Kind,
        to: LayoutKind,
        count: usize,
        population: &Population,
        settings: Settings,
    ) -> Result<Option<Self>, SimError> {
        let mut layout = settings.create::<S>(to)?;
        make_room(population.max_entities, &mut *layout, population.len())?;
        if count < PREPARE_FROM || !layout.prepares() {
            if matches!(kind, Kind::Grow { .. }) {
                return Ok(None);
            }
            return Ok(Some(Self::copying(kind, layout)));
        }
        let spawned = std::thread::Builder::new()
            .name("prepare-layout".into())
            .spawn(move || {
                layout.prepare(count);
                layout
            });
        Ok(match (spawned, kind) {
            (Ok(thread), kind) => Some(Transition {
                kind,
                phase: Phase::Preparing(thread),
            }),
            (Err(_), Kind::Grow { .. }) => None,
            // No thread: the copy goes into a layout left to grow as it fills.
            (Err(_), kind) => Some(Self::copying(kind, settings.create::<S>(to)?)),
        })
    }

    fn copying(kind: Kind, to: Built<S>) -> Self {
        Transition {
            kind,
            phase: Phase::Copying(Copy::new(to)),
        }
    }

    /// Gives the transition up: what it had, to be let go.
    pub(super) fn give_up(self) -> Leftover<S> {
        match self.phase {
            Phase::Preparing(thread) => Leftover::Thread(thread),
            Phase::Copying(copy) => Leftover::Copy(copy.to),
        }
    }

    /// The layout it moves the population into, where the population is in `current` now.
    pub(super) fn to(&self, current: LayoutKind) -> LayoutKind {
        match self.kind {
            Kind::Switch { to } => to,
            Kind::Sort(_) | Kind::Grow { .. } => current,
        }
    }

    /// Entities copied so far.
    pub(super) fn copied(&self) -> usize {
        match &self.phase {
            Phase::Preparing(_) => 0,
            Phase::Copying(copy) => copy.copied,
        }
    }

    /// The copy being filled, once there is one.
    pub(super) fn copy(&self) -> Option<&Copy<S>> {
        match &self.phase {
            Phase::Preparing(_) => None,
            Phase::Copying(copy) => Some(copy),
        }
    }

    pub(super) fn copy_mut(&mut self) -> Option<&mut Copy<S>> {
        match &mut self.phase {
            Phase::Preparing(_) => None,
            Phase::Copying(copy) => Some(copy),
        }
    }

    /// Where the copy keeps each entity, by id.
    fn places<'a>(kind: &'a Kind, copied: usize, population: &'a Population) -> Places<'a> {
        match kind {
            Kind::Sort(sorting) => Places::Sorted(&sorting.index),
            Kind::Switch { .. } | Kind::Grow { .. } => Places::Prefix {
                index: &population.index,
                copied,
            },
        }
    }

    /// The ids the copy holds, in its logical order, and the copy, once there is one.
    pub(super) fn copied_ids<'a>(
        &'a self,
        population: &'a Population,
    ) -> Option<(&'a Copy<S>, &'a [u64])> {
        let copy = self.copy()?;
        let ids = match &self.kind {
            Kind::Sort(sorting) => &sorting.ids[..],
            Kind::Switch { .. } | Kind::Grow { .. } => &population.ids[..copy.copied],
        };
        Some((copy, ids))
    }

    /// The seek system on the copy, after it ran in the current layout `from`.
    pub(super) fn step_seek(
        &mut self,
        dt: S,
        threads: Threads,
        from: &Built<S>,
        population: &Population,
    ) {
        let Transition { kind, phase } = self;
        if let Phase::Copying(copy) = phase {
            let places = Self::places(kind, copy.copied, population);
            copy.step_seek(dt, threads, from, &population.index, places);
        }
    }

    /// The avoid system on the copy, after it ran in the current layout `from`: the copy holds
    /// only part of the population, so its entities' neighbours are not all in it; each copied
    /// entity takes `from`'s result instead, which is the same bits (every layout computes the
    /// same pushes).
    pub(super) fn step_avoid(&mut self, from: &Built<S>, population: &Population) {
        let Transition { kind, phase } = self;
        if let Phase::Copying(copy) = phase {
            let ids = match kind {
                Kind::Sort(sorting) => &sorting.ids[..],
                Kind::Switch { .. } | Kind::Grow { .. } => &population.ids[..copy.copied],
            };
            copy.take_velocities(from, ids, &population.index);
        }
    }

    /// Whether a move to grow's prepare is done (what a growth request reads).
    pub(super) fn prepared(&self) -> bool {
        match &self.phase {
            Phase::Preparing(thread) => thread.is_finished(),
            Phase::Copying(_) => false,
        }
    }

    /// Event: `count` entities are about to be spawned at the population's end. The copy makes
    /// room for them now, while a refusal still changes nothing (a switch copies them later; a
    /// prepared layout is given room when it is adopted).
    pub(super) fn reserve(&mut self, max_entities: usize, count: usize) -> Result<(), SimError> {
        match &mut self.phase {
            Phase::Preparing(_) => Ok(()),
            Phase::Copying(copy) => make_room(max_entities, &mut *copy.to, count),
        }
    }

    /// Event: entities `ids` were spawned at the population's end. A sort copies them after
    /// everything it queued; a switch and a move to grow reach them as they reach everything
    /// past the part copied.
    pub(super) fn on_spawned(&mut self, ids: &[u64]) {
        if let Kind::Sort(sorting) = &mut self.kind {
            sorting.queue.spawned.extend_from_slice(ids);
        }
    }

    /// Event: the entity at logical index `index` is about to be swap-removed from the
    /// population (churn): the part copied loses it too, the same way.
    pub(super) fn on_removed(&mut self, index: usize, from: &Built<S>, population: &Population) {
        let Phase::Copying(copy) = &mut self.phase else {
            // Nothing copied: a sort skips the entity when its turn comes.
            return;
        };
        match &mut self.kind {
            Kind::Sort(sorting) => copy.remove_sorted(sorting, population.ids[index]),
            Kind::Switch { .. } | Kind::Grow { .. } => {
                copy.remove_in_prefix(index, from, population)
            }
        }
    }

    /// Event: `victim` left the population: seekers waiting for it in the copy wait no more.
    pub(super) fn on_gone(&mut self, victim: u64) {
        if let Phase::Copying(copy) = &mut self.phase {
            copy.waiting.remove(&victim);
        }
    }

    /// Event: the population shrank to `len` (its ids and the current layout already did). A
    /// move to grow is given up (its prepared room would outlast the shrink); the copy of a
    /// switch or a sort drops the entities gone, and lands if it now holds them all.
    pub(super) fn on_shrunk(
        mut self,
        population: &Population,
        current: LayoutKind,
        settings: Settings,
    ) -> Next<S> {
        if matches!(self.kind, Kind::Grow { .. }) {
            return Next::Ends(self.give_up());
        }
        if let Phase::Copying(copy) = &mut self.phase {
            match &mut self.kind {
                Kind::Sort(sorting) => copy.forget_dead_sorted(sorting, &population.index),
                Kind::Switch { .. } | Kind::Grow { .. } => copy.truncate(population.len()),
            }
        }
        self.land_if_complete(population, current, settings)
    }

    /// Event: churn's round is over (`population` is as it left it): the copy lands if it holds
    /// everyone (the last entities it lacked may have been among the removed).
    pub(super) fn on_churned(
        self,
        population: &Population,
        current: LayoutKind,
        settings: Settings,
    ) -> Next<S> {
        self.land_if_complete(population, current, settings)
    }

    /// Event: a frame's share of copying, up to `max` entities (`usize::MAX`: everything now,
    /// waiting for a prepare). A layout whose prepare is done is adopted first, on `settings` as
    /// they are now and with room for the population as it is now. Returns what is next and how
    /// many entities were copied.
    pub(super) fn step(
        mut self,
        max: usize,
        from: &Built<S>,
        population: &Population,
        settings: Settings,
        scratch: &mut Scratch<S>,
    ) -> (Next<S>, usize) {
        let wait = max == usize::MAX;
        let to_kind = self.to(from.kind());
        if let Phase::Preparing(thread) = self.phase {
            if !wait && !thread.is_finished() {
                self.phase = Phase::Preparing(thread);
                return (Next::Goes(self), 0);
            }
            // A thread that panicked leaves the copy to a layout left to grow as it fills.
            let to = thread
                .join()
                .ok()
                .map(|mut layout| {
                    settings.configure(&mut *layout);
                    layout
                })
                .map_or_else(|| settings.create::<S>(to_kind), Ok);
            let Ok(mut to) = to else {
                // The kind could be built when the transition started and cannot now: nothing
                // was copied, and the population stays where it is.
                return (Next::Ends(Leftover::Nothing), 0);
            };
            // Room as at the request: refusing now would change nothing the user sees, so a
            // refusal leaves the copy to grow as it fills.
            let _ = make_room(population.max_entities, &mut *to, population.len());
            self.phase = Phase::Copying(Copy::new(to));
        }
        let copied = match (&mut self.phase, &mut self.kind) {
            (Phase::Copying(copy), Kind::Sort(sorting)) => {
                copy.copy_sorted(sorting, max, from, population, scratch)
            }
            (Phase::Copying(copy), _) => copy.copy_prefix(max, from, population, scratch),
            (Phase::Preparing(_), _) => 0,
        };
        (
            self.land_if_complete(population, from.kind(), settings),
            copied,
        )
    }

    /// Lands when the copy holds the whole population: a copy being filled that has them all,
    /// or a switch or a sort of a population of none, which needs no prepared layout (a fresh
    /// one takes over, and the prepare is let go). A move to grow waits for its prepared layout.
    fn land_if_complete(
        self,
        population: &Population,
        current: LayoutKind,
        settings: Settings,
    ) -> Next<S> {
        let len = population.len();
        let to = self.to(current);
        match self.phase {
            Phase::Copying(copy) if copy.copied == len => Next::Lands(Landing {
                layout: copy.to,
                kind: self.kind,
                leftover: Leftover::Nothing,
            }),
            Phase::Preparing(thread) if len == 0 && !matches!(self.kind, Kind::Grow { .. }) => {
                match settings.create::<S>(to) {
                    Ok(layout) => Next::Lands(Landing {
                        layout,
                        kind: self.kind,
                        leftover: Leftover::Thread(thread),
                    }),
                    Err(_) => Next::Goes(Transition {
                        kind: self.kind,
                        phase: Phase::Preparing(thread),
                    }),
                }
            }
            phase => Next::Goes(Transition {
                kind: self.kind,
                phase,
            }),
        }
    }
}

/// The table of events against phases, one test per cell that can happen, each driven through
/// the swarm as the driver drives it and checked against a swarm that never moved (a transition
/// must end exactly where staying does), and the request rules, one test per rule. A prepared
/// phase needs a layout that prepares (Bevy's) and a population of [`PREPARE_FROM`] or more.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Released;
    use crate::runtime::id_index::IdIndex;
    use crate::runtime::swarm::queue::Queue;
    use crate::runtime::swarm::{Purpose, Swarm};
    use crate::threads::Threads;
    use crate::workload::Dt;
    use std::time::{Duration, Instant};

    const BIG: usize = PREPARE_FROM + 3_000;

    fn swarm(kind: LayoutKind, n: usize) -> Swarm<f32> {
        Swarm::<f32>::with_count(kind, 7, n).unwrap()
    }

    fn preparing(swarm: &Swarm<f32>) -> bool {
        swarm
            .transition
            .as_ref()
            .is_some_and(|t| matches!(t.phase, Phase::Preparing(_)))
    }

    fn copying(swarm: &Swarm<f32>) -> bool {
        swarm
            .transition
            .as_ref()
            .is_some_and(|t| matches!(t.phase, Phase::Copying(_)))
    }

    /// Carries the transition out to its landing, a frame's share at a time.
    fn finish(swarm: &mut Swarm<f32>) {
        for _ in 0..10_000 {
            if swarm.transition.is_none() {
                return;
            }
            swarm.copy_step(usize::MAX);
        }
        panic!("the transition never lands");
    }

    fn same(moving: &Swarm<f32>, staying: &Swarm<f32>, cell: &str) {
        assert_eq!(moving.export(), staying.export(), "{cell}");
        assert_eq!(moving.check_targets(), Ok(()), "{cell}");
    }

    fn grow(target: usize, prepared: bool, worth: bool) -> Request {
        Request::Grow {
            target,
            prepared,
            worth,
        }
    }

    fn order(order: Order, in_order: bool) -> Request {
        Request::Order { order, in_order }
    }

    fn sorting(order: Order) -> Kind {
        Kind::Sort(Sorting {
            order,
            queue: Queue::listed(Vec::new()),
            ids: Vec::new(),
            index: IdIndex::default(),
        })
    }

    // ---- Requests: the rules of `answer`, one test per rule. ----

    #[test]
    fn a_request_for_the_layout_it_is_in_cancels_whatever_is_under_way() {
        let soa = LayoutKind::Soa;
        let pending = [
            None,
            Some(Kind::Switch {
                to: LayoutKind::Aos,
            }),
            Some(sorting(Order::Group)),
            Some(Kind::Grow { count: BIG }),
        ];
        for kind in &pending {
            assert_eq!(
                answer(Request::Layout(soa), kind.as_ref(), soa),
                Answer::Cancel
            );
        }
    }

    #[test]
    fn a_request_for_the_layout_a_switch_is_under_way_to_keeps_it() {
        let pending = Kind::Switch {
            to: LayoutKind::Aos,
        };
        let got = answer(
            Request::Layout(LayoutKind::Aos),
            Some(&pending),
            LayoutKind::Soa,
        );
        assert_eq!(got, Answer::Keep);
    }

    #[test]
    fn a_request_for_a_third_layout_replaces_a_switch_a_sort_or_a_move_to_grow() {
        let pending = [
            None,
            Some(Kind::Switch {
                to: LayoutKind::Aos,
            }),
            Some(sorting(Order::Group)),
            Some(Kind::Grow { count: BIG }),
        ];
        for kind in &pending {
            let got = answer(
                Request::Layout(LayoutKind::Boxed),
                kind.as_ref(),
                LayoutKind::Soa,
            );
            assert_eq!(got, Answer::Start);
        }
    }

    #[test]
    fn a_request_for_the_order_a_sort_is_under_way_into_keeps_it() {
        for in_order in [false, true] {
            let pending = sorting(Order::Group);
            let got = answer(
                order(Order::Group, in_order),
                Some(&pending),
                LayoutKind::Soa,
            );
            assert_eq!(got, Answer::Keep, "in order: {in_order}");
        }
    }

    #[test]
    fn a_request_for_the_order_the_population_is_in_cancels_whatever_is_under_way() {
        let pending = [
            None,
            Some(sorting(Order::Group)),
            Some(Kind::Switch {
                to: LayoutKind::Aos,
            }),
            Some(Kind::Grow { count: BIG }),
        ];
        for kind in &pending {
            let got = answer(order(Order::Id, true), kind.as_ref(), LayoutKind::Soa);
            assert_eq!(got, Answer::Cancel);
        }
    }

    #[test]
    fn a_request_for_another_order_starts_a_sort() {
        let pending = [
            None,
            Some(sorting(Order::Id)),
            Some(Kind::Switch {
                to: LayoutKind::Aos,
            }),
        ];
        for kind in &pending {
            let got = answer(order(Order::Group, false), kind.as_ref(), LayoutKind::Soa);
            assert_eq!(got, Answer::Start);
        }
    }

    #[test]
    fn a_growth_keeps_a_move_to_grow_prepared_for_about_its_count_or_still_preparing() {
        let pending = Kind::Grow { count: 300_000 };
        let ecs = LayoutKind::EcsTable;
        // Prepared for the count, or up to twice it: kept.
        for target in [300_000, 150_000] {
            let got = answer(grow(target, true, true), Some(&pending), ecs);
            assert_eq!(got, Answer::Keep, "{target}");
        }
        // Another count while the prepare runs: kept, never a second thread beside it.
        let got = answer(grow(1_000_000, false, true), Some(&pending), ecs);
        assert_eq!(got, Answer::Keep);
        // Another count once it is done: prepared again.
        let got = answer(grow(1_000_000, true, true), Some(&pending), ecs);
        assert_eq!(got, Answer::Start);
    }

    #[test]
    fn a_growth_declines_beside_another_transition_and_starts_only_where_worth_it() {
        let ecs = LayoutKind::EcsTable;
        for kind in [
            Kind::Switch {
                to: LayoutKind::Aos,
            },
            sorting(Order::Group),
        ] {
            let got = answer(grow(1_000_000, false, true), Some(&kind), ecs);
            assert_eq!(got, Answer::Decline);
        }
        assert_eq!(
            answer(grow(1_000_000, false, true), None, ecs),
            Answer::Start
        );
        assert_eq!(
            answer(grow(1_000_000, false, false), None, ecs),
            Answer::Decline
        );
        // What makes a growth worth it: a layout that prepares, a growth past its room, by
        // PREPARE_FROM or more, to REHOME_GROWTH times the population or more.
        assert!(worth_preparing(true, 0, 1_000, 4_000 + PREPARE_FROM));
        assert!(!worth_preparing(false, 0, 1_000, 1_000_000));
        assert!(!worth_preparing(true, 2_000_000, 1_000, 1_000_000));
        assert!(!worth_preparing(true, 0, 1_000, 1_000 + PREPARE_FROM - 1));
        assert!(!worth_preparing(true, 0, 100_000, 399_999));
    }

    // ---- Starting: what phase a transition starts in. ----

    #[test]
    fn a_big_switch_into_a_layout_that_prepares_starts_preparing_and_any_other_copying() {
        let mut big = swarm(LayoutKind::Soa, BIG);
        big.begin_switch(LayoutKind::EcsTable).unwrap();
        assert!(preparing(&big));
        let mut small = swarm(LayoutKind::Soa, PREPARE_FROM - 1);
        small.begin_switch(LayoutKind::EcsTable).unwrap();
        assert!(copying(&small));
        let mut plain = swarm(LayoutKind::Soa, BIG);
        plain.begin_switch(LayoutKind::Aos).unwrap();
        assert!(copying(&plain));
    }

    #[test]
    fn a_population_of_none_lands_at_once_but_a_move_to_grow_waits_for_its_layout() {
        let mut empty = swarm(LayoutKind::Soa, 0);
        empty.begin_switch(LayoutKind::EcsTable).unwrap();
        assert_eq!(
            (empty.kind(), empty.transition()),
            (LayoutKind::EcsTable, None)
        );
        let mut growing = swarm(LayoutKind::EcsTable, 0);
        assert!(growing.rehome_to_grow(BIG));
        assert!(preparing(&growing));
        assert_eq!(growing.copy_step(1_000), 0);
        // Given its layout (a share of `usize::MAX` waits for it), it lands with its room.
        growing.copy_step(usize::MAX);
        assert!(growing.transition.is_none());
        assert!(growing.layout.prepared_room() >= BIG - 1);
    }

    // ---- A frame's share of copying. ----

    #[test]
    fn a_share_while_preparing_copies_nothing_until_the_layout_is_adopted() {
        let mut moving = swarm(LayoutKind::Soa, BIG);
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        let mut shares = 0;
        while preparing(&moving) {
            let copied = moving.copy_step(1_000);
            if preparing(&moving) {
                assert_eq!(copied, 0, "still preparing");
            } else {
                // The share that adopts the prepared layout copies into it at once.
                assert!(copying(&moving));
                assert_eq!(moving.transition().unwrap().copied, copied);
                assert!(copied <= 1_000);
            }
            shares += 1;
            assert!(shares < 1_000_000, "the prepare never ends");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_share_while_copying_copies_at_most_the_share_and_lands_with_the_last_entity() {
        let mut moving = swarm(LayoutKind::Soa, 5_000);
        let staying = swarm(LayoutKind::Soa, 5_000);
        moving.begin_switch(LayoutKind::Boxed).unwrap();
        let mut steps = 0;
        while moving.transition.is_some() {
            let before = moving.transition().unwrap().copied;
            let copied = moving.copy_step(700);
            assert!(copied <= 700);
            match moving.transition() {
                Some(p) => assert_eq!(p.copied, before + copied),
                None => assert_eq!(before + copied, 5_000, "lands with the last one"),
            }
            steps += 1;
        }
        assert_eq!((steps, moving.kind()), (8, LayoutKind::Boxed));
        same(&moving, &staying, "share x copying");
    }

    // ---- Growth: entities spawned while a transition is under way. ----

    #[test]
    fn a_growth_while_preparing_is_copied_after_the_layout_is_adopted() {
        for sort in [false, true] {
            let mut moving = swarm(LayoutKind::Soa, BIG);
            let mut staying = swarm(LayoutKind::Soa, BIG);
            if sort {
                moving.switch_to(LayoutKind::EcsTable).unwrap();
                moving.begin_reorder(Order::Group).unwrap();
            } else {
                moving.begin_switch(LayoutKind::EcsTable).unwrap();
            }
            assert!(preparing(&moving));
            for s in [&mut moving, &mut staying] {
                s.grow(1_234).unwrap();
            }
            finish(&mut moving);
            assert_eq!(moving.kind(), LayoutKind::EcsTable);
            if sort {
                assert_eq!(moving.order(), Order::Group);
                assert_eq!(
                    moving.checksum(),
                    staying.checksum(),
                    "growth x preparing sort"
                );
            } else {
                same(&moving, &staying, "growth x preparing switch");
            }
        }
    }

    #[test]
    fn a_growth_while_copying_lands_with_the_new_entities_too() {
        let mut moving = swarm(LayoutKind::Soa, 3_000);
        let mut staying = swarm(LayoutKind::Soa, 3_000);
        moving.begin_switch(LayoutKind::Chunks).unwrap();
        moving.copy_step(2_999);
        for s in [&mut moving, &mut staying] {
            s.grow(500).unwrap();
        }
        assert!(copying(&moving), "the new entities are still to copy");
        finish(&mut moving);
        same(&moving, &staying, "growth x copying switch");

        let mut sorted = swarm(LayoutKind::Soa, 3_000);
        sorted.begin_reorder(Order::Group).unwrap();
        sorted.copy_step(1_000);
        sorted.grow(500).unwrap();
        staying.grow(0).unwrap();
        finish(&mut sorted);
        let ids = sorted.ids();
        assert!(
            ids[3_000..].is_sorted(),
            "spawned after the sort's own order"
        );
        assert_eq!(ids[3_000], 3_000);
    }

    // ---- Churn: removals while a transition is under way. ----

    #[test]
    fn churn_while_preparing_finds_nothing_copied_and_lands_where_staying_does() {
        let mut moving = swarm(LayoutKind::Soa, BIG);
        let mut staying = swarm(LayoutKind::Soa, BIG);
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        for s in [&mut moving, &mut staying] {
            s.churn(2_000).unwrap();
        }
        assert!(preparing(&moving));
        finish(&mut moving);
        same(&moving, &staying, "churn x preparing");
    }

    /// Churn during a copy (the soak's find): a removal below the part copied swaps in an
    /// entity from past it, which the copy must take first; a removal wholly inside the copy
    /// (the last entity copied too) swaps within it.
    #[test]
    fn churn_while_copying_mirrors_each_removal_on_the_part_copied() {
        for (kind, to) in [
            (LayoutKind::Soa, LayoutKind::Aos),
            (LayoutKind::Soa, LayoutKind::Hecs),
        ] {
            let mut moving = swarm(kind, 4_000);
            let mut staying = swarm(kind, 4_000);
            moving.begin_switch(to).unwrap();
            moving.copy_step(2_500);
            for round in 0..6 {
                for s in [&mut moving, &mut staying] {
                    s.churn(300).unwrap();
                    s.step_seek(Dt::default(), Threads::One);
                    s.step(Dt::default(), Threads::One);
                }
                assert_eq!(moving.check_targets(), Ok(()), "{to} round {round}");
                assert_eq!(moving.checksum(), staying.checksum(), "{to} round {round}");
            }
            // Everything copied, then removals inside the copy.
            moving.copy_step(moving.len() - moving.transition().unwrap().copied - 1);
            for s in [&mut moving, &mut staying] {
                s.churn(50).unwrap();
            }
            finish(&mut moving);
            assert_eq!(moving.kind(), to);
            same(&moving, &staying, "churn x copying switch");
        }
    }

    #[test]
    fn churn_while_a_sort_copies_takes_the_removed_out_of_the_sorted_copy() {
        let mut moving = swarm(LayoutKind::Soa, 4_000);
        let mut staying = swarm(LayoutKind::Soa, 4_000);
        moving.begin_reorder(Order::Group).unwrap();
        moving.copy_step(1_500);
        for s in [&mut moving, &mut staying] {
            s.churn(400).unwrap();
        }
        assert_eq!(moving.check_targets(), Ok(()));
        finish(&mut moving);
        assert_eq!(moving.order(), Order::Group);
        assert_eq!(
            moving.checksum(),
            staying.checksum(),
            "churn x copying sort"
        );
        assert_eq!(moving.check_targets(), Ok(()));
    }

    #[test]
    fn churn_while_moving_to_grow_is_mirrored_and_the_move_lands() {
        let mut moving = swarm(LayoutKind::EcsTable, 3_000);
        let mut staying = swarm(LayoutKind::EcsTable, 3_000);
        assert!(moving.rehome_to_grow(4 * BIG));
        moving.copy_step(usize::MAX);
        let mut steps = 0;
        while moving.rehome_to_grow(4 * BIG) {
            moving.copy_step(700);
            for s in [&mut moving, &mut staying] {
                s.churn(60).unwrap();
            }
            steps += 1;
            assert!(steps < 1_000);
        }
        assert_eq!(moving.transition(), None);
        same(&moving, &staying, "churn x copying grow");
    }

    // ---- Shrink. ----

    /// The soak's seed 107177123 (a world prepared for 811,172 entities, landing with 10,000,
    /// would keep the room): a shrink while the layout is prepared for the count at the
    /// request leaves no room behind once the switch lands.
    #[test]
    fn a_shrink_while_preparing_lands_with_no_room_for_the_entities_gone() {
        let mut moving = swarm(LayoutKind::Soa, 2 * PREPARE_FROM);
        let mut staying = swarm(LayoutKind::Soa, 2 * PREPARE_FROM);
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        assert!(preparing(&moving));
        for s in [&mut moving, &mut staying] {
            s.resize(10_000).unwrap();
        }
        finish(&mut moving);
        assert_eq!(moving.kind(), LayoutKind::EcsTable);
        assert_eq!(moving.layout.release_unused(), Released::InPlace);
        same(&moving, &staying, "shrink x preparing switch");
    }

    #[test]
    fn a_shrink_while_a_sort_prepares_lands_sorted_with_the_survivors() {
        let mut moving = swarm(LayoutKind::EcsTable, BIG);
        let mut staying = swarm(LayoutKind::Soa, BIG);
        moving.begin_reorder(Order::Group).unwrap();
        assert!(preparing(&moving));
        for s in [&mut moving, &mut staying] {
            s.resize(5_000).unwrap();
        }
        finish(&mut moving);
        assert_eq!(moving.order(), Order::Group);
        assert_eq!(
            moving.checksum(),
            staying.checksum(),
            "shrink x preparing sort"
        );
        assert_eq!(moving.layout.release_unused(), Released::InPlace);
    }

    #[test]
    fn a_shrink_below_the_part_copied_truncates_the_copy_and_may_land_it() {
        let mut moving = swarm(LayoutKind::Soa, 3_000);
        let mut staying = swarm(LayoutKind::Soa, 3_000);
        moving.begin_switch(LayoutKind::Aos).unwrap();
        moving.copy_step(2_000);
        for s in [&mut moving, &mut staying] {
            s.resize(2_500).unwrap();
        }
        assert_eq!(moving.transition().unwrap().copied, 2_000, "above: kept");
        for s in [&mut moving, &mut staying] {
            s.resize(1_500).unwrap();
        }
        // The copy held the first 2,000: it holds all 1,500 now, and lands.
        assert_eq!(moving.transition(), None);
        assert_eq!(moving.kind(), LayoutKind::Aos);
        same(&moving, &staying, "shrink x copying switch");
    }

    #[test]
    fn a_shrink_while_a_sort_copies_drops_the_entities_gone_from_the_copy() {
        let mut moving = swarm(LayoutKind::Soa, 3_000);
        let mut staying = swarm(LayoutKind::Soa, 3_000);
        moving.begin_reorder(Order::Group).unwrap();
        moving.copy_step(2_000);
        for s in [&mut moving, &mut staying] {
            s.resize(1_000).unwrap();
        }
        assert_eq!(moving.check_targets(), Ok(()));
        finish(&mut moving);
        assert_eq!(moving.order(), Order::Group);
        assert_eq!(
            moving.checksum(),
            staying.checksum(),
            "shrink x copying sort"
        );
    }

    #[test]
    fn a_shrink_gives_up_a_move_to_grow_preparing_or_copying() {
        for adopt in [false, true] {
            let mut moving = swarm(LayoutKind::EcsTable, 3_000);
            assert!(moving.rehome_to_grow(4 * BIG));
            if adopt {
                moving.copy_step(usize::MAX);
                if moving.transition.is_none() {
                    // The move landed at once (the share copied everything): nothing to give up.
                    continue;
                }
            }
            moving.resize(2_000).unwrap();
            let left = moving.transition().map(|p| p.purpose);
            assert!(
                !matches!(left, Some(Purpose::Grow(_))),
                "adopted {adopt}: {left:?}"
            );
            assert_eq!(moving.len(), 2_000);
        }
    }

    #[test]
    fn a_move_to_grow_from_no_population_waits_for_its_prepared_layout() {
        // A population of none lands a switch at once, but a move to grow only once its layout
        // is prepared: landing early would leave the growth to the unprepared layout.
        let mut moving = swarm(LayoutKind::EcsTable, 0);
        assert!(moving.rehome_to_grow(BIG));
        // A churn round of nothing is an event that may land a transition.
        moving.churn(0).unwrap();
        assert!(
            moving.transition.is_some(),
            "the move to grow landed before its layout was prepared"
        );
        let started = Instant::now();
        while moving.transition.is_some() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the prepared layout was never adopted"
            );
            moving.copy_step(usize::MAX);
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(
            moving.layout.prepared_room() >= BIG,
            "landed in a layout prepared for {} entities, not {BIG}",
            moving.layout.prepared_room()
        );
        assert_eq!(moving.len(), 0);
    }

    // ---- Landing. ----

    #[test]
    fn a_landing_sort_hands_its_order_to_the_population_and_a_switch_its_layout() {
        let mut sorted = swarm(LayoutKind::Soa, 2_000);
        let landed_before = sorted.sorts_landed();
        sorted.reorder(Order::Group).unwrap();
        assert_eq!(sorted.sorts_landed(), landed_before + 1);
        assert_eq!(
            sorted.ids(),
            &Order::Group.arrange((0..2_000).collect(), |_| [0.0; 2])[..]
        );
        sorted.switch_to(LayoutKind::Boxed).unwrap();
        assert_eq!(
            (sorted.kind(), sorted.order()),
            (LayoutKind::Boxed, Order::Group)
        );
        assert_eq!(
            sorted.sorts_landed(),
            landed_before + 1,
            "a switch is no sort"
        );
    }

    #[test]
    fn a_switch_that_lands_with_a_layout_holding_more_than_its_population_rebuilds_it() {
        // A copy of Bevy that held 3,000 and was thinned to 300 by shrinks, then completed.
        let mut moving = swarm(LayoutKind::Soa, 40_000);
        let staying_len = 300;
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        moving.copy_step(39_000);
        moving.resize(staying_len).unwrap();
        // Landing gave back what the world kept: through a rebuild, carried out here.
        finish(&mut moving);
        assert_eq!(moving.kind(), LayoutKind::EcsTable);
        assert_eq!(moving.layout.release_unused(), Released::InPlace);
        let staying = swarm(LayoutKind::Soa, staying_len);
        same(&moving, &staying, "land x thinned copy");
    }
}

//! Readying a switch's fresh layout off the frame thread. Some libraries grow a structure by
//! filling all of its new capacity at once: Bevy's entity index, 200 MB in the one spawn that
//! crosses 8.4M entities. A layout that can do such work before it is filled says so
//! ([`Layout::prepares`]); a switch, a reorder or a rebuild of a big population then hands the
//! fresh layout, room made, to a thread that prepares it for the count, while an empty stand-in
//! of the same kind holds its place. Nothing is copied until the prepared layout is adopted, in
//! the first step after the thread is done; everything done to the swarm meanwhile finds
//! nothing copied yet, as at the start of any switch. A layout about to grow many times over
//! moves the same way into one of its own kind prepared for the count
//! ([`Swarm::rehome_to_grow`]): a world in use cannot be prepared, since every frame steps it.

use super::Swarm;
use super::switch::{PendingSwitch, Preparing};
use crate::error::SimError;
use crate::layout::{Layout, LayoutKind};
use crate::runtime::catalog::AllLayouts;

/// Populations smaller than this are copied into the layout as it is: what a prepare saves them
/// is less than a thread costs (Bevy's index at 64k entities is 1.5 MB).
pub(super) const PREPARE_FROM: usize = 1 << 16;

/// A population that is to grow at least this many times over moves first into a layout
/// prepared for the count ([`Swarm::rehome_to_grow`]): copying what is there then costs at most
/// a quarter of spawning what is to come, and every doubling of the index on the way is spared.
/// Smaller growths stay where they are: copying half of 10M to spare the one doubling at 8.4M
/// would add seconds to the gesture.
const REHOME_GROWTH: usize = 4;

impl<S: AllLayouts> Swarm<S> {
    /// A pending switch into a fresh layout of `kind` with room for the population, prepared
    /// for `count` entities where that is worth a thread ([`Self::pending_switch`]). On error
    /// (memory) nothing changes.
    pub(super) fn fresh_switch(
        &self,
        kind: LayoutKind,
        count: usize,
    ) -> Result<PendingSwitch<S>, SimError> {
        let mut to = self.create(kind)?;
        Self::make_room(self.max_entities, to.as_mut(), self.len())?;
        Ok(self.pending_switch(to, count))
    }

    /// A pending switch into `to`, whose room for `count` entities is made: `to` itself, or an
    /// empty stand-in while a thread prepares `to` for the count.
    pub(super) fn pending_switch(&self, to: Box<dyn Layout<S>>, count: usize) -> PendingSwitch<S> {
        if count < PREPARE_FROM || !to.prepares() {
            return PendingSwitch::new(to);
        }
        let Ok(stand_in) = self.create(to.kind()) else {
            return PendingSwitch::new(to);
        };
        let mut to = to;
        let spawned = std::thread::Builder::new()
            .name("prepare-layout".into())
            .spawn(move || {
                to.prepare(count);
                to
            });
        let mut pending = PendingSwitch::new(stand_in);
        match spawned {
            Ok(thread) => pending.preparing = Some(Preparing { thread }),
            // No thread: the copy goes into the stand-in, given room as `to` had (a refusal
            // leaves it to grow as it fills: `to` was granted the same room just before).
            Err(_) => {
                let _ = Self::make_room(self.max_entities, pending.to.as_mut(), count);
            }
        }
        pending
    }

    /// Before the population grows to `target` over frames: a layout that prepares
    /// ([`Layout::prepares`]) and is to grow [`REHOME_GROWTH`] times over, past what it has
    /// readied, is moved into a fresh layout of the same kind prepared for `target` on a thread,
    /// as a switch into it would be. Growing the layout in use would pay for each doubling of
    /// Bevy's entity index within one frame (the one at 8.4M: 72-545 ms headless, `docs/runs/bevy-grow-2026-12-04`), since
    /// no thread can touch a world that every frame steps. Returns whether such a move is
    /// pending: growing waits until it lands.
    ///
    /// A count raised while the layout was prepared for a smaller one (a slider being dragged)
    /// starts a prepare for the new count once the first is done, never beside it: on two cores
    /// a thread per frame of dragging would take the cores from the frames.
    pub fn rehome_to_grow(&mut self, target: usize) -> bool {
        if let Some(switch) = &self.switch {
            let Some(prepared_for) = switch.for_growth else {
                // Another switch: growing goes on into the layout in use, as it always did.
                return false;
            };
            let ready = switch
                .preparing
                .as_ref()
                .is_some_and(|p| p.thread.is_finished());
            // Twice the count is a prepare to do again: its index is memory the population
            // would keep (a slider dragged up, then back).
            let fits = (target..=target.saturating_mul(2)).contains(&prepared_for);
            if fits || !ready {
                return true;
            }
            let outgrown = self.switch.take().expect("checked above");
            self.give_up(outgrown);
        }
        let len = self.len();
        let growth = target.saturating_sub(len);
        let worth_it = self.layout.prepares()
            && growth >= PREPARE_FROM
            && growth > self.layout.prepared_room()
            && target >= REHOME_GROWTH.saturating_mul(len);
        if !worth_it {
            return false;
        }
        let Ok(mut pending) = self.fresh_switch(self.kind(), target) else {
            return false;
        };
        if pending.preparing.is_none() {
            // No thread to prepare on: growing goes on in the layout in use.
            return false;
        }
        pending.for_growth = Some(target);
        self.switch = Some(pending);
        true
    }

    /// Whether a pending switch's copy can go on: true unless its layout is still being
    /// prepared (`wait`: wait for it). A prepared layout is adopted here, on this swarm's SIMD
    /// tier and seek kernel as they are now, with room for the population as it is now.
    pub(super) fn copy_ready(&mut self, wait: bool) -> bool {
        let Some(switch) = self.switch.as_mut() else {
            return true;
        };
        let prepared = match switch.preparing.take() {
            None => return true,
            Some(preparing) if !wait && !preparing.thread.is_finished() => {
                switch.preparing = Some(preparing);
                return false;
            }
            // A thread that panicked leaves the copy to the stand-in.
            Some(preparing) => preparing.thread.join().ok(),
        };
        let (len, max) = (self.len(), self.max_entities);
        // Room as at the request: refusing now would change nothing the user sees, so a refusal
        // leaves the copy to grow as it fills.
        match prepared {
            Some(mut layout) => {
                self.configure(layout.as_mut());
                let _ = Self::make_room(max, layout.as_mut(), len);
                self.switch.as_mut().expect("checked above").to = layout;
            }
            None => {
                let to = &mut self.switch.as_mut().expect("checked above").to;
                let _ = Self::make_room(max, to.as_mut(), len);
            }
        }
        true
    }

    /// Gives up a pending switch: its copy is freed off the frame thread, and a layout still
    /// being prepared is freed by its own thread, which [`Self::wait_for_frees`] then waits for.
    pub(super) fn give_up(&mut self, pending: PendingSwitch<S>) {
        if let Some(preparing) = pending.preparing {
            self.let_go(preparing);
        }
        self.free_in_background(pending.to);
    }

    /// Lets a prepare go on to no use: a thread waits for it and frees its layout, and
    /// [`Self::wait_for_frees`] waits for that thread.
    pub(super) fn let_go(&mut self, preparing: Preparing<S>) {
        let thread = preparing.thread;
        // Without a thread to wait, the prepare's own frees the layout when it is done.
        if let Ok(waiter) = std::thread::Builder::new()
            .name("free-prepared-layout".into())
            .spawn(move || drop(thread.join()))
        {
            self.freeing.push(waiter);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{LayoutKind, SeekKernel};
    use crate::runtime::swarm::Order;
    use crate::simd::SimdTier;
    use crate::threads::Threads;
    use crate::workload::Dt;

    /// A switch into Bevy big enough to be prepared: steps before the prepared world is adopted
    /// copy nothing, settings changed and churn done meanwhile are kept, and the switch ends
    /// with the population a swarm that stayed has. Each request kind too: a reorder, and a
    /// switch given up while its layout was being prepared.
    #[test]
    fn a_prepared_switch_waits_for_its_layout_and_ends_where_staying_does() {
        let n = PREPARE_FROM + 2_000;
        let mut staying = Swarm::<f32>::with_count(LayoutKind::Soa, 5, n).unwrap();
        let mut moving = Swarm::<f32>::with_count(LayoutKind::Soa, 5, n).unwrap();
        moving.begin_switch(LayoutKind::EcsContiguous).unwrap();
        let switch = moving.switch.as_ref().unwrap();
        assert!(switch.preparing.is_some(), "prepared on a thread");
        moving.set_simd(SimdTier::Avx2);
        moving.set_seek_kernel(SeekKernel::Tuned);
        staying.set_seek_kernel(SeekKernel::Tuned);
        let mut steps = 0;
        while moving.switch_progress().is_some() {
            let before = moving.switch_progress().unwrap().copied;
            let copied = moving.switch_step(20_000);
            if let Some(p) = moving.switch_progress() {
                assert_eq!(p.copied, before + copied);
            }
            for swarm in [&mut staying, &mut moving] {
                swarm.churn(300).unwrap();
                swarm.step(Dt::default(), Threads::One);
            }
            assert_eq!(moving.checksum(), staying.checksum(), "step {steps}");
            steps += 1;
        }
        assert_eq!(moving.kind(), LayoutKind::EcsContiguous);
        assert_eq!(
            moving.seek_kernel_in_use(),
            SeekKernel::Tuned,
            "set while preparing"
        );
        assert_eq!(moving.export(), staying.export());
        assert_eq!(moving.check_targets(), Ok(()));

        // A reorder rebuilds the world in the new order: prepared too.
        moving.begin_reorder(Order::Group).unwrap();
        assert!(moving.switch.as_ref().unwrap().preparing.is_some());
        while moving.switch_progress().is_some() {
            moving.switch_step(30_000);
        }
        assert_eq!(
            (moving.order(), moving.checksum()),
            (Order::Group, staying.checksum())
        );

        // Given up while preparing: the request after it finds nothing left behind.
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        moving.begin_switch(LayoutKind::Aos).unwrap();
        moving.switch_step(usize::MAX);
        moving.begin_switch(LayoutKind::EcsSparse).unwrap();
        moving.cancel_switch();
        moving.wait_for_frees();
        assert!(moving.freeing.is_empty());
        assert_eq!(moving.kind(), LayoutKind::Aos);
        // Still in the reorder's order, so compared as populations.
        assert_eq!(moving.checksum(), staying.checksum());
    }

    /// A shrink while the switch's world is being prepared for the count at the request: the
    /// world that lands is rebuilt for what is left, so no room for the entities gone outlives
    /// the switch (the soak's seed 107177123: 32 MB kept by a Bevy world prepared for 811,172
    /// entities and landing with 10,000).
    #[test]
    fn a_shrink_while_a_prepared_switch_is_pending_leaves_no_room_behind() {
        let n = 2 * PREPARE_FROM;
        let mut staying = Swarm::<f32>::with_count(LayoutKind::Soa, 8, n).unwrap();
        let mut moving = Swarm::<f32>::with_count(LayoutKind::Soa, 8, n).unwrap();
        moving.begin_switch(LayoutKind::EcsTable).unwrap();
        assert!(moving.switch.as_ref().unwrap().preparing.is_some());
        for swarm in [&mut staying, &mut moving] {
            swarm.resize(10_000).unwrap();
        }
        while moving.switch_progress().is_some() {
            moving.switch_step(usize::MAX);
        }
        assert_eq!(moving.kind(), LayoutKind::EcsTable);
        let layout = moving.layout_mut().unwrap();
        assert_eq!(
            layout.release_unused(),
            crate::layout::Released::InPlace,
            "the landed world holds room for {n} entities"
        );
        assert_eq!(moving.export(), staying.export());
    }

    /// A growth many times over moves the population first into a world prepared for the
    /// count, copied while the population keeps moving and churning, as any switch; a count
    /// raised meanwhile is prepared again once the first prepare is done; the growth then lands
    /// on the ids set aside, and ends where a swarm that grew in place does.
    #[test]
    fn a_growth_many_times_over_moves_into_a_prepared_world_first() {
        let len = 3_000;
        let mut staying = Swarm::<f32>::with_count(LayoutKind::EcsTable, 6, len).unwrap();
        let mut moving = Swarm::<f32>::with_count(LayoutKind::EcsTable, 6, len).unwrap();
        let mut soa = Swarm::<f32>::with_count(LayoutKind::Soa, 6, len).unwrap();
        let target = 2 * PREPARE_FROM;
        assert!(!moving.rehome_to_grow(len + PREPARE_FROM - 1), "too small");
        assert!(!soa.rehome_to_grow(target), "nothing to prepare");
        assert!(moving.rehome_to_grow(target));

        let raised = 3 * target;
        let prepared_for = |s: &Swarm<f32>| s.switch.as_ref().and_then(|s| s.for_growth);
        while prepared_for(&moving) != Some(raised) {
            assert!(moving.rehome_to_grow(raised), "waits while preparing");
            assert_eq!(moving.switch_step(500), 0, "nothing copied before adoption");
            std::thread::yield_now();
        }
        let mut steps = 0;
        while moving.rehome_to_grow(raised) {
            moving.switch_step(700);
            for swarm in [&mut staying, &mut moving] {
                swarm.churn(50).unwrap();
                swarm.step(Dt::default(), Threads::One);
            }
            assert_eq!(moving.checksum(), staying.checksum(), "step {steps}");
            steps += 1;
            assert!(steps < 10_000, "the move lands, once");
        }
        assert!(moving.switch.is_none());
        assert!(
            moving.layout.prepared_room() >= raised - len,
            "prepared for the raised count"
        );
        for swarm in [&mut staying, &mut moving] {
            swarm.resize(raised).unwrap();
            swarm.step(Dt::default(), Threads::One);
        }
        assert!(
            moving.layout.prepared_room() < len,
            "grown without doubling its index"
        );
        assert_eq!(moving.export(), staying.export());
        assert_eq!(moving.check_targets(), Ok(()));

        // A shrink gives up a move made for growth: its index would outlast it. (What the
        // shrink starts instead is the rebuild that gives the tables' memory back.)
        assert!(moving.rehome_to_grow(4 * raised));
        moving.resize(len).unwrap();
        assert_eq!(prepared_for(&moving), None);
        assert_eq!(moving.len(), len);
    }
}

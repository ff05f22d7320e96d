//! Giving memory back. A population that shrank from millions, or stopped churning, should not
//! keep millions' worth: the layout gives back what it can in place, one that cannot (an ECS
//! library's tables never shrink) is rebuilt, spread over frames like a switch, and the allocator
//! returns freed memory to the OS. A layout that a switch replaced is freed on a thread of its
//! own, since freeing millions of boxes is work that no frame should wait for.

use std::thread::JoinHandle;

use super::Swarm;
use super::settings::Scratch;
use super::transition::{Kind, Transition};
use crate::layout::Released;
use crate::memory::release_to_os;
use crate::runtime::catalog::{AllLayouts, Built};

/// Layouts smaller than this are freed on the spot: a thread costs more than their `free`s.
const IN_BACKGROUND_FROM: usize = 100_000;

/// The threads freeing layouts that are no longer used: replaced by a transition's copy, or
/// given up with it.
#[derive(Default)]
pub(super) struct Freeing {
    threads: Vec<JoinHandle<()>>,
}

impl Freeing {
    /// Frees a layout that is no longer used. Freeing a big layout is work of its own (10M
    /// boxes are 10M calls to `free`) that nothing waits for: a thread does it, so the frame that
    /// ends a transition does not pay for it. Small layouts are freed here and now. Either way
    /// the allocator then returns what it can to the OS.
    pub(super) fn free<S: AllLayouts>(&mut self, layout: Built<S>) {
        self.threads.retain(|handle| !handle.is_finished());
        if layout.len() < IN_BACKGROUND_FROM {
            // Even a small layout may leave a big heap behind (boxes scattered by churn).
            drop(layout);
            release_to_os();
            return;
        }
        // If no thread can be started, the closure, and the layout with it, is dropped here.
        if let Ok(handle) = std::thread::Builder::new()
            .name("free-old-layout".into())
            .spawn(move || {
                drop(layout);
                release_to_os();
            })
        {
            self.threads.push(handle);
        }
    }

    /// Lets a prepare go on to no use: a thread waits for it and frees its layout, and
    /// [`Self::wait`] waits for that thread.
    pub(super) fn let_go<S: AllLayouts>(&mut self, prepare: JoinHandle<Built<S>>) {
        // Without a thread to wait, the prepare's own frees the layout when it is done.
        if let Ok(waiter) = std::thread::Builder::new()
            .name("free-prepared-layout".into())
            .spawn(move || drop(prepare.join()))
        {
            self.threads.push(waiter);
        }
    }

    /// Waits until every layout handed over is freed.
    pub(super) fn wait(&mut self) {
        for handle in self.threads.drain(..) {
            let _ = handle.join();
        }
    }

    /// Whether nothing is being freed.
    #[cfg(test)]
    pub(super) fn is_idle(&self) -> bool {
        self.threads.is_empty()
    }
}

impl<S: AllLayouts> Swarm<S> {
    /// Gives back what the population no longer needs, after it shrank or stopped churning: the
    /// layout releases what it can in place; one that cannot (the ECS libraries' tables) is
    /// rebuilt, spread over the next `copy_step`s like a switch into a fresh layout of the same
    /// kind; and the allocator is asked to return freed memory to the OS.
    pub fn release_memory(&mut self) {
        // The scratch of a big batch (64k entities: about 2.5 MB a swarm) and an index sized
        // for a churn's peak are worth nothing at a small count; they grow back when needed.
        self.scratch = Scratch::new();
        self.population.index.shrink_to_fit();
        crate::layout::shrink_if_sparse(&mut self.population.ids);
        let released = self.layout.release_unused();
        if let Some(copy) = self.transition.as_mut().and_then(Transition::copy_mut) {
            let _ = copy.to.release_unused();
        }
        if self.transition.is_none() && released == Released::RebuildWouldFree {
            let (kind, len) = (self.kind(), self.len());
            // A refusal (memory for the rebuild) leaves the layout as it is, which still works.
            let _ = self.start(Kind::Switch { to: kind }, kind, len);
        }
        release_to_os();
    }

    /// Waits until the layouts replaced by transitions are freed. Allocating while another
    /// thread frees scrambles the order in which the allocator hands memory back (a boxed layout
    /// built then runs slower, as `bench --only switch` shows), so every
    /// operation that allocates entities waits first; a benchmark also waits so that the freeing
    /// does not compete with what it measures next. Instant when nothing is being freed.
    pub fn wait_for_frees(&mut self) {
        self.freeing.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;

    /// After a big shrink an ECS world is rebuilt through a pending switch into the same kind,
    /// which ends with the same entities; a `Vec` layout gives memory back in place.
    #[test]
    fn a_big_shrink_rebuilds_an_ecs_world_and_shrinks_a_vec_layout_in_place() {
        let mut ecs = Swarm::<f32>::with_count(LayoutKind::Hecs, 6, 100_000).unwrap();
        let mut soa = Swarm::<f32>::with_count(LayoutKind::Soa, 6, 100_000).unwrap();
        for swarm in [&mut ecs, &mut soa] {
            swarm.resize(1_000).unwrap();
        }
        let pending = ecs.transition().expect("the ECS world is being rebuilt");
        assert_eq!((pending.to, pending.len), (LayoutKind::Hecs, 1_000));
        assert_eq!(soa.transition(), None);
        assert!(soa.memory().allocated_bytes < 1_000 * 64 * 4);
        ecs.copy_step(usize::MAX);
        assert_eq!(ecs.export(), soa.export());
        assert_eq!(ecs.check_targets(), Ok(()));
    }

    /// Freeing in the background keeps nothing of the freed layout waiting once
    /// `wait_for_frees` returns, and the swarm goes on as if it had been freed on the spot.
    #[test]
    fn layouts_replaced_by_switches_are_freed_and_waited_for() {
        let mut swarm =
            Swarm::<f32>::with_count(LayoutKind::Boxed, 7, 2 * IN_BACKGROUND_FROM).unwrap();
        let before = swarm.export();
        swarm.switch_to(LayoutKind::Soa).unwrap();
        assert!(!swarm.freeing.is_idle(), "a big layout goes to a thread");
        swarm.wait_for_frees();
        assert!(swarm.freeing.is_idle());
        assert_eq!(swarm.export(), before);
    }
}

//! The ECS libraries' worlds with marker components, for the bench's fragmentation and migration
//! cells: each library's layout as the core's factory builds it, through its [`Marks`]
//! capability (Bevy's `insert`, hecs' `insert_one`, flecs' `add` of a tag entity, shipyard's
//! `add_component`). Marker `b` is one of [`MARKERS`], so entity `i` with the markers of the
//! bits of `i % A` puts A archetypes in one world: the `fragmentation` experiment's shape.
//! Toggling one marker per entity is the `migration` experiment's.

use crate::layout::{HostLayout, Layout, LayoutKind, Marks};

pub use crate::layout::markers::MARKERS;

/// An ECS library's layout whose entities carry markers.
pub struct MarkedWorld {
    layout: Box<dyn HostLayout<f32>>,
}

/// The layout of `kind` with markers, built by the factory; `None` for a layout that is no
/// ECS library's (it has no [`Marks`]).
pub fn marked(kind: LayoutKind) -> Option<MarkedWorld> {
    let mut layout = kind.create_cpu::<f32>()?;
    layout.marks()?;
    Some(MarkedWorld { layout })
}

impl MarkedWorld {
    pub fn layout(&mut self) -> &mut dyn Layout<f32> {
        &mut *self.layout
    }

    fn marks(&mut self) -> &mut dyn Marks {
        self.layout
            .marks()
            .expect("a MarkedWorld is built only from a layout with marks")
    }

    /// Adds marker `bit` to the entity at logical index `index` (which lacks it).
    pub fn mark(&mut self, index: usize, bit: u8) {
        self.marks().mark(index, bit);
    }

    /// Removes marker `bit` from the entity at `index` (which has it).
    pub fn unmark(&mut self, index: usize, bit: u8) {
        self.marks().unmark(index, bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::kit::seeded::fill_seeded;
    use crate::threads::Threads;
    use crate::workload::{Dt, EntityState};

    fn states(layout: &dyn Layout<f32>) -> Vec<(u64, EntityState<f32>)> {
        let mut out = Vec::new();
        layout.for_each_entity(&mut |id, s| out.push((id, *s)));
        out
    }

    /// Markers move entities between archetypes (or sparse sets) but never change them: after
    /// spreading a world over 64 archetypes and stepping it, every library holds SoA's bits.
    #[test]
    fn marked_worlds_step_to_the_same_bits_as_soa() {
        let n = 2000;
        let dt = Dt::default().as_scalar::<f32>();
        let mut soa = LayoutKind::Soa.create_cpu::<f32>().unwrap();
        fill_seeded(soa.as_mut(), n);
        for _ in 0..3 {
            soa.step_move(dt, Threads::One);
            soa.step_regen(dt, Threads::One);
        }
        let expected = states(soa.as_ref());
        let mut checked = 0;
        for kind in LayoutKind::CPU {
            let Some(mut world) = marked(kind) else {
                assert!(
                    !kind.is_ecs(),
                    "{kind}: an ECS library's layout carries markers"
                );
                continue;
            };
            assert!(
                kind.is_ecs(),
                "{kind} carries markers, so its family is an ECS library's (Family::is_ecs)"
            );
            fill_seeded(world.layout(), n);
            for i in 0..n {
                for bit in (0..6).filter(|b| (i % 64) & (1 << b) != 0) {
                    world.mark(i, bit);
                }
            }
            // A toggle on top: on and off again.
            (0..n).for_each(|i| world.mark(i, 12));
            (0..n).for_each(|i| world.unmark(i, 12));
            for threads in [Threads::One, Threads::All, Threads::One] {
                world.layout().step_move(dt, threads);
                world.layout().step_regen(dt, threads);
            }
            assert_eq!(states(world.layout()), expected, "{kind}");
            checked += 1;
        }
        assert_eq!(checked, LayoutKind::ecs_layouts().len());
        assert!(marked(LayoutKind::Soa).is_none());
    }
}

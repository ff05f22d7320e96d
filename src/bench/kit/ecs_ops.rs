//! What the peers bench asks of an ECS library beyond the [`Layout`] trait: adding and removing a
//! zero-sized marker component on one entity, through each library's own call (Bevy's
//! `EntityWorldMut::insert`, hecs' `insert_one`, flecs' `add` of a tag entity, shipyard's
//! `add_component`). Marker `b` is one of 13 (`B = 0..13`), so entity `i` with the markers of
//! the bits of `i % A` puts A archetypes in one world: the `fragmentation` experiment's shape.
//! Toggling one marker per entity is the `migration` experiment's.

use crate::layout::{
    EcsLayout, FlecsLayout, HecsLayout, InSparseSet, Layout, LayoutKind, ShipyardLayout, Storage,
};

/// A zero-sized marker; the bit is in the type, so each is its own component.
pub struct Marker<const B: u8>;

impl<const B: u8> bevy_ecs::component::Component for Marker<B> {
    const STORAGE_TYPE: bevy_ecs::component::StorageType = bevy_ecs::component::StorageType::Table;
    type Mutability = bevy_ecs::component::Mutable;
}

impl<const B: u8> shipyard::Component for Marker<B> {
    type Tracking = shipyard::track::Untracked;
}

/// The markers there are.
pub const MARKERS: u8 = 13;

/// Runs `$body` with `$m` the marker type of bit `$bit` (0..13).
macro_rules! with_marker {
    ($bit:expr, $m:ident => $body:expr) => {
        match $bit {
            0 => {
                type $m = Marker<0>;
                $body
            }
            1 => {
                type $m = Marker<1>;
                $body
            }
            2 => {
                type $m = Marker<2>;
                $body
            }
            3 => {
                type $m = Marker<3>;
                $body
            }
            4 => {
                type $m = Marker<4>;
                $body
            }
            5 => {
                type $m = Marker<5>;
                $body
            }
            6 => {
                type $m = Marker<6>;
                $body
            }
            7 => {
                type $m = Marker<7>;
                $body
            }
            8 => {
                type $m = Marker<8>;
                $body
            }
            9 => {
                type $m = Marker<9>;
                $body
            }
            10 => {
                type $m = Marker<10>;
                $body
            }
            11 => {
                type $m = Marker<11>;
                $body
            }
            _ => {
                type $m = Marker<12>;
                $body
            }
        }
    };
}

/// An ECS layout whose entities can carry markers.
pub trait Marked {
    fn layout(&mut self) -> &mut dyn Layout<f32>;
    /// Adds marker `bit` to the entity at logical index `index` (which lacks it).
    fn mark(&mut self, index: usize, bit: u8);
    /// Removes marker `bit` from the entity at `index` (which has it).
    fn unmark(&mut self, index: usize, bit: u8);
}

/// The layout of `kind` with markers, `None` for a layout that is no ECS library.
pub fn marked(kind: LayoutKind) -> Option<Box<dyn Marked>> {
    Some(match kind {
        LayoutKind::EcsTable => Box::new(EcsLayout::<f32>::table()),
        LayoutKind::EcsContiguous => Box::new(EcsLayout::<f32>::contiguous()),
        LayoutKind::EcsSparse => Box::new(EcsLayout::<f32, InSparseSet>::sparse()),
        LayoutKind::Hecs => Box::new(HecsLayout::<f32>::new(false)),
        LayoutKind::HecsTuned => Box::new(HecsLayout::<f32>::new(true)),
        LayoutKind::Flecs => Box::new(FlecsMarked::new(false)),
        LayoutKind::FlecsTuned => Box::new(FlecsMarked::new(true)),
        LayoutKind::Shipyard => Box::new(ShipyardLayout::<f32>::new(false)),
        LayoutKind::ShipyardTuned => Box::new(ShipyardLayout::<f32>::new(true)),
        _ => return None,
    })
}

impl<K: Storage> Marked for EcsLayout<f32, K> {
    fn layout(&mut self) -> &mut dyn Layout<f32> {
        self
    }
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let mut e = self.world_mut().entity_mut(entity);
        with_marker!(bit, M => { e.insert(M {}); });
    }
    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let mut e = self.world_mut().entity_mut(entity);
        with_marker!(bit, M => { e.remove::<M>(); });
    }
}

impl Marked for HecsLayout<f32> {
    fn layout(&mut self) -> &mut dyn Layout<f32> {
        self
    }
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => world.insert_one(entity, M {}).expect("a listed entity"));
    }
    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => { world.remove_one::<M>(entity).expect("a marked entity"); });
    }
}

impl Marked for ShipyardLayout<f32> {
    fn layout(&mut self) -> &mut dyn Layout<f32> {
        self
    }
    fn mark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => world.add_component(entity, M {}));
    }
    fn unmark(&mut self, index: usize, bit: u8) {
        let entity = self.entities()[index];
        let world = self.world_mut();
        with_marker!(bit, M => { world.delete_component::<M>(entity); });
    }
}

/// flecs with its markers as tag entities, flecs' own way of adding a component made at run
/// time (no Rust type needed).
struct FlecsMarked {
    layout: FlecsLayout<f32>,
    tags: Vec<flecs_ecs::prelude::Entity>,
}

impl FlecsMarked {
    fn new(tuned: bool) -> Self {
        use flecs_ecs::prelude::*;
        let mut layout = FlecsLayout::<f32>::new(tuned);
        let world = layout.world_mut();
        let tags = (0..MARKERS).map(|_| world.entity().id()).collect();
        Self { layout, tags }
    }
}

impl Marked for FlecsMarked {
    fn layout(&mut self) -> &mut dyn Layout<f32> {
        &mut self.layout
    }
    fn mark(&mut self, index: usize, bit: u8) {
        let (entity, tag) = (self.layout.entities()[index], self.tags[bit as usize]);
        self.layout.world_mut().entity_from_id(entity).add(tag);
    }
    fn unmark(&mut self, index: usize, bit: u8) {
        let (entity, tag) = (self.layout.entities()[index], self.tags[bit as usize]);
        self.layout.world_mut().entity_from_id(entity).remove(tag);
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
                continue;
            };
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
        assert_eq!(checked, 9, "Bevy's three layouts and the peers' six");
        assert!(marked(LayoutKind::Soa).is_none());
    }
}

//! The components every ECS layout stores: Bevy's (`ecs.rs`), flecs' (`flecs_world.rs`, through
//! the same structs' flecs derive) and the interleaved move (`interleaved.rs`). Their own module,
//! so that the layouts that share them import them from here rather than from each other.
//!
//! Each component is generic over the scalar and over its storage, so that Bevy's table and
//! sparse-set variants run the very same systems.

use std::marker::PhantomData;

use bevy_ecs::component::{Component, Mutable, StorageType};
use bevy_ecs::entity::Entity;

use crate::scalar::Scalar;

/// Which storage a component set asks Bevy for. The component types are generic over it so the
/// table and sparse-set variants run the very same systems.
pub trait Storage: Send + Sync + 'static {
    const TYPE: StorageType;
}

pub struct InTable;
pub struct InSparseSet;

impl Storage for InTable {
    const TYPE: StorageType = StorageType::Table;
}
impl Storage for InSparseSet {
    const TYPE: StorageType = StorageType::SparseSet;
}

/// Declares a component generic over the scalar and the storage: what `#[derive(Component)]`
/// with `#[component(storage = ...)]` does, but with the storage chosen by a type parameter.
macro_rules! component {
    ($(#[$doc:meta])* $name:ident { $($field:ident),+ }) => {
        $(#[$doc])*
        // flecs' derive makes the same struct a flecs component too (`flecs_world.rs`).
        #[derive(flecs_ecs::prelude::Component)]
        pub struct $name<S: Scalar, K: Storage> {
            $(pub $field: S,)+
            _storage: PhantomData<fn() -> K>,
        }

        impl<S: Scalar, K: Storage> $name<S, K> {
            #[inline]
            pub fn new($($field: S),+) -> Self {
                Self { $($field,)+ _storage: PhantomData }
            }
        }

        impl<S: Scalar, K: Storage> Component for $name<S, K> {
            const STORAGE_TYPE: StorageType = K::TYPE;
            type Mutability = Mutable;
        }
    };
}

component!(
    /// Where the entity is.
    Position { x, y }
);
component!(
    /// How fast it moves, world units per second.
    Velocity { x, y }
);
component!(Health { hp });
component!(Energy { value });
component!(Regen { per_second });
component!(Armor { value });

/// The stable id every layout keys its checksum by.
#[derive(flecs_ecs::prelude::Component)]
pub struct EntityId<K: Storage>(pub u64, PhantomData<fn() -> K>);

impl<K: Storage> EntityId<K> {
    pub fn new(id: u64) -> Self {
        Self(id, PhantomData)
    }
}

impl<K: Storage> Component for EntityId<K> {
    const STORAGE_TYPE: StorageType = K::TYPE;
    type Mutability = Mutable;
}

/// The entity this one seeks, as Bevy code holds another entity: its `Entity` (none for a seeker
/// without a target; one that was despawned is found missing by `Query::get`).
pub struct SeekTarget<K: Storage>(pub Option<Entity>, PhantomData<fn() -> K>);

impl<K: Storage> SeekTarget<K> {
    pub fn new(target: Option<Entity>) -> Self {
        Self(target, PhantomData)
    }
}

impl<K: Storage> Component for SeekTarget<K> {
    const STORAGE_TYPE: StorageType = K::TYPE;
    type Mutability = Mutable;
}

/// One entity's components, borrowed from the world.
pub type Components<'a, S, K> = (
    &'a EntityId<K>,
    &'a Position<S, K>,
    &'a Velocity<S, K>,
    &'a Health<S, K>,
    &'a Energy<S, K>,
    &'a Regen<S, K>,
    &'a Armor<S, K>,
);

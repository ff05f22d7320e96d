//! Marker components: zero-sized components an ECS library's entity can carry, [`MARKERS`] of
//! them, each its own type. Entity `i` with the markers of the bits of `i % A` puts `A`
//! archetypes in one world: the bench's fragmentation and migration experiments. Carrying them is
//! a capability of the ECS libraries' layouts ([`super::Marks`]); the arrays have no archetypes
//! to spread entities over.

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

/// Runs `$body` with `$m` the marker type of bit `$bit` (0..13; any other bit is the last).
macro_rules! with_marker {
    ($bit:expr, $m:ident => $body:expr) => {
        match $bit {
            0 => {
                type $m = $crate::layout::markers::Marker<0>;
                $body
            }
            1 => {
                type $m = $crate::layout::markers::Marker<1>;
                $body
            }
            2 => {
                type $m = $crate::layout::markers::Marker<2>;
                $body
            }
            3 => {
                type $m = $crate::layout::markers::Marker<3>;
                $body
            }
            4 => {
                type $m = $crate::layout::markers::Marker<4>;
                $body
            }
            5 => {
                type $m = $crate::layout::markers::Marker<5>;
                $body
            }
            6 => {
                type $m = $crate::layout::markers::Marker<6>;
                $body
            }
            7 => {
                type $m = $crate::layout::markers::Marker<7>;
                $body
            }
            8 => {
                type $m = $crate::layout::markers::Marker<8>;
                $body
            }
            9 => {
                type $m = $crate::layout::markers::Marker<9>;
                $body
            }
            10 => {
                type $m = $crate::layout::markers::Marker<10>;
                $body
            }
            11 => {
                type $m = $crate::layout::markers::Marker<11>;
                $body
            }
            _ => {
                type $m = $crate::layout::markers::Marker<12>;
                $body
            }
        }
    };
}

pub(crate) use with_marker;

//! entity-layouts: how much does the memory layout of your entities cost per frame?
//!
//! The storage core: one workload ([`workload`]), the layouts under test ([`layout`]), a
//! population driven identically whatever its layout ([`swarm`]), and the proof that every layout
//! computes the same thing ([`verify`]). On top of it, the headless bench ([`bench`]).

pub mod bench;
pub mod driver;
pub mod error;
pub mod layout;
pub mod memory;
pub mod scalar;
pub mod script;
pub mod swarm;
pub mod threads;
pub mod verify;
pub mod workload;

pub use error::SimError;
pub use layout::{Layout, LayoutKind};
pub use scalar::Scalar;
pub use swarm::{Snapshot, Swarm};
pub use threads::Threads;
pub use workload::{Dt, EntityState};

//! entity-layouts: how much does the memory layout of your entities cost per frame?
//!
//! The crate in tiers, each using only the ones above it:
//!
//! **The storage core**, what every face of the project runs:
//! - [`scalar`]: the number type fields are stored in (`f32` for the app, `f64` for the JS study).
//! - [`workload`]: the entity's eight fields, how entity *i* is born, and the only copy of the
//!   per-entity math (`move_one`, `regen_one`, `pack_point`).
//! - [`threads`]: one thread or all cores, through Bevy's task pool.
//! - [`simd`]: the vector width the hot kernels run at, chosen at run time.
//! - [`memory`]: bytes per entity, resident and available memory, handing memory back.
//! - [`bandwidth`]: this machine's streaming limit, and a frame's effective bandwidth.
//! - [`layout`]: the storages under test, one file each, one trait.
//! - `gpu` (the `gpu` feature): the layout that lives on the GPU, its device and compute passes.
//! - [`catalog`]: every layout built by kind, where `layout/` and `gpu/` meet.
//! - [`swarm`]: one population in one layout: resize, churn, step, switch, checksum.
//! - [`action`] and [`driver`]: what a person can ask for, and THE frame (`Driver::frame_step`);
//!   [`until_over`]: the search behind `count until-over MS`.
//!
//! **Built on the core**:
//! - [`values`]: one parser per value a person types (count, churn, threads, layout, size,
//!   [`renderer`]).
//! - [`script`]: the text format of timed actions, and a windowless replay.
//! - [`verify`]: the proof that every layout computes bit-identical states.
//! - [`soak`]: long runs of random actions, checked against a reference and for memory growth.
//! - [`counters`]: why a layout costs what it does: instructions, cache and branch events per
//!   entity, from the CPU's counters or cachegrind's simulated ones.
//! - [`bench`]: the headless bench, the studies' experiments and past them.
//!
//! The windowed app (`src/app/`, behind the `app` feature) sits on top of all of it.

// No `unsafe` but four audited spots: two calls into glibc's allocator, in `memory`
// (`malloc_trim` and `mallopt`, which no safe wrapper offers), `Send` for a piece of wgpu's
// write-only staging memory in `workload` (wgpu-types implements it for sized types only), which
// lets the gather into that memory run on every core, and the calls into `#[target_feature]`
// kernels in `simd`, each after checking that the CPU has the feature. `deny` rather than `forbid`, so that those
// can say `allow`.
#![deny(unsafe_code)]

pub mod action;
pub mod bandwidth;
pub mod bench;
pub mod catalog;
pub mod counters;
pub mod driver;
pub mod error;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod layout;
pub mod memory;
pub mod renderer;
pub mod scalar;
pub mod script;
pub mod simd;
pub mod soak;
pub mod swarm;
pub mod threads;
pub mod until_over;
pub mod values;
pub mod verify;
pub mod workload;

pub use action::{Action, Outcome};
pub use driver::Driver;
pub use error::SimError;
pub use layout::{Layout, LayoutKind};
pub use scalar::Scalar;
pub use swarm::{Snapshot, Swarm};
pub use threads::Threads;
pub use workload::{Dt, EntityState, SpawnPattern};

//! entity-layouts: how much does the memory layout of your entities cost per frame?
//!
//! The crate in tiers, each using only the ones above it:
//!
//! **The storage core**, the crate `entity-layouts-core` (`core/`), re-exported here under the
//! same names: [`scalar`], [`error`], [`workload`] (the entity and the only copy of its systems'
//! math), [`threads`], [`simd`], [`memory`] and [`layout`] (the storages under test, one file
//! each, one trait). A crate of its own so that the kernels the counts check measures are
//! compiled apart from everything below (its docs say why).
//!
//! **The population, on the core**:
//! - [`bandwidth`]: this machine's streaming limit, and a frame's effective bandwidth.
//! - `gpu` (the `gpu` feature): the layout that lives on the GPU, its device and compute passes.
//! - [`catalog`]: every layout built by kind, where `layout/` and `gpu/` meet.
//! - [`swarm`]: one population in one layout: resize, churn, step, switch, checksum.
//! - [`action`] and [`driver`]: what a person can ask for, and THE frame (`Driver::frame_step`);
//!   [`until_over`]: the search behind `count until-over MS`.
//!
//! **Built on those**:
//! - [`values`]: one parser per value a person types (count, churn, size, [`renderer`]; the
//!   core's own values parse in the core).
//! - [`script`]: the text format of timed actions, and a windowless replay.
//! - [`verify`]: the proof that every layout computes bit-identical states.
//! - [`soak`]: long runs of random actions, checked against a reference and for memory growth.
//! - [`counters`]: why a layout costs what it does: instructions, cache and branch events per
//!   entity, from the CPU's counters or cachegrind's simulated ones.
//! - [`bench`]: the headless bench, the studies' experiments and past them.
//!
//! The windowed app (`src/app/`, behind the `app` feature) sits on top of all of it.

// No `unsafe` in this crate: the project's few audited spots are in the core, listed in its docs.
#![forbid(unsafe_code)]

// The storage core, a crate of its own (see its docs for why), under the names it always had.
pub use entity_layouts_core::{error, layout, memory, order, scalar, simd, threads, workload};

pub mod action;
pub mod bandwidth;
pub mod bench;
pub mod catalog;
pub mod commands;
pub mod core_wait;
pub mod counters;
pub mod driver;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod id_index;
pub mod pace;
pub mod progress;
pub mod renderer;
pub mod script;
pub mod signals;
pub mod soak;
pub mod swarm;
pub mod until_over;
pub mod values;
pub mod verify;

//! entity-layouts: how much does the memory layout of your entities cost per frame?
//!
//! The crate in tiers, each a folder, each using only the ones above it in this list:
//!
//! - **The storage core**, the crate `entity-layouts-core` (`core/`), re-exported here under the
//!   same names: [`scalar`], [`error`], [`workload`] (the entity and the only copy of its
//!   systems' math), [`threads`], [`simd`], [`memory`], [`order`] and [`layout`] (the storages
//!   under test, one file each, one trait). A crate of its own so that the kernels the counts
//!   check measures are compiled apart from everything below (its docs say why).
//! - [`runtime`]: the live simulation on the core: one population in one layout and at most
//!   one transition ([`runtime::swarm`]), THE frame ([`runtime::driver`]), what a person can ask
//!   for ([`runtime::action`]) and the values they type ([`runtime::values`]), pacing, the gpu
//!   layout, and the catalog that builds every layout.
//! - [`tools`]: what runs the runtime to prove or explain something: [`tools::verify`] (every
//!   layout bit-identical), [`tools::soak`], [`tools::script`] (talks, and their windowless
//!   replay), [`tools::counters`] (instructions and misses per entity), the machine's bandwidth.
//! - [`bench`]: the headless bench, the studies' experiments and past them.
//! - [`commands`]: each subcommand's options and body, for `main.rs`.
//!
//! The windowed app (`src/app/`, behind the `app` feature) is the binary's, on top of all of it.

// No `unsafe` in this crate: the project's few audited spots are in the core, listed in its docs.
#![forbid(unsafe_code)]

// The storage core, a crate of its own (see its docs for why), under the names it always had.
pub use entity_layouts_core::{
    error, layout, memory, neighbours, order, scalar, simd, threads, workload,
};

pub mod bench;
pub mod commands;
pub mod runtime;
pub mod tools;

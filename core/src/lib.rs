//! The storage core of entity-layouts: what an entity is, the only copy of its systems' math, and
//! every layout that stores it on the CPU. Everything else (the swarm, the driver, the app, the
//! bench) is built on this crate in `entity-layouts`, which re-exports these modules under the
//! same names.
//!
//! Why a crate of its own: the counts check (`cargo bench --bench counts`) measures these
//! kernels' instructions and misses per entity under cachegrind, to within a few percent. In one
//! crate with the app, where the compiler inlined a kernel's callees depended on how it split
//! that crate into codegen units, so code that no layout calls moved the counts far past that
//! (docs/bench.md, "Reading the counters").
//! This crate is compiled as one codegen unit (the workspace's release profile), and it builds
//! its `f32` and `f64` layouts itself ([`layout::LayoutKind::create_cpu`]), so the code that runs
//! a frame is compiled here, whatever the crates above it contain.
//!
//! The modules, each using only the ones above it:
//! - [`scalar`]: the number type fields are stored in (`f32` for the app, `f64` for the JS study).
//! - [`error`]: what can go wrong, each message naming the bad value and the accepted range.
//! - [`workload`]: the entity's eight fields, how entity *i* is born, and the per-entity math
//!   (`move_one`, `regen_one`, `pack_point`).
//! - [`threads`]: one thread or all cores, through Bevy's task pool.
//! - [`simd`]: the vector width the hot kernels run at, chosen at run time.
//! - [`memory`]: bytes per entity, resident and available memory, handing memory back.
//! - [`neighbours`]: the grid that finds who is near whom, and the two forms of the neighbour
//!   pass.
//! - [`order`]: which entity sits next to which (by id, or by seek group), and the sort key.
//! - [`layout`]: the storages under test, one file each, one trait.
//! - [`values`]: the core's values as a person types them (layout, threads, SIMD tier, pattern).

// No `unsafe` but seven audited sites, each with its SAFETY comment: two calls into glibc's
// allocator in `memory` (`malloc_trim` and `mallopt`, which no safe wrapper offers); `Send` for a
// piece of wgpu's write-only staging memory in `workload` (wgpu-types implements it for sized
// types only; compile-time assertions hold its layout), which lets the gather into that memory
// run on every core; the two calls into `#[target_feature]` kernels in `simd`, each after
// checking that the CPU has the feature; the cache prefetch hint in `layout::seeking` (the tuned
// seek's); and `setpriority` in `threads`, which lowers the app's
// clip encoder's priority. `deny` rather than `forbid`, so that those can say `allow`.
#![deny(unsafe_code)]

pub mod error;
pub mod layout;
pub mod memory;
pub mod neighbours;
pub mod order;
pub mod scalar;
pub mod simd;
pub mod threads;
pub mod values;
pub mod workload;

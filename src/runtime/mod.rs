//! The live simulation on the storage core: what the app, `replay`, `verify`, `soak` and the
//! bench's frame experiments all run.
//!
//! - [`swarm`]: one population in one layout, and at most one transition into another (a
//!   switch, a sort, a move to grow), carried out a frame's share at a time.
//! - [`driver`]: THE frame (`Driver::frame_step`), the settings a person changes, the pacing.
//! - [`action`]: what a person can ask for, from a key, a panel widget or a script line alike;
//!   [`values`]: one parser per value they type; [`renderer`]: how the app draws.
//! - [`pace`], [`progress`], [`until_over`], [`core_wait`]: how much of a frame work may take,
//!   how far it has come, the search for the count that crosses a line, and the time the
//!   frame's thread waited for a core.
//! - [`catalog`]: every layout built by kind, where the core's layouts and the gpu one meet;
//!   `gpu`: the layout that lives on the GPU, and [`device`]: what such a layout is beyond a
//!   layout. [`id_index`]: each id's logical index.

pub mod action;
pub mod catalog;
pub mod core_wait;
pub mod device;
pub mod driver;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod id_index;
pub mod pace;
pub mod progress;
pub mod renderer;
pub mod swarm;
pub mod until_over;
pub mod values;

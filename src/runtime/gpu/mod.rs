//! The gpu layout: the swarm stored and simulated on the GPU, switchable live like the CPU
//! layouts. [`context`] finds (or is handed) the device, [`kernels`] builds the compute
//! pipelines from assets/shaders/simulate.wgsl, [`slots`] batches appends and swap-removes into
//! one flush, [`layout`] is the `Layout` itself, [`grid`] runs the neighbours' grid and pass,
//! [`readback`] reads slots back through staging buffers and [`timer`] times the passes on the
//! device. f32 only: WGSL has no portable f64.

pub mod context;
mod grid;
pub mod kernels;
pub mod layout;
mod readback;
pub mod slots;
mod timer;

pub use context::{CapacityLimit, GpuContext};
pub use layout::GpuLayout;

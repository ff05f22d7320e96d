//! The gpu layout: the swarm stored and simulated on the GPU, switchable live like the CPU
//! layouts. [`context`] finds (or is handed) the device, [`kernels`] builds the compute
//! pipelines from assets/shaders/simulate.wgsl, [`slots`] batches appends and swap-removes into
//! one flush, and [`layout`] is the `Layout` itself. f32 only: WGSL has no portable f64.

pub mod context;
pub mod kernels;
pub mod layout;
pub mod slots;

pub use context::{CapacityLimit, GpuContext};
pub use layout::{GpuLayout, GpuPoints};

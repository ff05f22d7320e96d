//! Every layout a person can pick, built by kind: where the CPU layouts (`layout/`) and the GPU
//! one (`gpu/`, which builds on `layout/`) meet, so that neither reaches into the other. The
//! swarm, the bench and the tests build layouts through [`create`] here.

use crate::error::SimError;
use crate::layout::{CpuLayouts, Layout, LayoutKind, OnDevice};

/// A number type every layout is built for, or that says why not: the CPU layouts for `f32` and
/// `f64` (built in the storage core, [`CpuLayouts`]), the gpu layout for `f32` only (WGSL has no
/// portable `f64`).
pub trait AllLayouts: CpuLayouts {
    /// An empty gpu layout, or why this machine (or build, or number type) cannot have one.
    fn create_gpu() -> Result<Box<dyn Layout<Self>>, SimError>;
}

/// Builds an empty layout of `kind`, or says why this machine (or build) cannot.
pub fn create<S: AllLayouts>(kind: LayoutKind) -> Result<Box<dyn Layout<S>>, SimError> {
    match S::create_cpu(kind) {
        Some(layout) => Ok(layout),
        None => S::create_gpu(),
    }
}

fn unavailable(reason: String) -> SimError {
    SimError::LayoutUnavailable {
        layout: LayoutKind::Gpu.name().into(),
        reason,
    }
}

impl AllLayouts for f32 {
    #[cfg(feature = "gpu")]
    fn create_gpu() -> Result<Box<dyn Layout<f32>>, SimError> {
        let ctx = crate::runtime::gpu::context::shared().map_err(unavailable)?;
        Ok(Box::new(
            crate::runtime::gpu::GpuLayout::new(ctx).map_err(unavailable)?,
        ))
    }

    #[cfg(not(feature = "gpu"))]
    fn create_gpu() -> Result<Box<dyn Layout<f32>>, SimError> {
        Err(unavailable(
            "this build has no GPU support (built without the `gpu` feature)".into(),
        ))
    }
}

impl AllLayouts for f64 {
    fn create_gpu() -> Result<Box<dyn Layout<f64>>, SimError> {
        Err(unavailable(
            "it is f32 only (WGSL has no portable f64); run it with f32".into(),
        ))
    }
}

/// What the renderer draws as is for a layout on the device: the gpu layout's points buffer. The
/// storage core cannot name the device's types, so the layout hands it over as its own type, and
/// this is where it is taken back out (the one place that knows both sides).
#[cfg(feature = "gpu")]
pub fn device_points(device: &dyn OnDevice) -> Option<crate::runtime::gpu::GpuPoints> {
    device
        .device_points()
        .downcast::<crate::runtime::gpu::GpuPoints>()
        .ok()
        .map(|points| *points)
}

/// The most entities a layout kind can hold on this machine's device, and the limit that says
/// so; `None` where only memory limits it.
pub fn capacity_limit(kind: LayoutKind) -> Option<CapacityLimit> {
    match kind {
        #[cfg(feature = "gpu")]
        LayoutKind::Gpu => crate::runtime::gpu::context::shared()
            .ok()
            .map(|ctx| ctx.capacity_limit()),
        _ => None,
    }
}

/// A device limit on a layout's population.
#[cfg(feature = "gpu")]
pub use crate::runtime::gpu::CapacityLimit;

/// A device limit on a layout's population.
#[cfg(not(feature = "gpu"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityLimit {
    pub max_entities: usize,
    pub limit: String,
}

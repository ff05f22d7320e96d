//! Every layout a person can pick, built by kind: where the CPU layouts (`layout/`) and the GPU
//! one (`gpu/`, which builds on `layout/`) meet, so that neither reaches into the other. The
//! swarm, the bench and the tests build layouts through [`create`] here.

use crate::error::SimError;
use crate::layout::{Layout, LayoutKind};
use crate::scalar::Scalar;

/// Builds an empty layout of `kind`, or says why this machine (or build) cannot.
pub fn create<S: Scalar>(kind: LayoutKind) -> Result<Box<dyn Layout<S>>, SimError> {
    match kind.create_cpu::<S>() {
        Some(layout) => Ok(layout),
        None => gpu_layout::<S>(),
    }
}

/// The most entities a layout kind can hold on this machine's device, and the limit that says
/// so; `None` where only memory limits it.
pub fn capacity_limit(kind: LayoutKind) -> Option<CapacityLimit> {
    match kind {
        #[cfg(feature = "gpu")]
        LayoutKind::Gpu => crate::gpu::context::shared()
            .ok()
            .map(|ctx| ctx.capacity_limit()),
        _ => None,
    }
}

/// A device limit on a layout's population.
#[cfg(feature = "gpu")]
pub use crate::gpu::CapacityLimit;

/// A device limit on a layout's population.
#[cfg(not(feature = "gpu"))]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityLimit {
    pub max_entities: usize,
    pub limit: String,
}

/// The gpu layout is `Layout<f32>` only; for `S = f32` the downcast below is the identity, for
/// `f64` it fails and the error says why.
#[cfg(feature = "gpu")]
fn gpu_layout<S: Scalar>() -> Result<Box<dyn Layout<S>>, SimError> {
    let unavailable = |reason: String| SimError::LayoutUnavailable {
        layout: LayoutKind::Gpu.name(),
        reason,
    };
    if size_of::<S>() != size_of::<f32>() {
        return Err(unavailable(
            "it is f32 only (WGSL has no portable f64); run it with f32".into(),
        ));
    }
    let ctx = crate::gpu::context::shared().map_err(unavailable)?;
    let layout: Box<dyn Layout<f32>> =
        Box::new(crate::gpu::GpuLayout::new(ctx).map_err(unavailable)?);
    let any: Box<dyn std::any::Any> = Box::new(layout);
    any.downcast::<Box<dyn Layout<S>>>()
        .map(|b| *b)
        .map_err(|_| unavailable("it is f32 only".into()))
}

#[cfg(not(feature = "gpu"))]
fn gpu_layout<S: Scalar>() -> Result<Box<dyn Layout<S>>, SimError> {
    Err(SimError::LayoutUnavailable {
        layout: LayoutKind::Gpu.name(),
        reason: "this build has no GPU support (built without the `gpu` feature)".into(),
    })
}

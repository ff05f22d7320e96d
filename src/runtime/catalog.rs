//! Every layout a person can pick, built by kind: where the CPU layouts (the core's factory) and
//! the GPU one (`gpu/`, which builds on the core) meet, so that neither reaches into the other.
//! The swarm, the bench and the tests build layouts through [`create`] here, and hold what it
//! returns as a [`Built`] layout: one in this process's memory, or the one on the device.

use std::ops::{Deref, DerefMut, Range};

use crate::error::SimError;
use crate::layout::factory::CpuLayouts;
use crate::layout::regions::Region;
use crate::layout::{HostLayout, Layout, LayoutKind};
#[cfg(feature = "gpu")]
use crate::runtime::device::DeviceLayout;
pub use crate::runtime::device::DeviceTime;

/// A number type every layout is built for, or that says why not: the CPU layouts for `f32` and
/// `f64` (built in the storage core, [`CpuLayouts`]), the gpu layout for `f32` only (WGSL has no
/// portable `f64`).
pub trait AllLayouts: CpuLayouts {
    /// An empty gpu layout, or why this machine (or build, or number type) cannot have one.
    fn create_device() -> Result<Built<Self>, SimError>;
}

/// A layout as the swarm holds it: in this process's memory, or on the device. Both are a
/// [`Layout`] (this dereferences to it); what only one of them can do is reached by matching:
/// where a host layout's bytes are ([`Built::regions`]), and the device's own clock, queue and
/// buffer (`DeviceLayout`, in [`crate::runtime::device`]).
pub enum Built<S: AllLayouts> {
    Host(Box<dyn HostLayout<S>>),
    #[cfg(feature = "gpu")]
    Device(Box<dyn DeviceLayout<S>>),
}

impl<S: AllLayouts> Deref for Built<S> {
    type Target = dyn Layout<S>;

    fn deref(&self) -> &Self::Target {
        match self {
            Built::Host(layout) => layout.as_ref(),
            #[cfg(feature = "gpu")]
            Built::Device(layout) => layout.as_ref(),
        }
    }
}

impl<S: AllLayouts> DerefMut for Built<S> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Built::Host(layout) => layout.as_mut(),
            #[cfg(feature = "gpu")]
            Built::Device(layout) => layout.as_mut(),
        }
    }
}

impl<S: AllLayouts> Built<S> {
    /// Appends where the entities at `range` live; nothing for the layout on the device, whose
    /// bytes are not in this process's memory.
    pub fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        match self {
            Built::Host(layout) => layout.regions(range, out),
            #[cfg(feature = "gpu")]
            Built::Device(_) => {}
        }
    }

    /// The layout on the device, where this is it.
    #[cfg(feature = "gpu")]
    pub fn on_device(&self) -> Option<&dyn DeviceLayout<S>> {
        match self {
            Built::Host(_) => None,
            Built::Device(layout) => Some(layout.as_ref()),
        }
    }

    /// The simulate time measured on the device, for the layout that simulates there.
    pub fn device_time(&self) -> Option<DeviceTime> {
        #[cfg(feature = "gpu")]
        if let Some(device) = self.on_device() {
            return Some(device.device_time());
        }
        None
    }

    /// Waits until the device has carried out everything submitted (benchmarks); nothing for a
    /// layout in host memory.
    pub fn finish_device_work(&self) {
        #[cfg(feature = "gpu")]
        if let Some(device) = self.on_device() {
            device.finish_device_work();
        }
    }

    /// Lets a layout whose reads are round trips start reading the entities at `range`; nothing
    /// for a layout in host memory.
    pub fn prepare_reads(&self, _range: Range<usize>) {
        #[cfg(feature = "gpu")]
        if let Some(device) = self.on_device() {
            device.prepare_reads(_range);
        }
    }

    /// Whether a read of this layout is a round trip to a device.
    pub fn reads_are_round_trips(&self) -> bool {
        #[cfg(feature = "gpu")]
        if self.on_device().is_some() {
            return true;
        }
        false
    }
}

/// Builds an empty layout of `kind`, or says why this machine (or build) cannot.
pub fn create<S: AllLayouts>(kind: LayoutKind) -> Result<Built<S>, SimError> {
    match kind.create_cpu::<S>() {
        Some(layout) => Ok(Built::Host(layout)),
        None => S::create_device(),
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
    fn create_device() -> Result<Built<f32>, SimError> {
        let ctx = crate::runtime::gpu::context::shared().map_err(unavailable)?;
        let layout = crate::runtime::gpu::GpuLayout::new(ctx).map_err(unavailable)?;
        Ok(Built::Device(Box::new(layout)))
    }

    #[cfg(not(feature = "gpu"))]
    fn create_device() -> Result<Built<f32>, SimError> {
        Err(unavailable(
            "this build has no GPU support (built without the `gpu` feature)".into(),
        ))
    }
}

impl AllLayouts for f64 {
    fn create_device() -> Result<Built<f64>, SimError> {
        Err(unavailable(
            "it is f32 only (WGSL has no portable f64); run it with f32".into(),
        ))
    }
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

//! What the layout on the device is beyond a [`Layout`]: its data is not in this process's
//! memory, its simulate time is the device's, and what it computes arrives when the device is
//! done. Below both the gpu layout that implements it and the catalog that holds it.

#[cfg(feature = "gpu")]
use std::ops::Range;
use std::time::Duration;

#[cfg(feature = "gpu")]
use crate::layout::Layout;
#[cfg(feature = "gpu")]
use crate::scalar::Scalar;

/// A simulate time measured on the device (GPU timestamp queries), or why there is none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DeviceTime {
    Measured(Duration),
    /// Timestamps are on their way back (the first frames after a switch).
    Waiting,
    /// The adapter cannot measure it; reports say so rather than show a CPU time.
    Unavailable(&'static str),
}

/// The layout on the device: what it does beyond [`Layout`].
#[cfg(feature = "gpu")]
pub trait DeviceLayout<S: Scalar>: Layout<S> {
    /// The simulate time measured on the device: the wall clock around `step_move` and
    /// `step_regen` only measures submitting the work.
    fn device_time(&self) -> DeviceTime;
    /// Waits until the device has carried out everything submitted so far (benchmarks time a
    /// frame this way).
    fn finish_device_work(&self);
    /// A hint: the entities at logical indices `range` are about to be read one at a time (a
    /// churn during a switch out of this layout); reads are round trips, so fetch them in one.
    fn prepare_reads(&self, range: Range<usize>);
    /// The buffer the renderer draws as is.
    fn points(&self) -> DevicePoints;
}

/// The buffer the renderer draws, and how many points in it are live.
#[cfg(feature = "gpu")]
#[derive(Clone, Debug)]
pub struct DevicePoints {
    pub buffer: wgpu::Buffer,
    pub len: usize,
}

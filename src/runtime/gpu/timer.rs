//! The simulate time on the device, where the adapter has timestamp queries: the gpu layout's
//! move, regen and (when it runs) seek passes are timed by the device itself, and the times come back a frame or two
//! later through a small ring of mapped buffers, never waited for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::context::GpuContext;
use super::readback::{MapState, Mapping};
use crate::runtime::device::DeviceTime;

/// The simulate time on the device: timestamps around the move, regen and seek passes, resolved each
/// frame into one of a few small buffers and read back when the device is done with it (a frame
/// or two later), never waited for.
pub(super) struct Timer {
    pub(super) queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    slots: Vec<TimerSlot>,
    period_ns: f64,
    last: Mutex<Option<Duration>>,
}

struct TimerSlot {
    buffer: wgpu::Buffer,
    /// Idle: free; pending: its copy submitted and mapping; mapped: to be read. A refused
    /// mapping frees the slot: that frame goes unmeasured.
    mapping: Mapping,
    /// Whether the frame resolved into it ran seek (its queries 4 and 5 are that frame's).
    with_seek: AtomicBool,
}

/// Move (0, 1), regen (2, 3) and seek (4, 5).
const QUERIES: u32 = 6;
/// The first of the seek pass's two queries.
pub(super) const SEEK_QUERY: u32 = 4;
const TIMER_SLOTS: usize = 3;

impl Timer {
    pub(super) fn new(ctx: &GpuContext) -> Self {
        let bytes = u64::from(QUERIES) * 8;
        let buffer = |label: &str, usage| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            queries: ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("simulate time"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolve: buffer(
                "timestamps",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            slots: (0..TIMER_SLOTS)
                .map(|_| TimerSlot {
                    buffer: buffer(
                        "timestamps read back",
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    ),
                    mapping: Mapping::default(),
                    with_seek: AtomicBool::new(false),
                })
                .collect(),
            period_ns: f64::from(ctx.queue.get_timestamp_period()),
            last: Mutex::new(None),
        }
    }

    /// Reads what finished mapping, then resolves this frame's queries into a free slot (none
    /// free: this frame goes unmeasured). `seeked`: this frame ran the seek pass, whose time
    /// counts too. Returns the slot to start mapping after the submit.
    pub(super) fn resolve(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        seeked: bool,
    ) -> Option<usize> {
        for slot in &self.slots {
            if slot.mapping.state() == MapState::Mapped {
                let ticks: Vec<u64> =
                    bytemuck::cast_slice(&slot.buffer.get_mapped_range(..)).to_vec();
                slot.buffer.unmap();
                slot.mapping.set(MapState::Idle);
                let span = |a: u64, b: u64| b.saturating_sub(a) as f64;
                let mut ticks_spent = span(ticks[0], ticks[1]) + span(ticks[2], ticks[3]);
                if slot.with_seek.load(Ordering::Relaxed) {
                    ticks_spent += span(ticks[4], ticks[5]);
                }
                let ns = ticks_spent * self.period_ns;
                *self.last.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Duration::from_nanos(ns as u64));
            }
        }
        let free = self
            .slots
            .iter()
            .position(|s| matches!(s.mapping.state(), MapState::Idle | MapState::Failed))?;
        // A frame without seek leaves queries 4 and 5 unwritten: resolve only what it wrote.
        let written = if seeked { QUERIES } else { SEEK_QUERY };
        self.slots[free].with_seek.store(seeked, Ordering::Relaxed);
        encoder.resolve_query_set(&self.queries, 0..written, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(
            &self.resolve,
            0,
            &self.slots[free].buffer,
            0,
            u64::from(written) * 8,
        );
        Some(free)
    }

    pub(super) fn start_read(&self, index: usize) {
        let slot = &self.slots[index];
        slot.mapping.start(&slot.buffer);
    }

    pub(super) fn last(&self) -> DeviceTime {
        match *self.last.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(d) => DeviceTime::Measured(d),
            None => DeviceTime::Waiting,
        }
    }
}

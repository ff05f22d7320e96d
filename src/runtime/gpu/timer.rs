//! The simulate time on the device, where the adapter has timestamp queries: the gpu layout's
//! move, regen and (when they run) seek and neighbour passes are timed by the device itself, and
//! the times come back a frame or two later through a small ring of mapped buffers, never
//! waited for.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::context::GpuContext;
use super::readback::{MapState, Mapping};
use crate::runtime::device::DeviceTime;

/// The simulate time on the device: timestamps around the move, regen, seek and neighbour passes, resolved each
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
    /// Whether it ran the neighbour pass (queries 6 and 7).
    with_avoid: AtomicBool,
}

/// Which of the passes that do not run every frame this frame ran.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ran {
    pub seek: bool,
    pub avoid: bool,
}

/// Move (0, 1), regen (2, 3), seek (4, 5) and the neighbours (6, 7).
const QUERIES: u32 = 8;
/// The first of the seek pass's two queries.
pub(super) const SEEK_QUERY: u32 = 4;
/// The first of the neighbour pass's two queries.
pub(super) const AVOID_QUERY: u32 = 6;
const TIMER_SLOTS: usize = 3;

impl Timer {
    pub(super) fn new(ctx: &GpuContext) -> Self {
        let buffer = |label: &str, size, usage| {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        // Each range of queries resolves at an aligned offset of its own: three of them.
        let resolve_bytes = 3 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
        Self {
            queries: ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("simulate time"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolve: buffer(
                "timestamps",
                resolve_bytes,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            slots: (0..TIMER_SLOTS)
                .map(|_| TimerSlot {
                    buffer: buffer(
                        "timestamps read back",
                        u64::from(QUERIES) * 8,
                        wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    ),
                    mapping: Mapping::default(),
                    with_seek: AtomicBool::new(false),
                    with_avoid: AtomicBool::new(false),
                })
                .collect(),
            period_ns: f64::from(ctx.queue.get_timestamp_period()),
            last: Mutex::new(None),
        }
    }

    /// Reads what finished mapping, then resolves this frame's queries into a free slot (none
    /// free: this frame goes unmeasured). `ran`: the passes this frame ran beside move and
    /// regen, whose time counts too. Returns the slot to start mapping after the submit.
    pub(super) fn resolve(&self, encoder: &mut wgpu::CommandEncoder, ran: Ran) -> Option<usize> {
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
                if slot.with_avoid.load(Ordering::Relaxed) {
                    ticks_spent += span(ticks[6], ticks[7]);
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
        // A frame without seek or the neighbours leaves their queries unwritten: resolve only
        // what it wrote, each range at its own aligned offset, then into its place in the slot.
        self.slots[free]
            .with_seek
            .store(ran.seek, Ordering::Relaxed);
        self.slots[free]
            .with_avoid
            .store(ran.avoid, Ordering::Relaxed);
        let ranges = [
            (0, SEEK_QUERY, true),
            (SEEK_QUERY, AVOID_QUERY, ran.seek),
            (AVOID_QUERY, QUERIES, ran.avoid),
        ];
        for (k, &(first, end, written)) in ranges.iter().enumerate() {
            if !written {
                continue;
            }
            let at = k as u64 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;
            encoder.resolve_query_set(&self.queries, first..end, &self.resolve, at);
            encoder.copy_buffer_to_buffer(
                &self.resolve,
                at,
                &self.slots[free].buffer,
                u64::from(first) * 8,
                u64::from(end - first) * 8,
            );
        }
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

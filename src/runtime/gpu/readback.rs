//! Reading the gpu layout back: slots copied from the device's columns into a staging buffer,
//! mapped, and decoded into states, a bounded chunk at a time; a read is started without waiting
//! (a switch's next chunk, the entities a churn will read) and finished when its states are
//! needed. [`Mapping`] is the one encoding of a staging buffer's mapping state, which the timer's
//! ring of buffers ([`super::timer`]) shares.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use super::context::GpuContext;
use crate::workload::EntityState;

/// Bytes of one field of one entity on the device.
pub(super) const F32: u64 = 4;

/// Where a staging buffer's mapping stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MapState {
    /// Not asked for (or read and unmapped: free again).
    Idle,
    /// Asked for: the copies before it have not landed, or no poll has run its callback yet.
    Pending,
    Mapped,
    /// The device refused it (only a lost device does).
    Failed,
}

impl MapState {
    const ALL: [MapState; 4] = [
        MapState::Idle,
        MapState::Pending,
        MapState::Mapped,
        MapState::Failed,
    ];
}

/// A staging buffer's [`MapState`], shared with the callback that wgpu runs when the mapping
/// lands (on whichever thread polls the device).
#[derive(Clone, Debug, Default)]
pub(super) struct Mapping(Arc<AtomicU8>);

impl Mapping {
    pub(super) fn state(&self) -> MapState {
        MapState::ALL[usize::from(self.0.load(Ordering::Acquire))]
    }

    pub(super) fn set(&self, state: MapState) {
        self.0.store(state as u8, Ordering::Release);
    }

    /// Asks for `staging` to be mapped for reading; the state turns `Mapped` (or `Failed`) when
    /// the copies before it have landed and a poll has run the callback.
    pub(super) fn start(&self, staging: &wgpu::Buffer) {
        self.set(MapState::Pending);
        let done = self.clone();
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            done.set(if result.is_ok() {
                MapState::Mapped
            } else {
                MapState::Failed
            });
        });
    }
}

/// `words` u32s of `buffer` (slots `range`), copied to a staging buffer, mapped and read.
pub(super) fn read_buffer(
    ctx: &GpuContext,
    buffer: &wgpu::Buffer,
    range: Range<usize>,
) -> Vec<u32> {
    if range.is_empty() {
        return Vec::new();
    }
    let (staging, mapped) = stage(ctx, std::iter::once(buffer), range);
    wait_mapped(ctx, &mapped);
    let words = bytemuck::cast_slice(&staging.get_mapped_range(..)).to_vec();
    staging.unmap();
    words
}

/// Copies slots `slots` of each of `columns`, one after another, into a new staging buffer, and
/// asks for it to be mapped for reading; waits for nothing.
pub(super) fn stage<'a>(
    ctx: &GpuContext,
    columns: impl ExactSizeIterator<Item = &'a wgpu::Buffer>,
    slots: Range<usize>,
) -> (wgpu::Buffer, Mapping) {
    let column_bytes = slots.len() as u64 * F32;
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read back"),
        size: column_bytes * columns.len() as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read back"),
        });
    for (k, column) in columns.enumerate() {
        encoder.copy_buffer_to_buffer(
            column,
            slots.start as u64 * F32,
            &staging,
            k as u64 * column_bytes,
            column_bytes,
        );
    }
    ctx.queue.submit([encoder.finish()]);
    let mapping = Mapping::default();
    mapping.start(&staging);
    (staging, mapping)
}

/// Waits until a mapping asked for is done.
fn wait_mapped(ctx: &GpuContext, mapping: &Mapping) {
    // Another thread polling the same device (the app's render thread, or a parallel test) may
    // be the one that runs the callback, a moment after our own wait returns: wait for the
    // callback itself, not only for the device.
    loop {
        match mapping.state() {
            MapState::Mapped => return,
            // Only a lost device fails a map; nothing downstream can continue without the data.
            MapState::Failed => panic!("the GPU device was lost while reading the gpu layout back"),
            MapState::Idle | MapState::Pending => {}
        }
        let _ = ctx.device.poll(wgpu::PollType::wait_indefinitely());
        std::thread::yield_now();
    }
}

/// A read-back of a range of slots: started (copied and being mapped), then finished (decoded).
pub(super) struct Read {
    pub(super) slots: Range<usize>,
    pub(super) staging: Option<(wgpu::Buffer, Mapping)>,
    pub(super) states: Vec<EntityState<f32>>,
}

impl Read {
    pub(super) fn covers(&self, slot: usize) -> bool {
        self.slots.contains(&slot)
    }

    /// Waits for the mapping if it has not landed yet, and decodes the fields.
    pub(super) fn finish(&mut self, ctx: &GpuContext) {
        let Some((staging, mapping)) = self.staging.take() else {
            return;
        };
        wait_mapped(ctx, &mapping);
        let n = self.slots.len();
        let mut states = vec![EntityState::default(); n];
        {
            let bytes = staging.get_mapped_range(..);
            let values: &[f32] = bytemuck::cast_slice(&bytes);
            for (f, column) in values.chunks_exact(n).enumerate() {
                for (state, &v) in states.iter_mut().zip(column) {
                    match f {
                        0 => state.x = v,
                        1 => state.y = v,
                        2 => state.vx = v,
                        3 => state.vy = v,
                        4 => state.hp = v,
                        5 => state.energy = v,
                        6 => state.regen = v,
                        _ => state.armor = v,
                    }
                }
            }
        }
        staging.unmap();
        self.states = states;
    }

    pub(super) fn get(&self, slot: usize) -> Option<&EntityState<f32>> {
        self.states.get(slot.checked_sub(self.slots.start)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_state_reads_back_as_it_was_set() {
        let mapping = Mapping::default();
        assert_eq!(mapping.state(), MapState::Idle);
        for state in MapState::ALL {
            mapping.set(state);
            assert_eq!(mapping.clone().state(), state);
        }
    }
}

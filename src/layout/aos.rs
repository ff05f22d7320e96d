//! Array-of-structs: one `Vec` of the `#[repr(C)]` entity, fields interleaved (32 bytes at
//! `f32`, 64 at `f64`). One stream whatever a system reads, so its cost is flat in the number of
//! fields touched: it drags whole records through the cache, which wastes bandwidth when a system
//! reads two fields of eight and wins when it reads most of them. Reproduces the JS study's
//! interleaved `Float64Array(n * 8)` ("AoS") column.

use std::ops::Range;

use crate::layout::kernels::{move_records, regen_records};
use crate::layout::regions::{Field, Region, state_regions};
use crate::layout::{Layout, LayoutKind, ReserveError, shrink_if_sparse};
use crate::memory::MemoryUse;
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{EntityState, PointSink, SinkPart, point_bytes, sink_chunks};

#[derive(Default)]
pub struct Aos<S> {
    ids: Vec<u64>,
    entities: Vec<EntityState<S>>,
    tier: SimdTier,
}

impl<S: Scalar> Layout<S> for Aos<S> {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Aos
    }

    fn len(&self) -> usize {
        self.entities.len()
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.ids.try_reserve(additional)?;
        Ok(self.entities.try_reserve(additional)?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.ids.extend_from_slice(ids);
        self.entities.extend_from_slice(states);
    }

    fn swap_remove(&mut self, index: usize) {
        self.ids.swap_remove(index);
        self.entities.swap_remove(index);
    }

    fn truncate(&mut self, len: usize) {
        self.ids.truncate(len);
        self.entities.truncate(len);
        self.release_unused();
    }

    fn release_unused(&mut self) {
        shrink_if_sparse(&mut self.ids);
        shrink_if_sparse(&mut self.entities);
    }

    fn set_simd(&mut self, tier: SimdTier) {
        self.tier = tier;
    }

    fn simd(&self) -> SimdTier {
        self.tier
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let (c, tier) = (chunk_len(threads, self.len()), self.tier);
        for_each_part(threads, self.entities.chunks_mut(c), |records| {
            move_records(tier, records, dt);
        });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let (c, tier) = (chunk_len(threads, self.len()), self.tier);
        for_each_part(threads, self.entities.chunks_mut(c), |records| {
            regen_records(tier, records, dt);
        });
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let c = chunk_len(threads, self.len());
        let parts = sink_chunks(out, c).zip(self.entities.chunks(c));
        for_each_part(threads, parts, |(SinkPart(out), entities)| {
            out.write_iter(entities.iter().map(|e| point_bytes(e.x, e.y, e.hp)));
        });
    }

    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            state_regions(i, &self.entities[i], out);
            out.push(Region::of(&self.ids[i], Field::Id, i));
        }
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for (id, state) in self.ids[range.clone()].iter().zip(&self.entities[range]) {
            visit(*id, state);
        }
    }

    fn memory(&self) -> MemoryUse {
        let entity = size_of::<EntityState<S>>() as u64;
        let id = size_of::<u64>() as u64;
        MemoryUse {
            payload_bytes: self.len() as u64 * (entity + id),
            allocated_bytes: self.entities.capacity() as u64 * entity
                + self.ids.capacity() as u64 * id,
        }
    }
}

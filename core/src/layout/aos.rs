//! Array-of-structs: one `Vec` of the `#[repr(C)]` entity, fields interleaved (32 bytes at
//! `f32`, 64 at `f64`). One stream whatever a system reads, so its cost is flat in the number of
//! fields touched: it drags whole records through the cache, which wastes bandwidth when a system
//! reads two fields of eight and wins when it reads most of them. Reproduces the JS study's
//! interleaved `Float64Array(n * 8)` ("AoS") column.
//!
//! Seeking another entity goes through a generational handle ([`Targets`], beside the records:
//! the record is the studies' eight fields), then reads the target's position from its one record:
//! the layout where a lookup by handle touches the fewest cache lines.

use std::ops::Range;

use crate::layout::kernels::{move_records, regen_records};
use crate::layout::regions::{Field, Region, state_regions};
use crate::layout::seeking::seek_into;
use crate::layout::slots::Targets;
use crate::layout::{InHostMemory, Released};
use crate::layout::{Layout, LayoutKind, ReserveError, shrink_if_sparse};
use crate::memory::MemoryUse;
use crate::neighbours::{Neighbours, apply_to_records};
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{EntityState, PointSink, SinkPart, point_bytes, seek_one, sink_chunks};

#[derive(Default)]
pub struct Aos<S> {
    ids: Vec<u64>,
    entities: Vec<EntityState<S>>,
    /// Each entity's target, as a handle that survives swap-removes.
    targets: Targets,
    /// Seeking on all cores: the new velocities, before they are written back.
    seek_scratch: Vec<[S; 2]>,
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
        self.targets.try_reserve(additional)?;
        Ok(self.entities.try_reserve(additional)?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.ids.extend_from_slice(ids);
        self.targets.push(ids.len());
        self.entities.extend_from_slice(states);
    }

    fn swap_remove(&mut self, index: usize) {
        self.ids.swap_remove(index);
        self.targets.swap_remove(index);
        self.entities.swap_remove(index);
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.ids.truncate(len);
        self.targets.truncate(len);
        self.entities.truncate(len);
        self.give_back_memory();
        Released::InPlace
    }

    fn set_simd(&mut self, tier: SimdTier) -> SimdTier {
        self.tier = tier;
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
                + self.ids.capacity() as u64 * id
                + self.targets.allocated_bytes()
                + (self.seek_scratch.capacity() * size_of::<[S; 2]>()) as u64,
            modelled: false,
        }
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let records = &self.entities;
        let pushes = near.push_apart(threads, records.len(), |i| [records[i].x, records[i].y]);
        apply_to_records(threads, pushes, &mut self.entities, dt, |e| {
            (&mut e.vx, &mut e.vy)
        });
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        let (records, targets) = (&mut self.entities, &self.targets);
        if threads == Threads::One {
            for i in 0..records.len() {
                if let Some(t) = targets.target_of(i) {
                    let (tx, ty) = (records[t].x, records[t].y);
                    let e = &mut records[i];
                    (e.vx, e.vy) = seek_one(e.x, e.y, e.vx, e.vy, tx, ty, dt);
                }
            }
            return;
        }
        let scratch = &mut self.seek_scratch;
        scratch.resize(records.len(), [S::ZERO; 2]);
        let shared = &*records;
        seek_into(
            threads,
            scratch,
            dt,
            |i| [shared[i].x, shared[i].y, shared[i].vx, shared[i].vy],
            |i| targets.target_of(i),
            |t| [shared[t].x, shared[t].y],
        );
        let c = chunk_len(threads, records.len());
        for_each_part(
            threads,
            records.chunks_mut(c).zip(scratch.chunks(c)),
            |(records, velocities)| {
                for (e, &[vx, vy]) in records.iter_mut().zip(velocities) {
                    (e.vx, e.vy) = (vx, vy);
                }
            },
        );
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.targets.set(first, targets);
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        self.targets.target_of(index).map(|t| self.ids[t])
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        let e = &mut self.entities[index];
        (e.vx, e.vy) = (vx, vy);
    }
}

impl<S: Scalar> InHostMemory for Aos<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            state_regions(i, &self.entities[i], out);
            out.push(Region::of(&self.ids[i], Field::Id, i));
        }
    }
}

impl<S: Scalar> Aos<S> {
    fn give_back_memory(&mut self) {
        shrink_if_sparse(&mut self.ids);
        shrink_if_sparse(&mut self.entities);
        self.targets.release_unused();
        self.seek_scratch = Vec::new();
    }
}

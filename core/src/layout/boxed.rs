//! `Vec<Box<Entity>>`: one heap allocation per entity, the shape object-oriented code has and the
//! JS study's "array of objects". Every visit is a pointer load and then a dependent load of the
//! object, and a system reading two fields still pulls the whole object's cache line.
//!
//! Two variants:
//! - **allocation order**: boxes allocated in a loop sit at a fixed stride, so iteration walks the
//!   heap sequentially and the prefetcher hides most of the pointer chasing. The best case, and one
//!   no long-running game stays in.
//! - **shuffled heap**: the boxes' addresses are permuted over the entities (the logical order and
//!   every entity's data stay the same), so each visit lands at a random address, as after a few
//!   thousand spawns and despawns. The JS study's "shuffled" column.
//!
//! Seeking: an object-oriented program in a garbage-collected language would hold a pointer to
//! its target. Safe Rust's equivalent is `Rc`/`Weak`, which would make every entity shared and
//! move and regen a different layout; this layout holds what an entity manager over boxes holds
//! instead, a generational handle ([`Targets`]: handle -> slot -> the box's index), so a lookup
//! is three dependent reads: the slot, the box pointer, the object.

use std::ops::Range;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::layout::regions::{Field, Region, state_regions};
use crate::layout::seeking::seek_into;
use crate::layout::slots::Targets;
use crate::layout::{InHostMemory, Released};
use crate::layout::{Layout, LayoutKind, ReserveError, compaction_due, shrink_if_sparse};
use crate::memory::{MemoryUse, can_allocate, glibc_malloc_chunk_bytes, release_to_os};
use crate::neighbours::{Neighbours, apply_to_records};
use crate::scalar::Scalar;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{
    EntityState, PointSink, SinkPart, move_one, point_bytes, regen_one, seek_one, sink_chunks,
};

pub struct BoxedEntities<S> {
    ids: Vec<u64>,
    boxes: Vec<Box<EntityState<S>>>,
    /// Each entity's target, as a handle that survives swap-removes.
    targets: Targets,
    /// Seeking on all cores: the new velocities, before they are written back.
    seek_scratch: Vec<[S; 2]>,
    /// The most entities held: after shrinking far below it, the boxes are compacted.
    high_water: usize,
    /// `Some` for the shuffled variant: where new boxes' addresses are mixed in from.
    shuffle: Option<ChaCha8Rng>,
}

impl<S: Scalar> BoxedEntities<S> {
    pub fn new(shuffled: bool) -> Self {
        Self {
            ids: Vec::new(),
            boxes: Vec::new(),
            targets: Targets::default(),
            seek_scratch: Vec::new(),
            high_water: 0,
            shuffle: shuffled.then(|| ChaCha8Rng::seed_from_u64(0x5EED_B0C5)),
        }
    }

    /// Gives the boxes at `first..` random addresses among all boxes, keeping every entity's data
    /// at its logical index: swap two boxes, then swap their contents back.
    fn scatter_from(&mut self, first: usize) {
        let Some(rng) = self.shuffle.as_mut() else {
            return;
        };
        for p in first..self.boxes.len() {
            let j = rng.random_range(0..=p);
            if j == p {
                continue;
            }
            self.boxes.swap(p, j);
            let (head, tail) = self.boxes.split_at_mut(p);
            std::mem::swap(&mut *head[j], &mut *tail[0]);
        }
    }
}

impl<S: Scalar> Layout<S> for BoxedEntities<S> {
    fn kind(&self) -> LayoutKind {
        if self.shuffle.is_some() {
            LayoutKind::BoxedShuffled
        } else {
            LayoutKind::Boxed
        }
    }

    fn len(&self) -> usize {
        self.boxes.len()
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.ids.try_reserve(additional)?;
        self.boxes.try_reserve(additional)?;
        self.targets.try_reserve(additional)?;
        // The boxes come one by one later, and a failed `Box::new` aborts: ask for them now.
        let chunk = glibc_malloc_chunk_bytes(size_of::<EntityState<S>>()) as usize;
        Ok(can_allocate(additional.saturating_mul(chunk))?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        let first = self.boxes.len();
        self.ids.extend_from_slice(ids);
        self.targets.push(ids.len());
        self.boxes.extend(states.iter().map(|s| Box::new(*s)));
        self.high_water = self.high_water.max(self.boxes.len());
        self.scatter_from(first);
    }

    fn swap_remove(&mut self, index: usize) {
        self.ids.swap_remove(index);
        self.targets.swap_remove(index);
        self.boxes.swap_remove(index);
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.ids.truncate(len);
        self.targets.truncate(len);
        self.boxes.truncate(len);
        self.give_back_memory();
        Released::InPlace
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let c = chunk_len(threads, self.len());
        for_each_part(threads, self.boxes.chunks_mut(c), |chunk| {
            for e in chunk {
                (e.x, e.y) = move_one(e.x, e.y, e.vx, e.vy, dt);
            }
        });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let c = chunk_len(threads, self.len());
        for_each_part(threads, self.boxes.chunks_mut(c), |chunk| {
            for e in chunk {
                e.energy = regen_one(e.energy, e.regen, dt);
            }
        });
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let c = chunk_len(threads, self.len());
        let parts = sink_chunks(out, c).zip(self.boxes.chunks(c));
        for_each_part(threads, parts, |(SinkPart(out), entities)| {
            out.write_iter(entities.iter().map(|e| point_bytes(e.x, e.y, e.hp)));
        });
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for (id, state) in self.ids[range.clone()].iter().zip(&self.boxes[range]) {
            visit(*id, state);
        }
    }

    fn memory(&self) -> MemoryUse {
        let entity = size_of::<EntityState<S>>();
        let id = size_of::<u64>() as u64;
        MemoryUse {
            payload_bytes: self.len() as u64 * (entity as u64 + id),
            allocated_bytes: self.boxes.capacity() as u64 * size_of::<Box<EntityState<S>>>() as u64
                + self.ids.capacity() as u64 * id
                + self.len() as u64 * glibc_malloc_chunk_bytes(entity)
                + self.targets.allocated_bytes()
                + (self.seek_scratch.capacity() * size_of::<[S; 2]>()) as u64,
            modelled: true,
        }
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let records = &self.boxes;
        let pushes = near.push_apart(threads, records.len(), |i| [records[i].x, records[i].y]);
        apply_to_records(threads, pushes, &mut self.boxes, dt, |e| {
            (&mut e.vx, &mut e.vy)
        });
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        let (boxes, targets) = (&mut self.boxes, &self.targets);
        if threads == Threads::One {
            for i in 0..boxes.len() {
                if let Some(t) = targets.target_of(i) {
                    let (tx, ty) = (boxes[t].x, boxes[t].y);
                    let e = &mut boxes[i];
                    (e.vx, e.vy) = seek_one(e.x, e.y, e.vx, e.vy, tx, ty, dt);
                }
            }
            return;
        }
        let scratch = &mut self.seek_scratch;
        scratch.resize(boxes.len(), [S::ZERO; 2]);
        let shared = &*boxes;
        seek_into(
            threads,
            scratch,
            dt,
            |i| [shared[i].x, shared[i].y, shared[i].vx, shared[i].vy],
            |i| targets.target_of(i),
            |t| [shared[t].x, shared[t].y],
        );
        let c = chunk_len(threads, boxes.len());
        for_each_part(
            threads,
            boxes.chunks_mut(c).zip(scratch.chunks(c)),
            |(boxes, velocities)| {
                for (e, &[vx, vy]) in boxes.iter_mut().zip(velocities) {
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
        let e = &mut self.boxes[index];
        (e.vx, e.vy) = (vx, vy);
    }
}

impl<S: Scalar> InHostMemory for BoxedEntities<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            state_regions(i, &*self.boxes[i], out);
            out.push(Region::of(&self.ids[i], Field::Id, i));
        }
    }
}

impl<S: Scalar> BoxedEntities<S> {
    fn give_back_memory(&mut self) {
        shrink_if_sparse(&mut self.ids);
        shrink_if_sparse(&mut self.boxes);
        self.targets.release_unused();
        self.seek_scratch = Vec::new();
        if compaction_due(self.boxes.len(), &mut self.high_water) {
            let states: Vec<EntityState<S>> = self.boxes.iter().map(|b| **b).collect();
            self.boxes = Vec::new();
            release_to_os();
            self.boxes = states.into_iter().map(Box::new).collect();
            self.scatter_from(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{SpawnPattern, spawn_range};

    #[test]
    fn shuffling_moves_addresses_but_not_data() {
        let mut states = Vec::new();
        spawn_range::<f32>(SpawnPattern::Streams, 3, 0, 1000, &mut states);
        let ids: Vec<u64> = (0..1000).collect();
        let mut plain = BoxedEntities::<f32>::new(false);
        let mut shuffled = BoxedEntities::<f32>::new(true);
        plain.push(&ids, &states);
        shuffled.push(&ids, &states);
        let mut seen = Vec::new();
        shuffled.for_each_entity_in(0..shuffled.len(), &mut |id, s| seen.push((id, *s)));
        assert!(seen.iter().zip(&states).all(|((_, a), b)| a == b));
        let increasing = |l: &BoxedEntities<f32>| {
            l.boxes
                .windows(2)
                .filter(|w| (&*w[0] as *const _ as usize) < (&*w[1] as *const _ as usize))
                .count()
        };
        // Allocation order walks the heap upward almost always; the shuffled one about half the time.
        assert!(increasing(&plain) > 900, "{}", increasing(&plain));
        assert!(increasing(&shuffled) < 700, "{}", increasing(&shuffled));
    }
}

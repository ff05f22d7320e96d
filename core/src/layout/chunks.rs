//! Chunked struct-of-arrays ("AoSoA"): entities live in fixed 16 KiB blocks, and each block holds
//! its entities' ids and eight fields as eight short arrays, one after the other. This is Unity's
//! ECS storage (an archetype's `ArchetypeChunk` is a 16 KiB block with one array per component),
//! and the layout ISPC teaches as "array of structure of arrays".
//!
//! Good at: within a block it is SoA (a system reads only its columns, each a short sequential run
//! the compiler vectorizes), and the block is the unit of allocation, so growing never copies the
//! population, shrinking hands whole blocks back, and a block is a natural unit of work for a
//! thread. Reading all of an entity's fields touches one block, not eight arrays a population
//! apart: the JS study's 20-field reversal, where SoA loses to AoS, should find it close to AoS.
//!
//! Bad at: a column is only [`capacity`] entities long, so a stream breaks at every block edge
//! and the prefetcher must find it again; every block's loop has a head and a tail the vectors do
//! not fill; and a system reading two fields of eight still strides over the other six's bytes
//! (they sit in the same pages).
//!
//! Logical order and `swap_remove` are the same as every layout's: entity `i` is slot
//! `i % capacity` of block `i / capacity`; the last entity fills a removed one's slot.
//!
//! Seeking goes through a generational handle ([`Targets`], beside the blocks: in Unity a target
//! `Entity` would be one more column of the chunk, which would change every block's capacity and
//! so move and regen), then reads `x` and `y` from the target's block: two columns a block apart.

use std::marker::PhantomData;
use std::ops::Range;

use bytemuck::Zeroable;

use crate::layout::kernels::{move_columns, regen_columns};
use crate::layout::regions::{Field, Region};
use crate::layout::seeking::seek_into;
use crate::layout::slots::Targets;
use crate::layout::{InHostMemory, Released};
use crate::layout::{Layout, LayoutKind, ReserveError};
use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{
    EntityState, PointSink, SinkPart, avoid_one, point_bytes, seek_one, sink_chunks,
};

/// Bytes in one block, Unity's chunk size.
pub const CHUNK_BYTES: usize = 16 * 1024;

/// Entities per block of `block_bytes`: as many as fit with their id, rounded down to a multiple of 16 so that
/// every column starts on a 64-byte line and an AVX-512 vector of `f32` divides it (400 at
/// `f32`, 224 at `f64`).
pub const fn capacity<S>(block_bytes: usize) -> usize {
    block_bytes / (8 * size_of::<S>() + size_of::<u64>()) / 16 * 16
}

/// One cache line; a block is [`LINES`] of them, so it starts on a line boundary.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// A page, for the paged control.
const PAGE: usize = 4096;

/// One block of `BYTES`: `[ids; capacity] [x; capacity] [y; capacity] ... [armor; capacity]`.
/// `PAGED` is a bench control, not Unity's shape: the same `capacity` entities, but each of the
/// nine arrays starts a 4 KiB page of its own (a block of ten pages, one to align), so that no
/// two columns share a page.
struct Chunk<const BYTES: usize, const PAGED: bool>(Box<[Line]>);

impl<const BYTES: usize, const PAGED: bool> Chunk<BYTES, PAGED> {
    const LINES: usize = if PAGED {
        10 * PAGE / size_of::<Line>()
    } else {
        BYTES / size_of::<Line>()
    };

    /// A zeroed block; out of memory aborts, as a `Vec` growing in another layout's `push` does.
    fn new() -> Self {
        Chunk(vec![Line::zeroed(); Self::LINES].into_boxed_slice())
    }

    /// Where array `k` (0: ids, 1..=8: the fields) starts in the block's bytes, and how long
    /// it is, for `S` at `cap` entities; `base` aligns the paged control to a page.
    fn array_at<S>(k: usize, cap: usize, base: usize) -> (usize, usize) {
        let len = if k == 0 {
            cap * size_of::<u64>()
        } else {
            cap * size_of::<S>()
        };
        let start = match (PAGED, k) {
            (true, _) => base + k * PAGE,
            (false, 0) => 0,
            (false, _) => cap * size_of::<u64>() + (k - 1) * cap * size_of::<S>(),
        };
        (start, len)
    }

    /// The bytes before the first page boundary (0 for the packed blocks).
    fn base(bytes: &[u8]) -> usize {
        if PAGED {
            bytes.as_ptr().align_offset(PAGE)
        } else {
            0
        }
    }

    /// The ids and the eight columns, in `EntityState` order.
    fn columns<S: Scalar>(&self) -> (&[u64], [&[S]; 8]) {
        let cap = capacity::<S>(BYTES);
        let bytes: &[u8] = bytemuck::cast_slice(&self.0);
        let base = Self::base(bytes);
        let array = |k: usize| {
            let (start, len) = Self::array_at::<S>(k, cap, base);
            &bytes[start..start + len]
        };
        let fields = std::array::from_fn(|f| bytemuck::cast_slice(array(f + 1)));
        (bytemuck::cast_slice(array(0)), fields)
    }

    fn columns_mut<S: Scalar>(&mut self) -> (&mut [u64], [&mut [S]; 8]) {
        let cap = capacity::<S>(BYTES);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.0);
        let base = Self::base(bytes);
        // The arrays in increasing order, each split off what is left after the one before.
        let mut rest = bytes;
        let mut at = 0;
        let mut next = |k: usize| {
            let (start, len) = Self::array_at::<S>(k, cap, base);
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
            let (array, tail) = tail.split_at_mut(len);
            rest = tail;
            at = start + len;
            array
        };
        let ids = bytemuck::cast_slice_mut(next(0));
        let fields = std::array::from_fn(|f| bytemuck::cast_slice_mut(next(f + 1)));
        (ids, fields)
    }

    fn read<S: Scalar>(&self, slot: usize) -> (u64, EntityState<S>) {
        let (ids, fields) = self.columns::<S>();
        (ids[slot], EntityState::from_array(fields.map(|c| c[slot])))
    }

    /// Field `f` (0..8, `EntityState` order) of the entity at `slot`, read alone.
    #[inline]
    fn field<S: Scalar>(&self, f: usize, slot: usize) -> S {
        let bytes: &[u8] = bytemuck::cast_slice(&self.0);
        let (start, _) = Self::array_at::<S>(f + 1, capacity::<S>(BYTES), Self::base(bytes));
        let at = start + slot * size_of::<S>();
        bytemuck::pod_read_unaligned(&bytes[at..at + size_of::<S>()])
    }

    #[inline]
    fn set_field<S: Scalar>(&mut self, f: usize, slot: usize, value: S) {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.0);
        let (start, _) = Self::array_at::<S>(f + 1, capacity::<S>(BYTES), Self::base(bytes));
        let at = start + slot * size_of::<S>();
        bytes[at..at + size_of::<S>()].copy_from_slice(bytemuck::bytes_of(&value));
    }

    /// `[x, y]` of the entity at `slot`: what a seeker reads of its target.
    #[inline]
    fn position<S: Scalar>(&self, slot: usize) -> [S; 2] {
        [self.field(0, slot), self.field(1, slot)]
    }

    /// `[x, y, vx, vy]` of the entity at `slot`.
    #[inline]
    fn motion<S: Scalar>(&self, slot: usize) -> [S; 4] {
        std::array::from_fn(|f| self.field(f, slot))
    }

    #[inline]
    fn set_velocity<S: Scalar>(&mut self, slot: usize, vx: S, vy: S) {
        self.set_field(2, slot, vx);
        self.set_field(3, slot, vy);
    }

    fn write<S: Scalar>(&mut self, slot: usize, id: u64, state: &EntityState<S>) {
        let (ids, fields) = self.columns_mut::<S>();
        ids[slot] = id;
        for (column, value) in fields.into_iter().zip(state.to_array()) {
            column[slot] = value;
        }
    }
}

/// The chunked layout, in blocks of `BYTES` (Unity's 16 KiB unless a bench's control says
/// otherwise; `PAGED`: the control whose columns have a page each, see [`Chunk`]).
pub struct Chunks<S, const BYTES: usize = CHUNK_BYTES, const PAGED: bool = false> {
    /// Blocks in order; those past `len` entities are reserved, empty ones.
    chunks: Vec<Chunk<BYTES, PAGED>>,
    len: usize,
    /// Each entity's target, as a handle that survives swap-removes.
    targets: Targets,
    /// Seeking on all cores: the new velocities, before they are written back.
    seek_scratch: Vec<[S; 2]>,
    tier: SimdTier,
    _scalar: PhantomData<fn() -> S>,
}

impl<S, const BYTES: usize, const PAGED: bool> Default for Chunks<S, BYTES, PAGED> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
            targets: Targets::default(),
            seek_scratch: Vec::new(),
            tier: SimdTier::Baseline,
            _scalar: PhantomData,
        }
    }
}

impl<S: Scalar, const BYTES: usize, const PAGED: bool> Chunks<S, BYTES, PAGED> {
    const CAP: usize = capacity::<S>(BYTES);

    /// Blocks that hold at least one entity.
    fn used(&self) -> usize {
        self.len.div_ceil(Self::CAP)
    }

    /// Entities in the block at `index` (all but the last are full).
    fn filled(len: usize, index: usize) -> usize {
        (len - index * Self::CAP).min(Self::CAP)
    }

    /// Blocks per task: `chunk_len`'s entities per task, in whole blocks.
    fn blocks_per_part(&self, threads: Threads) -> usize {
        chunk_len(threads, self.len).div_ceil(Self::CAP).max(1)
    }

    /// Runs `work(block, entities in it)` over every used block, split over `threads`.
    fn for_each_block(
        &mut self,
        threads: Threads,
        work: impl Fn(&mut Chunk<BYTES, PAGED>, usize) + Sync,
    ) {
        let (len, per_part) = (self.len, self.blocks_per_part(threads));
        let used = self.used();
        let parts = self.chunks[..used].chunks_mut(per_part).enumerate();
        for_each_part(threads, parts, |(p, blocks)| {
            for (k, block) in blocks.iter_mut().enumerate() {
                work(block, Self::filled(len, p * per_part + k));
            }
        });
    }
}

impl<S: Scalar, const BYTES: usize, const PAGED: bool> Layout<S> for Chunks<S, BYTES, PAGED> {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Chunks
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Room for the block list now, and the blocks' memory asked of the allocator; the blocks
    /// themselves are allocated as entities arrive (as Unity allocates a chunk when the last one
    /// fills): zeroing every block up front for a switch at 10M would stall that one frame.
    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        let needed = (self.len + additional).div_ceil(Self::CAP);
        let more = needed.saturating_sub(self.chunks.len());
        self.targets.try_reserve(additional)?;
        self.chunks.try_reserve(more)?;
        Ok(crate::memory::can_allocate(more.saturating_mul(
            Chunk::<BYTES, PAGED>::LINES * size_of::<Line>(),
        ))?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.targets.push(ids.len());
        let mut done = 0;
        while done < ids.len() {
            let (index, slot) = (self.len / Self::CAP, self.len % Self::CAP);
            if index == self.chunks.len() {
                self.chunks.push(Chunk::new());
            }
            let n = (Self::CAP - slot).min(ids.len() - done);
            let (block_ids, fields) = self.chunks[index].columns_mut::<S>();
            block_ids[slot..slot + n].copy_from_slice(&ids[done..done + n]);
            for (f, column) in fields.into_iter().enumerate() {
                for (value, state) in column[slot..slot + n]
                    .iter_mut()
                    .zip(&states[done..done + n])
                {
                    *value = state.to_array()[f];
                }
            }
            done += n;
            self.len += n;
        }
    }

    fn swap_remove(&mut self, index: usize) {
        assert!(
            index < self.len,
            "swap_remove index {index} of {}",
            self.len
        );
        let last = self.len - 1;
        if index != last {
            let (id, state) = self.chunks[last / Self::CAP].read::<S>(last % Self::CAP);
            self.chunks[index / Self::CAP].write(index % Self::CAP, id, &state);
        }
        self.targets.swap_remove(index);
        self.len = last;
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.len = self.len.min(len);
        self.targets.truncate(self.len);
        self.give_back_memory();
        Released::InPlace
    }

    fn set_simd(&mut self, tier: SimdTier) -> SimdTier {
        self.tier = tier;
        self.tier
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        self.for_each_block(threads, |block, n| {
            let (_, [x, y, vx, vy, ..]) = block.columns_mut::<S>();
            move_columns(tier, &mut x[..n], &mut y[..n], &vx[..n], &vy[..n], dt);
        });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let tier = self.tier;
        self.for_each_block(threads, |block, n| {
            let (_, [.., energy, regen, _]) = block.columns_mut::<S>();
            regen_columns(tier, &mut energy[..n], &regen[..n], dt);
        });
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let (len, per_part) = (self.len, self.blocks_per_part(threads));
        let used = self.used();
        let parts = sink_chunks(out, per_part * Self::CAP)
            .zip(self.chunks[..used].chunks(per_part))
            .enumerate();
        for_each_part(threads, parts, |(p, (SinkPart(out), blocks))| {
            let mut rest = out;
            for (k, block) in blocks.iter().enumerate() {
                let n = Self::filled(len, p * per_part + k);
                let (head, tail) = rest.split_at(n);
                rest = tail;
                let (_, [x, y, _, _, hp, ..]) = block.columns::<S>();
                head.write_iter(
                    x[..n]
                        .iter()
                        .zip(&y[..n])
                        .zip(&hp[..n])
                        .map(|((&x, &y), &hp)| point_bytes(x, y, hp)),
                );
            }
        });
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for i in range {
            let (id, state) = self.chunks[i / Self::CAP].read::<S>(i % Self::CAP);
            visit(id, &state);
        }
    }

    fn memory(&self) -> MemoryUse {
        let entity = (8 * size_of::<S>() + size_of::<u64>()) as u64;
        MemoryUse {
            payload_bytes: self.len as u64 * entity,
            allocated_bytes: (self.chunks.len() * Chunk::<BYTES, PAGED>::LINES * size_of::<Line>()
                + self.chunks.capacity() * size_of::<Chunk<BYTES, PAGED>>()
                + self.seek_scratch.capacity() * size_of::<[S; 2]>())
                as u64
                + self.targets.allocated_bytes(),
            modelled: false,
        }
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let (cap, per_part, used) = (Self::CAP, self.blocks_per_part(threads), self.used());
        let chunks = &self.chunks;
        let pushes = near.push_apart(threads, self.len, |i| chunks[i / cap].position(i % cap));
        let parts = self.chunks[..used]
            .chunks_mut(per_part)
            .zip(pushes.chunks(per_part * cap));
        for_each_part(threads, parts, |(blocks, pushes)| {
            for (block, pushes) in blocks.iter_mut().zip(pushes.chunks(cap)) {
                let (_, [_, _, vx, vy, ..]) = block.columns_mut::<S>();
                for ((vx, vy), &push) in vx.iter_mut().zip(vy.iter_mut()).zip(pushes) {
                    (*vx, *vy) = avoid_one(*vx, *vy, push, dt);
                }
            }
        });
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        let (cap, targets) = (Self::CAP, &self.targets);
        if threads == Threads::One {
            for i in 0..self.len {
                if let Some(t) = targets.target_of(i) {
                    let [tx, ty] = self.chunks[t / cap].position::<S>(t % cap);
                    let block = &mut self.chunks[i / cap];
                    let [x, y, vx, vy] = block.motion::<S>(i % cap);
                    let (vx, vy) = seek_one(x, y, vx, vy, tx, ty, dt);
                    block.set_velocity(i % cap, vx, vy);
                }
            }
            return;
        }
        let (per_part, used) = (self.blocks_per_part(threads), self.used());
        let scratch = &mut self.seek_scratch;
        scratch.resize(self.len, [S::ZERO; 2]);
        let chunks = &self.chunks;
        seek_into(
            threads,
            scratch,
            dt,
            |i| chunks[i / cap].motion(i % cap),
            |i| targets.target_of(i),
            |t| chunks[t / cap].position(t % cap),
        );
        let parts = self.chunks[..used]
            .chunks_mut(per_part)
            .zip(scratch.chunks(per_part * cap));
        for_each_part(threads, parts, |(blocks, velocities)| {
            for (block, velocities) in blocks.iter_mut().zip(velocities.chunks(cap)) {
                let (_, [_, _, vx, vy, ..]) = block.columns_mut::<S>();
                for ((vx, vy), &[a, b]) in vx.iter_mut().zip(vy.iter_mut()).zip(velocities) {
                    (*vx, *vy) = (a, b);
                }
            }
        });
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.targets.set(first, targets);
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        let t = self.targets.target_of(index)?;
        Some(self.chunks[t / Self::CAP].read::<S>(t % Self::CAP).0)
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        self.chunks[index / Self::CAP].set_velocity(index % Self::CAP, vx, vy);
    }
}

impl<S: Scalar, const BYTES: usize, const PAGED: bool> InHostMemory for Chunks<S, BYTES, PAGED> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            let (ids, fields) = self.chunks[i / Self::CAP].columns::<S>();
            let slot = i % Self::CAP;
            for (column, field) in fields.iter().zip(Field::STATE) {
                out.push(Region::of(&column[slot], field, i));
            }
            out.push(Region::of(&ids[slot], Field::Id, i));
        }
    }
}

impl<S: Scalar, const BYTES: usize, const PAGED: bool> Chunks<S, BYTES, PAGED> {
    /// Hands back whole blocks once fewer than a quarter of them are in use (the rule
    /// `shrink_if_sparse` applies to a `Vec`).
    fn give_back_memory(&mut self) {
        let used = self.used();
        if used < self.chunks.len() / 4 {
            self.chunks.truncate(used);
            self.chunks.shrink_to_fit();
        }
        self.targets.release_unused();
        self.seek_scratch = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spawn;

    #[test]
    fn a_block_is_16_kib_and_columns_start_on_lines() {
        assert_eq!(capacity::<f32>(CHUNK_BYTES), 400);
        assert_eq!(capacity::<f64>(CHUNK_BYTES), 224);
        let mut layout = Chunks::<f32>::default();
        let states: Vec<EntityState<f32>> = (0..1000).map(|i| spawn(1, i)).collect();
        let ids: Vec<u64> = (0..1000).collect();
        layout.push(&ids, &states);
        assert_eq!(layout.chunks.len(), 3);
        for block in &layout.chunks {
            assert_eq!(block.0.len() * size_of::<Line>(), CHUNK_BYTES);
            let (ids, fields) = block.columns::<f32>();
            assert!((ids.as_ptr() as usize).is_multiple_of(64));
            assert!(
                fields
                    .iter()
                    .all(|c| (c.as_ptr() as usize).is_multiple_of(64))
            );
        }
        // Entity 401 is slot 1 of block 1, field by field.
        let (ids, fields) = layout.chunks[1].columns::<f32>();
        assert_eq!(ids[1], 401);
        assert_eq!(fields.map(|c| c[1]), states[401].to_array());
    }

    #[test]
    fn the_paged_control_puts_each_column_on_a_page_of_its_own() {
        let mut layout = Chunks::<f32, CHUNK_BYTES, true>::default();
        let states: Vec<EntityState<f32>> = (0..900).map(|i| spawn(1, i)).collect();
        let ids: Vec<u64> = (0..900).collect();
        layout.push(&ids, &states);
        for block in &layout.chunks {
            let (ids, fields) = block.columns::<f32>();
            let page = |p: *const u8| p as usize / PAGE;
            let mut pages: Vec<usize> = fields.iter().map(|c| page(c.as_ptr().cast())).collect();
            pages.push(page(ids.as_ptr().cast()));
            pages.sort_unstable();
            pages.dedup();
            assert_eq!(pages.len(), 9, "nine arrays, nine pages");
            assert!(
                fields
                    .iter()
                    .all(|c| (c.as_ptr() as usize).is_multiple_of(PAGE))
            );
        }
        let mut seen = Vec::new();
        layout.for_each_entity_in(0..layout.len(), &mut |id, s| seen.push((id, *s)));
        assert_eq!(seen, ids.into_iter().zip(states).collect::<Vec<_>>());
    }

    #[test]
    fn blocks_go_back_when_a_quarter_is_used() {
        let mut layout = Chunks::<f64>::default();
        let n = 100 * capacity::<f64>(CHUNK_BYTES);
        layout.try_reserve(n).unwrap();
        assert_eq!(layout.chunks.len(), 0, "blocks come as entities do");
        assert!(layout.chunks.capacity() >= 100, "room for their list");
        let states: Vec<EntityState<f64>> = (0..n as u64).map(|i| spawn(2, i)).collect();
        let ids: Vec<u64> = (0..n as u64).collect();
        layout.push(&ids, &states);
        assert_eq!(layout.chunks.len(), 100, "one block per capacity entities");
        layout.truncate(30 * capacity::<f64>(CHUNK_BYTES));
        assert_eq!(layout.chunks.len(), 100, "30 of 100 in use: kept");
        layout.truncate(10 * capacity::<f64>(CHUNK_BYTES) + 1);
        assert_eq!(layout.chunks.len(), 11);
        let blocks = layout.memory().allocated_bytes - layout.targets.allocated_bytes();
        assert_eq!(blocks as usize / CHUNK_BYTES, 11);
    }
}

//! Struct-of-arrays: one `Vec` per field. A system touches only the columns it reads, each as a
//! plain sequential stream the prefetcher follows and the compiler vectorizes; the price is one
//! stream per field read, which stops being free past the prefetcher's stream limit (the JS
//! study's 20-field reversal), and eight scattered reads to fetch one whole entity.
//! Reproduces the studies' "SoA" / "ECS (SoA)" rows.
//!
//! Seeking another entity goes through a generational handle ([`Targets`]: handle -> slot ->
//! dense index), then reads `x` and `y` from two columns: three scattered reads where an
//! array of structs needs two.

use std::ops::Range;

use crate::layout::kernels::{move_columns, regen_columns};
use crate::layout::regions::{Field, Region};
use crate::layout::seeking::{ResolvedTargets, SeekKernel, seek_resolved_columns};
use crate::layout::slots::Targets;
use crate::layout::{InHostMemory, Released};
use crate::layout::{Layout, LayoutKind, ReserveError, shrink_if_sparse};
use crate::memory::MemoryUse;
use crate::neighbours::{Neighbours, apply_to_columns};
use crate::scalar::Scalar;
use crate::simd::SimdTier;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{EntityState, PointSink, SinkPart, point_bytes, seek_one, sink_chunks};

#[derive(Default)]
pub struct Soa<S> {
    ids: Vec<u64>,
    x: Vec<S>,
    y: Vec<S>,
    vx: Vec<S>,
    vy: Vec<S>,
    hp: Vec<S>,
    energy: Vec<S>,
    regen: Vec<S>,
    armor: Vec<S>,
    /// Each entity's target, as a handle that survives swap-removes.
    targets: Targets,
    /// The seek kernel asked for, and the tuned kernel's targets resolved to dense indices.
    kernel: SeekKernel,
    resolved: ResolvedTargets,
    tier: SimdTier,
}

impl<S: Scalar> Soa<S> {
    fn columns_mut(&mut self) -> [&mut Vec<S>; 8] {
        [
            &mut self.x,
            &mut self.y,
            &mut self.vx,
            &mut self.vy,
            &mut self.hp,
            &mut self.energy,
            &mut self.regen,
            &mut self.armor,
        ]
    }

    /// The eight columns in `EntityState` order.
    fn columns(&self) -> [&Vec<S>; 8] {
        [
            &self.x,
            &self.y,
            &self.vx,
            &self.vy,
            &self.hp,
            &self.energy,
            &self.regen,
            &self.armor,
        ]
    }

    fn state(&self, i: usize) -> EntityState<S> {
        EntityState {
            x: self.x[i],
            y: self.y[i],
            vx: self.vx[i],
            vy: self.vy[i],
            hp: self.hp[i],
            energy: self.energy[i],
            regen: self.regen[i],
            armor: self.armor[i],
        }
    }
}

impl<S: Scalar> Layout<S> for Soa<S> {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Soa
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.ids.try_reserve(additional)?;
        self.targets.try_reserve(additional)?;
        for column in self.columns_mut() {
            column.try_reserve(additional)?;
        }
        Ok(())
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.ids.extend_from_slice(ids);
        self.targets.push(ids.len());
        self.resolved.invalidate();
        for (f, column) in self.columns_mut().into_iter().enumerate() {
            column.extend(states.iter().map(|s| s.to_array()[f]));
        }
    }

    fn swap_remove(&mut self, index: usize) {
        self.ids.swap_remove(index);
        self.targets.swap_remove(index);
        self.resolved.invalidate();
        for column in self.columns_mut() {
            column.swap_remove(index);
        }
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.ids.truncate(len);
        self.targets.truncate(len);
        self.resolved.invalidate();
        for column in self.columns_mut() {
            column.truncate(len);
        }
        self.give_back_memory();
        Released::InPlace
    }

    fn set_simd(&mut self, tier: SimdTier) -> SimdTier {
        self.tier = tier;
        self.tier
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let (c, tier) = (chunk_len(threads, self.len()), self.tier);
        let parts = self
            .x
            .chunks_mut(c)
            .zip(self.y.chunks_mut(c))
            .zip(self.vx.chunks(c).zip(self.vy.chunks(c)));
        for_each_part(threads, parts, |((x, y), (vx, vy))| {
            move_columns(tier, x, y, vx, vy, dt);
        });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let (c, tier) = (chunk_len(threads, self.len()), self.tier);
        let parts = self.energy.chunks_mut(c).zip(self.regen.chunks(c));
        for_each_part(threads, parts, |(energy, regen)| {
            regen_columns(tier, energy, regen, dt);
        });
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let c = chunk_len(threads, self.len());
        let parts = sink_chunks(out, c).zip(
            self.x
                .chunks(c)
                .zip(self.y.chunks(c))
                .zip(self.hp.chunks(c)),
        );
        for_each_part(threads, parts, |(SinkPart(out), ((x, y), hp))| {
            out.write_iter(
                x.iter()
                    .zip(y)
                    .zip(hp)
                    .map(|((&x, &y), &hp)| point_bytes(x, y, hp)),
            );
        });
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for i in range {
            visit(self.ids[i], &self.state(i));
        }
    }

    fn memory(&self) -> MemoryUse {
        let field = size_of::<S>() as u64;
        let id = size_of::<u64>() as u64;
        MemoryUse {
            payload_bytes: self.len() as u64 * (8 * field + id),
            allocated_bytes: self.ids.capacity() as u64 * id
                + self.targets.allocated_bytes()
                + self.resolved.allocated_bytes()
                + self
                    .columns()
                    .iter()
                    .map(|c| c.capacity() as u64 * field)
                    .sum::<u64>(),
            modelled: false,
        }
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        if self.kernel == SeekKernel::Tuned {
            let targets = &self.targets;
            let resolved = self
                .resolved
                .get(threads, self.ids.len(), |i| targets.target_of(i));
            let (x, y) = (&self.x, &self.y);
            seek_resolved_columns(threads, resolved, x, y, &mut self.vx, &mut self.vy, dt);
            return;
        }
        let c = chunk_len(threads, self.len());
        let (x, y, targets) = (&self.x, &self.y, &self.targets);
        let parts = self.vx.chunks_mut(c).zip(self.vy.chunks_mut(c)).enumerate();
        for_each_part(threads, parts, |(part, (vx, vy))| {
            for (i, (vx, vy)) in (part * c..).zip(vx.iter_mut().zip(vy)) {
                if let Some(t) = targets.target_of(i) {
                    (*vx, *vy) = seek_one(x[i], y[i], *vx, *vy, x[t], y[t], dt);
                }
            }
        });
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let (x, y) = (&self.x, &self.y);
        let pushes = near.push_apart(threads, x.len(), |i| [x[i], y[i]]);
        apply_to_columns(threads, pushes, &mut self.vx, &mut self.vy, dt);
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.targets.set(first, targets);
        self.resolved.invalidate();
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        self.targets.target_of(index).map(|t| self.ids[t])
    }

    fn set_velocity_at(&mut self, index: usize, vx: S, vy: S) {
        (self.vx[index], self.vy[index]) = (vx, vy);
    }

    fn set_seek_kernel(&mut self, kernel: SeekKernel) -> SeekKernel {
        self.kernel = kernel;
        if kernel == SeekKernel::Idiomatic {
            self.resolved.release();
        }
        kernel
    }
}

impl<S: Scalar> InHostMemory for Soa<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        let columns = self.columns();
        for i in range {
            for (column, field) in columns.iter().zip(Field::STATE) {
                out.push(Region::of(&column[i], field, i));
            }
            out.push(Region::of(&self.ids[i], Field::Id, i));
        }
    }
}

impl<S: Scalar> Soa<S> {
    fn give_back_memory(&mut self) {
        shrink_if_sparse(&mut self.ids);
        self.targets.release_unused();
        for column in self.columns_mut() {
            shrink_if_sparse(column);
        }
    }
}

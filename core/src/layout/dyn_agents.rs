//! `Vec<Box<dyn Agent>>` over K concrete entity kinds: the C++ article's OOP baseline (virtual
//! `update()` on heap objects) and Rust's nearest analog of the JS study's hidden-class finding.
//! Rust has no hidden classes, but a call site that sees many vtable targets is what V8's
//! megamorphic call site is: an indirect branch the predictor cannot learn.
//!
//! The kinds are real, distinct types: each stores the eight fields in its own order (eight
//! rotations and four reflections), so each has its own machine code and its own vtable, and the
//! compiler cannot merge them into one function. Entity `id`'s kind is a hash of its id, so K = 12
//! puts twelve targets on the call site in an order the branch predictor cannot learn. Every kind
//! runs the same `move_one` / `regen_one`, so results are identical.
//!
//! Seeking is virtual too: each agent is asked for its target's position (`position()`) and then
//! told to steer (`seek_step()`). The target is held as `boxed` holds it, a generational handle
//! ([`Targets`]), for the same reason (safe Rust's pointer with a lifetime is `Rc`/`Weak`).

use std::ops::Range;

use crate::layout::regions::{Field, Region};
use crate::layout::seeking::seek_into;
use crate::layout::slots::Targets;
use crate::layout::{InHostMemory, Released};
use crate::layout::{Layout, LayoutKind, ReserveError, compaction_due, shrink_if_sparse};
use crate::memory::{MemoryUse, can_allocate, glibc_malloc_chunk_bytes, release_to_os};
use crate::neighbours::Neighbours;
use crate::scalar::Scalar;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{
    EntityState, PointSink, SinkPart, avoid_one, mix, move_one, pack_point, regen_one, seek_one,
    sink_chunks,
};

/// The object-oriented entity interface: each kind knows how to update itself.
pub trait Agent<S: Scalar>: Send + Sync {
    fn move_step(&mut self, dt: S);
    fn regen_step(&mut self, dt: S);
    /// Steers toward a target at `target` (x, y).
    fn seek_step(&mut self, target: [S; 2], dt: S);
    /// Where this agent is: what a seeker asks of its target.
    fn position(&self) -> [S; 2];
    /// Position and velocity, `[x, y, vx, vy]`.
    fn motion(&self) -> [S; 4];
    fn set_velocity(&mut self, vx: S, vy: S);
    /// The renderer's packed point (position and hp).
    fn point(&self) -> u32;
    fn state(&self) -> EntityState<S>;
    /// Where each field (in `EntityState` order) sits inside this object.
    fn regions(&self, entity: usize, out: &mut Vec<Region>);
}

/// Where field `field` (in `EntityState` order) lives in kind `KIND`'s storage.
const fn slot(kind: usize, field: usize) -> usize {
    if kind < 8 {
        (field + kind) % 8
    } else {
        (7 - field + kind) % 8
    }
}

/// One concrete kind: the eight fields in kind-specific order.
struct Kind<S, const KIND: usize> {
    fields: [S; 8],
}

impl<S: Scalar, const KIND: usize> Kind<S, KIND> {
    const X: usize = slot(KIND, 0);
    const Y: usize = slot(KIND, 1);
    const VX: usize = slot(KIND, 2);
    const VY: usize = slot(KIND, 3);
    const HP: usize = slot(KIND, 4);
    const ENERGY: usize = slot(KIND, 5);
    const REGEN: usize = slot(KIND, 6);

    fn boxed(state: &EntityState<S>) -> Box<dyn Agent<S>> {
        let mut fields = [S::ZERO; 8];
        for (f, value) in state.to_array().into_iter().enumerate() {
            fields[slot(KIND, f)] = value;
        }
        Box::new(Self { fields })
    }
}

impl<S: Scalar, const KIND: usize> Agent<S> for Kind<S, KIND> {
    fn move_step(&mut self, dt: S) {
        let f = &mut self.fields;
        (f[Self::X], f[Self::Y]) = move_one(f[Self::X], f[Self::Y], f[Self::VX], f[Self::VY], dt);
    }

    fn regen_step(&mut self, dt: S) {
        let f = &mut self.fields;
        f[Self::ENERGY] = regen_one(f[Self::ENERGY], f[Self::REGEN], dt);
    }

    fn seek_step(&mut self, [tx, ty]: [S; 2], dt: S) {
        let f = &mut self.fields;
        (f[Self::VX], f[Self::VY]) =
            seek_one(f[Self::X], f[Self::Y], f[Self::VX], f[Self::VY], tx, ty, dt);
    }

    fn position(&self) -> [S; 2] {
        [self.fields[Self::X], self.fields[Self::Y]]
    }

    fn motion(&self) -> [S; 4] {
        let f = &self.fields;
        [f[Self::X], f[Self::Y], f[Self::VX], f[Self::VY]]
    }

    fn set_velocity(&mut self, vx: S, vy: S) {
        (self.fields[Self::VX], self.fields[Self::VY]) = (vx, vy);
    }

    fn point(&self) -> u32 {
        let f = &self.fields;
        pack_point(f[Self::X], f[Self::Y], f[Self::HP])
    }

    fn state(&self) -> EntityState<S> {
        EntityState::from_array(std::array::from_fn(|f| self.fields[slot(KIND, f)]))
    }

    fn regions(&self, entity: usize, out: &mut Vec<Region>) {
        for (f, field) in Field::STATE.into_iter().enumerate() {
            out.push(Region::of(&self.fields[slot(KIND, f)], field, entity));
        }
    }
}

/// Which kind entity `id` is: a hash of the id, so kinds are interleaved in no pattern a branch
/// predictor could learn (a round-robin `id % K` would be periodic, and predictable).
fn kind_of(kinds: u8, id: u64) -> u64 {
    mix(id) % u64::from(kinds)
}

/// Builds an object of kind `kind` (0..12) holding `state`.
fn make_agent<S: Scalar>(kind: u64, state: &EntityState<S>) -> Box<dyn Agent<S>> {
    match kind {
        0 => Kind::<S, 0>::boxed(state),
        1 => Kind::<S, 1>::boxed(state),
        2 => Kind::<S, 2>::boxed(state),
        3 => Kind::<S, 3>::boxed(state),
        4 => Kind::<S, 4>::boxed(state),
        5 => Kind::<S, 5>::boxed(state),
        6 => Kind::<S, 6>::boxed(state),
        7 => Kind::<S, 7>::boxed(state),
        8 => Kind::<S, 8>::boxed(state),
        9 => Kind::<S, 9>::boxed(state),
        10 => Kind::<S, 10>::boxed(state),
        _ => Kind::<S, 11>::boxed(state),
    }
}

pub struct DynAgents<S> {
    kinds: u8,
    /// `Some(b)`: kinds in contiguous blocks of `b` ids instead of hashed (see `new_in_blocks`).
    blocks: Option<u64>,
    ids: Vec<u64>,
    agents: Vec<Box<dyn Agent<S>>>,
    /// Each entity's target, as a handle that survives swap-removes.
    targets: Targets,
    /// Seeking on all cores: the new velocities, before they are written back.
    seek_scratch: Vec<[S; 2]>,
    /// The most entities held: after shrinking far below it, the boxes are compacted.
    high_water: usize,
}

impl<S: Scalar> DynAgents<S> {
    /// `kinds` must be one of [`crate::layout::DYN_KINDS`]; `LayoutKind::CPU` lists them.
    pub fn new(kinds: u8) -> Self {
        assert!(
            (1..=12).contains(&kinds),
            "dyn layout supports 1 to 12 kinds"
        );
        Self {
            kinds,
            blocks: None,
            ids: Vec::new(),
            agents: Vec::new(),
            targets: Targets::default(),
            seek_scratch: Vec::new(),
            high_water: 0,
        }
    }

    /// The agents for `ids` in their states, each of its id's kind.
    fn make_agents<'a>(
        &self,
        ids: &'a [u64],
        states: &'a [EntityState<S>],
    ) -> impl Iterator<Item = Box<dyn Agent<S>>> + 'a {
        let (kinds, blocks) = (self.kinds, self.blocks);
        ids.iter().zip(states).map(move |(&id, s)| {
            let kind = match blocks {
                Some(per_block) => (id / per_block).min(u64::from(kinds) - 1),
                None => kind_of(kinds, id),
            };
            make_agent(kind, s)
        })
    }
}

impl<S: Scalar> DynAgents<S> {
    /// The same kinds, objects and allocation order, but kinds assigned in contiguous id blocks
    /// (`ids 0..n/K` kind 0, ...) so the virtual call's target changes only K times per pass:
    /// the bench's control for "is it the branch predictor?".
    pub fn new_in_blocks(kinds: u8, expected_len: usize) -> Self {
        let mut layout = Self::new(kinds);
        layout.blocks = Some((expected_len as u64).div_ceil(u64::from(kinds)).max(1));
        layout
    }
}

impl<S: Scalar> Layout<S> for DynAgents<S> {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Dyn(self.kinds)
    }

    fn len(&self) -> usize {
        self.agents.len()
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.ids.try_reserve(additional)?;
        self.agents.try_reserve(additional)?;
        self.targets.try_reserve(additional)?;
        // The boxes come one by one later, and a failed `Box::new` aborts: ask for them now.
        let chunk = glibc_malloc_chunk_bytes(size_of::<[S; 8]>()) as usize;
        Ok(can_allocate(additional.saturating_mul(chunk))?)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<S>]) {
        self.ids.extend_from_slice(ids);
        self.targets.push(ids.len());
        let agents: Vec<_> = self.make_agents(ids, states).collect();
        self.agents.extend(agents);
        self.high_water = self.high_water.max(self.agents.len());
    }

    fn swap_remove(&mut self, index: usize) {
        self.ids.swap_remove(index);
        self.targets.swap_remove(index);
        self.agents.swap_remove(index);
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.ids.truncate(len);
        self.targets.truncate(len);
        self.agents.truncate(len);
        self.give_back_memory();
        Released::InPlace
    }

    fn step_move(&mut self, dt: S, threads: Threads) {
        let c = chunk_len(threads, self.len());
        for_each_part(threads, self.agents.chunks_mut(c), |chunk| {
            for agent in chunk {
                agent.move_step(dt);
            }
        });
    }

    fn step_regen(&mut self, dt: S, threads: Threads) {
        let c = chunk_len(threads, self.len());
        for_each_part(threads, self.agents.chunks_mut(c), |chunk| {
            for agent in chunk {
                agent.regen_step(dt);
            }
        });
    }

    fn gather_points(&mut self, out: PointSink<'_>, threads: Threads) {
        let c = chunk_len(threads, self.len());
        let parts = sink_chunks(out, c).zip(self.agents.chunks(c));
        for_each_part(threads, parts, |(SinkPart(out), agents)| {
            out.write_iter(agents.iter().map(|agent| agent.point().to_le_bytes()));
        });
    }

    fn for_each_entity_in(&self, range: Range<usize>, visit: &mut dyn FnMut(u64, &EntityState<S>)) {
        for (id, agent) in self.ids[range.clone()].iter().zip(&self.agents[range]) {
            visit(*id, &agent.state());
        }
    }

    fn memory(&self) -> MemoryUse {
        let entity = size_of::<EntityState<S>>();
        let id = size_of::<u64>() as u64;
        MemoryUse {
            payload_bytes: self.len() as u64 * (entity as u64 + id),
            allocated_bytes: self.agents.capacity() as u64 * size_of::<Box<dyn Agent<S>>>() as u64
                + self.ids.capacity() as u64 * id
                + self.len() as u64 * glibc_malloc_chunk_bytes(entity)
                + self.targets.allocated_bytes()
                + (self.seek_scratch.capacity() * size_of::<[S; 2]>()) as u64,
            modelled: true,
        }
    }

    fn step_avoid(&mut self, dt: S, near: &mut Neighbours<S>, threads: Threads) {
        let agents = &self.agents;
        let pushes = near.push_apart(threads, agents.len(), |i| agents[i].position());
        let c = chunk_len(threads, agents.len());
        let parts = self.agents.chunks_mut(c).zip(pushes.chunks(c));
        for_each_part(threads, parts, |(agents, pushes)| {
            for (agent, &push) in agents.iter_mut().zip(pushes) {
                let [_, _, vx, vy] = agent.motion();
                let (vx, vy) = avoid_one(vx, vy, push, dt);
                agent.set_velocity(vx, vy);
            }
        });
    }

    fn step_seek(&mut self, dt: S, threads: Threads) {
        let (agents, targets) = (&mut self.agents, &self.targets);
        if threads == Threads::One {
            for i in 0..agents.len() {
                if let Some(t) = targets.target_of(i) {
                    let target = agents[t].position();
                    agents[i].seek_step(target, dt);
                }
            }
            return;
        }
        let scratch = &mut self.seek_scratch;
        scratch.resize(agents.len(), [S::ZERO; 2]);
        let shared = &*agents;
        seek_into(
            threads,
            scratch,
            dt,
            |i| shared[i].motion(),
            |i| targets.target_of(i),
            |t| shared[t].position(),
        );
        let c = chunk_len(threads, agents.len());
        for_each_part(
            threads,
            agents.chunks_mut(c).zip(scratch.chunks(c)),
            |(agents, velocities)| {
                for (agent, &[vx, vy]) in agents.iter_mut().zip(velocities) {
                    agent.set_velocity(vx, vy);
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
        self.agents[index].set_velocity(vx, vy);
    }
}

impl<S: Scalar> InHostMemory for DynAgents<S> {
    fn regions(&self, range: Range<usize>, out: &mut Vec<Region>) {
        for i in range {
            self.agents[i].regions(i, out);
            out.push(Region::of(&self.ids[i], Field::Id, i));
        }
    }
}

impl<S: Scalar> DynAgents<S> {
    fn give_back_memory(&mut self) {
        shrink_if_sparse(&mut self.ids);
        shrink_if_sparse(&mut self.agents);
        self.targets.release_unused();
        self.seek_scratch = Vec::new();
        if compaction_due(self.agents.len(), &mut self.high_water) {
            // The same entities in the same logical order: their targets stand as they are.
            let states: Vec<EntityState<S>> = self.agents.iter().map(|a| a.state()).collect();
            self.agents = Vec::new();
            release_to_os();
            let ids = std::mem::take(&mut self.ids);
            self.agents = self.make_agents(&ids, &states).collect();
            self.ids = ids;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_stores_a_permutation_of_the_fields() {
        let mut layouts = Vec::new();
        for kind in 0..12 {
            let slots: Vec<usize> = (0..8).map(|f| slot(kind, f)).collect();
            let mut sorted = slots.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "kind {kind}");
            layouts.push(slots);
        }
        layouts.sort();
        layouts.dedup();
        assert_eq!(layouts.len(), 12, "twelve distinct field orders");
    }

    #[test]
    fn agents_round_trip_their_state() {
        let s = crate::workload::spawn::<f32>(5, 9);
        for kind in 0..12 {
            assert_eq!(make_agent(kind, &s).state(), s);
        }
        let kinds: std::collections::HashSet<u64> = (0..1000).map(|id| kind_of(12, id)).collect();
        assert_eq!(kinds.len(), 12, "hashing reaches every kind");
    }
}

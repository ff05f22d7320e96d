//! The gpu layout: the eight fields in eight GPU storage buffers (struct-of-arrays on the device),
//! `move` and `regen` as compute passes that also write each entity's packed point into the
//! buffer the renderer draws, `seek` as a third pass, and the neighbours' grid and pass
//! ([`super::grid`]) as a fourth. Per frame the CPU only dispatches:
//! nothing is gathered, and nothing is uploaded but seek's targets after a structural change.
//!
//! Seeking: each entity's target is a generational handle on the CPU ([`Targets`], as `soa`
//! keeps them), which survives swap-removes. Before a seek pass that follows a push, a removal
//! or a new target, the handles are resolved to slots (after a flush, an entity's slot is its
//! logical index) and uploaded as one `u32` per entity; the pass then gathers the targets'
//! positions on the device: a GPU's answer to a random gather is thousands of loads in flight.
//!
//! Ids stay on the CPU (they are never simulated); logical order is kept exactly as every other
//! layout keeps it, with appends and swap-removes batched through a [`SlotMap`] and carried out
//! by one flush. Reads (a switch out, a checksum) copy slots into a staging buffer and map it:
//! `map_async`, then a wait for that one copy, a bounded chunk at a time.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use super::context::GpuContext;
use super::grid::{self, DeviceGrid, Fields};
use super::kernels::{ARGS_BYTES, DispatchArgs, bind_group};
use super::readback::{F32, Read, read_buffer, stage};
use super::slots::SlotMap;
use super::timer::{AVOID_QUERY, Ran, SEEK_QUERY, Timer};
use crate::layout::slots::Targets;
use crate::layout::{Layout, LayoutKind, Released, ReserveError};
use crate::memory::MemoryUse;
use crate::neighbours::Neighbours;
use crate::runtime::device::{DeviceLayout, DevicePoints, DeviceTime};
use crate::threads::Threads;
use crate::workload::{EntityState, PointSink, SinkPart, avoid_one, pack_point, sink_chunks};

const FIELDS: usize = 8;
/// Entities read back per staging buffer: 32 MiB of fields.
const READ_CHUNK: usize = 1 << 20;
/// Read-backs kept at once (a prefetched switch chunk and a churn's, with room to spare).
const MAX_READS: usize = 4;
/// Buffers start this big and never shrink below it (1 MiB per field).
const MIN_CAPACITY: usize = 1 << 18;

/// One buffer per field plus the points, all `capacity` entities long.
struct Columns {
    fields: [wgpu::Buffer; FIELDS],
    points: wgpu::Buffer,
    capacity: usize,
    /// Each pass's arguments, bound with the columns.
    move_args: wgpu::Buffer,
    regen_args: wgpu::Buffer,
    move_group: wgpu::BindGroup,
    regen_group: wgpu::BindGroup,
}

/// What reads and flushes change through `&self`.
#[derive(Default)]
struct Shared {
    slots: SlotMap,
    /// Read-backs of slot ranges started since the last change to the slots' contents (a flush
    /// or a pass), finished when first needed: the next switch chunk, prefetched after the
    /// step, and the entities a churn is about to read one at a time.
    reads: Vec<Read>,
    /// The move list and its scratch column, grown to the largest flush so far.
    move_list: Option<(wgpu::Buffer, wgpu::Buffer, usize)>,
}

pub struct GpuLayout {
    ctx: Arc<GpuContext>,
    ids: Vec<u64>,
    columns: Columns,
    shared: Mutex<Shared>,
    move_list_args: wgpu::Buffer,
    timer: Option<Timer>,
    seek: SeekTargets,
    /// The neighbour grid, built at the first neighbour pass.
    grid: Option<DeviceGrid>,
    /// Whether this frame ran the neighbour pass (its time is the device's too).
    avoid_ran: bool,
    /// The grid the device last refused (entities, cells) and why (said once).
    grid_refused: Option<(usize, usize, String)>,
}

/// Seek's targets: handles on the CPU, and the slots they resolved to on the device.
struct SeekTargets {
    handles: Targets,
    /// Each entity's target slot (or `NO_TARGET`), and how many entities the buffer holds.
    slots: Option<(wgpu::Buffer, usize)>,
    /// Whether `slots` matches `handles` and the entities' slots (no push, removal or new
    /// target since the last upload).
    fresh: bool,
    args: wgpu::Buffer,
    /// Whether this frame ran the seek pass (its time is the device's too).
    ran: bool,
}

/// The shader's "no target" slot.
const NO_TARGET: u32 = u32::MAX;

impl GpuLayout {
    pub fn new(ctx: Arc<GpuContext>) -> Result<Self, String> {
        let timed = ctx.timestamps;
        Self::with_timer(ctx, timed)
    }

    /// `timed`: measure the passes with timestamp queries (the device must have them).
    fn with_timer(ctx: Arc<GpuContext>, timed: bool) -> Result<Self, String> {
        let columns = Columns::new(&ctx, MIN_CAPACITY)?;
        Ok(Self {
            move_list_args: args_buffer(&ctx.device, "move list"),
            seek: SeekTargets {
                handles: Targets::default(),
                slots: None,
                fresh: false,
                args: args_buffer(&ctx.device, "seek"),
                ran: false,
            },
            timer: timed.then(|| Timer::new(&ctx)),
            grid: None,
            avoid_ran: false,
            grid_refused: None,
            ids: Vec::new(),
            columns,
            shared: Mutex::new(Shared::default()),
            ctx,
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// The renderer's buffer, every live entity's point written (a pending flush is done first).
    pub fn points(&self) -> DevicePoints {
        self.flush(&mut self.shared());
        DevicePoints {
            buffer: self.columns.points.clone(),
            len: self.ids.len(),
        }
    }

    fn shared(&self) -> MutexGuard<'_, Shared> {
        // A panic while the lock was held left nothing half-changed that a reader could see
        // (every change is made in one assignment), so a poisoned lock is still usable.
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for `needed` slots: bigger buffers, the written slots copied over.
    fn grow_to(&mut self, needed: usize) -> Result<(), String> {
        if needed <= self.columns.capacity {
            return Ok(());
        }
        let limit = self.ctx.capacity_limit();
        if needed > limit.max_entities {
            return Err(format!(
                "{needed} entities do not fit: {} (at most {})",
                limit.limit, limit.max_entities
            ));
        }
        let capacity = needed
            .max(self.columns.capacity.saturating_mul(2))
            .min(limit.max_entities);
        let written = self.shared().slots.written();
        self.replace_columns(capacity, written)
    }

    /// New buffers of `capacity`, slots `0..keep` copied into them.
    fn replace_columns(&mut self, capacity: usize, keep: usize) -> Result<(), String> {
        let fresh = Columns::new(&self.ctx, capacity)?;
        let mut encoder = self.encoder("copy columns");
        let bytes = keep as u64 * F32;
        if bytes > 0 {
            for (from, to) in self.columns.all().zip(fresh.all()) {
                encoder.copy_buffer_to_buffer(from, 0, to, 0, bytes);
            }
        }
        self.ctx.queue.submit([encoder.finish()]);
        self.columns = fresh;
        self.shared().reads.clear();
        Ok(())
    }

    fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }

    /// Carries out the appends and swap-removes since the last flush: every column gathers its
    /// sources into scratch, then scatters them to their destinations.
    fn flush(&self, shared: &mut Shared) {
        if shared.slots.is_flat() {
            shared.slots.take_moves(self.ids.len());
            return;
        }
        let moves = shared.slots.take_moves(self.ids.len());
        shared.reads.clear();
        if moves.is_empty() {
            return;
        }
        let device = &self.ctx.device;
        if shared.move_list.as_ref().is_none_or(|m| m.2 < moves.len()) {
            let capacity = moves.len().next_power_of_two().max(1024);
            let buffer = |label: &str, bytes: usize| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: (capacity * bytes) as u64,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            };
            shared.move_list = Some((buffer("move_list", 8), buffer("scratch", 4), capacity));
        }
        let Some((list, scratch, _)) = &shared.move_list else {
            return;
        };
        self.ctx
            .queue
            .write_buffer(list, 0, bytemuck::cast_slice(&moves));
        let (args, [gx, gy]) = DispatchArgs::new(moves.len(), 0.0);
        self.ctx
            .queue
            .write_buffer(&self.move_list_args, 0, bytemuck::bytes_of(&args));
        let groups: Vec<wgpu::BindGroup> = self
            .columns
            .all()
            .map(|column| {
                bind_group(
                    device,
                    &self.ctx.kernels.move_list_layout,
                    &[
                        (20, &self.move_list_args),
                        (21, column),
                        (22, list),
                        (23, scratch),
                    ],
                )
            })
            .collect();
        let mut encoder = self.encoder("flush");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("flush"),
                timestamp_writes: None,
            });
            for group in &groups {
                pass.set_bind_group(0, group, &[]);
                pass.set_pipeline(&self.ctx.kernels.gather_pipeline);
                pass.dispatch_workgroups(gx, gy, 1);
                pass.set_pipeline(&self.ctx.kernels.scatter_pipeline);
                pass.dispatch_workgroups(gx, gy, 1);
            }
        }
        self.ctx.queue.submit([encoder.finish()]);
    }

    /// Carries out pending appends and removals before a pass changes every entity (whose cached
    /// read-back goes stale); whether there is anything to step.
    fn ready_to_step(&self) -> bool {
        let mut shared = self.shared();
        self.flush(&mut shared);
        shared.reads.clear();
        !self.ids.is_empty()
    }

    /// The states in slots `slots`, copied to a staging buffer, mapped and read.
    fn read_slots(&self, slots: Range<usize>) -> Vec<EntityState<f32>> {
        let mut read = self.start_read(slots);
        read.finish(&self.ctx);
        read.states
    }

    /// The states of the entities at logical indices `at`, in that order, wherever they sit,
    /// in one round trip: each field's rows gathered on the device into a column of their own
    /// (the flush's gather pass, with `at` as its sources), then read back together. What a
    /// reorder reads a batch at a time: entities in the new order lie all over the buffers.
    fn read_rows(&self, at: &[usize]) -> Vec<EntityState<f32>> {
        if at.is_empty() {
            return Vec::new();
        }
        self.flush(&mut self.shared());
        let device = &self.ctx.device;
        let n = at.len();
        let buffer = |label: &str, bytes: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: usage | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        // Flushed: each entity sits in the slot of its logical index.
        let sources: Vec<[u32; 2]> = at
            .iter()
            .enumerate()
            .map(|(k, &i)| [k as u32, i as u32])
            .collect();
        let list = buffer("rows", n as u64 * 8, wgpu::BufferUsages::COPY_DST);
        self.ctx
            .queue
            .write_buffer(&list, 0, bytemuck::cast_slice(&sources));
        let args = args_buffer(device, "rows");
        let (dispatch, [gx, gy]) = DispatchArgs::new(n, 0.0);
        self.ctx
            .queue
            .write_buffer(&args, 0, bytemuck::bytes_of(&dispatch));
        let rows: Vec<wgpu::Buffer> = (0..FIELDS)
            .map(|_| buffer("row column", n as u64 * F32, wgpu::BufferUsages::COPY_SRC))
            .collect();
        let mut encoder = self.encoder("read rows");
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("read rows"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.ctx.kernels.gather_pipeline);
            for (field, column) in self.columns.fields.iter().zip(&rows) {
                let group = bind_group(
                    device,
                    &self.ctx.kernels.move_list_layout,
                    &[(20, &args), (21, field), (22, &list), (23, column)],
                );
                pass.set_bind_group(0, &group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            }
        }
        self.ctx.queue.submit([encoder.finish()]);
        let mut read = Read {
            slots: 0..n,
            staging: Some(stage(&self.ctx, rows.iter(), 0..n)),
            states: Vec::new(),
        };
        read.finish(&self.ctx);
        read.states
    }

    /// Copies slots `slots` of every field into a staging buffer and asks for it to be mapped;
    /// waits for nothing.
    fn start_read(&self, slots: Range<usize>) -> Read {
        let staging = (!slots.is_empty())
            .then(|| stage(&self.ctx, self.columns.fields.iter(), slots.clone()));
        Read {
            slots,
            staging,
            states: Vec::new(),
        }
    }

    /// Submits one compute pass of `pipeline` over every entity, timed into queries `first` and
    /// `first + 1` where the adapter has timestamps.
    fn dispatch(
        &self,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        group: &wgpu::BindGroup,
        args_buffer: &wgpu::Buffer,
        dt: f32,
        first_query: u32,
    ) -> wgpu::CommandEncoder {
        let (args, [gx, gy]) = DispatchArgs::new(self.ids.len(), dt);
        self.ctx
            .queue
            .write_buffer(args_buffer, 0, bytemuck::bytes_of(&args));
        let mut encoder = self.encoder(label);
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: self
                    .timer
                    .as_ref()
                    .map(|t| wgpu::ComputePassTimestampWrites {
                        query_set: &t.queries,
                        beginning_of_pass_write_index: Some(first_query),
                        end_of_pass_write_index: Some(first_query + 1),
                    }),
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(gx, gy, 1);
        }
        encoder
    }
}

impl Columns {
    fn new(ctx: &GpuContext, capacity: usize) -> Result<Self, String> {
        let device = &ctx.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = |label: &str, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: capacity as u64 * F32,
                usage: usage
                    | wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let names = ["x", "y", "vx", "vy", "hp", "energy", "regen", "armor"];
        let fields = names.map(|name| buffer(name, wgpu::BufferUsages::empty()));
        let points = buffer("points", wgpu::BufferUsages::VERTEX);
        if let Some(error) = bevy_tasks::block_on(scope.pop()) {
            return Err(format!(
                "the GPU could not allocate {} MiB for {capacity} entities: {error}",
                (capacity as u64 * F32 * (FIELDS as u64 + 1)) >> 20
            ));
        }
        let k = &ctx.kernels;
        let [x, y, vx, vy, hp, energy, regen, _] = &fields;
        let (move_args, regen_args) = (args_buffer(device, "move"), args_buffer(device, "regen"));
        let move_group = bind_group(
            device,
            &k.move_layout,
            &[
                (0, &move_args),
                (1, x),
                (2, y),
                (3, vx),
                (4, vy),
                (5, hp),
                (6, &points),
            ],
        );
        let regen_group = bind_group(
            device,
            &k.regen_layout,
            &[(10, &regen_args), (11, energy), (12, regen)],
        );
        Ok(Self {
            fields,
            points,
            capacity,
            move_args,
            regen_args,
            move_group,
            regen_group,
        })
    }

    /// Every column a flush moves: the fields and the points.
    fn all(&self) -> impl Iterator<Item = &wgpu::Buffer> {
        self.fields.iter().chain(std::iter::once(&self.points))
    }
}

fn args_buffer(device: &wgpu::Device, label: &str) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: ARGS_BYTES,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl GpuLayout {
    /// Writes `states` (and their points) into slots `first..`, through wgpu's staging memory.
    fn write_states(&self, first: usize, states: &[EntityState<f32>]) {
        let Some(size) = wgpu::BufferSize::new(states.len() as u64 * F32) else {
            return;
        };
        let offset = first as u64 * F32;
        let queue = &self.ctx.queue;
        for (f, field) in self.columns.fields.iter().enumerate() {
            if let Some(mut view) = queue.write_buffer_with(field, offset, size) {
                let (words, _) = view.slice(..).into_chunks::<4>();
                words.write_iter(states.iter().map(|s| s.to_array()[f].to_le_bytes()));
            }
        }
        if let Some(mut view) = queue.write_buffer_with(&self.columns.points, offset, size) {
            let (words, _) = view.slice(..).into_chunks::<4>();
            words.write_iter(
                states
                    .iter()
                    .map(|s| pack_point(s.x, s.y, s.hp).to_le_bytes()),
            );
        }
    }
}

impl Layout<f32> for GpuLayout {
    fn kind(&self) -> LayoutKind {
        LayoutKind::Gpu
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), ReserveError> {
        self.ids.try_reserve(additional)?;
        self.seek.handles.try_reserve(additional)?;
        self.flush(&mut self.shared());
        self.grow_to(self.ids.len().saturating_add(additional))
            .map_err(ReserveError::Device)
    }

    fn push(&mut self, ids: &[u64], states: &[EntityState<f32>]) {
        let (len, n) = (self.ids.len(), states.len());
        if self.shared().slots.written() + n > self.columns.capacity {
            // Appends since the last flush took fresh slots; compacting frees them.
            self.flush(&mut self.shared());
        }
        if let Err(e) = self.grow_to(len + n) {
            // As `Vec::push` aborts when memory runs out: callers make room with `try_reserve`
            // first (the swarm always does), so this is a broken promise, not bad input.
            panic!("gpu layout: push beyond the room reserved: {e}");
        }
        let first = self.shared().slots.push(len, n);
        self.write_states(first, states);
        self.ids.extend_from_slice(ids);
        self.seek.handles.push(n);
        self.seek.fresh = false;
    }

    fn swap_remove(&mut self, index: usize) {
        let len = self.ids.len();
        self.shared().slots.swap_remove(index, len);
        self.ids.swap_remove(index);
        self.seek.handles.swap_remove(index);
        self.seek.fresh = false;
    }

    fn truncate(&mut self, len: usize) -> Released {
        self.ids.truncate(len);
        self.shared().slots.truncate(len);
        self.seek.handles.truncate(len);
        self.seek.fresh = false;
        self.give_back_memory();
        Released::InPlace
    }

    fn step_move(&mut self, dt: f32, _threads: Threads) {
        if !self.ready_to_step() {
            return;
        }
        let encoder = self.dispatch(
            "move",
            &self.ctx.kernels.move_pipeline,
            &self.columns.move_group,
            &self.columns.move_args,
            dt,
            0,
        );
        self.ctx.queue.submit([encoder.finish()]);
    }

    fn step_regen(&mut self, dt: f32, _threads: Threads) {
        if !self.ready_to_step() {
            return;
        }
        let mut encoder = self.dispatch(
            "regen",
            &self.ctx.kernels.regen_pipeline,
            &self.columns.regen_group,
            &self.columns.regen_args,
            dt,
            2,
        );
        let ran = Ran {
            seek: std::mem::take(&mut self.seek.ran),
            avoid: std::mem::take(&mut self.avoid_ran),
        };
        let reading = self
            .timer
            .as_ref()
            .and_then(|t| t.resolve(&mut encoder, ran));
        self.ctx.queue.submit([encoder.finish()]);
        if let (Some(timer), Some(slot)) = (&self.timer, reading) {
            timer.start_read(slot);
        }
        // Map callbacks (the timer's) run when the device is polled; this never waits.
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
    }

    /// Reads the points back (tools and tests only: the renderer draws them where they are).
    fn gather_points(&mut self, out: PointSink<'_>, _threads: Threads) {
        self.flush(&mut self.shared());
        let mut start = 0;
        for SinkPart(part) in sink_chunks(out, READ_CHUNK) {
            let end = start + part.len();
            let words = read_buffer(&self.ctx, &self.columns.points, start..end);
            part.write_iter(words.iter().map(|w| w.to_le_bytes()));
            start = end;
        }
    }

    fn for_each_entity_in(
        &self,
        range: Range<usize>,
        visit: &mut dyn FnMut(u64, &EntityState<f32>),
    ) {
        let mut shared = self.shared();
        let slots: Vec<usize> = range.clone().map(|i| shared.slots.slot(i)).collect();
        let covered = |reads: &[Read], slot: usize| reads.iter().any(|r| r.covers(slot));
        if !slots.is_empty() && slots.iter().all(|&s| covered(&shared.reads, s)) {
            for read in &mut shared.reads {
                if slots.iter().any(|&s| read.covers(s)) {
                    read.finish(&self.ctx);
                }
            }
            for (i, slot) in range.zip(slots) {
                if let Some(state) = shared.reads.iter().find_map(|r| r.get(slot)) {
                    visit(self.ids[i], state);
                }
            }
            return;
        }
        self.flush(&mut shared);
        drop(shared);
        let mut i = range.start;
        while i < range.end {
            let end = range.end.min(i + READ_CHUNK);
            for (k, state) in self.read_slots(i..end).iter().enumerate() {
                visit(self.ids[i + k], state);
            }
            i = end;
        }
    }

    fn for_each_entity_at(&self, at: &[usize], visit: &mut dyn FnMut(u64, &EntityState<f32>)) {
        for part in at.chunks(READ_CHUNK) {
            for (&i, state) in part.iter().zip(self.read_rows(part)) {
                visit(self.ids[i], &state);
            }
        }
    }

    fn memory(&self) -> MemoryUse {
        let device_bytes = self.columns.capacity as u64 * F32 * (FIELDS as u64 + 1);
        MemoryUse {
            payload_bytes: self.ids.len() as u64 * (FIELDS as u64 * F32 + 8),
            allocated_bytes: self.ids.capacity() as u64 * 8
                + self.seek.handles.allocated_bytes()
                + device_bytes
                + self.seek.slots.as_ref().map_or(0, |(_, n)| *n as u64 * 4)
                + self.grid.as_ref().map_or(0, DeviceGrid::bytes),
            modelled: false,
        }
    }

    fn step_seek(&mut self, dt: f32, _threads: Threads) {
        if !self.ready_to_step() {
            return;
        }
        if !self.seek.fresh {
            self.upload_target_slots();
        }
        let Some((slots, _)) = &self.seek.slots else {
            return;
        };
        let [x, y, vx, vy, ..] = &self.columns.fields;
        let group = bind_group(
            &self.ctx.device,
            &self.ctx.kernels.seek_layout,
            &[
                (30, &self.seek.args),
                (31, x),
                (32, y),
                (33, vx),
                (34, vy),
                (35, slots),
            ],
        );
        let encoder = self.dispatch(
            "seek",
            &self.ctx.kernels.seek_pipeline,
            &group,
            &self.seek.args,
            dt,
            SEEK_QUERY,
        );
        self.ctx.queue.submit([encoder.finish()]);
        self.seek.ran = self.timer.is_some();
    }

    /// The neighbour pass on the device: the grid built by a counting sort in compute and the
    /// pass in the swarm's form, submitted and not waited for; what it found comes back a frame
    /// or two later. Where the device has no grid kernels (too few storage bindings) or cannot
    /// allocate the grid, the pass runs on the host over a read-back (the same rule and grid,
    /// so the same result), slowly but never lost.
    fn step_avoid(&mut self, dt: f32, near: &mut Neighbours<f32>, threads: Threads) {
        if !self.ready_to_step() {
            return;
        }
        if self.ctx.kernels.grid.is_none() {
            return self.step_avoid_on_host(dt, near, threads);
        }
        let n = self.ids.len();
        let max_words = self.ctx.capacity_limit().max_entities;
        let shape = grid::fit(near.shape_for(n), max_words);
        if !self
            .grid
            .as_ref()
            .is_some_and(|g| g.holds(n, shape.cells()))
        {
            // Room for growth, as the columns have: a count that creeps up rebuilds rarely.
            let entities = n.max(self.columns.capacity);
            let cells = grid::cells_to_allocate(shape, max_words);
            // A request as large as one the device refused is not tried again.
            if let Some((e, c, _)) = &self.grid_refused
                && entities >= *e
                && cells >= *c
            {
                return self.step_avoid_on_host(dt, near, threads);
            }
            self.grid = None;
            match DeviceGrid::new(&self.ctx, entities, cells) {
                Ok(grid) => {
                    self.grid = Some(grid);
                    self.grid_refused = None;
                }
                Err(reason) => {
                    eprintln!("gpu layout: {reason}; the neighbour pass runs on the host");
                    self.grid_refused = Some((entities, cells, reason));
                    return self.step_avoid_on_host(dt, near, threads);
                }
            }
        }
        let Some(grid) = self.grid.as_mut() else {
            return;
        };
        let [x, y, vx, vy, ..] = &self.columns.fields;
        let mut encoder = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("neighbours"),
            });
        let timestamps = self
            .timer
            .as_ref()
            .map(|t| wgpu::ComputePassTimestampWrites {
                query_set: &t.queries,
                beginning_of_pass_write_index: Some(AVOID_QUERY),
                end_of_pass_write_index: Some(AVOID_QUERY + 1),
            });
        let fields = Fields { x, y, vx, vy };
        let (form, ctx) = (near.form(), &self.ctx);
        let reading = grid.encode(ctx, &mut encoder, timestamps, fields, n, shape, form, dt);
        self.ctx.queue.submit([encoder.finish()]);
        if let Some(slot) = reading {
            grid.start_read(slot);
        }
        let _ = self.ctx.device.poll(wgpu::PollType::Poll);
        if let Some((found, on)) = grid.found() {
            near.record(found, on);
        }
        self.avoid_ran = self.timer.is_some();
    }

    fn set_targets(&mut self, first: usize, targets: &[Option<usize>]) {
        self.seek.handles.set(first, targets);
        self.seek.fresh = false;
    }

    fn target_at(&self, index: usize) -> Option<u64> {
        self.seek.handles.target_of(index).map(|t| self.ids[t])
    }

    fn set_velocity_at(&mut self, index: usize, vx: f32, vy: f32) {
        let mut shared = self.shared();
        let offset = shared.slots.slot(index) as u64 * F32;
        shared.reads.clear();
        drop(shared);
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.columns.fields[2], offset, &vx.to_le_bytes());
        queue.write_buffer(&self.columns.fields[3], offset, &vy.to_le_bytes());
    }
}

impl GpuLayout {
    /// The neighbour pass on the host: every state read back, the pass run over the copy (the
    /// grid and the rule the CPU layouts run), the new velocities written to the device.
    fn step_avoid_on_host(&mut self, dt: f32, near: &mut Neighbours<f32>, threads: Threads) {
        let n = self.ids.len();
        let mut states = Vec::with_capacity(n);
        self.for_each_entity_in(0..n, &mut |_, state| states.push(*state));
        let pushes = near.push_apart(threads, n, |i| [states[i].x, states[i].y]);
        for (state, &push) in states.iter_mut().zip(pushes) {
            (state.vx, state.vy) = avoid_one(state.vx, state.vy, push, dt);
        }
        self.write_states(0, &states);
    }

    /// Resolves every entity's target handle to the slot it sits in (flushed: its logical
    /// index) and uploads them, in a buffer as long as the fields'.
    fn upload_target_slots(&mut self) {
        let len = self.ids.len();
        let handles = &self.seek.handles;
        let slots: Vec<u32> = (0..len)
            .map(|i| handles.target_of(i).map_or(NO_TARGET, |t| t as u32))
            .collect();
        if self.seek.slots.as_ref().is_none_or(|(_, n)| *n < len) {
            // As long as the fields: within the device's limits, and grown when they are.
            let capacity = self.columns.capacity;
            let buffer = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("seek targets"),
                size: capacity as u64 * 4,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.seek.slots = Some((buffer, capacity));
        }
        if let Some((buffer, _)) = &self.seek.slots
            && !slots.is_empty()
        {
            self.ctx
                .queue
                .write_buffer(buffer, 0, bytemuck::cast_slice(&slots));
        }
        self.seek.fresh = true;
    }
}

impl DeviceLayout<f32> for GpuLayout {
    /// Starts reading the slots of `range` back, in one go and without waiting: the next
    /// switch chunk (the driver asks right after the step, so the copy overlaps the rest of the
    /// frame) and the entities a churn reads one at a time during a switch out of this layout
    /// (one round trip, not one per victim).
    fn prepare_reads(&self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let mut shared = self.shared();
        let (lo, hi) = range.clone().fold((usize::MAX, 0), |(lo, hi), i| {
            let slot = shared.slots.slot(i);
            (lo.min(slot), hi.max(slot + 1))
        });
        // A span far wider than the range means entities scattered by churn: flushing and
        // reading them per chunk is then cheaper than reading everything in between.
        if hi - lo > 4 * range.len() + READ_CHUNK {
            return;
        }
        if shared.reads.len() >= MAX_READS {
            shared.reads.remove(0);
        }
        let read = self.start_read(lo..hi);
        shared.reads.push(read);
    }

    fn device_time(&self) -> DeviceTime {
        match &self.timer {
            None if self.ctx.is_software() => DeviceTime::Unavailable(
                "a software rasterizer's timestamps do not time its compute work",
            ),
            None => DeviceTime::Unavailable("the GPU adapter has no timestamp queries"),
            Some(timer) => timer.last(),
        }
    }

    fn points(&self) -> DevicePoints {
        GpuLayout::points(self)
    }

    fn finish_device_work(&self) {
        let _ = self.ctx.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

impl GpuLayout {
    fn give_back_memory(&mut self) {
        crate::layout::shrink_if_sparse(&mut self.ids);
        self.seek.handles.release_unused();
        let len = self.ids.len();
        if self
            .seek
            .slots
            .as_ref()
            .is_some_and(|(_, n)| *n > MIN_CAPACITY && len < *n / 4)
        {
            self.seek.slots = None;
            self.seek.fresh = false;
        }
        if self.columns.capacity > MIN_CAPACITY && len < self.columns.capacity / 4 {
            self.flush(&mut self.shared());
            let capacity = (len * 2).max(MIN_CAPACITY);
            // Keeping the big buffers is the fallback if the device cannot make small ones.
            let _ = self.replace_columns(capacity, len);
        }
        let mut shared = self.shared();
        if shared
            .move_list
            .as_ref()
            .is_some_and(|m| m.2 > 4 * len.max(1024))
        {
            shared.move_list = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spawn_range;
    use std::time::Duration;

    /// The timer's path (queries around the passes, resolved into a ring of mapped buffers,
    /// read a frame or two later), run where the device has timestamp queries, even on a
    /// software rasterizer whose times the app does not show: every frame measured is > 0 and
    /// the layout keeps stepping, with and without the neighbour pass among them.
    #[test]
    fn timestamps_come_back_without_waiting_for_them() {
        let Ok(ctx) = crate::runtime::gpu::context::shared() else {
            return;
        };
        if !ctx.has_timestamp_queries {
            return;
        }
        let mut layout = GpuLayout::with_timer(ctx, true).unwrap();
        let mut states = Vec::new();
        spawn_range(Default::default(), 1, 0, 50_000, &mut states);
        let ids: Vec<u64> = (0..50_000).collect();
        layout.try_reserve(ids.len()).unwrap();
        layout.push(&ids, &states);
        let mut measured = 0;
        let mut near = Neighbours::<f32>::default();
        for frame in 0..20 {
            if frame % 3 == 0 {
                layout.step_avoid(0.01, &mut near, Threads::One);
            }
            layout.step_move(0.01, Threads::One);
            layout.step_regen(0.01, Threads::One);
            layout.finish_device_work();
            if let DeviceTime::Measured(d) = layout.device_time() {
                assert!(d > Duration::ZERO);
                measured += 1;
            }
        }
        assert!(measured >= 10, "{measured} of 20 frames measured");
    }
}

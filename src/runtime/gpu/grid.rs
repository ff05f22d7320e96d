//! The gpu layout's neighbour pass, on the device (assets/shaders/simulate.wgsl, "avoid"): the
//! grid rebuilt every frame by a counting sort in compute (each entity's cell and its rank in it
//! from an atomic count, the counts' prefix sum, each entity into its slot), then the pass in the
//! form the swarm asks for. The grid is the one the CPU builds, cell for cell (the shader corrects
//! its f32 guess of a cell against the cells' first positions, [`GridShape::edges`]); it is
//! coarsened only where the device's largest binding could not hold one word per cell, and
//! coarser cells are still at least the radius wide, so the pass finds the same neighbours.
//!
//! What the pass found (candidates, neighbours, the most) comes back through a small ring of
//! mapped buffers a frame or two later, never waited for, as the timer's times do.

use super::context::GpuContext;
use super::kernels::{
    DispatchArgs, GRID_BYTES, GridArgs, Kernel, SCAN_BLOCK, WORKGROUP, bind_group,
};
use super::readback::{F32, MapState, Mapping};
use crate::neighbours::{AvoidForm, Found, GridShape};
use crate::workload::{AvoidConstants, WORLD_HEIGHT, WORLD_WIDTH};

/// The totals' words: candidates (low, high), within (low, high), most, padding.
const TOTALS_WORDS: u64 = 8;
/// Read-backs of the totals in flight at once.
const RING: usize = 3;

/// The positions and velocities the pass reads and writes: the layout's x, y, vx, vy.
pub(super) struct Fields<'a> {
    pub x: &'a wgpu::Buffer,
    pub y: &'a wgpu::Buffer,
    pub vx: &'a wgpu::Buffer,
    pub vy: &'a wgpu::Buffer,
}

/// The grid's buffers, sized for the most entities and cells asked for so far.
pub(super) struct DeviceGrid {
    entities: usize,
    cells: usize,
    /// Each column's and row's first position ([`GridShape::edges`]), for the shape named.
    edges: wgpu::Buffer,
    edges_for: Option<GridShape>,
    /// Each entity's cell and its rank among its cell's entities.
    cell_of: wgpu::Buffer,
    ranks: wgpu::Buffer,
    /// The counts, then each cell's first slot (one more word: every entity).
    starts: wgpu::Buffer,
    block_sums: wgpu::Buffer,
    /// Each slot's entity, and (tuned) its position.
    members: wgpu::Buffer,
    near_x: wgpu::Buffer,
    near_y: wgpu::Buffer,
    totals: wgpu::Buffer,
    args: wgpu::Buffer,
    ring: Vec<TotalsSlot>,
    /// Passes encoded so far; the ring's slots say which pass they hold.
    passes: u64,
    /// The latest totals read back, with the pass they came from and its grid.
    found: Option<(u64, Found, GridShape)>,
}

struct TotalsSlot {
    buffer: wgpu::Buffer,
    mapping: Mapping,
    /// The pass whose totals it holds, over how many entities, on which grid.
    pass: u64,
    entities: usize,
    shape: Option<GridShape>,
}

impl DeviceGrid {
    /// Buffers for `entities` entities and `cells` cells, or why the device could not
    /// allocate them.
    pub fn new(ctx: &GpuContext, entities: usize, cells: usize) -> Result<Self, String> {
        let device = &ctx.device;
        let max_words = ctx.capacity_limit().max_entities;
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let words = |label: &str, n: usize, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: n.max(1) as u64 * F32,
                usage: usage | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let plain = wgpu::BufferUsages::empty();
        let copied = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let grid = Self {
            cell_of: words("grid cells", entities, plain),
            ranks: words("grid ranks", entities, plain),
            starts: words("grid starts", cells + 1, wgpu::BufferUsages::COPY_DST),
            edges: words(
                "grid edges",
                edge_words(cells, max_words),
                wgpu::BufferUsages::COPY_DST,
            ),
            edges_for: None,
            block_sums: words("grid block sums", blocks(cells), plain),
            members: words("grid members", entities, plain),
            near_x: words("grid x", entities, plain),
            near_y: words("grid y", entities, plain),
            totals: words("grid totals", TOTALS_WORDS as usize, copied),
            args: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("grid args"),
                size: GRID_BYTES,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            ring: (0..RING)
                .map(|_| TotalsSlot {
                    buffer: device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("grid totals read back"),
                        size: TOTALS_WORDS * F32,
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    mapping: Mapping::default(),
                    pass: 0,
                    entities: 0,
                    shape: None,
                })
                .collect(),
            passes: 0,
            found: None,
            entities,
            cells,
        };
        if let Some(error) = bevy_tasks::block_on(scope.pop()) {
            return Err(format!(
                "the GPU could not allocate the neighbour grid for {entities} entities and {cells} cells: {error}"
            ));
        }
        Ok(grid)
    }

    /// Whether these buffers hold `entities` entities and `cells` cells.
    pub fn holds(&self, entities: usize, cells: usize) -> bool {
        entities <= self.entities && cells <= self.cells
    }

    pub fn bytes(&self) -> u64 {
        let cells = 2 * self.cells as u64 + 4 + blocks(self.cells) as u64;
        (self.entities as u64 * 5 + cells + TOTALS_WORDS) * F32
    }

    /// Encodes one frame's grid and pass over `len` entities into `pass` (timed by the caller),
    /// and the copy of its totals into a free slot of the ring (returned, to start mapping
    /// after the submit; none free: this frame's totals go unread).
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
        fields: Fields<'_>,
        len: usize,
        shape: GridShape,
        form: AvoidForm,
        dt: f32,
    ) -> Option<usize> {
        let k = ctx.kernels.grid.as_ref()?;
        let [r2, inv_r, inv_r2] = AvoidConstants::<f32>::new(shape.radius).radius_terms();
        let args = GridArgs {
            len: len as u32,
            cells: shape.cells() as u32,
            cols: shape.cols as u32,
            rows: shape.rows as u32,
            col_scale: (shape.cols as f64 / WORLD_WIDTH) as f32,
            row_scale: (shape.rows as f64 / WORLD_HEIGHT) as f32,
            r2,
            inv_r,
            inv_r2,
            dt,
            blocks: blocks(shape.cells()) as u32,
            tuned: u32::from(form == AvoidForm::Tuned),
        };
        ctx.queue
            .write_buffer(&self.args, 0, bytemuck::bytes_of(&args));
        if self.edges_for != Some(shape) {
            let edges = shape.edges();
            ctx.queue
                .write_buffer(&self.edges, 0, bytemuck::cast_slice(&edges));
            self.edges_for = Some(shape);
        }
        encoder.clear_buffer(&self.starts, 0, Some((shape.cells() as u64 + 1) * F32));
        encoder.clear_buffer(&self.totals, 0, None);
        let group = |kernel: &Kernel, buffers: &[(u32, &wgpu::Buffer)]| {
            bind_group(&ctx.device, &kernel.layout, buffers)
        };
        let a = &self.args;
        let count = group(
            &k.count,
            &[
                (40, a),
                (41, fields.x),
                (42, fields.y),
                (43, &self.cell_of),
                (44, &self.ranks),
                (45, &self.starts),
                (46, &self.edges),
            ],
        );
        let scan_blocks = group(
            &k.scan_blocks,
            &[(50, a), (51, &self.starts), (52, &self.block_sums)],
        );
        let scan_sums = group(&k.scan_sums, &[(55, a), (56, &self.block_sums)]);
        let scan_add = group(
            &k.scan_add,
            &[(60, a), (61, &self.starts), (62, &self.block_sums)],
        );
        let place = group(
            &k.place,
            &[
                (65, a),
                (66, fields.x),
                (67, fields.y),
                (68, &self.cell_of),
                (69, &self.ranks),
                (70, &self.starts),
                (71, &self.members),
                (72, &self.near_x),
                (73, &self.near_y),
            ],
        );
        let shared = [
            (75, a),
            (78, fields.vx),
            (79, fields.vy),
            (80, &self.cell_of),
            (81, &self.starts),
            (82, &self.totals),
        ];
        let (pass_kernel, pass_group) = match form {
            AvoidForm::Idiomatic => {
                let own = [(76, fields.x), (77, fields.y), (83, &self.members)];
                (
                    &k.idiomatic,
                    group(&k.idiomatic, &[&shared[..], &own].concat()),
                )
            }
            AvoidForm::Tuned => {
                let own = [(84, &self.ranks), (85, &self.near_x), (86, &self.near_y)];
                (&k.tuned, group(&k.tuned, &[&shared[..], &own].concat()))
            }
        };
        let groups_for = |n: usize| DispatchArgs::new(n, 0.0).1;
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("neighbours"),
                timestamp_writes: timestamps,
            });
            let mut run = |kernel: &Kernel, group: &wgpu::BindGroup, [gx, gy]: [u32; 2]| {
                pass.set_pipeline(&kernel.pipeline);
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(gx, gy, 1);
            };
            let scan_groups = groups_for(blocks(shape.cells()) * WORKGROUP as usize);
            run(&k.count, &count, groups_for(len));
            run(&k.scan_blocks, &scan_blocks, scan_groups);
            run(&k.scan_sums, &scan_sums, [1, 1]);
            run(&k.scan_add, &scan_add, groups_for(shape.cells()));
            run(&k.place, &place, groups_for(len));
            run(pass_kernel, &pass_group, groups_for(len));
        }
        self.passes += 1;
        let free = self
            .ring
            .iter()
            .position(|s| matches!(s.mapping.state(), MapState::Idle | MapState::Failed))?;
        let slot = &mut self.ring[free];
        encoder.copy_buffer_to_buffer(&self.totals, 0, &slot.buffer, 0, TOTALS_WORDS * F32);
        (slot.pass, slot.entities, slot.shape) = (self.passes, len, Some(shape));
        Some(free)
    }

    /// Asks for slot `index` of the ring to be mapped, once its copy is submitted.
    pub fn start_read(&self, index: usize) {
        let slot = &self.ring[index];
        slot.mapping.start(&slot.buffer);
    }

    /// The latest totals that have come back (a frame or two behind), if any yet, with the
    /// grid they were found on.
    pub fn found(&mut self) -> Option<(Found, GridShape)> {
        for slot in &self.ring {
            if slot.mapping.state() != MapState::Mapped {
                continue;
            }
            let words: Vec<u32> = bytemuck::cast_slice(&slot.buffer.get_mapped_range(..)).to_vec();
            slot.buffer.unmap();
            slot.mapping.set(MapState::Idle);
            let wide = |at: usize| u64::from(words[at]) | (u64::from(words[at + 1]) << 32);
            let found = Found {
                entities: slot.entities,
                candidates: wide(0),
                within: wide(2),
                most: words[4],
            };
            let Some(shape) = slot.shape else {
                continue;
            };
            if self.found.is_none_or(|(pass, ..)| pass < slot.pass) {
                self.found = Some((slot.pass, found, shape));
            }
        }
        self.found.map(|(_, found, shape)| (found, shape))
    }
}

/// The scan's workgroups for `cells` cells.
fn blocks(cells: usize) -> usize {
    cells.div_ceil(SCAN_BLOCK as usize).max(1)
}

/// The cells to allocate for `shape`: twice its cells, so that a count that creeps up rebuilds
/// rarely, but never a starts buffer (one word more than the cells) past one binding.
pub(super) fn cells_to_allocate(shape: GridShape, max_words: usize) -> usize {
    (shape.cells() * 2)
        .min(max_words.saturating_sub(1))
        .max(shape.cells())
}

/// The words that hold the edges of any grid of at most `cells` cells, within one binding of
/// `max_words`: a grid's `cols + rows + 2` is at most `cells + 3` (as `(cols - 1)(rows - 1)`
/// is not negative), and under `cells` once both axes have three cells, as every grid here has.
fn edge_words(cells: usize, max_words: usize) -> usize {
    (cells + 3).min(max_words)
}

/// `shape`, its cells made larger where one word per cell would not fit `max_words` (the
/// device's largest binding): never narrower than the radius, so the same neighbours are found.
pub(super) fn fit(shape: GridShape, max_words: usize) -> GridShape {
    let mut fitted = shape;
    while fitted.cells() + 1 > max_words && (fitted.cols > 3 || fitted.rows > 3) {
        fitted.cols = (fitted.cols * 3 / 4).max(3);
        fitted.rows = (fitted.rows * 3 / 4).max(3);
    }
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbours::Reach;

    #[test]
    fn a_grid_too_large_for_a_binding_is_coarsened_never_below_three_cells_an_axis() {
        let shape = Reach::default().shape_at(1_000_000);
        assert_eq!(fit(shape, usize::MAX), shape);
        let fitted = fit(shape, shape.cells() / 10);
        assert!(fitted.cells() < shape.cells() / 10);
        assert!(fitted.cols < shape.cols && fitted.rows < shape.rows);
        assert_eq!(fit(shape, 1).cells(), 9);
        assert_eq!(blocks(0), 1);
        assert_eq!(blocks(SCAN_BLOCK as usize + 1), 2);
    }

    /// Every buffer the grid binds fits one binding, wherever the grid lands: lavapipe's 128 MiB
    /// limit (in words) and smaller ones, from a thousand entities to past the gpu layout's
    /// maximum, and the edges hold every column's and row's first position.
    #[test]
    fn every_grid_buffer_fits_one_binding() {
        for max_words in [1 << 25, 1 << 20, 10_000] {
            for n in [1_000, 1_000_000, 10_000_000, 20_000_000, 100_000_000] {
                let shape = fit(Reach::default().shape_at(n), max_words);
                assert!(shape.cols >= 3 && shape.rows >= 3, "{shape:?}");
                let cells = cells_to_allocate(shape, max_words);
                assert!(cells >= shape.cells(), "{n} at {max_words}: {shape:?}");
                let edges = edge_words(cells, max_words);
                assert!(
                    cells < max_words,
                    "starts, cells + 1 words: {n} at {max_words}"
                );
                assert!(edges <= max_words, "edges: {n} at {max_words}");
                assert!(edges >= shape.cols + shape.rows + 2, "{n} at {max_words}");
                assert!(blocks(cells) <= max_words);
            }
        }
    }
}

//! The neighbour system's machinery: the uniform grid that finds who is near whom, and the two
//! forms of the pass that reads them. The rule itself is [`crate::workload::avoid_pair`] and
//! [`crate::workload::avoid_one`], written once.
//!
//! A grid of square-ish cells at least the radius wide, rebuilt every frame by a counting sort,
//! as games build it: every entity within the radius of another is in one of the nine cells
//! around it. Two forms read it, and every layout runs both:
//! - [`AvoidForm::Idiomatic`]: the grid holds each entity's logical index; the pass visits the
//!   entities in storage order and reads each candidate's position through the layout, the way a
//!   user of that storage writes it (a `Query::get` in Bevy, an index into the `Vec` layouts, a
//!   box to follow in `boxed`). In id order the candidates lie anywhere in the storage.
//! - [`AvoidForm::Tuned`]: the grid copies every position into its own array, in cell order,
//!   once per frame (Unity's Boids way); the pass walks the cells in order, so a row of three
//!   cells is one contiguous run of the copy. Only the copy reads the layout.
//!
//! Both sum each entity's push in fixed point ([`crate::workload::Push`]), whose sum does not
//! depend on the order its terms come in: every layout, form, order and thread count gives the
//! same bits.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::SimError;
use crate::scalar::Scalar;
use crate::threads::{Threads, chunk_len, for_each_part};
use crate::workload::{AvoidConstants, Push, WORLD_HEIGHT, WORLD_WIDTH, avoid_pair};

/// The mean number of neighbours the radius is set for, unless asked otherwise.
pub const DEFAULT_NEIGHBOURS: f64 = 8.0;
/// How many times the world's mean density the default spawn pattern's entities see around
/// them at birth (its streams gather nearly everyone into clumps): the radius for a target of
/// `k` is the one at which an even spread would give `k * CROWDING` neighbours, so that `k` is
/// about the mean found at birth (the test `the_default_reach_finds_about_its_target_at_birth`
/// holds it; motion and the push itself change it, and the bench reports the mean found).
pub const CROWDING: f64 = 7.0;
/// The neighbour targets accepted: at least one, and few enough that the pass stays a pass
/// over neighbours, not over the world.
pub const NEIGHBOURS_MIN: f64 = 1.0;
pub const NEIGHBOURS_MAX: f64 = 64.0;
/// A cell is this much wider than the radius, so that an entity rounded into the next cell by
/// the division is still within one cell of every entity within the radius of it.
const CELL_MARGIN: f64 = 1.0 / 1024.0;
/// The largest radius: three cells across the world's height, the fewest that keep the nine
/// cells around an entity distinct in a wrapping world.
pub const MAX_RADIUS: f64 = WORLD_HEIGHT / 3.0 / (1.0 + CELL_MARGIN);
/// Cells per entity, at most: below a radius this small for the count, cells grow past the
/// radius instead of multiplying, so that the grid never outweighs the population.
pub const CELLS_PER_ENTITY: f64 = 4.0;
/// The most candidates an entity may test a frame, on average (estimated before anything is
/// built, from the radius, the count and [`CROWDING`]): a radius wide enough that every entity
/// tests thousands of others would take the frame for seconds, and is refused instead.
pub const MAX_CANDIDATES: f64 = 4096.0;

/// What sets the radius: a mean number of neighbours, the radius following the count (what the
/// app and the bench use), or a radius in world units, fixed whatever the count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reach {
    /// The radius at which the default pattern's entities have about this many neighbours each
    /// at birth ([`CROWDING`]): it shrinks as the count grows, so the work per entity stays the
    /// same. Motion changes it, and the clumps' cores hold many more: the bench reports the mean
    /// and the most found.
    Neighbours(f64),
    /// A radius in world units.
    Radius(f64),
}

impl Default for Reach {
    fn default() -> Self {
        Reach::Neighbours(DEFAULT_NEIGHBOURS)
    }
}

impl Reach {
    /// A neighbour target, or why not.
    pub fn neighbours(target: f64) -> Result<Self, SimError> {
        if target.is_finite() && (NEIGHBOURS_MIN..=NEIGHBOURS_MAX).contains(&target) {
            Ok(Reach::Neighbours(target))
        } else {
            Err(SimError::BadNeighbours {
                value: target,
                min: NEIGHBOURS_MIN,
                max: NEIGHBOURS_MAX,
            })
        }
    }

    /// A radius, or why not.
    pub fn radius(radius: f64) -> Result<Self, SimError> {
        if radius.is_finite() && radius > 0.0 && radius <= MAX_RADIUS {
            Ok(Reach::Radius(radius))
        } else {
            Err(SimError::BadRadius {
                value: radius,
                max: MAX_RADIUS,
            })
        }
    }

    /// The radius at `count` entities.
    pub fn radius_at(self, count: usize) -> f64 {
        match self {
            Reach::Neighbours(k) => {
                let area = WORLD_WIDTH * WORLD_HEIGHT;
                (k * area / (std::f64::consts::PI * CROWDING * count.max(1) as f64))
                    .sqrt()
                    .min(MAX_RADIUS)
            }
            Reach::Radius(r) => r,
        }
    }

    /// The grid for `count` entities, or why not: a radius at which each entity would test
    /// more than [`MAX_CANDIDATES`] others a frame is refused.
    pub fn grid_at(self, count: usize) -> Result<GridShape, SimError> {
        let shape = self.shape_at(count);
        let (radius, area, n) = (
            shape.radius,
            WORLD_WIDTH * WORLD_HEIGHT,
            count.max(1) as f64,
        );
        let cell = WORLD_WIDTH / shape.cols as f64;
        let candidates = 9.0 * n * cell * cell / area * CROWDING;
        if candidates > MAX_CANDIDATES {
            return Err(SimError::TooManyNeighbours {
                radius,
                count,
                candidates,
                largest: (MAX_CANDIDATES * area / (9.0 * n * CROWDING)).sqrt()
                    / (1.0 + CELL_MARGIN),
                max: MAX_CANDIDATES,
            });
        }
        Ok(shape)
    }

    /// The grid for `count` entities, however many candidates it gives (what a pass builds;
    /// requests are checked with [`Self::grid_at`] first).
    pub fn shape_at(self, count: usize) -> GridShape {
        let radius = self.radius_at(count);
        let area = WORLD_WIDTH * WORLD_HEIGHT;
        let cell = (radius * (1.0 + CELL_MARGIN))
            .max((area / (CELLS_PER_ENTITY * count.max(1) as f64)).sqrt())
            .min(WORLD_HEIGHT / 3.0);
        GridShape {
            radius,
            cols: (WORLD_WIDTH / cell).floor() as usize,
            rows: (WORLD_HEIGHT / cell).floor() as usize,
        }
    }

    pub fn describe(self) -> String {
        match self {
            Reach::Neighbours(k) => format!("{k} neighbours"),
            Reach::Radius(r) => format!("radius {r}"),
        }
    }
}

/// A grid's size: `cols` by `rows` cells over the world, for `radius`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridShape {
    pub radius: f64,
    pub cols: usize,
    pub rows: usize,
}

impl GridShape {
    pub fn cells(self) -> usize {
        self.cols * self.rows
    }

    /// The cell `(x, y)` falls in, as `(column, row)`.
    #[inline(always)]
    fn cell_of<S: Scalar>(self, [x, y]: [S; 2]) -> (usize, usize) {
        let col = (x.to_f64() * (self.cols as f64 / WORLD_WIDTH)) as usize;
        let row = (y.to_f64() * (self.rows as f64 / WORLD_HEIGHT)) as usize;
        (col.min(self.cols - 1), row.min(self.rows - 1))
    }

    /// The first position of each column (`cols + 1` of them, the last at the world's edge),
    /// then of each row (`rows + 1`), by [`Self::cell_of`]'s own rule: a position is in column
    /// `c` when it is at or past column `c`'s first and before column `c + 1`'s. What a device
    /// that guesses cells in f32 corrects its guess against, to sort every entity into the cell
    /// this grid does.
    pub fn edges(self) -> Vec<f32> {
        let along = |n: usize, extent: f64| {
            let scale = n as f64 / extent;
            let cell = move |v: f32| (f64::from(v) * scale) as usize;
            let step = |v: f32, by: i32| f32::from_bits(v.to_bits().wrapping_add_signed(by));
            (0..=n).map(move |c| {
                let mut v = (c as f64 / scale) as f32;
                while v > 0.0 && cell(step(v, -1)) >= c {
                    v = step(v, -1);
                }
                while cell(v) < c {
                    v = step(v, 1);
                }
                v
            })
        };
        along(self.cols, WORLD_WIDTH)
            .chain(along(self.rows, WORLD_HEIGHT))
            .collect()
    }

    /// The slots of the cells around `(col, row)` (itself and its eight neighbours, wrapping),
    /// as runs of `starts`: one run per row where the three cells sit side by side.
    #[inline(always)]
    pub fn around(self, starts: &[u32], col: usize, row: usize, mut run: impl FnMut(Range<usize>)) {
        let (cols, rows) = (self.cols, self.rows);
        for r in [row + rows - 1, row, row + 1] {
            let base = (r % rows) * cols;
            let slots = |c: usize| starts[base + c] as usize..starts[base + c + 1] as usize;
            if col >= 1 && col + 1 < cols {
                run(starts[base + col - 1] as usize..starts[base + col + 2] as usize);
            } else {
                for c in [col + cols - 1, col, col + 1] {
                    run(slots(c % cols));
                }
            }
        }
    }
}

/// A built grid, read only: see [`Neighbours::grid`].
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    pub shape: GridShape,
    pub starts: &'a [u32],
    pub members: &'a [u32],
    pub cells: &'a [u32],
}

/// The form of the neighbour pass (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AvoidForm {
    #[default]
    Idiomatic,
    Tuned,
}

impl AvoidForm {
    pub const BOTH: [AvoidForm; 2] = [AvoidForm::Idiomatic, AvoidForm::Tuned];

    pub fn name(self) -> &'static str {
        match self {
            AvoidForm::Idiomatic => "idiomatic",
            AvoidForm::Tuned => "tuned",
        }
    }
}

impl std::fmt::Display for AvoidForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What the last pass found, for the panel and the bench.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassCounts {
    pub entities: usize,
    /// Entities whose distance was tested (each entity is tested against itself too).
    pub candidates: u64,
    /// Other entities found within the radius, over all entities.
    pub neighbours: u64,
    /// The most neighbours one entity had.
    pub most: u32,
    pub radius: f64,
    pub cells: usize,
    /// How long the grid took to build (the tuned form's copy of the positions included), and
    /// the pass over it (the pushes back in logical order included); the layout's applying the
    /// pushes to its velocities is in neither. Zero where a device ran the pass (the gpu
    /// layout's; its time is the device's).
    pub grid: Duration,
    pub pass: Duration,
}

/// A pass's raw totals: entities, candidates tested, entities found within the radius (each
/// entity itself included), and the most within one entity's radius (itself included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub entities: usize,
    pub candidates: u64,
    pub within: u64,
    pub most: u32,
}

impl Found {
    /// As the panel and the bench read them: each entity's own count left out.
    pub fn counts(self, shape: GridShape) -> PassCounts {
        PassCounts {
            entities: self.entities,
            candidates: self.candidates,
            neighbours: self.within.saturating_sub(self.entities as u64),
            most: self.most.saturating_sub(1),
            radius: shape.radius,
            cells: shape.cells(),
            grid: Duration::ZERO,
            pass: Duration::ZERO,
        }
    }
}

impl PassCounts {
    pub fn candidates_per_entity(&self) -> f64 {
        self.candidates as f64 / self.entities.max(1) as f64
    }

    pub fn neighbours_per_entity(&self) -> f64 {
        self.neighbours as f64 / self.entities.max(1) as f64
    }
}

/// The neighbour system's state between frames: what sets the radius, the form, the grid and
/// each entity's push. One per swarm; the layout in use runs the pass with it
/// ([`crate::layout::Layout::step_avoid`]).
#[derive(Clone, Debug, Default)]
pub struct Neighbours<S> {
    reach: Reach,
    form: AvoidForm,
    shape: Option<GridShape>,
    /// Each cell's first slot, and one past the last cell's last.
    starts: Vec<u32>,
    /// Each slot's entity (its logical index), cell by cell.
    members: Vec<u32>,
    /// Each entity's cell (the build's first pass).
    cells: Vec<u32>,
    /// The tuned form: each entity's position as read (logical order), then the copy in slot
    /// order, each entity's slot, and each slot's push.
    read: Vec<[S; 2]>,
    copy_x: Vec<S>,
    copy_y: Vec<S>,
    slot_of: Vec<u32>,
    slot_push: Vec<Push>,
    /// Each entity's push, by logical index: what the layout applies.
    pushes: Vec<Push>,
    counts: PassCounts,
}

impl<S: Scalar> Neighbours<S> {
    pub fn new(reach: Reach, form: AvoidForm) -> Self {
        Self {
            reach,
            form,
            ..Self::default()
        }
    }

    pub fn reach(&self) -> Reach {
        self.reach
    }

    pub fn form(&self) -> AvoidForm {
        self.form
    }

    pub fn set_reach(&mut self, reach: Reach) {
        self.reach = reach;
    }

    pub fn set_form(&mut self, form: AvoidForm) {
        self.form = form;
        if form == AvoidForm::Idiomatic {
            self.read = Vec::new();
            self.copy_x = Vec::new();
            self.copy_y = Vec::new();
            self.slot_of = Vec::new();
            self.slot_push = Vec::new();
        }
    }

    /// What the last pass found.
    pub fn counts(&self) -> PassCounts {
        self.counts
    }

    /// The grid the last pass built (for measuring other ways to read it): its shape, each
    /// cell's first slot (one past the last cell's last), each slot's entity, each entity's cell.
    pub fn grid(&self) -> Option<Grid<'_>> {
        Some(Grid {
            shape: self.shape?,
            starts: &self.starts,
            members: &self.members,
            cells: &self.cells,
        })
    }

    /// Sets the grid up for `len` entities, or says why not before allocating anything.
    pub fn check(&self, len: usize) -> Result<GridShape, SimError> {
        self.reach.grid_at(len)
    }

    /// Every entity's push this frame (`len` entities), in logical order: `position(i)` reads
    /// entity `i`'s position through the layout. On `threads`.
    pub fn push_apart(
        &mut self,
        threads: Threads,
        len: usize,
        position: impl Fn(usize) -> [S; 2] + Sync,
    ) -> &[Push] {
        self.push_apart_with(threads, len, &position)
    }

    /// [`Self::push_apart`] on the calling thread, for a layout whose reads cannot be shared
    /// between threads (flecs' world handle).
    pub fn push_apart_here(&mut self, len: usize, position: impl Fn(usize) -> [S; 2]) -> &[Push] {
        let shape = self.begin(len);
        let started = Instant::now();
        match self.form {
            AvoidForm::Idiomatic => {
                self.cell_pass(0, &position, shape);
                self.place(len, shape);
                self.counts.grid = started.elapsed();
                let most = AtomicU64::new(0);
                let totals = [AtomicU64::new(0), AtomicU64::new(0)];
                let (members, starts) = (&self.members, &self.starts);
                idiomatic_part(
                    shape,
                    members,
                    starts,
                    &self.cells,
                    0,
                    &mut self.pushes,
                    &position,
                    &totals,
                    &most,
                );
                self.finish(len, shape, &totals, &most, started);
            }
            AvoidForm::Tuned => {
                self.read.clear();
                self.read.extend((0..len).map(&position));
                self.tuned(Threads::One, len, shape, started);
            }
        }
        &self.pushes
    }

    fn push_apart_with(
        &mut self,
        threads: Threads,
        len: usize,
        position: &(impl Fn(usize) -> [S; 2] + Sync),
    ) -> &[Push] {
        let shape = self.begin(len);
        let started = Instant::now();
        match self.form {
            AvoidForm::Idiomatic => {
                cells_on(threads, &mut self.cells, shape, position);
                self.place(len, shape);
                self.counts.grid = started.elapsed();
                let most = AtomicU64::new(0);
                let totals = [AtomicU64::new(0), AtomicU64::new(0)];
                let c = chunk_len(threads, len);
                let (members, starts, cells) = (&self.members, &self.starts, &self.cells);
                let parts = self.pushes.chunks_mut(c).enumerate();
                for_each_part(threads, parts, |(part, out)| {
                    idiomatic_part(
                        shape,
                        members,
                        starts,
                        cells,
                        part * c,
                        out,
                        position,
                        &totals,
                        &most,
                    );
                });
                self.finish(len, shape, &totals, &most, started);
            }
            AvoidForm::Tuned => {
                self.read.resize(len, [S::ZERO; 2]);
                let c = chunk_len(threads, len);
                let parts = self.read.chunks_mut(c).enumerate();
                for_each_part(threads, parts, |(part, out)| {
                    for (i, p) in (part * c..).zip(out) {
                        *p = position(i);
                    }
                });
                self.tuned(threads, len, shape, started);
            }
        }
        &self.pushes
    }

    /// The grid's shape for `len`, room for the pushes. Requests check the reach at the count
    /// asked for first ([`Self::check`]); the pass runs what it was given.
    fn begin(&mut self, len: usize) -> GridShape {
        let shape = self.reach.shape_at(len);
        self.shape = Some(shape);
        self.pushes.resize(len, Push::default());
        self.cells.resize(len, 0);
        shape
    }

    fn cell_pass(&mut self, first: usize, position: &impl Fn(usize) -> [S; 2], shape: GridShape) {
        for (i, cell) in (first..).zip(self.cells.iter_mut()) {
            let (col, row) = shape.cell_of(position(i));
            *cell = (row * shape.cols + col) as u32;
        }
    }

    /// The counting sort: each cell's first slot, then every entity into its cell's next slot,
    /// in logical order (so a cell lists its entities by increasing index).
    fn place(&mut self, len: usize, shape: GridShape) {
        self.starts.clear();
        self.starts.resize(shape.cells() + 1, 0);
        for &cell in &self.cells {
            self.starts[cell as usize + 1] += 1;
        }
        for k in 1..self.starts.len() {
            self.starts[k] += self.starts[k - 1];
        }
        self.members.resize(len, 0);
        let tuned = self.form == AvoidForm::Tuned;
        if tuned {
            self.slot_of.resize(len, 0);
        }
        // The next free slot of each cell: the starts, shifted one cell on as they fill.
        let mut next = self.starts[..shape.cells()].to_vec();
        for (i, &cell) in self.cells.iter().enumerate() {
            let slot = &mut next[cell as usize];
            self.members[*slot as usize] = i as u32;
            if tuned {
                self.slot_of[i] = *slot;
            }
            *slot += 1;
        }
    }

    /// The tuned form, once `read` holds every position in logical order: the grid, the copy
    /// in slot order, the pass cell by cell, then each slot's push back to its entity.
    fn tuned(&mut self, threads: Threads, len: usize, shape: GridShape, started: Instant) {
        let read = &self.read;
        cells_on(threads, &mut self.cells, shape, |i| read[i]);
        self.place(len, shape);
        self.copy_x.clear();
        self.copy_y.clear();
        for &i in &self.members {
            let [x, y] = self.read[i as usize];
            self.copy_x.push(x);
            self.copy_y.push(y);
        }
        self.counts.grid = started.elapsed();
        self.slot_push.resize(len, Push::default());
        let most = AtomicU64::new(0);
        let totals = [AtomicU64::new(0), AtomicU64::new(0)];
        // Parts of whole rows of cells, so that each part's slots are one run.
        let rows_per_part = chunk_len(threads, len)
            .div_ceil(len.div_ceil(shape.rows).max(1))
            .max(1);
        let mut parts = Vec::new();
        let mut rest = &mut self.slot_push[..];
        let mut row = 0;
        while row < shape.rows {
            let end = (row + rows_per_part).min(shape.rows);
            let slots =
                self.starts[row * shape.cols] as usize..self.starts[end * shape.cols] as usize;
            let (mine, tail) = rest.split_at_mut(slots.len());
            rest = tail;
            parts.push((row..end, slots.start, mine));
            row = end;
        }
        let (starts, copy_x, copy_y) = (&self.starts, &self.copy_x, &self.copy_y);
        let constants = AvoidConstants::<S>::new(shape.radius);
        for_each_part(threads, parts.into_iter(), |(rows, first, out)| {
            let (mut candidates, mut within, mut top) = (0u64, 0u64, 0u32);
            for row in rows {
                for col in 0..shape.cols {
                    let cell = row * shape.cols + col;
                    for slot in starts[cell] as usize..starts[cell + 1] as usize {
                        let (x, y) = (copy_x[slot], copy_y[slot]);
                        let mut push = Push::default();
                        shape.around(starts, col, row, |run| {
                            candidates += run.len() as u64;
                            let (xs, ys) = (&copy_x[run.clone()], &copy_y[run]);
                            for (&nx, &ny) in xs.iter().zip(ys) {
                                avoid_pair(&constants, x, y, nx, ny, &mut push);
                            }
                        });
                        within += u64::from(push.within);
                        top = top.max(push.within);
                        out[slot - first] = push;
                    }
                }
            }
            totals[0].fetch_add(candidates, Ordering::Relaxed);
            totals[1].fetch_add(within, Ordering::Relaxed);
            most.fetch_max(u64::from(top), Ordering::Relaxed);
        });
        let c = chunk_len(threads, len);
        let (slot_of, slot_push) = (&self.slot_of, &self.slot_push);
        for_each_part(
            threads,
            self.pushes.chunks_mut(c).enumerate(),
            |(part, out)| {
                for (i, push) in (part * c..).zip(out) {
                    *push = slot_push[slot_of[i] as usize];
                }
            },
        );
        self.finish(len, shape, &totals, &most, started);
    }

    fn finish(
        &mut self,
        len: usize,
        shape: GridShape,
        totals: &[AtomicU64; 2],
        most: &AtomicU64,
        started: Instant,
    ) {
        let grid = self.counts.grid;
        let found = Found {
            entities: len,
            candidates: totals[0].load(Ordering::Relaxed),
            within: totals[1].load(Ordering::Relaxed),
            most: most.load(Ordering::Relaxed) as u32,
        };
        self.counts = PassCounts {
            grid,
            pass: started.elapsed().saturating_sub(grid),
            ..found.counts(shape)
        };
    }

    /// The grid's shape for `len` entities, for a pass that runs elsewhere (the gpu layout's, on
    /// the device). [`Self::grid`] still shows the last grid built here.
    pub fn shape_for(&self, len: usize) -> GridShape {
        self.reach.shape_at(len)
    }

    /// What a pass that ran elsewhere found, on a grid of `shape` (the shape it ran with);
    /// its time is not the host's (zero here: the device times it).
    pub fn record(&mut self, found: Found, shape: GridShape) {
        self.counts = found.counts(shape);
    }

    /// Bytes held between frames.
    pub fn allocated_bytes(&self) -> u64 {
        let u32s = self.starts.capacity()
            + self.members.capacity()
            + self.cells.capacity()
            + self.slot_of.capacity();
        let points = self.read.capacity() + (self.copy_x.capacity() + self.copy_y.capacity()) / 2;
        let pushes = self.pushes.capacity() + self.slot_push.capacity();
        (u32s * 4 + points * size_of::<[S; 2]>() + pushes * size_of::<Push>()) as u64
    }
}

/// Each entity's cell, from its position.
fn cells_on<S: Scalar>(
    threads: Threads,
    cells: &mut [u32],
    shape: GridShape,
    position: impl Fn(usize) -> [S; 2] + Sync,
) {
    let c = chunk_len(threads, cells.len());
    for_each_part(threads, cells.chunks_mut(c).enumerate(), |(part, out)| {
        for (i, cell) in (part * c..).zip(out) {
            let (col, row) = shape.cell_of(position(i));
            *cell = (row * shape.cols + col) as u32;
        }
    });
}

/// The idiomatic pass over the entities `first..first + out.len()`: each one's cell, then every
/// entity listed in the nine cells around it, its position read through the layout.
#[allow(clippy::too_many_arguments)]
fn idiomatic_part<S: Scalar>(
    shape: GridShape,
    members: &[u32],
    starts: &[u32],
    cells: &[u32],
    first: usize,
    out: &mut [Push],
    position: &impl Fn(usize) -> [S; 2],
    totals: &[AtomicU64; 2],
    most: &AtomicU64,
) {
    let constants = AvoidConstants::<S>::new(shape.radius);
    let (mut candidates, mut within, mut top) = (0u64, 0u64, 0u32);
    for (i, push) in (first..).zip(out) {
        let [x, y] = position(i);
        let cell = cells[i] as usize;
        let (col, row) = (cell % shape.cols, cell / shape.cols);
        *push = Push::default();
        shape.around(starts, col, row, |run| {
            candidates += run.len() as u64;
            for &j in &members[run] {
                let [nx, ny] = position(j as usize);
                avoid_pair(&constants, x, y, nx, ny, push);
            }
        });
        within += u64::from(push.within);
        top = top.max(push.within);
    }
    totals[0].fetch_add(candidates, Ordering::Relaxed);
    totals[1].fetch_add(within, Ordering::Relaxed);
    most.fetch_max(u64::from(top), Ordering::Relaxed);
}

/// Applies each entity's push to velocity columns (`soa`'s, an ECS table's), on `threads`.
pub fn apply_to_columns<S: Scalar>(
    threads: Threads,
    pushes: &[Push],
    vx: &mut [S],
    vy: &mut [S],
    dt: S,
) {
    let c = chunk_len(threads, vx.len());
    let parts = vx.chunks_mut(c).zip(vy.chunks_mut(c)).enumerate();
    for_each_part(threads, parts, |(part, (vx, vy))| {
        let mine = &pushes[part * c..];
        for ((vx, vy), &push) in vx.iter_mut().zip(vy).zip(mine) {
            (*vx, *vy) = crate::workload::avoid_one(*vx, *vy, push, dt);
        }
    });
}

/// Applies each entity's push to records that hold their own velocity (`aos`, the boxes), on
/// `threads`: `velocity(record)` is the record's `(vx, vy)`.
pub fn apply_to_records<S: Scalar, R: Send>(
    threads: Threads,
    pushes: &[Push],
    records: &mut [R],
    dt: S,
    velocity: impl Fn(&mut R) -> (&mut S, &mut S) + Sync,
) {
    let c = chunk_len(threads, records.len());
    for_each_part(
        threads,
        records.chunks_mut(c).enumerate(),
        |(part, records)| {
            for (record, &push) in records.iter_mut().zip(&pushes[part * c..]) {
                let (vx, vy) = velocity(record);
                (*vx, *vy) = crate::workload::avoid_one(*vx, *vy, push, dt);
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;
    use crate::workload::{EntityState, SEED, SpawnPattern, avoid_one, spawn_range};

    fn population(n: usize) -> Vec<EntityState<f32>> {
        let mut states = Vec::new();
        spawn_range(SpawnPattern::Streams, SEED, 0, n, &mut states);
        states
    }

    /// Every pair within the radius, by trying them all: what the grid must find.
    fn brute_force(states: &[EntityState<f32>], radius: f64) -> Vec<Push> {
        let constants = AvoidConstants::<f32>::new(radius);
        states
            .iter()
            .map(|a| {
                let mut push = Push::default();
                for b in states {
                    avoid_pair(&constants, a.x, a.y, b.x, b.y, &mut push);
                }
                push
            })
            .collect()
    }

    /// The grid finds exactly the pairs that trying every pair finds, in both forms and on one
    /// and all threads, at a radius from the neighbour target and at fixed radii (the largest
    /// included, where the grid is three cells high).
    /// Each cell's first position is where the grid's own rule starts that cell: the f32 just
    /// before it is in the cell before.
    #[test]
    fn the_edges_are_where_the_grid_puts_each_cell_s_first_position() {
        for count in [10, 10_000, 1_000_000, 100_000_000] {
            let shape = Reach::default().shape_at(count);
            let edges = shape.edges();
            assert_eq!(edges.len(), shape.cols + shape.rows + 2);
            let (cols, rows) = edges.split_at(shape.cols + 1);
            let below = |v: f32| f32::from_bits(v.to_bits() - 1);
            for (c, &x) in cols.iter().enumerate().take(shape.cols).skip(1) {
                assert_eq!(shape.cell_of([x, 0.0]).0, c, "{count}: column {c}");
                assert_eq!(
                    shape.cell_of([below(x), 0.0]).0,
                    c - 1,
                    "{count}: before {c}"
                );
            }
            for (r, &y) in rows.iter().enumerate().take(shape.rows).skip(1) {
                assert_eq!(shape.cell_of([0.0, y]).1, r, "{count}: row {r}");
                assert_eq!(
                    shape.cell_of([0.0, below(y)]).1,
                    r - 1,
                    "{count}: before {r}"
                );
            }
        }
    }

    #[test]
    fn the_grid_finds_every_pair_that_trying_all_pairs_finds() {
        let states = population(3_000);
        for reach in [
            Reach::default(),
            Reach::Radius(7.5),
            Reach::Radius(MAX_RADIUS),
        ] {
            let radius = reach.radius_at(states.len());
            let want = brute_force(&states, radius);
            for form in AvoidForm::BOTH {
                for threads in Threads::BOTH {
                    let mut near = Neighbours::new(reach, form);
                    let got =
                        near.push_apart(threads, states.len(), |i| [states[i].x, states[i].y]);
                    let first_wrong = want.iter().zip(got).position(|(a, b)| a != b);
                    assert_eq!(first_wrong, None, "{reach:?} {form} threads={threads}");
                    let counts = near.counts();
                    let found: u64 = want.iter().map(|p| u64::from(p.within) - 1).sum();
                    assert_eq!(counts.neighbours, found, "{reach:?} {form}");
                    let most = want.iter().map(|p| p.within - 1).max().unwrap_or(0);
                    assert_eq!(counts.most, most, "{reach:?} {form}");
                }
            }
        }
    }

    /// Every CPU layout, in both forms, on one and all threads, gives every entity the same
    /// velocity bits after the pass.
    #[test]
    fn every_layout_and_form_avoids_to_the_same_bits() {
        let states = population(2_000);
        let ids: Vec<u64> = (0..states.len() as u64).collect();
        let dt = 1.0 / 60.0;
        let reach = Reach::neighbours(12.0).unwrap();
        let want: Vec<(f32, f32)> = {
            let pushes = brute_force(&states, reach.radius_at(states.len()));
            states
                .iter()
                .zip(pushes)
                .map(|(s, p)| avoid_one(s.vx, s.vy, p, dt))
                .collect()
        };
        for kind in LayoutKind::CPU {
            for form in AvoidForm::BOTH {
                for threads in Threads::BOTH {
                    let mut layout = kind.create_cpu::<f32>().expect("a CPU layout");
                    layout.push(&ids, &states);
                    let mut near = Neighbours::new(reach, form);
                    layout.step_avoid(dt, &mut near, threads);
                    let mut got = Vec::new();
                    layout.for_each_entity(&mut |_, s| got.push((s.vx, s.vy)));
                    let first_wrong = want.iter().zip(&got).position(|(a, b)| a != b);
                    assert_eq!(first_wrong, None, "{kind} {form} threads={threads}");
                }
            }
        }
    }

    /// Bad values are refused with the accepted range, and a grid too large for the count is
    /// refused before anything is built.
    #[test]
    fn bad_reaches_are_refused_with_the_accepted_range() {
        for bad in [0.0, 0.5, 65.0, f64::NAN] {
            let e = Reach::neighbours(bad).unwrap_err().to_string();
            assert!(e.contains("accepted: 1 to 64 neighbours"), "{e}");
        }
        for bad in [0.0, -1.0, 300.0, f64::INFINITY] {
            let e = Reach::radius(bad).unwrap_err().to_string();
            assert!(e.contains("at most 299.7 world units"), "{e}");
        }
        let wide = Reach::radius(100.0).unwrap();
        let e = wide.grid_at(1_000_000).unwrap_err().to_string();
        assert!(e.contains("1000000 entities"), "{e}");
        assert!(
            e.contains("accepted at this count: a radius up to 9.67"),
            "{e}"
        );
        assert!(wide.grid_at(1_000).is_ok());
        // A tiny radius does not multiply the cells past the population's.
        for n in [1, 1_000, 1_000_000] {
            let grid = Reach::radius(0.001).unwrap().grid_at(n).unwrap();
            assert!(
                grid.cells() as f64 <= (CELLS_PER_ENTITY * n as f64).max(16.0),
                "{n}"
            );
        }
        // Every target is accepted at any count.
        for n in [0, 1, 10, 1_000, 10_000_000, 100_000_000] {
            for k in [NEIGHBOURS_MIN, NEIGHBOURS_MAX] {
                assert!(Reach::neighbours(k).unwrap().grid_at(n).is_ok(), "{n} {k}");
            }
        }
    }
    /// The default reach finds about its target at birth in the default pattern, at every count
    /// the bench runs: what [`CROWDING`] is for.
    #[test]
    fn the_default_reach_finds_about_its_target_at_birth() {
        for n in [10_000usize, 100_000, 1_000_000] {
            let states = population(n);
            let mut near = Neighbours::<f32>::new(Reach::default(), AvoidForm::Tuned);
            near.push_apart(Threads::All, n, |i| [states[i].x, states[i].y]);
            let mean = near.counts().neighbours_per_entity();
            assert!((6.0..=10.0).contains(&mean), "{n}: {mean}");
        }
    }
}

// The gpu layout's systems: the same `move`, `regen`, `seek` and `avoid` as `workload.rs` (same
// wrap, same clamp, same operation order), over one storage buffer per field, plus the copy that
// carries out a batch of swap-removes. Every constant is a pipeline override set from the Rust constants
// (`gpu::kernels`), so the numbers are written down once, in workload.rs.
//
// Dispatches are two-dimensional (at most 65535 workgroups per dimension, and 100M entities need
// 390625 of 256): the entity index is (group.y * groups_x + group.x) * 256 + local index.

override WORLD_WIDTH: f32;
override WORLD_HEIGHT: f32;
override MAX_ENERGY: f32;
// `pack_point`'s scales (steps per world unit, as f32 exactly as Rust rounds them) and bit widths.
override POINT_X_SCALE: f32;
override POINT_Y_SCALE: f32;
override POINT_HP_SCALE: f32;
override POINT_HP_MIN: f32;
override POINT_X_BITS: u32;
override POINT_Y_BITS: u32;
override POINT_HP_BITS: u32;
// workload::seek_one's gain (per second) and speed limit (per axis).
override SEEK_GAIN: f32;
override MAX_SEEK_SPEED: f32;

const WORKGROUP: u32 = 256u;

struct Dispatch {
    // Entities (move, regen) or moves (gather, scatter) to process.
    len: u32,
    groups_x: u32,
    dt: f32,
    _pad: u32,
};

fn index(group: vec3<u32>, local: u32, groups_x: u32) -> u32 {
    return (group.y * groups_x + group.x) * WORKGROUP + local;
}

// --- move, and the renderer's point in the same pass -------------------------------------------

@group(0) @binding(0) var<uniform> move_args: Dispatch;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read> vx: array<f32>;
@group(0) @binding(4) var<storage, read> vy: array<f32>;
@group(0) @binding(5) var<storage, read> hp: array<f32>;
@group(0) @binding(6) var<storage, read_write> points: array<u32>;

// workload::wrap: back into [0, extent) after a step shorter than the extent; `-tiny + extent`
// rounding up to `extent` itself lands on 0.
fn wrap(v: f32, extent: f32) -> f32 {
    if v < 0.0 {
        let w = v + extent;
        if w < extent {
            return w;
        }
        return 0.0;
    }
    if v >= extent {
        return v - extent;
    }
    return v;
}

// workload::quantize: clamp, then round to a whole number by adding 2^23.
fn quantize(v: f32, bits: u32) -> u32 {
    let max = (1u << bits) - 1u;
    return bitcast<u32>(clamp(v, 0.0, f32(max)) + 8388608.0) & max;
}

fn pack_point(px: f32, py: f32, php: f32) -> u32 {
    return quantize(px * POINT_X_SCALE, POINT_X_BITS)
        | (quantize(py * POINT_Y_SCALE, POINT_Y_BITS) << POINT_X_BITS)
        | (quantize((php - POINT_HP_MIN) * POINT_HP_SCALE, POINT_HP_BITS) << (POINT_X_BITS + POINT_Y_BITS));
}

@compute @workgroup_size(256)
fn move_and_pack(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let i = index(group, local, move_args.groups_x);
    if i >= move_args.len {
        return;
    }
    let nx = wrap(x[i] + vx[i] * move_args.dt, WORLD_WIDTH);
    let ny = wrap(y[i] + vy[i] * move_args.dt, WORLD_HEIGHT);
    x[i] = nx;
    y[i] = ny;
    points[i] = pack_point(nx, ny, hp[i]);
}

// --- regen ----------------------------------------------------------------------------------------

@group(0) @binding(10) var<uniform> regen_args: Dispatch;
@group(0) @binding(11) var<storage, read_write> energy: array<f32>;
@group(0) @binding(12) var<storage, read> regen: array<f32>;

@compute @workgroup_size(256)
fn regen_energy(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let i = index(group, local, regen_args.groups_x);
    if i >= regen_args.len {
        return;
    }
    let e = energy[i] + regen[i] * regen_args.dt;
    energy[i] = select(e, MAX_ENERGY, e > MAX_ENERGY);
}

// --- seek: steer toward the target's position -----------------------------------------------------
// Each seeker's target as the slot it sits in (the CPU resolves its handles to slots after each
// structural change and uploads them), or NO_TARGET. Reads positions, writes only the seeker's own
// velocity: every invocation runs at once without a race, as on the CPU.

const NO_TARGET: u32 = 0xffffffffu;

@group(0) @binding(30) var<uniform> seek_args: Dispatch;
@group(0) @binding(31) var<storage, read> seek_x: array<f32>;
@group(0) @binding(32) var<storage, read> seek_y: array<f32>;
@group(0) @binding(33) var<storage, read_write> seek_vx: array<f32>;
@group(0) @binding(34) var<storage, read_write> seek_vy: array<f32>;
@group(0) @binding(35) var<storage, read> targets: array<u32>;

// workload::shortest: the way across the wrapping world, folded into [-extent/2, extent/2].
fn shortest(d: f32, extent: f32) -> f32 {
    let half = extent * 0.5;
    if d > half {
        return d - extent;
    }
    if d < -half {
        return d + extent;
    }
    return d;
}

// workload::clamp_speed.
fn clamp_speed(v: f32) -> f32 {
    if v > MAX_SEEK_SPEED {
        return MAX_SEEK_SPEED;
    }
    if v < -MAX_SEEK_SPEED {
        return -MAX_SEEK_SPEED;
    }
    return v;
}

@compute @workgroup_size(256)
fn seek(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let i = index(group, local, seek_args.groups_x);
    if i >= seek_args.len {
        return;
    }
    let t = targets[i];
    if t == NO_TARGET {
        return;
    }
    let pull = SEEK_GAIN * seek_args.dt;
    let dx = shortest(seek_x[t] - seek_x[i], WORLD_WIDTH);
    let dy = shortest(seek_y[t] - seek_y[i], WORLD_HEIGHT);
    seek_vx[i] = clamp_speed(seek_vx[i] + dx * pull);
    seek_vy[i] = clamp_speed(seek_vy[i] + dy * pull);
}

// --- a batch of swap-removes (and appends) as moves: column[dst] = column[src] --------------------
// Gathered into a scratch buffer first and scattered in a second dispatch, so a slot that is both
// a source and a destination in one batch is read before it is overwritten. Columns are bit
// patterns (u32): f32 fields and packed points alike.

@group(0) @binding(20) var<uniform> move_list_args: Dispatch;
@group(0) @binding(21) var<storage, read_write> column: array<u32>;
// (destination slot, source slot) pairs.
@group(0) @binding(22) var<storage, read> moves: array<vec2<u32>>;
@group(0) @binding(23) var<storage, read_write> scratch: array<u32>;

@compute @workgroup_size(256)
fn gather_sources(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let k = index(group, local, move_list_args.groups_x);
    if k >= move_list_args.len {
        return;
    }
    scratch[k] = column[moves[k].y];
}

@compute @workgroup_size(256)
fn scatter_destinations(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) local: u32) {
    let k = index(group, local, move_list_args.groups_x);
    if k >= move_list_args.len {
        return;
    }
    column[moves[k].x] = scratch[k];
}

// --- avoid: the neighbour grid, built by a counting sort, and the pass over it ---------------------
// The grid `neighbours.rs` builds on the CPU (the same shape, cells at least the radius wide) and
// the rule of workload::avoid_pair and avoid_one. Each entity's cell, and its rank among its cell's
// entities from an atomic count; the counts' exclusive prefix sum (a block of cells per workgroup,
// then the blocks' sums, then each block's offset added); each entity into its cell's next slot,
// its position copied beside it for the tuned form. A cell lists its entities in whatever order
// the atomics gave them: the push is summed in fixed point, so that order changes no bit.
//
// A cell is the CPU's cell, exactly: a first guess in f32, then corrected by one against the first
// position of the cells beside it, which the host computes by the CPU's own f64 rule. So the
// device sorts every entity into the cell the CPU would, at any count.
// Every grid kernel takes its workgroup count from `num_workgroups`, so one `Grid` serves them all.
// Workgroup variables start zeroed (WGSL guarantees it): the pass's per-group totals rely on it.

override AVOID_GAIN: f32;
override AVOID_FIXED_ONE: f32;

// Cells one workgroup of the scan covers, four per invocation.
const SCAN_BLOCK: u32 = 4u * WORKGROUP;

struct Grid {
    // Entities.
    len: u32,
    cells: u32,
    cols: u32,
    rows: u32,
    // Cells per world unit along each axis.
    col_scale: f32,
    row_scale: f32,
    // The radius squared, its inverse, and the inverse of its square (as AvoidConstants).
    r2: f32,
    inv_r: f32,
    inv_r2: f32,
    dt: f32,
    // Workgroups of the scan: cells / SCAN_BLOCK, rounded up.
    blocks: u32,
    // 1: copy the positions in cell order and read the copy (the tuned form); 0: read each
    // candidate through its index (the idiomatic one).
    tuned: u32,
};

@group(0) @binding(40) var<uniform> count_grid: Grid;
@group(0) @binding(41) var<storage, read> count_x: array<f32>;
@group(0) @binding(42) var<storage, read> count_y: array<f32>;
@group(0) @binding(43) var<storage, read_write> count_cells: array<u32>;
@group(0) @binding(44) var<storage, read_write> count_ranks: array<u32>;
// Zeroed before the pass; each cell's count.
@group(0) @binding(45) var<storage, read_write> cell_counts: array<atomic<u32>>;
// Each column's first x (cols + 1 of them), then each row's first y (rows + 1).
@group(0) @binding(46) var<storage, read> edges: array<f32>;

// The cell along one axis of `n` cells, whose first positions start at `edges[first]`.
fn cell_along(p: f32, scale: f32, n: u32, first: u32) -> u32 {
    var c = min(u32(p * scale), n - 1u);
    if c + 1u < n && p >= edges[first + c + 1u] {
        c = c + 1u;
    } else if c > 0u && p < edges[first + c] {
        c = c - 1u;
    }
    return c;
}

fn cell_at(px: f32, py: f32, g: Grid) -> u32 {
    let col = cell_along(px, g.col_scale, g.cols, 0u);
    let row = cell_along(py, g.row_scale, g.rows, g.cols + 1u);
    return row * g.cols + col;
}

@compute @workgroup_size(256)
fn grid_count(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let i = index(group, local, groups.x);
    if i >= count_grid.len {
        return;
    }
    let cell = cell_at(count_x[i], count_y[i], count_grid);
    count_cells[i] = cell;
    count_ranks[i] = atomicAdd(&cell_counts[cell], 1u);
}

var<workgroup> partial: array<u32, 256>;

// `partial` turned into its inclusive prefix sums (Hillis-Steele); every invocation calls it.
fn scan_partial(local: u32) {
    for (var offset = 1u; offset < WORKGROUP; offset = offset * 2u) {
        var before = 0u;
        if local >= offset {
            before = partial[local - offset];
        }
        workgroupBarrier();
        partial[local] = partial[local] + before;
        workgroupBarrier();
    }
}

@group(0) @binding(50) var<uniform> scan_grid: Grid;
// Counts in, each cell's first slot within its block out.
@group(0) @binding(51) var<storage, read_write> scan_starts: array<u32>;
@group(0) @binding(52) var<storage, read_write> block_sums: array<u32>;

@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let block = group.y * groups.x + group.x;
    if block >= scan_grid.blocks {
        return;
    }
    let base = block * SCAN_BLOCK + local * 4u;
    var own: array<u32, 4>;
    var sum = 0u;
    for (var k = 0u; k < 4u; k = k + 1u) {
        own[k] = sum;
        if base + k < scan_grid.cells {
            sum = sum + scan_starts[base + k];
        }
    }
    partial[local] = sum;
    workgroupBarrier();
    scan_partial(local);
    let before = partial[local] - sum;
    for (var k = 0u; k < 4u; k = k + 1u) {
        if base + k < scan_grid.cells {
            scan_starts[base + k] = before + own[k];
        }
    }
    if local == WORKGROUP - 1u {
        block_sums[block] = partial[local];
    }
}

@group(0) @binding(55) var<uniform> sums_grid: Grid;
// The blocks' sums in, each block's first slot out.
@group(0) @binding(56) var<storage, read_write> sums: array<u32>;

// One workgroup: each invocation a run of consecutive blocks.
@compute @workgroup_size(256)
fn scan_block_sums(@builtin(local_invocation_index) local: u32) {
    let per = (sums_grid.blocks + WORKGROUP - 1u) / WORKGROUP;
    let first = local * per;
    var total = 0u;
    for (var k = 0u; k < per; k = k + 1u) {
        if first + k < sums_grid.blocks {
            total = total + sums[first + k];
        }
    }
    partial[local] = total;
    workgroupBarrier();
    scan_partial(local);
    var run = partial[local] - total;
    for (var k = 0u; k < per; k = k + 1u) {
        if first + k < sums_grid.blocks {
            let n = sums[first + k];
            sums[first + k] = run;
            run = run + n;
        }
    }
}

@group(0) @binding(60) var<uniform> add_grid: Grid;
@group(0) @binding(61) var<storage, read_write> add_starts: array<u32>;
@group(0) @binding(62) var<storage, read> block_offsets: array<u32>;

// Each cell's first slot; one past the last cell's, every entity.
@compute @workgroup_size(256)
fn scan_add(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let c = index(group, local, groups.x);
    if c >= add_grid.cells {
        return;
    }
    add_starts[c] = add_starts[c] + block_offsets[c / SCAN_BLOCK];
    if c == 0u {
        add_starts[add_grid.cells] = add_grid.len;
    }
}

@group(0) @binding(65) var<uniform> place_grid: Grid;
@group(0) @binding(66) var<storage, read> place_x: array<f32>;
@group(0) @binding(67) var<storage, read> place_y: array<f32>;
@group(0) @binding(68) var<storage, read> place_cells: array<u32>;
@group(0) @binding(69) var<storage, read> place_ranks: array<u32>;
@group(0) @binding(70) var<storage, read> place_starts: array<u32>;
// Each slot's entity, and (tuned) its position: one word per entity in every buffer, so the
// grid fits wherever the fields do.
@group(0) @binding(71) var<storage, read_write> members: array<u32>;
@group(0) @binding(72) var<storage, read_write> near_x: array<f32>;
@group(0) @binding(73) var<storage, read_write> near_y: array<f32>;

@compute @workgroup_size(256)
fn grid_place(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let i = index(group, local, groups.x);
    if i >= place_grid.len {
        return;
    }
    let slot = place_starts[place_cells[i]] + place_ranks[i];
    members[slot] = i;
    if place_grid.tuned != 0u {
        near_x[slot] = place_x[i];
        near_y[slot] = place_y[i];
    }
}

// The pass, in two entry points (each binds at most eight storage buffers, WebGPU's least):
// the idiomatic one reads each candidate's position through its index, the tuned one reads the
// copy only (its own position too, at its slot).
@group(0) @binding(75) var<uniform> pass_grid: Grid;
@group(0) @binding(76) var<storage, read> pass_x: array<f32>;
@group(0) @binding(77) var<storage, read> pass_y: array<f32>;
@group(0) @binding(78) var<storage, read_write> pass_vx: array<f32>;
@group(0) @binding(79) var<storage, read_write> pass_vy: array<f32>;
@group(0) @binding(80) var<storage, read> pass_cells: array<u32>;
@group(0) @binding(81) var<storage, read> pass_starts: array<u32>;
// Zeroed before the pass: candidates tested (low and high words), entities within the radius
// (low and high words, each entity itself included), and the most within one entity's radius.
@group(0) @binding(82) var<storage, read_write> totals: array<atomic<u32>>;
@group(0) @binding(83) var<storage, read> pass_members: array<u32>;
@group(0) @binding(84) var<storage, read> pass_ranks: array<u32>;
@group(0) @binding(85) var<storage, read> pass_near_x: array<f32>;
@group(0) @binding(86) var<storage, read> pass_near_y: array<f32>;

struct Push {
    x: i32,
    y: i32,
    within: u32,
};

// workload::avoid_pair: the push away from `n`, in fixed point, summed with wrapping.
fn avoid_pair(p: Push, x: f32, y: f32, n: vec2<f32>) -> Push {
    let dx = shortest(n.x - x, WORLD_WIDTH);
    let dy = shortest(n.y - y, WORLD_HEIGHT);
    let d2 = dx * dx + dy * dy;
    let inside = d2 < pass_grid.r2;
    let fall = select(0.0, 1.0 - d2 * pass_grid.inv_r2, inside) * pass_grid.inv_r * AVOID_FIXED_ONE;
    return Push(p.x - i32(dx * fall), p.y - i32(dy * fall), p.within + select(0u, 1u, inside));
}

// The cell of the nine around entity `i`'s that `k` (0 to 8) names, wrapping: rows above, at
// and below, each left to right (the cells neighbours.rs visits).
fn around(i: u32, k: u32) -> u32 {
    let cols = pass_grid.cols;
    let rows = pass_grid.rows;
    let col = pass_cells[i] % cols;
    let row = pass_cells[i] / cols;
    let r = (row + rows - 1u + k / 3u) % rows;
    return r * cols + (col + cols - 1u + k % 3u) % cols;
}

// workload::avoid_one, one axis.
fn avoid_axis(v: f32, push: i32, dt: f32) -> f32 {
    let gain = AVOID_GAIN * dt;
    return clamp_speed(v + f32(push) * (1.0 / AVOID_FIXED_ONE) * gain);
}

// A 64-bit count as two words: the carry goes to the high word.
fn add_wide(at: u32, value: u32) {
    let before = atomicAdd(&totals[at], value);
    if before + value < before {
        atomicAdd(&totals[at + 1u], 1u);
    }
}

var<workgroup> group_candidates: atomic<u32>;
var<workgroup> group_within: atomic<u32>;
var<workgroup> group_most: atomic<u32>;

// Entity `i`'s push applied to its velocity, and what it found added to the totals (every
// invocation calls it, past the last entity with nothing found).
fn finish_entity(i: u32, local: u32, push: Push, candidates: u32) {
    if i < pass_grid.len {
        pass_vx[i] = avoid_axis(pass_vx[i], push.x, pass_grid.dt);
        pass_vy[i] = avoid_axis(pass_vy[i], push.y, pass_grid.dt);
    }
    atomicAdd(&group_candidates, candidates);
    atomicAdd(&group_within, push.within);
    atomicMax(&group_most, push.within);
    workgroupBarrier();
    if local == 0u {
        add_wide(0u, atomicLoad(&group_candidates));
        add_wide(2u, atomicLoad(&group_within));
        atomicMax(&totals[4], atomicLoad(&group_most));
    }
}

@compute @workgroup_size(256)
fn avoid_idiomatic(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let i = index(group, local, groups.x);
    var push = Push(0, 0, 0u);
    var candidates = 0u;
    if i < pass_grid.len {
        let x = pass_x[i];
        let y = pass_y[i];
        for (var a = 0u; a < 9u; a = a + 1u) {
            let c = around(i, a);
            let end = pass_starts[c + 1u];
            candidates = candidates + end - pass_starts[c];
            for (var k = pass_starts[c]; k < end; k = k + 1u) {
                let j = pass_members[k];
                push = avoid_pair(push, x, y, vec2<f32>(pass_x[j], pass_y[j]));
            }
        }
    }
    finish_entity(i, local, push, candidates);
}

@compute @workgroup_size(256)
fn avoid_tuned(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let i = index(group, local, groups.x);
    var push = Push(0, 0, 0u);
    var candidates = 0u;
    if i < pass_grid.len {
        let own = pass_starts[pass_cells[i]] + pass_ranks[i];
        let x = pass_near_x[own];
        let y = pass_near_y[own];
        for (var a = 0u; a < 9u; a = a + 1u) {
            let c = around(i, a);
            let end = pass_starts[c + 1u];
            candidates = candidates + end - pass_starts[c];
            for (var k = pass_starts[c]; k < end; k = k + 1u) {
                push = avoid_pair(push, x, y, vec2<f32>(pass_near_x[k], pass_near_y[k]));
            }
        }
    }
    finish_entity(i, local, push, candidates);
}

// The gpu layout's systems: the same `move`, `regen` and `seek` as `workload.rs` (same wrap, same
// clamp, same operation order), over one storage buffer per field, plus the copy that carries out
// a batch of swap-removes. Every constant is a pipeline override set from the Rust constants
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

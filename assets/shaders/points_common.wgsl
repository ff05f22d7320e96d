// What both point renderers share: the packed point's decoding and its colour. The bit widths
// come from the Rust constants (`workload::POINT_*_BITS`) as shader defs, so this file and
// `pack_point` cannot drift apart.
#define_import_path entity_layouts::points

const X_BITS: u32 = #{POINT_X_BITS}u;
const Y_BITS: u32 = #{POINT_Y_BITS}u;
const HP_BITS: u32 = #{POINT_HP_BITS}u;

struct Point {
    // Inside the world rectangle, 0..1, y up.
    xy: vec2<f32>,
    // 0..1
    hp: f32,
};

fn decode(packed: u32) -> Point {
    let x = (f32(packed & ((1u << X_BITS) - 1u)) + 0.5) / f32(1u << X_BITS);
    let y = (f32((packed >> X_BITS) & ((1u << Y_BITS) - 1u)) + 0.5) / f32(1u << Y_BITS);
    let hp = f32(packed >> (X_BITS + Y_BITS)) / f32((1u << HP_BITS) - 1u);
    return Point(vec2<f32>(x, y), hp);
}

// A cool-to-warm ramp over hp, bright enough to read on a projector: piecewise linear between
// three colours, so a sum of dots' colours is a sum of three weights (the compute renderer keeps
// those weights per pixel instead of colours).
const COLD: vec3<f32> = vec3<f32>(0.15, 0.55, 1.0);
const MID: vec3<f32> = vec3<f32>(0.35, 0.95, 0.55);
const HOT: vec3<f32> = vec3<f32>(1.0, 0.45, 0.2);

fn palette(t: f32) -> vec3<f32> {
    if t < 0.5 {
        return mix(COLD, MID, t * 2.0);
    }
    return mix(MID, HOT, (t - 0.5) * 2.0);
}

// Where the compute renderer draws, the same for its raster and resolve passes (`Raster` in
// `src/app/render/compute.rs`).
struct Raster {
    // The world rectangle in the target's pixels, fractional, as the quads' viewport.
    origin: vec2<f32>,
    size: vec2<f32>,
    // The accumulation buffer's first pixel, and its width and height: whole pixels that cover
    // the rectangle.
    base: vec2<u32>,
    dims: vec2<u32>,
    dot_px: f32,
    alpha: f32,
    count: u32,
    // Threads in the dispatch: each takes every `stride`-th point.
    stride: u32,
};

// The accumulation buffer holds two u32s per pixel, one per half of the palette's ramp. A dot's
// hp is one of 2^HP_BITS - 1 = 31 steps h, and the palette at t = h / 31 is
// COLD * (31 - 2h) / 31 + MID * 2h / 31 for h < 16, and MID * (62 - 2h) / 31 + HOT * (2h - 31) / 31
// above: exact integer weights. A dot adds one word, in one atomic add: 1 to the count in its top
// COUNT_SHIFT bits and |31 - 2h| to the weight sum below them (the cold word for h < 16, the hot
// word above). The mid weight is what is left of 31 * count.
const WEIGHT_ONE: u32 = (1u << HP_BITS) - 1u;
const COUNT_SHIFT: u32 = 20u;
// A word stops counting here (4000 dots of one half on one pixel, far past white even at the
// dimmest dots' weight), well before its weight sum (31 * 4095 < 2^20) or count would wrap.
const COUNT_CAP: u32 = 4000u;

fn point_hp_step(packed: u32) -> u32 {
    return packed >> (X_BITS + Y_BITS);
}

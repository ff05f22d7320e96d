// One small square per entity, drawn as an instanced triangle strip from a buffer of packed
// points: x and y normalized inside the world rectangle, hp for the color. The bit widths come
// from the Rust constants (`workload::POINT_*_BITS`) as shader defs, so this file and
// `pack_point` cannot drift apart. The viewport set on the pass maps the world rectangle onto the
// window; the pipeline blends additively, each dot adding `alpha` of its color.

struct Params {
    // 2 / viewport size in pixels: one pixel in clip space.
    pixel_to_clip: vec2<f32>,
    // Dot size in pixels.
    dot_px: f32,
    // Each dot's weight: dots shrink and dim as they crowd, so density reads as brightness.
    alpha: f32,
};

@group(0) @binding(0) var<uniform> params: Params;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
};

const X_BITS: u32 = #{POINT_X_BITS}u;
const Y_BITS: u32 = #{POINT_Y_BITS}u;
const HP_BITS: u32 = #{POINT_HP_BITS}u;

// A cool-to-warm ramp over hp, bright enough to read on a projector.
fn palette(t: f32) -> vec3<f32> {
    let cold = vec3<f32>(0.15, 0.55, 1.0);
    let mid = vec3<f32>(0.35, 0.95, 0.55);
    let hot = vec3<f32>(1.0, 0.45, 0.2);
    if t < 0.5 {
        return mix(cold, mid, t * 2.0);
    }
    return mix(mid, hot, (t - 0.5) * 2.0);
}

@vertex
fn vertex(@builtin(vertex_index) corner: u32, @location(0) packed: u32) -> VertexOut {
    let x_steps = f32(1u << X_BITS);
    let y_steps = f32(1u << Y_BITS);
    let x = (f32(packed & ((1u << X_BITS) - 1u)) + 0.5) / x_steps;
    let y = (f32((packed >> X_BITS) & ((1u << Y_BITS) - 1u)) + 0.5) / y_steps;
    let hp = f32(packed >> (X_BITS + Y_BITS)) / f32((1u << HP_BITS) - 1u);
    let offset = vec2<f32>(f32(corner & 1u), f32(corner >> 1u)) - vec2<f32>(0.5, 0.5);
    let clip = vec2<f32>(x, y) * 2.0 - vec2<f32>(1.0, 1.0) + offset * params.dot_px * params.pixel_to_clip;
    var out: VertexOut;
    out.position = vec4<f32>(clip, 0.0, 1.0);
    out.color = vec4<f32>(palette(hp), params.alpha);
    return out;
}

@fragment
fn fragment(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}

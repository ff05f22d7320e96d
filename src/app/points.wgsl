// One small square per entity, drawn as an instanced triangle strip from a buffer of packed
// points: x (14 bits) and y (13 bits) normalized inside the world rectangle, hp (5 bits) for the
// color. The viewport set on the pass maps the world rectangle onto the window.

struct Params {
    // 2 / viewport size in pixels: one pixel in clip space.
    pixel_to_clip: vec2<f32>,
    // Dot size in pixels.
    dot_px: f32,
    _pad: f32,
};

@group(0) @binding(0) var<uniform> params: Params;

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
};

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
    let x = (f32(packed & 0x3FFFu) + 0.5) / 16384.0;
    let y = (f32((packed >> 14u) & 0x1FFFu) + 0.5) / 8192.0;
    let hp = f32(packed >> 27u) / 31.0;
    let offset = vec2<f32>(f32(corner & 1u), f32(corner >> 1u)) - vec2<f32>(0.5, 0.5);
    let clip = vec2<f32>(x, y) * 2.0 - vec2<f32>(1.0, 1.0) + offset * params.dot_px * params.pixel_to_clip;
    var out: VertexOut;
    out.position = vec4<f32>(clip, 0.0, 1.0);
    out.color = vec4<f32>(palette(hp), 1.0);
    return out;
}

@fragment
fn fragment(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}

// The control renderer: one small square per entity, drawn as an instanced triangle strip from
// the buffer of packed points. The viewport set on the pass maps the world rectangle onto the
// window; the pipeline blends additively, each dot adding `alpha` of its color.
#import entity_layouts::points::{decode, palette}

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

@vertex
fn vertex(@builtin(vertex_index) corner: u32, @location(0) packed: u32) -> VertexOut {
    let point = decode(packed);
    let offset = vec2<f32>(f32(corner & 1u), f32(corner >> 1u)) - vec2<f32>(0.5, 0.5);
    let clip = point.xy * 2.0 - vec2<f32>(1.0, 1.0) + offset * params.dot_px * params.pixel_to_clip;
    var out: VertexOut;
    out.position = vec4<f32>(clip, 0.0, 1.0);
    out.color = vec4<f32>(palette(point.hp), params.alpha);
    return out;
}

@fragment
fn fragment(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}

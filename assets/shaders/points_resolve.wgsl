// The compute renderer's second pass: one triangle over the accumulation buffer's pixels (the
// pass's viewport is that rectangle). Each pixel's counts and palette weights become the light
// its dots add, each `alpha` of its colour, saturated at 1, added onto the image. The buffer is
// cleared before the next frame's raster pass.
#import entity_layouts::points::{Raster, WEIGHT_ONE, COUNT_SHIFT, COLD, MID, HOT}

@group(0) @binding(0) var<uniform> raster: Raster;
@group(0) @binding(1) var<storage, read> light: array<u32>;

@vertex
fn cover(@builtin(vertex_index) corner: u32) -> @builtin(position) vec4<f32> {
    let uv = vec2<f32>(f32((corner << 1u) & 2u), f32(corner & 2u));
    return vec4<f32>(uv * 2.0 - 1.0, 0.0, 1.0);
}

@fragment
fn resolve(@builtin(position) at: vec4<f32>) -> @location(0) vec4<f32> {
    let p = min(vec2<u32>(at.xy) - raster.base, raster.dims - 1u);
    let pixel = (p.y * raster.dims.x + p.x) * 2u;
    let cold_word = light[pixel];
    let hot_word = light[pixel + 1u];
    let weight_mask = (1u << COUNT_SHIFT) - 1u;
    let count = f32((cold_word >> COUNT_SHIFT) + (hot_word >> COUNT_SHIFT));
    let cold = f32(cold_word & weight_mask);
    let hot = f32(hot_word & weight_mask);
    let mid = count * f32(WEIGHT_ONE) - cold - hot;
    let sum = (COLD * cold + MID * mid + HOT * hot) * (raster.alpha / f32(WEIGHT_ONE));
    return vec4<f32>(min(sum, vec3<f32>(1.0)), 1.0);
}

// The compute renderer's first pass: every point adds itself into the pixels its square covers,
// with integer atomics on a per-pixel accumulation buffer (see `points_common.wgsl`: per pixel,
// a count and a palette weight sum for each half of the ramp). Additive blending is a sum, and a
// sum does not care about order, so no triangle is set up and no fragment is shaded: a point
// costs a decode and one atomic add per covered pixel. `points_resolve.wgsl` then turns the sums into light on the image.
#import entity_layouts::points::{decode, point_hp_step, Raster, WEIGHT_ONE, COUNT_SHIFT, COUNT_CAP}

@group(0) @binding(0) var<uniform> raster: Raster;
@group(0) @binding(1) var<storage, read> points: array<u32>;
@group(0) @binding(2) var<storage, read_write> light: array<atomic<u32>>;

// Rasterizers snap vertices to 1/256 px (8 subpixel bits, the usual Vulkan precision); the
// square's edges are snapped the same way, so both renderers light the same pixels.
const SUBPIXEL: f32 = 256.0;

fn snap(v: vec2<f32>) -> vec2<f32> {
    return round(v * SUBPIXEL) / SUBPIXEL;
}

fn accumulate(index: u32, add: u32) {
    let old = atomicAdd(&light[index], add);
    // Saturated: taken back, so that the word never wraps (one lane in millions comes here).
    if (old >> COUNT_SHIFT) >= COUNT_CAP {
        atomicSub(&light[index], add);
    }
}

@compute @workgroup_size(256)
fn rasterize(@builtin(global_invocation_id) id: vec3<u32>) {
    let half = raster.dot_px * 0.5;
    let lo = snap(raster.origin);
    let hi = snap(raster.origin + raster.size);
    let base = vec2<i32>(raster.base);
    for (var i = id.x; i < raster.count; i += raster.stride) {
        let packed = points[i];
        let point = decode(packed);
        // y up in the world, down in the image.
        let centre = raster.origin + vec2<f32>(point.xy.x, 1.0 - point.xy.y) * raster.size;
        // The pixels whose centres lie in [e0, e1) on both axes: the top-left rule's choice for
        // the quads' square, clipped to the world rectangle as the quads' viewport clips it.
        let e0 = max(snap(centre - half), lo);
        let e1 = min(snap(centre + half), hi);
        let p0 = vec2<i32>(ceil(e0 - 0.5)) - base;
        let p1 = vec2<i32>(ceil(e1 - 0.5)) - base;
        // The cold word (0) below the middle of the ramp, the hot word (1) above.
        let h = point_hp_step(packed);
        let add = (1u << COUNT_SHIFT) | u32(abs(i32(WEIGHT_ONE) - 2 * i32(h)));
        let word = select(1u, 0u, 2u * h < WEIGHT_ONE);
        let span = p1 - p0;
        if all(span == vec2<i32>(1, 1)) {
            // One pixel: every dot from about 1M entities on (1 px), worth its own path on a
            // software rasterizer, where a loop runs masked across the SIMD lanes.
            accumulate((u32(p0.y) * raster.dims.x + u32(p0.x)) * 2u + word, add);
            continue;
        }
        for (var y = p0.y; y < p1.y; y++) {
            let row = u32(y) * raster.dims.x;
            for (var x = p0.x; x < p1.x; x++) {
                accumulate((row + u32(x)) * 2u + word, add);
            }
        }
    }
}

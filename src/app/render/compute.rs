//! The compute renderer: points as light summed per pixel, the way Schütz, Kerbl and Wimmer
//! rasterize point clouds in compute shaders ("Rendering Point Clouds with Compute Shaders and
//! Vertex Order Optimization", 2021), reduced to what additive dots need.
//!
//! Each frame: clear the accumulation buffer (three `u32`s per pixel of the world rectangle,
//! red, green and blue in fixed point), run `points_raster.wgsl` over the points buffer (each
//! point adds its colour times its weight into the pixels its square covers, with
//! `atomicAdd`), then `points_resolve.wgsl` covers the rectangle once and adds the sums,
//! saturated at 1, onto the image. A sum is order-free, so no triangle is set up, no fragment
//! is shaded per point, and the result does not depend on which thread ran first.
//!
//! It reads the same 4-byte points as the quads, from the same buffer: the CPU layouts' gather
//! and the gpu layout's compute pass are untouched. What it needs of the adapter is checked in
//! [`super::compute_renderer_lacks`]; without it, the quads draw.

use std::num::NonZeroU64;

use bevy::prelude::*;
use bevy::render::render_resource::binding_types::{
    storage_buffer_read_only_sized, storage_buffer_sized, uniform_buffer_sized,
};
use bevy::render::render_resource::{
    BindGroup, BindGroupEntries, BindGroupLayoutDescriptor, BindGroupLayoutEntries, BlendComponent,
    BlendFactor, BlendOperation, BlendState, Buffer, BufferDescriptor, BufferUsages,
    CachedComputePipelineId, CachedRenderPipelineId, ComputePassDescriptor,
    ComputePipelineDescriptor, PipelineCache, RenderPipelineDescriptor, ShaderStages,
    TextureFormat, VertexState,
};
use bevy::render::renderer::{RenderContext, RenderDevice, RenderQueue};
use bevy::render::view::ViewTarget;
use bytemuck::{Pod, Zeroable};

use super::{
    PointsShaders, RenderPoints, fragment_onto_view, params_buffer, point_format_defs,
    points_render_pass,
};
use entity_layouts::runtime::renderer::Renderer;

/// Invocations per workgroup of the raster pass (`@workgroup_size` in `points_raster.wgsl`).
pub const WORKGROUP: u32 = 256;
/// The most workgroups one dispatch asks for: WebGPU's guaranteed per-dimension limit. Past
/// 16.7M points each invocation takes several (`stride`), so 100M points need one dispatch.
const MAX_GROUPS: u32 = 65_535;
/// Bytes per pixel of the accumulation buffer: a count and a palette weight sum for each half of
/// the palette's ramp, packed into one `u32` each (`points_common.wgsl`).
const BYTES_PER_PIXEL: u64 = 8;

/// `Raster` in `points_common.wgsl`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct RasterParams {
    origin: [f32; 2],
    size: [f32; 2],
    base: [u32; 2],
    dims: [u32; 2],
    dot_px: f32,
    alpha: f32,
    count: u32,
    stride: u32,
}

const PARAMS_BYTES: u64 = std::mem::size_of::<RasterParams>() as u64;

/// The whole pixels that cover the world rectangle: the accumulation buffer's extent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccumulationRect {
    pub base: [u32; 2],
    pub dims: [u32; 2],
}

impl AccumulationRect {
    /// The pixels that cover `[x, y, w, h]` (physical pixels, fractional).
    pub fn covering([x, y, w, h]: [f32; 4]) -> Self {
        let (x0, y0) = (x.max(0.0).floor(), y.max(0.0).floor());
        let (x1, y1) = ((x + w).ceil().max(x0 + 1.0), (y + h).ceil().max(y0 + 1.0));
        Self {
            base: [x0 as u32, y0 as u32],
            dims: [(x1 - x0) as u32, (y1 - y0) as u32],
        }
    }

    pub fn bytes(&self) -> u64 {
        u64::from(self.dims[0]) * u64::from(self.dims[1]) * BYTES_PER_PIXEL
    }
}

#[derive(Resource)]
pub(super) struct ComputeRaster {
    raster_layout: BindGroupLayoutDescriptor,
    resolve_layout: BindGroupLayoutDescriptor,
    raster_shader: Handle<Shader>,
    resolve_shader: Handle<Shader>,
    raster: Option<CachedComputePipelineId>,
    /// The resolve pipeline for the view's texture format, queued when a view first shows up.
    resolve: Option<(TextureFormat, CachedRenderPipelineId)>,
    params: Buffer,
    /// The accumulation buffer and its size in bytes.
    light: Option<(Buffer, u64)>,
    /// This frame's work, from `prepare`: `None` when the compute renderer does not draw.
    frame: Option<RasterFrame>,
}

struct RasterFrame {
    rect: AccumulationRect,
    groups: u32,
    raster: BindGroup,
    resolve: BindGroup,
}

pub(super) fn init_pipelines(
    mut commands: Commands,
    device: Res<RenderDevice>,
    shaders: Res<PointsShaders>,
) {
    let params_size = NonZeroU64::new(PARAMS_BYTES);
    let raster_layout = BindGroupLayoutDescriptor::new(
        "points_raster_layout",
        &BindGroupLayoutEntries::sequential(
            ShaderStages::COMPUTE,
            (
                uniform_buffer_sized(false, params_size),
                storage_buffer_read_only_sized(false, None),
                storage_buffer_sized(false, None),
            ),
        ),
    );
    let resolve_layout = BindGroupLayoutDescriptor::new(
        "points_resolve_layout",
        &BindGroupLayoutEntries::sequential(
            ShaderStages::FRAGMENT,
            (
                uniform_buffer_sized(false, params_size),
                storage_buffer_read_only_sized(false, None),
            ),
        ),
    );
    let params = params_buffer(&device, "points_raster_params", PARAMS_BYTES);
    commands.insert_resource(ComputeRaster {
        raster_layout,
        resolve_layout,
        raster_shader: shaders.raster.clone(),
        resolve_shader: shaders.resolve.clone(),
        raster: None,
        resolve: None,
        params,
        light: None,
        frame: None,
    });
}

/// The sums land on the image as light: added to what is there (the clear colour), alpha kept.
const ADD_LIGHT: BlendState = BlendState {
    color: BlendComponent {
        src_factor: BlendFactor::One,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    },
    alpha: BlendComponent {
        src_factor: BlendFactor::Zero,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    },
};

fn resolve_descriptor(raster: &ComputeRaster, format: TextureFormat) -> RenderPipelineDescriptor {
    RenderPipelineDescriptor {
        label: Some("points_resolve_pipeline".into()),
        layout: vec![raster.resolve_layout.clone()],
        vertex: VertexState {
            shader: raster.resolve_shader.clone(),
            shader_defs: point_format_defs(),
            ..default()
        },
        fragment: Some(fragment_onto_view(
            &raster.resolve_shader,
            format,
            ADD_LIGHT,
        )),
        ..default()
    }
}

/// Queues both pipelines (kept ready whichever renderer draws, so a switch draws at once);
/// where the compute renderer draws this frame, sizes the accumulation buffer to the world
/// rectangle, writes the parameters and binds the points.
pub(super) fn prepare(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    cache: Res<PipelineCache>,
    render: Res<RenderPoints>,
    targets: Query<&ViewTarget>,
    mut raster: ResMut<ComputeRaster>,
) {
    raster.frame = None;
    if raster.raster.is_none() {
        let id = cache.queue_compute_pipeline(ComputePipelineDescriptor {
            label: Some("points_raster_pipeline".into()),
            layout: vec![raster.raster_layout.clone()],
            shader: raster.raster_shader.clone(),
            shader_defs: point_format_defs(),
            ..default()
        });
        raster.raster = Some(id);
    }
    let Some(target) = targets.iter().next() else {
        return;
    };
    let format = target.main_texture_format();
    if raster.resolve.is_none_or(|(f, _)| f != format) {
        let id = cache.queue_render_pipeline(resolve_descriptor(&raster, format));
        raster.resolve = Some((format, id));
    }
    // No points, no passes: nothing would be added onto the image.
    let (Renderer::Compute, Some((points, n @ 1..))) = (render.renderer, &render.draw) else {
        return;
    };
    // The world rectangle, kept inside the image: the resolve pass's viewport must be.
    let texture = target.main_texture();
    let [x, y, w, h] = render.view.viewport;
    let (right, bottom) = (
        (x + w).min(texture.width() as f32),
        (y + h).min(texture.height() as f32),
    );
    let world = [x, y, (right - x).max(1.0), (bottom - y).max(1.0)];
    let rect = AccumulationRect::covering(world);
    let bytes = rect.bytes();
    // The main world checks this before it picks compute, from the last frame's rectangle: a
    // canvas resized past the limit in this very frame draws no points for this one frame, and
    // the quads draw from the next one on.
    let limits = device.limits();
    if bytes
        > limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
    {
        return;
    }
    // Made again when the rectangle outgrows it, or shrinks below a quarter of it.
    if raster
        .light
        .as_ref()
        .is_none_or(|(_, size)| bytes > *size || bytes < size / 4)
    {
        let buffer = device.create_buffer(&BufferDescriptor {
            label: Some("points_light"),
            size: bytes,
            usage: BufferUsages::STORAGE | BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        raster.light = Some((buffer, bytes));
    }
    let n = *n as u32;
    let groups = n.div_ceil(WORKGROUP).clamp(1, MAX_GROUPS);
    let (dot_px, alpha) = render.dot_style();
    let params = RasterParams {
        origin: [world[0], world[1]],
        size: [world[2], world[3]],
        base: rect.base,
        dims: rect.dims,
        dot_px,
        alpha,
        count: n,
        stride: groups * WORKGROUP,
    };
    queue.write_buffer(&raster.params, 0, bytemuck::bytes_of(&params));
    let Some((light, _)) = &raster.light else {
        return;
    };
    // The buffer may be larger than this frame's rectangle; the shaders index inside `dims`.
    let light = light.as_entire_binding();
    let raster_group = device.create_bind_group(
        "points_raster_bind_group",
        &cache.get_bind_group_layout(&raster.raster_layout),
        &BindGroupEntries::sequential((
            raster.params.as_entire_binding(),
            points.as_entire_binding(),
            light.clone(),
        )),
    );
    let resolve_group = device.create_bind_group(
        "points_resolve_bind_group",
        &cache.get_bind_group_layout(&raster.resolve_layout),
        &BindGroupEntries::sequential((raster.params.as_entire_binding(), light)),
    );
    raster.frame = Some(RasterFrame {
        rect,
        groups,
        raster: raster_group,
        resolve: resolve_group,
    });
}

impl ComputeRaster {
    /// Clears, rasterizes and resolves; false while a pipeline is still compiling.
    pub(super) fn draw(
        &self,
        ctx: &mut RenderContext,
        target: &ViewTarget,
        cache: &PipelineCache,
    ) -> bool {
        let (Some(raster_id), Some((_, resolve_id))) = (self.raster, self.resolve) else {
            return false;
        };
        let (Some(raster), Some(resolve)) = (
            cache.get_compute_pipeline(raster_id),
            cache.get_render_pipeline(resolve_id),
        ) else {
            return false;
        };
        let (Some(frame), Some((light, _))) = (&self.frame, &self.light) else {
            // Nothing to draw this frame (no points): ready all the same.
            return true;
        };
        let encoder = ctx.command_encoder();
        encoder.clear_buffer(light, 0, Some(frame.rect.bytes()));
        {
            let mut pass = encoder.begin_compute_pass(&ComputePassDescriptor {
                label: Some("points_raster"),
                timestamp_writes: None,
            });
            pass.set_pipeline(raster);
            pass.set_bind_group(0, Some(&*frame.raster), &[]);
            pass.dispatch_workgroups(frame.groups, 1, 1);
        }
        let [bx, by] = frame.rect.base.map(|v| v as f32);
        let [dw, dh] = frame.rect.dims.map(|v| v as f32);
        let mut pass = points_render_pass(ctx, target, "points_resolve", [bx, by, dw, dh]);
        pass.set_render_pipeline(resolve);
        pass.set_bind_group(0, &frame.resolve, &[]);
        pass.draw(0..3, 0..1);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_accumulation_buffer_covers_the_world_in_whole_pixels() {
        let rect = AccumulationRect::covering([360.5, 10.25, 900.0, 506.25]);
        assert_eq!(rect.base, [360, 10]);
        // 360.5 + 900 = 1260.5 rounds up to 1261; 10.25 + 506.25 = 516.5 to 517.
        assert_eq!(rect.dims, [901, 507]);
        assert_eq!(rect.bytes(), 901 * 507 * 8);
        // A degenerate rectangle still covers one pixel.
        assert_eq!(
            AccumulationRect::covering([5.0, 5.0, 0.0, 0.0]).dims,
            [1, 1]
        );
    }

    #[test]
    fn the_parameters_match_the_shaders_struct() {
        // `Raster` in points_common.wgsl: four vec2s and four scalars, 48 bytes.
        assert_eq!(PARAMS_BYTES, 48);
    }
}

//! RenderPlugin: every entity as a small square, one instanced draw per frame from one persistent
//! GPU buffer that is rewritten each frame with the points gathered from the active layout.
//! Dots are blended additively, and their size and brightness follow the count and the world's
//! area on screen ([`dot_style`]), so density reads as brightness instead of saturating: ten
//! thousand dots are crisp squares, ten million a glowing flow.
//! No Bevy entity, sprite or mesh per simulated entity: the cost of this path is the same for
//! every layout, so the comparison stays about the layout. Only `gather_points` is per-layout,
//! and it is timed on its own (in `sim`); the upload is timed here.
//!
//! Flow: the main world gathers straight into wgpu's staging memory for the points buffer
//! (`write_buffer_with`, in parallel chunks: no `Vec` and no copy in between; the gpu layout
//! skips even that, its compute pass wrote the buffer); extraction hands the buffer and count to
//! the render world; the pass draws `4 vertices x n instances` into the camera's main texture,
//! before egui draws the panel on top. The shader (`assets/shaders/points.wgsl`, embedded in the
//! binary) is compiled with the point format's bit widths from `workload`, so the format is
//! written down once.

use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bevy::core_pipeline::Core2d;
use bevy::core_pipeline::Core2dSystems;
use bevy::mesh::VertexBufferLayout;
use bevy::prelude::*;
use bevy::render::render_resource::binding_types::uniform_buffer_sized;
use bevy::render::render_resource::{
    BindGroup, BindGroupEntries, BindGroupLayoutDescriptor, BindGroupLayoutEntries, BlendComponent,
    BlendFactor, BlendOperation, BlendState, Buffer, BufferDescriptor, BufferUsages,
    CachedRenderPipelineId, ColorTargetState, ColorWrites, FragmentState, PipelineCache,
    PrimitiveState, PrimitiveTopology, RenderPassDescriptor, RenderPipelineDescriptor,
    ShaderStages, TextureFormat, VertexAttribute, VertexFormat, VertexState, VertexStepMode,
};
use bevy::render::renderer::{RenderContext, RenderDevice, RenderQueue, ViewQuery};
use bevy::render::view::ViewTarget;
use bevy::render::{ExtractSchedule, MainWorld, Render, RenderApp, RenderStartup, RenderSystems};
use bevy::shader::ShaderDefVal;
use bevy_egui::render::systems::EguiPipelines;

use entity_layouts::gpu::GpuPoints;
use entity_layouts::workload::{POINT_HP_BITS, POINT_X_BITS, POINT_Y_BITS};

/// The points this frame draws (main world): the CPU layouts' buffer, which the gather writes
/// through wgpu's staging memory, or the gpu layout's own buffer, drawn as is.
#[derive(Resource, Default)]
pub struct GatheredPoints {
    /// The CPU layouts' points buffer: grown by half again when the population outgrows it,
    /// and made again at the population's size when that falls below a quarter of it.
    pub buffer: Option<Buffer>,
    pub capacity: usize,
    /// What to draw: a buffer and how many points in it.
    pub draw: Option<(Buffer, usize)>,
}

impl GatheredPoints {
    /// Gathers every entity's point into the buffer through wgpu's staging memory, or takes the
    /// gpu layout's buffer. Returns the time spent gathering, which now includes writing the
    /// points into the staging memory: the CPU copy that used to be the upload is gone. The
    /// queue calls around it are left out of the gather's time: they can wait for the render
    /// thread, which holds the queue while it submits the previous frame (pipelined rendering;
    /// under lavapipe that is most of a frame, measured at ~290 ms of 305 at 1M), so that wait
    /// stays in the frame's "rest", with the GPU's own copy, as before.
    pub fn gather(
        &mut self,
        driver: &mut entity_layouts::driver::Driver,
        device: &RenderDevice,
        queue: &RenderQueue,
    ) -> f32 {
        if let Some(GpuPoints { buffer, len }) = driver.gpu_points() {
            self.draw = Some((Buffer::from(buffer), len));
            return 0.0;
        }
        let n = driver.len();
        // A quarter, as the layouts' `shrink_if_sparse`: a count that wobbles does not remake it.
        let sparse = self.capacity > 4 * n.max(1024);
        if n > self.capacity || self.buffer.is_none() || sparse {
            let capacity = if sparse {
                n.max(1024)
            } else {
                n.max(self.capacity * 3 / 2).max(1024)
            };
            self.buffer = Some(device.create_buffer(&BufferDescriptor {
                label: Some("points"),
                size: capacity as u64 * 4,
                usage: BufferUsages::VERTEX | BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            self.capacity = capacity;
        }
        let Some(buffer) = &self.buffer else {
            return 0.0;
        };
        self.draw = Some((buffer.clone(), n));
        let Some(size) = NonZeroU64::new(n as u64 * 4) else {
            return 0.0;
        };
        let Some(mut view) = queue.write_buffer_with(buffer, 0, size) else {
            return 0.0;
        };
        let started = Instant::now();
        let (points, _) = view.slice(..).into_chunks::<4>();
        driver.gather_points_into(points);
        let gather_ms = started.elapsed().as_secs_f32() * 1e3;
        // Dropping the view schedules the copy into the buffer.
        drop(view);
        gather_ms
    }
}

/// Where the world rectangle lands in the window, in physical pixels, and the dot size asked for
/// on the command line (`None`: it follows the count).
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct PointsView {
    /// x, y, width, height of the letterboxed world rectangle.
    pub viewport: [f32; 4],
    pub dot_px: Option<f32>,
}

impl Default for PointsView {
    fn default() -> Self {
        Self {
            viewport: [0.0, 0.0, 1.0, 1.0],
            dot_px: None,
        }
    }
}

/// The share of the world's brightness a population aims at if its dots were spread evenly:
/// where streams crowd several times that, they glow; the haze between them stays dark.
const MEAN_BRIGHTNESS: f32 = 0.3;

/// A dot's size in pixels and its opacity (the weight it adds under additive blending) for `n`
/// dots over `area_px` pixels. Sizes shrink from 3 px toward 1 px as dots crowd the area; the
/// opacity then scales so that the mean brightness stays near [`MEAN_BRIGHTNESS`], with a floor
/// that an 8-bit target still resolves.
pub fn dot_style(n: usize, area_px: f32, fixed_px: Option<f32>) -> (f32, f32) {
    let pixels_per_dot = area_px.max(1.0) / n.max(1) as f32;
    let size = fixed_px.unwrap_or_else(|| (pixels_per_dot.sqrt() * 0.5).clamp(1.0, 3.0));
    let coverage = size * size / pixels_per_dot;
    let alpha = (MEAN_BRIGHTNESS / coverage).clamp(0.012, 1.0);
    (size, alpha)
}

/// Set by the render world once it has drawn the points: screenshots before that would show an
/// empty window.
#[derive(Resource, Clone, Default)]
pub struct RenderReady(Arc<AtomicBool>);

impl RenderReady {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

pub struct PointsRenderPlugin;

impl Plugin for PointsRenderPlugin {
    fn build(&self, app: &mut App) {
        let shader = app
            .world_mut()
            .resource_mut::<Assets<Shader>>()
            .add(Shader::from_wgsl(
                include_str!("../../assets/shaders/points.wgsl"),
                "shaders/points.wgsl",
            ));
        let ready = RenderReady::default();
        app.init_resource::<GatheredPoints>()
            .init_resource::<PointsView>()
            .insert_resource(ready.clone());
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(ready)
            .insert_resource(PointsShader(shader))
            .init_resource::<RenderPoints>()
            .add_systems(RenderStartup, init_points_pipeline)
            .add_systems(ExtractSchedule, extract_points)
            .add_systems(
                Render,
                prepare_points.in_set(RenderSystems::PrepareResources),
            )
            .add_systems(
                Core2d,
                points_pass
                    .after(Core2dSystems::MainPass)
                    .before(bevy_egui::render::egui_pass),
            );
    }
}

/// The points shader, added to the main world's shader assets at build time.
#[derive(Resource)]
struct PointsShader(Handle<Shader>);

#[derive(Resource, Default)]
struct RenderPoints {
    draw: Option<(Buffer, usize)>,
    view: PointsView,
}

#[derive(Resource)]
struct PointsPipeline {
    layout: BindGroupLayoutDescriptor,
    shader: Handle<Shader>,
    /// The pipeline for the view's texture format, queued when a view first shows up.
    pipeline: Option<(TextureFormat, CachedRenderPipelineId)>,

    params: Buffer,
    bind_group: Option<BindGroup>,
    drawn: u32,
}

const PARAMS_BYTES: u64 = 16;

fn init_points_pipeline(
    mut commands: Commands,
    device: Res<RenderDevice>,
    shader: Res<PointsShader>,
) {
    let layout = BindGroupLayoutDescriptor::new(
        "points_layout",
        &BindGroupLayoutEntries::single(
            ShaderStages::VERTEX,
            uniform_buffer_sized(false, NonZeroU64::new(PARAMS_BYTES)),
        ),
    );
    let params = device.create_buffer(&BufferDescriptor {
        label: Some("points_params"),
        size: PARAMS_BYTES,
        usage: BufferUsages::UNIFORM | BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    commands.insert_resource(PointsPipeline {
        layout,
        shader: shader.0.clone(),
        pipeline: None,

        params,
        bind_group: None,
        drawn: 0,
    });
}

fn extract_points(main_world: Res<MainWorld>, mut render: ResMut<RenderPoints>) {
    render.view = *main_world.resource::<PointsView>();
    render.draw = main_world.resource::<GatheredPoints>().draw.clone();
}

/// The point format's bit widths, from the Rust constants: the shader decodes what
/// `pack_point` encodes.
fn point_format_defs() -> Vec<ShaderDefVal> {
    vec![
        ShaderDefVal::UInt("POINT_X_BITS".into(), POINT_X_BITS),
        ShaderDefVal::UInt("POINT_Y_BITS".into(), POINT_Y_BITS),
        ShaderDefVal::UInt("POINT_HP_BITS".into(), POINT_HP_BITS),
    ]
}

/// Dots add light: overlapping dots get brighter instead of hiding each other.
const ADDITIVE: BlendState = BlendState {
    color: BlendComponent {
        src_factor: BlendFactor::SrcAlpha,
        dst_factor: BlendFactor::One,
        operation: BlendOperation::Add,
    },
    alpha: BlendComponent::OVER,
};

fn pipeline_descriptor(
    pipeline: &PointsPipeline,
    format: TextureFormat,
) -> RenderPipelineDescriptor {
    RenderPipelineDescriptor {
        label: Some("points_pipeline".into()),
        layout: vec![pipeline.layout.clone()],
        vertex: VertexState {
            shader: pipeline.shader.clone(),
            shader_defs: point_format_defs(),
            buffers: vec![VertexBufferLayout {
                array_stride: 4,
                step_mode: VertexStepMode::Instance,
                attributes: vec![VertexAttribute {
                    format: VertexFormat::Uint32,
                    offset: 0,
                    shader_location: 0,
                }],
            }],
            ..default()
        },
        fragment: Some(FragmentState {
            shader: pipeline.shader.clone(),
            shader_defs: point_format_defs(),
            targets: vec![Some(ColorTargetState {
                format,
                blend: Some(ADDITIVE),
                write_mask: ColorWrites::ALL,
            })],
            ..default()
        }),
        primitive: PrimitiveState {
            topology: PrimitiveTopology::TriangleStrip,
            ..default()
        },
        ..default()
    }
}

fn prepare_points(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    cache: Res<PipelineCache>,
    render: Res<RenderPoints>,
    targets: Query<&ViewTarget>,
    mut pipeline: ResMut<PointsPipeline>,
) {
    if let Some(target) = targets.iter().next() {
        let format = target.main_texture_format();
        if pipeline.pipeline.is_none_or(|(f, _)| f != format) {
            let id = cache.queue_render_pipeline(pipeline_descriptor(&pipeline, format));
            pipeline.pipeline = Some((format, id));
        }
    }
    let n = render.draw.as_ref().map_or(0, |(_, n)| *n);
    let [_, _, w, h] = render.view.viewport;
    let (dot_px, alpha) = dot_style(n, w * h, render.view.dot_px);
    let params = [2.0 / w.max(1.0), 2.0 / h.max(1.0), dot_px, alpha];
    queue.write_buffer(&pipeline.params, 0, bytemuck::cast_slice(&params));
    if pipeline.bind_group.is_none() {
        let bind_group = device.create_bind_group(
            "points_bind_group",
            &cache.get_bind_group_layout(&pipeline.layout),
            &BindGroupEntries::single(pipeline.params.as_entire_binding()),
        );
        pipeline.bind_group = Some(bind_group);
    }
    pipeline.drawn = n as u32;
}

fn points_pass(
    view: ViewQuery<&ViewTarget>,
    ready: Res<RenderReady>,
    egui: Option<Res<EguiPipelines>>,
    points: Res<PointsPipeline>,
    render: Res<RenderPoints>,
    cache: Res<PipelineCache>,
    mut ctx: RenderContext,
) {
    let target = view.into_inner();
    let (Some((_, id)), Some((buffer, _)), Some(bind_group)) =
        (points.pipeline, &render.draw, &points.bind_group)
    else {
        return;
    };
    // The pipeline compiles asynchronously: the first frames draw no dots.
    let Some(pipeline) = cache.get_render_pipeline(id) else {
        return;
    };
    if points.drawn == 0 {
        return;
    }
    let [x, y, w, h] = render.view.viewport;
    let mut pass = ctx.begin_tracked_render_pass(RenderPassDescriptor {
        label: Some("points_pass"),
        color_attachments: &[Some(target.get_color_attachment())],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    pass.set_viewport(x, y, w, h, 0.0, 1.0);
    pass.set_render_pipeline(pipeline);
    pass.set_bind_group(0, bind_group, &[]);
    pass.set_vertex_buffer(0, buffer.slice(..));
    pass.draw(0..4, 0..points.drawn);
    // Ready once the panel's pipeline has compiled too: a screenshot must show both.
    let egui_ready = egui.is_some_and(|p| {
        !p.0.is_empty()
            && p.0
                .values()
                .all(|id| cache.get_render_pipeline(*id).is_some())
    });
    if egui_ready {
        ready.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_shrink_and_dim_as_they_crowd() {
        let area = 900.0 * 506.0;
        let (few_px, few_alpha) = dot_style(10_000, area, None);
        let (many_px, many_alpha) = dot_style(1_000_000, area, None);
        let (most_px, most_alpha) = dot_style(10_000_000, area, None);
        assert_eq!((few_px, few_alpha), (3.0, 1.0));
        assert_eq!(many_px, 1.0);
        assert!(most_px == 1.0 && most_alpha < many_alpha && many_alpha < 0.2);
        // The mean brightness stays put once dots overlap.
        let mean = |n: usize, (px, alpha): (f32, f32)| n as f32 * px * px * alpha / area;
        assert!((mean(1_000_000, (many_px, many_alpha)) - MEAN_BRIGHTNESS).abs() < 1e-3);
        assert_eq!(dot_style(5, area, Some(2.0)).0, 2.0);
        assert!(dot_style(0, 0.0, None).1 > 0.0);
    }
}

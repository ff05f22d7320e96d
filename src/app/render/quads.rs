//! The control renderer: one instanced quad (a four-vertex triangle strip) per point, blended
//! additively by the rasterizer. On a GPU that is two tiny triangles per entity, on lavapipe the
//! same two rasterized in software on the CPU; both make the frame the renderer's past a few
//! hundred thousand entities (docs/results/drawing.md), which is why `compute` is the default.
//! It stays as the control,
//! and as what draws where the adapter cannot run the compute renderer.

use std::num::NonZeroU64;

use bevy::mesh::VertexBufferLayout;
use bevy::prelude::*;
use bevy::render::render_resource::binding_types::uniform_buffer_sized;
use bevy::render::render_resource::{
    BindGroup, BindGroupEntries, BindGroupLayoutDescriptor, BindGroupLayoutEntries, BlendComponent,
    BlendFactor, BlendOperation, BlendState, Buffer, CachedRenderPipelineId, PipelineCache,
    PrimitiveState, PrimitiveTopology, RenderPipelineDescriptor, ShaderStages, TextureFormat,
    VertexAttribute, VertexFormat, VertexState, VertexStepMode,
};
use bevy::render::renderer::{RenderContext, RenderDevice, RenderQueue};
use bevy::render::view::ViewTarget;

use super::{
    PointsShaders, RenderPoints, fragment_onto_view, params_buffer, point_format_defs,
    points_render_pass,
};

#[derive(Resource)]
pub(super) struct QuadsPipeline {
    layout: BindGroupLayoutDescriptor,
    shader: Handle<Shader>,
    /// The pipeline for the view's texture format, queued when a view first shows up.
    pipeline: Option<(TextureFormat, CachedRenderPipelineId)>,
    params: Buffer,
    bind_group: Option<BindGroup>,
}

const PARAMS_BYTES: u64 = 16;

pub(super) fn init_pipeline(
    mut commands: Commands,
    device: Res<RenderDevice>,
    shaders: Res<PointsShaders>,
) {
    let layout = BindGroupLayoutDescriptor::new(
        "points_layout",
        &BindGroupLayoutEntries::single(
            ShaderStages::VERTEX,
            uniform_buffer_sized(false, NonZeroU64::new(PARAMS_BYTES)),
        ),
    );
    let params = params_buffer(&device, "points_params", PARAMS_BYTES);
    commands.insert_resource(QuadsPipeline {
        layout,
        shader: shaders.quads.clone(),
        pipeline: None,
        params,
        bind_group: None,
    });
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
    pipeline: &QuadsPipeline,
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
        fragment: Some(fragment_onto_view(&pipeline.shader, format, ADDITIVE)),
        primitive: PrimitiveState {
            topology: PrimitiveTopology::TriangleStrip,
            ..default()
        },
        ..default()
    }
}

/// Queues the pipeline for the view's format (both renderers' pipelines are kept ready, so a
/// switch draws on its first frame) and writes the dot's size and weight.
pub(super) fn prepare(
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    cache: Res<PipelineCache>,
    render: Res<RenderPoints>,
    targets: Query<&ViewTarget>,
    mut pipeline: ResMut<QuadsPipeline>,
) {
    if let Some(target) = targets.iter().next() {
        let format = target.main_texture_format();
        if pipeline.pipeline.is_none_or(|(f, _)| f != format) {
            let id = cache.queue_render_pipeline(pipeline_descriptor(&pipeline, format));
            pipeline.pipeline = Some((format, id));
        }
    }
    let [_, _, w, h] = render.view.viewport;
    let (dot_px, alpha) = render.dot_style();
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
}

impl QuadsPipeline {
    /// Draws `n` points from `buffer`; false while the pipeline is still compiling.
    pub(super) fn draw(
        &self,
        ctx: &mut RenderContext,
        target: &ViewTarget,
        render: &RenderPoints,
        cache: &PipelineCache,
        buffer: &Buffer,
        n: usize,
    ) -> bool {
        let (Some((_, id)), Some(bind_group)) = (self.pipeline, &self.bind_group) else {
            return false;
        };
        // The pipeline compiles asynchronously: the first frames draw no dots.
        let Some(pipeline) = cache.get_render_pipeline(id) else {
            return false;
        };
        if n == 0 {
            return true;
        }
        let mut pass = points_render_pass(ctx, target, "points_pass", render.view.viewport);
        pass.set_render_pipeline(pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.set_vertex_buffer(0, buffer.slice(..));
        pass.draw(0..4, 0..n as u32);
        true
    }
}

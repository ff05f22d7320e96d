//! RenderPlugin: every entity as a small square of light, from one persistent GPU buffer of
//! 4-byte packed points that is rewritten each frame with the points gathered from the active
//! layout. Two renderers draw that buffer, and a person picks one (`--renderer`, `D`, the panel,
//! `renderer` in scripts):
//!
//! - **compute** (`compute.rs`, the default): a compute pass adds each point's colour into a
//!   per-pixel accumulation buffer with integer atomics, and a full-screen pass resolves the sums
//!   into the image. A point costs a decode and a few atomic adds, so past a few hundred
//!   thousand entities the frame is the layout's again, not the rasterizer's.
//! - **quads** (`quads.rs`, the control): one instanced quad per point, blended additively by the
//!   hardware (or, under lavapipe, the software) rasterizer. It draws where the adapter lacks
//!   compute shaders or storage buffers in fragment shaders, and the panel and log say why.
//!
//! Both blend additively, and their size and brightness follow the count and the world's area
//! on screen ([`dot_style`]), so density reads as brightness instead of saturating: ten thousand
//! dots are crisp squares, ten million a glowing flow. Both light the same pixels (the compute
//! one snaps its squares' edges as the rasterizer snaps vertices); `tests/renderers.rs` holds
//! them to that.
//!
//! No Bevy entity, sprite or mesh per simulated entity: the cost of drawing is the same for
//! every layout, so the comparison stays about the layout. Only `gather_points` is per-layout,
//! and it is timed on its own (in `sim`). The drawing's GPU time is Bevy's own render
//! diagnostic (`render/points/elapsed_gpu`, timestamp queries), shown in the panel and the
//! summary as `draw`.
//!
//! Flow: the main world gathers straight into wgpu's staging memory for the points buffer
//! (`write_buffer_with`, in parallel chunks: no `Vec` and no copy in between; the gpu layout
//! skips even that, its compute pass wrote the buffer); extraction hands the buffer, the count
//! and the renderer to the render world; the pass draws into the camera's main texture before
//! egui draws the panel on top. The shaders (`assets/shaders/points*.wgsl`, embedded in the
//! binary) share the point's decoding and palette (`points_common.wgsl`), compiled with the
//! point format's bit widths from `workload`, so the format is written down once.

use std::num::NonZeroU64;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

mod compute;
mod quads;

use bevy::core_pipeline::Core2d;
use bevy::core_pipeline::Core2dSystems;
use bevy::diagnostic::DiagnosticPath;
use bevy::prelude::*;
use bevy::render::diagnostic::RecordDiagnostics;
use bevy::render::render_phase::TrackedRenderPass;
use bevy::render::render_resource::{
    BlendState, Buffer, BufferDescriptor, BufferUsages, ColorTargetState, ColorWrites,
    DownlevelFlags, FragmentState, PipelineCache, RenderPassDescriptor, TextureFormat, WgpuLimits,
};
use bevy::render::renderer::{
    RenderAdapter, RenderAdapterInfo, RenderContext, RenderDevice, RenderQueue, ViewQuery,
};
use bevy::render::view::ViewTarget;
use bevy::render::{ExtractSchedule, MainWorld, Render, RenderApp, RenderStartup, RenderSystems};
use bevy::shader::ShaderDefVal;
use bevy_egui::render::systems::EguiPipelines;

use entity_layouts::runtime::device::DevicePoints;
use entity_layouts::runtime::renderer::Renderer;
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
    /// gpu layout's buffer. Returns the time spent gathering, which includes writing the points
    /// into the staging memory: there is no CPU copy of them for an upload. The queue calls
    /// around it are left out of the gather's time: they can wait for the render thread, which
    /// holds the queue while it submits the previous frame (pipelined rendering; under lavapipe
    /// that is most of a frame), so that wait stays in the frame's "rest", with the GPU's own
    /// copy.
    pub fn gather(
        &mut self,
        driver: &mut entity_layouts::runtime::driver::Driver,
        device: &RenderDevice,
        queue: &RenderQueue,
    ) -> f32 {
        if let Some(DevicePoints { buffer, len }) = driver.swarm().gpu_points() {
            self.draw = Some((Buffer::from(buffer), len));
            return 0.0;
        }
        let n = driver.swarm().len();
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
                // Read as vertices by the quads, as storage by the compute renderer.
                usage: BufferUsages::VERTEX | BufferUsages::STORAGE | BufferUsages::COPY_DST,
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

/// Set to anything to make the app treat its adapter as one without compute shaders: the
/// fallback to quads, exercised on a machine whose adapter has them (the app's tests do this).
pub const FORCE_NO_COMPUTE_ENV: &str = "ENTITY_LAYOUTS_ADAPTER_WITHOUT_COMPUTE";

/// Which renderer draws, and why not the one asked for (main world).
#[derive(Resource, Debug)]
pub struct Drawing {
    /// What the command line, a key, the panel or a script asked for.
    pub requested: Renderer,
    /// What draws this frame: the request, or quads where compute cannot draw.
    pub in_use: Renderer,
    /// Why the compute renderer cannot draw here, if it cannot: the adapter, or the world
    /// rectangle's accumulation buffer over the adapter's buffer limits.
    pub compute_blocked: Option<String>,
    /// What the adapter lacks for the compute renderer (checked once, when its device exists).
    adapter_lacks: Option<String>,
    /// The most bytes one storage binding holds on this device.
    max_binding_bytes: u64,
    /// Frames since the renderer in use last changed: the draw time of the first frames after a
    /// change is still the other renderer's (timestamps arrive a few frames late).
    pub frames_since_change: u32,
    /// A software adapter (lavapipe): its timestamps do not cover a compute dispatch (the
    /// compute renderer's timed draw stays flat from 10k to 10M points while its frame grows
    /// with every point; docs/results/drawing.md).
    software_adapter: bool,
}

impl Drawing {
    pub fn new(requested: Renderer) -> Self {
        Self {
            requested,
            in_use: Renderer::Quads,
            compute_blocked: Some("the renderer's device does not exist yet".into()),
            adapter_lacks: Some("the renderer's device does not exist yet".into()),
            max_binding_bytes: 0,
            frames_since_change: 0,
            software_adapter: false,
        }
    }

    /// Whether the adapter is a CPU (lavapipe, llvmpipe): drawing then takes the cores that the
    /// simulation, a switch and a sort run on.
    pub fn software_adapter(&self) -> bool {
        self.software_adapter
    }

    /// Whether the points' measured GPU time would leave out the compute renderer's raster pass.
    pub fn timestamps_miss_compute(&self) -> bool {
        self.software_adapter && self.in_use == Renderer::Compute
    }

    /// Whether this frame's draw time belongs to the renderer in use.
    pub fn settled(&self) -> bool {
        self.frames_since_change >= DRAW_TIME_LAG_FRAMES
    }

    /// Why the renderer in use is not the one asked for, if it is not.
    pub fn fallback_reason(&self) -> Option<&str> {
        (self.in_use != self.requested)
            .then_some(self.compute_blocked.as_deref())
            .flatten()
    }
}

/// Frames after a renderer change whose draw time is left out of the summary and the bench.
const DRAW_TIME_LAG_FRAMES: u32 = 4;

/// What the compute renderer needs of an adapter: compute shaders, storage buffers that
/// fragment shaders read (the resolve pass), and 256 invocations per workgroup. `None` when it
/// has them all, else what it lacks.
pub fn compute_renderer_lacks(flags: DownlevelFlags, limits: &WgpuLimits) -> Option<String> {
    if !flags.contains(DownlevelFlags::COMPUTE_SHADERS) {
        return Some("the adapter runs no compute shaders".into());
    }
    if !flags.contains(DownlevelFlags::FRAGMENT_STORAGE) {
        return Some("the adapter's fragment shaders read no storage buffers".into());
    }
    if limits.max_storage_buffers_per_shader_stage < 2 {
        return Some(format!(
            "the adapter binds {} storage buffers per shader stage; the compute renderer needs 2",
            limits.max_storage_buffers_per_shader_stage
        ));
    }
    if limits.max_compute_invocations_per_workgroup < compute::WORKGROUP
        || limits.max_compute_workgroup_size_x < compute::WORKGROUP
    {
        return Some(format!(
            "the adapter's workgroups hold {} invocations; the compute renderer needs {}",
            limits.max_compute_invocations_per_workgroup,
            compute::WORKGROUP
        ));
    }
    None
}

/// Reads what the adapter offers the compute renderer, once its device exists.
fn check_adapter(
    adapter: Option<Res<RenderAdapter>>,
    info: Option<Res<RenderAdapterInfo>>,
    device: Option<Res<RenderDevice>>,
    mut drawing: ResMut<Drawing>,
) {
    drawing.software_adapter = info.is_some_and(|i| i.0.device_type == wgpu::DeviceType::Cpu);
    let (Some(adapter), Some(device)) = (adapter, device) else {
        drawing.adapter_lacks = Some("the renderer has no GPU device".into());
        return;
    };
    let mut flags = adapter.0.get_downlevel_capabilities().flags;
    if std::env::var_os(FORCE_NO_COMPUTE_ENV).is_some() {
        flags.remove(DownlevelFlags::COMPUTE_SHADERS);
    }
    let limits = device.limits();
    drawing.adapter_lacks = compute_renderer_lacks(flags, &limits);
    drawing.max_binding_bytes = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
    if let Some(lacks) = &drawing.adapter_lacks {
        warn!("compute renderer unavailable ({lacks}): the points are drawn as instanced quads");
    }
}

/// Picks the renderer for this frame, before anything asks for a screenshot of it: the one
/// asked for (by the end of the last frame) where it can draw, else quads, and says so (once per
/// reason) in the log.
pub fn choose_renderer(view: Res<PointsView>, mut drawing: ResMut<Drawing>) {
    let [x, y, w, h] = view.viewport;
    let bytes = compute::AccumulationRect::covering([x, y, w, h]).bytes();
    let blocked = drawing.adapter_lacks.clone().or_else(|| {
        (bytes > drawing.max_binding_bytes).then(|| {
            format!(
                "the world's {w:.0}x{h:.0} pixels need a {} MiB accumulation buffer; the adapter binds at most {} MiB",
                bytes >> 20,
                drawing.max_binding_bytes >> 20
            )
        })
    });
    if blocked != drawing.compute_blocked {
        if let (Some(reason), Renderer::Compute) = (&blocked, drawing.requested)
            && drawing.adapter_lacks.is_none()
        {
            warn!("compute renderer unavailable ({reason}): drawing instanced quads");
        }
        drawing.compute_blocked = blocked;
    }
    let in_use = match (drawing.requested, &drawing.compute_blocked) {
        (Renderer::Compute, None) => Renderer::Compute,
        _ => Renderer::Quads,
    };
    if in_use != drawing.in_use {
        drawing.in_use = in_use;
        drawing.frames_since_change = 0;
    } else {
        drawing.frames_since_change = drawing.frames_since_change.saturating_add(1);
    }
}

pub struct PointsRenderPlugin {
    pub renderer: Renderer,
}

impl Plugin for PointsRenderPlugin {
    fn build(&self, app: &mut App) {
        let mut shaders = app.world_mut().resource_mut::<Assets<Shader>>();
        let mut add =
            |source: &'static str, path: &'static str| shaders.add(Shader::from_wgsl(source, path));
        // The shared part is found by its import path (`entity_layouts::points`); its handle is
        // kept, or the asset would be dropped before the others import it.
        let common = add(
            include_str!("../../../assets/shaders/points_common.wgsl"),
            "shaders/points_common.wgsl",
        );
        let quads = add(
            include_str!("../../../assets/shaders/points.wgsl"),
            "shaders/points.wgsl",
        );
        let raster = add(
            include_str!("../../../assets/shaders/points_raster.wgsl"),
            "shaders/points_raster.wgsl",
        );
        let resolve = add(
            include_str!("../../../assets/shaders/points_resolve.wgsl"),
            "shaders/points_resolve.wgsl",
        );
        let ready = RenderReady::default();
        app.init_resource::<GatheredPoints>()
            .init_resource::<PointsView>()
            .insert_resource(Drawing::new(self.renderer))
            .insert_resource(ready.clone())
            .add_systems(Startup, check_adapter)
            .add_systems(First, choose_renderer);
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .insert_resource(ready)
            .insert_resource(PointsShaders {
                _common: common,
                quads,
                raster,
                resolve,
            })
            .init_resource::<RenderPoints>()
            .add_systems(
                RenderStartup,
                (quads::init_pipeline, compute::init_pipelines),
            )
            .add_systems(ExtractSchedule, extract_points)
            .add_systems(
                Render,
                (quads::prepare, compute::prepare).in_set(RenderSystems::PrepareResources),
            )
            .add_systems(
                Core2d,
                points_pass
                    .after(Core2dSystems::MainPass)
                    .before(bevy_egui::render::egui_pass),
            );
    }
}

/// The points shaders, added to the main world's shader assets at build time.
#[derive(Resource)]
struct PointsShaders {
    _common: Handle<Shader>,
    quads: Handle<Shader>,
    raster: Handle<Shader>,
    resolve: Handle<Shader>,
}

/// What the render world draws this frame.
#[derive(Resource, Default)]
struct RenderPoints {
    draw: Option<(Buffer, usize)>,
    view: PointsView,
    renderer: Renderer,
}

impl RenderPoints {
    fn count(&self) -> usize {
        self.draw.as_ref().map_or(0, |(_, n)| *n)
    }

    /// The dot's size in pixels and its weight, as both renderers draw it.
    fn dot_style(&self) -> (f32, f32) {
        let [_, _, w, h] = self.view.viewport;
        dot_style(self.count(), w * h, self.view.dot_px)
    }
}

fn extract_points(main_world: Res<MainWorld>, mut render: ResMut<RenderPoints>) {
    render.view = *main_world.resource::<PointsView>();
    render.draw = main_world.resource::<GatheredPoints>().draw.clone();
    render.renderer = main_world.resource::<Drawing>().in_use;
}

/// The point format's bit widths, from the Rust constants: the shaders decode what
/// `pack_point` encodes.
fn point_format_defs() -> Vec<ShaderDefVal> {
    vec![
        ShaderDefVal::UInt("POINT_X_BITS".into(), POINT_X_BITS),
        ShaderDefVal::UInt("POINT_Y_BITS".into(), POINT_Y_BITS),
        ShaderDefVal::UInt("POINT_HP_BITS".into(), POINT_HP_BITS),
    ]
}

/// The fragment stage of a points pipeline: `shader`'s fragment entry with the point format's
/// defs, writing the view's `format` through `blend`.
fn fragment_onto_view(
    shader: &Handle<Shader>,
    format: TextureFormat,
    blend: BlendState,
) -> FragmentState {
    FragmentState {
        shader: shader.clone(),
        shader_defs: point_format_defs(),
        targets: vec![Some(ColorTargetState {
            format,
            blend: Some(blend),
            write_mask: ColorWrites::ALL,
        })],
        ..default()
    }
}

/// A uniform buffer of `size` bytes for a renderer's parameters, rewritten each frame.
fn params_buffer(device: &RenderDevice, label: &'static str, size: u64) -> Buffer {
    device.create_buffer(&BufferDescriptor {
        label: Some(label),
        size,
        usage: BufferUsages::UNIFORM | BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A render pass onto the view's image (drawn over what the main pass left), its viewport set to
/// `[x, y, width, height]` in physical pixels.
fn points_render_pass<'a>(
    ctx: &'a mut RenderContext,
    target: &ViewTarget,
    label: &'static str,
    [x, y, w, h]: [f32; 4],
) -> TrackedRenderPass<'a> {
    let mut pass = ctx.begin_tracked_render_pass(RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(target.get_color_attachment())],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    });
    pass.set_viewport(x, y, w, h, 0.0, 1.0);
    pass
}

/// The name of the points' span in Bevy's render diagnostics, and the path of its GPU time.
const DRAW_SPAN: &str = "points";
pub const DRAW_GPU: DiagnosticPath = DiagnosticPath::const_new("render/points/elapsed_gpu");

/// Draws the points with the renderer in use, inside one diagnostic span, so that its GPU time
/// is comparable between the two.
#[allow(clippy::too_many_arguments)]
fn points_pass(
    view: ViewQuery<&ViewTarget>,
    ready: Res<RenderReady>,
    egui: Option<Res<EguiPipelines>>,
    quads: Res<quads::QuadsPipeline>,
    raster: Res<compute::ComputeRaster>,
    render: Res<RenderPoints>,
    cache: Res<PipelineCache>,
    mut ctx: RenderContext,
) {
    let target = view.into_inner();
    let Some((buffer, n)) = &render.draw else {
        return;
    };
    let diagnostics = ctx.diagnostic_recorder();
    let span = diagnostics
        .as_ref()
        .map(|d| d.time_span(ctx.command_encoder(), DRAW_SPAN));
    let drawn = match render.renderer {
        Renderer::Quads => quads.draw(&mut ctx, target, &render, &cache, buffer, *n),
        Renderer::Compute => raster.draw(&mut ctx, target, &cache),
    };
    if let Some(span) = span {
        span.end(ctx.command_encoder());
    }
    // Ready once the points and the panel's pipelines have compiled: a screenshot must show both.
    let egui_ready = egui.is_some_and(|p| {
        !p.0.is_empty()
            && p.0
                .values()
                .all(|id| cache.get_render_pipeline(*id).is_some())
    });
    if drawn && egui_ready {
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

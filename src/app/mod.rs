//! The window this project is known for: millions of moving entities, the layout switchable live,
//! the frame time against the 16.67 ms budget as it happens. Bevy plugins with one concern each:
//! `SimPlugin` runs and times the simulation, `PointsRenderPlugin` draws it the same way for every
//! layout, `PanelPlugin` is the egui panel, `HudPlugin` the audience's overlay and captions,
//! `MemoryViewPlugin` where the entities sit, cache line by cache line, `TalkPlugin` the keys,
//! scripts, the one request dispatcher and the orderly exit, `ShotsPlugin` screenshots and
//! exports, `ClipPlugin` recorded clips.

mod clip;
mod hud;
mod memory_view;
mod panel;
mod render;
mod scoreboard;
mod shots;
mod sim;
mod stage;
mod stats;
mod talk;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bevy::app::{
    ScheduleRunnerPlugin, TaskPoolOptions, TaskPoolThreadAssignmentPolicy,
    TerminalCtrlCHandlerPlugin,
};
use bevy::camera::RenderTarget;
use bevy::diagnostic::FrameTimeDiagnosticsPlugin;
use bevy::log::{Level, LogPlugin};
use bevy::prelude::*;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::window::{ExitCondition, PresentMode, PrimaryWindow, WindowResolution};
use bevy::winit::WinitPlugin;
use bevy_egui::{EguiPlugin, EguiPostUpdateSet};

use bevy::render::diagnostic::RenderDiagnosticsPlugin;
use bevy::render::renderer::{RenderAdapter, RenderAdapterInfo, RenderDevice, RenderQueue};
use bevy::render::{Render, RenderApp, RenderSystems};
use entity_layouts::error::SimError;
use entity_layouts::layout::{LayoutKind, SeekKernel};
use entity_layouts::memory::resident_bytes;
use entity_layouts::neighbours::{AvoidForm, Reach};
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::driver::Driver;
use entity_layouts::runtime::gpu::GpuContext;
use entity_layouts::runtime::pace::Pace;
use entity_layouts::runtime::renderer::Renderer;
use entity_layouts::runtime::swarm::Order;
use entity_layouts::runtime::values::{ResortAbove, ResortEvery};
use entity_layouts::threads::Threads;
use entity_layouts::tools::script::ScriptRunner;
use entity_layouts::workload::SpawnPattern;

use clip::ClipPlugin;
use hud::HudPlugin;
use memory_view::MemoryViewPlugin;
use panel::PanelPlugin;
use render::PointsRenderPlugin;
use shots::{ShotTarget, Shots, ShotsPlugin};
use sim::{Sim, SimPlugin};
use talk::{Signals, Talk, TalkPlugin};

/// Everything the command line can set.
#[derive(Clone, Debug)]
pub struct AppOptions {
    pub layout: LayoutKind,
    pub count: usize,
    pub threads: Threads,
    pub churn: usize,
    /// Entities spawned per frame while growing (`--grow-chunk`); `None`: by time.
    pub grow_chunk: Option<usize>,
    /// Entities carried over per frame on a switch (`--switch-chunk`); `None`: by time.
    pub switch_chunk: Option<usize>,
    /// Start with the seek system on (`--seek`).
    pub seek: bool,
    /// The seek kernel to start with (`--seek-kernel`).
    pub seek_kernel: SeekKernel,
    /// The storage order to open in (`--order`).
    pub order: Order,
    /// Sort by group again past this share of strayed targets (`--resort-above`).
    pub resort: Option<ResortAbove>,
    /// Start with the neighbours on (`--neighbours`), their form, what sets their radius
    /// (`--neighbour-target`, `--radius`), and a re-sort by cell (`--resort-cells`).
    pub avoid: bool,
    pub avoid_form: AvoidForm,
    pub reach: Option<Reach>,
    pub resort_cells: Option<ResortEvery>,
    pub vsync: bool,
    pub headless: bool,
    pub frames: Option<u64>,
    pub screenshot: Option<PathBuf>,
    pub script: Option<Vec<Action>>,
    pub ui_scale: f32,
    /// `None`: the dot size follows the count.
    pub dot_px: Option<f32>,
    pub renderer: Renderer,
    pub seed: u64,
    pub spawn: SpawnPattern,
    pub size: [u32; 2],
    pub export_dir: PathBuf,
}

/// What the panel and keys change that is not simulation state.
#[derive(Resource)]
pub struct UiState {
    pub panel_visible: bool,
    pub panel_width_px: f32,
    pub count_slider: usize,
    pub vsync: bool,
    pub ui_scale: f32,
    pub dot_px: Option<f32>,
    /// The frame-time plot on a log axis.
    pub plot_log: bool,
    /// Whether the panel-overflow warning was logged already (once per run).
    pub overflow_logged: bool,
    /// The memory view on the stage (`M`).
    pub memory_visible: bool,
    /// Whether the memory view's overflow warning was logged already (once per run).
    pub memory_overflow_logged: bool,
    /// The frame plot's height and the scoreboard's row height, in points: full size while the
    /// panel has room, shrunk (the plot first) so that everything fits a projector's 720 lines
    /// at UI scale 1.25 with every layout on the scoreboard.
    pub plot_height: f32,
    pub row_height: f32,
    /// The most scoreboard bars the panel shows (the fastest, and always the current layout's):
    /// with every layout measured, nineteen bars do not fit 720 lines even at their least height.
    pub scoreboard_rows: usize,
    /// The count of the last `count until-over` result the slider was moved to.
    pub slider_synced_to: Option<usize>,
}

/// This process's resident memory, read twice a second (asking the OS every frame would show in
/// the frame time).
#[derive(Resource, Default)]
pub struct ResidentMemory {
    bytes: Option<u64>,
    read_at: f64,
}

impl ResidentMemory {
    pub fn label(&self) -> String {
        self.bytes.map_or("unknown".into(), |b| {
            format!("{:.0} MiB", b as f64 / (1 << 20) as f64)
        })
    }
}

fn read_resident_memory(time: Res<Time<Real>>, mut resident: ResMut<ResidentMemory>) {
    let now = time.elapsed_secs_f64();
    if now - resident.read_at >= 0.5 || resident.read_at == 0.0 {
        resident.bytes = resident_bytes();
        resident.read_at = now.max(f64::MIN_POSITIVE);
    }
}

/// The render target's size in physical pixels (the window's, or the offscreen image's).
#[derive(Resource)]
pub struct Canvas {
    pub physical_size: [f32; 2],
}

/// The driver the command line asks for, or why not.
fn build_driver(options: &AppOptions) -> Result<Driver, SimError> {
    let mut driver = Driver::new(options.layout, options.seed)?.with_spawn_pattern(options.spawn);
    if let Some(chunk) = options.grow_chunk {
        driver = driver.with_grow_pace(Pace::Entities(chunk));
    }
    if let Some(chunk) = options.switch_chunk {
        driver = driver.with_switch_pace(Pace::Entities(chunk));
    }
    for action in [
        Action::Threads(options.threads),
        Action::Count(options.count),
        Action::Churn(options.churn),
        Action::Seek(options.seek),
        Action::SeekKernel(options.seek_kernel),
        Action::Resort(options.resort),
        Action::ResortCells(options.resort_cells),
        Action::AvoidForm(options.avoid_form),
    ] {
        driver.apply(&action)?;
    }
    if let Some(reach) = options.reach {
        driver.apply(&Action::Reach(reach))?;
    }
    driver.apply(&Action::Avoid(options.avoid))?;
    // `--count N` opens at N: the population is filled before the first timed frame.
    driver.begin_loading();
    // After the fill began, so that the sort waits for it: asked of the empty population, it
    // would find nothing to sort, and the fill would append every entity in id order under a
    // label that says "group".
    if options.order != Order::Id {
        driver.apply(&Action::Order(options.order))?;
    }
    Ok(driver)
}

/// The options, kept until the renderer's device exists, when the gpu layout was asked for on
/// the command line.
#[derive(Resource)]
struct StartOnGpu(AppOptions);

pub fn run(options: AppOptions) -> ExitCode {
    // A CPU layout is checked now, before a window opens; the gpu layout needs the renderer's
    // device first (`share_render_device`).
    let sim = if options.layout.is_gpu() {
        Err(StartOnGpu(options.clone()))
    } else {
        match build_driver(&options) {
            Ok(driver) => Ok(Sim::new(driver)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    };
    explain_startup_failures();
    let signals = Signals::install();
    println!(
        "entity-layouts: {} entities in {}, seed {}, drawn by the {} renderer; Ctrl-C ends the run with its summary",
        options.count,
        options.layout.name(),
        options.seed,
        options.renderer
    );

    let [width, height] = options.size;
    let window = Window {
        title: "entity-layouts: what does your memory layout cost per frame?".into(),
        resolution: WindowResolution::new(width, height),
        present_mode: if options.vsync {
            PresentMode::AutoVsync
        } else {
            PresentMode::AutoNoVsync
        },
        ..default()
    };
    // Ctrl-C is ours (`Signals`): the run ends with its summary, as on SIGTERM.
    let plugins = DefaultPlugins
        .build()
        .disable::<TerminalCtrlCHandlerPlugin>()
        .set(all_cores_compute())
        .set(WindowPlugin {
            primary_window: (!options.headless).then_some(window),
            exit_condition: if options.headless {
                ExitCondition::DontExit
            } else {
                ExitCondition::OnPrimaryClosed
            },
            ..default()
        })
        .set(LogPlugin {
            level: Level::WARN,
            filter: "wgpu=error,naga=warn,bevy_render=warn".into(),
            ..default()
        });

    let mut app = App::new();
    if options.headless {
        app.add_plugins(plugins.disable::<WinitPlugin>())
            .add_plugins(ScheduleRunnerPlugin::run_loop(Duration::ZERO));
    } else {
        app.add_plugins(plugins);
    }
    if options.headless
        && let Some(render_app) = app.get_sub_app_mut(RenderApp)
    {
        render_app.add_systems(Render, finish_gpu_frame.in_set(RenderSystems::Cleanup));
    }
    app.add_plugins((
        FrameTimeDiagnosticsPlugin::default(),
        EguiPlugin::default(),
        // GPU time per render pass (timestamp queries): the points' draw time in the panel.
        RenderDiagnosticsPlugin,
        SimPlugin,
        PointsRenderPlugin {
            renderer: options.renderer,
        },
        PanelPlugin,
        HudPlugin,
        MemoryViewPlugin,
        TalkPlugin,
        ShotsPlugin,
        ClipPlugin,
    ))
    // Glyphs that egui draws for the first time go into its font atlas in the same frame
    // (bevy_egui writes them into the atlas image in `PostProcessOutput`). Unordered, Bevy could
    // flush the image's change events before that write, and the frame was drawn with the old
    // atlas: text that appeared in it missed its new glyphs ("[4] So  ( ec per  eld)" on the
    // frame a switch started), in screenshots and clips alike. Ordered, the atlas reaches the
    // GPU in the frame that uses it (`tests/pictures.rs`).
    .configure_sets(
        PostUpdate,
        EguiPostUpdateSet::PostProcessOutput.before(bevy::asset::AssetEventSystems),
    )
    .insert_resource(ClearColor(Color::srgb(0.03, 0.04, 0.06)))
    .insert_resource(UiState {
        panel_visible: true,
        panel_width_px: 0.0,
        count_slider: options.count,
        vsync: options.vsync,
        ui_scale: options.ui_scale,
        dot_px: options.dot_px,
        plot_log: false,
        overflow_logged: false,
        memory_visible: false,
        memory_overflow_logged: false,
        plot_height: panel::PLOT_HEIGHT,
        row_height: scoreboard::ROW_HEIGHT,
        scoreboard_rows: usize::MAX,
        slider_synced_to: None,
    })
    .insert_resource(Shots::new(options.export_dir))
    .insert_resource(signals)
    .init_resource::<ResidentMemory>()
    .insert_resource(Canvas {
        physical_size: [width as f32, height as f32],
    })
    .insert_resource(Talk::new(
        options.script.map(ScriptRunner::new),
        options.frames,
        options.screenshot,
    ))
    .insert_resource(ShotTarget(None))
    .add_systems(PreStartup, share_render_device)
    .add_systems(
        Startup,
        move |commands: Commands, images: ResMut<Assets<Image>>, shots: ResMut<ShotTarget>| {
            spawn_camera(commands, images, shots, options.headless, options.size)
        },
    )
    .add_systems(First, (measure_canvas, read_resident_memory));

    match sim {
        Ok(sim) => app.insert_resource(sim),
        Err(start) => app.insert_resource(start),
    };
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(code) => ExitCode::from(code.get()),
    }
}

/// Bevy's default gives the compute pool what IO and async compute leave over (one thread on a
/// 2-core laptop, 8 of 16 on a server); `Threads::All` means every core, so give it all of them
/// and one thread each to the mostly idle IO and async pools.
fn all_cores_compute() -> TaskPoolPlugin {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = || TaskPoolThreadAssignmentPolicy {
        min_threads: 1,
        max_threads: 1,
        percent: 0.0,
        on_thread_spawn: None,
        on_thread_destroy: None,
    };
    TaskPoolPlugin {
        task_pool_options: TaskPoolOptions {
            min_total_threads: cores + 2,
            max_total_threads: cores + 2,
            io: one(),
            async_compute: one(),
            ..default()
        },
    }
}

/// Headless, nothing paces the frames by a hardware GPU as a window's presentation does: the
/// next frame starts while the GPU may still be drawing this one, and the frame time leaves the
/// drawing out: on a fast GPU a headless frame reads a small fraction of what its quads' pass
/// takes on the GPU (docs/results/drawing.md, "On a real GPU"). Waiting for the frame's GPU
/// work puts it into the frame time, as presenting does. A software adapter (lavapipe) already
/// holds the frame back while it draws on the same cores, and waiting there too only makes the
/// quads' frames slower, so it is left alone.
fn finish_gpu_frame(device: Res<RenderDevice>, info: Option<Res<RenderAdapterInfo>>) {
    if info.is_some_and(|i| i.0.device_type == wgpu::DeviceType::Cpu) {
        return;
    }
    let _ = device
        .wgpu_device()
        .poll(wgpu::PollType::wait_indefinitely());
}

fn spawn_camera(
    mut commands: Commands,
    mut images: ResMut<Assets<Image>>,
    mut shots: ResMut<ShotTarget>,
    headless: bool,
    [width, height]: [u32; 2],
) {
    if headless {
        let mut image =
            Image::new_target_texture(width, height, TextureFormat::Rgba8UnormSrgb, None);
        image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
        let handle = images.add(image);
        shots.0 = Some(handle.clone());
        commands.spawn((Camera2d, Msaa::Off, RenderTarget::Image(handle.into())));
    } else {
        commands.spawn((Camera2d, Msaa::Off));
    }
}

/// Hands the renderer's device to the gpu layout, so that the renderer draws the buffer the
/// compute passes write; then builds the driver if the command line asked for the gpu layout.
/// Without a device that can run it, the layout stays disabled in the selector with the reason,
/// and `--layout gpu` ends the run with exit code 2 and the reason.
#[allow(clippy::too_many_arguments)]
fn share_render_device(
    mut commands: Commands,
    device: Option<Res<RenderDevice>>,
    queue: Option<Res<RenderQueue>>,
    info: Option<Res<RenderAdapterInfo>>,
    adapter: Option<Res<RenderAdapter>>,
    start: Option<Res<StartOnGpu>>,
    mut exit: MessageWriter<AppExit>,
) {
    let context = match (device, queue, info, adapter) {
        (Some(device), Some(queue), Some(info), Some(adapter)) => {
            let queue: &entity_layouts::runtime::gpu::context::Queue = &queue.0;
            GpuContext::new(
                device.wgpu_device().clone(),
                queue.clone(),
                (*info.0).clone(),
                adapter.0.get_downlevel_capabilities().flags,
            )
        }
        _ => Err("the renderer has no GPU device".to_string()),
    };
    if let Err(e) = entity_layouts::runtime::gpu::context::install(context) {
        warn!("gpu layout: {e}");
    }
    let Some(start) = start else {
        return;
    };
    commands.remove_resource::<StartOnGpu>();
    match build_driver(&start.0) {
        Ok(driver) => commands.insert_resource(Sim::new(driver)),
        Err(e) => {
            eprintln!("error: {e}");
            // The app's systems need a simulation for the one frame before the exit lands.
            let mut sim =
                Sim::new(Driver::new(LayoutKind::Soa, start.0.seed).expect("SoA needs no device"));
            sim.frozen = true;
            commands.insert_resource(sim);
            exit.write(AppExit::from_code(2));
        }
    }
}

fn measure_canvas(windows: Query<&Window, With<PrimaryWindow>>, mut canvas: ResMut<Canvas>) {
    if let Ok(window) = windows.single() {
        let size = [
            window.physical_width() as f32,
            window.physical_height() as f32,
        ];
        if canvas.physical_size != size && size[0] > 0.0 && size[1] > 0.0 {
            canvas.physical_size = size;
        }
    }
}

/// Bevy panics when no GPU adapter or no display exists; say what is missing and what works
/// without it, and exit with code 2 instead of a panic's 101.
fn explain_startup_failures() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.contains("Unable to find a GPU") {
            eprintln!(
                "error: no GPU adapter was found (Vulkan, Metal or DX12). Install your GPU's Vulkan driver, \
                 or Mesa's software Vulkan (Debian/Ubuntu: mesa-vulkan-drivers). \
                 The headless bench needs no GPU: cargo run --release -- bench"
            );
            std::process::exit(2);
        }
        if text.contains("Failed to build event loop") {
            eprintln!(
                "error: no display to open the window on ({text}). Run it from a desktop session, \
                 under a virtual display (xvfb-run -a cargo run --release), or without a window: \
                 --headless (needs a GPU adapter, renders offscreen)"
            );
            std::process::exit(2);
        }
        default_hook(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--order group` opens sorted: the sort waits for the start-up fill. Asked of the empty
    /// population before the fill, it would find nothing to sort, and the fill would append
    /// every entity in id order under the "group" label.
    #[test]
    fn order_group_at_start_sorts_the_filled_population() {
        let n = 30_000;
        let options = AppOptions {
            layout: LayoutKind::Soa,
            count: n,
            threads: Threads::One,
            churn: 0,
            grow_chunk: None,
            switch_chunk: None,
            seek: true,
            seek_kernel: SeekKernel::Idiomatic,
            order: Order::Group,
            resort: None,
            avoid: false,
            avoid_form: AvoidForm::Idiomatic,
            reach: None,
            resort_cells: None,
            vsync: false,
            headless: true,
            frames: None,
            screenshot: None,
            script: None,
            ui_scale: 1.0,
            dot_px: None,
            renderer: Renderer::default(),
            seed: 3,
            spawn: SpawnPattern::default(),
            size: [640, 360],
            export_dir: PathBuf::from("unused"),
        };
        let mut driver = build_driver(&options).unwrap();
        while driver.loading() {
            driver.load_step(Duration::from_millis(50)).unwrap();
        }
        let swarm = driver.swarm();
        assert_eq!((swarm.len(), swarm.order()), (n, Order::Group));
        let far = swarm
            .target_spread(entity_layouts::runtime::swarm::group_stretch(n))
            .far;
        assert!(far < 0.01, "sorted: {far}");
    }
}

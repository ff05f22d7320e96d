//! The command line: no subcommand opens the window; `verify` proves the layouts equivalent,
//! `bench` measures them headless, `replay` runs a script without a window, `soak` runs random
//! actions for a while. Each subcommand's options and body live with it
//! (`entity_layouts::commands`); this file parses and calls it. Exit codes: 0 done, 1 a run that
//! failed, 2 a request that cannot run as asked (the commands module says which is which).

#![forbid(unsafe_code)]

#[cfg(feature = "app")]
mod app;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use entity_layouts::commands::{
    self, bench::BenchArgs, count_frames::CountFramesArgs, replay::ReplayArgs, soak::SoakArgs,
    usage_error, verify::VerifyArgs,
};
use entity_layouts::layout::{LayoutKind, SeekKernel};
use entity_layouts::neighbours::AvoidForm;
use entity_layouts::runtime::renderer::Renderer;
use entity_layouts::runtime::swarm::Order;
use entity_layouts::runtime::values::{
    Churn, DotSize, EntityCount, Frames, GrowChunk, LayoutName, ReachArg, ResortAbove, ResortEvery,
    SwitchChunk, UiScale, WindowSize,
};
use entity_layouts::threads::Threads;
use entity_layouts::workload::SpawnPattern;

#[derive(Parser)]
#[command(
    name = "entity-layouts",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    app: AppArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run every layout and variant (one thread and all, with layout switches, with churn) from
    /// one seed and check that all end in bit-identical states.
    Verify(VerifyArgs),
    /// Run the studies' experiments headless and print their tables.
    Bench(Box<BenchArgs>),
    /// Run a script without a window, frame for frame as the app runs it, growing 250,000
    /// entities a frame, and print its final state and checksum (the app's `--script` run with
    /// the same options and `--grow-chunk 250000` ends in the same one).
    Replay(ReplayArgs),
    /// Random actions for a while (counts, every layout, threads, churn, seek and its kernel, pause, switches
    /// that start mid-copy), checked against a SoA reference and for memory that does not come back.
    /// Needs no GPU. Exits 1 on a mismatch or a memory failure.
    Soak(SoakArgs),
    /// Internal: build a population and step it, nothing else; what `bench --only counters` runs
    /// under cachegrind (`entity_layouts::tools::counters`).
    #[command(hide = true)]
    CountFrames(CountFramesArgs),
}

/// Options of the window (the default command). Every value goes through the parser the
/// scripts and the bench use too (`entity_layouts::runtime::values`), so a bad one is exit code 2 with the
/// accepted range before a window opens.
#[derive(Args)]
struct AppArgs {
    /// Layout to start with (the gpu layout needs a GPU adapter with compute).
    #[arg(long, default_value = "ecs-table", value_parser = LayoutName)]
    layout: LayoutKind,
    /// Entities to start with, 0 to 10,000,000 (100,000,000 on the gpu layout where the adapter
    /// allows; 1e6 and 100_000 work too).
    #[arg(long, default_value = "100000", allow_hyphen_values = true)]
    count: EntityCount,
    /// 1 or all.
    #[arg(long, default_value = "1")]
    threads: Threads,
    /// Spawns and removals per frame, 0 to 100,000.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    churn: Churn,
    /// Grow by this many entities a frame, 1 to 100,000,000, so that `replay` reproduces the
    /// run exactly (default: grow for a share of each frame, half the frame the machine runs and
    /// at least 4 ms, whatever the layout's spawn rate).
    #[arg(long, allow_hyphen_values = true)]
    grow_chunk: Option<GrowChunk>,
    /// Carry this many entities over a frame when the layout changes, 1 to 100,000,000, so that
    /// a script's switches land on the same frames run after run (default: copy for the same
    /// share of each frame as growing).
    #[arg(long, allow_hyphen_values = true)]
    switch_chunk: Option<SwitchChunk>,
    /// Run the seek system too (move + regen + seek): every entity reads its target's position
    /// by handle and steers toward it. `T` or the panel's seek box turn it on and off live.
    #[arg(long)]
    seek: bool,
    /// The seek system's kernel: idiomatic (each seeker reads its target through its handle)
    /// or tuned (handles resolved to dense indices once, targets prefetched ahead, no branches;
    /// soa and the tuned ECS layouts have it, the others run their idiomatic seek). `K` or the
    /// panel switch it live.
    #[arg(long, default_value = "idiomatic")]
    seek_kernel: SeekKernel,
    /// The storage order to open in: id (as entities are born) or group (each seeker beside
    /// its target, sorted before the first timed frame). `O` or the panel's order switch
    /// rebuild it live.
    #[arg(long, default_value = "id")]
    order: Order,
    /// Sort by group again whenever churn has spread more than PCT% of the targets outside
    /// their group's stretch (1 to 99; off by default). The panel's re-sort box sets it live.
    #[arg(long, value_name = "PCT")]
    resort_above: Option<ResortAbove>,
    /// Run the neighbour system too: each entity is pushed away from every entity within a
    /// radius, found through a grid. `N` or the panel turn it on and off live.
    #[arg(long)]
    neighbours: bool,
    /// The neighbour pass's form: idiomatic (each candidate read through the layout) or tuned
    /// (positions copied into the grid in cell order first). `J` switches it live.
    #[arg(long, default_value = "idiomatic")]
    neighbour_form: AvoidForm,
    /// The mean number of neighbours the radius is set for, 1 to 64 (default 8).
    #[arg(long, value_name = "K", value_parser = ReachArg::target, conflicts_with = "radius", allow_hyphen_values = true)]
    neighbour_target: Option<ReachArg>,
    /// A fixed neighbour radius in world units, above 0 and at most 299.7.
    #[arg(long, value_name = "R", value_parser = ReachArg::radius, allow_hyphen_values = true)]
    radius: Option<ReachArg>,
    /// Sort by cell again every N frames (1 to 36,000; off by default).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    resort_cells: Option<ResortEvery>,
    /// Present with vsync (off by default, so the frame time shows the real work).
    #[arg(long)]
    vsync: bool,
    /// No window: render to an offscreen image (for machines without a display).
    #[arg(long)]
    headless: bool,
    /// Exit after this many frames and print a summary.
    #[arg(long, allow_hyphen_values = true)]
    frames: Option<Frames>,
    /// Save a PNG screenshot just before exiting.
    #[arg(long)]
    screenshot: Option<PathBuf>,
    /// Run a script of timed actions (see src/tools/script.rs for the format).
    #[arg(long)]
    script: Option<PathBuf>,
    /// Panel scale for projectors, 0.5 to 3.
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    ui_scale: UiScale,
    /// How the points are drawn: compute (atomic adds into a per-pixel buffer, then one resolve
    /// pass; the default) or quads (one instanced quad per point: the control). Where the
    /// adapter cannot run compute, quads draw and the panel and log say why.
    #[arg(long, default_value = "compute")]
    renderer: Renderer,
    /// Dot size in pixels, 1 to 4 (default: adapts to the count and the window).
    #[arg(long, allow_hyphen_values = true)]
    dot_size: Option<DotSize>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// How entities are born: streams (the default, structure that motion reveals) or uniform
    /// (the studies' pattern, which reads as TV static from 100k entities up).
    #[arg(long, default_value = "streams")]
    spawn: SpawnPattern,
    /// Window (or offscreen image) size, WIDTHxHEIGHT.
    #[arg(long, default_value = "1280x720")]
    size: WindowSize,
    /// Where the export key (E) writes its timestamped folders.
    #[arg(long, default_value = "exports")]
    export_dir: PathBuf,
}

fn main() -> ExitCode {
    entity_layouts::memory::map_large_allocations();
    let cli = Cli::parse();
    match cli.command {
        None => run_app(cli.app),
        Some(Command::Verify(args)) => commands::verify::run(args),
        Some(Command::Bench(args)) => commands::bench::run(*args),
        Some(Command::Replay(args)) => commands::replay::run(args),
        Some(Command::Soak(args)) => commands::soak::run(args),
        Some(Command::CountFrames(args)) => commands::count_frames::run(args),
    }
}

#[cfg(feature = "app")]
fn run_app(args: AppArgs) -> ExitCode {
    match app_options(args) {
        Ok(options) => app::run(options),
        Err(message) => usage_error(&message),
    }
}

#[cfg(not(feature = "app"))]
fn run_app(_: AppArgs) -> ExitCode {
    usage_error(
        "this build has no window (built without the `app` feature); use `verify` or `bench`, or rebuild with default features",
    )
}

/// The checks clap's parsers cannot make: the screenshot's format and the script's contents.
#[cfg(feature = "app")]
fn app_options(args: AppArgs) -> Result<app::AppOptions, String> {
    use entity_layouts::tools::script;

    if let Some(path) = &args.screenshot
        && path.extension().and_then(|e| e.to_str()) != Some("png")
    {
        return Err(format!(
            "--screenshot '{}' is not accepted: screenshots are PNG files, the path must end in .png",
            path.display()
        ));
    }
    let script = match &args.script {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read script '{}': {e}", path.display()))?;
            Some(script::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?)
        }
    };
    Ok(app::AppOptions {
        layout: args.layout,
        count: args.count.0,
        threads: args.threads,
        churn: args.churn.0,
        grow_chunk: args.grow_chunk.map(|g| g.0),
        switch_chunk: args.switch_chunk.map(|s| s.0),
        seek: args.seek,
        seek_kernel: args.seek_kernel,
        order: args.order,
        resort: args.resort_above,
        avoid: args.neighbours,
        avoid_form: args.neighbour_form,
        reach: args.neighbour_target.or(args.radius).map(|r| r.0),
        resort_cells: args.resort_cells,
        vsync: args.vsync,
        headless: args.headless,
        frames: args.frames.map(|f| f.0),
        screenshot: args.screenshot,
        script,
        ui_scale: args.ui_scale.0,
        dot_px: args.dot_size.map(|d| d.0),
        renderer: args.renderer,
        seed: args.seed,
        spawn: args.spawn,
        size: [args.size.width, args.size.height],
        export_dir: args.export_dir,
    })
}

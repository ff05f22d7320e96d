//! The command line: no subcommand opens the window, `verify` proves the layouts equivalent,
//! `bench` measures them headless.

#![forbid(unsafe_code)]

#[cfg(feature = "app")]
mod app;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use entity_layouts::bench::{self, BenchConfig, BenchError};
use entity_layouts::renderer::Renderer;
use entity_layouts::simd::SimdTier;
use entity_layouts::values::{
    BenchCount, Churn, DotSize, EntityCount, Frames, GrowChunk, SwitchChunk, UiScale, WindowSize,
};
use entity_layouts::verify::{Group, VerifyConfig, run_suite};
use entity_layouts::{Dt, LayoutKind, SpawnPattern, Threads, threads};

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

/// Options of the window (the default command). Every value goes through the parser the
/// scripts and the bench use too (`entity_layouts::values`), so a bad one is exit code 2 with the
/// accepted range before a window opens.
#[derive(Args)]
struct AppArgs {
    /// Layout to start with: ecs-table, ecs-sparse, ecs-contiguous, hecs, hecs-tuned, flecs,
    /// flecs-tuned, shipyard, shipyard-tuned, soa, chunks, aos, boxed, boxed-shuffled, dyn-1,
    /// dyn-2, dyn-4, dyn-12, gpu (needs a GPU adapter with compute).
    #[arg(long, default_value = "ecs-table")]
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
    /// run exactly (default: grow for 4 ms of each frame, whatever the layout's spawn rate).
    #[arg(long, allow_hyphen_values = true)]
    grow_chunk: Option<GrowChunk>,
    /// Carry this many entities over a frame when the layout changes, 1 to 100,000,000, so that
    /// a script's switches land on the same frames run after run (default: copy for 4 ms of
    /// each frame).
    #[arg(long, allow_hyphen_values = true)]
    switch_chunk: Option<SwitchChunk>,
    /// Run the seek system too (move + regen + seek): every entity reads its target's position
    /// by handle and steers toward it. `T` or the panel's seek box turn it on and off live.
    #[arg(long)]
    seek: bool,
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
    /// Run a script of timed actions (see src/script.rs for the format).
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

#[derive(Subcommand)]
enum Command {
    /// Run every layout and variant (one thread and all, with layout switches, with churn) from
    /// one seed and check that all end in bit-identical states.
    Verify {
        /// Entities per run, 1 to 100,000,000.
        #[arg(long, default_value = "10000")]
        count: BenchCount,
        /// Frames per run (default 60; 600 with --gpu).
        #[arg(long)]
        frames: Option<usize>,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Time step in seconds, in (0, 1].
        #[arg(long, default_value_t = 1.0 / 60.0, allow_negative_numbers = true)]
        dt: f64,
        /// Compare the gpu layout, read back after the frames, with the CPU's SoA instead (f32;
        /// needs a GPU adapter: exit code 2 and the reason without one).
        #[arg(long)]
        gpu: bool,
        /// With --gpu: the largest difference, in units in the last place, that still passes.
        /// 0 (bit-identical) is what lavapipe measures; a GPU that fuses `x + v*dt` into one FMA
        /// differs by a few.
        #[arg(long, default_value_t = 0)]
        gpu_ulps: u32,
    },
    /// Run the studies' experiments headless and print their tables.
    Bench(BenchArgs),
    /// Run a script without a window, frame for frame as the app runs it, growing 250,000
    /// entities a frame, and print its final state and checksum (the app's `--script` run with
    /// the same options and `--grow-chunk 250000` ends in the same one).
    Replay {
        script: PathBuf,
        #[arg(long, default_value = "ecs-table")]
        layout: LayoutKind,
        #[arg(long, default_value = "100000", allow_hyphen_values = true)]
        count: EntityCount,
        #[arg(long, default_value_t = 42)]
        seed: u64,
    },
    /// Random actions for a while (counts, every layout, threads, churn, seek, pause, switches
    /// that start mid-copy), checked against a SoA reference and for memory that does not come back.
    /// Needs no GPU. Exits 1 on a mismatch or a memory failure.
    Soak {
        /// How long to run in all, in minutes (fractions work: 0.5 is 30 s), shared evenly by
        /// the seeds.
        #[arg(long, default_value_t = 1.0)]
        minutes: f64,
        /// The first seed, or `random` (one drawn from the clock, printed so that a failure can
        /// be run again with `--seed`).
        #[arg(long, default_value = "42", value_parser = parse_soak_seed)]
        seed: u64,
        /// How many seeds to soak, one after another from `--seed` (1 to 1000): one seed that
        /// passes is a regression test, many are a soak.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
        seeds: u64,
        /// The largest count the random actions ask for, 1 to 10,000,000.
        #[arg(long, default_value = "2000000")]
        max_count: EntityCount,
        /// Instead of soaking, write a random script of `--actions` actions (with waits and a
        /// screenshot every 25 actions into `--shots`) for the app to run: the windowed soak.
        #[arg(long, value_name = "FILE")]
        write_script: Option<PathBuf>,
        #[arg(long, default_value_t = 300, requires = "write_script")]
        actions: usize,
        /// Where the written script's screenshots go.
        #[arg(long, default_value = "soak-shots", requires = "write_script")]
        shots: PathBuf,
    },
    /// Internal: build a population and step it, nothing else; what `bench --only counters` runs
    /// under cachegrind (`entity_layouts::counters`).
    #[command(hide = true)]
    CountFrames {
        #[arg(long)]
        layout: LayoutKind,
        #[arg(long)]
        count: BenchCount,
        /// Frames to step, warm-up included.
        #[arg(long)]
        frames: usize,
        /// The SIMD tier to run the kernels on (one this CPU, or valgrind's model of it, has).
        #[arg(long, default_value = "baseline")]
        simd: SimdTier,
        /// Step the seek system alone instead of move + regen.
        #[arg(long)]
        seek: bool,
    },
}

#[derive(Args)]
struct BenchArgs {
    /// A CI-sized run of every experiment: smaller counts, fewer samples.
    #[arg(long)]
    quick: bool,
    /// Only these experiments (comma-separated; `--list` names them).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// List the experiments, what each measures and how many cells it runs, and exit.
    #[arg(long)]
    list: bool,
    /// Write results.md, results.csv, results.json and SVG plots into this folder, and keep each
    /// cell there as it ends (run.json, cells.jsonl), so that an interrupted run can resume.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Finish a run that `--out DIR` started and that was interrupted (Ctrl-C, a crash, a failed
    /// cell): runs only the cells it lacks, with the options it was started with.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "only", "list", "out", "in_process", "counts", "replot"])]
    resume: Option<PathBuf>,
    /// Run every cell in this process instead of one child process per cell.
    #[arg(long)]
    in_process: bool,
    /// Entity counts for the layouts sweep, e.g. 1000,100000,1e6.
    #[arg(long, value_delimiter = ',')]
    counts: Option<Vec<BenchCount>>,
    /// Redraw the SVG plots of an earlier run from its results.json (written beside it).
    #[arg(long, value_name = "RESULTS_JSON")]
    replot: Option<PathBuf>,
    /// Internal: run one cell of one experiment and print its records as JSON.
    #[arg(long, hide = true)]
    worker: Option<String>,
    #[arg(long, hide = true, requires = "worker")]
    cell: Option<String>,
}

fn main() -> ExitCode {
    entity_layouts::memory::map_large_allocations();
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return run_app(cli.app);
    };
    match command {
        Command::Verify {
            count,
            frames,
            seed,
            dt,
            gpu: true,
            gpu_ulps,
        } => verify_gpu(count.0, frames.unwrap_or(600), seed, dt, gpu_ulps),
        Command::Verify {
            count,
            frames,
            seed,
            dt,
            gpu: false,
            ..
        } => verify(count.0, frames.unwrap_or(60), seed, dt),
        Command::Replay {
            script,
            layout,
            count,
            seed,
        } => replay(&script, layout, count.0, seed),
        Command::Soak {
            write_script: Some(path),
            seed,
            max_count,
            actions,
            shots,
            ..
        } => write_soak_script(&path, seed, max_count.0, actions, &shots),
        Command::Soak {
            minutes,
            seed,
            seeds,
            max_count,
            ..
        } => soak(minutes, seed, seeds, max_count.0),
        Command::CountFrames {
            layout,
            count,
            frames,
            simd,
            seek,
        } => count_frames(layout, count.0, frames, simd, seek),
        Command::Bench(args) => match run_bench(args) {
            Ok(code) => code,
            Err(e @ BenchError::Interrupted { .. }) => {
                eprintln!("{e}");
                ExitCode::from(130)
            }
            Err(e) => usage_error(&e.to_string()),
        },
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
    use entity_layouts::script;

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

fn run_bench(args: BenchArgs) -> Result<ExitCode, BenchError> {
    use bench::report::journal::{Interrupted, Journal, Plan};

    let mut cfg = BenchConfig::new(args.quick);
    cfg.in_process = args.in_process;
    cfg.counts = args
        .counts
        .map(|counts| counts.into_iter().map(|c| c.0).collect());
    if args.list {
        print!("{}", bench::list());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(json) = &args.replot {
        let files = bench::replot(json)?;
        eprintln!("wrote {}", files.join(", "));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(experiment) = &args.worker {
        let cell = args.cell.as_deref().unwrap_or("");
        println!("{}", bench::worker(&cfg, experiment, cell)?);
        return Ok(ExitCode::SUCCESS);
    }
    let (selected, command, out, keep) = match &args.resume {
        Some(dir) => {
            let resumed = Interrupted::read(dir)?;
            cfg = resumed.plan.config();
            let selected = bench::select(&resumed.plan.experiments)?;
            let keep = bench::Keep {
                journal: Some(Journal::append(dir)?),
                resumed: Some(resumed),
            };
            let command = keep.resumed.as_ref().unwrap().plan.command.clone();
            (selected, command, Some(dir.clone()), keep)
        }
        None => {
            let selected = bench::select(&args.only)?;
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            let mut keep = bench::Keep::default();
            if let Some(dir) = &args.out {
                bench::prepare_out_dir(dir)?;
                let plan = Plan {
                    command: command.clone(),
                    quick: cfg.quick,
                    in_process: cfg.in_process,
                    counts: cfg.counts.clone(),
                    experiments: selected.iter().map(|e| e.name().to_string()).collect(),
                };
                keep.journal = Some(Journal::create(dir, &plan)?);
            }
            (selected, command, args.out.clone(), keep)
        }
    };
    let stop = interrupt_flag();
    let report = bench::run(&cfg, &selected, command, keep, &stop)?;
    println!("{}", report.markdown);
    if let Some(dir) = &out {
        let files = bench::write_report(dir, &report)?;
        eprintln!("wrote {} into {}", files.join(", "), dir.display());
    }
    if report.failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let names: Vec<String> = report
        .failed
        .iter()
        .map(|f| format!("{} {}", f.experiment, f.cell))
        .collect();
    eprintln!(
        "error: {} cell(s) failed: {}; {}",
        names.len(),
        names.join(", "),
        match &out {
            Some(dir) => format!(
                "the others are written; run them again with: entity-layouts bench --resume {}",
                dir.display()
            ),
            None => "the others are in the report above".to_string(),
        }
    );
    Ok(ExitCode::FAILURE)
}

/// Set by Ctrl-C or SIGTERM: the bench ends the cell running and says how to resume. A second
/// Ctrl-C ends the program at once (an in-process cell cannot be stopped half way).
fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for (signal, code) in [(SIGINT, 130), (SIGTERM, 143)] {
        if let Err(e) = entity_layouts::signals::raise_flag_on(signal, code, &stop) {
            eprintln!(
                "warning: cannot handle signal {signal}: {e}; it will end the run without saying how to resume"
            );
        }
    }
    stop
}

/// `verify`'s settings, or exit code 2 naming a bad time step.
fn verify_config(
    count: usize,
    frames: usize,
    seed: u64,
    dt: f64,
) -> Result<VerifyConfig, ExitCode> {
    let dt = Dt::new(dt).map_err(|e| usage_error(&e.to_string()))?;
    Ok(VerifyConfig {
        count,
        frames,
        seed,
        dt,
        ..VerifyConfig::default()
    })
}

fn verify(count: usize, frames: usize, seed: u64, dt: f64) -> ExitCode {
    let config = match verify_config(count, frames, seed, dt) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let dt = config.dt;
    println!(
        "verify: {count} entities, {frames} frames, seed {seed}, dt {} s, {} threads in the pool",
        dt.seconds(),
        threads::core_count()
    );
    let groups = match run_suite::<f32>(&config).and_then(|mut groups| {
        groups.extend(run_suite::<f64>(&config)?);
        Ok(groups)
    }) {
        Ok(groups) => groups,
        Err(e) => return usage_error(&e.to_string()),
    };
    report(&groups)
}

#[cfg(not(feature = "gpu"))]
fn verify_gpu(_count: usize, _frames: usize, _seed: u64, _dt: f64, _bound: u32) -> ExitCode {
    usage_error("this build has no GPU support (built without the `gpu` feature)")
}

#[cfg(feature = "gpu")]
fn verify_gpu(count: usize, frames: usize, seed: u64, dt: f64, bound: u32) -> ExitCode {
    let config = match verify_config(count, frames, seed, dt) {
        Ok(config) => config,
        Err(code) => return code,
    };
    let ctx = match entity_layouts::gpu::context::shared() {
        Ok(ctx) => ctx,
        Err(reason) => return usage_error(&format!("verify --gpu needs a GPU adapter: {reason}")),
    };
    println!(
        "verify --gpu: {count} entities, {frames} frames, seed {seed}, dt {} s, against soa (f32)\nadapter: {}",
        config.dt.seconds(),
        ctx.describe()
    );
    let runs = match entity_layouts::verify::compare_gpu(&config) {
        Ok(runs) => runs,
        Err(e) => return usage_error(&e.to_string()),
    };
    let mut failed = false;
    for run in &runs {
        let verdict = if !run.same_entities {
            failed = true;
            "DIFFERENT ENTITIES (ids or order)".to_string()
        } else if run.max_ulps == 0 {
            "bit-identical to soa".to_string()
        } else {
            failed |= run.max_ulps > bound;
            format!(
                "{} of {} entities differ, by at most {} ulps",
                run.differing, run.entities, run.max_ulps
            )
        };
        println!("  {:<48} {} entities: {verdict}", run.name, run.entities);
    }
    let worst = runs.iter().map(|r| r.max_ulps).max().unwrap_or(0);
    if failed {
        eprintln!(
            "verify --gpu failed: largest difference {worst} ulps, over the bound of {bound} (--gpu-ulps), or entities differ"
        );
        ExitCode::FAILURE
    } else {
        println!("ok: largest difference {worst} ulps (bound {bound})");
        ExitCode::SUCCESS
    }
}

fn replay(path: &std::path::Path, layout: LayoutKind, count: usize, seed: u64) -> ExitCode {
    use entity_layouts::script;
    let actions = match std::fs::read_to_string(path) {
        Ok(text) => match script::parse(&text) {
            Ok(actions) => actions,
            Err(e) => return usage_error(&format!("{}: {e}", path.display())),
        },
        Err(e) => return usage_error(&format!("cannot read script '{}': {e}", path.display())),
    };
    let run = match script::replay(actions, layout, seed, count) {
        Ok(run) => run,
        Err(e) => return usage_error(&e.to_string()),
    };
    for (frame, action, e) in &run.refused {
        eprintln!("[frame {frame}] refused '{action}': {e}");
    }
    println!("{}", run.driver.final_line());
    ExitCode::SUCCESS
}

fn count_frames(
    layout: LayoutKind,
    n: usize,
    frames: usize,
    simd: SimdTier,
    seek_only: bool,
) -> ExitCode {
    use entity_layouts::counters::{FrameSpec, run_frames};
    let spec = FrameSpec {
        layout,
        n,
        warmup: 0,
        frames,
        simd,
        seek_only,
    };
    match run_frames(&spec, |frames| frames()) {
        Ok(((), checksum)) => {
            println!("{layout} {n} entities, {frames} frames: checksum {checksum:016x}");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e.to_string()),
    }
}

fn write_soak_script(
    path: &std::path::Path,
    seed: u64,
    max_count: usize,
    actions: usize,
    shots: &std::path::Path,
) -> ExitCode {
    use entity_layouts::{Action, script, soak};
    let mut script = Vec::new();
    for (i, chunk) in soak::random_actions(seed, actions, max_count)
        .chunks(50)
        .enumerate()
    {
        script.extend_from_slice(chunk);
        script.push(Action::Screenshot(shots.join(format!("soak-{i:03}.png"))));
    }
    script.push(Action::Exit);
    let text = format!(
        "# A random script: {actions} actions, counts up to {max_count}, seed {seed}\n# (entity-layouts soak --write-script).\n{}",
        script::to_text(&script)
    );
    match std::fs::write(path, text) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(&format!("cannot write '{}': {e}", path.display())),
    }
}

/// `--seed`: a number, or `random` for one drawn from the clock.
fn parse_soak_seed(text: &str) -> Result<u64, String> {
    if text == "random" {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // Spread over the whole range, and small enough to type back.
        return Ok(entity_layouts::workload::mix(nanos) % 1_000_000_000);
    }
    text.parse().map_err(|_| {
        format!(
            "'{text}' is not a seed; accepted: `random` or a whole number from 0 to {}",
            u64::MAX
        )
    })
}

fn soak(minutes: f64, first_seed: u64, seeds: u64, max_count: usize) -> ExitCode {
    use entity_layouts::soak::{self, SoakConfig};
    if !(minutes.is_finite() && minutes > 0.0 && minutes <= 24.0 * 60.0) {
        return usage_error(&format!(
            "--minutes {minutes} is not accepted; accepted: more than 0, at most 1440 (a day)"
        ));
    }
    // The soak switches between the CPU layouts, which take up to the app's 10M.
    let max = entity_layouts::driver::APP_MAX_ENTITIES;
    if max_count == 0 || max_count > max {
        return usage_error(&format!(
            "--max-count {max_count} is not accepted; accepted: 1 to {max}"
        ));
    }
    let each = minutes / seeds as f64;
    println!(
        "soak: {minutes} min, {seeds} seed(s) from {first_seed} ({each:.2} min each), counts up to {max_count}, checked against SoA every 8 frames"
    );
    let mut failed_seeds = Vec::new();
    for seed in (0..seeds).map(|k| first_seed.wrapping_add(k)) {
        let config = SoakConfig {
            duration: std::time::Duration::from_secs_f64(each * 60.0),
            seed,
            max_count,
            check_every: 8,
        };
        println!("\n== seed {seed}");
        let report = match soak::run(&config, |line| println!("{line}")) {
            Ok(report) => report,
            Err(e) => return usage_error(&e.to_string()),
        };
        print_soak_report(&report);
        if !report.passed() {
            eprintln!(
                "seed {seed} FAILED; run it again with: entity-layouts soak --seed {seed} --minutes {each} --max-count {max_count}"
            );
            failed_seeds.push(seed);
        }
    }
    println!(
        "\nsoak: {} of {seeds} seed(s) passed{}",
        seeds - failed_seeds.len() as u64,
        if failed_seeds.is_empty() {
            String::new()
        } else {
            format!("; failed: {failed_seeds:?}")
        }
    );
    if failed_seeds.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print_soak_report(report: &entity_layouts::soak::SoakReport) {
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    println!("\n| | |\n|---|---|");
    for (name, value) in [
        ("time", format!("{:.1} s", report.elapsed.as_secs_f64())),
        (
            "actions",
            format!("{} ({} refused by both)", report.actions, report.refused),
        ),
        ("frames", report.frames.to_string()),
        (
            "layout switches",
            format!(
                "{} asked, {} landed",
                report.switches, report.switches_landed
            ),
        ),
        ("checks against SoA", report.checks.to_string()),
        ("peak resident", format!("{:.0} MiB", mib(report.peak_rss))),
        (
            "final resident",
            format!("{:.0} MiB", mib(report.final_rss)),
        ),
        ("mismatches", report.mismatches.len().to_string()),
        ("memory failures", report.memory_failures.len().to_string()),
        (
            "samples back under the limit after one more trim",
            report.memory_rechecked.to_string(),
        ),
    ] {
        println!("| {name} | {value} |");
    }
    let mut small: Vec<_> = report.small_count_rss.iter().collect();
    small.sort();
    for (count, (first, worst)) in small {
        println!(
            "| resident at {count} entities | first {:.0} MiB, worst later {:.0} MiB |",
            mib(*first),
            mib(*worst)
        );
    }
    for line in report.mismatches.iter().chain(&report.memory_failures) {
        eprintln!("FAILED: {line}");
    }
}

fn report(groups: &[Group]) -> ExitCode {
    let mut failed = false;
    for group in groups {
        println!("\n{}", group.name);
        let width = group.runs.iter().map(|r| r.name.len()).max().unwrap_or(0);
        for run in &group.runs {
            println!("  {:<width$}  {:016x}", run.name, run.checksum);
        }
        let bad = group.mismatches();
        if bad.is_empty() {
            println!("  ok: all {} runs are bit-identical", group.runs.len());
        } else {
            failed = true;
            println!(
                "  MISMATCH: {} of {} runs differ from '{}': {}",
                bad.len(),
                group.runs.len(),
                group.runs[0].name,
                bad.iter()
                    .map(|r| r.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    if failed {
        eprintln!("verify failed: the layouts do not compute the same thing");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

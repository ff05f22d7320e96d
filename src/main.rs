//! The command line: `verify` proves the layouts equivalent, `bench` measures them.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use entity_layouts::bench::{self, BenchConfig, BenchError};
use entity_layouts::verify::{Group, VerifyConfig, run_suite};
use entity_layouts::{Dt, threads};

#[derive(Parser)]
#[command(name = "entity-layouts", version, about, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run every layout and variant (one thread and all, with layout switches, with churn) from
    /// one seed and check that all end in bit-identical states.
    Verify {
        /// Entities per run.
        #[arg(long, default_value_t = 10_000)]
        count: usize,
        /// Frames per run.
        #[arg(long, default_value_t = 60)]
        frames: usize,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Time step in seconds, in (0, 1].
        #[arg(long, default_value_t = 1.0 / 60.0, allow_negative_numbers = true)]
        dt: f64,
    },
    /// Run the studies' experiments headless and print their tables.
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// A CI-sized run of every experiment: smaller counts, fewer samples.
    #[arg(long)]
    quick: bool,
    /// Only these experiments (comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Write results.md, results.csv, results.json and SVG plots into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run every cell in this process instead of one child process per cell.
    #[arg(long)]
    in_process: bool,
    /// Entity counts for the layouts sweep, e.g. 1000,100000,1e6.
    #[arg(long)]
    counts: Option<String>,
    /// Internal: run one cell of one experiment and print its records as JSON.
    #[arg(long, hide = true)]
    worker: Option<String>,
    #[arg(long, hide = true, requires = "worker")]
    cell: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Verify {
            count,
            frames,
            seed,
            dt,
        } => verify(count, frames, seed, dt),
        Command::Bench(args) => match run_bench(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => usage_error(&e.to_string()),
        },
    }
}

fn run_bench(args: BenchArgs) -> Result<(), BenchError> {
    let mut cfg = BenchConfig::new(args.quick);
    cfg.in_process = args.in_process;
    if let Some(text) = &args.counts {
        cfg.counts = Some(bench::parse_counts(text)?);
    }
    if let Some(experiment) = &args.worker {
        let cell = args.cell.as_deref().unwrap_or("");
        println!("{}", bench::worker(&cfg, experiment, cell)?);
        return Ok(());
    }
    let selected = bench::select(&args.only)?;
    if let Some(dir) = &args.out {
        bench::prepare_out_dir(dir)?;
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let report = bench::run(&cfg, &selected, command)?;
    println!("{}", report.markdown);
    if let Some(dir) = &args.out {
        let files = bench::output::write_report(dir, &report)?;
        eprintln!("wrote {} into {}", files.join(", "), dir.display());
    }
    Ok(())
}

fn verify(count: usize, frames: usize, seed: u64, dt: f64) -> ExitCode {
    let dt = match Dt::new(dt) {
        Ok(dt) => dt,
        Err(e) => return usage_error(&e.to_string()),
    };
    let config = VerifyConfig {
        count,
        frames,
        seed,
        dt,
        ..VerifyConfig::default()
    };
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

fn report(groups: &[Group]) -> ExitCode {
    let mut failed = false;
    for group in groups {
        println!("\n{}", group.name);
        for run in &group.runs {
            println!("  {:<44} {:016x}", run.name, run.checksum);
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

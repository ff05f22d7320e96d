//! `verify`: every layout and variant, from one seed, through the same frames (one thread and
//! all, with layout switches, with churn), in f32 and f64; all must end bit-identical. With
//! `--gpu`, the gpu layout against SoA, within a number of units in the last place.

use std::process::ExitCode;

use clap::Args;

use super::{FAILED, usage_error};
use crate::runtime::values::BenchCount;
use crate::threads;
use crate::tools::verify::fused::Fusion;
use crate::tools::verify::{Group, VerifyConfig, run_suite};
use crate::workload::Dt;

#[derive(Args)]
pub struct VerifyArgs {
    /// Entities per run, 1 to 100,000,000.
    #[arg(long, default_value = "10000")]
    count: BenchCount,
    /// Frames per run (default 60; 600 with --gpu).
    #[arg(long)]
    frames: Option<usize>,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Time step in seconds, in (0, 1].
    #[arg(long, default_value = "0.016666666666666666", allow_negative_numbers = true, value_parser = parse_dt)]
    dt: Dt,
    /// Compare the gpu layout, read back after the frames, with the CPU's SoA instead (f32;
    /// needs a GPU adapter: exit code 2 and the reason without one).
    #[arg(long)]
    gpu: bool,
    /// With --gpu: the largest difference, in units in the last place, that still passes.
    /// 0 (bit-identical) is what lavapipe measures; a GPU that fuses `x + v*dt` into one FMA
    /// differs by a few.
    #[arg(long, default_value_t = 0)]
    gpu_ulps: u32,
    /// With --gpu: compare instead against a CPU reference that rounds `a + b * c` once (a fused
    /// multiply-add) at these sites: all, none, or any of move, regen, seek joined by commas.
    /// Bit-identical means fusing explains the whole difference.
    #[arg(long, requires = "gpu", value_parser = Fusion::parse)]
    fused: Option<Fusion>,
}

/// `--dt`: a time step in (0, 1] seconds.
fn parse_dt(text: &str) -> Result<Dt, String> {
    let seconds: f64 = text.parse().map_err(|_| {
        format!("'{text}' is not a number of seconds; accepted: more than 0, at most 1")
    })?;
    Dt::new(seconds).map_err(|e| e.to_string())
}

pub fn run(args: VerifyArgs) -> ExitCode {
    let config = VerifyConfig {
        count: args.count.0,
        frames: args.frames.unwrap_or(if args.gpu { 600 } else { 60 }),
        seed: args.seed,
        dt: args.dt,
        ..VerifyConfig::default()
    };
    if args.gpu {
        verify_gpu(&config, args.gpu_ulps, args.fused)
    } else {
        verify(&config)
    }
}

fn verify(config: &VerifyConfig) -> ExitCode {
    println!(
        "verify: {} entities, {} frames, seed {}, dt {} s, {} threads in the pool",
        config.count,
        config.frames,
        config.seed,
        config.dt.seconds(),
        threads::core_count()
    );
    let groups = match run_suite::<f32>(config).and_then(|mut groups| {
        groups.extend(run_suite::<f64>(config)?);
        Ok(groups)
    }) {
        Ok(groups) => groups,
        Err(e) => return usage_error(&e.to_string()),
    };
    report(&groups)
}

#[cfg(not(feature = "gpu"))]
fn verify_gpu(_config: &VerifyConfig, _bound: u32, _fused: Option<Fusion>) -> ExitCode {
    usage_error("this build has no GPU support (built without the `gpu` feature)")
}

#[cfg(feature = "gpu")]
fn verify_gpu(config: &VerifyConfig, bound: u32, fused: Option<Fusion>) -> ExitCode {
    let ctx = match crate::runtime::gpu::context::shared() {
        Ok(ctx) => ctx,
        Err(reason) => return usage_error(&format!("verify --gpu needs a GPU adapter: {reason}")),
    };
    let (against, reference) = match fused {
        Some(fusion) => (
            format!("the CPU fusing {} (f32)", fusion.describe()),
            "the reference",
        ),
        None => ("soa (f32)".into(), "soa"),
    };
    println!(
        "verify --gpu: {} entities, {} frames, seed {}, dt {} s, against {against}\nadapter: {}",
        config.count,
        config.frames,
        config.seed,
        config.dt.seconds(),
        ctx.describe()
    );
    let runs = match fused {
        Some(fusion) => crate::tools::verify::compare_gpu_fused(config, fusion),
        None => crate::tools::verify::compare_gpu(config),
    };
    let runs = match runs {
        Ok(runs) => runs,
        Err(e) => return usage_error(&e.to_string()),
    };
    let mut failed = false;
    for run in &runs {
        let verdict = if !run.same_entities {
            failed = true;
            "DIFFERENT ENTITIES (ids or order)".to_string()
        } else if run.max_ulps == 0 {
            format!("bit-identical to {reference}")
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
        ExitCode::from(FAILED)
    } else {
        println!("ok: largest difference {worst} ulps (bound {bound})");
        ExitCode::SUCCESS
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
        ExitCode::from(FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

//! `count-frames` (hidden): build a population and step it, nothing else; what `bench --only
//! counters` runs under cachegrind ([`crate::counters`]).

use std::process::ExitCode;

use clap::Args;

use super::usage_error;
use crate::counters::{FrameSpec, run_frames};
use crate::layout::LayoutKind;
use crate::simd::SimdTier;
use crate::values::{BenchCount, LayoutName};

#[derive(Args)]
pub struct CountFramesArgs {
    #[arg(long, value_parser = LayoutName)]
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
}

pub fn run(args: CountFramesArgs) -> ExitCode {
    let spec = FrameSpec {
        layout: args.layout,
        n: args.count.0,
        warmup: 0,
        frames: args.frames,
        simd: args.simd,
        seek_only: args.seek,
    };
    match run_frames(&spec, |frames| frames()) {
        Ok(((), checksum)) => {
            println!(
                "{} {} entities, {} frames: checksum {checksum:016x}",
                args.layout, args.count.0, args.frames
            );
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(&e.to_string()),
    }
}

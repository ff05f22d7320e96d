//! `count-frames` (hidden): build a population and step it, nothing else; what `bench --only
//! counters` runs under cachegrind ([`crate::tools::counters`]).

use std::process::ExitCode;

use clap::Args;

use super::{failure, usage_error};
use crate::layout::{LayoutKind, SeekKernel};
use crate::runtime::swarm::Order;
use crate::runtime::values::{BenchCount, LayoutName};
use crate::simd::SimdTier;
use crate::tools::counters::{FrameSpec, run_frames};

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
    /// The storage order, arranged before the first frame: id or group.
    #[arg(long, default_value = "id")]
    order: Order,
    /// The seek kernel: idiomatic or tuned.
    #[arg(long, default_value = "idiomatic")]
    seek_kernel: SeekKernel,
}

pub fn run(args: CountFramesArgs) -> ExitCode {
    let spec = FrameSpec {
        layout: args.layout,
        n: args.count.0,
        warmup: 0,
        frames: args.frames,
        simd: args.simd,
        seek_only: args.seek,
        order: args.order,
        seek_kernel: args.seek_kernel,
    };
    // The frames run on a thread of their own, so that glibc serves their allocations from an
    // arena of that thread's: an mmap'd heap aligned to 64 MiB, where the main thread's heap
    // starts wherever the binary and its arguments end. Two things follow under cachegrind.
    // The counts do not depend on the binary's path: on the main thread, chunks' seek counted
    // 0.750 simulated LL misses per entity from this checkout's target folder and 0.839 from
    // CI's (its 16 KiB blocks against the pinned LL's sets), and 0.820 from both on a thread.
    // And nothing grows valgrind's 8 MiB brk segment past its end: it overflowed for most
    // layouts at 100k, and glibc's fallback then left flecs' seek with a null column and a
    // SIGSEGV in `flecs_table_appendn`, from one folder and not from another.
    let counted = std::thread::Builder::new()
        .name("count-frames".into())
        .spawn(move || run_frames(&spec, |frames| frames()).map_err(|e| e.to_string()))
        .map(|thread| thread.join());
    match counted {
        Err(e) => failure(&format!("cannot start the counted thread: {e}")),
        Ok(Err(_)) => failure("the counted frames panicked"),
        Ok(Ok(Err(e))) => usage_error(&e),
        Ok(Ok(Ok(((), checksum)))) => {
            println!(
                "{} {} entities, {} frames: checksum {checksum:016x}",
                args.layout, args.count.0, args.frames
            );
            ExitCode::SUCCESS
        }
    }
}

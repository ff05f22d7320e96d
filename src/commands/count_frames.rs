//! `count-frames` (hidden): build a population and step it, nothing else; what `bench --only
//! counters` runs under cachegrind ([`crate::tools::counters`]).

use std::process::ExitCode;

use clap::Args;

use super::{failure, usage_error};
use crate::layout::{LayoutKind, SeekKernel};
use crate::runtime::swarm::Order;
use crate::runtime::values::{BenchCount, LayoutName};
use crate::simd::SimdTier;
use crate::tools::counters::{CountedSystem, FrameSpec, run_frames};

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
    /// The system to step: frame (move + regen), seek, avoid or avoid-tuned.
    #[arg(long, default_value = "frame")]
    system: CountedSystem,
    /// The storage order, arranged before the first frame: id, group or cell.
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
        system: args.system,
        order: args.order,
        seek_kernel: args.seek_kernel,
    };
    // Where the population's memory lands decides the simulated misses (a simulated cache picks a
    // line's set from its address), so only the layout's own code may decide it. Its blocks of a
    // page or more each get a fresh mapping and start at the same offset in their first page,
    // whatever was allocated before them (`memory::map_page_allocations`): the L1's sets follow
    // that offset, and the last level's see the blocks a whole number of pages apart rather than
    // wherever the allocations before them ended. The frames run on a thread of their own, whose
    // fresh arena serves the smaller blocks (boxes, an ECS library's records), with the layout
    // the first thing built in it: nothing the main thread allocates (arguments, start-up, what
    // code elsewhere adds) lands among them. That thread also keeps valgrind's 8 MiB brk segment
    // from overflowing: glibc's fallback then left flecs' seek with a null column and a SIGSEGV.
    crate::memory::map_page_allocations();
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

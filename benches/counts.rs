//! The instruction and cache counts of every layout's frame, under cachegrind with a pinned
//! geometry, compared with `benches/counts-baseline.json`: a regression check that the noise of
//! a shared VM cannot break (entity_layouts::tools::counters::baseline says why and how).
//!
//! `cargo bench --bench counts` checks (exit code 1 names each figure that moved, up or down);
//! `cargo bench --bench counts -- --bless` rewrites the baseline after an intended change;
//! `-- --tolerance PCT` checks within another tolerance (scripts/counts-regroup.sh uses 1%).
//!
//! The counts move with a layout's own code and with nothing else. Each layout is counted in a
//! process of its own (`count-frames`), where its blocks of a page or more each start a fresh
//! mapping at a fixed page offset and its smaller ones a fresh arena (`count-frames` says why),
//! so no code elsewhere decides where its data lands; the counted kernels are the core crate's
//! (`core/`), compiled in one codegen unit, so no code elsewhere decides how they compile.
//! Simulated branch misses are printed and reported, never checked: cachegrind's predictor is
//! indexed by code addresses, which any code moves (`baseline::REPORTED`).
//! scripts/counts-regroup.sh proves both ways: unrelated code and allocations move no count past
//! 1%, a slower move loop in one layout fails the check and names that layout.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;

use entity_layouts::layout::{LayoutKind, SeekKernel};
use entity_layouts::runtime::swarm::Order;
use entity_layouts::tools::counters::baseline::{Baseline, CHECK_COUNT, CHECK_GEOMETRY};
use entity_layouts::tools::counters::{FrameSpec, cachegrind};

const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/counts-baseline.json");
const TOLERANCE_PCT: f64 = 2.0;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let bless = args.iter().any(|a| a == "--bless");
    let tolerance = match args.iter().position(|a| a == "--tolerance") {
        None => TOLERANCE_PCT,
        Some(i) => match args.get(i + 1).and_then(|t| t.parse::<f64>().ok()) {
            Some(t) if (0.0..=100.0).contains(&t) => t,
            _ => {
                eprintln!("counts: --tolerance takes a percentage from 0 to 100");
                return ExitCode::from(2);
            }
        },
    };
    let exe = Path::new(env!("CARGO_BIN_EXE_entity-layouts"));
    match cachegrind::valgrind_version() {
        Ok(v) => {
            println!("counts: {v}, {CHECK_COUNT} entities, f32, one thread, per entity per frame")
        }
        Err(reason) => {
            eprintln!("counts: cannot count: {reason}");
            return ExitCode::FAILURE;
        }
    }
    let measured = Mutex::new(Vec::new());
    let failed = Mutex::new(Vec::new());
    // Two layouts at a time: cachegrind is single-threaded and these machines have two cores.
    // Every layout's move + regen, then its seek alone.
    let specs: Vec<FrameSpec> = LayoutKind::CPU
        .iter()
        .map(|&kind| FrameSpec::for_count(kind, CHECK_COUNT))
        .chain(
            LayoutKind::CPU
                .iter()
                .map(|&kind| FrameSpec::seek(kind, CHECK_COUNT)),
        )
        // soa's seek in the other order and with the other kernel: what sorting and the tuned
        // kernel save, in instructions and misses.
        .chain(
            [
                (Order::Group, SeekKernel::Idiomatic),
                (Order::Id, SeekKernel::Tuned),
                (Order::Group, SeekKernel::Tuned),
            ]
            .map(|(order, kernel)| {
                FrameSpec::seek_with(LayoutKind::Soa, CHECK_COUNT, order, kernel)
            }),
        )
        .collect();
    let next = Mutex::new(specs.iter());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(spec) = {
                    let mut it = next.lock().unwrap();
                    it.next()
                } {
                    match cachegrind::count(exe, spec, &CHECK_GEOMETRY) {
                        Ok(sim) => measured.lock().unwrap().push((spec, sim)),
                        Err(e) => failed.lock().unwrap().push(format!("{}: {e}", spec.row())),
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    if !failed.is_empty() {
        for line in &failed {
            eprintln!("counts: FAILED to count {line}");
        }
        return ExitCode::FAILURE;
    }
    let mut measured = measured.into_inner().unwrap();
    measured.sort_by_key(|(spec, _)| specs.iter().position(|s| s == *spec));
    let geometry = measured[0].1.geometry.clone();
    let mut now = Baseline::new(geometry.clone(), CHECK_COUNT, TOLERANCE_PCT);
    println!("geometry: {geometry}");
    println!(
        "{:<21} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "layout", "instructions", "L1d access", "L1d miss", "LL miss", "branch miss"
    );
    for (spec, sim) in &measured {
        let r = &sim.per_entity;
        println!(
            "{:<21} {:>12.3} {:>12.3} {:>12.4} {:>12.4} {:>12.4}",
            spec.row(),
            r.instructions,
            r.l1d_accesses,
            r.l1d_misses,
            r.ll_misses,
            r.branch_misses
        );
        now.insert(&spec.row(), r);
    }
    if bless {
        let text = serde_json::to_string_pretty(&now).expect("baseline serializes") + "\n";
        return match std::fs::write(BASELINE, text) {
            Ok(()) => {
                println!("counts: wrote {BASELINE}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("counts: cannot write {BASELINE}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let base: Baseline = match std::fs::read_to_string(BASELINE)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(base) => base,
        Err(e) => {
            eprintln!(
                "counts: cannot read the baseline {BASELINE}: {e} (write one with -- --bless)"
            );
            return ExitCode::FAILURE;
        }
    };
    for line in base.reported_moves_within(&now, tolerance) {
        println!("counts: reported, not checked: {line}");
    }
    let moves = base.moves_within(&now, tolerance);
    if moves.is_empty() {
        println!(
            "counts: ok, every layout within {tolerance}% of the baseline ({} layouts)",
            measured.len()
        );
        ExitCode::SUCCESS
    } else {
        for line in &moves {
            eprintln!("counts: MOVED {line}");
        }
        eprintln!(
            "counts: a figure that rose is a regression; one that fell for no change to its layout's code is the compiler. If the change was meant, `cargo bench --bench counts -- --bless` and say why in the commit."
        );
        ExitCode::FAILURE
    }
}

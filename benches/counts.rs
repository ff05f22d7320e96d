//! The instruction and cache counts of every layout's frame, under cachegrind with a pinned
//! geometry, compared with `benches/counts-baseline.json`: a regression check that the noise of
//! a shared VM cannot break (entity_layouts::counters::baseline says why and how).
//!
//! `cargo bench --bench counts` checks (exit code 1 names each regression);
//! `cargo bench --bench counts -- --bless` rewrites the baseline after an intended change.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;

use entity_layouts::LayoutKind;
use entity_layouts::counters::baseline::{Baseline, CHECK_COUNT, CHECK_GEOMETRY};
use entity_layouts::counters::{FrameSpec, cachegrind};

const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/counts-baseline.json");
const TOLERANCE_PCT: f64 = 2.0;

fn main() -> ExitCode {
    let bless = std::env::args().any(|a| a == "--bless");
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
    let next = Mutex::new(LayoutKind::CPU.iter());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(&kind) = {
                    let mut it = next.lock().unwrap();
                    it.next()
                } {
                    let spec = FrameSpec::for_count(kind, CHECK_COUNT);
                    match cachegrind::count(exe, &spec, &CHECK_GEOMETRY) {
                        Ok(sim) => measured.lock().unwrap().push((kind, sim)),
                        Err(e) => failed.lock().unwrap().push(format!("{kind}: {e}")),
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
    measured.sort_by_key(|(kind, _)| LayoutKind::CPU.iter().position(|k| k == kind));
    let geometry = measured[0].1.geometry.clone();
    let mut now = Baseline::new(geometry.clone(), CHECK_COUNT, TOLERANCE_PCT);
    println!("geometry: {geometry}");
    println!(
        "{:<16} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "layout", "instructions", "L1d access", "L1d miss", "LL miss", "branch miss"
    );
    for (kind, sim) in &measured {
        let r = &sim.per_entity;
        println!(
            "{:<16} {:>12.3} {:>12.3} {:>12.4} {:>12.4} {:>12.4}",
            kind.name(),
            r.instructions,
            r.l1d_accesses,
            r.l1d_misses,
            r.ll_misses,
            r.branch_misses
        );
        now.insert(&kind.name(), r);
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
    let regressions = base.regressions(&now);
    if regressions.is_empty() {
        println!(
            "counts: ok, every layout within {TOLERANCE_PCT}% of the baseline ({} layouts)",
            measured.len()
        );
        ExitCode::SUCCESS
    } else {
        for line in &regressions {
            eprintln!("counts: REGRESSION {line}");
        }
        ExitCode::FAILURE
    }
}

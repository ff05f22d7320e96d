//! The counters end to end: cachegrind's two-run subtraction isolates the frames (the per-entity
//! counts do not depend on how many frames were counted), repeats agree, the layouts differ the
//! way their storage says they must, and the PMU either counts or says why it cannot.
//!
//! Without valgrind the cachegrind tests are skipped with the reason; under CI=true (where
//! `.ci/run` installs it) a skip is a failure.

mod support;

use std::path::Path;

use entity_layouts::layout::LayoutKind;
use entity_layouts::simd::SimdTier;
use entity_layouts::tools::counters::baseline::{CHECK_COUNT, CHECK_GEOMETRY};
use entity_layouts::tools::counters::{FrameSpec, PerEntity, cachegrind, pmu};

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_entity-layouts"))
}

fn have_valgrind() -> bool {
    match cachegrind::valgrind_version() {
        Ok(_) => true,
        Err(reason) => {
            support::skip_or_fail(&reason);
            false
        }
    }
}

fn simulated(layout: LayoutKind, n: usize, frames: usize) -> PerEntity {
    simulated_on(layout, n, frames, SimdTier::Baseline)
}

fn simulated_on(layout: LayoutKind, n: usize, frames: usize, simd: SimdTier) -> PerEntity {
    let spec = FrameSpec {
        warmup: 2,
        frames,
        simd,
        ..FrameSpec::for_count(layout, n)
    };
    cachegrind::count(exe(), &spec, &cachegrind::PINNED)
        .unwrap()
        .per_entity
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * a.abs().max(b.abs())
}

#[test]
fn the_subtraction_counts_frames_and_nothing_else() {
    if !have_valgrind() {
        return;
    }
    // Twice the counted frames, the same counts per entity per frame: spawning, start-up and
    // exit cancelled out.
    let two = simulated(LayoutKind::Aos, 20_000, 2);
    let four = simulated(LayoutKind::Aos, 20_000, 4);
    assert!(
        close(two.instructions, four.instructions, 0.01),
        "{two:?} vs {four:?}"
    );
    assert!(close(two.l1d_accesses, four.l1d_accesses, 0.01));
    // AoS streams its 32-byte records once for move and once for regen: one line per entity.
    assert!(close(four.l1d_misses, 1.0, 0.05), "{four:?}");
    let again = simulated(LayoutKind::Aos, 20_000, 4);
    assert!(close(again.instructions, four.instructions, 0.001));
}

#[test]
fn the_layouts_differ_as_their_storage_says() {
    if !have_valgrind() {
        return;
    }
    let soa = simulated(LayoutKind::Soa, 20_000, 2);
    let dyn1 = simulated(LayoutKind::Dyn(1), 20_000, 2);
    let dyn12 = simulated(LayoutKind::Dyn(12), 20_000, 2);
    // A virtual call per entity is more work than a vectorised stream, whatever the kinds.
    assert!(
        dyn1.instructions > 2.0 * soa.instructions,
        "{soa:?} {dyn1:?}"
    );
    // SoA brings in only the 24 B a frame reads (x, y, vx, vy, energy, regen): 0.375 lines.
    assert!(close(soa.l1d_misses, 0.375, 0.05), "{soa:?}");
    // One kind behind the call site is predicted; twelve hashed kinds are not.
    assert!(
        dyn1.branch_misses < 0.05 && dyn12.branch_misses > 1.0,
        "{dyn1:?} {dyn12:?}"
    );
    assert_eq!(soa.cycles, None, "cachegrind has no clock");
}

#[test]
fn the_pmu_counts_or_says_why_not() {
    let spec = FrameSpec::for_count(LayoutKind::Soa, 10_000);
    match pmu::count(&spec) {
        Ok(real) => {
            let r = real.per_entity;
            assert!(
                r.instructions > 1.0 && r.cycles.is_some_and(|c| c > 0.0),
                "{r:?}"
            );
            assert!(real.running_pct > 0.0 && real.running_pct <= 100.0);
        }
        Err(reason) => assert!(reason.contains("perf_event_open"), "{reason}"),
    }
}

#[test]
fn a_failed_run_is_an_error_that_says_which() {
    if !have_valgrind() {
        return;
    }
    // A count the binary refuses: the child exits 2, and the error names the run.
    let spec = FrameSpec {
        warmup: 0,
        frames: 1,
        ..FrameSpec::for_count(LayoutKind::Soa, 200_000_000)
    };
    let err = cachegrind::count(exe(), &spec, &cachegrind::PINNED).unwrap_err();
    assert!(err.contains("soa at 200000000 entities failed"), "{err}");
}

#[test]
fn the_avx2_tier_executes_far_fewer_instructions_for_the_same_bits() {
    if !have_valgrind() {
        return;
    }
    if !SimdTier::Avx2.is_available() {
        println!("skipped: this CPU has no AVX2");
        return;
    }
    // Valgrind runs AVX2 code; the count is what the wider vectors save, whatever the clock.
    let base = simulated_on(LayoutKind::Soa, 10_000, 4, SimdTier::Baseline);
    let wide = simulated_on(LayoutKind::Soa, 10_000, 4, SimdTier::Avx2);
    assert!(
        wide.instructions * 2.0 < base.instructions,
        "avx2 {} vs baseline {} instructions per entity",
        wide.instructions,
        base.instructions
    );
    // The same bytes move: width changes instructions, not the lines touched.
    assert!((wide.l1d_misses - base.l1d_misses).abs() < 0.01);
}

#[test]
fn the_counts_do_not_depend_on_where_the_binary_lies() {
    if !have_valgrind() {
        return;
    }
    // CI counts the binary in its own target folder. While the counted frames ran on the main
    // thread, the path's length moved chunks' seek from 0.750 to 0.839 simulated LL misses per
    // entity (its heap blocks against the LL's sets), and the counts check failed on a machine
    // where nothing had changed (`count-frames` says why a thread of its own fixes it).
    let dir = std::env::temp_dir().join(format!("entity-layouts-where-{}", std::process::id()));
    let far = dir.join("a-folder-whose-name-is-much-longer-than-the-target-folder-of-a-checkout");
    std::fs::create_dir_all(&far).unwrap();
    let copy = far.join("entity-layouts");
    if std::fs::hard_link(exe(), &copy).is_err() {
        std::fs::copy(exe(), &copy).unwrap();
    }
    let spec = FrameSpec::seek(LayoutKind::Chunks, CHECK_COUNT);
    let here = cachegrind::count(exe(), &spec, &CHECK_GEOMETRY)
        .unwrap()
        .per_entity;
    let there = cachegrind::count(&copy, &spec, &CHECK_GEOMETRY)
        .unwrap()
        .per_entity;
    for (what, a, b) in [
        ("instructions", here.instructions, there.instructions),
        ("L1d misses", here.l1d_misses, there.l1d_misses),
        ("LL misses", here.ll_misses, there.ll_misses),
    ] {
        assert!(
            close(a, b, 0.001),
            "{what}: {a} here, {b} from {}",
            copy.display()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

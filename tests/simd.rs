//! SIMD tiers: each tier this CPU has computes the baseline's bits exactly, on every layout
//! compiled per tier, in f32 and f64, with churn and on all threads; changing tier mid-run keeps
//! every entity; a tier this CPU lacks is skipped here with the reason, and refused by name.

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::catalog::AllLayouts;
use entity_layouts::runtime::driver::Driver;
use entity_layouts::simd::{SimdChoice, SimdTier, available};
use entity_layouts::threads::Threads;

/// A run of `frames` frames on `tier`, with churn; the final checksum.
fn run<S: AllLayouts>(kind: LayoutKind, tier: SimdTier, threads: Threads, frames: usize) -> u64 {
    let mut driver = Driver::<S>::new(kind, 11)
        .unwrap()
        .with_chunks(usize::MAX, usize::MAX)
        .with_simd_tier(tier);
    for action in [
        Action::Count(4_099),
        Action::Churn(300),
        Action::Threads(threads),
    ] {
        driver.apply(&action).unwrap();
    }
    for _ in 0..frames {
        assert!(driver.frame_step().error.is_none());
    }
    driver.swarm().checksum()
}

fn simd_layouts() -> impl Iterator<Item = LayoutKind> {
    LayoutKind::CPU.into_iter().filter(|k| k.has_simd_kernels())
}

/// The check for one tier, or the printed reason it is skipped on this CPU.
fn tier_matches_the_baseline(tier: SimdTier) {
    if !tier.is_available() {
        println!(
            "skipped: this CPU has no {} tier (it has: {})",
            tier.label(),
            entity_layouts::simd::available_names()
        );
        return;
    }
    for kind in simd_layouts() {
        for threads in Threads::BOTH {
            assert_eq!(
                run::<f32>(kind, tier, threads, 25),
                run::<f32>(kind, SimdTier::Baseline, threads, 25),
                "{kind} f32 {tier} threads={threads}"
            );
            assert_eq!(
                run::<f64>(kind, tier, threads, 25),
                run::<f64>(kind, SimdTier::Baseline, threads, 25),
                "{kind} f64 {tier} threads={threads}"
            );
        }
    }
}

#[test]
fn avx2_is_bit_identical_to_the_baseline() {
    tier_matches_the_baseline(SimdTier::Avx2);
}

#[test]
fn avx512_is_bit_identical_to_the_baseline() {
    tier_matches_the_baseline(SimdTier::Avx512);
}

#[test]
fn a_tier_change_mid_run_keeps_every_entity() {
    for kind in simd_layouts() {
        let mut driver = Driver::<f32>::new(kind, 5)
            .unwrap()
            .with_chunks(usize::MAX, usize::MAX);
        driver.apply(&Action::Count(2_000)).unwrap();
        driver.apply(&Action::Churn(100)).unwrap();
        for _ in 0..10 {
            driver.frame_step();
        }
        let before = driver.swarm().export();
        driver.apply(&Action::Simd(SimdChoice::Best)).unwrap();
        assert_eq!(
            driver.swarm().export(),
            before,
            "{kind}: the change itself moves nothing"
        );
        assert_eq!(driver.simd(), SimdChoice::Best);
        assert_eq!(driver.swarm().simd_in_use(), SimdTier::best(), "{kind}");
        for _ in 0..10 {
            driver.frame_step();
        }
        driver.apply(&Action::Simd(SimdChoice::Baseline)).unwrap();
        assert_eq!(driver.swarm().simd_in_use(), SimdTier::Baseline);
        for _ in 0..5 {
            driver.frame_step();
        }
        // The same 25 frames on the baseline alone.
        let mut reference = Driver::<f32>::new(kind, 5)
            .unwrap()
            .with_chunks(usize::MAX, usize::MAX);
        reference.apply(&Action::Count(2_000)).unwrap();
        reference.apply(&Action::Churn(100)).unwrap();
        for _ in 0..25 {
            reference.frame_step();
        }
        assert_eq!(
            driver.swarm().checksum(),
            reference.swarm().checksum(),
            "{kind}"
        );
    }
}

#[test]
fn the_tier_follows_the_population_into_a_new_layout() {
    let mut driver = Driver::<f32>::new(LayoutKind::Boxed, 3)
        .unwrap()
        .with_chunks(usize::MAX, usize::MAX);
    driver.apply(&Action::Count(1_000)).unwrap();
    driver.apply(&Action::Simd(SimdChoice::Best)).unwrap();
    driver.frame_step();
    // Boxed has no per-tier kernels: it says baseline whatever was asked.
    assert_eq!(driver.swarm().simd_in_use(), SimdTier::Baseline);
    driver.apply(&Action::Layout(LayoutKind::Chunks)).unwrap();
    driver.frame_step();
    assert_eq!(driver.swarm().kind(), LayoutKind::Chunks);
    assert_eq!(driver.swarm().simd_in_use(), SimdTier::best());
}

#[test]
fn scripts_take_simd_baseline_or_best_and_name_them_on_error() {
    let actions = entity_layouts::tools::script::parse("simd best\nsimd baseline\n").unwrap();
    assert_eq!(
        actions,
        [
            Action::Simd(SimdChoice::Best),
            Action::Simd(SimdChoice::Baseline)
        ]
    );
    assert_eq!(Action::Simd(SimdChoice::Best).to_string(), "simd best");
    let err = entity_layouts::tools::script::parse("simd fast")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("'fast'") && err.contains("baseline or best"),
        "{err}"
    );
    assert!(available()[0] == SimdTier::Baseline);
}

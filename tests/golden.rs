//! Golden checksums: `verify`'s end states for fixed configurations, pinned. They must come out
//! the same on every machine (the development machines alternate between AMD EPYC and Intel
//! Xeon), on one thread and on all, and every layout must reach them.
//!
//! Why the bits cannot drift: Rust never contracts `a * b + c` into a fused multiply-add unless
//! the code asks for `mul_add` (it does not), so vectorized and scalar loops, SSE2 and AVX
//! builds, round the same; the per-entity math uses only `+`, `*`, comparisons and selects, each
//! correctly rounded by IEEE 754; spawning uses `sqrt` (correctly rounded) and no `sin`/`cos`,
//! whose last bit differs between math libraries and CPUs; and the checksum is an integer sum
//! over entities, so the order threads finish in does not matter. A change of the workload, the
//! spawn pattern or the generator changes these values on purpose: update them in the same
//! commit, and say why.

use entity_layouts::Dt;
use entity_layouts::verify::{VerifyConfig, run_suite};

/// (seed, group, checksum) for 10,000 entities and 60 frames at dt = 1/60 s.
const GOLDEN: [(u64, &str, u64); 8] = [
    (1, "f32 no churn", 0xde40_4a97_3cd5_e849),
    (1, "f32 churn", 0x8f3f_fcbf_b1a3_245e),
    (1, "f64 no churn", 0xf20f_4646_8490_08f3),
    (1, "f64 churn", 0x6aeb_fb68_f621_5b18),
    (42, "f32 no churn", 0xe23b_8f93_b841_456f),
    (42, "f32 churn", 0x403e_26d0_eaa3_2c2b),
    (42, "f64 no churn", 0xb878_b73b_4398_406c),
    (42, "f64 churn", 0x197f_7fdd_1e4c_1abf),
];

#[test]
fn verify_ends_in_the_pinned_states() {
    for seed in [1, 42] {
        let config = VerifyConfig {
            count: 10_000,
            frames: 60,
            seed,
            dt: Dt::default(),
            ..VerifyConfig::default()
        };
        let mut groups = run_suite::<f32>(&config).unwrap();
        groups.extend(run_suite::<f64>(&config).unwrap());
        for group in groups {
            assert!(
                group.mismatches().is_empty(),
                "{}: {:?}",
                group.name,
                group.mismatches()
            );
            let expected = GOLDEN
                .iter()
                .find(|(s, name, _)| *s == seed && group.name.starts_with(name))
                .unwrap_or_else(|| panic!("no golden value for seed {seed} {}", group.name))
                .2;
            for run in &group.runs {
                assert_eq!(
                    run.checksum, expected,
                    "seed {seed}, {}, {}: {:016x} is not the pinned {expected:016x}",
                    group.name, run.name, run.checksum
                );
            }
        }
    }
}

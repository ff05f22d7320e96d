//! SIMD width, chosen at run time. The crate is built for baseline x86-64 (SSE2, 128-bit
//! vectors), as a distributed binary must be; the hot kernels of the contiguous layouts are also
//! compiled for AVX2 (256-bit) and AVX-512 (512-bit) in the same binary, and the tier that runs is
//! a setting, like [`crate::threads::Threads`]: the bench measures every tier the CPU has, the app
//! flips between baseline and the best one live.
//!
//! Every tier computes the same bits: the kernels are the same Rust source (`move_one`,
//! `regen_one`), compiled again with wider vectors, and no tier enables FMA, so no multiply-add is
//! fused into one rounding that the baseline does in two. `verify` and `tests/simd.rs` check it.
//!
//! How a kernel gets compiled per tier: it is a [`Kernel`] whose `run` is `#[inline(always)]`;
//! [`run`] calls it inside a function that carries `#[target_feature]`, so LLVM inlines the loop
//! there and vectorizes it for that function's features (the way `pulp` and `multiversion` do it,
//! in a dozen lines that let a person pick the tier, which those crates' automatic dispatch
//! does not).

use std::fmt;
use std::sync::OnceLock;

/// An instruction set the kernels are compiled for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SimdTier {
    /// What the build targets: SSE2 on x86-64 (128-bit), NEON on aarch64.
    #[default]
    Baseline,
    /// 256-bit AVX2 (x86-64).
    Avx2,
    /// 512-bit AVX-512 F + VL + BW + DQ (x86-64).
    Avx512,
}

impl SimdTier {
    /// Every tier the binary has kernels for, narrowest first.
    pub const ALL: [SimdTier; 3] = [SimdTier::Baseline, SimdTier::Avx2, SimdTier::Avx512];

    /// The name in scripts, CSV and the panel.
    pub fn name(self) -> &'static str {
        match self {
            SimdTier::Baseline => "baseline",
            SimdTier::Avx2 => "avx2",
            SimdTier::Avx512 => "avx512",
        }
    }

    /// What a reader sees: the name and the instruction set it stands for.
    pub fn label(self) -> &'static str {
        match self {
            SimdTier::Baseline if cfg!(target_arch = "aarch64") => "baseline (NEON, 128-bit)",
            SimdTier::Baseline if cfg!(target_arch = "x86_64") => "baseline (SSE2, 128-bit)",
            SimdTier::Baseline => "baseline",
            SimdTier::Avx2 => "AVX2 (256-bit)",
            SimdTier::Avx512 => "AVX-512 (512-bit)",
        }
    }

    /// Vector width in bits.
    pub fn bits(self) -> u32 {
        match self {
            SimdTier::Baseline => 128,
            SimdTier::Avx2 => 256,
            SimdTier::Avx512 => 512,
        }
    }

    /// Whether this CPU can run the tier (checked once, then cached).
    pub fn is_available(self) -> bool {
        available().contains(&self)
    }

    /// The widest tier this CPU has.
    pub fn best() -> SimdTier {
        *available().last().expect("baseline is always available")
    }
}

impl fmt::Display for SimdTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The SIMD features this binary was compiled for (not what the CPU could do).
pub fn target_features() -> String {
    let mut on = vec![std::env::consts::ARCH];
    macro_rules! feature {
        ($($f:literal),*) => { $( if cfg!(target_feature = $f) { on.push($f); } )* };
    }
    feature!("sse2", "sse4.2", "avx", "avx2", "fma", "avx512f", "neon");
    on.join("+")
}

/// The tiers this CPU has, narrowest first; always starts with [`SimdTier::Baseline`].
pub fn available() -> &'static [SimdTier] {
    static TIERS: OnceLock<Vec<SimdTier>> = OnceLock::new();
    TIERS.get_or_init(|| {
        SimdTier::ALL
            .into_iter()
            .filter(|&tier| detect(tier))
            .collect()
    })
}

/// The available tiers as the machine line prints them: `baseline, avx2, avx512`.
pub fn available_names() -> String {
    available()
        .iter()
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(target_arch = "x86_64")]
fn detect(tier: SimdTier) -> bool {
    match tier {
        SimdTier::Baseline => true,
        SimdTier::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
        SimdTier::Avx512 => {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect(tier: SimdTier) -> bool {
    tier == SimdTier::Baseline
}

/// What a person asks for: the build's baseline, or the widest tier this CPU has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SimdChoice {
    #[default]
    Baseline,
    Best,
}

impl SimdChoice {
    pub const BOTH: [SimdChoice; 2] = [SimdChoice::Baseline, SimdChoice::Best];

    pub fn name(self) -> &'static str {
        match self {
            SimdChoice::Baseline => "baseline",
            SimdChoice::Best => "best",
        }
    }

    /// The tier this choice runs on this CPU.
    pub fn tier(self) -> SimdTier {
        match self {
            SimdChoice::Baseline => SimdTier::Baseline,
            SimdChoice::Best => SimdTier::best(),
        }
    }
}

impl fmt::Display for SimdChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A loop to compile once per tier. `run` must be `#[inline(always)]`, so that it is compiled
/// inside each tier's function rather than once for the baseline and called from there.
pub trait Kernel {
    fn run(self);
}

/// Runs `kernel` compiled for `tier`.
///
/// Panics if the CPU lacks the tier: a `SimdTier` other than the baseline comes from
/// [`SimdTier::best`], [`available`] or a parse that checked it, so this is a programming error,
/// and running the instructions anyway would be undefined behaviour.
#[inline(always)]
pub fn run<K: Kernel>(tier: SimdTier, kernel: K) {
    match tier {
        SimdTier::Baseline => run_baseline(kernel),
        #[cfg(target_arch = "x86_64")]
        SimdTier::Avx2 => {
            assert!(tier.is_available(), "this CPU has no AVX2");
            // SAFETY: the CPU has AVX2 (checked just above), the one requirement of calling a
            // `#[target_feature(enable = "avx2")]` function. The unsafe is what buys the
            // measured speed-up of this tier (docs/RESULTS.md, "SIMD width").
            #[allow(unsafe_code)]
            unsafe {
                run_avx2(kernel)
            }
        }
        #[cfg(target_arch = "x86_64")]
        SimdTier::Avx512 => {
            assert!(tier.is_available(), "this CPU has no AVX-512 F/VL/BW/DQ");
            // SAFETY: as above, for the four AVX-512 features `run_avx512` enables.
            #[allow(unsafe_code)]
            unsafe {
                run_avx512(kernel)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        other => panic!("the {} tier exists on x86-64 only", other.name()),
    }
}

// Each tier's loop in a function of its own, the baseline's too: inlined into its caller, the
// baseline copy of the tuned ECS loop can lose its vectorization in the main binary, a codegen
// accident that a separate function rules out (docs/results/threads-simd.md, "How").
#[inline(never)]
fn run_baseline<K: Kernel>(kernel: K) {
    kernel.run();
}

// No "fma" in either list: a fused multiply-add rounds once where the baseline rounds twice.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<K: Kernel>(kernel: K) {
    kernel.run();
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
fn run_avx512<K: Kernel>(kernel: K) {
    kernel.run();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_is_always_there_and_first() {
        assert_eq!(available()[0], SimdTier::Baseline);
        assert!(available().windows(2).all(|w| w[0] < w[1]));
        assert_eq!(SimdChoice::Baseline.tier(), SimdTier::Baseline);
        assert_eq!(SimdChoice::Best.tier(), *available().last().unwrap());
    }
}

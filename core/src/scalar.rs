//! The number type every field is stored in. `f32` is what Bevy code uses and what the app runs;
//! `f64` lines the bench up with the JavaScript study, whose typed arrays held doubles. One trait,
//! so the workload and every layout are written once for both.

use std::fmt::Debug;

use rand::distr::uniform::SampleUniform;
use std::ops::{Add, Mul, Sub};

pub trait Scalar:
    Copy
    + Debug
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Send
    + Sync
    + SampleUniform
    // Plain bytes: the chunked layout keeps its columns in one untyped 16 KiB block.
    + bytemuck::Pod
    + 'static
{
    /// Short name used in reports (`f32`, `f64`).
    const NAME: &'static str;
    const ZERO: Self;

    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    fn to_f32(self) -> f32;
    /// Truncated toward zero, saturating at `i32`'s ends (Rust's `as`).
    fn trunc_i32(self) -> i32;
    /// The exact bit pattern, widened: what the checksum hashes, so "equal" means bit-identical.
    fn to_bits_u64(self) -> u64;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    const ZERO: Self = 0.0;

    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn trunc_i32(self) -> i32 {
        self as i32
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Scalar for f64 {
    const NAME: &'static str = "f64";
    const ZERO: Self = 0.0;

    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline]
    fn trunc_i32(self) -> i32 {
        self as i32
    }
    #[inline]
    fn to_bits_u64(self) -> u64 {
        self.to_bits()
    }
}

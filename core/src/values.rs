//! The core's values as a person types them (a layout, a thread setting, a SIMD tier, a spawn
//! pattern, a seek kernel), each parsed in one place, with one error text that names what was written and what
//! is accepted. `entity-layouts`' `values` adds the rest (counts, churn, sizes, ...) on top.

use std::str::FromStr;

use thiserror::Error;

use crate::layout::{LayoutKind, SeekKernel};
use crate::neighbours::AvoidForm;
use crate::simd::{SimdChoice, SimdTier, available_names};
use crate::threads::Threads;
use crate::workload::SpawnPattern;

/// A value that was not accepted: what it was for, what was written, what would have been.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{what} '{text}' is not accepted; accepted: {accepted}")]
pub struct ValueError {
    pub what: &'static str,
    pub text: String,
    pub accepted: String,
}

impl ValueError {
    pub fn new(what: &'static str, text: &str, accepted: impl Into<String>) -> Self {
        Self {
            what,
            text: text.trim().to_string(),
            accepted: accepted.into(),
        }
    }
}

impl FromStr for Threads {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "1" | "one" => Ok(Threads::One),
            "all" => Ok(Threads::All),
            _ => Err(ValueError::new("threads", text, "1 or all")),
        }
    }
}

impl FromStr for SimdChoice {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        SimdChoice::BOTH
            .into_iter()
            .find(|c| c.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                let best = SimdTier::best().name();
                ValueError::new(
                    "simd",
                    text,
                    format!("baseline or best (best is {best} here)"),
                )
            })
    }
}

/// A tier by name, refused (with the ones it has) where this CPU lacks it: running its
/// instructions anyway would be undefined behaviour, not a slow run.
impl FromStr for SimdTier {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        SimdTier::ALL
            .into_iter()
            .find(|t| t.name() == text.trim().to_ascii_lowercase())
            .filter(|t| t.is_available())
            .ok_or_else(|| {
                ValueError::new(
                    "simd tier",
                    text,
                    format!("a tier this CPU has: {}", available_names()),
                )
            })
    }
}

impl FromStr for SpawnPattern {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        [SpawnPattern::Streams, SpawnPattern::Uniform]
            .into_iter()
            .find(|p| p.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| ValueError::new("spawn pattern", text, "streams or uniform"))
    }
}

impl FromStr for SeekKernel {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        SeekKernel::BOTH
            .into_iter()
            .find(|k| k.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| ValueError::new("seek kernel", text, "idiomatic or tuned"))
    }
}

impl FromStr for AvoidForm {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        AvoidForm::BOTH
            .into_iter()
            .find(|f| f.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| ValueError::new("neighbour pass", text, "idiomatic or tuned"))
    }
}

impl FromStr for LayoutKind {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        let name = text.trim().to_ascii_lowercase();
        LayoutKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
            .ok_or_else(|| {
                ValueError::new("layout", text, LayoutKind::ALL.map(|k| k.name()).join(", "))
            })
    }
}

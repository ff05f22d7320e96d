//! The values a person types, each parsed in one place: on the command line (as clap value
//! parsers), in a script and in the bench's options alike, with one error text that names what
//! was written and what is accepted. The core's own values (layout, threads, SIMD, spawn
//! pattern) parse in `entity_layouts_core::values`.

use std::fmt;
use std::str::FromStr;

use clap::builder::{PossibleValue, TypedValueParser};

use crate::error::SimError;
use crate::layout::{LayoutKind, TABLE};
use crate::neighbours::Reach;
use crate::runtime::renderer::Renderer;
use crate::runtime::swarm::{MAX_CHURN, MAX_ENTITIES};

/// The core's values (layout, threads, SIMD tier and choice, spawn pattern) parse in
/// `entity_layouts_core::values`, with the same error type.
pub use entity_layouts_core::values::ValueError;

/// `--layout`: a layout's name; `--help` lists every layout with its doc line, from the table of
/// layouts, and a name that is none of them is refused with the names that are.
#[derive(Clone, Copy, Debug, Default)]
pub struct LayoutName;

impl TypedValueParser for LayoutName {
    type Value = LayoutKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<LayoutKind, clap::Error> {
        let refused = |message: String| {
            clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{message}\n"))
                .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refused(format!("{value:?} is not a layout's name")))?;
        text.parse::<LayoutKind>()
            .map_err(|e| refused(e.to_string()))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            TABLE
                .iter()
                .map(|row| PossibleValue::new(row.name).help(row.doc)),
        ))
    }
}

/// A whole number as people write one: `100000`, `100_000` or `1e6`.
fn whole_number(text: &str) -> Option<u64> {
    let clean = text.trim().replace('_', "");
    clean.parse::<u64>().ok().or_else(|| {
        let v = clean.parse::<f64>().ok()?;
        (v.fract() == 0.0 && (0.0..=1e15).contains(&v)).then_some(v as u64)
    })
}

/// A whole number from `min` to `max`, or the error that says so.
fn whole_number_in(what: &'static str, text: &str, min: u64, max: u64) -> Result<u64, ValueError> {
    whole_number(text)
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| ValueError::new(what, text, format!("a whole number from {min} to {max}")))
}

/// Entities in the app, its scripts and `soak`: 0 to [`MAX_ENTITIES`], the most any layout
/// takes (the gpu layout); the driver then holds each layout to its own maximum
/// ([`crate::runtime::driver::app_max_entities`], `APP_MAX_ENTITIES` for the CPU layouts) and names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityCount(pub usize);

impl FromStr for EntityCount {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("count", text, 0, MAX_ENTITIES as u64).map(|n| Self(n as usize))
    }
}

/// Entities in one bench cell: 1 to [`MAX_ENTITIES`] (the bench goes past the app's slider).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchCount(pub usize);

impl FromStr for BenchCount {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("entity count", text, 1, MAX_ENTITIES as u64).map(|n| Self(n as usize))
    }
}

/// Entities spawned per frame while growing, for a run that `replay` reproduces exactly: 1 to
/// [`MAX_ENTITIES`] (without it the app grows by time, its share of each frame, [`crate::runtime::pace::Pace::FrameShare`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrowChunk(pub usize);

impl FromStr for GrowChunk {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("grow chunk", text, 1, MAX_ENTITIES as u64).map(|n| Self(n as usize))
    }
}

/// Entities carried over per frame on a layout switch (`--switch-chunk`): 1 to [`MAX_ENTITIES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwitchChunk(pub usize);

impl FromStr for SwitchChunk {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("switch chunk", text, 1, MAX_ENTITIES as u64).map(|n| Self(n as usize))
    }
}

/// Spawns plus removals per frame: 0 to [`MAX_CHURN`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Churn(pub usize);

impl FromStr for Churn {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("churn", text, 0, MAX_CHURN as u64).map(|n| Self(n as usize))
    }
}

/// What sets the neighbour radius, as typed after `--neighbour-target` (a mean number of
/// neighbours) or `--radius` (world units): checked where it is parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReachArg(pub Reach);

impl ReachArg {
    fn parse(text: &str, make: fn(f64) -> Result<Reach, SimError>) -> Result<Self, ValueError> {
        let what = "neighbour reach";
        let number: f64 = text
            .trim()
            .parse()
            .map_err(|_| ValueError::new(what, text, "a number"))?;
        make(number).map(Self).map_err(|e| {
            let message = e.to_string();
            let accepted = message
                .split_once("accepted: ")
                .map_or(message.as_str(), |(_, a)| a);
            ValueError::new(what, text, accepted)
        })
    }

    pub fn target(text: &str) -> Result<Self, ValueError> {
        Self::parse(text, Reach::neighbours)
    }

    pub fn radius(text: &str) -> Result<Self, ValueError> {
        Self::parse(text, Reach::radius)
    }
}

/// How often a population sorted by cell is sorted again, in frames: motion moves entities
/// out of the cells they were sorted by. 1 to [`ResortEvery::MAX`]; off by default, the
/// interval docs/results/neighbours.md measured (a streams population's clumps travel
/// together, so the order decays slowly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResortEvery(u32);

impl ResortEvery {
    /// Ten minutes of frames at 60 a second.
    pub const MAX: u32 = 36_000;

    pub fn frames(self) -> u32 {
        self.0
    }
}

impl FromStr for ResortEvery {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("re-sort interval", text.trim(), 1, u64::from(Self::MAX))
            .map(|n| Self(n as u32))
            .map_err(|e| ValueError {
                accepted: format!("{} frames, or off", e.accepted),
                ..e
            })
    }
}

/// When a population sorted by group is sorted again: once more than this percent of the seekers
/// with a live target sit outside their group's stretch (churn appends spawns and swaps
/// removals, and spreads a sorted population out): 1 to 99.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResortAbove(u8);

impl ResortAbove {
    /// The panel's starting point: half the targets strayed.
    pub const DEFAULT: ResortAbove = ResortAbove(50);
    pub const MIN: u8 = 1;
    pub const MAX: u8 = 99;

    /// `percent` within [`Self::MIN`]..=[`Self::MAX`], or `None`.
    pub fn new(percent: u8) -> Option<Self> {
        (Self::MIN..=Self::MAX)
            .contains(&percent)
            .then_some(Self(percent))
    }

    pub fn percent(self) -> u8 {
        self.0
    }

    /// The threshold as a share of the seekers, as [`crate::runtime::swarm::TargetSpread::far`] is.
    pub fn share(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

impl FromStr for ResortAbove {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        let number = text.trim().trim_end_matches('%');
        whole_number_in(
            "re-sort threshold",
            number,
            u64::from(Self::MIN),
            u64::from(Self::MAX),
        )
        .map(|n| Self(n as u8))
        .map_err(|e| ValueError {
            text: text.trim().to_string(),
            accepted: format!(
                "{} (a percent of the targets outside their group's stretch)",
                e.accepted
            ),
            ..e
        })
    }
}

impl fmt::Display for ResortAbove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

/// The most frames a script's `wait` or `--frames` accepts: over four hours at 60 fps.
pub const MAX_FRAMES: u64 = 1_000_000;

/// A number of frames: 1 to [`MAX_FRAMES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frames(pub u64);

impl FromStr for Frames {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        whole_number_in("frames", text, 1, MAX_FRAMES).map(Self)
    }
}

/// The line of `count until-over`: a simulate time in ms, from
/// [`crate::runtime::until_over::MIN_LINE_MS`] to [`crate::runtime::until_over::MAX_LINE_MS`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineMs(pub f64);

impl FromStr for LineMs {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        use crate::runtime::until_over::{MAX_LINE_MS, MIN_LINE_MS};
        text.trim()
            .trim_end_matches("ms")
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|ms| (MIN_LINE_MS..=MAX_LINE_MS).contains(ms))
            .map(Self)
            .ok_or_else(|| {
                ValueError::new(
                    "until-over",
                    text,
                    format!("a time in ms from {MIN_LINE_MS} to {MAX_LINE_MS}, e.g. 16.67"),
                )
            })
    }
}

impl FromStr for Renderer {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        Renderer::BOTH
            .into_iter()
            .find(|r| r.name() == text.trim().to_ascii_lowercase())
            .ok_or_else(|| ValueError::new("renderer", text, "compute or quads"))
    }
}

/// A window or offscreen image size, `WIDTHxHEIGHT`, from 1x1 to 7680x4320 (8K): a window can be
/// dragged that small, and the app must survive it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSize {
    pub width: u32,
    pub height: u32,
}

impl WindowSize {
    pub const MIN: [u32; 2] = [1, 1];
    pub const MAX: [u32; 2] = [7680, 4320];
}

impl FromStr for WindowSize {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        let [min_w, min_h] = Self::MIN;
        let [max_w, max_h] = Self::MAX;
        text.trim()
            .split_once(['x', 'X'])
            .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
            .filter(|(w, h)| (min_w..=max_w).contains(w) && (min_h..=max_h).contains(h))
            .map(|(width, height)| Self { width, height })
            .ok_or_else(|| {
                ValueError::new(
                    "size",
                    text,
                    format!(
                        "WIDTHxHEIGHT with width {min_w} to {max_w} and height {min_h} to {max_h}"
                    ),
                )
            })
    }
}

impl fmt::Display for WindowSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.width, self.height)
    }
}

/// A number in a closed range, for the few settings that take fractions (UI scale, dot size).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ranged<const MIN_TENTHS: u32, const MAX_TENTHS: u32>(pub f32);

/// The panel's zoom for projectors: 0.5 to 3.
pub type UiScale = Ranged<5, 30>;
/// A dot's size in pixels: 1 to 4.
pub type DotSize = Ranged<10, 40>;

impl<const MIN_TENTHS: u32, const MAX_TENTHS: u32> FromStr for Ranged<MIN_TENTHS, MAX_TENTHS> {
    type Err = ValueError;
    fn from_str(text: &str) -> Result<Self, ValueError> {
        let (min, max) = (MIN_TENTHS as f32 / 10.0, MAX_TENTHS as f32 / 10.0);
        text.trim()
            .parse::<f32>()
            .ok()
            .filter(|v| (min..=max).contains(v))
            .map(Self)
            .ok_or_else(|| ValueError::new("value", text, format!("a number from {min} to {max}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;
    use crate::simd::{SimdChoice, SimdTier};
    use crate::threads::Threads;

    #[test]
    fn counts_are_written_as_people_write_them() {
        for (text, n) in [
            ("100000", 100_000),
            ("100_000", 100_000),
            ("1e6", 1_000_000),
            (" 0 ", 0),
        ] {
            assert_eq!(text.parse::<EntityCount>(), Ok(EntityCount(n)), "{text}");
        }
        assert_eq!("1e8".parse::<BenchCount>(), Ok(BenchCount(100_000_000)));
    }

    #[test]
    fn every_error_names_the_text_and_the_range() {
        let cases: [(Result<(), ValueError>, &str, &str); 10] = [
            (
                "2e8".parse::<EntityCount>().map(drop),
                "2e8",
                "0 to 100000000",
            ),
            ("-1".parse::<Churn>().map(drop), "-1", "0 to 100000"),
            ("0".parse::<BenchCount>().map(drop), "0", "1 to 100000000"),
            ("0".parse::<Frames>().map(drop), "0", "1 to 1000000"),
            ("8".parse::<Threads>().map(drop), "8", "1 or all"),
            (
                "avx".parse::<SimdChoice>().map(drop),
                "avx",
                "baseline or best",
            ),
            (
                "sse9".parse::<SimdTier>().map(drop),
                "sse9",
                "a tier this CPU has: baseline",
            ),
            (
                "octree".parse::<LayoutKind>().map(drop),
                "octree",
                "ecs-table",
            ),
            (
                "0x10".parse::<WindowSize>().map(drop),
                "0x10",
                "WIDTHxHEIGHT",
            ),
            ("9".parse::<UiScale>().map(drop), "9", "0.5 to 3"),
        ];
        for (result, text, accepted) in cases {
            let err = result.unwrap_err().to_string();
            assert!(
                err.contains(&format!("'{text}'")) && err.contains(accepted),
                "{err}"
            );
        }
    }

    #[test]
    fn names_round_trip() {
        for kind in LayoutKind::ALL {
            assert_eq!(kind.name().parse::<LayoutKind>(), Ok(kind));
        }
        assert_eq!(" SoA ".parse::<LayoutKind>(), Ok(LayoutKind::Soa));
        for t in Threads::BOTH {
            assert_eq!(t.name().parse::<Threads>(), Ok(t));
        }
        for c in SimdChoice::BOTH {
            assert_eq!(c.name().parse::<SimdChoice>(), Ok(c));
        }
        for &t in crate::simd::available() {
            assert_eq!(t.name().parse::<SimdTier>(), Ok(t));
        }
        // A tier this CPU lacks is refused by name, not run.
        for t in SimdTier::ALL.into_iter().filter(|t| !t.is_available()) {
            let err = t.name().parse::<SimdTier>().unwrap_err().to_string();
            assert!(err.contains("a tier this CPU has"), "{err}");
        }
        assert_eq!(
            "1920x1080".parse::<WindowSize>().map(|s| s.to_string()),
            Ok("1920x1080".into())
        );
        assert_eq!("1.5".parse::<DotSize>(), Ok(Ranged(1.5)));
    }
}

//! The regression check that noise cannot break: each layout's simulated per-entity counts at a
//! CI-sized population, compared with a committed baseline (`benches/counts-baseline.json`).
//! Wall-clock ratios on shared 2-core VMs swing from run to run by more than a regression moves
//! them (docs/results/ecs-vs-soa.md, "Earlier runs: four cursors, and the 10M swing");
//! cachegrind's counts of
//! the same binary are exact, so a tolerance of a few percent catches a kernel that got slower
//! (more instructions, more misses) and nothing else.
//!
//! `cargo bench --bench counts` runs it (`-- --bless` rewrites the baseline after an intended
//! change); `.ci/run` fails on a regression, naming the layout and the figure.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::PerEntity;
use super::cachegrind::{CacheLevel, Geometry, PINNED};

/// The population the check counts: big enough that per-frame overhead is a rounding error per
/// entity, small enough that every layout runs under cachegrind in seconds.
pub const CHECK_COUNT: usize = 100_000;

/// The check's simulated caches: the bench's L1s ([`PINNED`]), and a 1 MiB last level, which
/// [`CHECK_COUNT`] entities overflow (2.4 MB and up a frame) as 10M overflow the bench's 32 MiB:
/// so the check sees memory traffic too, not only L1 misses.
pub const CHECK_GEOMETRY: Geometry = Geometry {
    ll: CacheLevel {
        bytes: 1 << 20,
        ways: 16,
        line: 64,
    },
    ..PINNED
};

/// The figures the check compares, with the smallest change per entity that counts as one
/// (a miss count near zero would otherwise fail on a change of a hundredth).
pub const CHECKED: [(&str, f64); 4] = [
    ("instructions", 0.5),
    ("l1d_accesses", 0.2),
    ("l1d_misses", 0.02),
    ("ll_misses", 0.02),
];

/// Figures the baseline records and the check reports when they move, without failing on them:
/// cachegrind predicts a branch from a table indexed by the branch's address, so a layout's
/// simulated branch misses move when code no layout runs shifts its branches onto the entries of
/// others. What a layout's own branches cost is held with bounds wide enough for that
/// (`tests/counters.rs`: one kind behind a virtual call is predicted, twelve are not).
pub const REPORTED: [(&str, f64); 1] = [("branch_misses", 0.02)];

/// What is committed: how the counts were taken, and each layout's figures per entity per frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The cache geometry cachegrind reported.
    pub geometry: String,
    /// The instruction set the kernels were compiled for (`x86_64+sse2`): a build for another
    /// (`-C target-cpu=native`) runs other instructions, and is not comparable.
    #[serde(default)]
    pub target: String,
    pub n: usize,
    /// Largest accepted increase, in percent, above the per-figure floor.
    pub tolerance_pct: f64,
    pub layouts: BTreeMap<String, BTreeMap<String, f64>>,
}

impl Baseline {
    pub fn new(geometry: String, n: usize, tolerance_pct: f64) -> Self {
        Self {
            geometry,
            target: crate::simd::target_features(),
            n,
            tolerance_pct,
            layouts: BTreeMap::new(),
        }
    }

    pub fn insert(&mut self, layout: &str, run: &PerEntity) {
        let fields = run.fields();
        self.layouts.insert(
            layout.to_string(),
            CHECKED
                .iter()
                .chain(&REPORTED)
                .filter_map(|(m, _)| {
                    fields
                        .iter()
                        .find(|f| f.0 == *m)
                        .map(|f| (m.to_string(), f.1))
                })
                .collect(),
        );
    }

    /// Every figure of `measured` that moved past the tolerance, up or down, or is missing on
    /// either side, as one line each. Falls count as much as rises: a count that moves for no
    /// reason is the compiler, not the layout, and a check that let it pass one way would be
    /// re-blessed the day it moves the other (bless after a change that was meant).
    pub fn moves(&self, measured: &Baseline) -> Vec<String> {
        self.moves_within(measured, self.tolerance_pct)
    }

    /// [`Self::moves`] with another tolerance, in percent (`--tolerance`).
    pub fn moves_within(&self, measured: &Baseline, tolerance_pct: f64) -> Vec<String> {
        let mut out = Vec::new();
        if measured.geometry != self.geometry
            || measured.n != self.n
            || measured.target != self.target
        {
            out.push(format!(
                "the baseline was counted with {} entities, {} instructions, on '{}'; this run with {}, {}, on '{}': not comparable (re-bless the baseline if that change was meant)",
                self.n, self.target, self.geometry, measured.n, measured.target, measured.geometry
            ));
            return out;
        }
        for (layout, figures) in &self.layouts {
            let Some(now) = measured.layouts.get(layout) else {
                out.push(format!("{layout}: not counted in this run"));
                continue;
            };
            out.extend(figure_moves(layout, figures, now, &CHECKED, tolerance_pct));
        }
        for layout in measured.layouts.keys() {
            if !self.layouts.contains_key(layout) {
                out.push(format!(
                    "{layout}: counted, but not in the baseline (bless to add it)"
                ));
            }
        }
        out
    }

    /// The [`REPORTED`] figures of `measured` that moved past `tolerance_pct`, one line each, in
    /// the words of [`Self::moves`]: for the reader, never a failure.
    pub fn reported_moves_within(&self, measured: &Baseline, tolerance_pct: f64) -> Vec<String> {
        self.layouts
            .iter()
            .filter_map(|(layout, figures)| Some((layout, figures, measured.layouts.get(layout)?)))
            .flat_map(|(layout, was, is)| figure_moves(layout, was, is, &REPORTED, tolerance_pct))
            .collect()
    }
}

/// Each of `metrics` that moved from `was` to `is` by more than `tolerance_pct` and its floor.
fn figure_moves(
    layout: &str,
    was: &BTreeMap<String, f64>,
    is: &BTreeMap<String, f64>,
    metrics: &[(&str, f64)],
    tolerance_pct: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for &(metric, floor) in metrics {
        let (Some(&was), Some(&is)) = (was.get(metric), is.get(metric)) else {
            continue;
        };
        let allowed = (was * tolerance_pct / 100.0).max(floor);
        let way = if is > was + allowed {
            "rose"
        } else if is < was - allowed {
            "fell"
        } else {
            continue;
        };
        out.push(format!(
            "{layout}: {metric} per entity per frame {way} from {was:.3} to {is:.3} ({:+.1}%, more than the {tolerance_pct:.1}% / {floor} allowed)",
            100.0 * (is - was) / was.max(f64::MIN_POSITIVE),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(instructions: f64, l1d_misses: f64) -> PerEntity {
        PerEntity {
            instructions,
            l1d_accesses: 10.0,
            l1d_misses,
            ..PerEntity::default()
        }
    }

    #[test]
    fn a_slower_kernel_is_named_and_noise_is_not() {
        let mut base = Baseline::new("D1 32K".into(), 1000, 2.0);
        base.insert("soa", &run(40.0, 1.0));
        base.insert("aos", &run(50.0, 4.0));

        let mut same = base.clone();
        same.insert("soa", &run(40.5, 1.01)); // within 2% and the floors
        same.insert("aos", &run(49.2, 4.0));
        assert!(base.moves(&same).is_empty());

        // Faster for no reason is a move too, and says which way.
        let mut faster = base.clone();
        faster.insert("aos", &run(30.0, 4.0));
        let found = base.moves(&faster);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("aos: instructions") && found[0].contains("fell"));
        assert!(found[0].contains("-40.0%"), "{found:?}");
        // Within a wider tolerance it passes; within a narrower one, the small move does not.
        assert!(base.moves_within(&faster, 50.0).is_empty());
        assert_eq!(base.moves_within(&same, 0.5).len(), 1);

        let mut slower = base.clone();
        slower.insert("soa", &run(48.0, 1.0));
        let found = base.moves(&slower);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("soa: instructions") && found[0].contains("rose"));
        assert!(found[0].contains("+20.0%"), "{found:?}");

        let mut extra = base.clone();
        extra.insert("chunks", &run(20.0, 0.4));
        assert!(base.moves(&extra)[0].contains("chunks: counted, but not in the baseline"));

        let mut missing = base.clone();
        missing.layouts.remove("aos");
        assert_eq!(base.moves(&missing), vec!["aos: not counted in this run"]);

        let other = Baseline::new("D1 48K".into(), 1000, 2.0);
        assert!(base.moves(&other)[0].contains("not comparable"));
        let mut native = base.clone();
        native.target = "x86_64+sse2+avx2".into();
        assert!(base.moves(&native)[0].contains("x86_64+sse2+avx2"));
    }

    #[test]
    fn branch_misses_are_reported_and_never_fail_the_check() {
        let mut base = Baseline::new("g".into(), 1, 2.0);
        let predicted = PerEntity {
            branch_misses: 0.08,
            ..run(50.0, 2.5)
        };
        base.insert("hecs seek", &predicted);
        assert_eq!(base.layouts["hecs seek"]["branch_misses"], 0.08);
        let mut aliased = base.clone();
        aliased.insert(
            "hecs seek",
            &PerEntity {
                branch_misses: 1.08,
                ..predicted
            },
        );
        assert!(
            base.moves(&aliased).is_empty(),
            "{:?}",
            base.moves(&aliased)
        );
        let noted = base.reported_moves_within(&aliased, 2.0);
        assert_eq!(noted.len(), 1, "{noted:?}");
        assert!(noted[0].starts_with("hecs seek: branch_misses") && noted[0].contains("rose"));
        // Within the tolerance and the floor, nothing to report.
        aliased.insert(
            "hecs seek",
            &PerEntity {
                branch_misses: 0.09,
                ..predicted
            },
        );
        assert!(base.reported_moves_within(&aliased, 2.0).is_empty());
    }

    #[test]
    fn a_miss_count_near_zero_needs_a_real_change() {
        let mut base = Baseline::new("g".into(), 1, 2.0);
        base.insert("soa", &run(40.0, 0.001));
        let mut now = base.clone();
        now.insert("soa", &run(40.0, 0.01));
        assert!(base.moves(&now).is_empty());
        now.insert("soa", &run(40.0, 0.05));
        assert!(base.moves(&now)[0].contains("l1d_misses"));
    }

    #[test]
    fn round_trips_through_json() {
        let mut base = Baseline::new("g".into(), 100_000, 2.0);
        base.insert("dyn-1", &run(60.0, 2.5));
        let text = serde_json::to_string_pretty(&base).unwrap();
        assert_eq!(serde_json::from_str::<Baseline>(&text).unwrap(), base);
    }
}

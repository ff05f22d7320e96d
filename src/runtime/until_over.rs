//! `count until-over MS`: grow the population until the current layout's simulate time crosses a
//! line, so that a talk can say "over budget" on whatever machine it runs on. The count doubles
//! until a probe is over the line (or the ceiling is reached), then bisects between the last
//! count under it and the first over it. Each probe is a count the driver grows to over frames,
//! as it grows to any count, and is measured over [`SAMPLES`] steady frames: the search never
//! stalls a frame more than growing does.
//!
//! This file is the search, fed simulate times ([`UntilOver`]), and the driver's record of its
//! searches ([`Searches`]): the driver feeds it from its steady frames and carries out the counts
//! it asks for, the tests feed it from a formula.

use crate::error::SimError;
use crate::layout::LayoutKind;

/// Steady frames measured per probe; the probe's time is their median.
pub const SAMPLES: usize = 9;
/// The search ends once the first count over the line is within this share of the last count
/// under it.
pub const PRECISION: f64 = 0.05;
/// The first probe when the population is smaller.
pub const FIRST_PROBE: usize = 10_000;
/// Accepted lines, in ms.
pub const MIN_LINE_MS: f64 = 0.01;
pub const MAX_LINE_MS: f64 = 1000.0;

/// How a `count until-over` search ended.
#[derive(Clone, Debug, PartialEq)]
pub struct UntilOverResult {
    pub line_ms: f64,
    pub layout: LayoutKind,
    /// The first count found over the line, or where the search stopped under it.
    pub count: usize,
    /// The simulate p50 measured at `count`.
    pub simulate_ms: f64,
    /// Whether `count` is over the line (false: the ceiling, or memory, came first).
    pub crossed: bool,
}

/// A driver's searches: where the search stands, and how the last one ended until it is taken.
#[derive(Clone, Debug, Default)]
pub struct Searches {
    stage: Stage,
    done: Option<UntilOverResult>,
}

/// Where a search stands.
#[derive(Clone, Debug, Default)]
enum Stage {
    #[default]
    Idle,
    /// Measuring counts.
    Running(UntilOver),
    /// Over, while the population grows back to the count it found.
    Settling,
}

impl Searches {
    /// Starts a search for `line_ms` from `len` entities, up to `ceiling`; returns the first
    /// count to measure, or why the line is refused.
    pub fn start(&mut self, line_ms: f64, len: usize, ceiling: usize) -> Result<usize, SimError> {
        if !(MIN_LINE_MS..=MAX_LINE_MS).contains(&line_ms) {
            return Err(SimError::BadLine {
                value: line_ms,
                min: MIN_LINE_MS,
                max: MAX_LINE_MS,
            });
        }
        let (search, probe) = UntilOver::start(line_ms, len, ceiling);
        self.stage = Stage::Running(search);
        self.done = None;
        Ok(probe)
    }

    /// A person picked a count or a layout, or paused: the search gives way.
    pub fn give_way(&mut self) {
        self.stage = Stage::Idle;
    }

    /// A search is under way, or its population still grows back to the count it found.
    pub fn busy(&self, growing: bool) -> bool {
        match self.stage {
            Stage::Idle => false,
            Stage::Running(_) => true,
            Stage::Settling => growing,
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.stage, Stage::Running(_))
    }

    /// The count a search under way is measuring, and its line.
    pub fn probe(&self) -> Option<(usize, f64)> {
        match &self.stage {
            Stage::Running(search) => Some((search.probe(), search.line_ms())),
            Stage::Idle | Stage::Settling => None,
        }
    }

    /// One steady frame's simulate time, for the search under way: what it asks next.
    pub fn observe(&mut self, simulate_ms: f64) -> Option<Step> {
        match &mut self.stage {
            Stage::Running(search) => Some(search.observe(simulate_ms)),
            Stage::Idle | Stage::Settling => None,
        }
    }

    /// The search under way ends at `count` in `layout`.
    pub fn end(&mut self, layout: LayoutKind, count: usize, simulate_ms: f64, crossed: bool) {
        match std::mem::take(&mut self.stage) {
            Stage::Running(search) => {
                self.stage = Stage::Settling;
                self.done = Some(UntilOverResult {
                    line_ms: search.line_ms(),
                    layout,
                    count,
                    simulate_ms,
                    crossed,
                });
            }
            other => self.stage = other,
        }
    }

    /// How the last search ended, once (the app prints it).
    pub fn take_result(&mut self) -> Option<UntilOverResult> {
        self.done.take()
    }
}

/// What the search asks of the driver after a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Keep measuring this count.
    Measure,
    /// Grow (or shrink) to this count and measure it.
    Probe(usize),
    /// Over: `count` is the first count found over the line (the population is left there).
    Crossed { count: usize, simulate_ms: f64 },
    /// The ceiling was reached under the line.
    Ceiling { count: usize, simulate_ms: f64 },
}

#[derive(Clone, Debug)]
pub struct UntilOver {
    line_ms: f64,
    ceiling: usize,
    probe: usize,
    /// The largest count measured under the line, and the smallest over it.
    under: usize,
    over: Option<(usize, f64)>,
    /// The median of the last probe measured under the line.
    under_ms: f64,
    samples: Vec<f64>,
}

impl UntilOver {
    /// A search for `line_ms` from a population of `len`, up to `ceiling` entities; the first
    /// probe is returned with it.
    pub fn start(line_ms: f64, len: usize, ceiling: usize) -> (Self, usize) {
        let probe = len.max(FIRST_PROBE).min(ceiling.max(1));
        let search = Self {
            line_ms,
            ceiling: ceiling.max(1),
            probe,
            under: 0,
            over: None,
            under_ms: 0.0,
            samples: Vec::with_capacity(SAMPLES),
        };
        (search, probe)
    }

    pub fn line_ms(&self) -> f64 {
        self.line_ms
    }

    /// The count being measured.
    pub fn probe(&self) -> usize {
        self.probe
    }

    /// One steady frame at the probe's count took `simulate_ms`.
    pub fn observe(&mut self, simulate_ms: f64) -> Step {
        self.samples.push(simulate_ms);
        if self.samples.len() < SAMPLES {
            return Step::Measure;
        }
        self.samples.sort_by(f64::total_cmp);
        let p50 = self.samples[SAMPLES / 2];
        self.samples.clear();
        if p50 > self.line_ms {
            self.over = Some((self.probe, p50));
        } else {
            self.under = self.probe;
            self.under_ms = p50;
        }
        let next = match self.over {
            None if self.probe >= self.ceiling => {
                return Step::Ceiling {
                    count: self.probe,
                    simulate_ms: p50,
                };
            }
            None => (self.probe.saturating_mul(2)).min(self.ceiling),
            Some((over, over_ms)) => {
                let gap = over - self.under;
                if gap as f64 <= over as f64 * PRECISION || gap <= 1 {
                    return Step::Crossed {
                        count: over,
                        simulate_ms: over_ms,
                    };
                }
                self.under + gap / 2
            }
        };
        self.probe = next;
        Step::Probe(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a machine whose frame costs `ms_per_entity` per entity.
    fn search(line: f64, start: usize, ceiling: usize, ms_per_entity: f64) -> (Step, usize) {
        let (mut s, mut n) = UntilOver::start(line, start, ceiling);
        for probes in 1.. {
            let step = loop {
                let step = s.observe(n as f64 * ms_per_entity);
                if step != Step::Measure {
                    break step;
                }
            };
            match step {
                Step::Probe(next) => n = next,
                done => return (done, probes),
            }
        }
        unreachable!()
    }

    #[test]
    fn it_finds_the_crossing_within_the_precision() {
        // A cost linear in the count that reaches 16.67 ms at 3.05M.
        let per = 16.67 / 3_050_000.0;
        let (step, probes) = search(16.67, 100_000, 10_000_000, per);
        let Step::Crossed { count, simulate_ms } = step else {
            panic!("{step:?}")
        };
        assert!(simulate_ms > 16.67);
        assert!(
            (3_050_000..=(3_050_000.0 * (1.0 + PRECISION)) as usize + 1).contains(&count),
            "{count}"
        );
        assert!(probes <= 12, "{probes} probes");
    }

    #[test]
    fn over_from_the_start_bisects_down() {
        let (step, _) = search(1.0, 1_000_000, 10_000_000, 1e-5);
        let Step::Crossed { count, .. } = step else {
            panic!("{step:?}")
        };
        assert!((100_000..=106_000).contains(&count), "{count}");
    }

    #[test]
    fn a_fast_layout_stops_at_the_ceiling() {
        let (step, _) = search(16.67, 10_000, 2_000_000, 1e-7);
        let Step::Ceiling { count, simulate_ms } = step else {
            panic!("{step:?}")
        };
        assert_eq!(count, 2_000_000);
        assert!((simulate_ms - 0.2).abs() < 1e-9);
    }

    #[test]
    fn searches_refuse_a_bad_line_give_way_and_keep_their_result_once() {
        let mut searches = Searches::default();
        assert!(matches!(
            searches.start(0.0, 0, 100),
            Err(SimError::BadLine { .. })
        ));
        assert!(!searches.running());
        assert_eq!(searches.start(5.0, 0, 1_000_000), Ok(FIRST_PROBE));
        assert_eq!(searches.probe(), Some((FIRST_PROBE, 5.0)));
        searches.end(LayoutKind::Soa, 40_000, 5.2, true);
        assert!(searches.busy(true) && !searches.busy(false));
        let result = searches.take_result().unwrap();
        assert_eq!((result.count, result.crossed), (40_000, true));
        assert_eq!(searches.take_result(), None);
        searches.start(5.0, 0, 1_000_000).unwrap();
        searches.give_way();
        assert!(!searches.busy(true));
    }

    #[test]
    fn a_probe_is_the_median_of_its_frames() {
        let (mut s, n) = UntilOver::start(10.0, 0, 1_000_000);
        assert_eq!(n, FIRST_PROBE);
        // One slow frame in nine (a hiccup) does not make the probe over the line.
        for i in 0..SAMPLES - 1 {
            assert_eq!(s.observe(if i == 3 { 50.0 } else { 1.0 }), Step::Measure);
        }
        assert_eq!(s.observe(1.0), Step::Probe(2 * FIRST_PROBE));
    }
}

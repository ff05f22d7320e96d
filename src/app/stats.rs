//! Frame-time bookkeeping for the panel and the exit summary. Bevy's `FrameTimeDiagnosticsPlugin`
//! measures the frame; it keeps no percentiles, so the last samples are kept here.

use std::collections::{HashMap, VecDeque};

use bevy::prelude::Resource;

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::renderer::Renderer;
use entity_layouts::simd::SimdTier;
use entity_layouts::threads::Threads;
use entity_layouts::workload::Systems;

/// The last `CAPACITY` samples of one quantity, in ms, with the time they were taken.
#[derive(Clone, Debug, Default)]
pub struct Series {
    samples: VecDeque<(f64, f32)>,
}

/// About 10 s at 120 fps; enough for a readable plot, cheap to sort every frame.
const CAPACITY: usize = 1200;
/// The plot's time window.
pub const WINDOW_S: f64 = 10.0;

impl Series {
    pub fn push(&mut self, t: f64, ms: f32) {
        if self.samples.len() == CAPACITY {
            self.samples.pop_front();
        }
        self.samples.push_back((t, ms));
        while self
            .samples
            .front()
            .is_some_and(|&(t0, _)| t - t0 > WINDOW_S)
        {
            self.samples.pop_front();
        }
    }

    pub fn last(&self) -> f32 {
        self.samples.back().map_or(0.0, |s| s.1)
    }

    pub fn points(&self) -> impl Iterator<Item = (f64, f32)> + '_ {
        self.samples.iter().copied()
    }

    /// `(p50, p99, max)` over the window.
    pub fn summary(&self) -> (f32, f32, f32) {
        percentiles(self.samples.iter().map(|s| s.1).collect())
    }
}

/// `(p50, p99, max)` of a sample (zeros when empty).
pub fn percentiles(mut v: Vec<f32>) -> (f32, f32, f32) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    v.sort_by(f32::total_cmp);
    let at = |q: f32| v[((v.len() - 1) as f32 * q).round() as usize];
    (at(0.5), at(0.99), v[v.len() - 1])
}

/// One frame's split.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameSplit {
    pub frame_ms: f32,
    pub simulate_ms: f32,
    /// The systems' shares of `simulate_ms` (NaN where not measured: the gpu layout's are the
    /// device's; seek's and avoid's while they are off).
    pub move_ms: f32,
    pub regen_ms: f32,
    pub seek_ms: f32,
    pub avoid_ms: f32,
    /// Gathering the points into wgpu's staging memory: the gather is the upload (the GPU's own
    /// copy out of staging happens in the render thread, in the rest of the frame).
    pub gather_ms: f32,
    /// The points' draw on the GPU (Bevy's render diagnostic, timestamp queries; it arrives a
    /// few frames late). NaN where it was not measured: no timestamps, or the frames right
    /// after a renderer change.
    pub draw_ms: f32,
}

impl FrameSplit {
    /// Everything but simulate and gather; an unmeasured simulate time counts as part of it.
    pub fn rest_ms(&self) -> f32 {
        let simulate = if self.simulate_ms.is_finite() {
            self.simulate_ms
        } else {
            0.0
        };
        (self.frame_ms - simulate - self.gather_ms).max(0.0)
    }
}

/// One set of systems' scoreboard: simulate ms per layout, and the tier each was measured on.
type Board = (HashMap<LayoutKind, Series>, HashMap<LayoutKind, SimdTier>);

#[derive(Resource, Default)]
pub struct FrameStats {
    pub frame: Series,
    pub simulate: Series,
    /// Each system's time at the current setting (started over when it changes).
    pub moving: Series,
    pub regen: Series,
    pub seek: Series,
    pub avoid: Series,
    split_setting: Option<Setting>,
    pub gather_upload: Series,
    /// The points' draw time on the GPU, where measured.
    pub draw: Series,
    /// Everything else in the frame: rendering, egui, Bevy's own systems, presenting.
    pub rest: Series,
    /// Steady frames since start per (layout, threads, entity count), for the exit summary.
    pub per_setting: HashMap<Setting, Vec<FrameSplit>>,
    /// Settings in the order they were first used.
    pub order: Vec<Setting>,
    /// Simulate ms per layout at the current count, for the systems now running: the scoreboard
    /// shown. Cleared when the count, thread setting or churn changes, since the numbers would no
    /// longer compare.
    pub scoreboard: HashMap<LayoutKind, Series>,
    /// The SIMD tier each scoreboard series was measured on; a layout measured again on another
    /// tier starts its series over.
    pub scoreboard_simd: HashMap<LayoutKind, SimdTier>,
    /// Which systems the shown board is for, and the other sets' boards, kept while they are
    /// not shown (one board per set of systems: seek and the neighbours turn the ranking over,
    /// and each ranking stays).
    pub board_systems: Systems,
    other_boards: HashMap<Systems, Board>,
    /// Every frame of the last [`WINDOW_S`] seconds, for the export's CSV.
    recent: VecDeque<FrameRecord>,
    frames: u64,
}

/// One frame as the export writes it.
#[derive(Clone, Copy, Debug)]
struct FrameRecord {
    frame: u64,
    t: f64,
    split: FrameSplit,
    setting: Setting,
}

/// What a summary row is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setting {
    pub kind: LayoutKind,
    pub threads: Threads,
    /// The tier the layout's kernels ran on (the baseline for layouts without per-tier ones).
    pub simd: SimdTier,
    pub count: usize,
    /// The renderer that drew the points.
    pub renderer: Renderer,
    /// The systems each frame ran.
    pub systems: Systems,
}

const PER_SETTING_CAP: usize = 100_000;

impl FrameStats {
    /// Records a frame; `steady` frames (not spawning, not paused) also count for the
    /// scoreboard and the exit summary.
    pub fn record(&mut self, t: f64, setting: Setting, split: FrameSplit, steady: bool) {
        self.frames += 1;
        self.recent.push_back(FrameRecord {
            frame: self.frames,
            t,
            split,
            setting,
        });
        while self.recent.front().is_some_and(|r| t - r.t > WINDOW_S) {
            self.recent.pop_front();
        }
        self.frame.push(t, split.frame_ms);
        // A simulate time that was not measured (NaN: the gpu layout without usable timestamps)
        // is left out of the plot and the scoreboard, never drawn as zero.
        let measured = split.simulate_ms.is_finite();
        if measured {
            self.simulate.push(t, split.simulate_ms);
        }
        self.gather_upload.push(t, split.gather_ms);
        if split.draw_ms.is_finite() {
            self.draw.push(t, split.draw_ms);
        }
        self.rest.push(t, split.rest_ms());
        if self.split_setting != Some(setting) {
            self.split_setting = Some(setting);
            self.moving = Series::default();
            self.regen = Series::default();
            self.seek = Series::default();
            self.avoid = Series::default();
        }
        if steady && split.move_ms.is_finite() {
            self.moving.push(t, split.move_ms);
            self.regen.push(t, split.regen_ms);
            if split.seek_ms.is_finite() {
                self.seek.push(t, split.seek_ms);
            }
            if split.avoid_ms.is_finite() {
                self.avoid.push(t, split.avoid_ms);
            }
        }
        if !steady {
            return;
        }
        self.show_board(setting.systems);
        if !self.order.contains(&setting) {
            self.order.push(setting);
        }
        let all = self.per_setting.entry(setting).or_default();
        if all.len() < PER_SETTING_CAP {
            all.push(split);
        }
        if measured {
            if self.scoreboard_simd.insert(setting.kind, setting.simd) != Some(setting.simd) {
                self.scoreboard.remove(&setting.kind);
            }
            self.scoreboard
                .entry(setting.kind)
                .or_default()
                .push(t, split.simulate_ms);
        }
    }

    /// Shows the board of `systems`, keeping the others.
    pub fn show_board(&mut self, systems: Systems) {
        if systems != self.board_systems {
            let (scoreboard, simd) = self.other_boards.remove(&systems).unwrap_or_default();
            let shown = (
                std::mem::replace(&mut self.scoreboard, scoreboard),
                std::mem::replace(&mut self.scoreboard_simd, simd),
            );
            self.other_boards.insert(self.board_systems, shown);
            self.board_systems = systems;
        }
    }

    /// Clears every board (the count, threads or churn changed: no number compares any more).
    pub fn clear_boards(&mut self) {
        self.scoreboard.clear();
        self.scoreboard_simd.clear();
        self.other_boards.clear();
    }

    /// The last [`WINDOW_S`] seconds of frames as CSV, one row per frame.
    pub fn recent_csv(&self) -> String {
        let mut out = String::from(
            "frame,time_s,frame_ms,simulate_ms,gather_upload_ms,draw_ms,renderer,layout,n,threads,simd,systems,move_ms,regen_ms,seek_ms,avoid_ms\n",
        );
        for r in &self.recent {
            out.push_str(&format!(
                "{},{:.4},{:.4},{},{:.4},{},{},{},{},{},{},{},{},{},{},{}\n",
                r.frame,
                r.t,
                r.split.frame_ms,
                // Empty where the gpu layout's time was not measured.
                finite_or_empty(r.split.simulate_ms),
                r.split.gather_ms,
                finite_or_empty(r.split.draw_ms),
                r.setting.renderer.name(),
                r.setting.kind.name(),
                r.setting.count,
                r.setting.threads.name(),
                r.setting.simd.name(),
                r.setting.systems.name(),
                finite_or_empty(r.split.move_ms),
                finite_or_empty(r.split.regen_ms),
                finite_or_empty(r.split.seek_ms),
                finite_or_empty(r.split.avoid_ms),
            ));
        }
        out
    }

    /// The exit summary: frame p50/p99 and the split per layout, threads and count used.
    pub fn summary_lines(&self) -> Vec<String> {
        self.order
            .iter()
            .map(|setting| {
                let frames = &self.per_setting[setting];
                let col = |f: fn(&FrameSplit) -> f32| percentiles(frames.iter().map(f).collect());
                let (f50, f99, _) = col(|s| s.frame_ms);
                let (s50, _, _) = col(|s| s.simulate_ms);
                let (g50, _, _) = col(|s| s.gather_ms);
                let (r50, _, _) = col(|s| s.rest_ms());
                // Only the frames whose draw time was measured.
                let drawn: Vec<f32> = frames
                    .iter()
                    .map(|s| s.draw_ms)
                    .filter(|v| v.is_finite())
                    .collect();
                let draw = if drawn.is_empty() {
                    "     n/a   ".to_string()
                } else {
                    format!("{:8.3} ms", percentiles(drawn).0)
                };
                let simulate = if s50.is_finite() {
                    format!("{s50:8.3} ms")
                } else {
                    "     n/a   ".to_string()
                };
                let (m50, _, _) = col(|s| s.move_ms);
                let (e50, _, _) = col(|s| s.regen_ms);
                let split = if !m50.is_finite() {
                    String::new()
                } else {
                    let (k50, _, _) = col(|s| s.seek_ms);
                    let (a50, _, _) = col(|s| s.avoid_ms);
                    let seek = if setting.systems.seeks() {
                        format!(" seek {k50:.3}")
                    } else {
                        String::new()
                    };
                    let avoid = if setting.systems.avoids() {
                        format!(" avoid {a50:.3}")
                    } else {
                        String::new()
                    };
                    format!(" (move {m50:.3} regen {e50:.3}{seek}{avoid})")
                };
                format!(
                    "{:<16} {:<15} threads={:<3} simd={:<8} renderer={:<7} n={:<9} {:>5} frames  frame p50 {f50:8.3} ms  p99 {f99:8.3} ms  | simulate p50 {simulate}{split}  gather+upload p50 {g50:7.3} ms  rest p50 {r50:8.3} ms  draw p50 {draw}",
                    setting.kind.name(),
                    setting.systems.name(),
                    setting.threads.name(),
                    setting.simd.name(),
                    setting.renderer.name(),
                    setting.count,
                    frames.len(),
                )
            })
            .collect()
    }
}

/// A CSV cell: the value, or empty where it was not measured.
fn finite_or_empty(ms: f32) -> String {
    if ms.is_finite() {
        format!("{ms:.4}")
    } else {
        String::new()
    }
}

/// Each system's share of simulate, p50 at the current setting: `move 1.20 · regen 0.31 ms`,
/// with `seek` and `avoid` first when they run. `None` before a steady frame at this setting.
pub fn system_split(stats: &FrameStats, systems: Systems) -> Option<String> {
    let p50 = |s: &Series| s.points().next().map(|_| s.summary().0);
    let (moving, regen) = (p50(&stats.moving)?, p50(&stats.regen)?);
    let mut parts = Vec::new();
    if let (true, Some(seek)) = (systems.seeks(), p50(&stats.seek)) {
        parts.push(format!("seek {seek:.2}"));
    }
    if let (true, Some(avoid)) = (systems.avoids(), p50(&stats.avoid)) {
        parts.push(format!("avoid {avoid:.2}"));
    }
    parts.push(format!("move {moving:.2}"));
    parts.push(format!("regen {regen:.2} ms"));
    Some(parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_keeps_a_bounded_window() {
        let mut s = Series::default();
        for i in 0..5000 {
            s.push(i as f64 * 0.001, i as f32);
        }
        assert!(s.points().count() <= CAPACITY);
        assert_eq!(s.last(), 4999.0);
        let (p50, p99, max) = s.summary();
        assert!(p50 < p99 && p99 <= max && max == 4999.0);
    }

    #[test]
    fn the_export_keeps_the_last_seconds_of_frames() {
        let mut stats = FrameStats::default();
        let setting = Setting {
            kind: LayoutKind::Soa,
            threads: Threads::One,
            simd: SimdTier::Baseline,
            count: 7,
            renderer: Renderer::Compute,
            systems: Systems::MOVE_REGEN,
        };
        for i in 0..1500 {
            let split = FrameSplit {
                frame_ms: 16.0,
                ..FrameSplit::default()
            };
            stats.record(i as f64 * 0.01, setting, split, true);
        }
        let csv = stats.recent_csv();
        let rows: Vec<&str> = csv.lines().collect();
        assert!(rows[0].starts_with("frame,time_s,frame_ms"));
        // 10 s at 100 frames a second, plus the header.
        assert!((1000..=1002).contains(&rows.len()), "{}", rows.len());
        assert!(rows.last().unwrap().starts_with("1500,14.99"));
        assert!(
            rows[1].ends_with(",compute,soa,7,1,baseline,move+regen,0.0000,0.0000,0.0000,0.0000"),
            "{}",
            rows[1]
        );
    }
}

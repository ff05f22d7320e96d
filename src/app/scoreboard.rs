//! The scoreboard: one bar per layout measured at the current count, fastest on top, each named,
//! colored by its share of the 16.67 ms budget, with the budget drawn across the bars and what
//! the budget would allow beside each. Painted directly (not a plot widget) so that every label
//! sits where a reader looks for it.

use bevy_egui::egui;
use egui::{Align2, Color32, FontId, Rect, Sense, Stroke, pos2, vec2};
use plotters::prelude::{
    ChartBuilder, Color as _, IntoDrawingArea, IntoFont, IntoSegmentedCoord, PathElement, RGBColor,
    Rectangle, SVGBackend, SegmentValue, Text, TextStyle,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};

use entity_layouts::LayoutKind;
use entity_layouts::simd::SimdTier;

use super::stats::FrameStats;

pub const BUDGET_MS: f32 = 1000.0 / 60.0;

pub const GREEN: Color32 = Color32::from_rgb(90, 210, 120);
pub const AMBER: Color32 = Color32::from_rgb(245, 190, 60);
pub const RED: Color32 = Color32::from_rgb(255, 90, 80);

/// A frame time's color: under half the budget, under the budget, over it.
pub fn budget_color(ms: f32) -> Color32 {
    if ms > BUDGET_MS {
        RED
    } else if ms > BUDGET_MS / 2.0 {
        AMBER
    } else {
        GREEN
    }
}

/// One layout's line on the scoreboard.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kind: LayoutKind,
    /// p50 simulate ms at the current count.
    pub ms: f32,
    /// About how many entities fit in the budget at this layout's cost per entity, as a label.
    pub allows: String,
    /// The SIMD tier the bar was measured on, for layouts whose kernels have tiers.
    pub simd: Option<SimdTier>,
}

impl Row {
    pub fn budget_share(&self) -> f32 {
        self.ms / BUDGET_MS
    }

    /// `soa · avx512` for a layout with SIMD tiers, the layout's name otherwise.
    pub fn label(&self) -> String {
        match self.simd {
            Some(tier) => format!("{} · {}", self.kind.name(), tier.name()),
            None => self.kind.name(),
        }
    }

    pub fn color_rgb(&self) -> [u8; 3] {
        let c = budget_color(self.ms);
        [c.r(), c.g(), c.b()]
    }
}

/// Every layout measured at `n` entities, fastest first.
pub fn rows(stats: &FrameStats, n: usize) -> Vec<Row> {
    let mut rows: Vec<Row> = LayoutKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let ms = stats.scoreboard.get(&kind)?.summary().0;
            (ms > 0.0).then(|| Row {
                kind,
                ms,
                allows: if n > 0 {
                    count_label((BUDGET_MS / (ms / n as f32)) as usize)
                } else {
                    "-".into()
                },
                simd: kind
                    .has_simd_kernels()
                    .then(|| stats.scoreboard_simd.get(&kind).copied())
                    .flatten(),
            })
        })
        .collect();
    rows.sort_by(|a, b| a.ms.total_cmp(&b.ms));
    rows
}

/// Height of one bar's row, in points.
pub const ROW_HEIGHT: f32 = 17.0;

/// Paints the bars: name on the left, the bar, `ms · ≈N` on the right, the budget line across.
pub fn paint(ui: &mut egui::Ui, rows: &[Row]) {
    let width = ui.available_width();
    let (rect, _) = ui.allocate_exact_size(
        vec2(width, ROW_HEIGHT * rows.len() as f32 + 4.0),
        Sense::hover(),
    );
    let painter = ui.painter_at(rect);
    let name_w = 104.0;
    let value_w = 112.0;
    let bars = Rect::from_min_max(
        pos2(rect.left() + name_w, rect.top()),
        pos2(rect.right() - value_w, rect.bottom()),
    );
    // The budget sits at 60% of the width when every layout is under it, so that both the bars
    // and the line read; slower layouts push it left.
    let scale_ms = rows
        .iter()
        .map(|r| r.ms)
        .fold(BUDGET_MS / 0.6, f32::max)
        .max(f32::EPSILON);
    let x = |ms: f32| bars.left() + bars.width() * (ms / scale_ms).min(1.0);
    let font = FontId::proportional(13.0);
    for (i, row) in rows.iter().enumerate() {
        let top = rect.top() + 2.0 + ROW_HEIGHT * i as f32;
        let mid = top + ROW_HEIGHT / 2.0;
        painter.text(
            pos2(rect.left(), mid),
            Align2::LEFT_CENTER,
            row.kind.name(),
            font.clone(),
            Color32::WHITE,
        );
        let bar = Rect::from_min_max(
            pos2(bars.left(), top + 2.0),
            pos2(x(row.ms).max(bars.left() + 2.0), top + ROW_HEIGHT - 2.0),
        );
        painter.rect_filled(bar, 2.0, budget_color(row.ms));
        if let Some(tier) = row.simd {
            // Inside the bar where it fits, just after it otherwise.
            let (at, color) = if bar.width() > 56.0 {
                (bar.left() + 4.0, Color32::from_gray(20))
            } else {
                (bar.right() + 4.0, Color32::LIGHT_GRAY)
            };
            painter.text(
                pos2(at, mid),
                Align2::LEFT_CENTER,
                tier.name(),
                FontId::proportional(10.0),
                color,
            );
        }
        painter.text(
            pos2(rect.right(), mid),
            Align2::RIGHT_CENTER,
            format!("{:.2} ms · ≈{}", row.ms, row.allows),
            font.clone(),
            Color32::LIGHT_GRAY,
        );
    }
    let budget_x = x(BUDGET_MS);
    painter.line_segment(
        [pos2(budget_x, rect.top()), pos2(budget_x, rect.bottom())],
        Stroke::new(1.5, RED),
    );
}

/// `12,345` -> `12.3k`, `5,412,169` -> `5.41M`: readable from the back of a room.
pub fn count_label(n: usize) -> String {
    let (value, unit) = match n {
        n if n >= 1_000_000 => (n as f64 / 1e6, "M"),
        n if n >= 1_000 => (n as f64 / 1e3, "k"),
        n => return n.to_string(),
    };
    let digits = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{value:.digits$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{unit}")
}

/// The scoreboard as a horizontal bar chart: fastest on top, the budget line across the bars.
pub fn svg(rows: &[Row], n: usize) -> String {
    let mut out = String::new();
    {
        let height = 90 + 34 * rows.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut out, (900, height)).into_drawing_area();
        let _ = root.fill(&plotters::style::WHITE);
        let top = rows.iter().map(|r| r.ms).fold(BUDGET_MS, f32::max) * 1.15;
        let caption = format!("simulate p50 at {n} entities (16.67 ms budget)");
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(36)
            .y_label_area_size(230)
            .build_cartesian_2d(0f32..top, (0..rows.len().max(1)).into_segmented())
        {
            let _ = chart
                .configure_mesh()
                .disable_y_mesh()
                .y_label_formatter(&|_| String::new())
                .x_desc("ms per frame")
                .draw();
            // Each bar's name, drawn beside the bar's own centre: plotters' segmented axis put
            // its labels between the bars and one too many.
            for (i, row) in rows.iter().rev().enumerate() {
                let (x, y) = chart.backend_coord(&(0.0, SegmentValue::CenterOf(i)));
                let style = TextStyle::from(("sans-serif", 14).into_font())
                    .pos(Pos::new(HPos::Right, VPos::Center));
                let _ = root.draw_text(&row.label(), &style, (x - 8, y));
            }
            let _ = chart.draw_series(rows.iter().rev().enumerate().map(|(i, row)| {
                let [r, g, b] = row.color_rgb();
                Rectangle::new(
                    [
                        (0.0, SegmentValue::Exact(i)),
                        (row.ms, SegmentValue::Exact(i + 1)),
                    ],
                    RGBColor(r, g, b).filled(),
                )
            }));
            let _ = chart.draw_series(rows.iter().rev().enumerate().map(|(i, row)| {
                Text::new(
                    format!("{:.2} ms · ≈{}", row.ms, row.allows),
                    (row.ms + top * 0.01, SegmentValue::CenterOf(i)),
                    ("sans-serif", 14),
                )
            }));
            let _ = chart.draw_series(std::iter::once(PathElement::new(
                vec![
                    (BUDGET_MS, SegmentValue::Exact(0)),
                    (BUDGET_MS, SegmentValue::Exact(rows.len().max(1))),
                ],
                plotters::style::RED.stroke_width(2),
            )));
        }
        let _ = root.present();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_well() {
        assert_eq!(count_label(10_000_000), "10M");
        assert_eq!(count_label(5_412_169), "5.41M");
        assert_eq!(count_label(308_263), "308k");
        assert_eq!(count_label(12_345), "12.3k");
        assert_eq!(count_label(100_000), "100k");
        assert_eq!(count_label(999), "999");
    }

    #[test]
    fn colors_follow_the_budget_share() {
        assert_eq!(budget_color(5.0), GREEN);
        assert_eq!(budget_color(12.0), AMBER);
        assert_eq!(budget_color(20.0), RED);
    }

    #[test]
    fn rows_are_sorted_fastest_first_with_what_the_budget_allows() {
        let mut stats = FrameStats::default();
        for (kind, ms) in [(LayoutKind::Boxed, 8.0), (LayoutKind::Soa, 2.0)] {
            stats.scoreboard.entry(kind).or_default().push(0.0, ms);
        }
        let rows = rows(&stats, 1_000_000);
        assert_eq!(rows[0].kind, LayoutKind::Soa);
        assert_eq!(rows[0].allows, "8.33M");
        assert_eq!(rows[1].kind, LayoutKind::Boxed);
    }

    #[test]
    fn the_svg_names_every_bar_once_with_its_tier() {
        let mut stats = FrameStats::default();
        for (i, kind) in LayoutKind::CPU.into_iter().enumerate() {
            stats
                .scoreboard
                .entry(kind)
                .or_default()
                .push(0.0, 1.0 + i as f32);
            stats.scoreboard_simd.insert(kind, SimdTier::Avx2);
        }
        let rows = rows(&stats, 100_000);
        let svg = svg(&rows, 100_000);
        // plotters writes each text's content on a line of its own.
        let texts = |label: &str| svg.lines().filter(|l| l.trim() == label).count();
        for row in &rows {
            assert_eq!(texts(&row.label()), 1, "{}", row.label());
        }
        assert_eq!(texts("soa · avx2"), 1);
        assert_eq!(texts("boxed"), 1);
    }
}

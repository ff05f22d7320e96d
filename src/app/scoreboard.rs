//! The scoreboard: one bar per layout measured at the current count, fastest on top, each named,
//! colored by its share of the 16.67 ms budget, with the budget drawn across the bars and what
//! the budget would allow beside each. Painted directly (not a plot widget) so that every label
//! sits where a reader looks for it.

use bevy_egui::egui;
use egui::{Align2, Color32, FontId, Rect, Sense, Stroke, pos2, vec2};
use plotters::prelude::{
    ChartBuilder, Color as _, IntoDrawingArea, IntoFont, PathElement, RGBColor, Rectangle,
    SVGBackend, TextStyle,
};
use plotters::style::text_anchor::{HPos, Pos, VPos};

use entity_layouts::layout::LayoutKind;
use entity_layouts::simd::SimdTier;
use entity_layouts::workload::Systems;

use super::stats::FrameStats;

pub const BUDGET_MS: f32 = entity_layouts::workload::BUDGET_MS as f32;
/// How the budget reads on the screen: `16.67 ms`.
pub fn budget_label() -> String {
    format!("{BUDGET_MS:.2} ms")
}

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
    /// About how many entities fit in the budget at this layout's cost per entity (`None` at
    /// 0 entities), and the same as a label: extrapolated linearly from the count measured, so
    /// every place that prints it says so (a cache level crossed on the way changes the cost).
    pub allows_entities: Option<usize>,
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
            None => self.kind.name().into(),
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
            let allows_entities = (n > 0).then(|| (BUDGET_MS / (ms / n as f32)) as usize);
            (ms > 0.0).then(|| Row {
                kind,
                ms,
                allows_entities,
                allows: allows_entities.map_or("-".into(), count_label),
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

/// One row of `scoreboard.csv`: numbers as numbers, the display forms beside them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CsvRow {
    pub layout: String,
    pub label: String,
    pub entities: usize,
    pub threads: String,
    pub simd: String,
    pub simulate_p50_ms: f32,
    pub budget_share: f32,
    /// Empty at 0 entities.
    pub budget_allows_entities: Option<usize>,
    /// `14M`: how the panel shows it.
    pub budget_allows: String,
}

/// The scoreboard as CSV (the `csv` crate: any label round-trips).
pub fn csv(rows: &[Row], n: usize, threads: &str) -> String {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer
            .serialize(CsvRow {
                layout: row.kind.name().into(),
                label: row.kind.label().into(),
                entities: n,
                threads: threads.into(),
                simd: row.simd.unwrap_or_default().name().into(),
                simulate_p50_ms: row.ms,
                budget_share: row.budget_share(),
                budget_allows_entities: row.allows_entities,
                budget_allows: row.allows.clone(),
            })
            .expect("a row is strings and numbers, which CSV holds");
    }
    let bytes = writer.into_inner().expect("writing to memory cannot fail");
    String::from_utf8(bytes).expect("CSV of UTF-8 fields is UTF-8")
}

/// The fastest `max` of `rows` (sorted fastest first), with `current`'s row kept in place of the
/// last one when it would fall off: the bar the audience is looking at never disappears.
pub fn fastest_and(rows: &[Row], current: LayoutKind, max: usize) -> Vec<Row> {
    let max = max.max(1);
    if rows.len() <= max {
        return rows.to_vec();
    }
    let mut shown = rows[..max].to_vec();
    if !shown.iter().any(|r| r.kind == current)
        && let Some(row) = rows.iter().find(|r| r.kind == current)
    {
        shown[max - 1] = row.clone();
    }
    shown
}

/// Height of one bar's row, in points, with room to spare, and the least the panel squeezes it
/// to (its type shrinks with it, from 13 to 11 points).
pub const ROW_HEIGHT: f32 = 17.0;
pub const MIN_ROW_HEIGHT: f32 = 12.0;

/// Paints the bars: name on the left, the bar, `ms · ≈N` on the right, the budget line across.
pub fn paint(ui: &mut egui::Ui, rows: &[Row], row_height: f32) {
    let width = ui.available_width();
    let (rect, _) = ui.allocate_exact_size(
        vec2(width, row_height * rows.len() as f32 + 4.0),
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
    let font = FontId::proportional((row_height - 3.0).clamp(11.0, 13.0));
    for (i, row) in rows.iter().enumerate() {
        let top = rect.top() + 2.0 + row_height * i as f32;
        let mid = top + row_height / 2.0;
        painter.text(
            pos2(rect.left(), mid),
            Align2::LEFT_CENTER,
            row.kind.name(),
            font.clone(),
            Color32::WHITE,
        );
        let bar = Rect::from_min_max(
            pos2(bars.left(), top + 2.0),
            pos2(x(row.ms).max(bars.left() + 2.0), top + row_height - 2.0),
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

/// The slide figure's size: 16:9, as a projector shows it.
pub const SVG_SIZE: (u32, u32) = (1600, 900);
/// The slide PNG's size: full HD.
pub const PNG_SIZE: (u32, u32) = (1920, 1080);

/// The scoreboard's SVG rasterized at [`PNG_SIZE`], as PNG bytes, in egui's own font (the
/// panel's), so the slide looks the same on every machine whatever fonts it has.
pub fn png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
    let family = fonts
        .faces()
        .next()
        .and_then(|face| face.families.first())
        .map(|(name, _)| name.clone())
        .ok_or("the built-in font did not load")?;
    fonts.set_sans_serif_family(family);
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| format!("the SVG: {e}"))?;
    let (width, height) = PNG_SIZE;
    let mut pixmap = tiny_skia::Pixmap::new(width, height).ok_or("an image of zero size")?;
    let scale = width as f32 / tree.size().width();
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("PNG encoding: {e}"))
}

/// The scoreboard as a 16:9 horizontal bar chart for a slide: fastest on top, each layout's
/// name beside its bar, `ms · ≈ what the budget allows` after it, the budget line across every
/// bar; type sized to read from the back of a room.
pub fn svg(rows: &[Row], n: usize, systems: Systems) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SVG_SIZE).into_drawing_area();
        let _ = root.fill(&plotters::style::WHITE);
        let bars = rows.len().max(1) as f32;
        // The slowest bar (or the budget) ends at 62% of the width: room for its value label.
        let top = rows.iter().map(|r| r.ms).fold(BUDGET_MS, f32::max) / 0.62;
        let caption = format!(
            "{}: p50 at {} · {BUDGET_MS:.2} ms budget · ≈N extrapolated",
            systems.name(),
            count_label(n)
        );
        if let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 40))
            .margin(28)
            .x_label_area_size(70)
            .y_label_area_size(360)
            .build_cartesian_2d(0f32..top, 0f32..bars)
        {
            let _ = chart
                .configure_mesh()
                .disable_y_mesh()
                .y_label_formatter(&|_| String::new())
                .x_desc("ms per frame")
                .axis_desc_style(("sans-serif", 26))
                .x_label_style(("sans-serif", 24))
                .draw();
            // Row i from the top spans [bars - i - 1, bars - i), with a gap above and below.
            let span = |i: usize| (bars - i as f32 - 0.88, bars - i as f32 - 0.12);
            let font = |size: i32, h: HPos| {
                TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(h, VPos::Center))
            };
            for (i, row) in rows.iter().enumerate() {
                let (lo, hi) = span(i);
                let [r, g, b] = row.color_rgb();
                let _ = chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, lo), (row.ms, hi)],
                    RGBColor(r, g, b).filled(),
                )));
                let centre = (lo + hi) / 2.0;
                let (x0, y) = chart.backend_coord(&(0.0, centre));
                let _ = root.draw_text(&row.label(), &font(30, HPos::Right), (x0 - 14, y));
                let (x1, _) = chart.backend_coord(&(row.ms, centre));
                let value = format!("{:.2} ms · ≈{}", row.ms, row.allows);
                let _ = root.draw_text(&value, &font(28, HPos::Left), (x1 + 12, y));
            }
            let _ = chart.draw_series(std::iter::once(PathElement::new(
                vec![(BUDGET_MS, 0.0), (BUDGET_MS, bars)],
                plotters::style::RED.stroke_width(4),
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
    fn the_csv_has_numbers_and_reads_back() {
        let mut stats = FrameStats::default();
        for (kind, ms) in [(LayoutKind::Soa, 1.19), (LayoutKind::Boxed, 8.0)] {
            stats.scoreboard.entry(kind).or_default().push(0.0, ms);
        }
        let rows = rows(&stats, 1_000_000);
        let text = csv(&rows, 1_000_000, "1");
        let back: Vec<CsvRow> = ::csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back[0].layout, "soa");
        assert_eq!(back[0].budget_allows_entities, rows[0].allows_entities);
        let allows = back[0].budget_allows_entities.unwrap();
        assert!((13_900_000..14_100_000).contains(&allows), "{allows}");
        assert_eq!(back[0].budget_allows, "14M");
        // A label with a quote and a comma survives the trip.
        let odd = CsvRow {
            label: "a \"quoted\", label".into(),
            ..back[1].clone()
        };
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        writer.serialize(&odd).unwrap();
        let bytes = writer.into_inner().unwrap();
        let again: CsvRow = ::csv::Reader::from_reader(&bytes[..])
            .deserialize()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(again, odd);
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
    fn a_short_scoreboard_keeps_the_fastest_and_the_current_layout() {
        let mut stats = FrameStats::default();
        let kinds = [
            (LayoutKind::Soa, 1.0),
            (LayoutKind::HecsTuned, 2.0),
            (LayoutKind::Flecs, 3.0),
            (LayoutKind::Boxed, 9.0),
        ];
        for (kind, ms) in kinds {
            stats.scoreboard.entry(kind).or_default().push(0.0, ms);
        }
        let all = rows(&stats, 1_000_000);
        let names = |rows: &[Row]| rows.iter().map(|r| r.kind).collect::<Vec<_>>();
        assert_eq!(fastest_and(&all, LayoutKind::Soa, 10), all);
        assert_eq!(
            names(&fastest_and(&all, LayoutKind::Soa, 2)),
            [LayoutKind::Soa, LayoutKind::HecsTuned]
        );
        // The current layout, slowest of all, takes the last place shown.
        assert_eq!(
            names(&fastest_and(&all, LayoutKind::Boxed, 2)),
            [LayoutKind::Soa, LayoutKind::Boxed]
        );
        assert_eq!(fastest_and(&all, LayoutKind::Boxed, 0).len(), 1);
    }

    /// `name="value"` of one SVG element's attribute, as a number.
    fn attr(element: &str, name: &str) -> Option<f32> {
        let start = element.find(&format!(" {name}=\""))? + name.len() + 3;
        let rest = &element[start..];
        rest[..rest.find('"')?].parse().ok()
    }

    #[test]
    fn every_label_sits_inside_its_bar_and_all_text_inside_the_figure() {
        let mut stats = FrameStats::default();
        // Six layouts, the slowest over the budget (the export that went wrong).
        for (kind, ms) in [
            (LayoutKind::Soa, 0.96),
            (LayoutKind::EcsTable, 1.43),
            (LayoutKind::Aos, 2.65),
            (LayoutKind::Boxed, 4.12),
            (LayoutKind::Dyn(12), 11.2),
            (LayoutKind::BoxedShuffled, 17.39),
        ] {
            stats.scoreboard.entry(kind).or_default().push(0.0, ms);
        }
        let rows = rows(&stats, 1_000_000);
        let svg = svg(&rows, 1_000_000, Systems::MOVE_REGEN);
        let (width, height) = (SVG_SIZE.0 as f32, SVG_SIZE.1 as f32);
        assert!(svg.contains(&format!("viewBox=\"0 0 {} {}\"", SVG_SIZE.0, SVG_SIZE.1)));
        assert!(
            svg.contains("p50 at 1M ·"),
            "the title's count is formatted"
        );
        assert!(
            svg.contains("extrapolated"),
            "the title says the bars' ≈N is extrapolated"
        );
        let lines: Vec<&str> = svg.lines().collect();
        // The bars: the rectangles filled with a budget colour, top to bottom.
        let colours: Vec<String> = rows
            .iter()
            .map(|r| {
                let [red, g, b] = r.color_rgb();
                format!("fill=\"#{red:02X}{g:02X}{b:02X}\"")
            })
            .collect();
        let bars: Vec<(f32, f32, f32)> = lines
            .iter()
            .filter(|l| {
                l.trim_start().starts_with("<rect") && colours.iter().any(|c| l.contains(c))
            })
            .map(|l| {
                let (x, y) = (attr(l, "x").unwrap(), attr(l, "y").unwrap());
                (
                    y,
                    y + attr(l, "height").unwrap(),
                    x + attr(l, "width").unwrap(),
                )
            })
            .collect();
        assert_eq!(bars.len(), rows.len(), "one bar per layout");
        // Every text: its anchor point, and its content on the next line.
        let texts: Vec<(f32, f32, &str, &str)> = lines
            .windows(2)
            .filter(|w| w[0].trim_start().starts_with("<text"))
            .map(|w| {
                let anchor = ["end", "middle"]
                    .into_iter()
                    .find(|a| w[0].contains(&format!("text-anchor=\"{a}\"")))
                    .unwrap_or("start");
                (
                    attr(w[0], "x").unwrap(),
                    attr(w[0], "y").unwrap(),
                    anchor,
                    w[1].trim(),
                )
            })
            .collect();
        for (i, row) in rows.iter().enumerate() {
            let (top, bottom, right) = bars[i];
            for label in [row.label(), format!("{:.2} ms · ≈{}", row.ms, row.allows)] {
                let (_, y, _, _) = texts
                    .iter()
                    .find(|t| t.3 == label)
                    .unwrap_or_else(|| panic!("no text {label}"));
                assert!(
                    (top..=bottom).contains(y),
                    "{label} at y {y}, its bar {top}..{bottom}"
                );
            }
            assert!(right < width, "{} ends at {right}", row.label());
        }
        // The budget line crosses every bar: from the lowest bar's bottom to the top one's top.
        let budget = lines
            .iter()
            .find(|l| l.contains("<polyline") && l.contains("#FF0000"))
            .expect("the budget line");
        let ys: Vec<f32> = budget
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .split_whitespace()
            .map(|p| p.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        let (line_top, line_bottom) = (
            ys.iter().cloned().fold(f32::MAX, f32::min),
            ys.iter().cloned().fold(0.0, f32::max),
        );
        assert!(line_top <= bars[0].0 && line_bottom >= bars[rows.len() - 1].1);
        // All text inside the figure, at a generous 0.6 em per character.
        for (x, y, anchor, content) in &texts {
            let size = 40.0;
            let w = content.chars().count() as f32 * size * 0.6;
            let (left, right) = match *anchor {
                "end" => (x - w, *x),
                "middle" => (x - w / 2.0, x + w / 2.0),
                _ => (*x, x + w),
            };
            assert!(
                left >= 0.0 && right <= width + 1.0 && (0.0..=height).contains(y),
                "{content:?} at {x},{y} leaves the {width}x{height} figure"
            );
        }
    }

    #[test]
    fn the_slide_png_is_full_hd_with_bars_and_text() {
        let mut stats = FrameStats::default();
        for (kind, ms) in [(LayoutKind::Soa, 2.0), (LayoutKind::Boxed, 20.0)] {
            stats.scoreboard.entry(kind).or_default().push(0.0, ms);
        }
        let bytes = png(&svg(
            &rows(&stats, 1_000_000),
            1_000_000,
            Systems::MOVE_REGEN,
        ))
        .unwrap();
        if let Some(dir) = std::env::var_os("SCOREBOARD_PNG_DIR") {
            std::fs::write(
                std::path::Path::new(&dir).join("scoreboard-test.png"),
                &bytes,
            )
            .unwrap();
        }
        let image = image::load_from_memory(&bytes).unwrap().to_rgb8();
        assert_eq!(image.dimensions(), PNG_SIZE);
        let count = |want: fn(&image::Rgb<u8>) -> bool| image.pixels().filter(|p| want(p)).count();
        // The green bar, the red one (over budget) and the budget line, and dark text.
        assert!(
            count(|p| p[1] > 150 && p[0] < 120 && p[2] < 150) > 5_000,
            "green bar"
        );
        assert!(
            count(|p| p[0] > 200 && p[1] < 110 && p[2] < 110) > 5_000,
            "red"
        );
        assert!(
            count(|p| p[0] < 60 && p[1] < 60 && p[2] < 60) > 2_000,
            "text"
        );
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
        let svg = svg(&rows, 100_000, Systems::MOVE_REGEN);
        // plotters writes each text's content on a line of its own.
        let texts = |label: &str| svg.lines().filter(|l| l.trim() == label).count();
        for row in &rows {
            assert_eq!(texts(&row.label()), 1, "{}", row.label());
        }
        assert_eq!(texts("soa · avx2"), 1);
        assert_eq!(texts("boxed"), 1);
    }
}

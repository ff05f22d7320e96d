//! HudPlugin: what the audience reads from the back of the room. With the panel hidden (`H`), a
//! large overlay on the world: the layout, the entity count, simulate ms and its share of the
//! 16.67 ms budget, and a sparkline of the last 10 s against the budget line. And, panel or not,
//! the caption a talk script sets with `say`.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use egui::{Align2, Color32, FontId, Rect, Sense, Stroke, pos2, vec2};

use super::UiState;
use super::render::PointsView;
use super::scoreboard::{BUDGET_MS, RED, budget_color, count_label};
use super::sim::Sim;
use super::stats::{FrameStats, WINDOW_S};

/// The caption over the world; empty for none.
#[derive(Resource, Default)]
pub struct Caption(pub String);

pub struct HudPlugin;

impl Plugin for HudPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Caption>()
            .add_systems(EguiPrimaryContextPass, overlays);
    }
}

/// A dark backing for text over a bright swarm.
const BACKING: Color32 = Color32::from_rgba_premultiplied(0, 0, 0, 185);

fn overlays(
    mut contexts: EguiContexts,
    sim: Res<Sim>,
    stats: Res<FrameStats>,
    ui_state: Res<UiState>,
    view: Res<PointsView>,
    caption: Res<Caption>,
    time: Res<Time<Real>>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    // The world rectangle, from physical pixels to egui points.
    let ppp = ctx.pixels_per_point();
    let [x, y, w, h] = view.viewport.map(|v| v / ppp);
    let world = Rect::from_min_size(pos2(x, y), vec2(w, h));
    if !caption.0.is_empty() {
        caption_area(ctx, world, &caption.0);
    }
    if !ui_state.panel_visible {
        hud(ctx, world, &sim, &stats, time.elapsed_secs_f64());
    }
    Ok(())
}

fn caption_area(ctx: &egui::Context, world: Rect, text: &str) {
    egui::Area::new("caption".into())
        .order(egui::Order::Foreground)
        .fixed_pos(pos2(world.center().x, world.bottom() - 24.0))
        .pivot(Align2::CENTER_BOTTOM)
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::new()
                .fill(BACKING)
                .corner_radius(8.0)
                .inner_margin(egui::Margin::symmetric(18, 10))
                .show(ui, |ui| {
                    ui.set_max_width(world.width() * 0.85);
                    ui.label(
                        egui::RichText::new(text)
                            .size(34.0)
                            .color(Color32::WHITE)
                            .strong(),
                    );
                });
        });
}

fn hud(ctx: &egui::Context, world: Rect, sim: &Sim, stats: &FrameStats, now: f64) {
    let simulate = stats
        .scoreboard
        .get(&sim.driver.swarm().kind())
        .map_or(stats.simulate.last(), |s| s.summary().0);
    egui::Area::new("hud".into())
        .order(egui::Order::Foreground)
        .fixed_pos(world.min + vec2(20.0, 20.0))
        .interactable(false)
        .show(ctx, |ui| {
            egui::Frame::new()
                .fill(BACKING)
                .corner_radius(10.0)
                .inner_margin(egui::Margin::same(16))
                .show(ui, |ui| {
                    let big = |ui: &mut egui::Ui, text: String, size: f32, color: Color32| {
                        ui.label(egui::RichText::new(text).size(size).color(color).strong());
                    };
                    big(
                        ui,
                        sim.driver.swarm().kind().label().into(),
                        40.0,
                        Color32::WHITE,
                    );
                    big(
                        ui,
                        format!("{} entities", count_label(sim.driver.swarm().len())),
                        34.0,
                        Color32::LIGHT_GRAY,
                    );
                    if sim.driver.systems().avoids() {
                        let swarm = sim.driver.swarm();
                        big(
                            ui,
                            format!(
                                "neighbours on · {} pass · stored by {}",
                                swarm.avoid_form(),
                                swarm.order()
                            ),
                            24.0,
                            Color32::from_rgb(255, 200, 120),
                        );
                    }
                    // What a speaker's gesture is doing, for the audience too.
                    for progress in sim.driver.progress() {
                        big(
                            ui,
                            progress.short_line(),
                            24.0,
                            Color32::from_rgb(120, 200, 255),
                        );
                    }
                    if let Some(note) = sim.device_note {
                        // No CPU time stands in for a GPU time that was not measured.
                        big(
                            ui,
                            format!("simulate on the GPU: not measured\n({note})"),
                            24.0,
                            Color32::from_rgb(240, 180, 60),
                        );
                        return;
                    }
                    big(
                        ui,
                        format!(
                            "simulate {simulate:.1} ms · {:.0}% of the budget",
                            100.0 * simulate / BUDGET_MS
                        ),
                        34.0,
                        budget_color(simulate),
                    );
                    if let Some(split) = super::stats::system_split(stats, sim.driver.systems()) {
                        big(ui, split, 24.0, Color32::LIGHT_GRAY);
                    }
                    sparkline(ui, stats, now, vec2(520.0, 110.0));
                });
        });
}

/// Simulate ms over the last 10 s, with the budget line; the scale keeps the line visible.
fn sparkline(ui: &mut egui::Ui, stats: &FrameStats, now: f64, size: egui::Vec2) {
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let painter = ui.painter_at(rect);
    let points: Vec<(f64, f32)> = stats.simulate.points().collect();
    let top_ms = points
        .iter()
        .map(|p| p.1)
        .fold(BUDGET_MS * 1.5, f32::max)
        .min(BUDGET_MS * 4.0);
    let to_screen = |t: f64, ms: f32| {
        let x = rect.right() - rect.width() * ((now - t) / WINDOW_S).clamp(0.0, 1.0) as f32;
        let y = rect.bottom() - rect.height() * (ms / top_ms).clamp(0.0, 1.0);
        pos2(x, y)
    };
    painter.rect_stroke(
        rect,
        4.0,
        Stroke::new(1.0, Color32::from_gray(90)),
        egui::StrokeKind::Inside,
    );
    let line: Vec<egui::Pos2> = points.iter().map(|&(t, ms)| to_screen(t, ms)).collect();
    painter.add(egui::Shape::line(
        line,
        Stroke::new(3.0, Color32::from_rgb(255, 180, 60)),
    ));
    let budget_y = to_screen(now, BUDGET_MS).y;
    painter.line_segment(
        [pos2(rect.left(), budget_y), pos2(rect.right(), budget_y)],
        Stroke::new(2.0, RED),
    );
    painter.text(
        pos2(rect.left() + 6.0, budget_y - 4.0),
        Align2::LEFT_BOTTOM,
        super::scoreboard::budget_label(),
        FontId::proportional(18.0),
        RED,
    );
}

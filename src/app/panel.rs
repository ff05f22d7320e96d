//! PanelPlugin: the egui side panel a speaker drives (layout, entity count, threads, churn, pause,
//! vsync), the live frame-time plot against the 16.67 ms budget, large readouts for a projector,
//! the per-layout scoreboard and memory. Aggregates only: never a row per entity.

use bevy::prelude::*;
use bevy::window::{PresentMode, PrimaryWindow};
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use egui::{Color32, RichText};
use egui_plot::{Bar, BarChart, HLine, Legend, Line, Plot, PlotPoints};

use entity_layouts::LayoutKind;
use entity_layouts::memory::resident_bytes;
use entity_layouts::threads::{Threads, core_count};

use super::render::PointsView;
use super::sim::Sim;
use super::stats::{FrameStats, WINDOW_S};
use super::{Canvas, UiState};

pub const BUDGET_MS: f32 = 1000.0 / 60.0;
const RED: Color32 = Color32::from_rgb(255, 90, 80);
const PRESETS: [(usize, &str); 5] = [
    (10_000, "10k"),
    (100_000, "100k"),
    (1_000_000, "1M"),
    (4_000_000, "4M"),
    (10_000_000, "10M"),
];

pub struct PanelPlugin;

impl Plugin for PanelPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(EguiPrimaryContextPass, panel)
            .add_systems(PostUpdate, fit_world_to_canvas);
    }
}

fn ms_color(ms: f32) -> Color32 {
    if ms > BUDGET_MS {
        RED
    } else {
        Color32::LIGHT_GREEN
    }
}

/// `12,345` -> `12.3k`, `5,412,169` -> `5.41M`: readable from the back of a room.
fn count_label(n: usize) -> String {
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

#[allow(clippy::too_many_arguments)]
fn panel(
    mut contexts: EguiContexts,
    mut sim: ResMut<Sim>,
    stats: Res<FrameStats>,
    mut ui_state: ResMut<UiState>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
    time: Res<Time<Real>>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    ctx.set_zoom_factor(ui_state.ui_scale);
    if !ui_state.panel_visible {
        ui_state.panel_width_px = 0.0;
        return Ok(());
    }
    let mut root = egui::Ui::new(
        ctx.clone(),
        "viewport".into(),
        egui::UiBuilder::new()
            .layer_id(egui::LayerId::background())
            .max_rect(ctx.viewport_rect()),
    );
    let response = egui::Panel::left("controls")
        .resizable(true)
        .default_size(340.0)
        .show(&mut root, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                controls(ui, &mut sim, &mut ui_state, &mut windows);
                ui.separator();
                readouts(ui, &sim, &stats);
                ui.separator();
                frame_plot(ui, &stats, time.elapsed_secs_f64());
                ui.separator();
                scoreboard(ui, &sim, &stats);
                ui.separator();
                memory(ui, &sim);
                if let Some(notice) = &sim.notice {
                    ui.separator();
                    let color = if notice.is_error { RED } else { Color32::GRAY };
                    ui.label(RichText::new(&notice.text).color(color));
                }
                ui.separator();
                ui.label(
                    RichText::new("keys: 1-9 layout · Up/Down count x2 / ÷2 · Space pause · H panel · F fullscreen")
                        .small()
                        .weak(),
                );
            });
        });
    ui_state.panel_width_px = response.response.rect.right() * ctx.pixels_per_point();
    Ok(())
}

fn controls(
    ui: &mut egui::Ui,
    sim: &mut Sim,
    ui_state: &mut UiState,
    windows: &mut Query<&mut Window, With<PrimaryWindow>>,
) {
    ui.heading("entity-layouts");
    // The layout asked for, even while its entities are still being copied into it.
    let current = sim.driver.requested_layout();
    egui::ComboBox::from_label("layout")
        .selected_text(current.label())
        .width(260.0)
        .show_ui(ui, |ui| {
            for (i, kind) in LayoutKind::ALL.into_iter().enumerate() {
                let key = if i < 9 {
                    format!("{} ", i + 1)
                } else {
                    "   ".into()
                };
                if ui
                    .selectable_label(kind == current, format!("{key}{}", kind.label()))
                    .clicked()
                {
                    sim.set_layout(kind);
                }
            }
        });
    if let Some(progress) = sim.driver.switch_progress() {
        ui.add(
            egui::ProgressBar::new(progress.copied as f32 / progress.len.max(1) as f32).text(
                format!(
                    "copying into {}: {} / {}",
                    progress.to.name(),
                    count_label(progress.copied),
                    count_label(progress.len),
                ),
            ),
        );
    }

    let mut count = ui_state.count_slider.max(1_000);
    let slider = ui.add(
        egui::Slider::new(&mut count, 1_000..=entity_layouts::driver::APP_MAX_ENTITIES)
            .logarithmic(true)
            .text("entities"),
    );
    ui_state.count_slider = count;
    // Apply when the drag ends, not on every pixel of it: each change re-seeds the tail.
    if slider.drag_stopped() || (slider.changed() && !slider.dragged()) {
        sim.set_count(count);
    }
    ui.horizontal(|ui| {
        for (n, label) in PRESETS {
            if ui.button(label).clicked() {
                ui_state.count_slider = n;
                sim.set_count(n);
            }
        }
    });
    if sim.growing() {
        let (len, target) = (sim.driver.swarm.len(), sim.driver.target());
        ui.add(
            egui::ProgressBar::new(len as f32 / target.max(1) as f32).text(format!(
                "spawning {} / {}",
                count_label(len),
                count_label(target)
            )),
        );
    }

    ui.horizontal(|ui| {
        ui.label("threads");
        let mut threads = sim.driver.threads;
        ui.radio_value(&mut threads, Threads::One, "1");
        ui.radio_value(
            &mut threads,
            Threads::All,
            format!("all ({})", core_count()),
        );
        sim.set_threads(threads);
    });
    let mut churn = sim.driver.churn();
    if ui
        .add(
            egui::Slider::new(&mut churn, 0..=entity_layouts::driver::MAX_CHURN)
                .logarithmic(true)
                .text("churn / frame"),
        )
        .changed()
    {
        sim.set_churn(churn);
    }
    ui.horizontal(|ui| {
        ui.checkbox(&mut sim.driver.paused, "pause");
        let mut vsync = ui_state.vsync;
        if ui.checkbox(&mut vsync, "vsync").changed() {
            ui_state.vsync = vsync;
            for mut window in windows.iter_mut() {
                window.present_mode = if vsync {
                    PresentMode::AutoVsync
                } else {
                    PresentMode::AutoNoVsync
                };
            }
        }
    });
    ui.add(egui::Slider::new(&mut ui_state.ui_scale, 0.75..=2.5).text("UI scale"));
}

fn readouts(ui: &mut egui::Ui, sim: &Sim, stats: &FrameStats) {
    // The active layout's steady frames only, so a switch shows the new layout's cost at once.
    let simulate = stats
        .scoreboard
        .get(&sim.driver.swarm.kind())
        .map_or(stats.simulate.last(), |s| s.summary().0);
    let n = sim.driver.swarm.len();
    ui.label(
        RichText::new(format!("simulate {simulate:.2} ms"))
            .size(28.0)
            .strong()
            .color(ms_color(simulate)),
    );
    ui.label(
        RichText::new(format!(
            "{:.0}% of the 16.67 ms budget · {} entities/ms",
            100.0 * simulate / BUDGET_MS,
            if simulate > 0.0 {
                count_label((n as f32 / simulate) as usize)
            } else {
                "-".into()
            }
        ))
        .size(16.0),
    );
    let (p50, p99, max) = stats.frame.summary();
    let last = stats.frame.last();
    ui.horizontal_wrapped(|ui| {
        ui.label("frame");
        for (name, v) in [("now", last), ("p50", p50), ("p99", p99), ("max", max)] {
            ui.label(RichText::new(format!("{name} {v:.1} ms")).color(ms_color(v)));
        }
    });
    ui.label(format!(
        "{} entities in {} · gather+upload {:.2} ms",
        count_label(n),
        sim.driver.swarm.kind().name(),
        stats.gather_upload.last()
    ));
}

fn frame_plot(ui: &mut egui::Ui, stats: &FrameStats, now: f64) {
    let line = |name: &str, series: &super::stats::Series, color: Color32| {
        let points: Vec<[f64; 2]> = series
            .points()
            .map(|(t, v)| [t - now, f64::from(v)])
            .collect();
        Line::new(name, PlotPoints::from(points))
            .color(color)
            .width(1.5)
    };
    Plot::new("frame_time")
        .height(210.0)
        .legend(Legend::default())
        .include_x(-WINDOW_S)
        .include_x(0.0)
        .include_y(0.0)
        .include_y(BUDGET_MS * 1.2)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .x_axis_label("seconds")
        .y_axis_label("ms")
        .show(ui, |plot| {
            plot.line(line("frame", &stats.frame, Color32::WHITE));
            plot.line(line(
                "simulate",
                &stats.simulate,
                Color32::from_rgb(255, 180, 60),
            ));
            plot.line(line(
                "gather+upload",
                &stats.gather_upload,
                Color32::from_rgb(90, 170, 255),
            ));
            plot.hline(HLine::new("16.67 ms (60 fps)", BUDGET_MS).color(RED));
            plot.hline(HLine::new("33.3 ms (30 fps)", 2.0 * BUDGET_MS).color(Color32::DARK_RED));
        });
}

fn scoreboard(ui: &mut egui::Ui, sim: &Sim, stats: &FrameStats) {
    let n = sim.driver.swarm.len();
    ui.label(
        RichText::new(format!(
            "scoreboard at {} entities: p50 simulate",
            count_label(n)
        ))
        .strong(),
    );
    let mut rows: Vec<(LayoutKind, f32)> = LayoutKind::ALL
        .into_iter()
        .filter_map(|k| Some((k, stats.scoreboard.get(&k)?.summary().0)))
        .filter(|(_, ms)| *ms > 0.0)
        .collect();
    if rows.is_empty() {
        ui.label(RichText::new("switch layouts to compare them here").weak());
        return;
    }
    rows.sort_by(|a, b| a.1.total_cmp(&b.1));
    let bars: Vec<Bar> = rows
        .iter()
        .enumerate()
        .map(|(i, (kind, ms))| {
            // Fastest on top, in the order of the list below.
            Bar::new(-(i as f64), f64::from(*ms))
                .name(kind.name())
                .fill(ms_color(*ms))
        })
        .collect();
    Plot::new("scoreboard")
        .height(24.0 * rows.len() as f32 + 30.0)
        .show_axes([true, false])
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .include_x(0.0)
        .show(ui, |plot| {
            plot.bar_chart(BarChart::new("simulate ms", bars).horizontal())
        });
    for (kind, ms) in rows {
        let allows = if n > 0 && ms > 0.0 {
            count_label((BUDGET_MS / (ms / n as f32)) as usize)
        } else {
            "-".into()
        };
        ui.label(format!(
            "{:<15} {ms:7.2} ms · the budget allows ≈ {allows} entities",
            kind.name()
        ));
    }
}

fn memory(ui: &mut egui::Ui, sim: &Sim) {
    let n = sim.driver.swarm.len();
    let (payload, allocated) = sim.driver.swarm.memory().per_entity(n);
    let rss = resident_bytes().map_or("-".into(), |b| {
        format!("{:.0} MiB", b as f64 / (1 << 20) as f64)
    });
    ui.label(format!(
        "memory: {payload:.0} B/entity payload, {allocated:.0} B/entity allocated · process resident {rss}"
    ));
}

/// Letterboxes the world rectangle into the part of the canvas the panel leaves free.
fn fit_world_to_canvas(canvas: Res<Canvas>, ui_state: Res<UiState>, mut view: ResMut<PointsView>) {
    let [w, h] = canvas.physical_size;
    let left = ui_state.panel_width_px.clamp(0.0, w - 1.0);
    let (aw, ah) = (w - left, h);
    let aspect =
        (entity_layouts::workload::WORLD_WIDTH / entity_layouts::workload::WORLD_HEIGHT) as f32;
    let (vw, vh) = if aw / ah > aspect {
        (ah * aspect, ah)
    } else {
        (aw, aw / aspect)
    };
    let next = PointsView {
        viewport: [left + (aw - vw) / 2.0, (ah - vh) / 2.0, vw, vh],
        dot_px: ui_state.dot_px,
    };
    if *view != next {
        *view = next;
    }
}

#[cfg(test)]
mod tests {
    use super::count_label;

    #[test]
    fn counts_read_well() {
        assert_eq!(count_label(10_000_000), "10M");
        assert_eq!(count_label(5_412_169), "5.41M");
        assert_eq!(count_label(308_263), "308k");
        assert_eq!(count_label(12_345), "12.3k");
        assert_eq!(count_label(100_000), "100k");
        assert_eq!(count_label(999), "999");
    }
}

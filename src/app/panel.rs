//! PanelPlugin: the egui side panel a speaker drives, sized to fit a 1280x720 projector at UI
//! scale 1 without scrolling: layout, entity count and presets, threads, SIMD, churn, pause; large
//! readouts; the frame-time plot against the 16.67 ms budget; the scoreboard of every layout
//! measured at this count; memory and the last notice. Every widget that changes something writes
//! a [`Request`], as keys and scripts do. Aggregates only: never a row per entity.

use bevy::prelude::*;
use bevy::window::{PresentMode, PrimaryWindow};
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use egui::{Color32, RichText};
use egui_plot::{HLine, Line, MarkerShape, Plot, PlotPoints, Points};

use entity_layouts::layout::seeking::PREFETCH_AHEAD;
use entity_layouts::layout::{LayoutKind, SeekKernel};
use entity_layouts::neighbours::AvoidForm;
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::action::{ClipRequest, ClipSettings};
use entity_layouts::runtime::progress::Work;
use entity_layouts::runtime::renderer::Renderer;
use entity_layouts::runtime::swarm::{MAX_CHURN, Order};
use entity_layouts::runtime::values::ResortAbove;
use entity_layouts::simd::{SimdChoice, SimdTier};
use entity_layouts::threads::{Threads, core_count};

use super::clip::Clip;
use super::render::{Drawing, PointsView};
use super::scoreboard::{self, BUDGET_MS, RED, budget_color, count_label};
use super::sim::{Request, Sim};
use super::stage::stage;
use super::stats::{FrameStats, Series, WINDOW_S, system_split};
use super::{Canvas, ResidentMemory, UiState};

const PRESETS: [(usize, &str); 5] = [
    (10_000, "10k"),
    (100_000, "100k"),
    (1_000_000, "1M"),
    (4_000_000, "4M"),
    (10_000_000, "10M"),
];

/// The panel's width in points: leaves a 1280-pixel window most of its width for the world.
const PANEL_WIDTH: f32 = 360.0;
/// The frame plot's height with room to spare, and the least it shrinks to.
pub const PLOT_HEIGHT: f32 = 140.0;
const MIN_PLOT_HEIGHT: f32 = 48.0;

const FRAME_COLOR: Color32 = Color32::WHITE;
const SIMULATE_COLOR: Color32 = Color32::from_rgb(255, 180, 60);
const GATHER_COLOR: Color32 = Color32::from_rgb(90, 170, 255);
/// Simulate's systems, drawn under it so that the audience sees which one breaks the budget.
const SYSTEM_COLORS: [(&str, Color32); 3] = [
    ("seek", Color32::from_rgb(120, 220, 120)),
    ("avoid", Color32::from_rgb(230, 110, 230)),
    ("move", Color32::from_rgb(200, 200, 120)),
];
/// Notes that a figure is missing or stood in for (no GPU time, the quads drawing for compute).
const AMBER: Color32 = Color32::from_rgb(240, 180, 60);

pub struct PanelPlugin;

impl Plugin for PanelPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(EguiPrimaryContextPass, panel)
            .add_systems(PostUpdate, fit_world_to_canvas);
    }
}

/// The warning the app logs when the panel's content is taller than the window; the app's test
/// asserts it never appears at 1280x720.
pub const OVERFLOW_WARNING: &str = "the panel's content does not fit the window";

#[allow(clippy::too_many_arguments)]
fn panel(
    mut contexts: EguiContexts,
    sim: Res<Sim>,
    stats: Res<FrameStats>,
    resident: Res<ResidentMemory>,
    mut ui_state: ResMut<UiState>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
    mut requests: MessageWriter<Request>,
    drawing: Res<Drawing>,
    time: Res<Time<Real>>,
    clip: Res<Clip>,
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
    let mut want = Vec::new();
    let response = egui::Panel::left("controls")
        .resizable(false)
        .exact_size(PANEL_WIDTH)
        .show(&mut root, |ui| {
            ui.spacing_mut().item_spacing.y = 3.0;
            // Scrolls only on a window smaller than a projector's; the content's height is
            // checked against the window's below.
            egui::ScrollArea::vertical().show(ui, |ui| {
                let recording = clip.elapsed();
                controls(
                    ui,
                    &sim,
                    &drawing,
                    &mut ui_state,
                    &mut windows,
                    recording,
                    &mut want,
                );
                ui.separator();
                readouts(ui, &sim, &stats, &drawing);
                ui.separator();
                frame_plot(ui, &stats, &mut ui_state, time.elapsed_secs_f64());
                ui.separator();
                scoreboard_section(
                    ui,
                    &sim,
                    &stats,
                    ui_state.row_height,
                    ui_state.scoreboard_rows,
                );
                ui.separator();
                footer(ui, &sim, &resident);
            })
        });
    requests.write_batch(want.into_iter().map(Request));
    let scroll = response.inner;
    let overflow = scroll.content_size.y - scroll.inner_rect.height();
    let fits = make_room(&mut ui_state, overflow, stats.scoreboard.len());
    if !fits && !ui_state.overflow_logged {
        ui_state.overflow_logged = true;
        eprintln!(
            "warning: {OVERFLOW_WARNING}: it needs {:.0} points, the window gives {:.0} (UI scale {})",
            scroll.content_size.y,
            scroll.inner_rect.height(),
            ui_state.ui_scale
        );
    }
    ui_state.panel_width_px = response.response.rect.right() * ctx.pixels_per_point();
    Ok(())
}

/// Gives the panel's content the room it needs, measured on the last frame: shrinks the frame
/// plot first, then the scoreboard's rows, then shows fewer bars; grows them back (with some
/// slack, so that they do not flicker) when room frees up. Returns false when even one bar at
/// its least does not fit.
fn make_room(ui_state: &mut UiState, overflow: f32, scoreboard_rows: usize) -> bool {
    use scoreboard::{MIN_ROW_HEIGHT, ROW_HEIGHT};
    let shown = scoreboard_rows.min(ui_state.scoreboard_rows);
    let rows = shown.max(1) as f32;
    if overflow > 0.5 {
        let need = overflow + 2.0;
        let from_plot = need.min(ui_state.plot_height - MIN_PLOT_HEIGHT);
        ui_state.plot_height -= from_plot;
        let rest = need - from_plot;
        if rest > 0.0 {
            let from_rows = (rest / rows).min(ui_state.row_height - MIN_ROW_HEIGHT);
            ui_state.row_height -= from_rows;
            let rest = rest - from_rows * rows;
            if rest > 0.5 {
                // One bar fewer per row's height short, and one for the "more" line.
                let fewer = (rest / MIN_ROW_HEIGHT).ceil() as usize + 1;
                ui_state.scoreboard_rows = shown.saturating_sub(fewer).max(1);
                return shown > 1;
            }
        }
    } else if overflow < -12.0 {
        let mut spare = -overflow - 8.0;
        if ui_state.scoreboard_rows < scoreboard_rows {
            // Bars come back first, at the least height, as long as a whole one fits.
            let more = (spare / MIN_ROW_HEIGHT).floor() as usize;
            if more > 0 {
                ui_state.scoreboard_rows = (shown + more).min(scoreboard_rows);
                return true;
            }
            return true;
        }
        let to_rows = (spare / rows).min(ROW_HEIGHT - ui_state.row_height);
        ui_state.row_height += to_rows;
        spare -= to_rows * rows;
        ui_state.plot_height = (ui_state.plot_height + spare.max(0.0)).min(PLOT_HEIGHT);
    }
    true
}

fn controls(
    ui: &mut egui::Ui,
    sim: &Sim,
    drawing: &Drawing,
    ui_state: &mut UiState,
    windows: &mut Query<&mut Window, With<PrimaryWindow>>,
    recording: Option<f64>,
    want: &mut Vec<Action>,
) {
    // The layout asked for, even while its entities are still being copied into it.
    let current = sim.driver.requested_layout();
    let key_of = |kind: LayoutKind| kind.row().key;
    ui.horizontal(|ui| {
        ui.label(RichText::new("layout").strong());
        egui::ComboBox::from_id_salt("layout")
            .selected_text(format!("[{}] {}", key_of(current), current.label()))
            .width(PANEL_WIDTH - 70.0)
            .show_ui(ui, |ui| {
                for kind in LayoutKind::ALL {
                    let unavailable = kind.is_gpu().then(gpu_unavailable).flatten();
                    let text = match &unavailable {
                        None => format!("[{}] {}", key_of(kind), kind.label()),
                        Some(_) => format!("[{}] {} (unavailable)", key_of(kind), kind.label()),
                    };
                    let item = ui.add_enabled(
                        unavailable.is_none(),
                        egui::Button::selectable(kind == current, text),
                    );
                    if let Some(reason) = unavailable {
                        item.on_disabled_hover_text(reason);
                    } else if item.clicked() {
                        want.push(Action::Layout(kind));
                    }
                }
            });
    });
    // Loading, a switch and growing, each with how far it has come and the time it has left.
    let progress = sim.driver.progress();
    for progress in &progress {
        ui.add(egui::ProgressBar::new(progress.fraction() as f32).text(progress.short_line()))
            .on_hover_text(progress.line());
        if let Work::Sorting(_) = progress.work {
            // What the library allows, so that "rebuilt" is not read as our choice alone.
            let kind = sim.driver.swarm().kind();
            ui.label(RichText::new(kind.row().family.how_it_sorts()).small());
        }
    }
    if drawing.software_adapter() && !progress.is_empty() {
        // On two cores a software rasterizer's threads take the CPU this copy needs, and a
        // switch takes far longer than its copying (switching.md, "Where the copying goes in
        // the window here"; docs/runs/app-gestures).
        ui.label(
            RichText::new("software rendering: drawing shares the CPU cores with this work")
                .small()
                .color(AMBER),
        )
        .on_hover_text(
            "the adapter is a CPU (Mesa's lavapipe or llvmpipe): its drawing threads run on the              cores that copy the entities, so a switch, a sort or a fill takes longer than with              a GPU; LP_NUM_THREADS=1 leaves more of the cores to the copy, at the cost of a              slower frame",
        );
    }

    // A `count until-over` search moves the count itself: the slider follows its probes, and
    // lands (once) on the count it found, then is the person's again.
    let found = sim.last_search.as_ref().map(|f| f.count);
    if sim.driver.searching() {
        ui_state.count_slider = sim.driver.target();
    } else if found.is_some() && found != ui_state.slider_synced_to {
        ui_state.count_slider = sim.driver.target();
        ui_state.slider_synced_to = found;
    }
    let mut count = ui_state.count_slider.max(1_000);
    let slider = ui.add(
        egui::Slider::new(&mut count, 1_000..=sim.max_count())
            .logarithmic(true)
            .custom_formatter(|n, _| count_label(n as usize))
            .text("entities"),
    );
    ui_state.count_slider = count;
    // Apply when the drag ends, not on every pixel of it: each change re-seeds the tail.
    if slider.drag_stopped() || (slider.changed() && !slider.dragged()) {
        want.push(Action::Count(count));
    }
    ui.horizontal(|ui| {
        for (n, label) in PRESETS {
            if ui.button(label).clicked() {
                ui_state.count_slider = n;
                want.push(Action::Count(n));
            }
        }
    });

    ui.horizontal(|ui| {
        ui.label("threads");
        let mut threads = sim.driver.threads();
        ui.radio_value(&mut threads, Threads::One, "1");
        let all = ui.radio_value(
            &mut threads,
            Threads::All,
            format!("all ({})", core_count()),
        );
        if let Some(how) = current.parallel_note() {
            all.on_hover_text(format!("{}: {how}", current.name()));
        }
        if threads != sim.driver.threads() {
            want.push(Action::Threads(threads));
        }
        ui.separator();
        let mut paused = sim.driver.paused();
        if ui.checkbox(&mut paused, "pause").changed() {
            want.push(Action::Pause(paused));
        }
        let mut memory = ui_state.memory_visible;
        if ui
            .checkbox(&mut memory, "memory")
            .on_hover_text("where the entities sit, cache line by cache line (M)")
            .changed()
        {
            want.push(Action::ShowMemory(memory));
        }
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
    ui.horizontal(|ui| {
        ui.label("systems").on_hover_text(
            "move and regen read each entity's own fields; seek reads another entity's position through the handle the layout holds, and steers toward it (T); avoid reads every entity near it, through a grid (N)",
        );
        let mut seek = sim.driver.systems().seeks();
        ui.radio_value(&mut seek, false, "move + regen");
        ui.radio_value(&mut seek, true, "+ seek (T)");
        if seek != sim.driver.systems().seeks() {
            want.push(Action::Seek(seek));
        }
        let mut avoid = sim.driver.systems().avoids();
        if ui.checkbox(&mut avoid, "+ avoid (N)").changed() {
            want.push(Action::Avoid(avoid));
        }
    });
    seek_kernel_controls(ui, sim, want);
    neighbour_controls(ui, sim, want);
    order_controls(ui, sim, want);
    ui.horizontal(|ui| {
        ui.label("SIMD").on_hover_text(
            "the instruction set of the soa, chunks, aos and tuned ECS kernels (S); every tier computes the same bits",
        );
        let mut simd = sim.driver.simd();
        ui.radio_value(&mut simd, SimdChoice::Baseline, "baseline");
        ui.radio_value(
            &mut simd,
            SimdChoice::Best,
            format!("best ({})", SimdTier::best().name()),
        );
        if simd != sim.driver.simd() {
            want.push(Action::Simd(simd));
        }
        renderer_picker(ui, drawing, want);
    });
    ui.horizontal(|ui| {
        let mut churn = sim.driver.churn();
        if ui
            .add(
                egui::Slider::new(&mut churn, 0..=MAX_CHURN)
                    .logarithmic(true)
                    .custom_formatter(|n, _| count_label(n as usize))
                    .text("churn"),
            )
            .changed()
        {
            want.push(Action::Churn(churn));
        }
        ui.add(
            egui::DragValue::new(&mut ui_state.ui_scale)
                .range(0.5..=3.0)
                .speed(0.01)
                .prefix("UI ×"),
        );
        if ui
            .button("export")
            .on_hover_text(
                "screenshot, the last 10 s of frames and the scoreboard, into a new folder (E)",
            )
            .clicked()
        {
            want.push(Action::Export);
        }
        clip_button(ui, recording, want);
    });
}

/// Starts or stops a clip (R); while one records, the button says for how long, in red.
/// The storage order: by id, or each seeker beside its target (O); and how far churn has
/// spread them out again since.
/// The seek kernel, and a line where the layout has only the idiomatic one.
fn seek_kernel_controls(ui: &mut egui::Ui, sim: &Sim, want: &mut Vec<Action>) {
    let swarm = sim.driver.swarm();
    let asked = swarm.seek_kernel();
    ui.horizontal(|ui| {
        ui.label("seek kernel").on_hover_text(format!(
            "idiomatic: each seeker reads its target through its handle, as a user of the storage writes it; tuned: every handle resolved to a dense index once (again after a spawn or removal), the targets prefetched {PREFETCH_AHEAD} seekers ahead, and the arithmetic without branches. The same results either way (K)"
        ));
        let mut kernel = asked;
        ui.radio_value(&mut kernel, SeekKernel::Idiomatic, "idiomatic");
        ui.radio_value(&mut kernel, SeekKernel::Tuned, "tuned (K)");
        if kernel != asked {
            want.push(Action::SeekKernel(kernel));
        }
    });
    if asked == SeekKernel::Tuned && swarm.seek_kernel_in_use() != SeekKernel::Tuned {
        let with: Vec<&str> = LayoutKind::CPU
            .into_iter()
            .filter(|k| k.has_tuned_seek())
            .map(LayoutKind::name)
            .collect();
        ui.label(
            RichText::new(format!(
                "{} has no tuned seek and runs its own; {} do",
                swarm.kind().name(),
                with.join(", ")
            ))
            .color(AMBER),
        );
    }
}

/// The neighbour system's form (J) and what it found in the last frame, on one row while it
/// runs (the systems row turns it on, N).
fn neighbour_controls(ui: &mut egui::Ui, sim: &Sim, want: &mut Vec<Action>) {
    if !sim.driver.systems().avoids() {
        return;
    }
    let swarm = sim.driver.swarm();
    let counts = swarm.neighbour_counts();
    ui.horizontal(|ui| {
        ui.label("neighbours").on_hover_text(format!(
            "avoid: each entity is pushed away from every entity within a radius, found through a grid rebuilt every frame. Last pass: radius {:.2}, {} cells, {:.1} neighbours per entity (most {}), {:.1} tested",
            counts.radius,
            count_label(counts.cells),
            counts.neighbours_per_entity(),
            counts.most,
            counts.candidates_per_entity()
        ));
        let mut form = swarm.avoid_form();
        ui.radio_value(&mut form, AvoidForm::Idiomatic, "idiomatic")
            .on_hover_text("each candidate's position read through the layout, as a user of the storage writes it");
        ui.radio_value(&mut form, AvoidForm::Tuned, "tuned (J)")
            .on_hover_text("positions copied into the grid's own array in cell order once a frame; the pass walks the cells in order");
        if form != swarm.avoid_form() {
            want.push(Action::AvoidForm(form));
        }
        ui.label(format!("{:.1} each", counts.neighbours_per_entity()));
    });
}

fn order_controls(ui: &mut egui::Ui, sim: &Sim, want: &mut Vec<Action>) {
    let asked = sim.driver.requested_order();
    ui.horizontal(|ui| {
        ui.label("order").on_hover_text(
            "where each entity sits in storage: by id, as they are born; by seek group, each seeker beside its target (O); or by cell, entities near in the world near in storage, until motion scatters them (C); sorting rebuilds the storage over a share of each frame, like a switch",
        );
        let mut order = asked;
        ui.radio_value(&mut order, Order::Id, "by id");
        ui.radio_value(&mut order, Order::Group, "by group (O)");
        ui.radio_value(&mut order, Order::Cell, "by cell (C)");
        if order != asked {
            want.push(Action::Order(order));
        }
    })
    .response
    .on_hover_text(format!(
        "{}: {}",
        sim.driver.swarm().kind().name(),
        sim.driver.swarm().kind().row().family.how_it_sorts()
    ));
    // One row: how far the targets strayed, and the re-sort that acts on it.
    ui.horizontal(|ui| {
        if let Some((spread, slots, _)) = sim.spread {
            ui.label(format!("strayed: {:.0}%", 100.0 * spread.far))
                .on_hover_text(format!(
                    "targets outside their group's stretch: of the seekers whose target is alive, the share stored more than {slots} slots (the population over its 65 seek groups) from it, sampled twice a second: near 100% in id order, 0% just sorted by group; churn appends spawns and swaps removals, and spreads them out again"
                ));
        }
        resort_controls(ui, sim, want);
    });
}

/// The optional re-sort: off by default; on, a population sorted by group is sorted again
/// once more than the threshold's share of its targets has strayed.
fn resort_controls(ui: &mut egui::Ui, sim: &Sim, want: &mut Vec<Action>) {
    let current = sim.driver.resort();
    let mut on = current.is_some();
    let mut percent = current.unwrap_or(ResortAbove::DEFAULT).percent();
    ui.checkbox(&mut on, "re-sort past").on_hover_text(
        "sort by group again, over a share of each frame, whenever churn has spread more than this share of the targets outside their group's stretch (checked every 30 frames while sorted by group; off by default)",
    );
    ui.add_enabled(
        on,
        egui::DragValue::new(&mut percent)
            .range(ResortAbove::MIN..=ResortAbove::MAX)
            .suffix("%"),
    );
    let wanted = if on { ResortAbove::new(percent) } else { None };
    if wanted != current {
        want.push(Action::Resort(wanted));
    }
}

fn clip_button(ui: &mut egui::Ui, recording: Option<f64>, want: &mut Vec<Action>) {
    let (label, request) = match recording {
        Some(s) => (
            RichText::new(format!("■ {s:.0} s")).color(RED),
            ClipRequest::Stop,
        ),
        None => (
            RichText::new("rec"),
            ClipRequest::Start(ClipSettings::default()),
        ),
    };
    if ui
        .button(label)
        .on_hover_text(
            "an animated PNG of the window at the frame rate the app runs, into the export folder (R)",
        )
        .clicked()
    {
        want.push(Action::Record(request));
    }
}

/// The renderer selector, on the SIMD row (a row of its own would not fit 720 lines at UI scale
/// 1.25): which renderer draws, and, where compute cannot, that the quads stand in and why.
fn renderer_picker(ui: &mut egui::Ui, drawing: &Drawing, want: &mut Vec<Action>) {
    ui.separator();
    ui.label("draw").on_hover_text(
        "how the points are drawn (D): compute adds them into a per-pixel buffer with atomics; \
         quads, the control, rasterizes one instanced quad per point",
    );
    let selected = match drawing.fallback_reason() {
        Some(_) => RichText::new("quads (fallback)").color(AMBER),
        None => RichText::new(drawing.in_use.name()),
    };
    let combo = egui::ComboBox::from_id_salt("renderer")
        .selected_text(selected)
        .width(80.0)
        .show_ui(ui, |ui| {
            for renderer in Renderer::BOTH {
                let blocked = (renderer == Renderer::Compute)
                    .then_some(drawing.compute_blocked.as_deref())
                    .flatten();
                let item = ui.add_enabled(
                    blocked.is_none(),
                    egui::Button::selectable(drawing.requested == renderer, renderer.name()),
                );
                if let Some(reason) = blocked {
                    item.on_disabled_hover_text(reason);
                } else if item.clicked() && renderer != drawing.requested {
                    want.push(Action::Renderer(renderer));
                }
            }
        });
    if let Some(reason) = drawing.fallback_reason() {
        combo
            .response
            .on_hover_text(format!("the compute renderer cannot draw here: {reason}"));
    }
}

/// Why the gpu layout cannot run here, if it cannot (no adapter, no compute).
fn gpu_unavailable() -> Option<String> {
    entity_layouts::runtime::gpu::context::availability().err()
}

fn readouts(ui: &mut egui::Ui, sim: &Sim, stats: &FrameStats, drawing: &Drawing) {
    // The active layout's steady frames only, so a switch shows the new layout's cost at once.
    let simulate = stats
        .scoreboard
        .get(&sim.driver.swarm().kind())
        .map_or(stats.simulate.last(), |s| s.summary().0);
    let n = sim.driver.swarm().len();
    if let Some(note) = sim.device_note {
        // No CPU time stands in for a GPU time that was not measured.
        ui.label(
            RichText::new(format!("simulate on the GPU: not measured ({note})"))
                .size(16.0)
                .color(AMBER),
        );
    } else {
        ui.horizontal(|ui| {
            ui.label(
                RichText::new(format!("simulate {simulate:.2} ms"))
                    .size(26.0)
                    .strong()
                    .color(budget_color(simulate)),
            );
            ui.label(
                RichText::new(format!("{:.0}%", 100.0 * simulate / BUDGET_MS))
                    .size(26.0)
                    .color(budget_color(simulate)),
            );
        });
        ui.label(
            RichText::new(format!(
                "of the {} budget · {} in {} · {} entities/ms",
                scoreboard::budget_label(),
                count_label(n),
                sim.driver.swarm().kind().name(),
                if simulate > 0.0 {
                    count_label((n as f32 / simulate) as usize)
                } else {
                    "-".into()
                }
            ))
            .size(14.0),
        );
        if let Some(split) = system_split(stats, sim.driver.systems()) {
            ui.label(RichText::new(split).size(14.0));
        }
    }
    let (p50, p99, _) = stats.frame.summary();
    ui.horizontal_wrapped(|ui| {
        ui.label("frame");
        for (name, v) in [("now", stats.frame.last()), ("p50", p50), ("p99", p99)] {
            ui.label(RichText::new(format!("{name} {v:.1}")).color(budget_color(v)));
        }
        ui.label(format!(
            "ms · gather+upload {:.2} ms",
            stats.gather_upload.last()
        ));
        if drawing.timestamps_miss_compute() {
            // A number that leaves out most of the work is worse than none.
            ui.label("· draw: in the rest").on_hover_text(
                "a software adapter's timestamps leave out compute dispatches: the compute \
                 renderer's time is in the frame's rest (frame - simulate - gather)",
            );
        } else if stats.draw.points().next().is_some() {
            ui.label(format!("· draw {:.2} ms GPU", stats.draw.summary().0))
                .on_hover_text("the points' passes on the GPU, p50 (timestamp queries)");
        }
    });
}

/// The y-axis top: at least three budgets, at most six, p99 in between, so the budget line always
/// reads; frames above it are drawn at the top, marked in red.
fn plot_cap(p99: f32) -> f64 {
    f64::from((p99 * 1.1).clamp(3.0 * BUDGET_MS, 6.0 * BUDGET_MS))
}

/// The systems' series, in [`SYSTEM_COLORS`]' order.
fn systems(stats: &FrameStats) -> [&Series; 3] {
    [&stats.seek, &stats.avoid, &stats.moving]
}

fn frame_plot(ui: &mut egui::Ui, stats: &FrameStats, ui_state: &mut UiState, now: f64) {
    // The legend sits above the plot, never on the data.
    let budget = scoreboard::budget_label();
    ui.horizontal(|ui| {
        for (name, color) in [
            ("frame", FRAME_COLOR),
            ("simulate", SIMULATE_COLOR),
            ("gather+upload", GATHER_COLOR),
            (budget.as_str(), RED),
        ] {
            ui.label(RichText::new(format!("■ {name}")).color(color).small());
        }
        for ((name, color), series) in SYSTEM_COLORS.into_iter().zip(systems(stats)) {
            if series.points().next().is_some() {
                ui.label(RichText::new(format!("─ {name}")).color(color).small());
            }
        }
        ui.checkbox(&mut ui_state.plot_log, RichText::new("log").small());
    });
    let log = ui_state.plot_log;
    let (_, p99, _) = stats.frame.summary();
    let cap = plot_cap(p99);
    // On the log axis values are drawn as log10(ms), from 0.01 ms to 10 s.
    let y = |ms: f64| {
        if log {
            ms.max(0.01).log10()
        } else {
            ms.min(cap)
        }
    };
    let (y_min, y_max) = if log { (-2.0, 4.0) } else { (0.0, cap * 1.04) };
    let line = |name: &str, series: &Series, color: Color32| {
        let points: Vec<[f64; 2]> = series
            .points()
            .map(|(t, v)| [t - now, y(f64::from(v))])
            .collect();
        Line::new(name, PlotPoints::from(points))
            .color(color)
            .width(1.5)
    };
    let clipped: Vec<[f64; 2]> = if log {
        Vec::new()
    } else {
        stats
            .frame
            .points()
            .filter(|&(_, v)| f64::from(v) > cap)
            .map(|(t, _)| [t - now, cap])
            .collect()
    };
    Plot::new("frame_time")
        .height(ui_state.plot_height)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_x(false)
        .y_axis_min_width(28.0)
        .y_axis_formatter(move |mark, _| {
            if log {
                format!("{}", 10f64.powf(mark.value))
            } else {
                format!("{:.0}", mark.value)
            }
        })
        .show(ui, |plot| {
            plot.set_plot_bounds_x(-WINDOW_S..=0.0);
            plot.set_plot_bounds_y(y_min..=y_max);
            plot.line(line("frame", &stats.frame, FRAME_COLOR));
            plot.line(line("simulate", &stats.simulate, SIMULATE_COLOR));
            plot.line(line("gather+upload", &stats.gather_upload, GATHER_COLOR));
            for ((name, color), series) in SYSTEM_COLORS.into_iter().zip(systems(stats)) {
                if series.points().next().is_some() {
                    plot.line(line(name, series, color).width(1.0));
                }
            }
            plot.hline(HLine::new(scoreboard::budget_label(), y(f64::from(BUDGET_MS))).color(RED));
            plot.hline(
                HLine::new("33.3 ms", y(2.0 * f64::from(BUDGET_MS))).color(Color32::DARK_RED),
            );
            if !clipped.is_empty() {
                plot.points(
                    Points::new("above the axis", PlotPoints::from(clipped))
                        .shape(MarkerShape::Up)
                        .radius(3.0)
                        .color(RED),
                );
            }
        });
}

fn scoreboard_section(
    ui: &mut egui::Ui,
    sim: &Sim,
    stats: &FrameStats,
    row_height: f32,
    max_rows: usize,
) {
    let n = sim.driver.swarm().len();
    let all = scoreboard::rows(stats, n);
    let rows = scoreboard::fastest_and(&all, sim.driver.swarm().kind(), max_rows);
    ui.label(
        RichText::new(format!(
            "scoreboard, {}, at {} entities · simulate p50 · ≈ N extrapolated to {}",
            stats.board_systems.name(),
            count_label(n),
            scoreboard::budget_label()
        ))
        .strong()
        .small(),
    );
    if rows.is_empty() {
        ui.label(
            RichText::new("switch layouts (keys 1-9, 0, -, =, Shift+1-6, G) to compare them here")
                .weak(),
        );
    } else {
        scoreboard::paint(ui, &rows, row_height);
        if rows.len() < all.len() {
            ui.label(
                RichText::new(format!(
                    "+{} slower not shown (room); the export (E) has them all",
                    all.len() - rows.len()
                ))
                .small()
                .weak(),
            );
        }
    }
    if sim.driver.swarm().kind().is_gpu() && sim.device_note.is_some() {
        // The gpu layout gets no bar rather than a CPU time dressed as its own; the readout
        // above says why, so one line is enough here.
        ui.label(
            RichText::new("gpu: no bar, its simulate time is not measured (see above)")
                .small()
                .color(AMBER),
        );
    }
}

fn footer(ui: &mut egui::Ui, sim: &Sim, resident: &ResidentMemory) {
    let n = sim.driver.swarm().len();
    let memory = sim.driver.swarm().memory();
    let (payload, allocated) = memory.per_entity(n);
    let mib = |bytes: u64| bytes as f64 / (1 << 20) as f64;
    let how = if memory.modelled { ", modelled" } else { "" };
    ui.label(
        RichText::new(format!(
            "storage {:.0} MiB{how} ({payload:.0} B/entity, {allocated:.0} allocated) · process {}",
            mib(memory.allocated_bytes),
            resident.label()
        ))
        .small(),
    )
    .on_hover_text(
        "storage: what the layout holds, which follows the count down as well as up; \
         \"modelled\" where no library call reports it and the figure is the storage's design \
         (an ECS library's tables) or the allocator's rounding (one box per entity). \
         process: resident memory, which also holds the renderer's own (on a software \
         renderer such as lavapipe, its copies of the points) and what the allocator keeps",
    );
    if let Some(notice) = &sim.notice {
        let color = if notice.is_error { RED } else { Color32::GRAY };
        ui.label(RichText::new(&notice.text).color(color).small());
    }
    ui.label(
        RichText::new(
            "keys: 1-9 0 - = Shift+1-6 G layout · Up/Down count x2 /2 · Space pause · T seek · K seek kernel · N neighbours · J neighbour pass · O order by group · C by cell · S SIMD · D draw · H panel/HUD · M memory · E export · R record · F fullscreen",
        )
        .small()
        .weak(),
    );
}

/// Places the world on the stage the panel and the memory view leave it.
fn fit_world_to_canvas(canvas: Res<Canvas>, ui_state: Res<UiState>, mut view: ResMut<PointsView>) {
    let next = PointsView {
        // The points are drawn after egui: the world must not overlap the memory view.
        viewport: stage(
            canvas.physical_size,
            ui_state.panel_width_px,
            ui_state.memory_visible,
        )
        .world,
        dot_px: ui_state.dot_px,
    };
    if *view != next {
        *view = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plot_keeps_the_budget_line_readable() {
        assert_eq!(plot_cap(5.0), f64::from(3.0 * BUDGET_MS));
        assert_eq!(plot_cap(600.0), f64::from(6.0 * BUDGET_MS));
        let mid = plot_cap(70.0);
        assert!(mid > 70.0 && mid < 80.0, "{mid}");
    }
}

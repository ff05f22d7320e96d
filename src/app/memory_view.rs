//! MemoryViewPlugin: where the layout's entities really are, drawn from the layout's own
//! storage (`Layout::regions`: live addresses, never a table typed by hand), so a speaker can
//! show the cache lines instead of drawing them on a slide. `M`, the panel's checkbox or a
//! script's `memory show` toggle it. It shares the stage with the world ([`super::stage`]): its
//! readings beside the world, in the panel's readout size, its picture across the width below.
//!
//! - Contiguous layouts (soa, aos, ecs-*): 64 consecutive entities, one row per 64-byte cache
//!   line, each byte coloured by the field it holds; the bytes `move` reads outlined in white,
//!   `regen`'s in yellow; and the lines `move` must bring in for these 64 entities.
//! - Boxed and dyn layouts: each entity's address against its index for 2,048 entities (a
//!   staircase in allocation order, a scatter once shuffled) and the median step between
//!   neighbours.
//! - The gpu layout: its buffers from the same description (device offsets, not addresses).
//!
//! Below it, the layout's effective bandwidth (the bytes a frame must touch over the simulate
//! time) against this machine's streaming limit, measured once at start-up on a thread of its own.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use egui::{Align2, Color32, FontId, Rect, RichText, Sense, Stroke, StrokeKind, Vec2, pos2, vec2};

use entity_layouts::layout::Footprint;
use entity_layouts::layout::LayoutKind;
use entity_layouts::layout::regions::{Field, Region, cache_lines, entity_starts, median_stride};
use entity_layouts::threads::{Threads, core_count};
use entity_layouts::tools::bandwidth::{
    FRAME_BYTES_F32, StreamLimit, effective_gbs, measure_limit,
};

use super::scoreboard::count_label;
use super::sim::Sim;
use super::stage::stage;
use super::stats::FrameStats;
use super::{Canvas, UiState};

/// Entities in the cache-line picture: 64 of them fill whole lines in every layout.
const WINDOW: usize = 64;
/// Entities in the address scatter of the boxed layouts.
const SCATTER: usize = 2048;
/// Boxes drawn byte by byte under the scatter.
const BOXES_UP_CLOSE: usize = 8;
/// The most cache lines drawn; the rest are counted.
const MAX_ROWS: usize = 60;
const LABEL_W: f32 = 54.0;
/// Room under the grid for its notes (addresses, "more lines", how the bandwidth is computed).
const NOTE_H: f32 = 60.0;
/// The view's key sentences (what a system brings in, the bandwidth share), in pixels at UI
/// scale 1: the panel's readout size, legible from the back of the room at 720 lines.
const KEY_PX: f32 = 17.0;
const TITLE_PT: f32 = 15.0;
/// Elements per array of the start-up triad: 3 x 128 MiB, as the bench's `bandwidth`.
const STREAM_ELEMENTS: usize = 16 << 20;

const BACKING: Color32 = Color32::from_rgba_premultiplied(10, 10, 14, 225);
const OTHER: Color32 = Color32::from_rgb(48, 48, 56);
const MOVE_OUTLINE: Color32 = Color32::WHITE;
const REGEN_OUTLINE: Color32 = Color32::from_rgb(255, 220, 60);
const SEEK_OUTLINE: Color32 = Color32::from_rgb(120, 200, 255);

pub fn field_color(field: Field) -> Color32 {
    let [r, g, b] = field.rgb();
    Color32::from_rgb(r, g, b)
}

pub struct MemoryViewPlugin;

impl Plugin for MemoryViewPlugin {
    fn build(&self, app: &mut App) {
        app.insert_resource(StreamProbe::start())
            .add_systems(EguiPrimaryContextPass, memory_view);
    }
}

/// This machine's streaming limit, measured once on a thread of its own while the app starts.
#[derive(Resource, Clone)]
pub struct StreamProbe(Arc<Mutex<Option<StreamLimit>>>);

impl StreamProbe {
    fn start() -> Self {
        let slot = Arc::new(Mutex::new(None));
        let out = slot.clone();
        let spawned = std::thread::Builder::new()
            .name("stream-limit".into())
            .spawn(move || {
                let limit = measure_limit(STREAM_ELEMENTS, 5, core_count());
                *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(limit);
            });
        if let Err(e) = spawned {
            warn!("cannot measure the streaming limit: {e}");
        }
        Self(slot)
    }

    pub fn get(&self) -> Option<StreamLimit> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn memory_view(
    mut contexts: EguiContexts,
    sim: Res<Sim>,
    stats: Res<FrameStats>,
    canvas: Res<Canvas>,
    mut ui_state: ResMut<UiState>,
    probe: Res<StreamProbe>,
) -> Result {
    if !ui_state.memory_visible {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let ppp = ctx.pixels_per_point();
    let placed = stage(canvas.physical_size, ui_state.panel_width_px, true);
    let (Some(readings), Some(picture)) = (placed.readings, placed.picture) else {
        return Ok(());
    };
    let rect = |[x, y, w, h]: [f32; 4]| {
        Rect::from_min_size(pos2(x / ppp, y / ppp), vec2(w / ppp, h / ppp))
    };
    let kind = sim.driver.swarm().kind();
    let shown = Shown::of(&sim, kind);
    let over_readings = part(ctx, "memory view: readings", rect(readings), |ui| {
        readings_part(ui, &shown, &sim, &stats, kind, probe.get());
    });
    let over_picture = part(ctx, "memory view: picture", rect(picture), |ui| {
        picture_part(ui, &shown, kind, sim.driver.swarm().len(), probe.get());
    });
    for (over, what) in [(over_readings, "readings"), (over_picture, "picture")] {
        if over > 1.0 && !ui_state.memory_overflow_logged {
            ui_state.memory_overflow_logged = true;
            eprintln!(
                "warning: the memory view's {what} part does not fit the window: {over:.0} points over ({kind}, UI scale {})",
                ui_state.ui_scale
            );
        }
    }
    Ok(())
}

/// The key sentences' size in points: 17 px at UI scale 1, growing with the square root of the
/// scale (19 px at 1.25), so that a larger UI scale, which the panel needs, still leaves the
/// sentences room beside the world.
fn key_pt(ui: &egui::Ui) -> f32 {
    KEY_PX / ui.ctx().pixels_per_point().sqrt()
}

/// One part of the view, filling its place on the stage; how many points its content needed
/// beyond it.
fn part(
    ctx: &egui::Context,
    id: &'static str,
    place: Rect,
    add: impl FnOnce(&mut egui::Ui),
) -> f32 {
    let margin = 10.0;
    let shown = egui::Area::new(id.into())
        .order(egui::Order::Foreground)
        .fixed_pos(place.min)
        .interactable(false)
        .show(ctx, |ui| {
            ui.set_clip_rect(place);
            egui::Frame::new()
                .fill(BACKING)
                .inner_margin(egui::Margin::same(margin as i8))
                .show(ui, |ui| {
                    let inner = place.size() - vec2(2.0 * margin, 2.0 * margin);
                    ui.set_min_size(inner);
                    ui.set_max_width(inner.x);
                    ui.spacing_mut().item_spacing.y = 4.0;
                    add(ui);
                });
        });
    shown.response.rect.bottom() - place.bottom()
}

/// What the view shows of the layout: its storage for the first entities.
enum Shown {
    /// A contiguous layout (or the gpu layout's description): one row per cache line.
    Lines {
        regions: Vec<Region>,
        addressing: &'static str,
    },
    /// Boxes on the heap: every shown entity's box, and the first ones byte by byte.
    Boxes {
        regions: Vec<Region>,
        up_close: Vec<Region>,
        /// Each entity's first byte, and the scale the scatter and its reading share.
        starts: Vec<usize>,
        range: Option<AddressRange>,
    },
}

impl Shown {
    fn of(sim: &Sim, kind: LayoutKind) -> Self {
        let n = sim.driver.swarm().len();
        // Entities in boxes of their own are drawn by address; the rest, cache line by line.
        let row = kind.row();
        if row.device {
            Shown::Lines {
                regions: gpu_description(n.min(WINDOW)),
                addressing: "buffer",
            }
        } else if row.footprint == Footprint::Boxes {
            let regions = sim.driver.swarm().regions(0..n.min(SCATTER));
            // Up close: the first boxes byte by byte, fields in their kind's order, and what
            // lies between them (malloc's headers, other objects).
            let up_close = regions
                .iter()
                .filter(|r| r.entity < BOXES_UP_CLOSE && r.field != Field::Id)
                .copied()
                .collect();
            let starts = entity_starts(&regions);
            let range = address_range(&starts);
            Shown::Boxes {
                regions,
                up_close,
                starts,
                range,
            }
        } else {
            Shown::Lines {
                regions: sim.driver.swarm().regions(0..n.min(WINDOW)),
                addressing: "address",
            }
        }
    }

    fn entities(&self) -> usize {
        let (Shown::Lines { regions, .. } | Shown::Boxes { regions, .. }) = self;
        regions.iter().map(|r| r.entity + 1).max().unwrap_or(0)
    }
}

/// The picture: cache lines byte by byte, or the boxes' addresses, as large as the room allows.
fn picture_part(
    ui: &mut egui::Ui,
    shown: &Shown,
    kind: LayoutKind,
    n: usize,
    limit: Option<StreamLimit>,
) {
    let last = shown.entities().saturating_sub(1);
    match shown {
        Shown::Lines {
            regions,
            addressing,
        } => {
            let title = if kind.is_gpu() {
                "memory · gpu: the data lives on the device: eight storage buffers, one per field (n × 4 B each); this process keeps only the ids. Device offsets of entities 0–63".to_string()
            } else {
                format!("memory · {kind}: entities 0–{last}, one row per 64-byte cache line")
            };
            ui.label(RichText::new(title).size(TITLE_PT).strong());
            legend(ui);
            let room = ui.available_size();
            cache_line_grid(ui, regions, addressing, room);
        }
        Shown::Boxes {
            up_close,
            starts,
            range,
            ..
        } => {
            ui.label(
                RichText::new(format!(
                    "memory · {kind}: each entity's box, address against index (entities 0–{last})"
                ))
                .size(TITLE_PT)
                .strong(),
            );
            let room = ui.available_size();
            address_scatter(ui, starts, range.as_ref(), vec2(room.x, room.y * 0.55));
            ui.label(RichText::new("the first 8 boxes, byte by byte:").small());
            let room = ui.available_size();
            cache_line_grid(ui, up_close, "address", room);
        }
    }
    bandwidth_note(ui, n, limit);
}

/// The readings beside the world, in the panel's readout size: what each system brings in, or
/// how far apart neighbours sit, and the frame's share of the streaming limit.
fn readings_part(
    ui: &mut egui::Ui,
    shown: &Shown,
    sim: &Sim,
    stats: &FrameStats,
    kind: LayoutKind,
    limit: Option<StreamLimit>,
) {
    match shown {
        Shown::Lines { regions, .. } => lines_summary(ui, regions),
        Shown::Boxes { regions, range, .. } => stride_summary(ui, regions, range.as_ref()),
    }
    if sim.driver.systems().seeks() && !kind.is_gpu() {
        // The last 64 entities in storage: each seeks a clump-mate drawn from all the earlier
        // ones, so their targets spread over the whole storage as most seekers' do (the first
        // `GROUPS` ids have no target, and the next ones only their neighbour 65 ids back).
        let len = sim.driver.swarm().len();
        let first = len
            .saturating_sub(WINDOW)
            .max(entity_layouts::workload::GROUPS as usize);
        if first < len {
            let seekers = first..len;
            seek_summary(
                ui,
                &sim.driver.swarm().target_regions(seekers.clone()),
                seekers,
            );
        }
    }
    ui.separator();
    bandwidth_line(ui, sim, stats, kind, limit);
}

/// The gpu layout's buffers for `n` entities, laid out as it lays them out (one f32 column per
/// field, then the ids it keeps on the host): offsets within each buffer, each buffer in its own
/// address range so that no two share a line.
fn gpu_description(n: usize) -> Vec<Region> {
    let mut out = Vec::new();
    for entity in 0..n {
        for (b, field) in Field::STATE.into_iter().enumerate() {
            out.push(Region {
                addr: (b << 20) + entity * 4,
                len: 4,
                field,
                entity,
            });
        }
    }
    out
}

fn legend(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        for field in Field::ALL {
            ui.label(RichText::new("■").color(field_color(field)));
            ui.label(RichText::new(field.name()).small());
        }
        ui.label(RichText::new("■").color(OTHER));
        ui.label(RichText::new("other").small());
    });
    ui.label(
        RichText::new(
            "white outline: move reads (writes x, y) · yellow: regen reads (writes energy)",
        )
        .small()
        .color(Color32::LIGHT_GRAY),
    );
}

/// One row per cache line that holds any of `regions`, bytes coloured by field.
fn cache_line_grid(ui: &mut egui::Ui, regions: &[Region], addressing: &str, room: Vec2) {
    let mut lines: BTreeMap<usize, [Option<(Field, usize)>; 64]> = BTreeMap::new();
    for r in regions {
        for byte in r.addr..r.end() {
            lines.entry(byte / 64).or_insert([None; 64])[byte % 64] = Some((r.field, r.entity));
        }
    }
    if lines.is_empty() {
        ui.label("no entities");
        return;
    }
    // Rows, with a gap row wherever the next line is not the adjacent one.
    let mut rows: Vec<Option<(usize, [Option<(Field, usize)>; 64])>> = Vec::new();
    let mut prev: Option<usize> = None;
    for (&line, bytes) in &lines {
        if prev.is_some_and(|p| line != p + 1) {
            rows.push(None);
        }
        rows.push(Some((line, *bytes)));
        prev = Some(line);
    }
    let hidden = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    // Cells as large as the room allows: the stage's picture spans the canvas's width.
    let cell_w = ((room.x - LABEL_W) / 64.0).clamp(4.0, 16.0);
    let row_h = ((room.y - NOTE_H) / rows.len() as f32).clamp(3.0, 12.0);
    let width = LABEL_W + 64.0 * cell_w;
    let (response, painter) =
        ui.allocate_painter(vec2(width, rows.len() as f32 * row_h), Sense::hover());
    let origin = response.rect.min;
    let font = FontId::monospace(row_h.clamp(7.0, 11.0));
    for (i, row) in rows.iter().enumerate() {
        let y = origin.y + i as f32 * row_h;
        let Some((line, bytes)) = row else {
            painter.line_segment(
                [
                    pos2(origin.x + LABEL_W, y + row_h / 2.0),
                    pos2(origin.x + width, y + row_h / 2.0),
                ],
                Stroke::new(1.0, Color32::DARK_GRAY),
            );
            continue;
        };
        // The address of each run's first line: the rows below it follow on.
        if i == 0 || rows[i - 1].is_none() {
            painter.text(
                pos2(origin.x, y + row_h / 2.0),
                Align2::LEFT_CENTER,
                format!("{:06x}", (line * 64) & 0xff_ffff),
                font.clone(),
                Color32::GRAY,
            );
        }
        // Runs of bytes of one field of one entity: one cell each.
        let mut start = 0;
        while start < 64 {
            let holds = bytes[start];
            let mut end = start + 1;
            while end < 64 && bytes[end] == holds {
                end += 1;
            }
            let rect = Rect::from_min_max(
                pos2(origin.x + LABEL_W + start as f32 * cell_w, y),
                pos2(origin.x + LABEL_W + end as f32 * cell_w, y + row_h),
            )
            .shrink(0.5);
            match holds {
                Some((field, _)) => {
                    painter.rect_filled(rect, 0.0, field_color(field));
                    let outline = if field.read_by_move() {
                        Some(MOVE_OUTLINE)
                    } else if field.read_by_regen() {
                        Some(REGEN_OUTLINE)
                    } else {
                        None
                    };
                    if let Some(color) = outline {
                        painter.rect_stroke(rect, 0.0, Stroke::new(1.0, color), StrokeKind::Inside);
                    }
                }
                None => {
                    painter.rect_filled(rect, 0.0, OTHER);
                }
            }
            start = end;
        }
    }
    if hidden > 0 {
        ui.label(RichText::new(format!("… {hidden} more lines")).small());
    }
    ui.label(
        RichText::new(format!(
            "left: the {addressing} of each run's first line (low 24 bits, hex); a grey rule: a jump to a line further away"
        ))
        .small()
        .color(Color32::GRAY),
    );
}

/// How many lines move and regen must bring in for the entities shown, against what they use.
fn lines_summary(ui: &mut egui::Ui, regions: &[Region]) {
    let entities = regions.iter().map(|r| r.entity + 1).max().unwrap_or(0);
    let used = |wanted: fn(Field) -> bool| -> usize {
        regions
            .iter()
            .filter(|r| wanted(r.field))
            .map(|r| r.len)
            .sum()
    };
    for (system, wanted) in [
        ("move", Field::read_by_move as fn(Field) -> bool),
        ("regen", Field::read_by_regen),
    ] {
        let lines = cache_lines(regions, wanted);
        let fetched = lines * 64;
        let needed = used(wanted);
        ui.label(
            RichText::new(format!(
                "{system} brings in {lines} cache lines ({fetched} B) for these {entities} entities, uses {needed} B ({:.0}%)",
                100.0 * needed as f64 / fetched.max(1) as f64
            ))
            .size(key_pt(ui))
            .color(if system == "move" { MOVE_OUTLINE } else { REGEN_OUTLINE }),
        );
    }
}

/// What seek brings in for the shown entities: the lines holding their targets' x and y, wherever
/// in the storage those targets live (the handles' own lines come on top), and how far apart.
fn seek_summary(ui: &mut egui::Ui, targets: &[Region], seekers: std::ops::Range<usize>) {
    let with_target = targets
        .iter()
        .map(|r| r.entity)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let lines = cache_lines(targets, |f| matches!(f, Field::X | Field::Y));
    let needed: usize = targets.iter().map(|r| r.len).sum();
    let (lo, hi) = targets.iter().fold((usize::MAX, 0), |(lo, hi), r| {
        (lo.min(r.addr), hi.max(r.end()))
    });
    let span = if hi > lo {
        format!(", spread over {}", bytes_label((hi - lo) as f64))
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "seek brings in {lines} cache lines ({} B) for the targets of entities {}–{} ({with_target} alive), uses {needed} B of x and y ({:.0}%){span}",
            lines * 64,
            seekers.start,
            seekers.end.saturating_sub(1),
            100.0 * needed as f64 / (lines * 64).max(1) as f64
        ))
        .size(key_pt(ui))
        .color(SEEK_OUTLINE),
    );
}

/// Each entity's first byte against its index: a staircase in allocation order, a scatter once
/// the heap is shuffled.
fn address_scatter(ui: &mut egui::Ui, starts: &[usize], range: Option<&AddressRange>, size: Vec2) {
    let Some(&AddressRange { lo, hi, outside }) = range else {
        ui.label("no entities");
        return;
    };
    let (response, painter) = ui.allocate_painter(size, Sense::hover());
    let plot = Rect::from_min_max(
        response.rect.min + vec2(LABEL_W, 4.0),
        response.rect.max - vec2(4.0, 14.0),
    );
    painter.rect_filled(plot, 0.0, Color32::from_rgb(22, 22, 28));
    let span = (hi - lo).max(1) as f32;
    let last = (starts.len().max(2) - 1) as f32;
    for (i, &addr) in starts.iter().enumerate() {
        let x = plot.left() + plot.width() * i as f32 / last;
        // A box off the scale (another arena) sits on the edge it is beyond, in grey.
        let (y, colour) = if addr < lo || addr > hi {
            let edge = if addr < lo { plot.bottom() } else { plot.top() };
            (edge, Color32::GRAY)
        } else {
            let y = plot.bottom() - plot.height() * (addr - lo) as f32 / span;
            (y, field_color(Field::X))
        };
        painter.circle_filled(pos2(x, y), 1.3, colour);
    }
    if outside > 0 {
        painter.text(
            plot.right_top() + vec2(-4.0, 4.0),
            Align2::RIGHT_TOP,
            format!("{outside} boxes off the scale (grey, on the edge): another heap region"),
            FontId::proportional(11.0),
            Color32::GRAY,
        );
    }
    let font = FontId::monospace(9.0);
    for (y, addr) in [(plot.top(), hi), (plot.bottom(), lo)] {
        painter.text(
            pos2(response.rect.left(), y),
            Align2::LEFT_CENTER,
            format!("…{:08x}", addr & 0xffff_ffff),
            font.clone(),
            Color32::GRAY,
        );
    }
    painter.text(
        pos2(plot.center().x, response.rect.bottom()),
        Align2::CENTER_BOTTOM,
        format!("entity index 0 … {}", starts.len() - 1),
        font,
        Color32::GRAY,
    );
}

/// How far apart neighbours sit: a staircase the prefetcher follows, or a scatter it cannot.
fn stride_summary(ui: &mut egui::Ui, regions: &[Region], range: Option<&AddressRange>) {
    let span = range.map_or(0, |r| r.hi - r.lo);
    let step = median_stride(regions).unwrap_or(0);
    let reading = if step <= 128 {
        "neighbours sit side by side: a staircase the prefetcher can follow"
    } else {
        "every next entity is a jump the prefetcher cannot guess"
    };
    ui.label(
        RichText::new(format!(
            "median step between consecutive entities: {} · span {}",
            bytes_label(step as f64),
            bytes_label(span as f64)
        ))
        .size(key_pt(ui))
        .strong(),
    );
    ui.label(RichText::new(reading).size(key_pt(ui)));
}

/// The addresses the scatter's scale spans: all of them, unless a few boxes (at most 1% each
/// side) sit so far away that they would flatten the rest into one line (a box from another
/// malloc arena is terabytes away); those are counted as outside.
#[derive(Clone, Copy)]
struct AddressRange {
    lo: usize,
    hi: usize,
    outside: usize,
}

fn address_range(starts: &[usize]) -> Option<AddressRange> {
    let mut sorted = starts.to_vec();
    sorted.sort_unstable();
    sorted.first()?;
    let cut = sorted.len() / 100;
    let (p1, p99) = (sorted[cut], sorted[sorted.len() - 1 - cut]);
    // Everything within 64 bulk spans of the bulk stays on the scale.
    let reach = 64 * (p99 - p1).max(4096);
    let near = |a: usize| a + reach >= p1 && a <= p99.saturating_add(reach);
    let lo = sorted.iter().copied().find(|&a| near(a))?;
    let hi = sorted.iter().rev().copied().find(|&a| near(a))?;
    let outside = sorted.iter().filter(|&&a| a < lo || a > hi).count();
    Some(AddressRange { lo, hi, outside })
}

fn bytes_label(b: f64) -> String {
    match b {
        b if b >= (1u64 << 30) as f64 => format!("{:.1} GiB", b / (1u64 << 30) as f64),
        b if b >= (1u64 << 20) as f64 => format!("{:.1} MiB", b / (1u64 << 20) as f64),
        b if b >= 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b => format!("{b:.0} B"),
    }
}

/// "soa: 41 GB/s, 78% of this machine's streaming limit (1 thread)".
fn bandwidth_line(
    ui: &mut egui::Ui,
    sim: &Sim,
    stats: &FrameStats,
    kind: LayoutKind,
    limit: Option<StreamLimit>,
) {
    let n = sim.driver.swarm().len();
    let simulate = stats.scoreboard.get(&kind).map(|s| s.summary().0);
    let threads = sim.driver.threads();
    let rate = if kind.is_gpu() {
        None
    } else {
        simulate.and_then(|ms| effective_gbs(n, f64::from(ms)))
    };
    let text = match (&rate, &limit) {
        _ if kind.is_gpu() => {
            "effective bandwidth: not shown for the gpu layout (its simulate time is the device's)"
                .to_string()
        }
        (None, _) => "effective bandwidth: waiting for a measured frame".into(),
        (Some(gbs), None) => format!(
            "{kind}: {gbs:.1} GB/s effective · this machine's streaming limit: being measured…"
        ),
        (Some(gbs), Some(limit)) => {
            let (cap, on) = match threads {
                Threads::One => (limit.one_thread_gbs, "1 thread".to_string()),
                Threads::All => (limit.all_threads_gbs, format!("{} threads", limit.threads)),
            };
            let share = 100.0 * gbs / cap;
            // Past 100%, the frame's bytes come from the caches, not memory.
            let cached = if share > 100.0 {
                ": the data fits in cache"
            } else {
                ""
            };
            format!(
                "{kind}: {gbs:.1} GB/s, {share:.0}% of this machine's streaming limit on {on} ({cap:.1} GB/s){cached}"
            )
        }
    };
    ui.label(RichText::new(text).size(key_pt(ui)).strong());
}

/// How the bandwidth share is computed, under the picture (the readings keep the sentence).
fn bandwidth_note(ui: &mut egui::Ui, n: usize, limit: Option<StreamLimit>) {
    ui.label(
        RichText::new(format!(
            "a frame must touch {FRAME_BYTES_F32:.0} B per entity (move 24, regen 12) × {} ÷ simulate time. Limit: {}",
            count_label(n),
            limit.map_or("measuring at start-up (STREAM triad, off the frame)".into(), |l| l.describe())
        ))
        .small()
        .color(Color32::GRAY),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_description_is_one_column_per_field() {
        let regions = gpu_description(64);
        assert_eq!(regions.len(), 64 * 8);
        // Four columns of 64 x 4 B: sixteen lines for move, as SoA.
        assert_eq!(cache_lines(&regions, Field::read_by_move), 16);
        assert_eq!(cache_lines(&regions, Field::read_by_regen), 8);
    }

    #[test]
    fn a_far_box_does_not_flatten_the_scatter() {
        // 200 boxes 48 B apart and one in another arena, terabytes away.
        let mut starts: Vec<usize> = (0..200).map(|i| 0x5500_0000 + 48 * i).collect();
        starts.push(0x7f00_0000_0000);
        let r = address_range(&starts).unwrap();
        assert_eq!(
            (r.lo, r.hi, r.outside),
            (0x5500_0000, 0x5500_0000 + 48 * 199, 1)
        );
        // A shuffled heap spread evenly keeps its whole range.
        let spread: Vec<usize> = (0..200).map(|i| (i * 7919 % 200) * 4096).collect();
        let r = address_range(&spread).unwrap();
        assert_eq!((r.lo, r.hi, r.outside), (0, 199 * 4096, 0));
    }

    #[test]
    fn byte_counts_read_as_units() {
        assert_eq!(bytes_label(48.0), "48 B");
        assert_eq!(bytes_label(3.0 * 1024.0 * 1024.0), "3.0 MiB");
    }
}

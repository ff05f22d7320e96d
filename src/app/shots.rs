//! ShotsPlugin: screenshots and the export bundle a speaker takes for slides. A screenshot waits
//! until dots and panel have been drawn, one capture is in flight at a time, a blank one is taken
//! again; the export (key `E`, the panel's button, a script's `export`) writes a timestamped folder
//! with a screenshot, the last 10 s of frames as CSV, and the scoreboard as CSV and SVG. A write
//! that fails is a message in the panel and the run goes on; a scripted run still ends with a
//! non-zero exit code, so a test notices.

use std::path::{Path, PathBuf};

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};

use super::render::{Drawing, RenderReady, choose_renderer};
use super::scoreboard::{self, rows, svg};
use super::sim::Sim;
use super::stats::FrameStats;
use entity_layouts::runtime::renderer::Renderer;

/// Where screenshots come from: the offscreen image in headless mode, else the window.
#[derive(Resource)]
pub struct ShotTarget(pub Option<Handle<Image>>);

#[derive(Resource, Default)]
pub struct Shots {
    pending: usize,
    /// Asked for before the first frame with dots was drawn, or while another was in flight.
    deferred: Vec<PathBuf>,
    frames_since_ready: u64,
    retakes: u32,
    /// Screenshots and export folders that could not be written: a scripted run's exit code
    /// says so.
    pub failed: Vec<PathBuf>,
    /// Where exports go; each export is a new timestamped folder inside it.
    export_dir: PathBuf,
    /// The renderer that draws this frame, which a capture asked for now records: the log says
    /// which renderer drew each screenshot.
    drawn_by: Renderer,
    /// Whether a still was asked for this frame: the window's one capture a frame is the
    /// still's, and a recording leaves that frame out ([`super::clip`]).
    spawned_now: bool,
}

impl Shots {
    pub fn new(export_dir: PathBuf) -> Self {
        Self {
            export_dir,
            ..Self::default()
        }
    }

    /// Captures still to come.
    pub fn outstanding(&self) -> usize {
        self.pending + self.deferred.len()
    }

    pub fn export_dir(&self) -> &Path {
        &self.export_dir
    }

    /// Whether a still was asked for since the last call.
    pub fn take_spawned_now(&mut self) -> bool {
        std::mem::take(&mut self.spawned_now)
    }
}

pub struct ShotsPlugin;

impl Plugin for ShotsPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(First, follow_renderer.after(choose_renderer))
            .add_systems(Last, take_deferred);
    }
}

fn follow_renderer(drawing: Res<Drawing>, mut shots: ResMut<Shots>) {
    shots.drawn_by = drawing.in_use;
}

/// Frames after the first drawn one before screenshots are taken: egui's and our pipelines
/// compile asynchronously, and the first presented frames can miss either.
const FRAMES_AFTER_READY: u64 = 5;

/// Retakes of blank screenshots allowed per run, before a blank one is saved as it is.
const MAX_RETAKES: u32 = 60;

/// Asks for a PNG of the window (or offscreen image) at `path`; a folder that cannot be made is
/// reported at once, a failed write when the capture arrives.
pub fn take_screenshot(
    commands: &mut Commands,
    shots: &mut Shots,
    sim: &mut Sim,
    target: &ShotTarget,
    path: PathBuf,
) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        sim.report(Err(format!(
            "cannot create the folder for screenshot {}: {e}",
            path.display()
        )));
        shots.failed.push(path);
        return;
    }
    // A stale file from an earlier run must not pass for this one.
    let _ = std::fs::remove_file(&path);
    // One capture in flight at a time: Bevy captures one screenshot per window per frame.
    if shots.frames_since_ready < FRAMES_AFTER_READY || shots.pending > 0 {
        shots.deferred.push(path);
        return;
    }
    shots.pending += 1;
    shots.spawned_now = true;
    let drawn_by = shots.drawn_by;
    let screenshot = match &target.0 {
        Some(image) => Screenshot::image(image.clone()),
        None => Screenshot::primary_window(),
    };
    commands.spawn(screenshot).observe(
        move |captured: On<ScreenshotCaptured>, mut shots: ResMut<Shots>, mut sim: ResMut<Sim>| {
            shots.pending = shots.pending.saturating_sub(1);
            // A window that has not presented yet reads back as one flat color: take it again.
            if is_blank(&captured.image) && shots.retakes < MAX_RETAKES {
                shots.retakes += 1;
                shots.deferred.push(path.clone());
                return;
            }
            match save_png(&captured.image, &path) {
                Ok(()) => println!(
                    "[frame {}] screenshot {} (drawn by the {drawn_by} renderer)",
                    sim.driver.frame(),
                    path.display()
                ),
                Err(e) => {
                    sim.report(Err(format!(
                        "cannot save screenshot {}: {e}",
                        path.display()
                    )));
                    shots.failed.push(path.clone());
                }
            }
        },
    );
}

pub fn take_deferred(
    mut commands: Commands,
    mut shots: ResMut<Shots>,
    mut sim: ResMut<Sim>,
    target: Res<ShotTarget>,
    ready: Res<RenderReady>,
) {
    if ready.get() {
        shots.frames_since_ready += 1;
    }
    if shots.frames_since_ready >= FRAMES_AFTER_READY
        && shots.pending == 0
        && !shots.deferred.is_empty()
    {
        let path = shots.deferred.remove(0);
        take_screenshot(&mut commands, &mut shots, &mut sim, &target, path);
    }
}

fn is_blank(image: &Image) -> bool {
    let Some(data) = image.data.as_deref() else {
        return true;
    };
    let first = data.get(..4).unwrap_or_default();
    data.chunks_exact(4).all(|pixel| pixel == first)
}

fn save_png(image: &Image, path: &Path) -> Result<(), String> {
    let rgb = image
        .clone()
        .try_into_dynamic()
        .map_err(|e| e.to_string())?
        .to_rgb8();
    rgb.save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| e.to_string())
}

/// Writes the export bundle into a new timestamped folder under the export folder; the
/// screenshot lands a few frames later. Returns the folder, or why it could not be written (the
/// folder is then counted among the failed writes, which a scripted run's exit code reports).
pub fn export(
    commands: &mut Commands,
    shots: &mut Shots,
    sim: &mut Sim,
    target: &ShotTarget,
    stats: &FrameStats,
) -> Result<PathBuf, String> {
    let dir = shots.export_dir.join(format!("export-{}", timestamp()));
    let written = write_export(&dir, sim, stats);
    if written.is_err() {
        shots.failed.push(dir.clone());
        return written.map(|()| dir);
    }
    take_screenshot(commands, shots, sim, target, dir.join("screenshot.png"));
    Ok(dir)
}

/// The export's files but the screenshot.
fn write_export(dir: &Path, sim: &Sim, stats: &FrameStats) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, contents: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("frames.csv", stats.recent_csv().into_bytes())?;
    let n = sim.driver.swarm().len();
    let rows = rows(stats, n);
    write(
        "scoreboard.csv",
        scoreboard::csv(&rows, n, sim.driver.threads().name()).into_bytes(),
    )?;
    let figure = svg(&rows, n, stats.board_systems);
    let slide = scoreboard::png(&figure).map_err(|e| format!("scoreboard.png: {e}"))?;
    write("scoreboard.png", slide)?;
    write("scoreboard.svg", figure.into_bytes())
}

/// `20261130-141502+0100` for folder names: the speaker's local time (what they will look for
/// after the talk), with the UTC offset so that names stay unambiguous and sort within a day.
/// Without a time zone database jiff falls back to UTC, which the `+0000` then says.
pub fn timestamp() -> String {
    timestamp_of(&jiff::Zoned::now())
}

fn timestamp_of(time: &jiff::Zoned) -> String {
    time.strftime("%Y%m%d-%H%M%S%z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_carry_local_time_and_offset() {
        let at = |hours: i8| {
            jiff::Timestamp::from_second(1_764_511_702)
                .unwrap()
                .to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(hours)))
        };
        assert_eq!(timestamp_of(&at(0)), "20251130-140822+0000");
        assert_eq!(timestamp_of(&at(-5)), "20251130-090822-0500");
    }
}

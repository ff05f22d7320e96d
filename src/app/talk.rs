//! TalkPlugin: what makes the app drivable without a mouse: keys for the stage, and `--script`,
//! `--frames` and `--screenshot` for tests and hands-free talks. Also the orderly exit: pending
//! screenshots are written, then the summary is printed, then the app exits.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::window::{MonitorSelection, PrimaryWindow, WindowMode};

use entity_layouts::LayoutKind;
use entity_layouts::script::{Action, ScriptRunner};

use super::render::RenderReady;
use super::sim::{Sim, SimSet};
use super::stats::FrameStats;
use super::{ShotTarget, UiState};

#[derive(Resource)]
pub struct Talk {
    pub script: Option<ScriptRunner>,
    /// Exit after this many frames.
    pub frames: Option<u64>,
    /// Saved just before exiting.
    pub final_screenshot: Option<PathBuf>,
    frame: u64,
    pending_shots: usize,
    /// Asked for before the first frame with dots was drawn; taken once it has been.
    deferred_shots: Vec<PathBuf>,
    frames_since_ready: u64,
    retakes: u32,
    failed_shots: Vec<PathBuf>,
    exiting: Option<u64>,
}

impl Talk {
    pub fn new(
        script: Option<ScriptRunner>,
        frames: Option<u64>,
        screenshot: Option<PathBuf>,
    ) -> Self {
        Self {
            script,
            frames,
            final_screenshot: screenshot,
            frame: 0,
            pending_shots: 0,
            deferred_shots: Vec::new(),
            frames_since_ready: 0,
            retakes: 0,
            failed_shots: Vec::new(),
            exiting: None,
        }
    }
}

pub struct TalkPlugin;

impl Plugin for TalkPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(Update, (keys, run_script).chain().in_set(SimSet::Requests))
            .add_systems(Last, finish);
    }
}

fn keys(
    input: Res<ButtonInput<KeyCode>>,
    mut sim: ResMut<Sim>,
    mut ui_state: ResMut<UiState>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
) {
    const DIGITS: [KeyCode; 9] = [
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
        KeyCode::Digit8,
        KeyCode::Digit9,
    ];
    for (key, kind) in DIGITS.iter().zip(LayoutKind::ALL) {
        if input.just_pressed(*key) {
            sim.set_layout(kind);
        }
    }
    let target = sim.driver.target();
    if input.just_pressed(KeyCode::ArrowUp) {
        let n = (target.max(500) * 2).min(entity_layouts::driver::APP_MAX_ENTITIES);
        if sim.set_count(n) {
            ui_state.count_slider = n;
        }
    }
    if input.just_pressed(KeyCode::ArrowDown) {
        let n = (target / 2).max(1_000);
        if sim.set_count(n) {
            ui_state.count_slider = n;
        }
    }
    if input.just_pressed(KeyCode::Space) {
        sim.driver.paused = !sim.driver.paused;
    }
    if input.just_pressed(KeyCode::KeyH) {
        ui_state.panel_visible = !ui_state.panel_visible;
    }
    if input.just_pressed(KeyCode::KeyF) {
        for mut window in windows.iter_mut() {
            window.mode = match window.mode {
                WindowMode::Windowed => WindowMode::BorderlessFullscreen(MonitorSelection::Current),
                _ => WindowMode::Windowed,
            };
        }
    }
}

fn run_script(
    mut commands: Commands,
    mut talk: ResMut<Talk>,
    mut sim: ResMut<Sim>,
    mut ui_state: ResMut<UiState>,
    shot_target: Res<ShotTarget>,
) {
    if talk.exiting.is_some() {
        return;
    }
    let Some(runner) = talk.script.as_mut() else {
        return;
    };
    for action in runner.due() {
        match action {
            Action::Layout(kind) => {
                sim.set_layout(kind);
            }
            Action::Count(n) => {
                if sim.set_count(n) {
                    ui_state.count_slider = n;
                }
            }
            Action::Threads(threads) => sim.set_threads(threads),
            Action::Churn(n) => {
                sim.set_churn(n);
            }
            Action::Pause(p) => sim.driver.paused = p,
            Action::Wait(_) => {}
            Action::Screenshot(path) => {
                take_screenshot(&mut commands, &mut talk, &shot_target, path)
            }
            Action::Exit => {
                begin_exit(&mut talk, &mut sim, &mut commands, &shot_target);
                return;
            }
        }
    }
}

fn take_screenshot(commands: &mut Commands, talk: &mut Talk, target: &ShotTarget, path: PathBuf) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!(
            "error: cannot create the folder for screenshot {}: {e}",
            path.display()
        );
        talk.failed_shots.push(path);
        return;
    }
    // A stale file from an earlier run must not pass for this one.
    let _ = std::fs::remove_file(&path);
    // One capture in flight at a time: Bevy captures one screenshot per window per frame.
    if talk.frames_since_ready < FRAMES_AFTER_READY || talk.pending_shots > 0 {
        talk.deferred_shots.push(path);
        return;
    }
    talk.pending_shots += 1;
    let screenshot = match &target.0 {
        Some(image) => Screenshot::image(image.clone()),
        None => Screenshot::primary_window(),
    };
    commands.spawn(screenshot).observe(
        move |captured: On<ScreenshotCaptured>, mut talk: ResMut<Talk>| {
            talk.pending_shots = talk.pending_shots.saturating_sub(1);
            // A window that has not presented yet reads back as one flat color: take it again.
            if is_blank(&captured.image) && talk.retakes < MAX_RETAKES {
                talk.retakes += 1;
                talk.deferred_shots.push(path.clone());
                return;
            }
            if let Err(e) = save_png(&captured.image, &path) {
                eprintln!("error: cannot save screenshot {}: {e}", path.display());
                talk.failed_shots.push(path.clone());
            }
        },
    );
}

/// Retakes of blank screenshots allowed per run, before a blank one is saved as it is.
const MAX_RETAKES: u32 = 60;

fn is_blank(image: &Image) -> bool {
    let Some(data) = image.data.as_deref() else {
        return true;
    };
    let first = data.get(..4).unwrap_or_default();
    data.chunks_exact(4).all(|pixel| pixel == first)
}

fn save_png(image: &Image, path: &std::path::Path) -> Result<(), String> {
    let rgb = image
        .clone()
        .try_into_dynamic()
        .map_err(|e| e.to_string())?
        .to_rgb8();
    rgb.save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| e.to_string())
}

fn begin_exit(talk: &mut Talk, sim: &mut Sim, commands: &mut Commands, target: &ShotTarget) {
    // From here on the state is final: the summary's checksum is what a replay computes.
    sim.frozen = true;
    talk.exiting = Some(talk.frame);
    if let Some(path) = talk.final_screenshot.take() {
        take_screenshot(commands, talk, target, path);
    }
}

/// Frames after the first drawn one before screenshots are taken: egui's and our pipelines
/// compile asynchronously, and the first presented frames can miss either.
const FRAMES_AFTER_READY: u64 = 5;

/// Frames to wait for screenshots before giving up on them.
const SHOT_TIMEOUT_FRAMES: u64 = 600;

fn finish(
    mut commands: Commands,
    mut talk: ResMut<Talk>,
    mut sim: ResMut<Sim>,
    stats: Res<FrameStats>,
    shot_target: Res<ShotTarget>,
    ready: Res<RenderReady>,
    mut exit: MessageWriter<AppExit>,
) {
    talk.frame += 1;
    if ready.get() {
        talk.frames_since_ready += 1;
    }
    if talk.frames_since_ready >= FRAMES_AFTER_READY
        && talk.pending_shots == 0
        && !talk.deferred_shots.is_empty()
    {
        let path = talk.deferred_shots.remove(0);
        take_screenshot(&mut commands, &mut talk, &shot_target, path);
    }
    let frames_done = talk.frames.is_some_and(|k| talk.frame >= k);
    if talk.exiting.is_none() && frames_done {
        begin_exit(&mut talk, &mut sim, &mut commands, &shot_target);
    }
    let Some(since) = talk.exiting else {
        return;
    };
    let timed_out = talk.frame - since > SHOT_TIMEOUT_FRAMES;
    if (talk.pending_shots > 0 || !talk.deferred_shots.is_empty()) && !timed_out {
        return;
    }
    println!("summary per layout used:");
    for line in stats.summary_lines() {
        println!("  {line}");
    }
    let swarm = &sim.driver.swarm;
    let pending = sim.driver.switch_progress().map_or(String::new(), |p| {
        format!(" (switch to {} pending: {} copied)", p.to, p.copied)
    });
    println!(
        "final: {} entities, layout {}{pending}, {} frames simulated, checksum {:016x}",
        swarm.len(),
        swarm.kind(),
        sim.driver.frame(),
        swarm.checksum()
    );
    if timed_out || !talk.failed_shots.is_empty() {
        for path in &talk.failed_shots {
            eprintln!("error: screenshot {} was not written", path.display());
        }
        if timed_out {
            eprintln!(
                "error: {} screenshot(s) never arrived",
                talk.pending_shots + talk.deferred_shots.len()
            );
        }
        exit.write(AppExit::from_code(1));
    } else {
        exit.write(AppExit::Success);
    }
}

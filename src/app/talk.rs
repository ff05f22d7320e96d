//! TalkPlugin: what makes the app drivable without a mouse, and the one place requests are carried
//! out. Keys and `--script` lines become [`Request`]s like the panel's widgets do; `dispatch`
//! hands the driver's to `Sim::apply` and carries out the app's own (screenshots, captions,
//! exports, exit). Also the orderly exit, on `exit`, `--frames`, Ctrl-C or SIGTERM alike: pending
//! screenshots are written, then the summary is printed, then the app exits (130 after Ctrl-C,
//! 143 after SIGTERM).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bevy::prelude::*;
use bevy::window::{MonitorSelection, PrimaryWindow, WindowMode};

use entity_layouts::layout::{LayoutKind, SeekKernel};
use entity_layouts::neighbours::AvoidForm;
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::action::{ClipRequest, ClipSettings};
use entity_layouts::runtime::renderer::Renderer;
use entity_layouts::runtime::swarm::Order;
use entity_layouts::simd::SimdChoice;
use entity_layouts::tools::script::{Busy, SayValues, ScriptRunner};

use bevy::render::render_resource::Extent3d;
use entity_layouts::runtime::values::WindowSize;

use super::clip::Clip;
use super::hud::Caption;
use super::render::Drawing;
use super::scoreboard::count_label;
use super::shots::{ShotTarget, Shots, export, take_screenshot};
use super::sim::{Request, Sim, SimSet};
use super::stats::FrameStats;
use super::{Canvas, UiState};

/// The key that picks `kind` (its row of the table of layouts names it: `4`, `Shift+2`, `G`),
/// and whether it is pressed with Shift. Our layouts and Bevy's keep the digit row they always
/// had; the other ECS libraries (which sit beside Bevy's in the list) take Shift and 1 to 6.
pub fn layout_key(kind: LayoutKind) -> (KeyCode, bool) {
    let name = kind.row().key;
    let (shift, key) = match name.strip_prefix("Shift+") {
        Some(key) => (true, key),
        None => (false, name),
    };
    let code = match key {
        "0" => KeyCode::Digit0,
        "1" => KeyCode::Digit1,
        "2" => KeyCode::Digit2,
        "3" => KeyCode::Digit3,
        "4" => KeyCode::Digit4,
        "5" => KeyCode::Digit5,
        "6" => KeyCode::Digit6,
        "7" => KeyCode::Digit7,
        "8" => KeyCode::Digit8,
        "9" => KeyCode::Digit9,
        "-" => KeyCode::Minus,
        "=" => KeyCode::Equal,
        "G" => KeyCode::KeyG,
        other => panic!(
            "the table of layouts gives {kind} the key {other}, which the app has no key code for"
        ),
    };
    (code, shift)
}

#[derive(Resource)]
pub struct Talk {
    pub script: Option<ScriptRunner>,
    /// Exit after this many frames.
    pub frames: Option<u64>,
    /// Saved just before exiting.
    pub final_screenshot: Option<PathBuf>,
    frame: u64,
    /// Set once the run is ending: the frame it began and the exit code it ends with.
    exiting: Option<(u64, u8)>,
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
            exiting: None,
        }
    }
}

/// Ctrl-C and SIGTERM, noted by signal handlers and acted on at the next frame.
#[derive(Resource, Clone, Default)]
pub struct Signals {
    interrupt: Arc<AtomicBool>,
    terminate: Arc<AtomicBool>,
}

impl Signals {
    /// Registers the handlers. A second Ctrl-C while the first one's exit is pending ends the
    /// process at once (code 130), as terminals expect.
    pub fn install() -> Self {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let signals = Self::default();
        for (signal, flag_set, code) in [
            (SIGINT, &signals.interrupt, 130),
            (SIGTERM, &signals.terminate, 143),
        ] {
            if let Err(e) = entity_layouts::tools::signals::raise_flag_on(signal, code, flag_set) {
                eprintln!(
                    "warning: cannot handle signal {signal}: {e}; it will end the app without a summary"
                );
            }
        }
        signals
    }
}

pub struct TalkPlugin;

impl Plugin for TalkPlugin {
    fn build(&self, app: &mut App) {
        app.add_systems(
            Update,
            (keys, run_script, dispatch)
                .chain()
                .in_set(SimSet::Requests),
        )
        .add_systems(First, watch_signals)
        .add_systems(Last, finish);
    }
}

fn keys(
    input: Res<ButtonInput<KeyCode>>,
    sim: Res<Sim>,
    ui_state: Res<UiState>,
    drawing: Res<Drawing>,
    clip: Res<Clip>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
    mut requests: MessageWriter<Request>,
) {
    let shift = input.any_pressed([KeyCode::ShiftLeft, KeyCode::ShiftRight]);
    for kind in LayoutKind::ALL {
        let (key, with_shift) = layout_key(kind);
        if input.just_pressed(key) && with_shift == shift {
            requests.write(Request(Action::Layout(kind)));
        }
    }
    let target = sim.driver.target();
    if input.just_pressed(KeyCode::ArrowUp) {
        let n = (target.max(500) * 2).min(sim.max_count());
        requests.write(Request(Action::Count(n)));
    }
    if input.just_pressed(KeyCode::ArrowDown) {
        requests.write(Request(Action::Count((target / 2).max(1_000))));
    }
    if input.just_pressed(KeyCode::Space) {
        requests.write(Request(Action::Pause(!sim.driver.paused())));
    }
    if input.just_pressed(KeyCode::KeyE) {
        requests.write(Request(Action::Export));
    }
    if input.just_pressed(KeyCode::KeyR) {
        let request = if clip.recording() {
            ClipRequest::Stop
        } else {
            ClipRequest::Start(ClipSettings::default())
        };
        requests.write(Request(Action::Record(request)));
    }
    if input.just_pressed(KeyCode::KeyH) {
        requests.write(Request(Action::ShowPanel(!ui_state.panel_visible)));
    }
    if input.just_pressed(KeyCode::KeyS) {
        let other = match sim.driver.simd() {
            SimdChoice::Baseline => SimdChoice::Best,
            SimdChoice::Best => SimdChoice::Baseline,
        };
        requests.write(Request(Action::Simd(other)));
    }
    if input.just_pressed(KeyCode::KeyD) {
        requests.write(Request(Action::Renderer(drawing.requested.other())));
    }
    if input.just_pressed(KeyCode::KeyT) {
        let on = !sim.driver.systems().seeks();
        requests.write(Request(Action::Seek(on)));
    }
    if input.just_pressed(KeyCode::KeyK) {
        let other = match sim.driver.swarm().seek_kernel() {
            SeekKernel::Idiomatic => SeekKernel::Tuned,
            SeekKernel::Tuned => SeekKernel::Idiomatic,
        };
        requests.write(Request(Action::SeekKernel(other)));
    }
    if input.just_pressed(KeyCode::KeyO) {
        let other = match sim.driver.requested_order() {
            Order::Id | Order::Cell => Order::Group,
            Order::Group => Order::Id,
        };
        requests.write(Request(Action::Order(other)));
    }
    if input.just_pressed(KeyCode::KeyC) {
        let other = match sim.driver.requested_order() {
            Order::Id | Order::Group => Order::Cell,
            Order::Cell => Order::Id,
        };
        requests.write(Request(Action::Order(other)));
    }
    if input.just_pressed(KeyCode::KeyN) {
        let on = !sim.driver.systems().avoids();
        requests.write(Request(Action::Avoid(on)));
    }
    if input.just_pressed(KeyCode::KeyJ) {
        let other = match sim.driver.swarm().avoid_form() {
            AvoidForm::Idiomatic => AvoidForm::Tuned,
            AvoidForm::Tuned => AvoidForm::Idiomatic,
        };
        requests.write(Request(Action::AvoidForm(other)));
    }
    if input.just_pressed(KeyCode::KeyM) {
        requests.write(Request(Action::ShowMemory(!ui_state.memory_visible)));
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

fn run_script(mut talk: ResMut<Talk>, sim: Res<Sim>, mut requests: MessageWriter<Request>) {
    // A script's frames start with the first timed frame, after the start-up fill.
    if talk.exiting.is_some() || sim.loading() {
        return;
    }
    if let Some(runner) = talk.script.as_mut() {
        let due = runner.due(Busy::of(&sim.driver));
        requests.write_batch(due.into_iter().map(Request));
    }
}

/// What a caption's placeholders stand for now: the count and layout, and the simulate p50 of
/// the search that just ended at this count, else of the scoreboard's frames at it.
fn say_values(sim: &Sim, stats: &FrameStats) -> SayValues {
    let (kind, len) = (sim.driver.swarm().kind(), sim.driver.swarm().len());
    let simulate_ms = match &sim.last_search {
        Some(found) if found.layout == kind && found.count == len => found.simulate_ms,
        _ => stats
            .scoreboard
            .get(&kind)
            .map(|s| f64::from(s.summary().0))
            .filter(|ms| *ms > 0.0)
            .unwrap_or_else(|| f64::from(sim.simulate_ms)),
    };
    SayValues {
        count: count_label(len),
        layout: kind.name().into(),
        simulate_ms,
    }
}

/// The one place requests are carried out, in the order they were made.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    mut requests: MessageReader<Request>,
    mut commands: Commands,
    mut talk: ResMut<Talk>,
    mut sim: ResMut<Sim>,
    mut ui_state: ResMut<UiState>,
    mut shots: ResMut<Shots>,
    mut caption: ResMut<Caption>,
    mut canvas: ResMut<Canvas>,
    mut images: ResMut<Assets<Image>>,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
    mut drawing: ResMut<Drawing>,
    stats: Res<FrameStats>,
    target: Res<ShotTarget>,
    mut clip: ResMut<Clip>,
) {
    for Request(action) in requests.read() {
        // Nothing runs after an exit: the state the summary prints is final.
        if talk.exiting.is_some() {
            break;
        }
        match action {
            action if action.is_for_driver() => {
                if sim.apply(action)
                    && let Action::Count(n) = action
                {
                    ui_state.count_slider = *n;
                }
            }
            Action::Screenshot(path) => {
                take_screenshot(&mut commands, &mut shots, &mut sim, &target, path.clone());
            }
            Action::Export => {
                let result = export(&mut commands, &mut shots, &mut sim, &target, &stats)
                    .map(|dir| format!("exported to {}", dir.display()));
                sim.report(result);
            }
            Action::Record(request) => clip.request(*request, &shots, &mut sim),
            Action::Say(text) => {
                caption.0 = say_values(&sim, &stats).fill(text);
                // Logged like every other step of a run, so a headless talk keeps its captions.
                if !caption.0.is_empty() {
                    println!("[frame {}] say: {}", sim.driver.frame(), caption.0);
                }
            }
            Action::ShowPanel(show) => ui_state.panel_visible = *show,
            Action::ShowMemory(show) => ui_state.memory_visible = *show,
            Action::Renderer(renderer) => {
                drawing.requested = *renderer;
                let result = match (renderer, &drawing.compute_blocked) {
                    (Renderer::Compute, Some(reason)) => Err(format!(
                        "the compute renderer cannot draw here ({reason}): the quads draw"
                    )),
                    _ => Ok(format!("drawing with the {renderer} renderer")),
                };
                sim.report(result);
            }
            Action::Resize(size) => {
                resize_canvas(&target, &mut images, &mut windows, &mut canvas, *size);
            }
            Action::Exit => begin_exit(&mut talk, &mut sim, &mut commands, &mut shots, &target, 0),
            _ => {}
        }
    }
}

/// Resizes the window, or in headless mode the offscreen image the camera draws into; the world
/// is fitted to the new size on the next frame.
fn resize_canvas(
    target: &ShotTarget,
    images: &mut Assets<Image>,
    windows: &mut Query<&mut Window, With<PrimaryWindow>>,
    canvas: &mut Canvas,
    size: WindowSize,
) {
    match &target.0 {
        Some(handle) => {
            if let Some(mut image) = images.get_mut(handle) {
                image.resize(Extent3d {
                    width: size.width,
                    height: size.height,
                    depth_or_array_layers: 1,
                });
                canvas.physical_size = [size.width as f32, size.height as f32];
            }
        }
        None => {
            for mut window in windows.iter_mut() {
                window
                    .resolution
                    .set_physical_resolution(size.width, size.height);
            }
        }
    }
}

fn begin_exit(
    talk: &mut Talk,
    sim: &mut Sim,
    commands: &mut Commands,
    shots: &mut Shots,
    target: &ShotTarget,
    code: u8,
) {
    if talk.exiting.is_some() {
        return;
    }
    // From here on the state is final: the summary's checksum is what a replay computes.
    sim.frozen = true;
    talk.exiting = Some((talk.frame, code));
    if let Some(path) = talk.final_screenshot.take() {
        take_screenshot(commands, shots, sim, target, path);
    }
}

fn watch_signals(
    signals: Option<Res<Signals>>,
    mut commands: Commands,
    mut talk: ResMut<Talk>,
    mut sim: ResMut<Sim>,
    mut shots: ResMut<Shots>,
    target: Res<ShotTarget>,
) {
    let Some(signals) = signals else {
        return;
    };
    for (flag, code, name) in [
        (&signals.interrupt, 130, "Ctrl-C"),
        (&signals.terminate, 143, "SIGTERM"),
    ] {
        if flag.load(Ordering::Relaxed) && talk.exiting.is_none() {
            eprintln!("{name}: ending the run with its summary");
            begin_exit(
                &mut talk,
                &mut sim,
                &mut commands,
                &mut shots,
                &target,
                code,
            );
        }
    }
}

/// Frames to wait for screenshots before giving up on them.
const SHOT_TIMEOUT_FRAMES: u64 = 600;

#[allow(clippy::too_many_arguments)]
fn finish(
    mut commands: Commands,
    mut talk: ResMut<Talk>,
    mut sim: ResMut<Sim>,
    mut shots: ResMut<Shots>,
    stats: Res<FrameStats>,
    target: Res<ShotTarget>,
    mut clip: ResMut<Clip>,
    mut exit: MessageWriter<AppExit>,
) {
    // `--frames N` counts timed frames: the start-up fill's do not count.
    if !sim.loading_frame || talk.exiting.is_some() {
        talk.frame += 1;
    }
    let frames_done = talk.frames.is_some_and(|k| talk.frame >= k);
    if frames_done {
        begin_exit(&mut talk, &mut sim, &mut commands, &mut shots, &target, 0);
    }
    let Some((since, code)) = talk.exiting else {
        return;
    };
    // A clip being recorded ends with the run; the summary waits until it is written (its
    // encoder always ends, and gives up on captures that never arrive).
    if clip.recording() {
        clip.stop_for_exit();
    }
    if clip.busy() {
        return;
    }
    let timed_out = shots.outstanding() > 0 && talk.frame - since > SHOT_TIMEOUT_FRAMES;
    if shots.outstanding() > 0 && !timed_out {
        return;
    }
    println!("summary per layout used:");
    for line in stats.summary_lines() {
        println!("  {line}");
    }
    println!("{}", sim.driver.final_line());
    for path in &shots.failed {
        eprintln!("error: {} was not written", path.display());
    }
    if timed_out {
        eprintln!("error: {} screenshot(s) never arrived", shots.outstanding());
    }
    let failed = timed_out || !shots.failed.is_empty();
    exit.write(match code {
        0 if failed => AppExit::from_code(1),
        0 => AppExit::Success,
        code => AppExit::from_code(code),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every layout's key, from the table, is one the app knows, and no two layouts share one.
    #[test]
    fn every_layout_has_a_key_of_its_own() {
        let keys: std::collections::HashSet<(KeyCode, bool)> =
            LayoutKind::ALL.into_iter().map(layout_key).collect();
        assert_eq!(keys.len(), LayoutKind::ALL.len());
        assert_eq!(layout_key(LayoutKind::HecsTuned), (KeyCode::Digit2, true));
        assert_eq!(layout_key(LayoutKind::Gpu), (KeyCode::KeyG, false));
    }
}

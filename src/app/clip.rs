//! ClipPlugin: an animated PNG of the window (or, headless, of the offscreen image), the recorded
//! fallback a speaker keeps in case the projector, the GPU or the venue's machine fails. `R`, the
//! panel's `rec` button or a script's `record SECONDS` start one; it lands in the export folder.
//!
//! Every frame the app draws while recording is captured (one Bevy screenshot a frame), stamped
//! with the time it was asked for, and each frame's delay in the clip is the time to the next
//! one: a machine that ran at 14 fps gives a clip that plays at 14 fps. Frames are compressed as
//! they arrive, on a thread of its own at the lowest priority (the simulation keeps its core),
//! and spilled as PNGs to a file beside the clip (disk, not the entities' memory); at the end
//! that thread writes them as one APNG (`png`, pure Rust,
//! the encoder `image` already uses). A frame in which a still screenshot is taken is left out
//! (Bevy captures a window once per frame); the next frame's delay covers it.

use std::io::Cursor;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};

use entity_layouts::runtime::action::{ClipRequest, ClipSettings};
use entity_layouts::threads::lower_this_thread_priority;

use super::shots::{ShotTarget, Shots, take_deferred, timestamp};
use super::sim::Sim;

/// Compressed frames stored (on disk, beside the clip) before a recording stops by itself.
const MAX_HELD_BYTES: usize = 64 << 30;

/// Captured frames waiting for the encoder before new ones are left out (about 110 MiB at
/// 1280x720).
const QUEUE: usize = 30;

/// How long a stopped clip waits for its last captures.
const CAPTURE_PATIENCE: Duration = Duration::from_secs(10);

pub struct ClipPlugin;

impl Plugin for ClipPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Clip>()
            .add_systems(Last, follow_clip.after(take_deferred));
    }
}

/// The recording, if one is under way or being written.
#[derive(Resource, Default)]
pub struct Clip {
    state: State,
}

#[derive(Default)]
enum State {
    #[default]
    Idle,
    Recording(Recording),
    /// Stopped: frames still on their way back, then the encoder writing the file.
    Finishing(Finishing),
}

struct Recording {
    path: PathBuf,
    started: Instant,
    until: Option<Instant>,
    to_encoder: mpsc::SyncSender<Message>,
    encoder: JoinHandle<Result<Written, String>>,
    /// Captures asked for whose image has not arrived yet.
    in_flight: Arc<AtomicUsize>,
    /// Bytes of compressed frames the encoder holds.
    held: Arc<AtomicUsize>,
    /// Frames left out because the encoder had [`QUEUE`] frames still to compress.
    dropped: Arc<AtomicUsize>,
}

struct Finishing {
    path: PathBuf,
    to_encoder: Option<mpsc::SyncSender<Message>>,
    encoder: JoinHandle<Result<Written, String>>,
    in_flight: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
    /// Why it stopped, when it was not asked to (the memory cap).
    why: Option<String>,
    since: Instant,
}

enum Message {
    Frame { at: Duration, image: Box<Image> },
    End,
}

/// What the encoder wrote.
struct Written {
    frames: usize,
    /// Why frames stopped being stored (a full disk), if they did.
    refused: Option<String>,
    seconds: f64,
    bytes: u64,
}

impl Clip {
    /// Whether a recording is under way (the panel's button and the `R` key toggle it).
    pub fn recording(&self) -> bool {
        matches!(self.state, State::Recording(_))
    }

    /// Seconds recorded so far, while recording.
    pub fn elapsed(&self) -> Option<f64> {
        match &self.state {
            State::Recording(r) => Some(r.started.elapsed().as_secs_f64()),
            _ => None,
        }
    }

    /// Whether a clip is still being written: the orderly exit waits for it.
    pub fn busy(&self) -> bool {
        !matches!(self.state, State::Idle)
    }

    /// Carries out a `record` request; what it did or why not goes to the panel and the log.
    pub fn request(&mut self, request: ClipRequest, shots: &Shots, sim: &mut Sim) {
        match (request, &self.state) {
            (ClipRequest::Start(settings), State::Idle) => {
                let path = shots.export_dir().join(format!("clip-{}.png", timestamp()));
                match self.start(path, settings) {
                    Ok(text) => sim.report(Ok(text)),
                    Err(e) => {
                        sim.report(Err(e));
                    }
                }
            }
            (ClipRequest::Start(_), _) => {
                sim.report(Err("a clip is already being recorded or written".into()))
            }
            (ClipRequest::Stop, State::Recording(_)) => self.stop(None),
            (ClipRequest::Stop, _) => sim.report(Err("no clip is being recorded".into())),
        }
    }

    fn start(&mut self, path: PathBuf, settings: ClipSettings) -> Result<String, String> {
        let seconds = settings.seconds;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create the folder for {}: {e}", path.display()))?;
        }
        let (to_encoder, inbox) = mpsc::sync_channel(QUEUE);
        let held = Arc::new(AtomicUsize::new(0));
        let encoder = {
            let (path, held) = (path.clone(), held.clone());
            std::thread::Builder::new()
                .name("clip-encoder".into())
                .spawn(move || encode(inbox, &path, settings, &held))
                .map_err(|e| format!("cannot start the clip's encoder: {e}"))?
        };
        let started = Instant::now();
        self.state = State::Recording(Recording {
            path: path.clone(),
            started,
            until: seconds.map(|s| started + Duration::from_secs_f64(s)),
            to_encoder,
            encoder,
            in_flight: Arc::new(AtomicUsize::new(0)),
            held,
            dropped: Arc::new(AtomicUsize::new(0)),
        });
        let length = seconds.map_or("until stopped".into(), |s| format!("for {s} s"));
        Ok(format!("recording {} {length}", path.display()))
    }

    fn stop(&mut self, why: Option<String>) {
        if let State::Recording(r) = std::mem::take(&mut self.state) {
            self.state = State::Finishing(Finishing {
                path: r.path,
                to_encoder: Some(r.to_encoder),
                encoder: r.encoder,
                in_flight: r.in_flight,
                dropped: r.dropped,
                why,
                since: Instant::now(),
            });
        }
    }

    /// Stops a recording for the exit (whose summary waits until the clip is written).
    pub fn stop_for_exit(&mut self) {
        self.stop(None);
    }
}

/// Asks for this frame's capture while recording, stops at the end of the clip's time or at
/// the memory cap, and reports the clip once the encoder has written it.
fn follow_clip(
    mut commands: Commands,
    mut clip: ResMut<Clip>,
    mut shots: ResMut<Shots>,
    mut sim: ResMut<Sim>,
    target: Res<ShotTarget>,
) {
    // A still spawned this frame has the window's one capture.
    let still_now = shots.take_spawned_now();
    match &clip.state {
        State::Recording(r) => {
            if r.until.is_some_and(|t| Instant::now() >= t) {
                clip.stop(None);
            } else if r.held.load(Ordering::Relaxed) > MAX_HELD_BYTES {
                // `usize::MAX` is the encoder's word for a disk that refused a frame.
                let why = if r.held.load(Ordering::Relaxed) == usize::MAX {
                    "the clip stopped itself: the disk refused a frame".to_string()
                } else {
                    format!(
                        "the clip stopped itself at {} GiB of compressed frames",
                        MAX_HELD_BYTES >> 30
                    )
                };
                clip.stop(Some(why));
            } else if !still_now {
                capture(&mut commands, r, &target);
            }
        }
        State::Finishing(f) => {
            // Captures that have not arrived after a while never will (a resized target).
            let arrived = f.in_flight.load(Ordering::Acquire) == 0;
            if (arrived || f.since.elapsed() > CAPTURE_PATIENCE)
                && let State::Finishing(f) = &mut clip.state
                && let Some(sender) = &f.to_encoder
            {
                // Never wait on the frame loop: with the queue full, try again next frame.
                if !matches!(sender.try_send(Message::End), Err(TrySendError::Full(_))) {
                    f.to_encoder = None;
                }
            }
        }
        State::Idle => {}
    }
    let done = matches!(&clip.state, State::Finishing(f) if f.encoder.is_finished());
    if done && let State::Finishing(f) = std::mem::take(&mut clip.state) {
        let result = match f.encoder.join() {
            Ok(result) => result,
            Err(_) => Err("the clip's encoder stopped".into()),
        };
        match result {
            Ok(w) => {
                let fps = if w.seconds > 0.0 {
                    (w.frames.saturating_sub(1)) as f64 / w.seconds
                } else {
                    0.0
                };
                let mut notes: Vec<String> = f.why.into_iter().collect();
                if let Some(e) = &w.refused {
                    notes.push(format!(
                        "frames after the disk refused one were left out: {e}"
                    ));
                }
                let dropped = f.dropped.load(Ordering::Relaxed);
                if dropped > 0 {
                    notes.push(format!(
                        "{dropped} frames left out while the encoder caught up; the delays keep real time"
                    ));
                }
                let why = if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join("; "))
                };
                sim.report(Ok(format!(
                    "clip {}: {} frames over {:.1} s, {fps:.1} fps as the app ran, {:.1} MB{why}",
                    f.path.display(),
                    w.frames,
                    w.seconds,
                    w.bytes as f64 / 1e6
                )));
            }
            Err(e) => {
                sim.report(Err(format!("cannot write clip {}: {e}", f.path.display())));
                shots.failed.push(f.path);
            }
        }
    }
}

fn capture(commands: &mut Commands, r: &Recording, target: &ShotTarget) {
    let at = r.started.elapsed();
    let screenshot = match &target.0 {
        Some(image) => Screenshot::image(image.clone()),
        None => Screenshot::primary_window(),
    };
    r.in_flight.fetch_add(1, Ordering::AcqRel);
    let (sender, in_flight, dropped) =
        (r.to_encoder.clone(), r.in_flight.clone(), r.dropped.clone());
    commands
        .spawn(screenshot)
        .observe(move |captured: On<ScreenshotCaptured>| {
            // The conversion and compression happen on the encoder's thread; a full queue
            // leaves this frame out rather than hold the frame loop or grow without bound.
            let frame = Message::Frame {
                at,
                image: Box::new(captured.image.clone()),
            };
            if sender.try_send(frame).is_err() {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
            in_flight.fetch_sub(1, Ordering::AcqRel);
        });
}

/// A clip's compressed frames, spilled to a file beside the clip as they come, so that a long
/// clip takes disk, not the memory the entities need; deleted when the clip is written.
struct FrameStore {
    path: PathBuf,
    file: std::fs::File,
    /// Capture time, size, and where each frame's PNG lies in the file.
    frames: Vec<(Duration, u32, u32, u64, usize)>,
    end: u64,
}

impl FrameStore {
    fn create(clip: &std::path::Path) -> Result<Self, String> {
        let path = clip.with_extension("frames.partial");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        Ok(Self {
            path,
            file,
            frames: Vec::new(),
            end: 0,
        })
    }

    fn push(&mut self, at: Duration, w: u32, h: u32, png: &[u8]) -> std::io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        self.file.seek(SeekFrom::Start(self.end))?;
        self.file.write_all(png)?;
        self.frames.push((at, w, h, self.end, png.len()));
        self.end += png.len() as u64;
        Ok(())
    }

    fn read(&mut self, i: usize) -> Result<Vec<u8>, String> {
        use std::io::{Read, Seek, SeekFrom};
        let (_, _, _, offset, len) = self.frames[i];
        let mut png = vec![0; len];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut png))
            .map_err(|e| format!("cannot read back frame {i}: {e}"))?;
        Ok(png)
    }
}

impl Drop for FrameStore {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The encoder thread: compresses frames as they come (spilled to disk as PNGs), then writes
/// the APNG.
fn encode(
    inbox: mpsc::Receiver<Message>,
    path: &std::path::Path,
    settings: ClipSettings,
    held: &AtomicUsize,
) -> Result<Written, String> {
    lower_this_thread_priority();
    let mut store = FrameStore::create(path)?;
    let mut refused: Option<String> = None;
    while let Ok(Message::Frame { at, image }) = inbox.recv() {
        if refused.is_some() {
            continue;
        }
        // The same conversion as a still's: whatever the target's format, RGBA8 in sRGB.
        let Ok(dynamic) = image.try_into_dynamic() else {
            continue;
        };
        let rgba = dynamic.to_rgba8();
        let (w, h, rgb) = shrink(rgba.width(), rgba.height(), rgba.as_raw(), settings.scale);
        let png = png_bytes(w, h, &rgb, png::Compression::Fast)?;
        match store.push(at, w, h, &png) {
            Ok(()) => {
                held.fetch_add(png.len(), Ordering::Relaxed);
            }
            // A full disk ends the clip's frames, not the clip: what was stored is written.
            Err(e) => {
                refused = Some(e.to_string());
                held.store(usize::MAX, Ordering::Relaxed);
            }
        }
    }
    // A resize while recording changes the frame size; the clip keeps the first size's frames.
    let Some(&(_, width, height, _, _)) = store.frames.first() else {
        return Err("no frame was captured".into());
    };
    let kept: Vec<usize> = (0..store.frames.len())
        .filter(|&i| (store.frames[i].1, store.frames[i].2) == (width, height))
        .collect();
    let times: Vec<Duration> = kept.iter().map(|&i| store.frames[i].0).collect();
    let delays = frame_delays(&times);
    let palette = if settings.palette {
        let step = kept.len().div_ceil(PALETTE_SAMPLES).max(1);
        let samples = kept
            .iter()
            .step_by(step)
            .map(|&i| store.read(i))
            .collect::<Result<Vec<_>, _>>()?;
        Some(Palette::learn(&samples)?)
    } else {
        None
    };
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), width, height);
    encoder.set_depth(png::BitDepth::Eight);
    match &palette {
        Some(p) => {
            encoder.set_color(png::ColorType::Indexed);
            encoder.set_palette(p.rgb());
            // Indices are not magnitudes: filtering them only adds entropy.
            encoder.set_compression(png::Compression::High);
            encoder.set_filter(png::Filter::NoFilter);
        }
        None => {
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_compression(png::Compression::Balanced);
        }
    }
    encoder
        .set_animated(kept.len() as u32, 0)
        .map_err(|e| e.to_string())?;
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    let mut rgb = Vec::new();
    for (&i, delay) in kept.iter().zip(&delays) {
        decode_into(&store.read(i)?, &mut rgb)?;
        writer
            .set_frame_delay(*delay, 1000)
            .map_err(|e| e.to_string())?;
        match &palette {
            Some(p) => writer.write_image_data(&p.indices(&rgb)),
            None => writer.write_image_data(&rgb),
        }
        .map_err(|e| e.to_string())?;
    }
    writer.finish().map_err(|e| e.to_string())?;
    let seconds = times
        .last()
        .zip(times.first())
        .map_or(0.0, |(l, f)| (*l - *f).as_secs_f64());
    Ok(Written {
        frames: kept.len(),
        refused,
        seconds,
        bytes: std::fs::metadata(path).map_or(0, |m| m.len()),
    })
}

/// One palette of 256 colours for every frame of a clip (APNG frames share the file's palette),
/// learnt by NeuQuant (`color_quant`, the quantizer `image` uses for GIFs) from frames spread
/// over the whole clip, so that the colours of every layout shown are in it.
struct Palette {
    quant: color_quant::NeuQuant,
}

/// Frames the palette learns from.
const PALETTE_SAMPLES: usize = 8;

impl Palette {
    /// Learns the palette from `samples`, PNG frames spread over the clip.
    fn learn(samples: &[Vec<u8>]) -> Result<Self, String> {
        let mut rgba = Vec::new();
        let mut rgb = Vec::new();
        for png in samples {
            decode_into(png, &mut rgb)?;
            for px in rgb.chunks_exact(3) {
                rgba.extend_from_slice(&[px[0], px[1], px[2], 255]);
            }
        }
        // Sampling factor 10: every tenth pixel trains the network, as image's GIF encoder does.
        Ok(Self {
            quant: color_quant::NeuQuant::new(10, 256, &rgba),
        })
    }

    fn rgb(&self) -> Vec<u8> {
        self.quant
            .color_map_rgba()
            .chunks_exact(4)
            .flat_map(|c| [c[0], c[1], c[2]])
            .collect()
    }

    /// Each pixel's palette index. Most of a frame is a few colours (the background, the
    /// panel), so the last lookup is remembered.
    fn indices(&self, rgb: &[u8]) -> Vec<u8> {
        let mut last: Option<([u8; 3], u8)> = None;
        rgb.chunks_exact(3)
            .map(|px| {
                let px = [px[0], px[1], px[2]];
                match last {
                    Some((seen, index)) if seen == px => index,
                    _ => {
                        let index = self.quant.index_of(&[px[0], px[1], px[2], 255]) as u8;
                        last = Some((px, index));
                        index
                    }
                }
            })
            .collect()
    }
}

/// Each frame's delay in ms: the time to the next frame's capture, so that the clip plays at the
/// rate the app ran; the last frame keeps the median delay.
pub fn frame_delays(times: &[Duration]) -> Vec<u16> {
    let mut delays: Vec<u16> = times
        .windows(2)
        .map(|w| (w[1].saturating_sub(w[0]).as_millis()).clamp(1, u16::MAX as u128) as u16)
        .collect();
    let mut sorted = delays.clone();
    sorted.sort_unstable();
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(100);
    if !times.is_empty() {
        delays.push(median);
    }
    delays
}

/// RGBA to RGB, shrunk by `scale` (each output pixel the mean of a `scale` x `scale` block).
pub fn shrink(width: u32, height: u32, rgba: &[u8], scale: u8) -> (u32, u32, Vec<u8>) {
    let s = u32::from(scale.max(1));
    let (w, h) = ((width / s).max(1), (height / s).max(1));
    let mut out = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            let mut sum = [0u32; 3];
            let mut n = 0;
            for dy in 0..s.min(height - y * s) {
                for dx in 0..s.min(width - x * s) {
                    let i = (((y * s + dy) * width + x * s + dx) * 4) as usize;
                    for c in 0..3 {
                        sum[c] += u32::from(rgba[i + c]);
                    }
                    n += 1;
                }
            }
            out.extend(sum.map(|v| ((v + n / 2) / n.max(1)) as u8));
        }
    }
    (w, h, out)
}

fn png_bytes(w: u32, h: u32, rgb: &[u8], level: png::Compression) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(level);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

fn decode_into(png_data: &[u8], rgb: &mut Vec<u8>) -> Result<(), String> {
    let mut reader = png::Decoder::new(Cursor::new(png_data))
        .read_info()
        .map_err(|e| e.to_string())?;
    rgb.resize(reader.output_buffer_size().unwrap_or(0), 0);
    reader.next_frame(rgb).map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_the_capture_times() {
        let ms = |v: &[u64]| {
            v.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(frame_delays(&ms(&[0, 70, 140, 240])), vec![70, 70, 100, 70]);
        assert_eq!(frame_delays(&ms(&[5])), vec![100]);
        assert!(frame_delays(&[]).is_empty());
        // Two captures in the same millisecond still advance the clip.
        assert_eq!(frame_delays(&ms(&[0, 0]))[0], 1);
    }

    #[test]
    fn the_palette_keeps_the_colours_it_learnt() {
        // Two frames, four colours each: every pixel maps back to its own colour.
        let colours = [[0u8, 0, 0], [255, 255, 255], [200, 40, 40], [40, 200, 40]];
        let rgb: Vec<u8> = (0..64 * 64).flat_map(|i| colours[i % 4]).collect();
        let png = png_bytes(64, 64, &rgb, png::Compression::Fast).unwrap();
        let palette = Palette::learn(&[png.clone(), png]).unwrap();
        let map = palette.rgb();
        assert_eq!(map.len(), 256 * 3);
        for (px, index) in rgb.chunks_exact(3).zip(palette.indices(&rgb)).take(8) {
            let got = &map[index as usize * 3..index as usize * 3 + 3];
            let off = px
                .iter()
                .zip(got)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap();
            assert!(off <= 8, "{px:?} came back as {got:?}");
        }
    }

    #[test]
    fn shrinking_averages_blocks_and_keeps_odd_edges() {
        // 3x2 RGBA: a white pixel and three black ones in the left 2x2 block.
        let mut rgba = vec![0u8; 3 * 2 * 4];
        rgba[..4].copy_from_slice(&[200, 100, 40, 255]);
        let (w, h, rgb) = shrink(3, 2, &rgba, 2);
        assert_eq!((w, h), (1, 1));
        assert_eq!(rgb, vec![50, 25, 10]);
        let (w, h, rgb) = shrink(3, 2, &rgba, 1);
        assert_eq!((w, h, rgb.len()), (3, 2, 18));
        assert_eq!(&rgb[..3], &[200, 100, 40]);
    }
}

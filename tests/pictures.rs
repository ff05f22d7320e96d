//! What the app's pictures show, under Xvfb with Mesa's software Vulkan:
//! - a screenshot taken on the very frame a layout switch starts shows the selector's new text
//!   whole: the same text pixels as a screenshot of a later frame (egui adds the glyphs it has
//!   not drawn before to its font atlas in that frame, and the atlas must reach the GPU before
//!   the frame is drawn);
//! - `record` writes an animated PNG of at least 10 frames into the export folder, at the size
//!   asked for, whose frame delays add up to the time it recorded and follow the frame rate the
//!   app ran at.
#![cfg(feature = "app")]

use std::path::{Path, PathBuf};

mod support;
mod window;
use window::{Shot, load, run_in_xvfb, temp_dir};

/// The layout selector's text at UI scale 1: the top of the panel, right of the word "layout".
const SELECTOR: (usize, usize, usize, usize) = (50, 2, 330, 20);

/// Pixels in `shot`'s selector bright enough to be text.
fn text_pixels(shot: &Shot) -> Vec<bool> {
    let (x0, y0, x1, y1) = SELECTOR;
    let mut out = Vec::new();
    for y in y0..y1 {
        for x in x0..x1 {
            let [r, g, b] = shot.rgb[y * shot.width + x];
            out.push(u32::from(r) + u32::from(g) + u32::from(b) > 3 * 110);
        }
    }
    out
}

#[test]
fn a_screenshot_on_the_frame_a_switch_starts_shows_whole_glyphs() {
    let dir = temp_dir("glyphs");
    let (first, later) = (dir.join("first.png"), dir.join("later.png"));
    // The switch and the screenshot in one frame, as a script a new user writes.
    let script = format!(
        "count 200000\nwait 30\nlayout soa\nscreenshot {}\nwait 40\nscreenshot {}\nexit\n",
        first.display(),
        later.display()
    );
    let Some((code, run)) = run_in_xvfb(&dir, &script, &["--seed", "5"]) else {
        return;
    };
    assert_eq!(code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let (a, b) = (text_pixels(&load(&first)), text_pixels(&load(&later)));
    let lit = b.iter().filter(|&&p| p).count();
    assert!(
        lit > 200,
        "the later screenshot shows no selector text ({lit} px)"
    );
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(
        differ * 50 <= lit,
        "{differ} of the selector's {lit} text pixels differ between the frame the switch started \
         and a later one: glyphs drawn before the font atlas held them"
    );
}

/// The clip's path from the app's log line `clip PATH: N frames over S s, ...`.
fn clip_line(stdout: &str) -> (PathBuf, usize, f64) {
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("] clip ").map(|(_, rest)| rest.to_string()))
        .unwrap_or_else(|| panic!("no clip line in:\n{stdout}"));
    let (path, rest) = line.split_once(": ").unwrap();
    let words: Vec<&str> = rest.split_whitespace().collect();
    (
        PathBuf::from(path),
        words[0].parse().unwrap(),
        words[3].parse().unwrap(),
    )
}

/// The APNG's size, frame count and each frame's delay in ms.
fn read_clip(path: &Path) -> (u32, u32, u32, Vec<f64>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let info = reader.info();
    let (width, height) = (info.width, info.height);
    let frames = info
        .animation_control()
        .expect("an animated PNG")
        .num_frames;
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let mut delays = Vec::new();
    for _ in 0..frames {
        reader.next_frame(&mut buf).unwrap();
        let fc = reader.info().frame_control().expect("a frame control");
        delays.push(1000.0 * f64::from(fc.delay_num) / f64::from(fc.delay_den.max(1)));
    }
    (width, height, frames, delays)
}

/// The frame p50 of the summary's first line, ms.
fn frame_p50(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains("frame p50"))
        .unwrap_or_else(|| panic!("no summary in:\n{stdout}"));
    let after = line.split("frame p50").nth(1).unwrap();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn record_writes_an_animated_png_at_the_apps_frame_rate() {
    let dir = temp_dir("clip");
    let exports = dir.join("exports");
    let script = "count 20000\nwait 10\nrecord 3 1/2\nwait 60\nlayout aos\nwait 60\nexit\n";
    let args = ["--seed", "2", "--export-dir", exports.to_str().unwrap()];
    let Some((code, run)) = run_in_xvfb(&dir, script, &args) else {
        return;
    };
    assert_eq!(code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let (path, frames, seconds) = clip_line(&run.stdout);
    assert!(
        path.starts_with(&exports),
        "{} not in the export folder",
        path.display()
    );
    // The frames' spill file is gone once the clip is written: the folder holds the clip only.
    let left: Vec<_> = std::fs::read_dir(&exports)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    let (width, height, in_file, delays) = read_clip(&path);
    assert_eq!((width, height), (640, 360), "half of the 1280x720 window");
    assert_eq!(in_file as usize, frames);
    assert!(frames >= 10, "{frames} frames");
    // The delays are the times between captures: they add up to the time recorded (plus the
    // last frame's), and their median is the app's frame time.
    let total: f64 = delays[..delays.len() - 1].iter().sum();
    assert!(
        (total / 1000.0 - seconds).abs() < 0.05 + 0.002 * frames as f64,
        "delays add up to {total} ms, the app recorded {seconds} s"
    );
    let mut sorted = delays.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let p50 = frame_p50(&run.stdout);
    assert!(
        median > p50 / 2.0 && median < p50 * 2.0,
        "the clip's median delay is {median} ms, the app's frame p50 {p50} ms"
    );
}

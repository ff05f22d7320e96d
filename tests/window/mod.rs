//! What the tests that run the real app under Xvfb share: finding out whether it can run here,
//! running it with a script, and reading its screenshots.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub use crate::support::skip_or_fail;

pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

pub struct Shot {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<[u8; 3]>,
}

pub fn load(path: &Path) -> Shot {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (width, height) = (info.width as usize, info.height as usize);
    let channels = info.line_size / width;
    let rgb = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .map(|(x, y)| {
            let p = &buf[y * info.line_size + x * channels..];
            [p[0], p[1], p[2]]
        })
        .collect();
    Shot { width, height, rgb }
}

/// For the columns `x0..x1` (fractions of the width): the share of pixels that differ from the
/// clear color (read from the top-right corner, which the letterboxed world never covers), and
/// how many distinct colors those pixels have.
pub fn region_stats(shot: &Shot, x0: f32, x1: f32) -> (f64, usize) {
    let clear = shot.rgb[shot.width - 1];
    let mut drawn = 0usize;
    let mut total = 0usize;
    let mut colors = std::collections::HashSet::new();
    for y in 0..shot.height {
        for x in (x0 * shot.width as f32) as usize..(x1 * shot.width as f32) as usize {
            let p = shot.rgb[y * shot.width + x];
            total += 1;
            if p.iter().zip(clear).any(|(&a, b)| a.abs_diff(b) > 6) {
                drawn += 1;
                colors.insert([p[0] >> 3, p[1] >> 3, p[2] >> 3]);
            }
        }
    }
    (drawn as f64 / total.max(1) as f64, colors.len())
}

/// Why the app cannot run here, if it cannot.
pub fn missing_display() -> Option<&'static str> {
    if !have("xvfb-run") {
        return Some("xvfb-run is not installed (Debian package xvfb)");
    }
    if !Path::new("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json").exists()
        && !Path::new("/usr/share/vulkan/icd.d").is_dir()
    {
        return Some("no Vulkan driver is installed (Debian package mesa-vulkan-drivers)");
    }
    None
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("entity-layouts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `replay`'s growth per frame (`entity_layouts::runtime::driver::GROW_CHUNK`).
pub const REPLAY_GROW_CHUNK: &str = "250000";

/// What a run of the app printed.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
}

/// The exit code xvfb-run gives when it cannot remove its temporary directory.
const XVFB_RUN_CLEANUP_FAILED: i32 = 5;

/// Runs the app in a 1280x720 Xvfb screen with `script` and `args`; `None` when there is no
/// adapter (the test is then skipped, or fails under CI).
pub fn run_in_xvfb(dir: &Path, script: &str, args: &[&str]) -> Option<(Option<i32>, Run)> {
    run_in_xvfb_env(dir, script, args, &[])
}

pub fn run_in_xvfb_env(
    dir: &Path,
    script: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<(Option<i32>, Run)> {
    let script_path = dir.join("run.script");
    std::fs::write(&script_path, script).unwrap();
    // The tests compare the app's end with `replay`, which grows by a count of entities a frame:
    // the app grows so too, unless a test asks for its own pace (without the flag the app grows
    // by time, and where growth's chunks fall changes the state). Switches go by a count too, so
    // that a script's layout is active on the same frames on a fast machine and a slow one.
    let mut paces = Vec::new();
    for flag in ["--grow-chunk", "--switch-chunk"] {
        if !args.contains(&flag) {
            paces.extend([flag, REPLAY_GROW_CHUNK]);
        }
    }
    let launch = || {
        Command::new("timeout")
            .args(["900", "xvfb-run", "-a", "-s", "-screen 0 1280x720x24"])
            .arg(env!("CARGO_BIN_EXE_entity-layouts"))
            .args(args)
            .args(&paces)
            .arg("--script")
            .arg(&script_path)
            .env("WGPU_BACKEND", "vulkan")
            .envs(env.iter().copied())
            .output()
            .expect("xvfb-run starts")
    };
    let mut out = launch();
    // xvfb-run's own failure to remove its temporary directory ends it with 5 in place of the
    // app's exit code (once in a clean clone's test run, after the app had exited with 2 as
    // asked): the run is the harness's to repeat, not a finding about the app.
    if out.status.code() == Some(XVFB_RUN_CLEANUP_FAILED)
        && String::from_utf8_lossy(&out.stderr).contains("problem while cleaning up")
    {
        out = launch();
    }
    let run = Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    if run.stderr.contains("no GPU adapter was found") {
        skip_or_fail(&format!("no Vulkan adapter under Xvfb: {}", run.stderr));
        return None;
    }
    Some((out.status.code(), run))
}

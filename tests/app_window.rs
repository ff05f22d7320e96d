//! The real app under Xvfb with Mesa's software Vulkan (how Bevy's own CI runs its examples), at
//! 1280x720, a common projector's resolution:
//! - a script visits every layout at 100k entities, takes screenshots, grows to 400k and exits
//!   half way through a layout switch: the exit code, dots over the world and the panel in every
//!   screenshot (pixel statistics, not a golden image), every switch landed but the last, the
//!   panel's content fits the window with every CPU layout on the scoreboard, and the final
//!   checksum equals a windowless replay of the same script through the core;
//! - at 1M and 4M entities the world shows structure: the luminance of 16x16-pixel blocks varies
//!   (coefficient of variation at least 0.2; uniform random dots measured 0.006 at 1M);
//! - the shipped talk, shortened and at small counts, runs to its end and replays to the same
//!   checksum.
//!
//! Without a display or a Vulkan driver the tests are skipped with the reason; under CI=true a
//! skip is a failure.
#![cfg(feature = "app")]

use std::path::{Path, PathBuf};
use std::process::Command;

use entity_layouts::layout::LayoutKind;
use entity_layouts::tools::script::{parse, replay};

mod support;
mod window;
use window::{
    Run, Shot, have, load, missing_display, region_stats, run_in_xvfb, skip_or_fail, temp_dir,
};

const COUNT: usize = 100_000;
const SEED: u64 = 7;
/// Where the tour ends: past one switch chunk, so that the last switch spans frames.
const END_COUNT: usize = 400_000;

/// Runs the app in a 1280x720 Xvfb screen with `script`, starting in `layout` with `count`
/// entities; `None` when there is no adapter (the test is then skipped, or fails under CI).
fn run_app(dir: &Path, script: &str, layout: LayoutKind, count: usize) -> Option<Run> {
    run_app_with(dir, script, layout, count, &[])
}

fn run_app_with(
    dir: &Path,
    script: &str,
    layout: LayoutKind,
    count: usize,
    extra: &[&str],
) -> Option<Run> {
    let (code, run) = run_app_raw(dir, script, layout, count, extra)?;
    assert_eq!(
        code,
        Some(0),
        "app failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        !run.stderr.contains("does not fit the window"),
        "the panel overflows 1280x720:\n{}",
        run.stderr
    );
    Some(run)
}

/// The app's exit code and output, whatever they are.
fn run_app_raw(
    dir: &Path,
    script: &str,
    layout: LayoutKind,
    count: usize,
    extra: &[&str],
) -> Option<(Option<i32>, Run)> {
    let count = count.to_string();
    let seed = SEED.to_string();
    let name = layout.name();
    let mut args = vec!["--layout", &name, "--count", &count, "--seed", &seed];
    args.extend_from_slice(extra);
    run_in_xvfb(dir, script, &args)
}

/// The run's final checksum, checked against a windowless replay of the same script.
fn assert_replays(run: &Run, script: &str, layout: LayoutKind, count: usize) -> String {
    let final_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("final: "))
        .unwrap_or_else(|| panic!("no final line in:\n{}", run.stdout));
    let checksum = final_line.rsplit(' ').next().unwrap();
    let expected = replay(parse(script).unwrap(), layout, SEED, count).unwrap();
    assert!(expected.refused.is_empty(), "{:?}", expected.refused);
    let expected = expected.driver;
    assert_eq!(
        checksum,
        format!("{:016x}", expected.swarm().checksum()),
        "the app's final state differs from the core's replay: {final_line}"
    );
    final_line.to_string()
}

#[test]
fn the_app_visits_every_layout_and_ends_where_the_core_does() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("app");
    let mut script =
        String::from("# every layout at 100k, with churn and both thread settings\nchurn 500\n");
    let mut shots: Vec<PathBuf> = Vec::new();
    for (i, kind) in LayoutKind::CPU.iter().enumerate() {
        let shot = dir.join(format!("{kind}.png"));
        // Switches carry 100,000 entities a frame here (--switch-chunk below): each layout is
        // active from the frame after its request, on a fast machine and a slow one alike.
        script.push_str(&format!(
            "layout {kind}\nthreads {}\nwait 3\nscreenshot {}\nwait 24\n",
            if i % 2 == 0 { "1" } else { "all" },
            shot.display()
        ));
        shots.push(shot);
    }
    // Every layout once more on one thread (changing threads restarts the scoreboard), so that
    // the scoreboard, and the panel, are at their fullest; then the export bundle. On the best
    // SIMD tier: the scoreboard names it on the bars of the layouts that have tiers.
    script.push_str("threads 1\nsimd best\n");
    for kind in LayoutKind::CPU {
        script.push_str(&format!("layout {kind}\nwait 27\n"));
    }
    script.push_str("export\nwait 8\n");
    // Then grow past one switch chunk (100,000 a frame) and exit while a switch is half done:
    // the state must still be the core's, and the summary must say the switch was pending.
    script.push_str(&format!(
        "count {END_COUNT}\nwait 3\nlayout soa\nwait 1\nexit\n"
    ));
    let exports = dir.join("exports");
    let Some(run) = run_app_with(
        &dir,
        &script,
        LayoutKind::Soa,
        COUNT,
        &[
            "--export-dir",
            exports.to_str().unwrap(),
            "--switch-chunk",
            "100000",
        ],
    ) else {
        return;
    };
    let bundle = std::fs::read_dir(&exports)
        .expect("the export folder exists")
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("export-")
        })
        .expect("one timestamped export folder");
    let frames = std::fs::read_to_string(bundle.join("frames.csv")).unwrap();
    assert!(
        frames.starts_with(
            "frame,time_s,frame_ms,simulate_ms,gather_upload_ms,draw_ms,renderer,layout,n,threads,simd,systems,move_ms,regen_ms,seek_ms,avoid_ms\n"
        ) && frames.lines().count() > 10,
        "{frames}"
    );
    let scoreboard = std::fs::read_to_string(bundle.join("scoreboard.csv")).unwrap();
    for kind in LayoutKind::CPU {
        assert!(
            scoreboard.contains(&format!("\n{},", kind.name())),
            "{kind} not in {scoreboard}"
        );
    }
    let svg = std::fs::read_to_string(bundle.join("scoreboard.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("dyn-12"),
        "scoreboard.svg"
    );
    let best = entity_layouts::simd::SimdTier::best().name();
    for kind in LayoutKind::CPU.into_iter().filter(|k| k.has_simd_kernels()) {
        assert!(
            svg.contains(&format!("{kind} · {best}")),
            "scoreboard.svg names {kind}'s tier"
        );
        assert!(
            scoreboard.contains(&format!(",{best},")),
            "scoreboard.csv names the tier"
        );
    }
    assert!(
        bundle.join("screenshot.png").is_file(),
        "the export's screenshot"
    );
    // The slide: the scoreboard alone, full HD.
    let slide = load(&bundle.join("scoreboard.png"));
    assert_eq!((slide.width, slide.height), (1920, 1080));
    assert!(run.stdout.contains("exported to "), "{}", run.stdout);
    let stdout = &run.stdout;
    let final_line = assert_replays(&run, &script, LayoutKind::Soa, COUNT);
    assert!(
        final_line.contains(&format!("{END_COUNT} entities")),
        "{final_line}"
    );
    // Every switch of the tour landed (the stdout log says so), the last one is still pending:
    // two frames of copying 100,000 of its 400,000 entities each cannot finish it.
    let last = LayoutKind::CPU[LayoutKind::CPU.len() - 1];
    let pending = format!("layout {last} (switch to soa pending: ");
    let copied: usize = final_line
        .split_once(&pending)
        .and_then(|(_, rest)| rest.split_once(" copied)"))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no pending switch in: {final_line}"));
    assert!(copied > 0 && copied < END_COUNT, "{final_line}");
    for kind in &LayoutKind::CPU {
        assert!(
            stdout.contains(&format!("switched to {}", kind.label())),
            "no switch to {kind} in:\n{stdout}"
        );
    }
    for kind in LayoutKind::CPU {
        assert!(
            stdout.contains(&format!("  {}", kind.name())),
            "no summary row for {kind}:\n{stdout}"
        );
    }

    for shot in &shots {
        assert!(shot.is_file(), "{} was not written", shot.display());
        let image = load(shot);
        // The panel: the left fifth is panel background, text and the (dark) plot, not the
        // clear color.
        let (panel_drawn, panel_colors) = region_stats(&image, 0.0, 0.2);
        assert!(
            panel_drawn > 0.7 && panel_colors > 4,
            "{}: panel {panel_drawn:.3} drawn, {panel_colors} colors",
            shot.display()
        );
        // The world: right of the panel, dots in several colors over the dark clear color.
        let (world_lit, world_colors) = region_stats(&image, 0.4, 1.0);
        assert!(
            (0.02..0.95).contains(&world_lit) && world_colors > 8,
            "{}: world area {world_lit:.3} lit, {world_colors} colors",
            shot.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The two gestures a talk is made of: the app opens at the count it was given (loaded before the
/// first timed frame), and every layout request during a switch says what it did: the same
/// layout keeps the copy going, a third replaces it (and says what it replaced), the current one
/// cancels it. The panel shows the switch's progress, and the run ends where `replay` does.
#[test]
fn the_app_opens_at_its_count_and_says_what_each_switch_request_did() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("gestures");
    const OPENING: usize = 200_000;
    let shot = dir.join("mid-switch.png");
    // 20,000 entities a frame (--switch-chunk below): each switch spans frames.
    let script = format!(
        "layout aos\nwait 2\nlayout aos\nwait 1\nlayout boxed\nwait 1\nscreenshot {}\nwait 1\nlayout soa\nwait 2\nlayout hecs\nwait 14\nexit\n",
        shot.display()
    );
    let Some(run) = run_app_with(
        &dir,
        &script,
        LayoutKind::Soa,
        OPENING,
        &["--switch-chunk", "20000"],
    ) else {
        return;
    };
    let out = &run.stdout;
    let position = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("no '{needle}' in:\n{out}"))
    };
    // Loaded before the first frame, and before the script's first line was carried out.
    let loaded = position(&format!("[frame 0] loaded {OPENING} entities into"));
    assert!(loaded < position("switching to"), "{out}");
    // The same layout again changed nothing; the third one says what it replaced, and how far
    // that copy had come (two frames and a third of 20,000 each).
    assert_eq!(out.matches("switching to").count(), 3, "{out}");
    let replaced = position("instead of");
    assert!(
        out[replaced..].starts_with("instead of AoS") && out.contains("(60000 of 200000"),
        "{out}"
    );
    let cancelled = position("cancelled after 40000 entities copied: staying in");
    assert!(replaced < cancelled, "{out}");
    assert!(out.contains("switched to hecs"), "{out}");
    let final_line = assert_replays(&run, &script, LayoutKind::Soa, OPENING);
    assert!(
        final_line.starts_with(&format!("final: {OPENING} entities, layout hecs,")),
        "{final_line}"
    );
    // The screenshot was taken with the switch into boxes under way: the panel is there.
    let picture = load(&shot);
    assert!(
        region_stats(&picture, 0.0, 0.25).0 > 0.05,
        "no panel on the left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `wait done` holds a script until the switch under way has landed, in the app itself: with
/// 20,000 entities copied a frame, the switch of 200,000 takes ten frames, and the `exit` after
/// the wait comes only once it is done.
#[test]
fn a_script_waits_for_a_switch_to_land() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("wait-done");
    let Some(run) = run_app_with(
        &dir,
        "layout aos\nwait done\nexit\n",
        LayoutKind::Soa,
        200_000,
        &["--switch-chunk", "20000"],
    ) else {
        return;
    };
    let out = &run.stdout;
    assert!(out.contains("switched to AoS"), "{out}");
    let final_line = out.lines().find(|l| l.starts_with("final: ")).unwrap();
    assert!(
        final_line.starts_with("final: 200000 entities, layout aos,"),
        "{final_line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_options_exit_2_before_a_window_opens() {
    let bin = env!("CARGO_BIN_EXE_entity-layouts");
    for (args, needle) in [
        (vec!["--layout", "octree"], "accepted: ecs-table"),
        (
            vec!["--count", "20000000"],
            "0 to 10000000 entities in ecs-table",
        ),
        (vec!["--count", "200000000"], "0 to 100000000"),
        (vec!["--churn", "-3"], "0 to 100000"),
        (vec!["--threads", "8"], "1 or all"),
        (
            vec!["--script", "/nonexistent/talk.script"],
            "cannot read script",
        ),
        (vec!["--screenshot", "shot.jpg"], ".png"),
        (vec!["--size", "0x10"], "WIDTHxHEIGHT"),
        (vec!["--renderer", "points"], "compute or quads"),
    ] {
        let out = Command::new(bin).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // No display to open a window on: a message and exit 2, not a panic.
    let out = Command::new(bin)
        .args(["--frames", "1", "--count", "10"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no display") && err.contains("--headless"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("entity-layouts-badscript-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("bad.script");
    std::fs::write(&script, "count 1000\nwait 2\nlayout linked-list\n").unwrap();
    let out = Command::new(bin)
        .arg("--script")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3") && err.contains("linked-list"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Mean luminance of 16x16-pixel blocks over the central part of the world, and their
/// coefficient of variation (standard deviation over mean).
fn block_luminance_cv(shot: &Shot) -> (f64, f64) {
    // The world sits right of the 360-point panel, letterboxed to 16:9; these bounds stay inside it.
    let (x0, x1) = (
        (0.30 * shot.width as f64) as usize,
        (0.99 * shot.width as f64) as usize,
    );
    let (y0, y1) = (
        (0.16 * shot.height as f64) as usize,
        (0.84 * shot.height as f64) as usize,
    );
    let mut blocks = Vec::new();
    for by in (y0..y1 - 16).step_by(16) {
        for bx in (x0..x1 - 16).step_by(16) {
            let mut sum = 0.0;
            for y in by..by + 16 {
                for x in bx..bx + 16 {
                    let [r, g, b] = shot.rgb[y * shot.width + x].map(f64::from);
                    sum += 0.2126 * r + 0.7152 * g + 0.0722 * b;
                }
            }
            blocks.push(sum / 256.0);
        }
    }
    let mean = blocks.iter().sum::<f64>() / blocks.len() as f64;
    let var = blocks.iter().map(|b| (b - mean).powi(2)).sum::<f64>() / blocks.len() as f64;
    (mean, var.sqrt() / mean)
}

#[test]
fn millions_of_dots_still_show_structure() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("legible");
    let shots = [
        (1_000_000, dir.join("1m.png")),
        (4_000_000, dir.join("4m.png")),
    ];
    let mut script = String::from("threads all\n");
    for (n, shot) in &shots {
        // Growing spawns 250,000 a frame; the wait covers it and a few steady frames.
        let frames = n / 250_000 + 4;
        script.push_str(&format!(
            "count {n}\nwait {frames}\nscreenshot {}\nwait 2\n",
            shot.display()
        ));
    }
    // Seek on for two seconds of simulated time at 1M: every entity steering toward a
    // clump-mate, the streams must still read.
    let seeking = dir.join("1m-seek.png");
    script.push_str(&format!(
        "count 1000000\nseek on\nwait 120\nscreenshot {}\nwait 2\nexit\n",
        seeking.display()
    ));
    let shots = [shots[0].clone(), shots[1].clone(), (1_000_000, seeking)];
    let Some(run) = run_app(&dir, &script, LayoutKind::Soa, 0) else {
        return;
    };
    assert_replays(&run, &script, LayoutKind::Soa, 0);
    for (n, shot) in &shots {
        let (mean, cv) = block_luminance_cv(&load(shot));
        eprintln!("{n} entities: block luminance mean {mean:.1}, coefficient of variation {cv:.3}");
        assert!(mean > 5.0, "{n}: the world is dark ({mean:.1})");
        assert!(cv >= 0.2, "{n}: the world reads as noise, CV {cv:.3} < 0.2");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_panel_fits_720_lines_at_ui_scale_1_and_1_25_with_everything_on_it() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    // Every layout this machine runs on the scoreboard, the memory view open, a notice shown.
    let kinds: Vec<LayoutKind> = match entity_layouts::runtime::gpu::context::availability() {
        Ok(()) => LayoutKind::ALL.to_vec(),
        Err(_) => LayoutKind::CPU.to_vec(),
    };
    let mut script = String::from("memory show\nsimd best\n");
    for kind in &kinds {
        script.push_str(&format!("layout {kind}\nwait 5\n"));
    }
    script.push_str("wait 5\nexit\n");
    for scale in ["1", "1.25"] {
        let dir = temp_dir(&format!("fit-{scale}"));
        // run_app_with fails on the panel's overflow warning.
        let Some(run) = run_app_with(
            &dir,
            &script,
            LayoutKind::Soa,
            20_000,
            &["--ui-scale", scale],
        ) else {
            return;
        };
        for kind in &kinds {
            assert!(
                run.stdout
                    .contains(&format!("switched to {}", kind.label())),
                "{kind}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_app_counts_until_over_a_line_and_says_what_it_found() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("until-over");
    // 0.1 ms: boxed objects cross it at a few tens of thousands here, within a few probes.
    let script = "layout boxed\nwait 2\ncount until-over 0.1\nsay Over at {count}: {simulate_ms} ms, {budget_pct}%\nwait 3\nexit\n";
    let Some(run) = run_app(&dir, script, LayoutKind::Boxed, 1_000) else {
        return;
    };
    let found = run
        .stdout
        .lines()
        .find_map(|l| l.split_once("until-over 0.1 ms: boxed crosses it at "))
        .map(|(_, rest)| rest.split(' ').next().unwrap().parse::<usize>().unwrap())
        .unwrap_or_else(|| panic!("no crossing in:\n{}", run.stdout));
    assert!(found >= 1_000, "{found}");
    // The script waited for the search: the caption says the count it found, filled in.
    let say = run
        .stdout
        .lines()
        .find_map(|l| l.split_once("say: Over at "))
        .map(|(_, rest)| rest.to_string())
        .unwrap_or_else(|| panic!("no caption in:\n{}", run.stdout));
    assert!(!say.contains('{'), "{say}");
    let final_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("final: "))
        .unwrap();
    assert!(
        final_line.starts_with(&format!("final: {found} entities")),
        "{final_line}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_shipped_talk_runs_to_its_end() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    for (name, kinds) in [
        (
            "layouts.txt",
            &[
                "boxed",
                "soa",
                "aos",
                "ecs-table",
                "ecs-contiguous",
                "dyn-12",
                "boxed-shuffled",
            ][..],
        ),
        // Seek on and off, and layout switches while it is on.
        (
            "seek.txt",
            &[
                "boxed-shuffled",
                "aos",
                "soa",
                "ecs-contiguous",
                "ecs-table",
            ][..],
        ),
        // The neighbours on, a sort by cell, the tuned pass, a switch while they run.
        ("neighbours.txt", &["soa", "boxed"][..]),
    ] {
        runs_to_its_end(name, kinds);
    }
}

/// A shipped talk, shortened and at small counts, runs to its end, ends where the core does, and
/// measured every layout in `kinds`.
fn runs_to_its_end(name: &str, kinds: &[&str]) {
    let talk = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/talks")
            .join(name),
    )
    .expect("the talk ships in assets/talks");
    parse(&talk).expect("the shipped talk parses");
    // The same story, a few frames a slide and at most 50,000 entities.
    let short: String = talk
        .lines()
        .map(|line| match line.split_once(' ') {
            // A sort lands when this machine's clock says; the checksum is by id, and a fixed
            // wait keeps the frames the same in the replay.
            Some(("wait", "done")) => "wait 3\n".to_string(),
            Some(("wait", frames)) => {
                format!(
                    "wait {}\n",
                    (frames.trim().parse::<u64>().unwrap() / 120).max(2)
                )
            }
            // The search has its own test below; here a fixed count keeps the run
            // replayable (the counts a search probes depend on this machine's clock).
            Some(("count", n)) if n.starts_with("until-over") => "count 50000\n".to_string(),
            Some(("count", n)) => {
                let n: f64 = n.trim().parse().unwrap();
                format!("count {}\n", (n as usize).min(50_000))
            }
            _ => format!("{line}\n"),
        })
        .chain(std::iter::once("exit\n".to_string()))
        .collect();
    let dir = temp_dir("talk");
    let Some(run) = run_app(&dir, &short, LayoutKind::EcsTable, 10_000) else {
        return;
    };
    assert_replays(&run, &short, LayoutKind::EcsTable, 10_000);
    for kind in kinds {
        assert!(
            run.stdout.contains(&format!("  {kind} ")),
            "{name}: no summary row for {kind}:\n{}",
            run.stdout
        );
    }
    if name == "neighbours.txt" {
        assert!(
            run.stdout.contains("move+regen+avoid"),
            "{name}: no summary row with the neighbours on:\n{}",
            run.stdout
        );
    }
    if name == "seek.txt" {
        assert!(
            run.stdout.contains("move+regen+seek"),
            "{name}: no summary row with seek on:\n{}",
            run.stdout
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` to a running headless app once it is up, and checks that it ends with its
/// summary and the conventional exit code.
fn ends_with_summary_on(signal: &str, code: i32) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["--headless", "--count", "20000", "--size", "640x360"])
        .env("WGPU_BACKEND", "vulkan")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the app starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut banner = String::new();
    stdout.read_line(&mut banner).unwrap();
    assert!(banner.contains("Ctrl-C ends the run"), "{banner}");
    // Let it run some frames (a few seconds on lavapipe), then ask it to stop.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    if stderr.contains("no GPU adapter was found") {
        return skip_or_fail(&format!("no Vulkan adapter: {stderr}"));
    }
    assert_eq!(
        status.code(),
        Some(code),
        "{signal}: {status:?}\n{rest}\n{stderr}"
    );
    assert!(
        rest.contains("summary per layout used:") && rest.contains("final: 20000 entities"),
        "{signal}: no summary in\n{rest}\n{stderr}"
    );
}

#[test]
fn ctrl_c_and_sigterm_end_the_run_with_its_summary() {
    if !Path::new("/usr/share/vulkan/icd.d").is_dir() {
        return skip_or_fail("no Vulkan driver is installed (Debian package mesa-vulkan-drivers)");
    }
    ends_with_summary_on("-INT", 130);
    ends_with_summary_on("-TERM", 143);
}

/// Writes into places that cannot take them (sysfs is read-only even for root, and CI runs as
/// root): each is a message, the run goes on to its end, and a scripted run's exit code says
/// that something was not written.
#[test]
fn failed_writes_are_messages_and_the_run_goes_on() {
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("readonly");
    let script = "count 20000\nwait 3\nscreenshot /sys/entity-layouts-test.png\nexport\nwait 8\ncount 30000\nwait 3\nexit\n";
    let Some((code, run)) = run_app_raw(
        &dir,
        script,
        LayoutKind::Soa,
        1000,
        &["--export-dir", "/sys/entity-layouts-exports"],
    ) else {
        return;
    };
    assert_eq!(code, Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr
            .contains("cannot save screenshot /sys/entity-layouts-test.png"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("cannot create /sys/entity-layouts-exports"),
        "{}",
        run.stderr
    );
    // Both failures count toward the exit code, and the summary names them.
    for failed in [
        "/sys/entity-layouts-test.png",
        "/sys/entity-layouts-exports/export-",
    ] {
        assert!(
            run.stderr.lines().any(|l| l.starts_with("error: ")
                && l.contains(failed)
                && l.ends_with("was not written")),
            "{failed}: {}",
            run.stderr
        );
    }
    // The run went on past the failures, to the same end as the core's replay.
    assert_replays(&run, script, LayoutKind::Soa, 1000);
    assert!(
        run.stdout.contains("final: 30000 entities"),
        "{}",
        run.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Headless (no X server), the offscreen image is resized to 1x1, to 8K and back: no panic, and
/// the world is fitted again (dots right of the panel in the last screenshot, at the new size).
#[test]
fn the_canvas_survives_extreme_sizes() {
    if !Path::new("/usr/share/vulkan/icd.d").is_dir() {
        return skip_or_fail("no Vulkan driver is installed (Debian package mesa-vulkan-drivers)");
    }
    let dir = temp_dir("sizes");
    let shot = dir.join("after.png");
    let script = format!(
        "count 50000\nwait 3\nsize 1x1\nwait 3\nsize 7680x4320\nwait 2\nsize 960x540\nwait 4\nscreenshot {}\nexit\n",
        shot.display()
    );
    let script_path = dir.join("sizes.script");
    std::fs::write(&script_path, &script).unwrap();
    let out = Command::new("timeout")
        .args(["300"])
        .arg(env!("CARGO_BIN_EXE_entity-layouts"))
        .args([
            "--headless",
            "--size",
            "640x360",
            "--layout",
            "soa",
            "--count",
            "0",
        ])
        .arg("--script")
        .arg(&script_path)
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("no GPU adapter was found") {
        return skip_or_fail(&format!("no Vulkan adapter: {stderr}"));
    }
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let image = load(&shot);
    assert_eq!((image.width, image.height), (960, 540));
    let (world_lit, world_colors) = region_stats(&image, 0.45, 1.0);
    assert!(
        (0.02..0.95).contains(&world_lit) && world_colors > 8,
        "world area {world_lit:.3} lit, {world_colors} colors"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The windowed soak, short: a seeded random script (layouts, counts up to 100,000, threads,
/// churn, pauses, screenshots) runs to its end and ends where the core's replay does.
/// `scripts/app-soak.sh` runs the long one.
#[test]
fn a_random_script_runs_to_the_end_the_core_computes() {
    use entity_layouts::runtime::action::Action;
    use entity_layouts::tools::script::to_text;
    use entity_layouts::tools::soak::random_actions;
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("random");
    let mut actions = Vec::new();
    for (i, chunk) in random_actions(11, 40, 100_000).chunks(40).enumerate() {
        actions.extend_from_slice(chunk);
        actions.push(Action::Screenshot(dir.join(format!("random-{i}.png"))));
    }
    actions.push(Action::Exit);
    let script = to_text(&actions);
    let Some(run) = run_app(&dir, &script, LayoutKind::Soa, 20_000) else {
        return;
    };
    assert_replays(&run, &script, LayoutKind::Soa, 20_000);
    assert!(
        dir.join("random-1.png").is_file(),
        "the screenshots were written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The app started on the gpu layout (the renderer's own device, its buffer drawn as is) runs,
/// ends in the state a windowless replay reaches, and a count past the adapter's limit is exit
/// code 2 with the limit named, before anything is simulated.
#[test]
fn the_app_runs_on_the_gpu_layout_and_refuses_past_the_adapter_limit() {
    if !have("xvfb-run") {
        return skip_or_fail("xvfb-run is not installed");
    }
    let dir = temp_dir("gpu");
    let script = "churn 500\nwait 20\nlayout soa\nwait 10\nlayout gpu\nwait 10\nexit\n";
    let Some(run) = run_app(&dir, script, LayoutKind::Gpu, 60_000) else {
        return;
    };
    assert!(run.stdout.contains("layout gpu"), "{}", run.stdout);
    assert_replays(&run, script, LayoutKind::Gpu, 60_000);
    let limit = entity_layouts::runtime::catalog::capacity_limit(LayoutKind::Gpu);
    if let Some(limit) = limit.filter(|l| l.max_entities < 100_000_000) {
        let too_many = limit.max_entities + 1;
        let (code, run) = run_app_raw(&dir, "exit\n", LayoutKind::Gpu, too_many, &[]).unwrap();
        assert_eq!(code, Some(2), "{}", run.stderr);
        assert!(run.stderr.contains("max_"), "{}", run.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Pixels right of the panel in the lower half of `shot` (where the memory view's picture sits,
/// under the world and its readings) that have exactly `rgb`.
fn pixels_of(shot: &Shot, rgb: [u8; 3]) -> usize {
    let mut n = 0;
    for y in shot.height / 2..shot.height {
        for x in shot.width * 3 / 10..shot.width {
            n += usize::from(shot.rgb[y * shot.width + x] == rgb);
        }
    }
    n
}

#[test]
fn the_memory_view_draws_each_layouts_storage() {
    use entity_layouts::layout::regions::Field;
    if let Some(reason) = missing_display() {
        return skip_or_fail(reason);
    }
    let dir = temp_dir("memory");
    let kinds = [
        LayoutKind::Soa,
        LayoutKind::Aos,
        LayoutKind::EcsTable,
        LayoutKind::BoxedShuffled,
    ];
    let mut script = String::from("memory show\n");
    for kind in kinds {
        script.push_str(&format!(
            "layout {kind}\nwait 8\nscreenshot {}\nwait 2\n",
            dir.join(format!("{kind}.png")).display()
        ));
    }
    script.push_str(&format!(
        "memory hide\nwait 4\nscreenshot {}\nwait 2\nexit\n",
        dir.join("hidden.png").display()
    ));
    // run_app also checks that the panel fits 1280x720 with the view open.
    let Some(run) = run_app(&dir, &script, LayoutKind::Soa, 20_000) else {
        return;
    };
    assert_replays(&run, &script, LayoutKind::Soa, 20_000);
    for kind in kinds {
        let shot = load(&dir.join(format!("{kind}.png")));
        let present: Vec<Field> = Field::ALL
            .into_iter()
            .filter(|f| pixels_of(&shot, f.rgb()) >= 30)
            .collect();
        if kind == LayoutKind::BoxedShuffled {
            // The address scatter (its dark plot, dots in x's colour), then the first boxes byte
            // by byte: their fields, and no ids (those live in a Vec, not in the boxes).
            assert!(
                pixels_of(&shot, [22, 22, 28]) >= 10_000,
                "{kind}: no scatter plot"
            );
            assert!(pixels_of(&shot, Field::X.rgb()) >= 100, "{kind}: no dots");
            assert_eq!(present, Field::STATE.to_vec(), "{kind}: the boxes up close");
        } else {
            // One row per cache line, every field and the ids in their colours.
            assert_eq!(present, Field::ALL.to_vec(), "{kind}: fields drawn");
        }
    }
    let hidden = load(&dir.join("hidden.png"));
    let left: usize = Field::ALL.iter().map(|f| pixels_of(&hidden, f.rgb())).sum();
    assert!(
        left < 30,
        "the memory view is still drawn after `memory hide` ({left} px)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

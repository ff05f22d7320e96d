//! The two point renderers under Xvfb with Mesa's software Vulkan: the compute rasterizer (the
//! default) and the instanced quads (the control).
//! - They draw the same picture: one frozen population, drawn by each at 10k and 1M entities,
//!   dot sizes 1 and 3. Every pixel one lights, the other lights; the mean brightness of
//!   32x32-pixel blocks correlates at 0.95 or better.
//! - A layout switch and a count change under each renderer, switching renderers between them,
//!   end in the state the core's windowless replay computes.
//! - An adapter without compute shaders (forced with `ENTITY_LAYOUTS_ADAPTER_WITHOUT_COMPUTE`)
//!   draws with the quads and says why, in the log and in the panel's notice.
#![cfg(feature = "app")]

use std::path::Path;

use entity_layouts::layout::LayoutKind;
use entity_layouts::tools::script::{parse, replay};

mod support;
mod window;
use window::{Shot, load, missing_display, region_stats, run_in_xvfb, run_in_xvfb_env, temp_dir};

const SEED: u64 = 11;
/// The columns compared: right of the panel (360 px at UI scale 1), where only the world is.
const WORLD_FROM_X: usize = 400;

/// Which pixels right of the panel differ from the clear colour (read from the top-right corner,
/// which the letterboxed world never covers).
fn lit(shot: &Shot) -> Vec<bool> {
    let clear = shot.rgb[shot.width - 1];
    let mut out = Vec::with_capacity(shot.width * shot.height);
    for y in 0..shot.height {
        for x in WORLD_FROM_X..shot.width {
            out.push(shot.rgb[y * shot.width + x] != clear);
        }
    }
    out
}

/// Mean luminance (0.3 R + 0.59 G + 0.11 B) per 32x32-pixel block right of the panel.
fn block_means(shot: &Shot) -> Vec<f64> {
    const B: usize = 32;
    let width = shot.width - WORLD_FROM_X;
    let mut out = Vec::new();
    for by in 0..shot.height / B {
        for bx in 0..width / B {
            let mut sum = 0.0;
            for y in by * B..(by + 1) * B {
                for x in WORLD_FROM_X + bx * B..WORLD_FROM_X + (bx + 1) * B {
                    let [r, g, b] = shot.rgb[y * shot.width + x];
                    sum += 0.3 * f64::from(r) + 0.59 * f64::from(g) + 0.11 * f64::from(b);
                }
            }
            out.push(sum / (B * B) as f64);
        }
    }
    out
}

fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

/// Draws one frozen population with the quads, then with the compute renderer, and returns the
/// two screenshots.
fn draw_both(dir: &Path, count: usize, dot: &str) -> Option<(Shot, Shot)> {
    let (quads, compute) = (dir.join("quads.png"), dir.join("compute.png"));
    // Growing spawns 250,000 a frame; then the population stops moving and both draw it. Each
    // capture lands before the renderer changes (it arrives a few frames after it is asked for).
    let script = format!(
        "wait {}\npause\nwait 3\nscreenshot {}\nwait 8\nrenderer compute\nwait 8\nscreenshot {}\nwait 8\nexit\n",
        count / 250_000 + 3,
        quads.display(),
        compute.display()
    );
    let count = count.to_string();
    let seed = SEED.to_string();
    let args = [
        "--layout",
        "soa",
        "--count",
        &count,
        "--seed",
        &seed,
        "--dot-size",
        dot,
        "--renderer",
        "quads",
    ];
    let (code, run) = run_in_xvfb(dir, &script, &args)?;
    assert_eq!(code, Some(0), "{}\n{}", run.stdout, run.stderr);
    for (shot, renderer) in [(&quads, "quads"), (&compute, "compute")] {
        let line = format!(
            "screenshot {} (drawn by the {renderer} renderer)",
            shot.display()
        );
        assert!(run.stdout.contains(&line), "{line}:\n{}", run.stdout);
    }
    Some((load(&quads), load(&compute)))
}

#[test]
fn both_renderers_light_the_same_pixels() {
    if let Some(reason) = missing_display() {
        return window::skip_or_fail(reason);
    }
    for (count, dot) in [
        (10_000, "1"),
        (10_000, "3"),
        (1_000_000, "1"),
        (1_000_000, "3"),
    ] {
        let dir = temp_dir(&format!("renderers-{count}-{dot}"));
        let Some((quads, compute)) = draw_both(&dir, count, dot) else {
            return;
        };
        let (lq, lc) = (lit(&quads), lit(&compute));
        let lit_q = lq.iter().filter(|&&l| l).count();
        let only_q = lq.iter().zip(&lc).filter(|&(&q, &c)| q && !c).count();
        let only_c = lq.iter().zip(&lc).filter(|&(&q, &c)| c && !q).count();
        let r = correlation(&block_means(&quads), &block_means(&compute));
        // Where they differ: the quads round to 8 bits after every blend, compute once.
        let (mut differ, mut worst) = (0usize, 0u8);
        for (q, c) in quads.rgb.iter().zip(&compute.rgb) {
            let d = q
                .iter()
                .zip(c)
                .map(|(a, b)| a.abs_diff(*b))
                .max()
                .unwrap_or(0);
            differ += usize::from(d > 0);
            worst = worst.max(d);
        }
        eprintln!(
            "{count} entities, dot {dot} px: {lit_q} pixels lit by the quads; {only_q} by the quads only, {only_c} by compute only; block brightness r = {r:.4}; {differ} pixels differ (the panel's among them), by at most {worst}/255"
        );
        assert!(lit_q > 1000, "{count}/{dot}: the quads drew almost nothing");
        assert_eq!(
            (only_q, only_c),
            (0, 0),
            "{count} entities, dot {dot}: the renderers light different pixels"
        );
        assert!(r >= 0.95, "{count}/{dot}: block brightness r = {r:.4}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn a_switch_and_a_count_change_under_each_renderer_end_where_the_core_does() {
    if let Some(reason) = missing_display() {
        return window::skip_or_fail(reason);
    }
    let dir = temp_dir("renderer-switch");
    let script = "wait 3\nlayout aos\nwait 4\ncount 60000\nwait 4\nrenderer quads\nwait 5\nlayout boxed\nwait 4\ncount 30000\nwait 5\nrenderer compute\nlayout soa\nwait 6\nexit\n";
    let args = ["--layout", "ecs-table", "--count", "20000", "--seed", "11"];
    let Some((code, run)) = run_in_xvfb(&dir, script, &args) else {
        return;
    };
    assert_eq!(code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let final_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("final: "))
        .unwrap_or_else(|| panic!("no final line in:\n{}", run.stdout));
    let expected = replay(parse(script).unwrap(), LayoutKind::EcsTable, SEED, 20_000).unwrap();
    assert!(expected.refused.is_empty(), "{:?}", expected.refused);
    assert!(
        final_line.ends_with(&format!("{:016x}", expected.driver.swarm().checksum())),
        "the app's final state differs from the core's replay: {final_line}"
    );
    // The summary splits the frames by renderer, and both drew.
    for (layout, renderer) in [("aos", "compute"), ("boxed", "quads"), ("soa", "compute")] {
        assert!(
            run.stdout.lines().any(|l| l.contains(&format!("{layout} "))
                && l.contains(&format!("renderer={renderer}"))),
            "{layout} under {renderer}:\n{}",
            run.stdout
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_compute_shaders_the_quads_draw_and_say_why() {
    if let Some(reason) = missing_display() {
        return window::skip_or_fail(reason);
    }
    let dir = temp_dir("renderer-fallback");
    let shot = dir.join("fallback.png");
    let script = format!(
        "wait 4\nrenderer compute\nwait 4\nscreenshot {}\nexit\n",
        shot.display()
    );
    let args = [
        "--layout",
        "soa",
        "--count",
        "50000",
        "--renderer",
        "compute",
    ];
    let env = [("ENTITY_LAYOUTS_ADAPTER_WITHOUT_COMPUTE", "1")];
    let Some((code, run)) = run_in_xvfb_env(&dir, &script, &args, &env) else {
        return;
    };
    assert_eq!(code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "compute renderer unavailable (the adapter runs no compute shaders): the points are drawn as instanced quads"
        ),
        "{}",
        run.stderr
    );
    // Asking for it again is refused with the reason, as a notice in the panel and the log.
    assert!(
        run.stderr.contains("refused: the compute renderer cannot draw here (the adapter runs no compute shaders): the quads draw"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("renderer=quads") && !run.stdout.contains("renderer=compute"),
        "{}",
        run.stdout
    );
    let (world_lit, world_colors) = region_stats(&load(&shot), 0.4, 1.0);
    assert!(
        world_lit > 0.02 && world_colors > 8,
        "the quads drew: {world_lit:.3} of the world lit, {world_colors} colours"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! The bench's `index.html` in a real browser: a `--quick` run's page is self-contained (every
//! link is to a file of the run or to the page itself, nothing remote, no script), loads in
//! headless Chromium with no console message, and a screenshot of it shows the page styled and
//! its plots drawn. A control page with a console error proves the check can fail. Skipped
//! where `chromium` is missing (Debian's package; `.ci/run` installs it), failing under CI.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
mod window;
use window::{load, skip_or_fail};

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Loads `page` headless, saves a `width`x`height` screenshot at `shot`, and returns what the
/// browser logged of the page's console.
fn load_in_chromium(browser: &Path, page: &str, shot: &Path, profile: &Path) -> Vec<String> {
    let out = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1400",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(page)
        .output()
        .expect("chromium starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        shot.exists(),
        "chromium wrote no screenshot (status {}):\n{stderr}",
        out.status
    );
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// The targets of every `href="..."` and `src="..."` in `html`.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            out.push(rest[..rest.find('"').unwrap_or(0)].to_string());
        }
    }
    out
}

#[test]
fn the_quick_runs_page_opens_in_a_browser_styled_with_its_plots() {
    let Some(browser) = chromium() else {
        return skip_or_fail("chromium is not installed (Debian package chromium)");
    };
    let dir = std::env::temp_dir().join(format!("entity-layouts-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out_dir = dir.join("results");
    let run = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "--quick", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let page_path = out_dir.join("index.html");
    let html = std::fs::read_to_string(&page_path).expect("bench --out writes index.html");

    // Self-contained: nothing remote, no script; every link is a file of the run or an anchor.
    assert!(!html.contains("<script"), "the page runs no script");
    for target in links(&html) {
        assert!(!target.contains("://"), "a remote address: {target}");
        match target.strip_prefix('#') {
            Some(id) => assert!(html.contains(&format!("id=\"{id}\"")), "no anchor {id}"),
            None => assert!(out_dir.join(&target).exists(), "a missing file: {target}"),
        }
    }
    for table in ["<table>", "results.csv", "results.json", "<svg"] {
        assert!(html.contains(table), "the page has no {table}");
    }

    // The control: a console error is seen, so its absence below means something.
    let control = dir.join("control.html");
    std::fs::write(
        &control,
        "<!doctype html><title>c</title><script>console.error('control error')</script>",
    )
    .unwrap();
    let logged = load_in_chromium(
        &browser,
        &format!("file://{}", control.display()),
        &dir.join("control.png"),
        &dir.join("profile-control"),
    );
    assert!(
        logged.iter().any(|l| l.contains("control error")),
        "the console check saw nothing of the control page"
    );

    // The top of the page: styled (the contents bar and the page's background in their
    // colours), and the first plots drawn, their coloured lines, not a blank.
    let top = dir.join("top.png");
    let logged = load_in_chromium(
        &browser,
        &format!("file://{}", page_path.display()),
        &top,
        &dir.join("profile-top"),
    );
    assert!(logged.is_empty(), "console messages: {logged:#?}");
    let px = load(&top).rgb;
    let share = |rgb: [u8; 3]| px.iter().filter(|&&p| p == rgb).count() as f64 / px.len() as f64;
    assert!(
        share([0x1f, 0x29, 0x37]) > 0.02,
        "no contents bar: the page is unstyled"
    );
    assert!(
        share([0xf4, 0xf5, 0xf7]) > 0.05,
        "no page background: the page is unstyled"
    );
    let coloured = px
        .iter()
        .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 80)
        .count();
    assert!(
        coloured > 3000,
        "{coloured} coloured pixels where the plots should be"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

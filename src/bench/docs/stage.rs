//! What a speaker needs from docs/app.md, generated so that it cannot drift: the key that picks
//! each layout, read off the table of layouts, and how long each talk script runs, added up from
//! its waits.

use std::path::Path;

use crate::bench::report::format::table;
use crate::layout::LayoutKind;
use crate::tools::script;

/// One row per layout: its key, its name and what it shows.
pub fn keys() -> String {
    let rows: Vec<Vec<String>> = LayoutKind::ALL
        .iter()
        .map(|kind| {
            let row = kind.row();
            vec![
                format!("`{}`", row.key),
                format!("`{}`", row.name),
                row.doc.to_string(),
            ]
        })
        .collect();
    table(&["key", "layout", "what it shows"], &rows)
}

/// Where the talks live, relative to the repository's root.
pub const TALKS: &str = "assets/talks";

/// One row per talk script under `root/assets/talks`: its command and its length at 60 frames
/// a second, from its waits alone (a search or a wait for a switch adds what the machine takes).
pub fn talks(root: &Path) -> Result<String, String> {
    let dir = root.join(TALKS);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut rows = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let actions = script::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let seconds = script::waited_frames(&actions) as f64 / 60.0;
        rows.push(vec![
            format!("`cargo run --release -- --script {TALKS}/{name}`"),
            format!(
                "{}:{:02}",
                (seconds / 60.0) as u64,
                seconds.round() as u64 % 60
            ),
        ]);
    }
    Ok(table(&["talk", "length (min:s, at 60 fps)"], &rows))
}

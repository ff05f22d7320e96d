//! The pages' generated tables and inline values are what the committed full run's records give:
//! `bench docs --check` passes on the repository as committed, and fails, naming the block or the
//! value, once one digit inside a generated block or of a figure in a sentence is edited by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn check_in(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "docs", "--check"])
        .current_dir(dir)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

#[test]
fn every_generated_block_matches_the_committed_run() {
    let out = check_in(&root());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("generated block(s) match docs/runs/full-"),
        "{err}"
    );
    // Every page of results and the README carry at least one block, but the two whose
    // figures come from the app, the soak and the faults rather than from the bench.
    let from_the_app = ["reliability.md", "stage.md"];
    let pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs/results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter(|p| !from_the_app.contains(&p.file_name().unwrap().to_str().unwrap()))
        .chain([root().join("README.md")])
        .collect();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            text.contains("<!-- generated:"),
            "{} has no generated block",
            page.display()
        );
    }
    // docs/bench.md quotes the run's measured wall time from the run itself, not a sum.
    let bench = std::fs::read_to_string(root().join("docs/bench.md")).unwrap();
    let block = bench
        .split("<!-- generated:run -->")
        .nth(1)
        .and_then(|rest| rest.split("<!-- /generated -->").next())
        .expect("docs/bench.md has a run block");
    assert!(
        block.contains("end to end by the bench's own clock"),
        "{block}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A scratch copy of the pages the check reads and of the committed runs (the full run the pages
/// cite, and the others an inline value names).
fn scratch_copy(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("entity-layouts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(root().join("README.md"), dir.join("README.md")).unwrap();
    copy_dir(&root().join("docs/results"), &dir.join("docs/results"));
    copy_dir(&root().join("docs/runs"), &dir.join("docs/runs"));
    assert_eq!(check_in(&dir).status.code(), Some(0));
    dir
}

/// `text` with the digit at byte `at` changed.
fn one_digit_changed(text: &str, at: usize) -> String {
    let digit = text.as_bytes()[at];
    assert!(digit.is_ascii_digit(), "{}", &text[at..at + 10]);
    let other = if digit == b'9' {
        '1'
    } else {
        (digit + 1) as char
    };
    format!("{}{other}{}", &text[..at], &text[at + 1..])
}

#[test]
fn a_figure_in_a_sentence_edited_by_hand_fails_the_check_and_names_it() {
    let dir = scratch_copy("docs-values");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir.join("docs/results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain([dir.join("README.md")])
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("<!-- value:"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 2, "pages with inline values: {pages:?}");
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let marker = text.find("<!-- value:").unwrap();
        let figure = marker + text[marker..].find(" -->").unwrap() + 4;
        let digit = figure + text[figure..].find(|c: char| c.is_ascii_digit()).unwrap();
        std::fs::write(&page, one_digit_changed(&text, digit)).unwrap();
        let out = check_in(&dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {err}", page.display());
        let name = page.file_name().unwrap().to_string_lossy();
        assert!(
            err.contains(&format!("{name}: value '")) && err.contains("the page says"),
            "{err}"
        );
        std::fs::write(&page, text).unwrap();
    }
    assert_eq!(check_in(&dir).status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_number_edited_by_hand_fails_the_check_and_names_its_block() {
    let dir = scratch_copy("docs");

    // One digit inside README's headline block, changed.
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let start = readme.find("<!-- generated:headline -->").unwrap();
    let end = start + readme[start..].find("<!-- /generated -->").unwrap();
    let at = start
        + readme[start..end]
            .find(" | x")
            .expect("a ratio in the headline")
        + 4;
    std::fs::write(dir.join("README.md"), one_digit_changed(&readme, at)).unwrap();
    let out = check_in(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("README.md: headline"), "{err}");
    assert!(err.contains("1 generated block(s) differ"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

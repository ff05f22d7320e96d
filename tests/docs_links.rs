//! Every local link and image in README.md and docs/*.md resolves: the file exists, and an
//! anchor (`page.md#section`, `#section`) names a heading of that page, slugged as GitHub slugs
//! it. Pages move; what they point at must move with them. The front page stays a front page:
//! 10 KB at most.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The pages checked: the README and every Markdown file directly in docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    let docs = Path::new(ROOT).join("docs");
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    in_docs.sort();
    pages.extend(in_docs);
    pages
}

/// The targets of `[text](target)`, `![alt](target)` and `src="target"` outside code blocks
/// and code spans.
fn targets(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans are not links.
        let mut text = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                text.push_str(part);
            }
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
        let mut rest = text.as_str();
        while let Some(at) = rest.find("src=\"") {
            let after = &rest[at + 5..];
            let end = after.find('"').unwrap_or(after.len());
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// GitHub's anchor for a heading: lowercase, spaces to dashes, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a page's headings give, with GitHub's `-1`, `-2` for repeats.
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let mut id = base.clone();
        let mut n = 1;
        while seen.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        seen.insert(id);
    }
    seen
}

#[test]
fn every_local_link_and_image_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        for target in targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.is_empty() {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                page.clone()
            } else {
                dir.join(file)
            };
            if !path.exists() {
                broken.push(format!("{}: {target}: no such file", page.display()));
                continue;
            }
            if let Some(anchor) = anchor
                && path.extension().is_some_and(|e| e == "md")
                && !anchors(&std::fs::read_to_string(&path).unwrap()).contains(anchor)
            {
                broken.push(format!("{}: {target}: no such heading", page.display()));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser reading the pages?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_front_page_is_at_most_10_kb_and_links_to_the_docs_pages() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(
        readme.len() <= 10 * 1024,
        "README.md is {} bytes",
        readme.len()
    );
    for page in [
        "docs/app.md",
        "docs/bench.md",
        "docs/layouts.md",
        "docs/RESULTS.md",
    ] {
        assert!(
            readme.contains(&format!("({page}")),
            "README.md does not link {page}"
        );
    }
}

#[test]
fn the_checker_finds_what_is_broken() {
    // The mutation check: a page with a missing file, a missing heading and a link inside code.
    let page = "# Top\n\n## A section\n[ok](#a-section) [bad](#nowhere) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n![img](img/x.png)\n";
    assert_eq!(targets(page), vec!["#a-section", "#nowhere", "img/x.png"]);
    let ids = anchors(page);
    assert!(ids.contains("a-section") && ids.contains("top") && !ids.contains("nowhere"));
    assert_eq!(
        slug("SIMD width: ns per entity, move + regen, f32"),
        "simd-width-ns-per-entity-move--regen-f32"
    );
    assert_eq!(slug("`chunks` rows (run 2)"), "chunks-rows-run-2");
    let twice = anchors("## f32\n## f32\n");
    assert!(twice.contains("f32") && twice.contains("f32-1"));
}

//! Every local link and image in README.md, docs/*.md and docs/results/*.md resolves: the file
//! exists, and an anchor (`page.md#section`, `#section`) names a heading of that page, slugged as
//! GitHub slugs it; every `docs/...` path quoted in a code span exists too (a run folder renamed
//! must be renamed where it is quoted). Pages move; what they point at must move with them. The
//! front page stays a front page (10 KB at most), the results index an index (15 KB) and each
//! results page one question (25 KB).

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The Markdown files directly in `dir`, sorted.
fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    found.sort();
    found
}

/// The pages checked: the README, every Markdown file directly in docs/, and the results pages.
fn pages() -> Vec<PathBuf> {
    let docs = Path::new(ROOT).join("docs");
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    pages.extend(markdown_in(&docs));
    pages.extend(markdown_in(&docs.join("results")));
    pages
}

/// The words of every code span outside code blocks.
fn code_span_words(markdown: &str) -> Vec<String> {
    let mut fenced = false;
    let prose: Vec<&str> = markdown
        .lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect();
    prose
        .join("\n")
        .split('`')
        .skip(1)
        .step_by(2)
        .flat_map(|span| span.split_whitespace().map(str::to_string))
        .collect()
}

/// `docs/...` paths quoted in code spans (`docs/runs/seek/results.md`, `--out docs/runs/seek`).
fn quoted_docs_paths(markdown: &str) -> Vec<String> {
    code_span_words(markdown)
        .iter()
        .filter(|word| !word.contains('<'))
        .filter_map(|word| {
            let at = word.find("docs/")?;
            let path = word[at..].trim_end_matches(|c: char| !c.is_alphanumeric());
            Some(path.to_string())
        })
        .collect()
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
fn every_quoted_docs_path_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for path in quoted_docs_paths(&text) {
            checked += 1;
            // `docs/runs/NAME` in a command names the folder the run writes into.
            if !Path::new(ROOT).join(&path).exists() {
                missing.push(format!("{}: `{path}`", page.display()));
            }
        }
    }
    assert!(checked >= 1, "only {checked} quoted paths found");
    assert!(
        missing.is_empty(),
        "quoted paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// `path` with its `.` and `..` resolved by name alone (`docs/results/../runs/x` is
/// `docs/runs/x`).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What code spans on a page in `dir` name beside the page: `final-1.log`, `bench-gpu/`, or a
/// pattern with one `*` (`slider-*.log`). A run folder's README says what each of its files is
/// this way.
fn named_beside(markdown: &str, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in code_span_words(markdown) {
        let word = word.trim_end_matches([',', ';', ':', ')', '.']);
        if word.is_empty() || word.contains("docs/") || word.starts_with('/') || word.contains("..")
        {
            continue;
        }
        match word.split_once('*') {
            Some((before, after)) if !before.is_empty() && after.contains('.') => {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries {
                    let name = entry.unwrap().file_name().to_string_lossy().into_owned();
                    if name.len() >= before.len() + after.len()
                        && name.starts_with(before)
                        && name.ends_with(after)
                    {
                        out.push(dir.join(name));
                    }
                }
            }
            Some(_) => {}
            None if dir.join(word).exists() => out.push(lexical(&dir.join(word))),
            None => {}
        }
    }
    out
}

/// Every page a reader reaches from the front pages by links: the README, docs/*.md,
/// docs/results/*.md, and every Markdown file under the root that those link, and so on (run
/// folders' READMEs and results.md among them).
fn reachable_pages() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut queue = pages();
    while let Some(page) = queue.pop() {
        if seen.contains(&page) {
            continue;
        }
        let text = std::fs::read_to_string(&page).unwrap();
        for target in targets(&text) {
            let file = target.split('#').next().unwrap_or_default();
            let path = lexical(&page.parent().unwrap().join(file));
            if file.ends_with(".md") && path.starts_with(root) && path.is_file() {
                queue.push(path);
            }
        }
        seen.push(page);
    }
    seen
}

/// What `page` (an absolute path; `text` its Markdown) points at: its links and images, the
/// `docs/...` files its code spans quote, and what its code spans name beside it. A link to a
/// folder stands for every file in it, except the page's own folder or one above it: a page
/// cannot vouch for the files beside it by pointing at where it is. A folder quoted in a command
/// (`--out docs/runs/seek`) names where a run was written, not a file anyone reads.
fn pointed_at_by(page: &Path, text: &str) -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let dir = page.parent().unwrap();
    let mut found: Vec<PathBuf> = targets(text)
        .iter()
        .filter(|t| !t.contains("://") && !t.starts_with("mailto:"))
        .filter_map(|t| t.split('#').next().filter(|f| !f.is_empty()))
        .map(|file| lexical(&dir.join(file)))
        .collect();
    found.extend(
        quoted_docs_paths(text)
            .iter()
            .map(|p| root.join(p))
            .filter(|p| p.is_file()),
    );
    found.extend(named_beside(text, dir));
    found.retain(|path| !page.starts_with(path));
    found
}

/// What the reachable pages point at, relative to the root (`docs/runs/app-order`,
/// `docs/img/hud.png`).
fn pointed_at() -> HashSet<PathBuf> {
    let root = Path::new(ROOT);
    let mut out = HashSet::new();
    for page in reachable_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for path in pointed_at_by(&page, &text) {
            if let Ok(relative) = path.strip_prefix(root) {
                out.insert(relative.to_path_buf());
            }
        }
    }
    out
}

/// Whether `file` (relative to the root, as `docs/runs/NAME/...`) is read by someone: a page
/// points at it or at a folder above it (below docs/runs or docs/img, not those themselves), a
/// source names its path, or a source names its run folder and its file name, both as string
/// literals (`root.join("docs/runs/quick-2026-12-05").join("cells.jsonl")`). A comment that cites
/// only a run folder reads none of its files: the folder's README or results.md is what it cites.
fn is_read(file: &Path, pointed: &HashSet<PathBuf>, sources: &[String]) -> bool {
    let pointed_at = file.ancestors().any(|above| {
        above.components().count() > 2 && above.starts_with("docs") && pointed.contains(above)
    });
    let path = file.to_string_lossy().replace('\\', "/");
    let named = |source: &String| {
        if source.contains(&path) {
            return true;
        }
        let parts: Vec<&str> = path.split('/').collect();
        parts.len() == 4
            && parts[1] == "runs"
            && source.contains(&format!("\"{}\"", parts[..3].join("/")))
            && source.contains(&format!("\"{}\"", parts[3]))
    };
    pointed_at || sources.iter().any(named)
}

/// Every file under `dir`, recursively, relative to the root.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path.strip_prefix(ROOT).unwrap().to_path_buf());
        }
    }
}

/// A clone carries every file under docs/runs and docs/img, so each must be read by someone: a
/// page a reader reaches links it or its folder (or, for a run's README, names it in a code
/// span), or a test or source file names its path. The run `bench docs` generates the pages from
/// is kept whole. Anything else is weight: delete it (git keeps it), or link it where it is
/// used.
#[test]
fn every_file_under_docs_runs_and_docs_img_is_read_by_a_page_or_a_test() {
    let root = Path::new(ROOT);
    let pointed = pointed_at();
    let mut sources = Vec::new();
    for dir in ["src", "core/src", "scripts", "benches", "assets", "tests"] {
        sources_in(&root.join(dir), &mut sources);
    }
    // This file's own examples name paths; they vouch for nothing.
    let this_file = root.join("tests/docs_links.rs");
    let sources: Vec<String> = sources
        .iter()
        .filter(|f| **f != this_file)
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let docs_run = entity_layouts::bench::docs::newest_full_run(root)
        .unwrap()
        .strip_prefix(root)
        .unwrap()
        .to_path_buf();
    let mut files = Vec::new();
    files_under(&root.join("docs/runs"), &mut files);
    files_under(&root.join("docs/img"), &mut files);
    assert!(files.len() > 100, "only {} files found", files.len());
    let mut unread: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(&docs_run) && !is_read(f, &pointed, &sources))
        .map(|f| f.display().to_string())
        .collect();
    unread.sort();
    assert!(
        unread.is_empty(),
        "files under docs/ that no page links (nor its folder) and no test or source names: \
         link each where it is used, or delete it:\n{}",
        unread.join("\n")
    );
}

/// A clone carries docs/ whole, so it has a ceiling: the run the pages come from, the journals
/// the tests replay, the other runs' reports and logs, and the pages' pictures (32-colour
/// palettes, docs/app.md says how) fit in 15 MiB.
#[test]
fn docs_weigh_at_most_15_mib() {
    let mut files = Vec::new();
    files_under(&Path::new(ROOT).join("docs"), &mut files);
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(Path::new(ROOT).join(f)).unwrap().len())
        .sum();
    assert!(
        bytes <= 15 << 20,
        "docs/ holds {bytes} bytes ({:.2} MiB), over 15 MiB: prune older runs' bulk or shrink the \
         pictures (docs/app.md)",
        bytes as f64 / f64::from(1 << 20)
    );
}

#[test]
fn the_weight_check_finds_a_file_nobody_reads() {
    let pointed: HashSet<PathBuf> = ["docs/runs/linked", "docs/runs/one/results.md", "docs/runs"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let sources = vec![
        "let run = root.join(\"docs/runs/journal\").join(\"cells.jsonl\");".to_string(),
        "// figures in docs/runs/cited, and docs/img/named.png".to_string(),
    ];
    let read = |file: &str| is_read(Path::new(file), &pointed, &sources);
    // A linked folder stands for its files; a linked file for itself alone.
    assert!(read("docs/runs/linked/results.json"));
    assert!(read("docs/runs/one/results.md"));
    assert!(!read("docs/runs/one/results.json"));
    // A link to docs/runs itself vouches for nothing in it.
    assert!(!read("docs/runs/other/results.json"));
    // A source names the folder and the file as literals, or the whole path.
    assert!(read("docs/runs/journal/cells.jsonl"));
    assert!(!read("docs/runs/journal/results.json"));
    assert!(read("docs/img/named.png"));
    // A comment citing a folder reads none of its files.
    assert!(!read("docs/runs/cited/results.json"));

    assert_eq!(
        lexical(Path::new("docs/results/../runs/./x/a.log")),
        PathBuf::from("docs/runs/x/a.log")
    );
    let dir = std::env::temp_dir().join(format!("entity-layouts-beside-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cells")).unwrap();
    for name in [
        "final-1.log",
        "slider-a.log",
        "slider-b.log",
        "slider.txt",
        "other.log",
    ] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    let named = named_beside(
        "Logs: `final-1.log`, `slider-*.log`, the folder `cells/`; `*` and `missing.log` name \
         nothing, and `../other.log` is not beside the page.",
        &dir,
    );
    let mut names: Vec<String> = named
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().display().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["cells", "final-1.log", "slider-a.log", "slider-b.log"]
    );
    // A page's links to its own folder, or above it, vouch for nothing; a file beside it counts.
    let page = dir.join("README.md");
    let pointed = pointed_at_by(&page, "[here](.), [up](..), [a log](other.log)");
    assert_eq!(pointed, [dir.join("other.log")]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A page answers in one screen: at most this many bytes in all.
const PAGE_BYTES: usize = 16_000;
/// A results page's own words, outside its generated blocks, at most.
const PROSE_BYTES: usize = 6_000;

/// The bytes a reader sees of `text` outside its `<!-- generated:NAME -->` blocks: an inline
/// value's markers are not read, only its figure.
fn prose_bytes(text: &str) -> usize {
    let mut hidden = 0;
    let mut rest = text;
    while let Some(start) = rest.find("<!-- generated:") {
        let end = rest[start..]
            .find("<!-- /generated -->")
            .map_or(rest.len(), |e| start + e + "<!-- /generated -->".len());
        hidden += end - start;
        rest = &rest[end..];
    }
    let mut rest = text;
    while let Some(start) = rest.find("<!-- value:") {
        let end = rest[start..]
            .find(" -->")
            .map_or(rest.len(), |e| start + e + 4);
        hidden += end - start + "<!-- /value -->".len();
        rest = &rest[end..];
    }
    text.len() - hidden
}

#[test]
fn the_guides_answer_in_one_screen() {
    for page in [
        "docs/app.md",
        "docs/bench.md",
        "docs/layouts.md",
        "docs/code.md",
    ] {
        let text = std::fs::read_to_string(Path::new(ROOT).join(page)).unwrap();
        assert!(
            text.len() <= PAGE_BYTES,
            "{page} is {} bytes, over {PAGE_BYTES}",
            text.len()
        );
    }
    assert_eq!(
        prose_bytes("ab<!-- generated:x -->\n123\n<!-- /generated -->cd"),
        4
    );
}

/// Words a reader cannot look up: a commit hash (seven or more hex digits, letters and digits
/// both), a path on the machine a run was made on, and the word "session".
fn unreadable_words(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        let hex = word.len() >= 7
            && word
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            && word.chars().any(|c| c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_alphabetic());
        if hex || word.eq_ignore_ascii_case("session") {
            found.push(word.to_string());
        }
    }
    for (at, _) in text.match_indices("/tmp/") {
        let path = text[at..].split(|c: char| c.is_whitespace() || "`)],".contains(c));
        found.push(path.into_iter().next().unwrap_or_default().to_string());
    }
    found
}

#[test]
fn no_page_holds_a_commit_hash_a_tmp_path_or_a_session() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let found = unreadable_words(&text);
        assert!(found.is_empty(), "{}: {found:?}", page.display());
    }
    assert_eq!(
        unreadable_words("built at 361748a in /tmp/el-full5/x, this session; seed 995681729"),
        ["361748a", "session", "/tmp/el-full5/x"]
    );
}

#[test]
fn the_results_index_and_its_pages_stay_one_question_long() {
    let docs = Path::new(ROOT).join("docs");
    let index = std::fs::read_to_string(docs.join("RESULTS.md")).unwrap();
    assert!(
        index.len() <= 15 * 1024,
        "docs/RESULTS.md is {} bytes",
        index.len()
    );
    let results = markdown_in(&docs.join("results"));
    assert!(results.len() >= 17, "{} results pages", results.len());
    for page in results {
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            text.len() <= PAGE_BYTES,
            "{} is {} bytes, over {PAGE_BYTES}",
            page.display(),
            text.len()
        );
        let prose = prose_bytes(&text);
        assert!(
            prose <= PROSE_BYTES,
            "{} has {prose} bytes of prose outside its generated blocks, over {PROSE_BYTES}",
            page.display()
        );
        // The same shape everywhere: the question and its answer first (after the line naming
        // the studies, where the page cites them); the index links it.
        let mut lines = text
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with("*The stud"));
        assert!(
            lines.next().unwrap().starts_with("# "),
            "{}",
            page.display()
        );
        assert!(
            lines.next().unwrap().starts_with("**The question.** "),
            "{}",
            page.display()
        );
        assert!(
            lines.next().unwrap().starts_with("**The answer.** "),
            "{}",
            page.display()
        );
        let name = page.file_name().unwrap().to_string_lossy();
        assert!(
            index.contains(&format!("(results/{name})")),
            "the index does not link {name}"
        );
    }
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
        "docs/code.md",
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
fn the_front_page_answers_in_its_first_forty_lines() {
    // What Bevy's archetype ECS, SoA, AoS and boxed objects cost per frame, without scrolling.
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let first: Vec<&str> = readme.lines().take(40).collect();
    for layout in ["`ecs-table`", "`soa`", "`aos`", "`boxed`"] {
        assert!(
            first
                .iter()
                .any(|l| l.starts_with("| ") && l.contains(&format!("({layout})"))),
            "README's first 40 lines have no table row for {layout}"
        );
    }
}

#[test]
fn the_checker_finds_what_is_broken() {
    // The mutation check: a page with a missing file, a missing heading and a link inside code.
    let page = "# Top\n\n## A section\n[ok](#a-section) [bad](#nowhere) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n![img](img/x.png)\n";
    assert_eq!(targets(page), vec!["#a-section", "#nowhere", "img/x.png"]);
    assert_eq!(
        quoted_docs_paths(
            "run `bench --out docs/runs/seek`, read `docs/runs/seek/results.md`; not docs/x"
        ),
        vec!["docs/runs/seek", "docs/runs/seek/results.md"]
    );
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

/// Words a reader cannot look up: our tracker's numbers, and how a machine was come by for a run.
/// What happened to the program is what the pages and the code say instead.
fn words_a_reader_cannot_look_up(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut found = Vec::new();
    for (at, _) in lower.match_indices("issue ") {
        let next = lower[at + "issue ".len()..].trim_start_matches('#');
        if next.starts_with(|c: char| c.is_ascii_digit()) {
            found.push(lower[at..(at + 12).min(lower.len())].to_string());
        }
    }
    for phrase in [" lent ", " lent.", "device machine", "borrowed gpu"] {
        if lower.contains(phrase) {
            found.push(phrase.trim().to_string());
        }
    }
    found
}

/// Every Rust and shell file under `dir`, recursively.
fn sources_in(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources_in(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "rs" || e == "sh" || e == "txt" || e == "wgsl")
        {
            out.push(path);
        }
    }
}

#[test]
fn no_page_comment_or_message_names_a_tracker_number_or_how_a_machine_was_obtained() {
    let mut files = pages();
    files.extend(markdown_in(&Path::new(ROOT).join("docs/archive")));
    for dir in ["src", "core/src", "scripts", "benches", "assets", "tests"] {
        sources_in(&Path::new(ROOT).join(dir), &mut files);
    }
    let this_file = Path::new(ROOT).join("tests/docs_links.rs");
    let mut wrong = Vec::new();
    for file in files.iter().filter(|f| **f != this_file) {
        let text = std::fs::read_to_string(file).unwrap();
        for word in words_a_reader_cannot_look_up(&text) {
            wrong.push(format!("{}: {word}", file.display()));
        }
    }
    assert!(files.len() > 100, "only {} files read", files.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The check finds what it is for.
    assert_eq!(words_a_reader_cannot_look_up("see issue 31.").len(), 1);
    assert_eq!(words_a_reader_cannot_look_up("(Issue #8)").len(), 1);
    assert_eq!(words_a_reader_cannot_look_up("no GPU was lent.").len(), 1);
    assert!(words_a_reader_cannot_look_up("an issue with the driver; 31 frames").is_empty());
}

/// The studies' titles, and what a page may call each once it has named it.
const STUDIES: [(&str, &[&str]); 2] = [
    (
        "At how many entities does an ECS start paying off?",
        &[
            "js study",
            "javascript study",
            "the study's",
            "the study ",
            "the studies",
        ],
    ),
    (
        "C++ — Data-Oriented Design (ECS & SoA)",
        &["c++ article", "the article", "the studies"],
    ),
];

/// The line (0-based, the page's title line skipped) where a page first mentions the study of
/// `titles`'s entry without its title, if it does so before the title appears.
fn unnamed_mention(page: &str, title: &str, short: &[&str]) -> Option<usize> {
    for (i, line) in page.lines().enumerate().skip(1) {
        if line.contains(title) {
            return None;
        }
        let lower = line.to_lowercase();
        if short.iter().any(|s| lower.contains(s)) {
            return Some(i);
        }
    }
    None
}

#[test]
fn every_page_names_each_study_by_its_title_before_it_shortens_it() {
    let mut unnamed = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (title, short) in STUDIES {
            if let Some(line) = unnamed_mention(&text, title, short) {
                unnamed.push(format!(
                    "{}:{}: mentions \"{title}\" before naming it",
                    page.display(),
                    line + 1
                ));
            }
        }
    }
    assert!(unnamed.is_empty(), "{}", unnamed.join("\n"));
}

#[test]
fn a_study_shortened_before_its_title_is_caught() {
    let (title, short) = STUDIES[0];
    assert_eq!(
        unnamed_mention("# Page\n\nAs the JS study found.\n", title, short),
        Some(2)
    );
    let named = format!("# Page\n\n*The study: \"{title}\".*\n\nAs the JS study found.\n");
    assert_eq!(unnamed_mention(&named, title, short), None);
    let (title, short) = STUDIES[1];
    assert_eq!(
        unnamed_mention("# Page\nThe article's x5.67.\n", title, short),
        Some(1)
    );
    // Both at once, before either is named.
    for (title, short) in STUDIES {
        assert_eq!(
            unnamed_mention("# Page\nThe studies' pattern.\n", title, short),
            Some(1)
        );
    }
}

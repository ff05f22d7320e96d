//! `bench docs`: the pages' tables, written from one run's records. README.md, docs/bench.md and
//! every page under docs/results/ mark each generated block with `<!-- generated:NAME -->` and
//! `<!-- /generated -->`; `bench docs` rewrites what lies between from the newest
//! `docs/runs/full-*/` (or the run it is given), and `bench docs --check` says which blocks
//! differ from what the records give, so that a number edited by hand fails CI.
//!
//! A block's NAME is an experiment's: its tables, as the run's own results.md renders them, under
//! a line naming the run, its machine and its wall time (README.md holds `headline`); or
//! [`RUN_BLOCK`], one sentence on the run itself (its command, wall time, machine and what it
//! skipped) and the two commands that put a reader's machine beside it (`bench compare`).
//! A figure in a sentence is an inline value ([`values`]), filled and checked the same way.

mod front;
mod stage;
mod values;

use std::path::{Path, PathBuf};

use crate::bench::report::experiment::{BenchConfig, BenchError};
use crate::bench::report::journal::{PLAN_FILE, Plan};
use crate::bench::report::output::{SavedRun, read_results};
use crate::bench::report::progress::human;
use crate::bench::report::record::Record;
use crate::bench::suite::experiments;

/// Where the runs the pages cite live, relative to the repository's root.
pub const RUNS: &str = "docs/runs";
/// The folder-name prefix of a complete run the pages are generated from.
pub const FULL_PREFIX: &str = "full-";

/// The block that describes the run itself rather than one experiment.
pub const RUN_BLOCK: &str = "run";

/// README's first table: the front page's layouts, ms per frame and where each breaks the budget.
pub const FRONT_BLOCK: &str = "front";
/// docs/app.md's key map, from the table of layouts.
pub const KEYS_BLOCK: &str = "keys";
/// docs/app.md's talks and their lengths, from the scripts.
pub const TALKS_BLOCK: &str = "talks";

const OPEN: &str = "<!-- generated:";
const OPEN_END: &str = " -->";
const CLOSE: &str = "<!-- /generated -->";

/// The newest `docs/runs/full-*` under `root` (by name: the names carry the date).
pub fn newest_full_run(root: &Path) -> Result<PathBuf, BenchError> {
    let runs = root.join(RUNS);
    let unreadable = |reason: String| BenchError::Unwritable {
        path: runs.display().to_string(),
        reason,
    };
    let mut full: Vec<PathBuf> = std::fs::read_dir(&runs)
        .map_err(|e| unreadable(e.to_string()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(FULL_PREFIX))
                && p.join("results.json").exists()
        })
        .collect();
    full.sort();
    full.pop().ok_or_else(|| {
        unreadable(format!(
            "no {FULL_PREFIX}* folder with a results.json: run `entity-layouts bench --out {RUNS}/{FULL_PREFIX}<date>` first"
        ))
    })
}

/// One run, read back with the options it ran with.
pub struct Run {
    /// The folder, as the pages link it from the repository's root (`docs/runs/full-…`).
    pub folder: String,
    pub saved: SavedRun,
    pub cfg: BenchConfig,
}

impl Run {
    pub fn read(root: &Path, dir: &Path) -> Result<Self, BenchError> {
        let saved = read_results(&dir.join("results.json"))?;
        let cfg = match std::fs::read_to_string(dir.join(PLAN_FILE)) {
            Ok(text) => serde_json::from_str::<Plan>(&text)
                .map_err(|e| BenchError::Unwritable {
                    path: dir.join(PLAN_FILE).display().to_string(),
                    reason: format!("not a run plan: {e}"),
                })?
                .config(),
            Err(_) => BenchConfig::new(saved.command.contains("--quick")),
        };
        let folder = dir
            .strip_prefix(root)
            .unwrap_or(dir)
            .to_string_lossy()
            .trim_end_matches('/')
            .to_string();
        Ok(Self { folder, saved, cfg })
    }

    fn mine(&self, experiment: &str) -> Vec<Record> {
        self.saved
            .records
            .iter()
            .filter(|r| r.experiment == experiment)
            .cloned()
            .collect()
    }

    /// The machine line, its compiler named by version alone (a reader cannot look up the
    /// build's hash).
    fn machine(&self) -> String {
        self.saved.machine.as_ref().map_or_else(
            || "machine not recorded".to_string(),
            |m| {
                let version = m.rustc.split(" (").next().unwrap_or(&m.rustc);
                m.line().replace(&m.rustc, version)
            },
        )
    }

    /// The command the run was started with, as a reader types it: the program by its name,
    /// not by the path it was run from.
    fn command(&self) -> String {
        let command = &self.saved.command;
        let (program, args) = command.split_once(' ').unwrap_or((command, ""));
        let name = program.rsplit('/').next().unwrap_or(program);
        format!("{name} {args}").trim_end().to_string()
    }

    /// The run block: the command, its wall time by the bench's own clock, the machine, and
    /// every experiment it skipped with the reason.
    fn summary(&self, page: &Path) -> String {
        let skipped: Vec<String> = self
            .saved
            .skipped
            .iter()
            .filter(|(_, why)| *why != "not asked for")
            .map(|(name, why)| format!("`{name}` ({why})"))
            .collect();
        format!(
            "The run the tables are generated from, [{folder}]({link}/results.md): `{command}` took {took} end to end by the bench's own clock, {cells} records from {ran} experiments, on `{machine}`.{skipped}\n\nYour machine beside it:\n\n```sh\ncargo run --release -- bench --out mine\ncargo run --release -- bench compare {folder} mine\n```\n",
            folder = self.folder,
            link = relative_link(page, &self.folder),
            command = self.command(),
            took = human(self.saved.seconds),
            cells = self.saved.records.len(),
            ran = self.experiments_run(),
            machine = self.machine(),
            skipped = if skipped.is_empty() {
                String::new()
            } else {
                format!(" Measured nothing: {}.", skipped.join("; "))
            },
        )
    }

    fn experiments_run(&self) -> usize {
        let mut names: Vec<&str> = self
            .saved
            .records
            .iter()
            .map(|r| r.experiment.as_str())
            .collect();
        names.sort_unstable();
        names.dedup();
        names.len()
    }

    /// The line above every generated block, short: which run (its results.md says the command
    /// and the whole machine line) and the machine's processor.
    fn provenance(&self, page: &Path) -> String {
        let cpu = self.saved.machine.as_ref().map_or_else(
            || "machine not recorded".to_string(),
            |m| format!("{}, {} cores", m.cpu, m.cores),
        );
        let name = self.folder.rsplit('/').next().unwrap_or(&self.folder);
        format!(
            "*Generated by `bench docs` from the run [{name}]({link}/results.md), {cpu}.*\n\n",
            link = relative_link(page, &self.folder),
        )
    }

    /// The text of block `name` on `page`, or `None` for a name nothing generates.
    pub fn block(&self, root: &Path, name: &str, page: &Path) -> Option<Result<String, String>> {
        match name {
            KEYS_BLOCK => return Some(Ok(stage::keys())),
            TALKS_BLOCK => return Some(stage::talks(root)),
            _ => {}
        }
        self.block_of_run(name, page).map(Ok)
    }

    fn block_of_run(&self, name: &str, page: &Path) -> Option<String> {
        if name == RUN_BLOCK {
            return Some(self.summary(page));
        }
        if name == FRONT_BLOCK {
            return Some(format!(
                "{}{}",
                self.provenance(page),
                front::table(&self.saved.records)
            ));
        }
        let all = &self.saved.records;
        let experiment = experiments().into_iter().find(|e| e.name() == name)?;
        let mine = self.mine(name);
        let body = if mine.is_empty() {
            let why = self
                .saved
                .skipped
                .get(name)
                .cloned()
                .unwrap_or_else(|| "it did not run".to_string());
            format!("This run measured nothing here: {why}.\n")
        } else {
            experiment.render(&self.cfg, &mine, all)
        };
        Some(format!("{}{}", self.provenance(page), body))
    }
}

/// `folder` (from the repository's root) as a link from `page` (also from the root).
fn relative_link(page: &Path, folder: &str) -> String {
    let depth = page.parent().map_or(0, |p| p.components().count());
    format!("{}{folder}", "../".repeat(depth))
}

/// One marked block found in a page.
#[derive(Debug, PartialEq)]
struct Block {
    name: String,
    /// Byte range of the text between the two markers.
    inner: std::ops::Range<usize>,
}

/// A kind of marked span on a page: a generated block, or an inline value. Each opens with
/// `open`, a name (or spec) and ` -->`, and ends at `close`.
struct Marker {
    open: &'static str,
    close: &'static str,
    what: &'static str,
}

const BLOCK: Marker = Marker {
    open: OPEN,
    close: CLOSE,
    what: "block",
};

const VALUE: Marker = Marker {
    open: values::OPEN,
    close: values::CLOSE,
    what: "value",
};

/// Every span of `marker`'s kind in `text`, in order; a marker left open or a span inside a span
/// of the same kind is an error that names the page and the span.
fn marked(page: &Path, text: &str, marker: &Marker) -> Result<Vec<Block>, String> {
    let Marker { open, close, what } = *marker;
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(start) = text[at..].find(open).map(|i| i + at) {
        let name_start = start + open.len();
        let name_end = text[name_start..]
            .find(OPEN_END)
            .map(|i| i + name_start)
            .ok_or_else(|| format!("{}: a {what} marker is not closed", page.display()))?;
        let name = text[name_start..name_end].trim().to_string();
        let inner_start = name_end + OPEN_END.len();
        let end = text[inner_start..]
            .find(close)
            .map(|i| i + inner_start)
            .ok_or_else(|| {
                format!(
                    "{}: {what} '{name}' has no {close} after it",
                    page.display()
                )
            })?;
        if text[inner_start..end].contains(open) {
            return Err(format!(
                "{}: {what} '{name}' holds another {what} before its {close}",
                page.display()
            ));
        }
        out.push(Block {
            name,
            inner: inner_start..end,
        });
        at = end + close.len();
    }
    Ok(out)
}

/// Every generated block of `text`, in order.
fn blocks(page: &Path, text: &str) -> Result<Vec<Block>, String> {
    marked(page, text, &BLOCK)
}

/// The records inline values read: the cited run's, and any other committed run a value names
/// (`run=FOLDER`, a folder under docs/runs), each read once.
struct ValueSources<'a> {
    root: &'a Path,
    cited: &'a [Record],
    others: std::collections::HashMap<String, Vec<Record>>,
}

impl ValueSources<'_> {
    fn records(&mut self, run: Option<&str>) -> Result<&[Record], String> {
        let Some(folder) = run else {
            return Ok(self.cited);
        };
        if !self.others.contains_key(folder) {
            let path = self.root.join(RUNS).join(folder).join("results.json");
            let saved = read_results(&path).map_err(|e| {
                format!("run={folder}: {e} (a folder under {RUNS} holding a results.json)")
            })?;
            self.others.insert(folder.to_string(), saved.records);
        }
        Ok(&self.others[folder])
    }
}

/// `text` with every inline value filled from `sources`; each value whose figure differs is
/// named in `outcome.differ`, with what the page says and what the run gives.
fn fill_values(
    page: &Path,
    text: &str,
    sources: &mut ValueSources<'_>,
    outcome: &mut Outcome,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for value in marked(page, text, &VALUE)? {
        let spec = value.name.as_str();
        let says = &text[value.inner.clone()];
        if says.contains('\n') {
            return Err(format!(
                "{}: value '{spec}' has no {} on its line",
                page.display(),
                values::CLOSE
            ));
        }
        let (run, rest) = values::split_run(spec);
        let records = sources.records(run)?;
        let wanted =
            values::figure(&rest, records).map_err(|e| format!("{}: {e}", page.display()))?;
        outcome.blocks += 1;
        if says != wanted {
            outcome.differ.push(format!(
                "{}: value '{spec}' (the page says {says}, the run gives {wanted})",
                page.display()
            ));
        }
        out.push_str(&text[at..value.inner.start]);
        out.push_str(&wanted);
        at = value.inner.end;
    }
    out.push_str(&text[at..]);
    Ok(out)
}

/// What `bench docs` found or did on one page.
#[derive(Debug, Default)]
pub struct Outcome {
    /// `page: block` for every block whose text differs from what the records give.
    pub differ: Vec<String>,
    /// Pages written (none under `--check`).
    pub written: Vec<PathBuf>,
    /// Blocks on the pages, in all.
    pub blocks: usize,
}

/// The pages that may hold generated blocks: README.md, docs/app.md (the speaker's key map and
/// talks), docs/bench.md (how long a full run takes) and docs/results/*.md.
pub fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for page in ["docs/app.md", "docs/bench.md"] {
        if root.join(page).exists() {
            pages.push(PathBuf::from(page));
        }
    }
    if let Ok(entries) = std::fs::read_dir(root.join("docs/results")) {
        let mut results: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| Path::new("docs/results").join(e.file_name()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        results.sort();
        pages.extend(results);
    }
    pages
}

/// Rewrites (or, with `check`, compares) every marked block of `pages` from `run`.
pub fn generate(
    root: &Path,
    run: &Run,
    pages: &[PathBuf],
    check: bool,
) -> Result<Outcome, BenchError> {
    let mut outcome = Outcome::default();
    let mut sources = ValueSources {
        root,
        cited: &run.saved.records,
        others: Default::default(),
    };
    for page in pages {
        let path = root.join(page);
        let text = std::fs::read_to_string(&path).map_err(|e| BenchError::Unwritable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let found = blocks(page, &text).map_err(|reason| BenchError::Unwritable {
            path: path.display().to_string(),
            reason,
        })?;
        let mut rewritten = String::with_capacity(text.len());
        let mut copied = 0;
        for block in &found {
            outcome.blocks += 1;
            let wanted = run
                .block(root, &block.name, page)
                .ok_or_else(|| {
                    format!(
                        "no generator for block '{}'; accepted: {RUN_BLOCK}, {FRONT_BLOCK}, {KEYS_BLOCK}, {TALKS_BLOCK}, or an experiment's name ({})",
                        block.name,
                        crate::bench::suite::experiment_names()
                    )
                })
                .and_then(|r| r)
                .map_err(|reason| BenchError::Unwritable {
                    path: path.display().to_string(),
                    reason,
                })?;
            let wanted = format!("\n{}\n", wanted.trim_end());
            if text[block.inner.clone()] != wanted {
                outcome
                    .differ
                    .push(format!("{}: {}", page.display(), block.name));
            }
            rewritten.push_str(&text[copied..block.inner.start]);
            rewritten.push_str(&wanted);
            copied = block.inner.end;
        }
        rewritten.push_str(&text[copied..]);
        let rewritten =
            fill_values(page, &rewritten, &mut sources, &mut outcome).map_err(|reason| {
                BenchError::Unwritable {
                    path: path.display().to_string(),
                    reason,
                }
            })?;
        if !check && rewritten != text {
            crate::bench::report::output::write_atomically(&path, rewritten.as_bytes())?;
            outcome.written.push(page.clone());
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_and_bad_markers_named() {
        let page = Path::new("docs/results/x.md");
        let text = "a\n<!-- generated:churn -->\nold\n<!-- /generated -->\nb <!-- generated:headline -->x<!-- /generated -->";
        let found = blocks(page, text).unwrap();
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].name, "churn");
        assert_eq!(&text[found[0].inner.clone()], "\nold\n");
        assert_eq!(found[1].name, "headline");
        let open = blocks(page, "<!-- generated:churn -->\nold\n").unwrap_err();
        assert!(open.contains("churn") && open.contains("x.md"), "{open}");
        let nested = blocks(
            page,
            "<!-- generated:a -->\n<!-- generated:b -->\n<!-- /generated -->",
        )
        .unwrap_err();
        assert!(nested.contains("'a'"), "{nested}");
    }

    #[test]
    fn a_value_is_one_figure_on_one_line() {
        let page = Path::new("docs/results/x.md");
        let mut sources = ValueSources {
            root: Path::new("."),
            cited: &[],
            others: Default::default(),
        };
        let mut outcome = Outcome::default();
        let split = "a <!-- value:layouts soa frame_ms -->1\n2<!-- /value -->";
        let err = fill_values(page, split, &mut sources, &mut outcome).unwrap_err();
        assert!(err.contains("on its line"), "{err}");
        let open = fill_values(
            page,
            "a <!-- value:layouts soa frame_ms -->1",
            &mut sources,
            &mut outcome,
        )
        .unwrap_err();
        assert!(
            open.contains("value 'layouts soa frame_ms' has no"),
            "{open}"
        );
    }

    #[test]
    fn links_climb_out_of_the_page_folder() {
        assert_eq!(
            relative_link(Path::new("README.md"), "docs/runs/full-x"),
            "docs/runs/full-x"
        );
        assert_eq!(
            relative_link(Path::new("docs/results/a.md"), "docs/runs/full-x"),
            "../../docs/runs/full-x"
        );
    }
}

//! The headless bench: the experiments of the two studies, on the core's layouts, with the
//! method printed beside every number. Each experiment is one file that reads as setup, the loop
//! being measured, the rows it produces. By default every cell (usually one entity count) runs in
//! its own child process, as the JS study did, so that one big heap does not tax the next run.

mod chunked;
pub mod harness;
pub mod html;
pub mod machine;
pub mod output;
pub mod placement;
pub mod plot;
pub mod record;
pub mod spread;
pub mod studies;

mod ecs_ops;
mod exp_bandwidth;
mod exp_churn;
pub mod exp_counters;
mod exp_cpp;
mod exp_crossings;
mod exp_dispatch;
mod exp_ecs_vs_soa;
mod exp_filtered;
mod exp_fragmentation;
mod exp_gather;
#[cfg(feature = "gpu")]
mod exp_gpu;
mod exp_grow;
mod exp_headline;
pub mod exp_js;
mod exp_layouts;
mod exp_memory;
mod exp_migration;
mod exp_peers;
mod exp_random_access;
#[cfg(feature = "app")]
mod exp_render;
mod exp_seek;
mod exp_shrink;
pub mod exp_simd;
mod exp_spawn;
mod exp_switch;
mod exp_threads;
#[cfg(feature = "gpu")]
mod exp_upload;
mod exp_width;

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use thiserror::Error;

use crate::error::SimError;
use crate::values::ValueError;
use harness::Method;
use machine::Machine;
use record::{Query, Record};

/// The seed every experiment spawns from.
pub const SEED: u64 = 42;

#[derive(Debug, Error)]
pub enum BenchError {
    #[error("unknown experiment '{name}'; accepted: {accepted}")]
    UnknownExperiment { name: String, accepted: String },
    #[error("cannot read or write results at '{path}': {reason}")]
    Unwritable { path: String, reason: String },
    #[error("the worker for {experiment} cell {cell} failed: {reason}")]
    Worker {
        experiment: String,
        cell: String,
        reason: String,
    },
    #[error("experiment {experiment} cannot read cell '{cell}': expected {expected}")]
    BadCell {
        experiment: String,
        cell: String,
        expected: String,
    },
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// A cell's text, read back by the experiment that wrote it in `cells()`. A cell that does not
/// have that shape (`--cell` is typed by hand, or a worker of another version) is an error that
/// says what was expected, never a default.
#[derive(Clone, Copy, Debug)]
pub struct Cell<'a> {
    pub experiment: &'static str,
    pub text: &'a str,
}

impl<'a> Cell<'a> {
    pub fn new(experiment: &'static str, text: &'a str) -> Self {
        Self { experiment, text }
    }

    pub fn bad(&self, expected: &str) -> BenchError {
        BenchError::BadCell {
            experiment: self.experiment.into(),
            cell: self.text.into(),
            expected: expected.into(),
        }
    }

    /// The cell as `prefix` + a value + `suffix`, e.g. `n=1000` or `share=10%`.
    pub fn value<T: std::str::FromStr>(&self, prefix: &str, suffix: &str) -> Result<T, BenchError> {
        self.text
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(suffix))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| self.bad(&format!("{prefix}<value>{suffix}")))
    }

    /// The cell's `:`-separated parts, exactly `N` of them.
    pub fn parts<const N: usize>(&self, expected: &str) -> Result<[&'a str; N], BenchError> {
        let parts: Vec<&str> = self.text.split(':').collect();
        parts.try_into().map_err(|_| self.bad(expected))
    }

    /// A number inside one of the cell's parts.
    pub fn number<T: std::str::FromStr>(
        &self,
        part: &str,
        expected: &str,
    ) -> Result<T, BenchError> {
        part.parse().map_err(|_| self.bad(expected))
    }
}

#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub quick: bool,
    pub method: Method,
    /// Entity counts for the layouts sweep; `None` for the defaults.
    pub counts: Option<Vec<usize>>,
    pub in_process: bool,
}

impl BenchConfig {
    pub fn new(quick: bool) -> Self {
        Self {
            quick,
            method: if quick {
                Method::quick()
            } else {
                Method::full()
            },
            counts: None,
            in_process: false,
        }
    }

    /// `full` normally, `quick` under `--quick`: the one switch every experiment sizes itself by.
    pub fn pick<T>(&self, full: T, quick: T) -> T {
        if self.quick { quick } else { full }
    }
}

/// One experiment of the studies (or past them).
pub trait Experiment: Sync {
    /// Name used by `--only` and in the `experiment` column.
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// The independent pieces of work, each run in its own process by default.
    /// `prior` holds the records of the experiments run before this one (the crossing search
    /// brackets its search with the layout sweep's numbers).
    fn cells(&self, cfg: &BenchConfig, prior: &[Record]) -> Vec<String>;
    fn run_cell(&self, cfg: &BenchConfig, cell: &str) -> Result<Vec<Record>, BenchError>;
    /// Markdown for this experiment from its records (`all` holds every experiment's records,
    /// for the few tables that put two experiments side by side).
    fn render(&self, cfg: &BenchConfig, mine: &[Record], all: &[Record]) -> String;
}

pub fn experiments() -> Vec<&'static dyn Experiment> {
    vec![
        &exp_layouts::Layouts,
        &exp_spawn::Spawn,
        &exp_crossings::Crossings,
        &exp_ecs_vs_soa::EcsVsSoa,
        &exp_headline::Headline,
        &exp_width::Width,
        &exp_random_access::RandomAccess,
        &exp_seek::Seek,
        &exp_churn::Churn,
        &exp_filtered::Filtered,
        &exp_fragmentation::Fragmentation,
        &exp_dispatch::Dispatch,
        &exp_js::Js,
        &exp_cpp::Cpp,
        &exp_peers::Peers,
        &exp_threads::ThreadScaling,
        &exp_simd::Simd,
        &exp_gather::Gather,
        &exp_migration::Migration,
        &exp_switch::Switch,
        &exp_grow::Grow,
        &exp_memory::Memory,
        &exp_shrink::Shrink,
        &exp_bandwidth::Bandwidth,
        &exp_counters::Counters,
        #[cfg(feature = "gpu")]
        &exp_gpu::Gpu,
        #[cfg(feature = "gpu")]
        &exp_upload::Upload,
        #[cfg(feature = "app")]
        &exp_render::Render,
    ]
}

pub fn experiment_names() -> String {
    experiments()
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `bench --list`: every experiment in the suite's order, with its title and how many cells (one
/// process each) a full run and a `--quick` run hold. An experiment that sizes its cells from
/// earlier experiments' records (the crossing search) says so instead of a count.
pub fn list() -> String {
    let (full, quick) = (BenchConfig::new(false), BenchConfig::new(true));
    let mut out = String::from("experiment           cells (full / --quick)   what it measures\n");
    for e in experiments() {
        let cells = match (e.cells(&full, &[]).len(), e.cells(&quick, &[]).len()) {
            (0, 0) => "from earlier results".to_string(),
            (f, q) => format!("{f} / {q}"),
        };
        out.push_str(&format!("{:<20} {cells:<24} {}\n", e.name(), e.title()));
    }
    out.push_str("\n`bench --only NAME[,NAME]` runs some of them; `bench` runs them all.\n");
    out
}

/// The experiments `--only` names, in the suite's order; every name must exist.
pub fn select(only: &[String]) -> Result<Vec<&'static dyn Experiment>, BenchError> {
    let all = experiments();
    for name in only {
        if !all.iter().any(|e| e.name() == name) {
            return Err(BenchError::UnknownExperiment {
                name: name.clone(),
                accepted: experiment_names(),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| only.is_empty() || only.iter().any(|n| n == e.name()))
        .collect())
}

/// Everything one bench run produced.
pub struct Report {
    pub machine: Machine,
    pub method: String,
    pub command: String,
    pub records: Vec<Record>,
    pub markdown: String,
    pub seconds: f64,
}

/// Runs the selected experiments and renders the report; progress goes to stderr.
pub fn run(
    cfg: &BenchConfig,
    selected: &[&'static dyn Experiment],
    command: String,
) -> Result<Report, BenchError> {
    let started = Instant::now();
    let machine = Machine::detect();
    let method = cfg.method.describe();
    let mut records = Vec::new();
    for experiment in selected {
        for cell in experiment.cells(cfg, &records) {
            eprintln!(
                "[{:6.1}s] {} {}",
                started.elapsed().as_secs_f64(),
                experiment.name(),
                cell
            );
            let mut got = if cfg.in_process {
                experiment.run_cell(cfg, &cell)?
            } else {
                run_worker(cfg, experiment.name(), &cell)?
            };
            records.append(&mut got);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let markdown = render_markdown(
        cfg,
        selected,
        &records,
        &command,
        &machine.line(),
        &method,
        seconds,
    );
    Ok(Report {
        machine,
        method,
        command,
        records,
        markdown,
        seconds,
    })
}

/// The report's Markdown from its records: the header, each experiment's tables, the time.
pub fn render_markdown(
    cfg: &BenchConfig,
    selected: &[&'static dyn Experiment],
    records: &[Record],
    command: &str,
    machine_line: &str,
    method: &str,
    seconds: f64,
) -> String {
    let mut markdown = format!(
        "# entity-layouts bench\n\nCommand: `{command}`\n\nMachine: {machine_line}\n\nMethod: {method}; {}.\n",
        if cfg.in_process {
            "all cells in this process"
        } else {
            "each cell in its own child process"
        }
    );
    for experiment in selected {
        let mine: Vec<Record> = records
            .iter()
            .filter(|r| r.experiment == experiment.name())
            .cloned()
            .collect();
        markdown.push_str(&format!("\n## {}\n\n", experiment.title()));
        markdown.push_str(&experiment.render(cfg, &mine, records));
    }
    markdown.push_str(&format!("\nTotal bench time: {seconds:.1} s.\n"));
    markdown
}

/// Runs one cell in a child process of this same binary and reads its records back.
fn run_worker(cfg: &BenchConfig, experiment: &str, cell: &str) -> Result<Vec<Record>, BenchError> {
    let fail = |reason: String| BenchError::Worker {
        experiment: experiment.into(),
        cell: cell.into(),
        reason,
    };
    let exe = std::env::current_exe().map_err(|e| fail(e.to_string()))?;
    let mut command = Command::new(exe);
    command.args(["bench", "--worker", experiment, "--cell", cell]);
    if cfg.quick {
        command.arg("--quick");
    }
    if let Some(counts) = &cfg.counts {
        let list: Vec<String> = counts.iter().map(usize::to_string).collect();
        command.args(["--counts", &list.join(",")]);
    }
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if !output.status.success() {
        return Err(fail(format!("exit status {}", output.status)));
    }
    serde_json::from_slice(&output.stdout).map_err(|e| fail(format!("unreadable output: {e}")))
}

/// The worker side: runs one cell and prints its records as JSON on stdout.
pub fn worker(cfg: &BenchConfig, experiment: &str, cell: &str) -> Result<String, BenchError> {
    let selected = select(&[experiment.to_string()])?;
    let records = selected[0].run_cell(cfg, cell)?;
    Ok(serde_json::to_string(&records).expect("records serialize"))
}

/// Where the report's files go, checked before any measuring starts.
pub fn prepare_out_dir(dir: &PathBuf) -> Result<(), BenchError> {
    let unwritable = |reason: String| BenchError::Unwritable {
        path: dir.display().to_string(),
        reason,
    };
    std::fs::create_dir_all(dir).map_err(|e| unwritable(e.to_string()))?;
    let probe = dir.join(format!(".write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| unwritable(e.to_string()))?;
    std::fs::remove_file(&probe).map_err(|e| unwritable(e.to_string()))
}

/// Fills `layout` with entities `0..n` of the bench seed and returns their initial states, for
/// experiments that drive a layout directly rather than through a `Swarm`.
pub fn fill_seeded<S: crate::scalar::Scalar>(
    layout: &mut dyn crate::layout::Layout<S>,
    n: usize,
) -> Vec<crate::workload::EntityState<S>> {
    let mut states = Vec::with_capacity(n);
    crate::workload::spawn_range(
        crate::workload::SpawnPattern::default(),
        SEED,
        0,
        n,
        &mut states,
    );
    let ids: Vec<u64> = (0..n as u64).collect();
    layout.push(&ids, &states);
    states
}

/// Milliseconds since `t`, for the experiments that time one-off events rather than repeats.
pub fn ms_since(t: Instant) -> f64 {
    ms(t.elapsed())
}

/// A duration in milliseconds.
pub fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The largest sample (0 for none): the worst frame of a run.
pub fn max_of(samples: &[f64]) -> f64 {
    samples.iter().copied().fold(0.0, f64::max)
}

/// A Markdown table from a header and rows.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// Numbers as a reader wants them: 3 significant digits, thousands separated for big ones.
pub fn fmt_num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 10_000.0 {
        fmt_count(v.round() as u64)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.1 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

pub fn fmt_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cell holding a time and the same time per item, `1.22 ms, 1.22 ns`: the records `query`
/// finds with its metric set to `ms_metric` and to `ns_metric`.
pub fn ms_and_ns(records: &[Record], query: Query, ms_metric: &str, ns_metric: &str) -> String {
    let ms = query.with_metric(ms_metric).find(records);
    let ns = query.with_metric(ns_metric).find(records);
    match (ms, ns) {
        (Some(ms), Some(ns)) => format!("{} ms, {} ns", fmt_num(ms.p50), fmt_num(ns.p50)),
        _ => "-".into(),
    }
}

/// "ours vs study" as `ours (study: x, ratio r)`.
pub fn vs_study(ours: f64, study: Option<f64>) -> String {
    match study {
        Some(s) if s > 0.0 => format!("{} (study {}, x{:.2})", fmt_num(ours), fmt_num(s), ours / s),
        _ => fmt_num(ours),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_cells_are_errors_not_defaults() {
        let cell = Cell::new("layouts", "n=12x");
        let err = cell.value::<usize>("n=", "").unwrap_err().to_string();
        assert!(
            err.contains("layouts") && err.contains("n=12x") && err.contains("n=<value>"),
            "{err}"
        );
        assert_eq!(
            Cell::new("e", "share=10%")
                .value::<u32>("share=", "%")
                .unwrap(),
            10
        );
        assert_eq!(Cell::new("e", "a:b").parts::<2>("x:y").unwrap(), ["a", "b"]);
        assert!(Cell::new("e", "a:b:c").parts::<2>("x:y").is_err());
        // Every experiment refuses a cell it never writes.
        let cfg = BenchConfig::new(true);
        for experiment in experiments() {
            assert!(
                experiment.run_cell(&cfg, "no-such-cell:x").is_err(),
                "{} accepted a malformed cell",
                experiment.name()
            );
        }
    }

    #[test]
    fn unknown_experiments_list_the_accepted_names() {
        let err = select(&["layouts".into(), "nope".into()])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("nope") && err.contains("width") && err.contains("bandwidth"));
        assert_eq!(select(&[]).unwrap().len(), experiments().len());
    }

    #[test]
    fn numbers_format_for_reading() {
        assert_eq!(fmt_count(1_792_000), "1,792,000");
        assert_eq!(fmt_num(0.46612), "0.466");
        assert_eq!(fmt_num(16.666), "16.7");
    }
}

//! `bench`: the studies' experiments and what they left out, headless, each cell in a fresh
//! process, with the machine line and the studies' figures beside ours; `--out DIR` writes the
//! report and keeps each cell as it ends, `--resume DIR` finishes a run that was stopped;
//! `bench compare A B` puts two such runs side by side, cell by cell.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::{FAILED, INTERRUPTED, TERMINATED, USAGE};
use crate::bench::report::compare::{RunCells, compare};
use crate::bench::{self, BenchConfig, BenchError};
use crate::layout::LayoutKind;
use crate::runtime::values::{BenchCount, LayoutName};

pub fn run(args: BenchArgs) -> ExitCode {
    match run_bench(args) {
        Ok(code) => code,
        Err(Stopped { error, code }) => {
            eprintln!(
                "{}{error}",
                if matches!(error, BenchError::Interrupted { .. }) {
                    ""
                } else {
                    "error: "
                }
            );
            ExitCode::from(code)
        }
    }
}

/// An error and its exit code: the same kind of error (a folder that cannot be written, say) is
/// a usage error when it stops the request before anything ran, and a failure after.
struct Stopped {
    error: BenchError,
    code: u8,
}

impl From<BenchError> for Stopped {
    fn from(error: BenchError) -> Self {
        Stopped {
            code: exit_code(&error),
            error,
        }
    }
}

/// For the checks before the first cell: whatever they find, nothing ran.
fn asked_wrong(error: BenchError) -> Stopped {
    Stopped { error, code: USAGE }
}

/// A request the bench cannot run as asked is a usage error; one that started and failed is a
/// failure; Ctrl-C keeps what was finished.
fn exit_code(e: &BenchError) -> u8 {
    match e {
        BenchError::UnknownExperiment { .. }
        | BenchError::BadCell { .. }
        | BenchError::NoCellInCommon { .. }
        | BenchError::Value(_)
        | BenchError::Sim(_) => USAGE,
        BenchError::Unwritable { .. } | BenchError::Worker { .. } => FAILED,
        BenchError::Interrupted { .. } => INTERRUPTED,
    }
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchArgs {
    #[command(subcommand)]
    action: Option<BenchAction>,
    /// A CI-sized run of every experiment: smaller counts, fewer samples.
    #[arg(long)]
    quick: bool,
    /// Only these experiments (comma-separated; `--list` names them).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// List the experiments, what each measures and how many cells it runs, and exit.
    #[arg(long)]
    list: bool,
    /// Write results.md, results.csv, results.json and SVG plots into this folder, and keep each
    /// cell there as it ends (run.json, cells.jsonl), so that an interrupted run can resume.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Finish a run that `--out DIR` started and that was interrupted (Ctrl-C, a crash, a failed
    /// cell): runs only the cells it lacks, with the options it was started with.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["quick", "only", "list", "out", "in_process", "counts", "layouts", "replot", "compare"])]
    resume: Option<PathBuf>,
    /// Run every cell in this process instead of one child process per cell.
    #[arg(long)]
    in_process: bool,
    /// Entity counts, e.g. 1000,100000,1e6: every experiment that sweeps counts runs at these
    /// instead of its own (the run names those it cannot narrow before it starts).
    #[arg(long, value_delimiter = ',')]
    counts: Option<Vec<BenchCount>>,
    /// Layouts, e.g. soa,ecs-table,hecs: every experiment that compares layouts keeps only these
    /// (the run names those it cannot narrow before it starts).
    #[arg(long, value_delimiter = ',', value_parser = LayoutName)]
    layouts: Option<Vec<LayoutKind>>,
    /// With `--out DIR`: add to DIR's report (results.md, index.html) this run beside RUN, an
    /// earlier run's folder, cell by cell (as `bench compare RUN DIR` prints it).
    #[arg(long, value_name = "RUN", requires = "out")]
    compare: Option<PathBuf>,
    /// Redraw the SVG plots of an earlier run from its results.json (written beside it).
    #[arg(long, value_name = "RESULTS_JSON")]
    replot: Option<PathBuf>,
    /// Internal: run one cell of one experiment and print its records as JSON.
    #[arg(long, hide = true)]
    worker: Option<String>,
    /// The worker's cell in its readable form, as the journal and the progress lines show it
    /// (`count:soa`).
    #[arg(long, hide = true, requires = "worker", conflicts_with = "cell_json")]
    cell: Option<String>,
    /// The worker's cell serialized, as the runner hands it over.
    #[arg(long, hide = true, requires = "worker")]
    cell_json: Option<String>,
}

#[derive(clap::Subcommand)]
enum BenchAction {
    /// Rewrite the generated tables of README.md and docs/results/*.md (the text between
    /// `<!-- generated:NAME -->` and `<!-- /generated -->`) from a run's records; run it in the
    /// repository's root.
    Docs(DocsArgs),
    /// Put two run folders (`bench --out DIR`) side by side, cell by cell: both machine lines,
    /// then per record both hold each run's median and spread, B over A, and whether the
    /// spreads overlap; the cells one run lacks are listed.
    Compare(CompareArgs),
}

#[derive(Args)]
struct CompareArgs {
    /// The run to compare with, e.g. the committed one: docs/runs/full-<date>.
    a: PathBuf,
    /// The run to put beside it, e.g. yours: a folder `bench --out DIR` wrote.
    b: PathBuf,
}

fn run_compare(args: &CompareArgs) -> Result<ExitCode, Stopped> {
    let a = RunCells::read(&args.a).map_err(asked_wrong)?;
    let b = RunCells::read(&args.b).map_err(asked_wrong)?;
    let comparison = compare(&a, &b).map_err(asked_wrong)?;
    println!(
        "# entity-layouts bench compare\n\n{}",
        comparison.markdown(&a, &b)
    );
    Ok(ExitCode::SUCCESS)
}

/// `--compare RUN`, checked before the first cell: RUN is a run, and it holds some of the cells
/// this run plans (planned as a run with no earlier records plans them).
fn compared_run(
    run: &Path,
    out: &Path,
    cfg: &BenchConfig,
    selected: &[&'static dyn bench::AnyExperiment],
) -> Result<RunCells, Stopped> {
    let against = RunCells::read(run).map_err(asked_wrong)?;
    let mut planned = 0;
    let mut shared = false;
    for experiment in selected {
        for cell in experiment.cells(cfg, &[]) {
            planned += 1;
            shared |= against.has(experiment.name(), cell.text());
        }
    }
    if !shared {
        return Err(asked_wrong(BenchError::NoCellInCommon {
            cells: (against.len(), planned),
            a: against.dir,
            b: format!("this run ({})", out.display()),
        }));
    }
    Ok(against)
}

#[derive(Args)]
struct DocsArgs {
    /// The run to generate from (default: the newest docs/runs/full-*).
    #[arg(long, value_name = "DIR")]
    run: Option<PathBuf>,
    /// Change nothing: exit 1 and name every block whose text differs from the records.
    #[arg(long)]
    check: bool,
}

fn run_docs(args: &DocsArgs) -> Result<ExitCode, Stopped> {
    use bench::docs;
    let root = std::env::current_dir().map_err(|e| {
        asked_wrong(BenchError::Unwritable {
            path: ".".into(),
            reason: e.to_string(),
        })
    })?;
    if !root.join("README.md").is_file() || !root.join("docs/results").is_dir() {
        return Err(asked_wrong(BenchError::Unwritable {
            path: root.display().to_string(),
            reason: "not the repository's root (no README.md and docs/results here); run `bench docs` there".into(),
        }));
    }
    let dir = match &args.run {
        Some(dir) => dir.clone(),
        None => docs::newest_full_run(&root).map_err(asked_wrong)?,
    };
    let run = docs::Run::read(&root, &dir).map_err(asked_wrong)?;
    let outcome = docs::generate(&root, &run, &docs::pages(&root), args.check)?;
    if !args.check {
        eprintln!(
            "{} generated block(s) from {}; rewrote {} page(s){}",
            outcome.blocks,
            run.folder,
            outcome.written.len(),
            outcome
                .written
                .iter()
                .map(|p| format!("\n  {}", p.display()))
                .collect::<String>()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if outcome.differ.is_empty() {
        eprintln!(
            "docs: all {} generated block(s) match {}'s records",
            outcome.blocks, run.folder
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "error: {} generated block(s) differ from {}'s records (edited by hand, or generated from another run):{}\n`entity-layouts bench docs` rewrites them",
        outcome.differ.len(),
        run.folder,
        outcome
            .differ
            .iter()
            .map(|d| format!("\n  {d}"))
            .collect::<String>()
    );
    Ok(ExitCode::from(FAILED))
}

fn run_bench(args: BenchArgs) -> Result<ExitCode, Stopped> {
    use bench::report::journal::{Interrupted, Journal, Plan};

    match &args.action {
        Some(BenchAction::Docs(docs)) => return run_docs(docs),
        Some(BenchAction::Compare(pair)) => return run_compare(pair),
        None => {}
    }

    let mut cfg = BenchConfig::new(args.quick);
    cfg.in_process = args.in_process;
    cfg.counts = args
        .counts
        .map(|counts| counts.into_iter().map(|c| c.0).collect());
    cfg.layouts = args.layouts;
    if args.list {
        print!("{}", bench::list());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(json) = &args.replot {
        let files = bench::replot(json).map_err(asked_wrong)?;
        eprintln!("wrote {}", files.join(", "));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(experiment) = &args.worker {
        let cell = match (args.cell, args.cell_json) {
            (_, Some(json)) => bench::WorkerCell::Json(json),
            (text, None) => bench::WorkerCell::Text(text.unwrap_or_default()),
        };
        println!("{}", bench::worker(&cfg, experiment, &cell)?);
        return Ok(ExitCode::SUCCESS);
    }
    let (selected, command, out, keep, against) = match &args.resume {
        Some(dir) => {
            let resumed = Interrupted::read(dir).map_err(asked_wrong)?;
            cfg = resumed.plan.config();
            let selected = bench::select(&resumed.plan.experiments)?;
            let keep = bench::Keep {
                journal: Some(Journal::append(dir).map_err(asked_wrong)?),
                resumed: Some(resumed),
            };
            let command = keep.resumed.as_ref().unwrap().plan.command.clone();
            (selected, command, Some(dir.clone()), keep, None)
        }
        None => {
            let selected = bench::select(&args.only)?;
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            let mut keep = bench::Keep::default();
            let mut against = None;
            if let Some(dir) = &args.out {
                if let Some(run) = &args.compare {
                    against = Some(compared_run(run, dir, &cfg, &selected)?);
                }
                bench::prepare_out_dir(dir).map_err(asked_wrong)?;
                let plan = Plan {
                    command: command.clone(),
                    quick: cfg.quick,
                    in_process: cfg.in_process,
                    counts: cfg.counts.clone(),
                    layouts: cfg
                        .layouts
                        .as_ref()
                        .map(|ks| ks.iter().map(|k| k.name().to_string()).collect()),
                    experiments: selected.iter().map(|e| e.name().to_string()).collect(),
                };
                keep.journal = Some(Journal::create(dir, &plan).map_err(asked_wrong)?);
            }
            (selected, command, args.out.clone(), keep, against)
        }
    };
    let stop = interrupt_flag();
    let mut report = bench::run(&cfg, &selected, command, keep, &stop)?;
    // This run beside RUN, from the cells its journal kept: on the page, or, where no cell the
    // run finished is one RUN holds, an error once the report is written.
    let mut not_compared = None;
    if let (Some(against), Some(dir)) = (&against, &out) {
        let mine = RunCells::from_journal(dir, report.machine.line())?;
        match compare(against, &mine) {
            Ok(comparison) => report.markdown.push_str(&format!(
                "\n## Beside {}\n\n{}",
                against.dir,
                comparison.markdown(against, &mine)
            )),
            Err(e) => not_compared = Some(e),
        }
    }
    println!("{}", report.markdown);
    if let Some(dir) = &out {
        let files = bench::write_report(dir, &report)?;
        eprintln!("wrote {} into {}", files.join(", "), dir.display());
    }
    if let Some(error) = not_compared {
        return Err(asked_wrong(error));
    }
    if report.failed.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    let names: Vec<String> = report
        .failed
        .iter()
        .map(|f| format!("{} {}", f.experiment, f.cell))
        .collect();
    eprintln!(
        "error: {} cell(s) failed: {}; {}",
        names.len(),
        names.join(", "),
        match &out {
            Some(dir) => format!(
                "the others are written; run them again with: entity-layouts bench --resume {}",
                dir.display()
            ),
            None => "the others are in the report above".to_string(),
        }
    );
    Ok(ExitCode::from(FAILED))
}

/// Set by Ctrl-C or SIGTERM: the bench ends the cell running and says how to resume. A second
/// Ctrl-C ends the program at once (an in-process cell cannot be stopped half way).
fn interrupt_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for (signal, code) in [(SIGINT, INTERRUPTED), (SIGTERM, TERMINATED)] {
        if let Err(e) = crate::tools::signals::raise_flag_on(signal, code.into(), &stop) {
            eprintln!(
                "warning: cannot handle signal {signal}: {e}; it will end the run without saying how to resume"
            );
        }
    }
    stop
}

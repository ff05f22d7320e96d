//! `bench --quick --out DIR` end to end: every experiment and every layout row present in the
//! files, every number finite and positive; `bench compare` of two run folders; bad input exits 2
//! naming the problem. No timings are asserted.

use std::path::Path;
use std::process::{Command, Output};

use entity_layouts::bench::experiments;
use entity_layouts::bench::report::journal::CellEntry;
use entity_layouts::bench::report::metric::Metric;
use entity_layouts::bench::report::output::read_results;
use entity_layouts::bench::report::record::{CSV_HEADER, Record};
use entity_layouts::layout::LayoutKind;

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .arg("bench")
        .args(args)
        .output()
        .expect("the binary runs")
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("entity-layouts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// How many SVG plots a run wrote into `dir`.
fn written_svgs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".svg"))
        })
        .count()
}

#[test]
fn quick_bench_writes_every_experiment_and_layout() {
    let dir = temp_dir("quick");
    let out = bench(&["--quick", "--out", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    assert!(json["machine"]["cpu"].is_string() && json["method"].is_string());
    let run = read_results(&dir.join("results.json")).unwrap();
    let records = run.records;
    // Crossings appear only where the quick sweep brackets one; the GPU experiments only where
    // there is an adapter (they say why and skip otherwise); every other experiment must.
    let gpu = entity_layouts::runtime::gpu::context::availability().is_ok();
    let expected = |name: &str| name != "crossings" && (gpu || !["gpu", "upload"].contains(&name));
    for e in experiments().iter().filter(|e| expected(e.name())) {
        assert!(
            records.iter().any(|r| r.experiment == e.name()),
            "experiment {} missing",
            e.name()
        );
    }
    // The run's own wall time, what it ran, and each experiment that measured nothing with why.
    assert!(
        json["wall_s"].as_f64().is_some_and(|s| s > 0.0),
        "{}",
        json["wall_s"]
    );
    assert_eq!(
        json["experiments"].as_array().map(Vec::len),
        Some(experiments().len())
    );
    let skipped = json["skipped"].as_object().unwrap();
    for e in experiments() {
        let measured = records
            .iter()
            .any(|r| r.experiment == e.name() && r.metric != Metric::Unavailable);
        assert_eq!(
            skipped
                .get(e.name())
                .is_some_and(|why| why.as_str().is_some_and(|w| !w.is_empty())),
            !measured,
            "{}: {:?}",
            e.name(),
            skipped.get(e.name())
        );
    }
    for kind in LayoutKind::CPU {
        for scalar in ["f32", "f64"] {
            assert!(
                records.iter().any(|r| r.experiment == "layouts"
                    && r.layout == kind.name()
                    && r.scalar == scalar),
                "layouts row {kind} {scalar} missing"
            );
        }
        for threads in ["1", "all"] {
            assert!(
                records.iter().any(|r| r.experiment == "threads"
                    && r.layout == kind.name()
                    && r.threads == threads),
                "threads row {kind} {threads} missing"
            );
        }
    }
    for r in &records {
        for v in [r.p50, r.p10, r.p90] {
            // A count can be exactly zero (no last-level miss at 10k entities, in the counters
            // and in seek's counted rows), and so can where a column sits (page offset,
            // huge-page KiB, colour clashes) and the share of seekers far from their targets
            // once sorted; a time cannot.
            let placement = [Metric::PageOffset, Metric::HugeKib, Metric::ColourClashes];
            let zero_ok = r.experiment == "counters"
                || r.metric.name().ends_with("_misses")
                || placement.contains(&r.metric)
                || r.metric == Metric::FarTargets;
            assert!(v.is_finite() && (v > 0.0 || zero_ok && v == 0.0), "{r:?}");
        }
        assert!(r.p10 <= r.p50 && r.p50 <= r.p90, "{r:?}");
        assert!(r.samples >= 1 && !r.unit.is_empty(), "{r:?}");
    }

    // Progress as plain lines (stderr is a pipe here, not a terminal): every cell numbered out
    // of the total, with the time left, and each experiment's duration.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let journal = std::fs::read_to_string(dir.join("cells.jsonl")).unwrap();
    let cells = journal.lines().count();
    assert!(cells > experiments().len(), "{cells} cells in the journal");
    for k in [1, cells / 2, cells] {
        assert!(
            stderr.contains(&format!("] cell {k}/")),
            "no line for cell {k}:\n{stderr}"
        );
    }
    assert!(
        stderr.contains(" left") && stderr.contains("layouts done in "),
        "{stderr}"
    );
    assert!(!stderr.contains('\r'), "a redrawn bar in a pipe");

    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(CSV_HEADER));
    assert_eq!(lines.count(), records.len());

    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    for e in experiments() {
        assert!(
            md.contains(&format!("## {}", e.title())),
            "{} not in results.md",
            e.name()
        );
    }
    assert!(md.contains("Machine: ") && md.contains("Method: "));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), md.trim());

    for plot in [
        "layouts_f32.svg",
        "layouts_f64.svg",
        "ns_per_entity_f32.svg",
        "ns_per_entity_f64.svg",
        "width.svg",
    ] {
        let svg = std::fs::read_to_string(dir.join(plot)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("soa"), "{plot}");
    }
    assert!(
        std::fs::read_to_string(dir.join("layouts_f32.svg"))
            .unwrap()
            .contains("16.67 ms budget")
    );
    // Where the machine says its cache sizes, the ns-per-entity plot marks them.
    if run.machine.is_some_and(|m| !m.cache_bytes.is_empty()) {
        let svg = std::fs::read_to_string(dir.join("ns_per_entity_f32.svg")).unwrap();
        assert!(
            svg.contains("KiB ≈"),
            "no cache marks in ns_per_entity_f32.svg"
        );
    }
    // With valgrind, the counters ran and drew where each layout's accesses were served.
    if entity_layouts::tools::counters::cachegrind::valgrind_version().is_ok() {
        let svg = std::fs::read_to_string(dir.join("counters_served_10k.svg")).unwrap();
        assert!(
            svg.contains("memory") && svg.contains("boxed-shuffled"),
            "counters_served_10k.svg"
        );
        assert!(md.contains("### simulated, 10,000 entities"), "{md}");
    }
    // index.html holds the whole report: every experiment's section and every plot, inline.
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    for title in md.lines().filter_map(|l| l.strip_prefix("## ")) {
        let id = entity_layouts::bench::report::html::slug(title);
        assert!(
            page.contains(&format!("<h2 id=\"{id}\">")),
            "no section {title}"
        );
    }
    assert_eq!(
        page.matches("<svg").count(),
        written_svgs(&dir),
        "a plot missing from the page"
    );
    // The plots and the page can be redrawn from results.json alone.
    std::fs::remove_file(dir.join("width.svg")).unwrap();
    std::fs::remove_file(dir.join("index.html")).unwrap();
    let replot = bench(&["--replot", dir.join("results.json").to_str().unwrap()]);
    assert!(
        replot.status.success(),
        "{}",
        String::from_utf8_lossy(&replot.stderr)
    );
    assert!(
        std::fs::read_to_string(dir.join("width.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let again = std::fs::read_to_string(dir.join("index.html")).expect("replot rewrites the page");
    assert_eq!(again.matches("<svg").count(), page.matches("<svg").count());
    // (Its sections can be fewer: an experiment that recorded nothing is left out of a replot.)
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_runs_the_named_experiments_in_process() {
    let out = bench(&["--quick", "--in-process", "--only", "churn,dispatch"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("## Churn") && md.contains("## Dispatch"));
    assert!(!md.contains("## Width"));
}

/// `--counts` and `--layouts` reach an experiment's cells in child processes, and the run says
/// which selected experiment they cannot narrow before it starts.
#[test]
fn counts_and_layouts_narrow_the_run_and_name_what_they_cannot() {
    let out = bench(&[
        "--quick",
        "--only",
        "churn,dispatch",
        "--counts",
        "3000",
        "--layouts",
        "soa,aos",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("--counts does not narrow churn, dispatch")
            && err.contains("--layouts does not narrow dispatch"),
        "{err}"
    );
    let md = String::from_utf8_lossy(&out.stdout);
    let churn = &md[md.find("## Churn").unwrap()..md.find("## Dispatch").unwrap()];
    assert!(
        churn.contains("`soa`") && churn.contains("`aos`"),
        "{churn}"
    );
    assert!(
        !churn.contains("`hecs`") && !churn.contains("`boxed`"),
        "{churn}"
    );
    assert_usage_error(&bench(&["--layouts", "soa,nope"]), &["nope"]);
}

fn assert_usage_error(out: &Output, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in {err}");
    }
}

#[test]
fn bad_input_exits_2_and_names_what_is_accepted() {
    assert_usage_error(
        &bench(&["--only", "layouts,nonsense"]),
        &["nonsense", "width", "churn"],
    );
    assert_usage_error(&bench(&["--counts", "1000,0"]), &["'0'", "1 to 100000000"]);
    assert_usage_error(&bench(&["--counts", "lots"]), &["'lots'"]);
    let file = temp_dir("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let under_file = file.join("out");
    assert_usage_error(
        &bench(&[
            "--quick",
            "--only",
            "churn",
            "--out",
            under_file.to_str().unwrap(),
        ]),
        &["cannot read or write results", "out"],
    );
    assert!(Path::new(&file).is_file(), "the user's file is untouched");
    let _ = std::fs::remove_file(&file);
}

/// A worker takes its cell serialized (`--cell-json`, from the runner) or as a person types it
/// (`--cell`, the text the journal and the progress lines show); a cell that is not one of the
/// experiment's is a usage error naming the experiment, the cell and the forms it takes.
#[test]
fn a_worker_reads_its_cell_in_either_form_and_a_malformed_one_exits_2() {
    for args in [
        &["--worker", "memory", "--cell", "soa:1000"][..],
        &[
            "--worker",
            "memory",
            "--cell-json",
            r#"{"layout":"soa","n":1000}"#,
        ],
    ] {
        let out = bench(&[&["--quick"], args].concat());
        assert!(out.status.success(), "{args:?}: {}", stderr_of(&out));
        let records: Vec<entity_layouts::bench::report::record::Record> =
            serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            records
                .iter()
                .any(|r| r.experiment == "memory" && r.layout == "soa" && r.n == 1000),
            "{args:?}: {records:?}"
        );
    }
    assert_usage_error(
        &bench(&["--worker", "layouts", "--cell", "n=12x"]),
        &["experiment layouts cannot read cell 'n=12x'", "n=<count>"],
    );
    assert_usage_error(
        &bench(&["--worker", "order", "--cell", "gpu:1000:0"]),
        &["order", "'gpu:1000:0'", "<layout>:<entities>:<process>"],
    );
    assert_usage_error(
        &bench(&[
            "--worker",
            "seek",
            "--cell-json",
            r#"{"Count":{"layout":"gpu"}}"#,
        ]),
        &["seek", "count:gpu", "CPU layout"],
    );
    assert_usage_error(
        &bench(&["--worker", "memory", "--cell-json", "soa:1000"]),
        &["memory", "JSON"],
    );
    assert_usage_error(&bench(&["--worker", "memory"]), &["memory", "cell ''"]);
}

/// The JS study's script under Node, one cell per process, its records carrying the runtime:
/// every frame layout in both sets of systems, and every width shape for S = 1..20. Without
/// Node the experiment says why and the run still succeeds.
#[test]
fn the_js_study_runs_under_node_on_this_machine_or_says_why() {
    let dir = temp_dir("js");
    let out = bench(&["--quick", "--only", "js", "--out", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    let records = read_results(&dir.join("results.json")).unwrap().records;
    let _ = std::fs::remove_dir_all(&dir);
    let version = match entity_layouts::bench::studies::js::node_version() {
        Ok(version) => version,
        Err(why) => {
            eprintln!("skipped: {why}");
            assert!(md.contains("Skipped: `node` is not on PATH"), "{md}");
            assert!(records.iter().all(|r| r.metric == Metric::Unavailable));
            return;
        }
    };
    assert!(
        records
            .iter()
            .all(|r| r.experiment == "js" && r.runtime == format!("node {version}")),
        "every record says it ran under node {version}"
    );
    for layout in ["boxed", "boxed-shuffled", "soa", "aos"] {
        for systems in ["study", "ours"] {
            assert!(
                records.iter().any(|r| r.layout == layout
                    && r.metric == Metric::FrameMs
                    && r.n == 1000
                    && r.param == format!("systems={systems}")),
                "{layout} {systems} missing"
            );
        }
    }
    for layout in [
        "objects",
        "soa-columns",
        "soa-shared",
        "soa-one-index",
        "aos",
    ] {
        for s in 1..=20 {
            assert!(
                records.iter().any(|r| r.layout == layout
                    && r.metric == Metric::NsPerElement
                    && r.param == format!("streams={s}")),
                "{layout} S={s} missing"
            );
        }
    }
    for r in &records {
        assert!(
            r.p50.is_finite() && r.p50 > 0.0 && r.p10 <= r.p50 && r.p50 <= r.p90,
            "{r:?}"
        );
    }
    assert!(
        md.contains("JS here / JS study") && md.contains("Where each climbs"),
        "{md}"
    );

    // The script refuses bad input by name, with the accepted range, exit 2.
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/js/layouts.mjs");
    let bad = Command::new("node")
        .args([script, "layouts", "0"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("'0'") && err.contains("1 to 100000000"),
        "{err}"
    );
}

#[test]
fn list_names_every_experiment_with_its_cells_its_study_row_and_its_duration() {
    let out = bench(&["--list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    for e in experiments() {
        let at = lines
            .iter()
            .position(|l| *l == e.name())
            .unwrap_or_else(|| panic!("no block for {} in:\n{text}", e.name()));
        let block = &lines[at + 1..at + 4];
        assert_eq!(block[0].trim(), e.title());
        assert_eq!(block[1].trim(), e.study());
        assert!(
            block[2].contains("cells (full / --quick): ") && block[2].contains("typically "),
            "{}",
            block[2]
        );
    }
    let seek = lines[lines.iter().position(|l| *l == "seek").unwrap() + 3];
    // 18 CPU layouts and the control at three counts, two processes each, plus 18 counted
    // cells.
    let cells = 3 * 2 * (LayoutKind::CPU.len() + 1) + LayoutKind::CPU.len();
    assert!(seek.contains(&format!(": {cells} / ")), "{seek}");
    assert!(text.contains("bench --resume DIR"), "{text}");
}

/// The records' identities in order: everything but the measured numbers.
fn identities(dir: &Path) -> Vec<String> {
    read_results(&dir.join("results.json"))
        .unwrap()
        .records
        .iter()
        .map(|r| {
            let (layout, scalar, threads, n) = (&r.layout, &r.scalar, &r.threads, r.n);
            format!(
                "{} {layout} {scalar} {threads} {n} {} {}",
                r.experiment, r.param, r.metric
            )
        })
        .collect()
}

/// The experiments the resume test runs: small, several cells each, a child process per cell.
const RESUMED: &str = "width,churn,filtered";

fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_interrupted_run_and_a_failed_cell_resume_to_the_uninterrupted_records() {
    use std::io::{BufRead, BufReader};

    let whole = temp_dir("resume-whole");
    let out = bench(&[
        "--quick",
        "--only",
        RESUMED,
        "--out",
        whole.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let expected = identities(&whole);
    let total = std::fs::read_to_string(whole.join("cells.jsonl"))
        .unwrap()
        .lines()
        .count();

    // Ctrl-C (SIGINT to the bench alone: it must end its worker itself) during the third cell.
    let stopped = temp_dir("resume-stopped");
    let mut child = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "--quick", "--only", RESUMED, "--out"])
        .arg(&stopped)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains(&format!("] cell 3/{total} ")) {
            let kill = Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(kill.success());
            break;
        }
    }
    for line in lines {
        said.push_str(&line.unwrap());
        said.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    let resume_hint = format!(
        "resume with: entity-layouts bench --resume {}",
        stopped.display()
    );
    assert!(
        said.contains("interrupted after 2 of") && said.contains(&resume_hint),
        "{said}"
    );
    assert!(
        !stopped.join("results.json").exists(),
        "an interrupted run wrote a report"
    );

    // One of the cells left is made to fail: the others are written, the exit code says so.
    let cells = experiments()
        .into_iter()
        .find(|e| e.name() == "churn")
        .unwrap()
        .cells(&entity_layouts::bench::BenchConfig::new(true), &[]);
    let failing = format!("churn {}", cells[cells.len() - 1]);
    let out = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "--resume"])
        .arg(&stopped)
        .env(entity_layouts::bench::FAIL_CELL_ENV, &failing)
        .output()
        .unwrap();
    let said = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("resuming: 2 finished cells kept"), "{said}");
    assert_eq!(said.matches("] cell ").count(), total - 2, "{said}");
    assert!(
        said.contains(&format!("1 cell(s) failed: {failing}")),
        "{said}"
    );
    let partial = read_results(&stopped.join("results.json")).unwrap();
    assert_eq!(partial.failed.len(), 1);
    assert!(identities(&stopped).len() < expected.len());
    let md = std::fs::read_to_string(stopped.join("results.md")).unwrap();
    assert!(
        md.contains("## Failed cells") && md.contains("made to fail"),
        "{md}"
    );

    // Resumed again, only the failed cell runs, and the records are the uninterrupted run's.
    let out = bench(&["--resume", stopped.to_str().unwrap()]);
    let said = stderr_of(&out);
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches("] cell ").count(), 1, "{said}");
    assert_eq!(identities(&stopped), expected);
    let md = std::fs::read_to_string(stopped.join("results.md")).unwrap();
    assert!(!md.contains("## Failed cells"));
    let whole_md = std::fs::read_to_string(whole.join("results.md")).unwrap();
    let headings = |md: &str| -> Vec<String> {
        md.lines()
            .filter(|l| l.starts_with('#'))
            .map(String::from)
            .collect()
    };
    assert_eq!(headings(&md), headings(&whole_md));

    // Each run folder has the run's progress lines; a resumed run appends its own to them.
    let log = |dir: &std::path::Path| std::fs::read_to_string(dir.join("progress.log")).unwrap();
    let whole_log = log(&whole);
    assert_eq!(whole_log.matches("] cell ").count(), total, "{whole_log}");
    assert!(whole_log.contains("filtered done in"), "{whole_log}");
    let stopped_log = log(&stopped);
    // Three cells started before Ctrl-C, all but the two finished ones on the first resume, and
    // the failed one on the second.
    assert_eq!(
        stopped_log.matches("] cell ").count(),
        total + 2,
        "{stopped_log}"
    );
    assert_eq!(
        stopped_log.matches("resuming: ").count(),
        2,
        "{stopped_log}"
    );

    // A folder that no run wrote is an error that says what --resume takes.
    let empty = temp_dir("resume-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bench(&["--resume", empty.to_str().unwrap()]);
    assert_usage_error(&out, &["run.json", "bench --out DIR"]);
    for dir in [whole, stopped, empty] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The newest full run's cells, by (experiment, cell), as its journal holds them.
fn journal_of(dir: &Path) -> Vec<CellEntry> {
    std::fs::read_to_string(dir.join("cells.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A run folder in `dir` holding `cells`, on a machine whose CPU is `cpu`: A's results.json
/// with that machine and those cells' records, and a journal of those cells.
fn small_run(dir: &Path, from: &Path, cpu: &str, cells: &[CellEntry]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(from.join("results.json")).unwrap()).unwrap();
    json["machine"]["cpu"] = cpu.into();
    let records: Vec<&Record> = cells.iter().flat_map(|c| &c.records).collect();
    json["records"] = serde_json::to_value(records).unwrap();
    std::fs::write(dir.join("results.json"), json.to_string()).unwrap();
    let lines: Vec<String> = cells
        .iter()
        .map(|c| serde_json::to_string(c).unwrap())
        .collect();
    std::fs::write(dir.join("cells.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn newest_full_run() -> std::path::PathBuf {
    entity_layouts::bench::docs::newest_full_run(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// `bench compare A B`: the newest full run beside a folder of three cells, one of them A's as
/// it is, one with every figure doubled and one A lacks. Both machine lines above the table, a
/// row per record both hold with B/A and whether the spreads overlap, and each run's cells the
/// other lacks listed under it.
#[test]
fn compare_puts_two_runs_side_by_side_cell_by_cell() {
    let a = newest_full_run();
    let journal = journal_of(&a);
    let cell = |text: &str| {
        journal
            .iter()
            .find(|c| c.experiment == "layouts" && c.cell == text)
            .unwrap()
            .clone()
    };
    let same = cell("n=1000");
    let mut doubled = cell("n=10000");
    for r in &mut doubled.records {
        (r.p10, r.p50, r.p90) = (2.0 * r.p10, 2.0 * r.p50, 2.0 * r.p90);
    }
    let mut own = cell("n=1000");
    own.cell = "n=1234".into();
    let b = temp_dir("compare-b");
    small_run(&b, &a, "Test CPU", &[same.clone(), doubled.clone(), own]);

    let out = bench(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let machine_a = read_results(&a.join("results.json"))
        .unwrap()
        .machine
        .unwrap()
        .line();
    assert!(
        text.contains(&format!("A: `{}`, {machine_a}\n", a.display()))
            && text.contains(&format!("B: `{}`, Test CPU | ", b.display())),
        "{text}"
    );
    let header = "| experiment | cell | record | metric | A | B | B/A | overlap |";
    let table_at = text.find(header).expect(header);
    assert!(
        text.find("B: `").unwrap() < table_at,
        "machines above the table"
    );
    let rows = |cell: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(&format!("| layouts | `{cell}` |")))
            .collect()
    };
    assert_eq!(rows("n=1000").len(), same.records.len());
    assert!(rows("n=1000").iter().all(|r| r.ends_with("| 1.00 | yes |")));
    assert_eq!(rows("n=10000").len(), doubled.records.len());
    // soa's f32 frame: twice A's, its spreads apart where A's p90 is below twice its p10.
    let soa = &cell("n=10000").records;
    let soa = soa
        .iter()
        .find(|r| r.layout == "soa" && r.scalar == "f32" && r.metric == Metric::FrameMs)
        .unwrap();
    let overlap = if 2.0 * soa.p10 <= soa.p90 {
        "yes"
    } else {
        "no"
    };
    let row = rows("n=10000")
        .into_iter()
        .find(|r| r.contains("| soa, f32, 1 thread, 10,000 | frame_ms |"))
        .unwrap();
    assert!(row.ends_with(&format!("| 2.00 | {overlap} |")), "{row}");
    assert!(rows("n=1234").is_empty());
    assert!(
        text.contains(&format!(
            "Only in A (`{}`), {} cell(s):",
            a.display(),
            journal.len() - 2
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Only in B (`{}`), 1 cell(s):\n\n- layouts: `n=1234`\n",
            b.display()
        )),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&b);
}

/// A folder that is not a run, a results.json of another format or without records, a run
/// without its journal, and two runs without a cell in common: each exits 2 naming the file
/// and the problem.
#[test]
fn compare_refuses_what_is_not_two_comparable_runs() {
    let a = newest_full_run();
    let a_arg = a.to_str().unwrap();
    let journal = journal_of(&a);
    let empty = temp_dir("compare-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let empty_arg = empty.to_str().unwrap();
    assert_usage_error(
        &bench(&["compare", a_arg, empty_arg]),
        &[empty_arg, "not a run folder", "results.json"],
    );
    assert_usage_error(
        &bench(&["compare", empty_arg, a_arg]),
        &[empty_arg, "results.json"],
    );

    let run = |name: &str, json: serde_json::Value| {
        let dir = temp_dir(name);
        small_run(&dir, &a, "Test CPU", &journal[..1]);
        let mut full: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
        for (key, value) in json.as_object().unwrap() {
            full[key] = value.clone();
        }
        std::fs::write(dir.join("results.json"), full.to_string()).unwrap();
        dir
    };
    let newer = run("compare-format", serde_json::json!({ "format": 2 }));
    let results = newer.join("results.json");
    assert_usage_error(
        &bench(&["compare", a_arg, newer.to_str().unwrap()]),
        &[results.to_str().unwrap(), "format 2", "reads format 1"],
    );
    let garbled = run(
        "compare-records",
        serde_json::json!({ "records": [{"n": "many"}] }),
    );
    let results = garbled.join("results.json");
    assert_usage_error(
        &bench(&["compare", garbled.to_str().unwrap(), a_arg]),
        &[results.to_str().unwrap(), "records do not read"],
    );
    let unjournalled = run("compare-journal", serde_json::json!({}));
    std::fs::remove_file(unjournalled.join("cells.jsonl")).unwrap();
    assert_usage_error(
        &bench(&["compare", a_arg, unjournalled.to_str().unwrap()]),
        &["cells.jsonl", "journal"],
    );
    let mut stranger = journal[0].clone();
    stranger.cell = "n=1234".into();
    let apart = temp_dir("compare-apart");
    small_run(&apart, &a, "Test CPU", &[stranger]);
    let apart_arg = apart.to_str().unwrap();
    assert_usage_error(
        &bench(&["compare", a_arg, apart_arg]),
        &[a_arg, apart_arg, "no cell in common"],
    );
    for dir in [empty, newer, garbled, unjournalled, apart] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `bench --out DIR --compare RUN`: the same comparison on DIR's page, here from a run of cells
/// the newest full run holds (memory at its count); RUN is checked before the first cell.
#[test]
fn a_run_beside_the_committed_one_lands_on_its_report_page() {
    let a = newest_full_run();
    let a_arg = a.to_str().unwrap();
    let dir = temp_dir("compare-out");
    let out = bench(&[
        "--quick",
        "--in-process",
        "--only",
        "memory",
        "--counts",
        "1000000",
        "--layouts",
        "soa",
        "--out",
        dir.to_str().unwrap(),
        "--compare",
        a_arg,
    ]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let heading = format!("## Beside {}", a.display());
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(md.contains(&heading), "{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| memory | `soa:1000000` | soa, f32, 1 thread, 1,000,000 |"))
        .collect();
    assert!(
        rows.iter()
            .any(|r| r.contains("| payload_bytes_per_entity |")),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(
        html.contains(&format!("Beside {}", a.display())) && html.contains("soa:1000000"),
        "the page lacks the comparison"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // A RUN that is not a run, or that holds none of the planned cells, is refused before
    // anything runs.
    let empty = temp_dir("compare-out-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let refused = temp_dir("compare-out-refused");
    let refused_arg = refused.to_str().unwrap();
    for (run, needles) in [
        (empty.to_str().unwrap(), &["results.json"][..]),
        (a_arg, &["no cell in common"][..]),
    ] {
        let out = bench(&[
            "--quick",
            "--only",
            "layouts",
            "--counts",
            "3000",
            "--out",
            refused_arg,
            "--compare",
            run,
        ]);
        assert_usage_error(&out, needles);
        assert!(!refused.exists(), "a refused run wrote {refused_arg}");
    }
    assert_usage_error(&bench(&["--compare", a_arg]), &["--out"]);
    let _ = std::fs::remove_dir_all(&empty);
}

//! The C++ article on this CPU. Its two programs (objects on the heap behind a virtual `update`,
//! and its `ECSWorld` of component vectors, masks and active flags), written by this project from
//! the article's text, and our own `move` and `regen` in C++ over SoA and AoS
//! (`benches/cpp/layouts.cpp`, carried inside this binary). They are compiled at run time with
//! the machine's C++ compiler (`CXX`, else `c++`, `g++` or `clang++`), at the article's flags
//! (`-O2 -march=native`) and at a portable baseline (`-O2`), and every count runs in a process
//! of its own, several times: the median of the processes is the figure, min..max its spread.
//!
//! Beside them: the article's figures (a Ryzen 7 5800X), our Rust on the same CPU and the same
//! systems (`soa` and `aos` on the SIMD tier that matches the flags: the baseline against `-O2`,
//! the best against `-march=native`; `dyn-1` / `soa` beside OOP / ECS), and cachegrind's
//! instructions per entity per frame of every program, C++ and Rust alike. Without a compiler
//! the experiment says why and skips, as `js` does without Node.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::bench::kit::frames::frame_stats_on;
use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::child::{instructions_record, this_binary};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_num, table};
use crate::bench::report::harness::Stats;
use crate::bench::report::metric::Metric;
use crate::bench::report::output::write_atomically;
use crate::bench::report::record::Record;
use crate::bench::report::spread::{median, range, short};
use crate::bench::studies::figures as studies;
use crate::layout::LayoutKind;
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::tools::counters::FrameSpec;
use crate::tools::counters::cachegrind::{self, PINNED};

pub struct Cpp;

pub const NAME: &str = "cpp";
/// The C++ programs, carried inside the binary so `bench` builds them from any directory.
const SOURCE: &str = include_str!("../../../benches/cpp/layouts.cpp");
/// The article's programs, then ours.
const PROGRAMS: [&str; 4] = ["oop", "ecs", "soa", "aos"];
/// Our Rust on the same work.
const RUST_LAYOUTS: [LayoutKind; 3] = [LayoutKind::Soa, LayoutKind::Aos, LayoutKind::Dyn(1)];
/// Fresh processes per figure.
const REPS: usize = 3;
/// The count the instructions are counted at: in cache, so the count is the work alone.
const COUNTED_N: usize = 10_000;
/// The cell recorded when there is no compiler.
const NO_COMPILER: &str = "no-compiler";
const COMPILERS: [&str; 3] = ["c++", "g++", "clang++"];

/// The two sets of flags the programs are built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Flags {
    /// The article's: `-O2 -march=native`.
    Native,
    /// What a shipped binary may assume: `-O2`.
    Baseline,
}

impl Flags {
    const BOTH: [Flags; 2] = [Flags::Native, Flags::Baseline];

    fn name(self) -> &'static str {
        match self {
            Flags::Native => "native",
            Flags::Baseline => "baseline",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Flags::Native => &["-O2", "-march=native"],
            Flags::Baseline => &["-O2"],
        }
    }

    fn label(self) -> String {
        self.args().join(" ")
    }

    /// Our SIMD tier on the same footing: the widest this CPU has against `-march=native`, the
    /// build's baseline against `-O2`.
    fn rust_tier(self) -> SimdTier {
        match self {
            Flags::Native => SimdTier::best(),
            Flags::Baseline => SimdTier::Baseline,
        }
    }

    fn parse(text: &str) -> Option<Self> {
        Flags::BOTH.into_iter().find(|f| f.name() == text)
    }
}

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![10_000, 1_000_000, 10_000_000], vec![10_000]))
}

/// A cell: one program or layout timed at a count in fresh process `rep`, one counted under
/// cachegrind, or the one cell of a machine without a compiler. `program` is one of
/// [`PROGRAMS`], `layout` one of [`RUST_LAYOUTS`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Work {
    /// No C++ compiler: the cell records why (`no-compiler`).
    NoCompiler,
    /// `cpp:<flags>:<program>:<n>:<rep>`.
    Cpp {
        flags: Flags,
        program: String,
        n: usize,
        rep: usize,
    },
    /// `rust:<flags>:<layout>:<n>:<rep>`.
    Rust {
        flags: Flags,
        #[serde(with = "by_name")]
        layout: LayoutKind,
        n: usize,
        rep: usize,
    },
    /// `count:<flags>:<program>`.
    CountCpp { flags: Flags, program: String },
    /// `count:<flags>:rust`: every Rust layout.
    CountRust { flags: Flags },
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Work::NoCompiler => f.write_str(NO_COMPILER),
            Work::Cpp {
                flags,
                program,
                n,
                rep,
            } => write!(f, "cpp:{}:{program}:{n}:{rep}", flags.name()),
            Work::Rust {
                flags,
                layout,
                n,
                rep,
            } => write!(f, "rust:{}:{layout}:{n}:{rep}", flags.name()),
            Work::CountCpp { flags, program } => write!(f, "count:{}:{program}", flags.name()),
            Work::CountRust { flags } => write!(f, "count:{}:rust", flags.name()),
        }
    }
}

impl FromStr for Work {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        let expected = "no-compiler, cpp:<native|baseline>:<program>:<n>:<rep>, rust:<flags>:<layout>:<n>:<rep> or count:<flags>:<program|rust>";
        read_cell(text, expected, |text| {
            if text == NO_COMPILER {
                return Some(Work::NoCompiler);
            }
            let program = |name: &str| PROGRAMS.contains(&name).then(|| name.to_string());
            if let Some([flags, name, n, rep]) = holes(text, "cpp:{}:{}:{}:{}") {
                return Some(Work::Cpp {
                    flags: Flags::parse(flags)?,
                    program: program(name)?,
                    n: n.parse().ok()?,
                    rep: rep.parse().ok()?,
                });
            }
            if let Some([flags, layout, n, rep]) = holes(text, "rust:{}:{}:{}:{}") {
                return Some(Work::Rust {
                    flags: Flags::parse(flags)?,
                    layout: layout.parse().ok().filter(|k| RUST_LAYOUTS.contains(k))?,
                    n: n.parse().ok()?,
                    rep: rep.parse().ok()?,
                });
            }
            let [flags, what] = holes(text, "count:{}:{}")?;
            let flags = Flags::parse(flags)?;
            match what {
                "rust" => Some(Work::CountRust { flags }),
                name => Some(Work::CountCpp {
                    flags,
                    program: program(name)?,
                }),
            }
        })
    }
}

fn reps(cfg: &BenchConfig) -> usize {
    cfg.pick(REPS, 1)
}

/// The C++ compiler and its version line, or why there is none: `CXX` where it is set (the
/// usual way to pick one), else the first of `c++`, `g++`, `clang++` on PATH.
pub fn compiler() -> Result<(String, String), String> {
    let version = |command: &str| -> Option<String> {
        let out = Command::new(command).arg("--version").output().ok()?;
        out.status.success().then(|| {
            let text = String::from_utf8_lossy(&out.stdout);
            text.lines().next().unwrap_or(command).trim().to_string()
        })
    };
    if let Some(cxx) = std::env::var("CXX").ok().filter(|c| !c.trim().is_empty()) {
        return version(&cxx)
            .map(|v| (cxx.clone(), v))
            .ok_or(format!("CXX={cxx} does not run (`{cxx} --version` failed)"));
    }
    COMPILERS
        .iter()
        .find_map(|c| version(c).map(|v| (c.to_string(), v)))
        .ok_or(format!(
            "no C++ compiler on PATH ({}); Debian/Ubuntu: apt-get install g++",
            COMPILERS.join(", ")
        ))
}

/// The programs built with `flags`: compiled once per source, compiler and flags into the
/// temporary folder, and reused by every cell of the run (and by later runs).
fn binary(flags: Flags) -> Result<PathBuf, String> {
    let (command, version) = compiler()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (SOURCE, &version, flags.label()).hash(&mut hasher);
    let key = hasher.finish();
    let dir = std::env::temp_dir().join("entity-layouts-cpp");
    let exe = dir.join(format!("layouts-{}-{key:016x}", flags.name()));
    if exe.exists() {
        return Ok(exe);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let source = dir.join(format!("layouts-{key:016x}.cpp"));
    write_atomically(&source, SOURCE.as_bytes()).map_err(|e| e.to_string())?;
    // Built under a name of its own, then renamed: a cell in another process never runs a
    // half-written binary.
    let partial = dir.join(format!("{}.partial-{}", exe.display(), std::process::id()));
    let out = Command::new(&command)
        .arg("-std=c++17")
        .args(flags.args())
        .arg("-o")
        .arg(&partial)
        .arg(&source)
        .output()
        .map_err(|e| format!("cannot start {command}: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().take(6).collect();
        return Err(format!(
            "{command} {} failed ({}): {}",
            flags.label(),
            out.status,
            tail.join(" / ")
        ));
    }
    std::fs::rename(&partial, &exe)
        .map_err(|e| format!("cannot move the build into place: {e}"))?;
    Ok(exe)
}

/// What one run of a C++ program prints.
#[derive(Deserialize)]
struct Timed {
    p10: f64,
    p50: f64,
    p90: f64,
    samples: usize,
}

fn cpp_cell(
    cell: &str,
    flags: Flags,
    program: &str,
    n: usize,
    rep: usize,
) -> Result<Vec<Record>, BenchError> {
    let fail = |reason: String| BenchError::Worker {
        experiment: NAME.into(),
        cell: cell.into(),
        reason,
    };
    let exe = binary(flags).map_err(fail)?;
    let out = Command::new(&exe)
        .args([program, &n.to_string()])
        .output()
        .map_err(|e| fail(format!("cannot start {}: {e}", exe.display())))?;
    if !out.status.success() {
        return Err(fail(format!(
            "{program} exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let timed: Timed = serde_json::from_slice(&out.stdout)
        .map_err(|e| fail(format!("unreadable output of {program}: {e}")))?;
    let (_, version) = compiler().map_err(fail)?;
    let stats = Stats {
        p10: timed.p10,
        p50: timed.p50,
        p90: timed.p90,
        samples: timed.samples,
    };
    Ok(vec![Record {
        runtime: version,
        ..Record::new(NAME, format!("cpp-{program}"), "f32", n)
            .param(format!("flags={};rep={rep}", flags.name()))
            .with(Metric::FrameMs, "ms", stats)
    }])
}

fn rust_cell(
    cfg: &BenchConfig,
    flags: Flags,
    kind: LayoutKind,
    n: usize,
    rep: usize,
) -> Result<Vec<Record>, BenchError> {
    let tier = flags.rust_tier();
    let stats = frame_stats_on::<f32>(kind, n, Threads::One, tier, &cfg.method)?;
    Ok(vec![
        Record::new(NAME, kind.name(), "f32", n)
            .param(format!(
                "flags={};rep={rep};tier={}",
                flags.name(),
                tier.name()
            ))
            .with(Metric::FrameMs, "ms", stats),
    ])
}

/// Cachegrind's instructions per entity per frame of a C++ program at [`COUNTED_N`].
fn count_cell(flags: Flags, program: &str) -> Vec<Record> {
    let rec = Record::new(NAME, format!("cpp-{program}"), "f32", COUNTED_N);
    let param = format!("flags={}", flags.name());
    let (warmup, frames) = (2, 8);
    let counted = binary(flags).and_then(|exe| {
        cachegrind::count_program(
            &exe,
            |k| {
                vec![
                    program.into(),
                    COUNTED_N.to_string(),
                    "--frames".into(),
                    k.to_string(),
                ]
            },
            (warmup + frames, warmup + 2 * frames),
            (COUNTED_N * frames) as f64,
            &PINNED,
            &format!("the C++ {program} at {COUNTED_N} entities"),
        )
    });
    vec![match counted {
        Ok(sim) => rec.param(param).value(
            Metric::Instructions,
            "per entity",
            sim.per_entity.instructions,
        ),
        Err(why) => rec
            .param(format!("{param}: {why}"))
            .value(Metric::Unavailable, "cells", 1.0),
    }]
}

/// Our layouts' instructions per entity on each flag set's tier (where cachegrind runs it).
fn rust_count_cell(flags: Flags) -> Result<Vec<Record>, BenchError> {
    let exe = this_binary(NAME, "count")?;
    let tier = flags.rust_tier();
    Ok(RUST_LAYOUTS
        .into_iter()
        .filter(|k| k.has_simd_kernels() || flags == Flags::Baseline)
        .map(|kind| {
            let mut spec = FrameSpec::for_count(kind, COUNTED_N);
            spec.simd = tier;
            let rec = Record::new(NAME, kind.name(), "f32", COUNTED_N);
            instructions_record(&exe, &spec, rec, &format!("flags={}", flags.name()))
        })
        .collect())
}

/// The per-process values of `metric` for `layout` at `n` under `flags`, in rep order.
fn per_process(mine: &[Record], layout: &str, n: u64, flags: Flags) -> Vec<f64> {
    let prefix = format!("flags={};", flags.name());
    let mut found: Vec<(usize, f64)> = mine
        .iter()
        .filter(|r| r.metric == Metric::FrameMs && r.layout == layout && r.n == n)
        .filter(|r| r.param.starts_with(&prefix))
        .filter_map(|r| {
            let rep = r.param.split(';').find_map(|p| p.strip_prefix("rep="))?;
            Some((rep.parse().ok()?, r.p50))
        })
        .collect();
    found.sort_by_key(|(rep, _)| *rep);
    found.into_iter().map(|(_, v)| v).collect()
}

/// The SIMD tier our side ran on against `flags`, as the run's records say: the machine that
/// renders the page may have other tiers than the one that measured it.
fn tier_measured(mine: &[Record], flags: Flags) -> String {
    let prefix = format!("flags={};", flags.name());
    mine.iter()
        .filter(|r| r.param.starts_with(&prefix))
        .find_map(|r| r.param.split(';').find_map(|p| p.strip_prefix("tier=")))
        .unwrap_or("-")
        .to_string()
}

/// `a / b` process by process (the same rep of both), as `median [min..max]`.
fn ratio(a: &[f64], b: &[f64]) -> String {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    if ratios.is_empty() {
        return "-".into();
    }
    format!("x{}", range(&ratios))
}

fn ms(values: &[f64]) -> String {
    median(values).map_or("-".into(), |m| {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        format!("{} [{}..{}]", fmt_num(m), fmt_num(lo), fmt_num(hi))
    })
}

fn article_oop_over_ecs(n: u64) -> String {
    match n {
        10_000 => format!("x{}", studies::CPP_SPEEDUP_10K),
        1_000_000 => format!(
            "{} / {} ms, x{:.2}",
            studies::CPP_OOP_MS,
            studies::CPP_ECS_MS,
            studies::CPP_OOP_MS / studies::CPP_ECS_MS
        ),
        10_000_000 => format!("x{}", studies::CPP_SPEEDUP_10M),
        _ => "-".into(),
    }
}

fn instructions(mine: &[Record], layout: &str, flags: Flags) -> String {
    let prefix = format!("flags={}", flags.name());
    match mine.iter().find(|r| {
        r.layout == layout
            && r.n == COUNTED_N as u64
            && r.param.starts_with(&prefix)
            && (r.metric == Metric::Instructions || r.metric == Metric::Unavailable)
    }) {
        Some(r) if r.metric == Metric::Instructions => fmt_num(r.p50),
        Some(r) => format!("not counted: {}", short_reason(&r.param)),
        None => "-".into(),
    }
}

/// Why cachegrind could not count a program, in a table cell's words.
fn short_reason(param: &str) -> String {
    let why = param.split_once(": ").map_or("", |(_, why)| why);
    if why.contains("SIGILL") {
        "valgrind cannot execute its instructions (SIGILL: AVX-512 on this CPU)".into()
    } else if why.contains("exit status: 2") {
        "this tier does not run under valgrind (the CPU valgrind presents has no AVX-512)".into()
    } else {
        why.split(" / ").next().unwrap_or(why).to_string()
    }
}

impl Experiment for Cpp {
    type Cell = Work;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "C++ article: its OOP and ECS programs on this CPU"
    }

    fn title(&self) -> &'static str {
        "The C++ article on this CPU: its programs, and our systems in C++ beside Rust (past the studies)"
    }

    fn narrows(&self) -> Narrows {
        Narrows::COUNTS
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Work> {
        if let Err(why) = compiler() {
            eprintln!("cpp: skipped: {why}");
            return vec![Work::NoCompiler];
        }
        let mut cells = Vec::new();
        for flags in Flags::BOTH {
            for n in counts(cfg) {
                for rep in 0..reps(cfg) {
                    for program in PROGRAMS {
                        let program = program.to_string();
                        cells.push(Work::Cpp {
                            flags,
                            program,
                            n,
                            rep,
                        });
                    }
                    for layout in RUST_LAYOUTS {
                        // dyn-1 has no SIMD kernels: it runs once, with the baseline.
                        if layout.has_simd_kernels() || flags == Flags::Baseline {
                            cells.push(Work::Rust {
                                flags,
                                layout,
                                n,
                                rep,
                            });
                        }
                    }
                }
            }
            for program in PROGRAMS {
                let program = program.to_string();
                cells.push(Work::CountCpp { flags, program });
            }
            cells.push(Work::CountRust { flags });
        }
        cells
    }

    fn run_cell(&self, cfg: &BenchConfig, cell: &Work) -> Result<Vec<Record>, BenchError> {
        match cell {
            Work::NoCompiler => {
                let why = compiler()
                    .err()
                    .unwrap_or_else(|| "a compiler was found".into());
                Ok(vec![Record::new(NAME, "c++", "f32", 0).param(why).value(
                    Metric::Unavailable,
                    "cells",
                    1.0,
                )])
            }
            Work::Cpp {
                flags,
                program,
                n,
                rep,
            } => cpp_cell(&cell.to_string(), *flags, program, *n, *rep),
            Work::Rust {
                flags,
                layout,
                n,
                rep,
            } => rust_cell(cfg, *flags, *layout, *n, *rep),
            Work::CountRust { flags } => rust_count_cell(*flags),
            Work::CountCpp { flags, program } => Ok(count_cell(*flags, program)),
        }
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        if let Some(skipped) = mine.iter().find(|r| r.layout == "c++") {
            return format!("Skipped: {}.\n", skipped.param);
        }
        let compiler = mine
            .iter()
            .find(|r| r.layout.name().starts_with("cpp-") && r.metric == Metric::FrameMs)
            .map_or("the C++ compiler".to_string(), |r| r.runtime.clone());
        let mut md = format!(
            "`benches/cpp/layouts.cpp` built by {compiler} at `-O2 -march=native` (the article's flags) and `-O2`; f32, one thread, p50 ms per frame of each process (warm-up, then samples of at least 1 ms for about a second), the median of {} processes per figure [min..max]. Ratios pair the same process number of both sides. The article: Ryzen 7 5800X, GCC 13.2, `-O2 -march=native`, 100 frames.\n\n",
            reps(cfg)
        );
        md.push_str("**The article's programs** (3D `pos += vel * dt`; OOP: `std::vector<std::unique_ptr<Entity>>`, a virtual `update`, objects in allocation order; ECS: its `ECSWorld`, masks and active flags checked per entity, `__restrict`):\n\n");
        let mut rows = Vec::new();
        for n in counts(cfg) {
            let n = n as u64;
            for flags in Flags::BOTH {
                let oop = per_process(mine, "cpp-oop", n, flags);
                let ecs = per_process(mine, "cpp-ecs", n, flags);
                rows.push(vec![
                    short(n as usize),
                    format!("`{}`", flags.label()),
                    ms(&oop),
                    ms(&ecs),
                    ratio(&oop, &ecs),
                    article_oop_over_ecs(n),
                ]);
            }
        }
        md.push_str(&table(
            &[
                "entities",
                "flags",
                "OOP, ms",
                "ECS, ms",
                "OOP / ECS here",
                "the article",
            ],
            &rows,
        ));
        md.push_str("\n**The same systems in both languages** (our `move` + `regen` over the JS study's eight f32 fields, `src/workload.rs`'s formulas; C++ on the flags, Rust on the matching SIMD tier; a ratio over 1 means Rust is faster). Last column: the OOP question in Rust, `dyn-1` / `soa` (baseline tier), beside the C++ OOP / ECS above; at 1M the headline table answers it, over five processes in interleaved rounds:\n\n");
        let mut rows = Vec::new();
        for n in counts(cfg) {
            let n = n as u64;
            for flags in Flags::BOTH {
                let c_soa = per_process(mine, "cpp-soa", n, flags);
                let r_soa = per_process(mine, "soa", n, flags);
                let c_aos = per_process(mine, "cpp-aos", n, flags);
                let r_aos = per_process(mine, "aos", n, flags);
                // Virtual calls have no SIMD tier: the OOP question on the baseline row only, and
                // at 1M the headline's, so that the docs give that ratio once.
                let dyn1 = per_process(mine, "dyn-1", n, flags);
                let oop = match flags {
                    Flags::Baseline if n == crate::bench::kit::HEADLINE_RATIO_N as u64 => {
                        "the headline's".into()
                    }
                    Flags::Baseline => ratio(&dyn1, &r_soa),
                    _ => "-".into(),
                };
                rows.push(vec![
                    short(n as usize),
                    format!("`{}` / {}", flags.label(), tier_measured(mine, flags)),
                    ms(&c_soa),
                    ms(&r_soa),
                    ratio(&c_soa, &r_soa),
                    ms(&c_aos),
                    ms(&r_aos),
                    ratio(&c_aos, &r_aos),
                    oop,
                ]);
            }
        }
        md.push_str(&table(
            &[
                "entities",
                "flags / Rust tier",
                "C++ soa, ms",
                "Rust soa, ms",
                "C++ / Rust",
                "C++ aos, ms",
                "Rust aos, ms",
                "C++ / Rust",
                "Rust dyn-1 / soa",
            ],
            &rows,
        ));
        md.push_str(&format!(
            "\n**Instructions per entity per frame**, simulated by cachegrind at {} entities (the article's programs do 3D move only, ours move + regen over 8 fields):\n\n",
            short(COUNTED_N)
        ));
        let mut rows = Vec::new();
        for (program, rust) in [
            ("oop", "dyn-1"),
            ("ecs", ""),
            ("soa", "soa"),
            ("aos", "aos"),
        ] {
            let mut row = vec![program.to_string()];
            for flags in Flags::BOTH {
                row.push(instructions(mine, &format!("cpp-{program}"), flags));
                row.push(
                    if rust.is_empty() || (rust == "dyn-1" && flags == Flags::Native) {
                        "-".into()
                    } else {
                        format!("{rust}: {}", instructions(mine, rust, flags))
                    },
                );
            }
            rows.push(row);
        }
        md.push_str(&table(
            &[
                "program",
                "C++ `-O2 -march=native`",
                "Rust, best tier",
                "C++ `-O2`",
                "Rust, baseline",
            ],
            &rows,
        ));
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cover_both_flags_every_program_and_count() {
        let cfg = BenchConfig::new(true);
        let cells: Vec<String> = Cpp.cells(&cfg, &[]).iter().map(Work::to_string).collect();
        if cells == [NO_COMPILER] {
            return;
        }
        for flags in Flags::BOTH {
            for program in PROGRAMS {
                assert!(cells.contains(&format!("cpp:{}:{program}:10000:0", flags.name())));
                assert!(cells.contains(&format!("count:{}:{program}", flags.name())));
            }
            assert!(cells.contains(&format!("rust:{}:soa:10000:0", flags.name())));
        }
    }

    #[test]
    fn bad_cells_name_what_is_accepted() {
        for cell in [
            "cpp:fast:soa:10:0",
            "cpp:native:linked-list:10:0",
            "rust:native:boxed:10:0",
            "count:native:rust:1",
            "x",
        ] {
            let err = cell.parse::<Work>().unwrap_err().to_string();
            assert!(err.contains("cpp:<native|baseline>"), "{cell}: {err}");
        }
    }

    #[test]
    fn ratios_pair_processes() {
        assert_eq!(
            ratio(&[2.0, 4.0, 6.0], &[1.0, 1.0, 2.0]),
            "x3.00 [2.00..4.00]"
        );
        assert_eq!(ratio(&[], &[]), "-");
    }
}

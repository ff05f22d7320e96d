//! Simulated counters: valgrind's cachegrind runs this same binary's `count-frames` subcommand on
//! a simulated cache and counts every instruction, data access, miss and branch.
//!
//! The cache geometry is pinned ([`PINNED`], the C++ article's Ryzen 7 5800X: 32 KiB 8-way L1s,
//! a 32 MiB 16-way L3 as the last level), never taken from the host, so that the counts are the
//! same on an AMD VM one day and an Intel one the next.
//!
//! Only the frames are counted. Valgrind 3.19 (Debian 12) has no client requests to start and
//! stop cachegrind (they came in 3.22), so each figure comes from two runs of the same
//! population: one of `W + K` frames and one of `W + 2K`. Spawning, warm-up, start-up and exit
//! are identical in both and cancel; the difference is `K` warm frames.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{FrameSpec, PerEntity};

/// One cache level as cachegrind takes it on its command line (`--D1=size,assoc,line`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheLevel {
    pub bytes: u64,
    pub ways: u32,
    pub line: u32,
}

impl CacheLevel {
    fn arg(&self) -> String {
        format!("{},{},{}", self.bytes, self.ways, self.line)
    }
}

/// The simulated caches: instruction L1, data L1, last level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub i1: CacheLevel,
    pub d1: CacheLevel,
    pub ll: CacheLevel,
}

/// The C++ article's machine (Ryzen 7 5800X): 32 KiB 8-way L1 instruction and data caches,
/// 32 MiB 16-way L3; 64-byte lines. Cachegrind simulates no L2.
pub const PINNED: Geometry = Geometry {
    i1: CacheLevel {
        bytes: 32 << 10,
        ways: 8,
        line: 64,
    },
    d1: CacheLevel {
        bytes: 32 << 10,
        ways: 8,
        line: 64,
    },
    ll: CacheLevel {
        bytes: 32 << 20,
        ways: 16,
        line: 64,
    },
};

/// What one counted spec gave: the per-entity counts, the geometry as cachegrind reported it
/// (its `desc:` lines, so the table says what was really simulated), and the population's
/// checksum after the longer run.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulated {
    pub per_entity: PerEntity,
    pub geometry: String,
    pub valgrind: String,
}

/// Valgrind's version line, or why cachegrind cannot run here.
pub fn valgrind_version() -> Result<String, String> {
    let out = Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|e| {
            format!("valgrind is not installed ({e}); Debian/Ubuntu: apt-get install valgrind")
        })?;
    if !out.status.success() {
        return Err(format!("`valgrind --version` failed: {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Counts `spec.frames` warm frames of `spec.layout` under cachegrind, running `exe` (this
/// program's binary, which has the hidden `count-frames` subcommand) twice.
pub fn count(exe: &Path, spec: &FrameSpec, geometry: &Geometry) -> Result<Simulated, String> {
    let args = |frames: usize| -> Vec<String> {
        let mut args: Vec<String> = vec![
            "count-frames".into(),
            "--layout".into(),
            spec.layout.name().into(),
            "--count".into(),
            spec.n.to_string(),
            "--frames".into(),
            frames.to_string(),
            "--simd".into(),
            spec.simd.name().into(),
        ];
        args.extend([
            "--system".into(),
            spec.system.name().into(),
            "--order".into(),
            spec.order.name().into(),
            "--seek-kernel".into(),
            spec.seek_kernel.name().into(),
        ]);
        args
    };
    let what = format!("{} at {} entities", spec.row(), spec.n);
    count_program(
        exe,
        args,
        (spec.warmup + spec.frames, spec.warmup + 2 * spec.frames),
        spec.entity_frames(),
        geometry,
        &what,
    )
}

/// Counts any program that runs a given number of frames (`args(frames)` its arguments) under
/// cachegrind: two runs of `frames.0` and `frames.1` frames, their difference over
/// `entity_frames` (entities times the frames the longer run adds). The C++ programs of the
/// `cpp` experiment are counted this way, beside our own.
pub fn count_program(
    program: &Path,
    args: impl Fn(usize) -> Vec<String>,
    frames: (usize, usize),
    entity_frames: f64,
    geometry: &Geometry,
    what: &str,
) -> Result<Simulated, String> {
    let valgrind = valgrind_version()?;
    // The two runs side by side: valgrind runs a program on one core, and what it counts does
    // not depend on what else the machine runs, so on two cores a figure takes the time of its
    // longer run instead of both. The counts bench's baseline (`cargo bench --bench counts`)
    // holds them to the counts taken one after the other.
    let (short_args, long_args) = (args(frames.0), args(frames.1));
    let (short, long) = std::thread::scope(|scope| {
        let short = scope.spawn(|| run_once(program, &short_args, geometry, what));
        let long = run_once(program, &long_args, geometry, what);
        (short.join(), long)
    });
    let short = short.map_err(|_| format!("the shorter cachegrind run of {what} panicked"))??;
    let long = long?;
    // The two runs agree on everything but a few dozen instructions and misses of the pool
    // threads' start-up, whose interleaving valgrind's scheduler does not fix; against 10^6 and
    // more events per counted frame that is noise, and a difference below zero is taken as none.
    let diff = |event: &str| -> Result<f64, String> {
        let (a, b) = (short.event(event)?, long.event(event)?);
        Ok(b.saturating_sub(a) as f64 / entity_frames)
    };
    if long.event("Ir")? <= short.event("Ir")? {
        return Err(format!(
            "the longer run executed no more instructions than the shorter ({} <= {}): the frames did not run",
            long.event("Ir")?,
            short.event("Ir")?
        ));
    }
    let per_entity = PerEntity {
        instructions: diff("Ir")?,
        l1d_accesses: diff("Dr")? + diff("Dw")?,
        l1d_misses: diff("D1mr")? + diff("D1mw")?,
        // Everything that missed an L1, instruction fetches included, asks the last level.
        ll_accesses: diff("D1mr")? + diff("D1mw")? + diff("I1mr")?,
        ll_misses: diff("DLmr")? + diff("DLmw")? + diff("ILmr")?,
        branches: diff("Bc")? + diff("Bi")?,
        branch_misses: diff("Bcm")? + diff("Bim")?,
        cycles: None,
    };
    Ok(Simulated {
        per_entity,
        geometry: long.geometry(),
        valgrind,
    })
}

/// The totals of one cachegrind run, by event name, and its `desc:` lines.
#[derive(Debug, Default)]
pub struct Summary {
    pub events: HashMap<String, u64>,
    pub desc: Vec<String>,
}

impl Summary {
    /// Reads a cachegrind output file's `desc:`, `events:` and `summary:` lines.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut names: Vec<&str> = Vec::new();
        let mut totals: Vec<u64> = Vec::new();
        let mut desc = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("desc:") {
                desc.push(rest.split_whitespace().collect::<Vec<_>>().join(" "));
            } else if let Some(rest) = line.strip_prefix("events:") {
                names = rest.split_whitespace().collect();
            } else if let Some(rest) = line.strip_prefix("summary:") {
                totals = rest
                    .split_whitespace()
                    .map(|v| {
                        v.parse::<u64>()
                            .map_err(|e| format!("summary value '{v}': {e}"))
                    })
                    .collect::<Result<_, _>>()?;
            }
        }
        if names.is_empty() || names.len() != totals.len() {
            return Err(format!(
                "not a cachegrind output: {} event names, {} summary values",
                names.len(),
                totals.len()
            ));
        }
        Ok(Self {
            events: names.iter().map(|n| n.to_string()).zip(totals).collect(),
            desc,
        })
    }

    pub fn event(&self, name: &str) -> Result<u64, String> {
        self.events.get(name).copied().ok_or_else(|| {
            format!("cachegrind did not count {name} (was --cache-sim or --branch-sim off?)")
        })
    }

    /// `I1 cache: 32768 B, 64 B, 8-way associative; D1 cache: ...`: the geometry simulated.
    pub fn geometry(&self) -> String {
        self.desc
            .iter()
            .filter(|d| d.contains("cache:"))
            .cloned()
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// One run of `program args` under cachegrind.
fn run_once(
    program: &Path,
    args: &[String],
    geometry: &Geometry,
    what: &str,
) -> Result<Summary, String> {
    let out_file = scratch_file();
    let output = Command::new("valgrind")
        .arg("--tool=cachegrind")
        .arg("--cache-sim=yes")
        .arg("--branch-sim=yes")
        .arg(format!("--I1={}", geometry.i1.arg()))
        .arg(format!("--D1={}", geometry.d1.arg()))
        .arg(format!("--LL={}", geometry.ll.arg()))
        .arg(format!("--cachegrind-out-file={}", out_file.display()))
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot start valgrind: {e}"))?;
    let text = std::fs::read_to_string(&out_file);
    let _ = std::fs::remove_file(&out_file);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        return Err(format!(
            "cachegrind run of {what} failed ({}): {}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let text = text.map_err(|e| format!("cachegrind wrote no output file: {e}"))?;
    Summary::parse(&text)
}

/// A fresh path in the temporary folder for one cachegrind output file.
fn scratch_file() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "entity-layouts-cachegrind-{}-{}.out",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
desc: I1 cache:         32768 B, 64 B, 8-way associative
desc: D1 cache:         32768 B, 64 B, 8-way associative
desc: LL cache:         33554432 B, 64 B, 16-way associative
cmd: entity-layouts count-frames --layout soa
events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim
fl=???
fn=0x0
0 1 2 3 4 5 6 7 8 9 10 11 12 13
summary: 1000 10 5 300 40 20 200 30 10 150 7 3 1
";

    #[test]
    fn reads_the_summary_and_the_geometry() {
        let s = Summary::parse(SAMPLE).unwrap();
        assert_eq!(s.event("Ir").unwrap(), 1000);
        assert_eq!(s.event("DLmw").unwrap(), 10);
        assert_eq!(s.event("Bim").unwrap(), 1);
        assert_eq!(
            s.geometry(),
            "I1 cache: 32768 B, 64 B, 8-way associative; D1 cache: 32768 B, 64 B, 8-way associative; LL cache: 33554432 B, 64 B, 16-way associative"
        );
        let err = s.event("Nope").unwrap_err();
        assert!(err.contains("Nope"), "{err}");
    }

    #[test]
    fn refuses_what_is_not_a_cachegrind_file() {
        assert!(Summary::parse("hello\n").is_err());
        let short = "events: Ir Dr\nsummary: 1\n";
        assert!(
            Summary::parse(short)
                .unwrap_err()
                .contains("2 event names, 1 summary")
        );
        assert!(Summary::parse("events: Ir\nsummary: x\n").is_err());
    }

    #[test]
    fn the_pinned_geometry_is_one_cachegrind_accepts() {
        // Cachegrind wants a power-of-two number of sets per level.
        let check = super::super::baseline::CHECK_GEOMETRY;
        for level in [PINNED.i1, PINNED.d1, PINNED.ll, check.ll] {
            let sets = level.bytes / (level.ways as u64 * level.line as u64);
            assert!(sets.is_power_of_two(), "{level:?}");
        }
        assert_eq!(PINNED.ll.arg(), "33554432,16,64");
    }
}

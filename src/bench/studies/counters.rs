//! Counters: why each layout costs what it costs (the C++ article's `perf stat` table, past it
//! for every layout). Per entity per frame, move + regen, f32, one thread: instructions, L1d
//! accesses and misses, last-level accesses and misses, branch misses; cycles and IPC where real
//! counters exist. Real (the PMU) and simulated (cachegrind, pinned geometry) figures are kept
//! apart: each record says which in its `param`, each table holds one kind.

use crate::bench::kit::cells::LayoutAtCount;
use crate::bench::report::child::this_binary;
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, fmt_num, table};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::studies::figures::{CPP_CACHE_MISSES, CPP_CACHE_REFS, CPP_IPC, CPP_MISS_PCT};
use crate::layout::LayoutKind;
use crate::tools::counters::{FrameSpec, PerEntity, cachegrind, pmu};

pub struct Counters;

pub const NAME: &str = "counters";
pub const REAL: &str = "real";
pub const SIMULATED: &str = "simulated";

/// The count the full run counts at: the C++ article's, past the L2. 10k, in cache, counts the
/// same instructions per entity as 1M and next to no misses; 10M takes most of this
/// experiment's time under cachegrind (docs/runs/counters) and counts the same instructions and
/// L1d misses per entity as 1M; only its last-level misses differ, which the counts check sees at
/// 100k against a 1 MiB last level (`cargo bench --bench counts`). `--quick` counts at 10k.
pub fn default_counts(cfg: &BenchConfig) -> Vec<usize> {
    cfg.counts_or(cfg.pick(vec![1_000_000], vec![10_000]))
}

impl Experiment for Counters {
    type Cell = LayoutAtCount;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "C++ article: its perf stat table, for every layout"
    }

    fn title(&self) -> &'static str {
        "Counters: why, per entity per frame (real PMU counters and cachegrind's simulated ones)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<LayoutAtCount> {
        let mut cells = Vec::new();
        for n in default_counts(cfg) {
            for layout in cfg.layouts_of(&LayoutKind::CPU) {
                cells.push(LayoutAtCount { layout, n });
            }
        }
        cells
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn run_cell(
        &self,
        _cfg: &BenchConfig,
        cell: &LayoutAtCount,
    ) -> Result<Vec<Record>, BenchError> {
        let LayoutAtCount { layout: kind, n } = *cell;
        let spec = FrameSpec::for_count(kind, n);
        let base = |what: &str| Record::new(NAME, what, "f32", n);
        let mut out = Vec::new();

        match pmu::count(&spec) {
            Ok(real) => {
                out.extend(records(kind, n, REAL, &real.per_entity));
                out.push(base(kind.name()).param(REAL).value(
                    Metric::RunningPct,
                    "%",
                    real.running_pct,
                ));
                if !real.missing.is_empty() {
                    let why = format!("this PMU does not offer {}", real.missing.join(", "));
                    out.push(unavailable(kind, n, REAL, &why));
                }
            }
            Err(reason) => out.push(unavailable(kind, n, REAL, &reason)),
        }

        let exe = this_binary(NAME, &cell.to_string())?;
        match cachegrind::count(&exe, &spec, &cachegrind::PINNED) {
            Ok(sim) => {
                out.extend(records(kind, n, SIMULATED, &sim.per_entity));
                // The geometry as cachegrind reported it travels in the param of a record of
                // the simulated last level's size.
                out.push(
                    base("cachegrind")
                        .param(format!("{} ({})", sim.geometry, sim.valgrind))
                        .value(Metric::LlBytes, "B", cachegrind::PINNED.ll.bytes as f64),
                );
            }
            Err(reason) => out.push(unavailable(kind, n, SIMULATED, &reason)),
        }
        Ok(out)
    }

    fn render(&self, _cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut md = String::from(METHOD);
        let note = |what: &str, metric: Metric| {
            mine.iter()
                .find(|r| r.layout == what && r.metric == metric)
                .map(|r| r.param.clone())
        };
        if let Some(geometry) = note("cachegrind", Metric::LlBytes) {
            md.push_str(&format!(
                "\nSimulated cache geometry (as cachegrind reported it): {geometry}.\n"
            ));
        }
        for (source, what) in [(REAL, "Real counters"), (SIMULATED, "Simulated counters")] {
            md.push_str(&not_measured(mine, source, what));
        }
        let mut counts: Vec<u64> = mine
            .iter()
            .filter(|r| r.metric == Metric::Instructions)
            .map(|r| r.n)
            .collect();
        counts.sort_unstable();
        counts.dedup();
        for source in [SIMULATED, REAL] {
            for &n in &counts {
                let rows: Vec<Vec<String>> = LayoutKind::CPU
                    .iter()
                    .filter_map(|kind| {
                        let run = per_entity(mine, kind.name(), n, source)?;
                        let mut row = vec![
                            format!("`{kind}`"),
                            fmt_num(run.instructions),
                            fmt_num(run.l1d_accesses),
                            with_pct(run.l1d_misses, run.l1d_miss_pct(), ""),
                            fmt_num(run.ll_accesses),
                            with_pct(run.ll_misses, run.ll_miss_pct(), ""),
                            fmt_num(run.branch_misses),
                        ];
                        if source == REAL {
                            row.push(run.cycles.map_or("-".into(), fmt_num));
                            row.push(run.ipc().map_or("-".into(), |i| format!("{i:.2}")));
                            row.push(
                                Query::metric(Metric::RunningPct)
                                    .layout(kind.name())
                                    .n(n)
                                    .param(REAL)
                                    .find(mine)
                                    .map_or("-".into(), |r| format!("{:.0}%", r.p50)),
                            );
                        }
                        Some(row)
                    })
                    .collect();
                if rows.is_empty() {
                    continue;
                }
                let mut header = vec![
                    "layout",
                    "instructions",
                    "L1d accesses",
                    "L1d misses",
                    "LL accesses",
                    "LL misses",
                    "branch misses",
                ];
                if source == REAL {
                    header.extend(["cycles", "IPC", "counting (multiplexing)"]);
                }
                md.push_str(&format!(
                    "\n### {source}, {} entities: per entity per frame\n\n{}",
                    fmt_count(n),
                    table(&header, &rows)
                ));
            }
        }
        md.push_str(&beside_the_article(mine));
        md
    }
}

const METHOD: &str = "Per entity per frame: one frame is move + regen (`Swarm::step`), f32, one thread, \
after the population is complete and has run its warm-up frames. **Simulated**: valgrind's cachegrind \
with a pinned geometry (the C++ article's Ryzen 7 5800X), the same on every host; each figure is the \
difference of two runs, `W + K` and `W + 2K` frames, so that spawning, start-up and exit cancel \
(valgrind 3.19 has no start/stop client requests); cachegrind simulates L1 and the last level only, \
and no time: no cycles, no IPC. L1d accesses are data reads and writes; LL accesses are L1 misses \
(data and instruction); LL misses went to memory. **Real**: the CPU's counters through \
`perf_event_open`, enabled around the K frames only; the L1d events count reads, the LL events are \
the kernel's generic cache-references / cache-misses; a count that shared its register \
(multiplexing) is scaled, and the table says how much of the time it counted.\n";

/// `0.375 (16.7%)` (with `unit` after the number), or "n/a" for a figure not counted.
fn with_pct(v: f64, pct: f64, unit: &str) -> String {
    if v.is_finite() && pct.is_finite() {
        format!("{}{unit} ({pct:.1}%)", fmt_num(v))
    } else {
        fmt_num(v)
    }
}

/// Why `source` could not count `kind` at `n`: a record whose param is `source: reason`.
fn unavailable(kind: LayoutKind, n: usize, source: &str, reason: &str) -> Record {
    Record::new(NAME, kind.name(), "f32", n)
        .param(format!("{source}: {reason}"))
        .value(Metric::Unavailable, "cells", 1.0)
}

/// One line per reason: "not measured: reason" when no cell of `source` counted at all (no
/// PMU), else the reason and the cells it applies to.
fn not_measured(mine: &[Record], source: &str, what: &str) -> String {
    let prefix = format!("{source}: ");
    let mut reasons: Vec<(&str, Vec<String>)> = Vec::new();
    for r in mine.iter().filter(|r| r.metric == Metric::Unavailable) {
        let Some(why) = r.param.strip_prefix(&prefix) else {
            continue;
        };
        let cell = format!("`{}` at {}", r.layout, fmt_count(r.n));
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, cells)) => cells.push(cell),
            None => reasons.push((why, vec![cell])),
        }
    }
    let counted = mine
        .iter()
        .any(|r| r.param == source && r.metric == Metric::Instructions);
    reasons
        .iter()
        .map(|(why, cells)| {
            if !counted && reasons.len() == 1 {
                format!("\n{what}: not measured: {why}\n")
            } else {
                format!("\n{what}: {why} ({})\n", cells.join(", "))
            }
        })
        .collect()
}

/// The records of one counted run.
fn records(kind: LayoutKind, n: usize, source: &str, run: &PerEntity) -> Vec<Record> {
    run.fields()
        .into_iter()
        .map(|(metric, v)| {
            Record::new(NAME, kind.name(), "f32", n)
                .param(source)
                .value(
                    metric.parse().expect("every counter is a metric"),
                    "per entity",
                    v,
                )
        })
        .collect()
}

/// One layout's counted run at `n`, read back from the records.
pub fn per_entity(records: &[Record], layout: &str, n: u64, source: &str) -> Option<PerEntity> {
    PerEntity::from_fields(|name| {
        let query = Query::metric(name.parse().ok()?)
            .layout(layout)
            .n(n)
            .param(source);
        // Other experiments count with cachegrind too (`headline`, `simd`): only ours.
        records
            .iter()
            .find(|r| r.experiment == NAME && query.matches(r))
            .map(|r| r.p50)
    })
}

/// The article's table (OOP vs ECS at 1M: cache references, misses, IPC) with ours beside it:
/// `dyn-1` is its OOP (a vtable call per entity on a boxed object), `soa` and `ecs-contiguous`
/// its ECS. Per frame at 1M entities, and per entity.
fn beside_the_article(mine: &[Record]) -> String {
    const N: u64 = 1_000_000;
    let ours = ["dyn-1", "soa", "ecs-contiguous"];
    let mut md = String::new();
    for source in [SIMULATED, REAL] {
        let runs: Vec<Option<PerEntity>> = ours
            .iter()
            .map(|l| per_entity(mine, l, N, source))
            .collect();
        if runs.iter().all(Option::is_none) {
            continue;
        }
        let per_frame = |f: fn(&PerEntity) -> f64| -> Vec<String> {
            runs.iter()
                .map(|r| {
                    r.as_ref()
                        .map_or("-".into(), |r| format!("{}M", fmt_num(f(r))))
                })
                .collect()
        };
        let mut refs = vec![
            "cache references (LL accesses)".to_string(),
            format!("{}M", CPP_CACHE_REFS.0 / 1e6),
            format!("{}M", CPP_CACHE_REFS.1 / 1e6),
        ];
        refs.extend(per_frame(|r| r.ll_accesses));
        let mut misses = vec![
            "cache misses (LL misses)".to_string(),
            format!("{}M ({}%)", CPP_CACHE_MISSES.0 / 1e6, CPP_MISS_PCT.0),
            format!("{}M ({}%)", CPP_CACHE_MISSES.1 / 1e6, CPP_MISS_PCT.1),
        ];
        misses.extend(runs.iter().map(|r| {
            r.as_ref()
                .map_or("-".into(), |r| with_pct(r.ll_misses, r.ll_miss_pct(), "M"))
        }));
        let mut ipc = vec![
            "IPC".to_string(),
            format!("{}", CPP_IPC.0),
            format!("{}", CPP_IPC.1),
        ];
        ipc.extend(runs.iter().map(|r| {
            match r {
                None => "-".into(),
                Some(r) => r
                    .ipc()
                    .map_or_else(|| "n/a (simulated: no time)".into(), |i| format!("{i:.2}")),
            }
        }));
        let mut instructions = vec!["instructions".to_string(), "-".into(), "-".into()];
        instructions.extend(per_frame(|r| r.instructions));
        let header: Vec<String> = ["", "article OOP", "article ECS"]
            .iter()
            .map(|s| s.to_string())
            .chain(ours.iter().map(|l| format!("`{l}` ({source})")))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        md.push_str(&format!(
            "\n### Beside the article: 1,000,000 entities, {source}, per frame in millions (at 1M entities, also the count per entity)\n\n{}",
            table(&header, &[refs, misses, ipc, instructions])
        ));
    }
    if !md.is_empty() {
        md.push_str("\nThe article's figures: Ryzen 7 5800X, GCC 13.2 -O2 -march=native, 1M entities, 100 frames; it does not say whether its counts are per frame or per run. Its OOP is a vtable call per heap object (ours: `dyn-1`), its ECS a loop over SoA arrays (ours: `soa`, and Bevy's tuned `ecs-contiguous`).\n");
    }
    md
}

/// The counters' plots: per count the simulated counters ran at, where each layout's data
/// accesses were served.
pub fn served_plots(records: &[Record]) -> Vec<(String, String)> {
    let mut counts: Vec<u64> = records
        .iter()
        .filter(|r| {
            r.experiment == NAME && r.param == SIMULATED && r.metric == Metric::Instructions
        })
        .map(|r| r.n)
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
        .into_iter()
        .map(|n| {
            let bars: Vec<(String, [f64; 3])> = LayoutKind::CPU
                .iter()
                .filter_map(|k| {
                    per_entity(records, k.name(), n, SIMULATED)
                        .map(|run| (k.name().to_string(), run.served()))
                })
                .collect();
            crate::bench::report::plot::served_bars(n, &bars)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_name_every_cpu_layout_at_every_count() {
        let cfg = BenchConfig::new(true);
        let cells = Counters.cells(&cfg, &[]);
        assert_eq!(cells.len(), LayoutKind::CPU.len());
        assert!(cells.contains(&"dyn-12:n=10000".parse().unwrap()));
        for bad in ["soa", "nope:n=10", "soa:n=x", "soa:10"] {
            assert!(bad.parse::<LayoutAtCount>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_pmu_is_said_once_and_a_failed_cell_by_name() {
        let none = [
            unavailable(LayoutKind::Soa, 10, REAL, "no PMU"),
            unavailable(LayoutKind::Aos, 10, REAL, "no PMU"),
        ];
        assert_eq!(
            not_measured(&none, REAL, "Real counters"),
            "\nReal counters: not measured: no PMU\n"
        );
        assert_eq!(not_measured(&none, SIMULATED, "Simulated counters"), "");
        let mut some = records(LayoutKind::Soa, 10, SIMULATED, &PerEntity::default());
        some.push(unavailable(LayoutKind::Aos, 10, SIMULATED, "crashed"));
        some.push(unavailable(LayoutKind::Dyn(1), 10, SIMULATED, "crashed"));
        let md = not_measured(&some, SIMULATED, "Simulated counters");
        assert_eq!(
            md,
            "\nSimulated counters: crashed (`aos` at 10, `dyn-1` at 10)\n"
        );
    }

    #[test]
    fn records_read_back_per_source() {
        let run = PerEntity {
            instructions: 20.0,
            l1d_accesses: 9.0,
            ll_accesses: 1.0,
            ll_misses: 0.5,
            ..PerEntity::default()
        };
        let mut recs = records(LayoutKind::Soa, 1_000_000, SIMULATED, &run);
        assert_eq!(per_entity(&recs, "soa", 1_000_000, SIMULATED), Some(run));
        assert_eq!(per_entity(&recs, "soa", 1_000_000, REAL), None);
        recs.extend(records(LayoutKind::Dyn(1), 1_000_000, SIMULATED, &run));
        let md = beside_the_article(&recs);
        assert!(
            md.contains("18.2M") && md.contains("0.500M (50.0%)"),
            "{md}"
        );
        assert!(md.contains("n/a (simulated: no time)"), "{md}");
        assert!(!md.contains("(real)"), "{md}");
        // A figure a partial PMU did not count reads as such, never as a zero.
        assert_eq!(with_pct(f64::NAN, f64::NAN, "M"), "n/a");
        assert_eq!(with_pct(0.5, 50.0, "M"), "0.500M (50.0%)");
    }
}

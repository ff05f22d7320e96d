//! Order: when sorting pays (past the studies). Seek reads each entity's target, an earlier
//! member of its own group; in id order that target lies anywhere in the storage, sorted by
//! group it lies within the group's stretch ([`crate::runtime::swarm::Order`]). Per layout and count,
//! one thread, f32: seek in id order, the time to rebuild the population sorted by group, seek
//! sorted, and seek again after 10% and 50% of the population has churned since the sort
//! (spawns append, removals swap: the order decays). Beside each seek, the share of seekers
//! whose target sits more than [`FAR`] entities away. Every layout is rebuilt in the new order
//! the one way all of them allow (`Swarm::reorder`); where a library also sorts its own storage
//! in place (flecs' `order_by`, `Swarm::sort_in_place`), that call is timed beside it.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::bench::report::cell::{CellTextError, by_name, holes, read_cell};
use crate::bench::report::experiment::{BenchConfig, BenchError, Experiment, Narrows};
use crate::bench::report::format::{fmt_count, ms_since, table};
use crate::bench::report::harness::{Method, measure};
use crate::bench::report::metric::Metric;
use crate::bench::report::record::{Query, Record};
use crate::bench::report::spread::{median, range};
use crate::layout::seeking::PREFETCH_AHEAD;
use crate::layout::{LayoutKind, SeekKernel};
use crate::runtime::swarm::{Order, Swarm};
use crate::simd::SimdTier;
use crate::threads::Threads;
use crate::workload::{Dt, SEED, Systems};

pub struct OrderExperiment;

pub const NAME: &str = "order";

/// A cell: one CPU layout at `n` entities in fresh process `rep`, `<layout>:<entities>:<process>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sorted {
    #[serde(with = "by_name")]
    pub layout: LayoutKind,
    pub n: usize,
    pub rep: usize,
}

impl fmt::Display for Sorted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.layout, self.n, self.rep)
    }
}

impl FromStr for Sorted {
    type Err = CellTextError;
    fn from_str(text: &str) -> Result<Self, CellTextError> {
        read_cell(
            text,
            "<layout>:<entities>:<process>, for a CPU layout",
            |text| {
                let [layout, n, rep] = holes(text, "{}:{}:{}")?;
                Some(Sorted {
                    layout: layout
                        .parse()
                        .ok()
                        .filter(|k| LayoutKind::CPU.contains(k))?,
                    n: n.parse().ok()?,
                    rep: rep.parse().ok()?,
                })
            },
        )
    }
}
/// Fresh processes per figure at 1M; one at 10M.
const REPS: usize = 3;
/// A target farther than this many entities counts as far: 36 KiB of SoA's columns, the
/// L1's size and then some.
pub const FAR: usize = 1024;
/// The churn since the sort at which seek is measured again, as shares of the population, and
/// the rounds each is spread over (`Swarm::churn`, 1% of the population a round).
const CHURNS: [(&str, usize); 3] = [("0", 0), ("0.1", 10), ("0.5", 50)];
/// Layouts measured at 10M too: the hand-rolled columns and Bevy's tuned ECS, whose seek at
/// 10M differs by its two columns against one `Position`; a 10M cell is slow, and every layout
/// at 10M would make the experiment far longer (`bench --only order`, docs/results/order.md).
const AT_10M: [LayoutKind; 2] = [LayoutKind::Soa, LayoutKind::EcsContiguous];
/// Samples per process at 1M and up: a seek pass there is slow, and the spread over processes
/// is what the table shows.
const FEW_SAMPLES: usize = 5;

fn counts(cfg: &BenchConfig) -> Vec<usize> {
    // 100k, where the population fits the L3, is the `seek` experiment's (id order).
    cfg.counts_or(cfg.pick(vec![1_000_000, 10_000_000], vec![10_000]))
}

fn layouts_at(n: usize) -> Vec<LayoutKind> {
    if n >= 10_000_000 {
        AT_10M.to_vec()
    } else {
        LayoutKind::CPU.to_vec()
    }
}

/// Three processes at 1M for the layouts with a tuned seek, whose gains the headline quotes (one
/// for the others), and one at 10M: three of every layout would make the experiment too long
/// (docs/runs/bench-first-try).
fn reps_at(cfg: &BenchConfig, n: usize) -> usize {
    if n == 1_000_000 { cfg.pick(REPS, 1) } else { 1 }
}

fn method_at(cfg: &BenchConfig, n: usize) -> Method {
    if n >= 1_000_000 {
        Method {
            warmup_passes: 1,
            min_samples: FEW_SAMPLES,
            max_samples: FEW_SAMPLES,
            ..cfg.method
        }
    } else {
        cfg.method
    }
}

/// The param of a seek record: its order, its kernel and the churn since the sort.
fn seek_param(order: Order, kernel: SeekKernel, churn: &str) -> String {
    format!("order={},kernel={kernel},churn={churn}", order.name())
}

/// The param of a sort by the library's own call, in place.
fn in_place_param(order: Order) -> String {
    format!("order={},how=in-place", order.name())
}

/// The seek kernels `kind` runs: the idiomatic one, and the tuned one where it has it.
fn kernels_of(kind: LayoutKind) -> Vec<SeekKernel> {
    SeekKernel::BOTH
        .into_iter()
        .filter(|&k| k == SeekKernel::Idiomatic || kind.has_tuned_seek())
        .collect()
}

/// One process: `n` entities of `kind`, seek in id order, the sort, seek sorted and after
/// churn, each with every kernel `kind` has; move + regen + seek where nothing has churned.
fn order_cell(
    cfg: &BenchConfig,
    kind: LayoutKind,
    n: usize,
    rep: usize,
) -> Result<Vec<Record>, BenchError> {
    let mut swarm = Swarm::<f32>::with_count(kind, SEED, n)?;
    swarm.set_simd(SimdTier::Baseline);
    let (dt, method) = (Dt::default(), method_at(cfg, n));
    let rec = Record::new(NAME, kind.name(), "f32", n).threads(Threads::One);
    let mut out = Vec::new();
    let seek = |swarm: &mut Swarm<f32>, order: Order, churn: &str, out: &mut Vec<Record>| {
        // Every measurement starts from the velocities the population has now: seek writes
        // velocities, and the passes before would otherwise push the later measurements
        // toward the speed limit (at 100k, where a measurement runs hundreds of passes, that
        // made every sorted seek slower than the unsorted one).
        let before = swarm.export();
        for kernel in kernels_of(kind) {
            swarm.set_seek_kernel(kernel);
            let rec = rec
                .clone()
                .param(seek_param(order, kernel, churn))
                .in_process(rep);
            if kernel == SeekKernel::Tuned {
                // The first pass after the kernel is chosen resolves every handle, as the first
                // one after a structural change does.
                let started = Instant::now();
                swarm.step_seek(dt, Threads::One);
                out.push(
                    rec.clone()
                        .value(Metric::FirstPassMs, "ms", ms_since(started)),
                );
            }
            let stats = measure(&method, || {
                swarm.step_seek(dt, Threads::One);
                std::hint::black_box(&mut *swarm);
            });
            out.push(rec.clone().with(Metric::SeekMs, "ms", stats));
            swarm.restore_velocities(&before);
        }
        // The frames last: they move the entities, which no restore undoes.
        if churn == "0" {
            for kernel in kernels_of(kind) {
                swarm.set_seek_kernel(kernel);
                let rec = rec
                    .clone()
                    .param(seek_param(order, kernel, churn))
                    .in_process(rep);
                let frame = measure(&method, || {
                    swarm.step_systems(dt, Threads::One, Systems::WITH_SEEK);
                    std::hint::black_box(&mut *swarm);
                });
                out.push(rec.with(Metric::FrameMs, "ms", frame));
                swarm.restore_velocities(&before);
            }
        }
        swarm.set_seek_kernel(SeekKernel::Idiomatic);
        let spread = swarm.target_spread(FAR);
        let rec = rec
            .clone()
            .param(seek_param(order, SeekKernel::Idiomatic, churn));
        let rec = rec.in_process(rep);
        out.push(rec.clone().value(Metric::FarTargets, "share", spread.far));
        out.push(rec.value(Metric::LiveTargets, "share", spread.live));
    };
    seek(&mut swarm, Order::Id, "0", &mut out);
    // The library's own sort, where it has one (flecs' `order_by`): into group order and back,
    // in place, before the rebuild that every layout shares. In the first process only: the
    // further ones are for the tuned seek's spread.
    for order in [Order::Group, Order::Id].into_iter().filter(|_| rep == 0) {
        let started = Instant::now();
        if swarm.sort_in_place(order) {
            out.push(
                rec.clone()
                    .param(in_place_param(order))
                    .in_process(rep)
                    .value(Metric::SortMs, "ms", ms_since(started)),
            );
        }
    }
    let started = Instant::now();
    swarm.reorder(Order::Group)?;
    let sort_ms = ms_since(started);
    out.push(
        rec.clone()
            .param("order=group")
            .in_process(rep)
            .value(Metric::SortMs, "ms", sort_ms),
    );
    let mut rounds_done = 0;
    for (churn, rounds) in CHURNS {
        for _ in rounds_done..rounds {
            swarm.churn(n / 100)?;
        }
        rounds_done = rounds;
        seek(&mut swarm, Order::Group, churn, &mut out);
    }
    Ok(out)
}

fn per_process(
    mine: &[Record],
    metric: Metric,
    kind: LayoutKind,
    n: usize,
    param: &str,
) -> Vec<f64> {
    Query::metric(metric)
        .layout(kind.name())
        .n(n as u64)
        .param(param)
        .per_process(mine)
}

/// Per-process ratios `a / b`, process by process.
fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(_, b)| **b > 0.0)
        .map(|(a, b)| a / b)
        .collect()
}

impl Experiment for OrderExperiment {
    type Cell = Sorted;

    fn name(&self) -> &'static str {
        NAME
    }

    fn study(&self) -> &'static str {
        "past both: the storage sorted by who reads whom"
    }

    fn title(&self) -> &'static str {
        "Order: seek in id order and sorted by group, what the sort costs and how churn undoes it (past the studies)"
    }

    fn cells(&self, cfg: &BenchConfig, _prior: &[Record]) -> Vec<Sorted> {
        let mut cells = Vec::new();
        for n in counts(cfg) {
            for rep in 0..reps_at(cfg, n) {
                // Further processes only where the tuned seek's gain is the question.
                let layouts = cfg.layouts_of(&layouts_at(n));
                for layout in layouts
                    .into_iter()
                    .filter(|k| rep == 0 || k.has_tuned_seek())
                {
                    cells.push(Sorted { layout, n, rep });
                }
            }
        }
        cells
    }

    fn narrows(&self) -> Narrows {
        Narrows::BOTH
    }

    fn run_cell(
        &self,
        cfg: &BenchConfig,
        &Sorted { layout, n, rep }: &Sorted,
    ) -> Result<Vec<Record>, BenchError> {
        order_cell(cfg, layout, n, rep)
    }

    fn render(&self, cfg: &BenchConfig, mine: &[Record], _all: &[Record]) -> String {
        let mut md = format!(
            "f32, one thread, baseline SIMD tier, the idiomatic seek of each layout. Each figure at 1M the median of {REPS} fresh processes [min..max] for the layouts with a tuned seek and one process for the others, at 10M one process, each process's p50 (at 1M and up of {FEW_SAMPLES} samples). \"sorted\": the population rebuilt in group order (`Swarm::reorder`, every layout alike: a fresh layout filled in the new order); \"gain\": seek in id order over seek sorted, process by process; \"sort\": the rebuild, once; \"pays back after\": the sort over what one seek pass saves. After churn: seek once 10% and 50% of the population has been replaced since the sort (1% a round: spawns append, removals swap). \"far\": of the seekers whose target is alive, the share stored more than {FAR} entities from it. \"live\": the share of seekers whose target is alive; churn removes targets, and a seeker without one skips the read, so seek after churn does less work as well as work further apart.\n\n"
        );
        for n in counts(cfg) {
            let id = seek_param(Order::Id, SeekKernel::Idiomatic, "0");
            let rows: Vec<Vec<String>> = layouts_at(n)
                .into_iter()
                .filter_map(|kind| {
                    let seek = |param: &str| per_process(mine, Metric::SeekMs, kind, n, param);
                    let share = |metric: Metric, param: &str| {
                        median(&per_process(mine, metric, kind, n, param))
                            .map_or("-".into(), |f| format!("{:.0}%", f * 100.0))
                    };
                    let far = |param: &str| share(Metric::FarTargets, param);
                    let in_id = seek(&id);
                    if in_id.is_empty() {
                        return None;
                    }
                    let sorted_param = seek_param(Order::Group, SeekKernel::Idiomatic, "0");
                    let sorted = seek(&sorted_param);
                    let sort = per_process(mine, Metric::SortMs, kind, n, "order=group");
                    let saved = median(&in_id).zip(median(&sorted)).map(|(a, b)| a - b);
                    let pays_back = match (median(&sort), saved) {
                        (Some(sort), Some(saved)) if saved > 0.0 => {
                            format!("{:.0} passes", (sort / saved).ceil())
                        }
                        (Some(_), Some(_)) => "never".into(),
                        _ => "-".into(),
                    };
                    let after = |churn: &str| {
                        let param = seek_param(Order::Group, SeekKernel::Idiomatic, churn);
                        format!(
                            "{} ({} far, {} live)",
                            range(&seek(&param)),
                            far(&param),
                            share(Metric::LiveTargets, &param)
                        )
                    };
                    Some(vec![
                        format!("`{kind}`"),
                        format!("{} ({})", range(&in_id), far(&id)),
                        format!("{} ({})", range(&sorted), far(&sorted_param)),
                        match range(&ratios(&in_id, &sorted)).as_str() {
                            "-" => "-".into(),
                            gain => format!("x{gain}"),
                        },
                        range(&sort),
                        pays_back,
                        after("0.1"),
                        after("0.5"),
                    ])
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            md.push_str(&format!(
                "**{} entities**, seek ms (far):\n\n{}\n",
                fmt_count(n as u64),
                table(
                    &[
                        "layout",
                        "id order",
                        "sorted by group",
                        "gain",
                        "sort, ms",
                        "pays back after",
                        "10% churned",
                        "50% churned",
                    ],
                    &rows
                )
            ));
        }
        md.push_str(&tuned_tables(cfg, mine));
        md.push_str(&in_place_table(cfg, mine));
        md.push_str(
            "The gain is the storage's: the same kernel, the same targets by id, the same results (`swarm::order`'s test checks every layout's checksum against SoA's in both orders).\n",
        );
        md
    }
}

/// The library's own in-place sort beside the rebuild, where a layout has one.
fn in_place_table(cfg: &BenchConfig, mine: &[Record]) -> String {
    let mut rows = Vec::new();
    for n in counts(cfg) {
        for kind in layouts_at(n) {
            let sort = |param: &str| per_process(mine, Metric::SortMs, kind, n, param);
            let (into_group, back) = (
                sort(&in_place_param(Order::Group)),
                sort(&in_place_param(Order::Id)),
            );
            if into_group.is_empty() {
                continue;
            }
            rows.push(vec![
                format!("`{kind}`"),
                fmt_count(n as u64),
                range(&sort("order=group")),
                range(&into_group),
                range(&back),
            ]);
        }
    }
    if rows.is_empty() {
        return "flecs' own in-place sort (`order_by`): not in this run's records.\n\n".into();
    }
    format!(
        "**A library's own sort** (flecs' `order_by`: a query ordered by the entity's id component sorts the table itself, a quicksort that swaps whole rows), one call, beside the rebuild every layout gets, ms:\n\n{}\n",
        table(
            &[
                "layout",
                "entities",
                "rebuilt by group",
                "sorted by group in place",
                "back to id order in place",
            ],
            &rows
        )
    )
}

/// The tuned seek beside the idiomatic one, for the layouts that have it, at each count: the
/// kernel's gain in each order, and both answers together against neither.
fn tuned_tables(cfg: &BenchConfig, mine: &[Record]) -> String {
    let mut md = String::new();
    for n in counts(cfg) {
        let rows: Vec<Vec<String>> = layouts_at(n)
            .into_iter()
            .filter(|k| k.has_tuned_seek())
            .filter_map(|kind| {
                let get = |metric: Metric, order: Order, kernel: SeekKernel| {
                    per_process(mine, metric, kind, n, &seek_param(order, kernel, "0"))
                };
                let seek = |order, kernel| get(Metric::SeekMs, order, kernel);
                let (idiomatic, tuned) = (SeekKernel::Idiomatic, SeekKernel::Tuned);
                let id_idiomatic = seek(Order::Id, idiomatic);
                if id_idiomatic.is_empty() {
                    return None;
                }
                let (id_tuned, sorted_tuned) = (seek(Order::Id, tuned), seek(Order::Group, tuned));
                let gain = |a: &[f64], b: &[f64]| match range(&ratios(a, b)).as_str() {
                    "-" => "-".into(),
                    gain => format!("x{gain}"),
                };
                Some(vec![
                    format!("`{kind}`"),
                    range(&id_idiomatic),
                    range(&id_tuned),
                    gain(&id_idiomatic, &id_tuned),
                    range(&seek(Order::Group, idiomatic)),
                    range(&sorted_tuned),
                    gain(&seek(Order::Group, idiomatic), &sorted_tuned),
                    gain(&id_idiomatic, &sorted_tuned),
                    range(&get(Metric::FirstPassMs, Order::Id, tuned)),
                    range(&get(Metric::FrameMs, Order::Id, idiomatic)),
                    range(&get(Metric::FrameMs, Order::Group, tuned)),
                ])
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        md.push_str(&format!(
            "**{} entities, the tuned seek** (targets resolved to dense indices once, prefetched {PREFETCH_AHEAD} seekers ahead, the arithmetic without branches), seek ms; \"first pass\": the tuned pass that resolves every handle first, as after any spawn or removal; \"frame\": move + regen + seek:\n\n{}\n",
            fmt_count(n as u64),
            table(
                &[
                    "layout",
                    "id order, idiomatic",
                    "id order, tuned",
                    "gain",
                    "sorted, idiomatic",
                    "sorted, tuned",
                    "gain",
                    "sorted + tuned vs id + idiomatic",
                    "first pass",
                    "frame, id order, idiomatic",
                    "frame, sorted, tuned",
                ],
                &rows
            )
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_names_a_cpu_layout_a_count_and_a_process() {
        let cfg = BenchConfig::new(true);
        let e = OrderExperiment;
        assert!(
            e.cells(&cfg, &[])
                .iter()
                .all(|c| c.to_string().split(':').count() == 3)
        );
        for bad in [
            "soa:10000",
            "gpu:10000:0",
            "soa:ten:0",
            "nothing:1:0",
            "soa:1:0:0",
        ] {
            assert!(bad.parse::<Sorted>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_table_reads_its_records_back() {
        let cfg = BenchConfig::new(true);
        let mut records = order_cell(&cfg, LayoutKind::Soa, 10_000, 0).unwrap();
        records.extend(order_cell(&cfg, LayoutKind::Aos, 10_000, 0).unwrap());
        // A seek in id order, the sort, and three seeks sorted; each seek with its two shares,
        // a frame where nothing churned, and soa's tuned seek (with its first pass) beside it.
        let aos = 4 + 4 + 3 + 3 + 1;
        let soa = aos + 3 + 3 + 2 + 2;
        assert_eq!(records.len(), soa + aos);
        let md = OrderExperiment.render(&cfg, &records, &records);
        assert!(md.contains("| `soa` |") && md.contains("| `aos` |"), "{md}");
        // The tuned table lists soa, which has the tuned seek, and not aos.
        let tuned = &md[md.find("the tuned seek").expect("a tuned table")..];
        assert!(
            tuned.contains("| `soa` |") && !tuned.contains("| `aos` |"),
            "{md}"
        );
        assert!(!md.contains("| `ecs-table` |"), "{md}");
        assert!(md.contains("not in this run's records"), "{md}");
        // flecs also sorts in place with its own call, into group order and back.
        let flecs = order_cell(&cfg, LayoutKind::Flecs, 10_000, 0).unwrap();
        let in_place = flecs
            .iter()
            .filter(|r| r.metric == Metric::SortMs && r.param.contains("how=in-place"))
            .count();
        assert_eq!(in_place, 2);
        let md = OrderExperiment.render(&cfg, &flecs, &flecs);
        let own = &md[md.find("A library's own sort").expect("the in-place table")..];
        assert!(own.contains("| `flecs` | 10,000 |"), "{own}");
        let far = |param: &str| {
            Query::metric(Metric::FarTargets)
                .layout("soa")
                .param(param)
                .find(&records)
                .unwrap()
                .p50
        };
        // At 10k a group is 154 entities long: sorted, every target is near its seeker.
        assert!(far(&seek_param(Order::Id, SeekKernel::Idiomatic, "0")) > 0.5);
        assert_eq!(
            far(&seek_param(Order::Group, SeekKernel::Idiomatic, "0")),
            0.0
        );
        assert!(far(&seek_param(Order::Group, SeekKernel::Idiomatic, "0.5")) > 0.0);
    }
}

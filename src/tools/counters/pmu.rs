//! Real counters: the CPU's performance monitoring unit, through Linux's `perf_event_open`
//! (the `perf-event2` crate), enabled around the counted frames only and disabled before
//! anything else runs.
//!
//! Eight events are asked for, each on its own: a CPU with fewer counter registers than that
//! time-slices them (multiplexing), and each count is then scaled by the share of the time it
//! was really counting. [`Real::running_pct`] reports the smallest such share, so a table can say
//! when its figures are estimates.

use super::{FrameSpec, PerEntity};

/// What the PMU counted for one spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Real {
    pub per_entity: PerEntity,
    /// The smallest share of the counted time any event was on a counter register, in percent:
    /// 100 means no multiplexing.
    pub running_pct: f64,
    /// Events this PMU does not offer (their figures are NaN, "n/a" in tables).
    pub missing: Vec<String>,
}

/// Counts `spec.frames` warm frames on the PMU, or says why there is none.
#[cfg(target_os = "linux")]
pub fn count(spec: &FrameSpec) -> Result<Real, String> {
    use perf_event::Builder;
    use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware};

    fn l1d(result: CacheResult) -> Cache {
        Cache {
            which: CacheId::L1D,
            operation: CacheOp::READ,
            result,
        }
    }
    fn open(name: &str, builder: &Builder) -> Result<perf_event::Counter, String> {
        builder.build().map_err(|e| {
            let hint = match e.raw_os_error() {
                Some(13) | Some(1) => {
                    "not permitted: lower /proc/sys/kernel/perf_event_paranoid or run as root"
                }
                _ => "no hardware counters here: VMs and containers often have no PMU",
            };
            format!("perf_event_open({name}) failed: {e}; {hint}")
        })
    }
    // Instructions are the one event every PMU has; a VM that exposes only some events (many
    // clouds give no L1d events) still counts the rest, and the table says which are missing.
    const EVENTS: [(&str, &str); 8] = [
        ("instructions", "instructions"),
        ("cycles", "cycles"),
        ("l1d_accesses", "L1-dcache-loads"),
        ("l1d_misses", "L1-dcache-load-misses"),
        ("ll_accesses", "cache-references"),
        ("ll_misses", "cache-misses"),
        ("branches", "branches"),
        ("branch_misses", "branch-misses"),
    ];
    let mut builder = Builder::new(Hardware::INSTRUCTIONS);
    let mut counters = Vec::new();
    let mut missing = Vec::new();
    for (metric, event) in EVENTS {
        match metric {
            "instructions" => builder.event(Hardware::INSTRUCTIONS),
            "cycles" => builder.event(Hardware::CPU_CYCLES),
            "l1d_accesses" => builder.event(l1d(CacheResult::ACCESS)),
            "l1d_misses" => builder.event(l1d(CacheResult::MISS)),
            "ll_accesses" => builder.event(Hardware::CACHE_REFERENCES),
            "ll_misses" => builder.event(Hardware::CACHE_MISSES),
            "branches" => builder.event(Hardware::BRANCH_INSTRUCTIONS),
            _ => builder.event(Hardware::BRANCH_MISSES),
        };
        match open(event, &builder) {
            Ok(counter) => counters.push((metric, counter)),
            Err(e) if metric == "instructions" => return Err(e),
            Err(_) => missing.push(event.to_string()),
        }
    }
    let (enabled, _) = super::run_frames(spec, |frames| {
        let mut on = counters
            .iter_mut()
            .map(|(_, c)| c.enable())
            .collect::<Vec<_>>();
        frames();
        for (_, c) in counters.iter_mut() {
            on.push(c.disable());
        }
        on.into_iter().collect::<Result<Vec<()>, _>>()
    })
    .map_err(|e| e.to_string())?;
    enabled.map_err(|e| format!("cannot enable the counters: {e}"))?;

    let mut values = Vec::new();
    let mut running_pct: f64 = 100.0;
    for (name, counter) in counters.iter_mut() {
        let read = counter
            .read_count_and_time()
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        if read.time_running == 0 {
            return Err(format!(
                "{name} never got a counter register (the PMU is busy or has too few)"
            ));
        }
        let share = read.time_running as f64 / read.time_enabled.max(1) as f64;
        running_pct = running_pct.min(100.0 * share.min(1.0));
        values.push((
            *name,
            read.count as f64 / share.min(1.0) / spec.entity_frames(),
        ));
    }
    let per_entity = PerEntity::from_fields(|m| values.iter().find(|v| v.0 == m).map(|v| v.1))
        .ok_or("no instruction count")?;
    Ok(Real {
        per_entity,
        running_pct,
        missing,
    })
}

/// Counts `spec.frames` warm frames on the PMU, or says why there is none.
#[cfg(not(target_os = "linux"))]
pub fn count(_spec: &FrameSpec) -> Result<Real, String> {
    Err("real counters are read through Linux's perf_event_open; this is not Linux".into())
}

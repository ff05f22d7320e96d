//! Counting a frame in a child: this program's own binary run under cachegrind, and the record
//! its instruction count becomes. The counters, the headline, SIMD, the C++ comparison, the peers
//! and seek all count this way, so it lives in the harness rather than in any one of them.

use crate::bench::report::experiment::BenchError;
use crate::bench::report::metric::Metric;
use crate::bench::report::record::Record;
use crate::tools::counters::cachegrind;

/// This program's own binary, which cachegrind runs as the counted child.
pub fn this_binary(experiment: &str, cell: &str) -> Result<std::path::PathBuf, BenchError> {
    std::env::current_exe().map_err(|e| BenchError::Worker {
        experiment: experiment.into(),
        cell: cell.into(),
        reason: format!("cannot find this program's binary for cachegrind: {e}"),
    })
}

/// `rec` with cachegrind's instructions per entity per frame of `spec` under `param`, or, where
/// cachegrind cannot count it, an `unavailable` record whose param says why after `param: `.
pub fn instructions_record(
    exe: &std::path::Path,
    spec: &crate::tools::counters::FrameSpec,
    rec: Record,
    param: &str,
) -> Record {
    match cachegrind::count(exe, spec, &cachegrind::PINNED) {
        Ok(sim) => rec.param(param).value(
            Metric::Instructions,
            "per entity",
            sim.per_entity.instructions,
        ),
        Err(reason) => {
            rec.param(format!("{param}: {reason}"))
                .value(Metric::Unavailable, "cells", 1.0)
        }
    }
}

/// `rec` with cachegrind's instructions, L1d misses and last-level misses per entity per frame
/// of `spec`, counted against the counts check's geometry (its 1 MiB last level), under
/// `param`; or, where cachegrind cannot count it, an `unavailable` record whose param says why
/// (after `param: ` when there is one).
pub fn miss_records(
    exe: &std::path::Path,
    spec: &crate::tools::counters::FrameSpec,
    rec: Record,
    param: &str,
) -> Vec<Record> {
    let geometry = crate::tools::counters::baseline::CHECK_GEOMETRY;
    match cachegrind::count(exe, spec, &geometry) {
        Ok(sim) => {
            let (r, rec) = (sim.per_entity, rec.param(param));
            vec![
                rec.clone()
                    .value(Metric::Instructions, "per entity", r.instructions),
                rec.clone()
                    .value(Metric::L1dMisses, "per entity", r.l1d_misses),
                rec.value(Metric::LlMisses, "per entity", r.ll_misses),
            ]
        }
        Err(reason) => {
            let why = if param.is_empty() {
                reason
            } else {
                format!("{param}: {reason}")
            };
            vec![rec.param(why).value(Metric::Unavailable, "cells", 1.0)]
        }
    }
}

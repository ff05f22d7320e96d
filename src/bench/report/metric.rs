//! What a record measured: one variant per metric the bench writes (or wrote: old run folders
//! still read), spelled in `results.csv` and `results.json` exactly as before, so that a metric
//! name is checked by the compiler where it is written and where it is looked up.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

macro_rules! metrics {
    ($($variant:ident = $name:literal),* $(,)?) => {
        /// A measured quantity.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Metric {
            $(#[serde(rename = $name)] $variant,)*
        }

        impl Metric {
            /// Every metric, in the order of its name.
            pub const ALL: &'static [Metric] = &[$(Metric::$variant),*];

            /// The name in `results.csv` and `results.json`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Metric::$variant => $name,)*
                }
            }
        }
    };
}

metrics! {
    // A GPU cell's adapter, in words in the record's param (the value is 1): a page names the
    // adapter that measured it, not the one of the machine that renders it.
    Adapter = "adapter",
    AddNs = "add_ns",
    AllocatedBytesPerEntity = "allocated_bytes_per_entity",
    AnonHugePagesMib = "anon_huge_pages_mib",
    AtOnceMs = "at_once_ms",
    AvoidMs = "avoid_ms",
    BandwidthGbs = "bandwidth_gbs",
    BeginMs = "begin_ms",
    BestResortEvery = "best_resort_every",
    BranchMisses = "branch_misses",
    Branches = "branches",
    BreaksBudgetAt = "breaks_budget_at",
    Bytes = "bytes",
    CandidatesPerEntity = "candidates_per_entity",
    ChurnMs = "churn_ms",
    ColourClashes = "colour_clashes",
    CopyMaxMs = "copy_max_ms",
    CopyMsPerFrame = "copy_ms_per_frame",
    CopyTotalMs = "copy_total_ms",
    Crossing = "crossing",
    Cycles = "cycles",
    DealtMs = "dealt_ms",
    DoneMs = "done_ms",
    DrawMs = "draw_ms",
    EffectiveGbS = "effective_gb_s",
    FarTargets = "far_targets",
    FirstPassMs = "first_pass_ms",
    FragmentedNs = "fragmented_ns",
    FrameMaxMs = "frame_max_ms",
    FrameMs = "frame_ms",
    Frames = "frames",
    GatherMs = "gather_ms",
    Geometry = "geometry",
    GridMs = "grid_ms",
    HugeKib = "huge_kib",
    Instructions = "instructions",
    L1dAccesses = "l1d_accesses",
    L1dMisses = "l1d_misses",
    LiveTargets = "live_targets",
    LlAccesses = "ll_accesses",
    LlBytes = "ll_bytes",
    LlMisses = "ll_misses",
    MostNeighbours = "most_neighbours",
    MoveMs = "move_ms",
    MoveRatioVsSoa = "move_ratio_vs_soa",
    NeighboursPerEntity = "neighbours_per_entity",
    NotCrossed = "not_crossed",
    NsPerElement = "ns_per_element",
    NsPerEntity = "ns_per_entity",
    NsPerLookup = "ns_per_lookup",
    NsPerMatched = "ns_per_matched",
    NsPerSpawnOrRemove = "ns_per_spawn_or_remove",
    PageOffset = "page_offset",
    PassMs = "pass_ms",
    PayloadBytesPerEntity = "payload_bytes_per_entity",
    PaysAfterFrames = "pays_after_frames",
    PeakRssMib = "peak_rss_mib",
    Ratio = "ratio",
    RatioAfterToBefore = "ratio_after_to_before",
    RatioStreamsToUniform = "ratio_streams_to_uniform",
    RatioVsSoa = "ratio_vs_soa",
    ReadMs = "read_ms",
    RegenRatioVsSoa = "regen_ratio_vs_soa",
    RemoveNs = "remove_ns",
    RequestMs = "request_ms",
    ResidentBytes = "resident_bytes",
    ResidentBytesPerEntity = "resident_bytes_per_entity",
    ResidentMib = "resident_mib",
    RestMs = "rest_ms",
    RunningPct = "running_pct",
    SavingReaches1msAt = "saving_reaches_1ms_at",
    SeekMs = "seek_ms",
    SimulateMs = "simulate_ms",
    SortMs = "sort_ms",
    SpawnMaxMs = "spawn_max_ms",
    SpawnMsPerFrame = "spawn_ms_per_frame",
    SpawnPerS = "spawn_per_s",
    SpawnTotalMs = "spawn_total_ms",
    SwitchMs = "switch_ms",
    TimestampMs = "timestamp_ms",
    TriadGbs = "triad_gbs",
    Unavailable = "unavailable",
    WorstFrameMs = "worst_frame_ms",
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Metric {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Metric::ALL
            .iter()
            .copied()
            .find(|m| m.name() == text)
            .ok_or_else(|| format!("'{text}' is not a metric the bench writes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let names: std::collections::HashSet<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(names.len(), Metric::ALL.len());
        for &m in Metric::ALL {
            assert_eq!(m.name().parse::<Metric>(), Ok(m));
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
        assert!("frame_millis".parse::<Metric>().is_err());
    }
}

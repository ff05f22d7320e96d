//! The two studies' own figures (../shared/seeds/), printed beside ours. Where a study gave no
//! figure for a cell, there is no entry: nothing here is interpolated.
//!
//! JS study: Apple M3, Node v23.5.0, doubles (`Float64Array`), p50 with inner repeats.
//! C++ article: Ryzen 7 5800X, GCC 13.2 -O2 -march=native, 1M entities, 100 frames.

/// The JS study's layout table as its script printed it (ms per frame, move + regen, 8 fields):
/// `(n, objects, shuffled objects, SoA, AoS)`.
pub const JS_LAYOUTS: [(u64, f64, f64, f64, f64); 4] = [
    (1_000, 0.004, 0.005, 0.001, 0.002),
    (10_000, 0.046, 0.059, 0.022, 0.028),
    (100_000, 0.737, 3.249, 0.179, 0.280),
    (1_000_000, 13.239, 49.512, 1.806, 3.961),
];

/// Our layout name for each JS column.
pub fn js_layout_ms(layout: &str, n: u64) -> Option<f64> {
    let row = JS_LAYOUTS.iter().find(|r| r.0 == n)?;
    match layout {
        "boxed" => Some(row.1),
        "boxed-shuffled" => Some(row.2),
        "soa" => Some(row.3),
        "aos" => Some(row.4),
        _ => None,
    }
}

/// Entities at which SoA's saving over objects first reaches 1 ms per frame.
pub const JS_SAVING_1MS_AT: f64 = 184_000.0;
/// Entities at which the object layout breaks the 16.67 ms budget.
pub const JS_OBJECTS_BREAK_BUDGET_AT: f64 = 1_792_000.0;

/// Width reversal, 1M entities of 20 fields, ms: `(fields read, objects, SoA, AoS)`.
/// 1 and 20 from the article's text, 2 from its script's output.
pub const JS_WIDTH_MS: [(usize, f64, f64, f64); 2] =
    [(1, 12.71, 0.686, f64::NAN), (20, 12.26, 52.525, f64::NAN)];
/// SoA ns per element: flat up to six streams, then up to this at twenty.
pub const JS_SOA_NS_FLAT: f64 = 0.30;
pub const JS_SOA_NS_AT_20: f64 = 2.58;
/// The stream count past which the study saw SoA's per-element cost climb.
pub const JS_STREAM_CLIFF: usize = 8;

/// Random access at six fields, ns per lookup: `Map` vs `a[id]`.
pub const JS_MAP_NS: f64 = 126.3;
pub const JS_ARRAY_NS: f64 = 50.0;

/// Filtered iteration over 1M entities: packed archetype ns per matched entity; separate list of
/// objects ns per matched entity (range over shares); mask scan ms at 50% and 100%.
pub const JS_PACKED_NS: f64 = 0.41;
pub const JS_LIST_NS_RANGE: (f64, f64) = (5.44, 23.29);
pub const JS_MASK_MS_AT_50: f64 = 3.024;
pub const JS_MASK_MS_AT_100: f64 = 0.501;

/// Fragmentation: 500k entities, ns per entity in 1 chunk vs 8,192 chunks.
pub const JS_FRAG_NS_1: f64 = 0.80;
pub const JS_FRAG_NS_8192: f64 = 1.01;

/// Object shapes, 1M objects, two-field move, ms: 1 shape, 12 shapes; SoA beside it.
pub const JS_SHAPES_1_MS: f64 = 6.15;
pub const JS_SHAPES_12_MS: f64 = 35.36;
pub const JS_SHAPES_SOA_MS: f64 = 2.6;

/// Memory at 1M entities, bytes per entity: objects vs typed arrays.
pub const JS_BYTES_OBJECTS: f64 = 223.7;
pub const JS_BYTES_TYPED: f64 = 63.7;

/// C++ article, 1M entities: OOP (vtable, AoS) vs ECS (SoA), ms per frame, and the speedups it
/// quotes at 10K and 10M.
pub const CPP_OOP_MS: f64 = 8.34;
pub const CPP_ECS_MS: f64 = 1.47;
pub const CPP_SPEEDUP_10K: f64 = 3.5;
pub const CPP_SPEEDUP_10M: f64 = 6.0;

/// The C++ article's `perf stat` table, OOP against ECS at 1M entities (Ryzen 7 5800X): cache
/// references and misses (the article does not say per frame or per run of 100 frames), IPC.
pub const CPP_CACHE_REFS: (f64, f64) = (18.2e6, 4.1e6);
pub const CPP_CACHE_MISSES: (f64, f64) = (5.4e6, 0.12e6);
pub const CPP_MISS_PCT: (f64, f64) = (29.7, 2.9);
pub const CPP_IPC: (f64, f64) = (0.71, 3.12);

//! The two studies' experiments, each one the Rust counterpart of a row they measured, with
//! their own figures beside ours ([`figures`]).
//!
//! | module | the study's row |
//! |---|---|
//! | [`layouts`] | JS study: the layouts table, objects, shuffled objects, SoA, AoS at 1k..1M; C++ article: OOP vs ECS at 1M |
//! | [`spawn`] | both: their uniform spawn, against the app's streams (a control) |
//! | [`crossings`] | JS study: SoA saves 1 ms at 184,000; objects break 16.67 ms at 1.79M |
//! | [`width`] | JS study: the 20-field width reversal and the eight-stream cliff |
//! | [`random_access`] | JS study: random access by id, `Map` against `a[id]` |
//! | [`churn`] | JS study: churn, spawn and remove per frame |
//! | [`filtered`] | JS study: filtered iteration (mask, list, packed, archetype) |
//! | [`fragmentation`] | JS study: 1 chunk against 8,192 |
//! | [`dispatch`] | JS study: object shapes (1 against 12), as virtual calls |
//! | [`js`] | JS study: its own script, under V8 on this CPU |
//! | [`cpp`] | C++ article: its OOP and ECS programs, compiled and run here |
//! | [`memory`] | JS study: bytes per entity, objects against typed arrays |
//! | [`counters`] | C++ article: its `perf stat` table (cache references, misses, IPC) |

pub mod churn;
pub mod counters;
pub mod cpp;
pub mod crossings;
pub mod dispatch;
pub mod figures;
pub mod filtered;
pub mod fragmentation;
pub mod js;
pub mod layouts;
pub mod memory;
pub mod random_access;
pub mod spawn;
pub mod width;

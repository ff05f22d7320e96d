//! What the studies did not measure: their "not measured" list (threads, SIMD, archetype
//! migration, a real renderer) and what a live tool needs beside it.
//!
//! | module | past which study, and how |
//! |---|---|
//! | [`ecs_vs_soa`] | both: Bevy's ECS against hand-rolled SoA, the storage core's targets |
//! | [`headline`] | both: every headline ratio as the median of fresh processes, with its spread |
//! | [`seek`] | both: systems that read other entities by handle, where the ranking turns over |
//! | [`order`] | both: the storage sorted by who reads whom, what it gains and what it costs |
//! | [`neighbours`] | both: each entity reads the entities near it, through a grid |
//! | [`near_choices`] | the neighbours' fixed-point sum and Morton order, against the other ways |
//! | [`peers`] | both: hecs, flecs and shipyard beside Bevy |
//! | [`threads`] | both ran one thread: all cores |
//! | [`simd`] | both left it out: SIMD width |
//! | [`gather`] | no renderer in either: packing points to draw |
//! | [`migration`] | the JS study sidestepped it: archetype migration |
//! | [`switch`] | neither changes a running program's layout |
//! | [`grow`] | growing the population frame by frame, as the app's slider does |
//! | [`shrink`] | memory back after a shrink |
//! | [`bandwidth`] | the machine's streaming limit, and each layout's share of it |
//! | [`gpu`] | a GPU-resident layout |
//! | [`upload`] | gather and upload to the GPU |
//! | [`render`] | drawing millions: the compute rasterizer against instanced quads |

pub mod bandwidth;
pub mod ecs_vs_soa;
pub mod gather;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod grow;
pub mod headline;
pub mod migration;
pub mod near_choices;
pub mod neighbours;
pub mod order;
pub mod peers;
#[cfg(feature = "app")]
pub mod render;
pub mod seek;
pub mod shrink;
pub mod simd;
pub mod switch;
pub mod threads;
#[cfg(feature = "gpu")]
pub mod upload;

//! What several experiments build on, below all of them: the shapes of cell they share, a
//! layout filled with the seeded population, one timed frame, the chunked fields, the ECS
//! operations every peer runs, and where a column sits in memory.

pub mod cells;
pub mod chunked;
pub mod ecs_ops;
pub mod frames;
pub mod placement;
pub mod seeded;

/// The count the headline's ratios are measured at (the studies' largest). An experiment that
/// reaches it defers to the headline there, so that the docs give each ratio once.
pub const HEADLINE_RATIO_N: usize = 1_000_000;

//! What runs the simulation to prove or explain something, above the runtime and below the
//! bench and the app.
//!
//! - [`verify`]: the proof that every layout computes bit-identical states.
//! - [`soak`]: long runs of random actions, checked against a reference and for memory growth.
//! - [`script`]: the text format of timed actions (a talk), and its windowless replay.
//! - [`counters`]: why a layout costs what it does: instructions, cache and branch events per
//!   entity, from the CPU's counters or cachegrind's simulated ones.
//! - [`bandwidth`]: this machine's streaming limit, and a frame's effective bandwidth.
//! - [`signals`]: Ctrl-C and SIGTERM as a flag that long runs poll.

pub mod bandwidth;
pub mod counters;
pub mod script;
pub mod signals;
pub mod soak;
pub mod verify;

//! What can go wrong when someone asks the core for something, each message naming the bad value
//! and what would have been accepted.

use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    #[error("time step {value} s is not accepted: dt must be finite and in (0, {max}] seconds")]
    BadDt { value: f64, max: f64 },

    #[error(
        "{requested} entities is over the configured maximum of {max}; accepted: 0 to {max} entities"
    )]
    TooManyEntities { requested: usize, max: usize },

    #[error(
        "{requested} entities need about {needed_mib} MiB for the {layout} layout, but only {available_mib} MiB can be allocated; accepted: at most about {fits} entities here"
    )]
    OutOfMemory {
        requested: usize,
        layout: String,
        needed_mib: u64,
        available_mib: u64,
        fits: usize,
    },

    #[error(
        "churn of {value} per frame is not accepted; accepted: 0 to {max} spawns and removals per frame"
    )]
    BadChurn { value: usize, max: usize },

    #[error("until-over {value} ms is not accepted; accepted: a time from {min} to {max} ms")]
    BadLine { value: f64, min: f64, max: f64 },

    #[error("a snapshot of {found} entities holds {ids} ids; both must match")]
    BadSnapshot { found: usize, ids: usize },

    #[error(
        "{requested} entities is over the {layout} layout's maximum of {max}; accepted: 0 to {max} entities in {layout} (the gpu layout takes up to 100000000 where the GPU allows)"
    )]
    OverLayoutMax {
        requested: usize,
        max: usize,
        layout: String,
    },

    #[error("the {layout} layout is not available: {reason}")]
    LayoutUnavailable { layout: String, reason: String },

    #[error(
        "{requested} entities do not fit the {layout} layout on this GPU: {limit}; accepted: 0 to {max} entities"
    )]
    OverDeviceLimit {
        requested: usize,
        max: usize,
        layout: String,
        limit: String,
    },

    #[error("{requested} entities in the {layout} layout: {reason}; nothing was changed")]
    DeviceOutOfMemory {
        requested: usize,
        layout: String,
        reason: String,
    },

    #[error(
        "a target of {value} neighbours is not accepted; accepted: {min} to {max} neighbours per entity"
    )]
    BadNeighbours { value: f64, min: f64, max: f64 },

    #[error(
        "a neighbour radius of {value} is not accepted; accepted: a radius above 0 and at most {max:.1} world units"
    )]
    BadRadius { value: f64, max: f64 },

    #[error(
        "a neighbour radius of {radius:.2} at {count} entities would have each entity test about {candidates:.0} others a frame (at most {max} are accepted); accepted at this count: a radius up to {largest:.2} world units, or fewer entities; nothing was changed"
    )]
    TooManyNeighbours {
        radius: f64,
        count: usize,
        candidates: f64,
        largest: f64,
        max: f64,
    },

    #[error(
        "the neighbour pass would take about {seconds:.1} s a frame at {count} entities ({form} pass, stored by {order}), past the {limit:.0} s a frame the window accepts; what helps: sort by cell (C), the tuned pass (J), fewer entities, or neighbours off (N); nothing was changed"
    )]
    NeighboursTooSlow {
        seconds: f64,
        count: usize,
        form: String,
        order: String,
        limit: f64,
    },
}

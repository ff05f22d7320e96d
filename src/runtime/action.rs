//! What a person (or a script standing in for one) can ask for: one vocabulary for script lines,
//! keys and panel widgets. [`crate::runtime::driver::Driver::apply`] carries out the ones that change the
//! simulation; the app carries out the rest (screenshots, captions, exports, exit), and a script
//! runner the waits.

use std::fmt;
use std::path::PathBuf;

use crate::layout::{LayoutKind, SeekKernel};
use crate::neighbours::{AvoidForm, Reach};
use crate::runtime::renderer::Renderer;
use crate::runtime::swarm::Order;
use crate::runtime::values::{ResortAbove, ResortEvery, WindowSize};
use crate::simd::SimdChoice;
use crate::threads::Threads;

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Switch to this layout (over the next frames, the swarm moving all along).
    Layout(LayoutKind),
    /// Grow (over the next frames) or shrink (now) to this many entities.
    Count(usize),
    /// Grow until the layout's simulate time (p50 over a few frames) crosses this many ms:
    /// doubling, then bisecting, over frames ([`crate::runtime::until_over`]). A script holds its next
    /// lines until the search ends.
    CountUntilOver(f64),
    Threads(Threads),
    /// Run the kernels on the build's baseline instructions or the widest this CPU has.
    Simd(SimdChoice),
    /// Spawns plus removals per frame.
    Churn(usize),
    /// Run the seek system too (`seek on`), or only move and regen (`seek off`): the systems
    /// control. Instant; every entity stays as it is.
    Seek(bool),
    SeekKernel(SeekKernel),
    /// Run the neighbour system too (`neighbours on`): each entity is pushed away from the
    /// entities near it. Instant; every entity stays as it is.
    Avoid(bool),
    /// The neighbour pass's form (`neighbours idiomatic|tuned`). Instant; the same results.
    AvoidForm(AvoidForm),
    /// What sets the neighbour radius: a mean number of neighbours (`neighbours 8`) or a radius
    /// in world units (`radius 2.5`).
    Reach(Reach),
    /// Rebuild the storage in this order (over the next frames, like a switch): seekers beside
    /// their targets (`order group`), or back by id (`order id`).
    Order(Order),
    /// Sort a population that was sorted by group again whenever churn has spread more than
    /// this share of its targets outside their group's stretch (`resort 50`), or never
    /// (`resort off`, the default).
    Resort(Option<ResortAbove>),
    /// Sort a population that was sorted by cell again every this many frames
    /// (`resort-cells 120`), or never (`resort-cells off`, the default).
    ResortCells(Option<ResortEvery>),
    Pause(bool),
    /// Let this many frames pass before the next action (scripts).
    Wait(u64),
    /// Hold the next action until the switch, sort or growth under way has landed (scripts:
    /// `wait done`); at once when none is.
    WaitDone,
    /// Save a PNG of the window.
    Screenshot(PathBuf),
    /// Show a caption over the world until the next one; an empty one clears it.
    Say(String),
    /// Resize the window (or, headless, the offscreen image) to this many physical pixels.
    Resize(WindowSize),
    /// Show or hide the panel (hidden, the audience's HUD takes its place).
    ShowPanel(bool),
    /// Draw the points with this renderer (the app falls back to quads, and says why, where the
    /// adapter cannot run the compute one).
    Renderer(Renderer),
    /// Show or hide the memory view: where the layout's entities sit, cache line by cache line.
    ShowMemory(bool),
    /// Write the export bundle (screenshot, recent frames, scoreboard) into a new folder.
    Export,
    /// Start or stop an animated clip of the window, written into the export folder.
    Record(ClipRequest),
    /// End the run with its summary.
    Exit,
}

impl Action {
    /// Whether the driver carries this action out (the rest are the app's or the runner's).
    pub fn is_for_driver(&self) -> bool {
        matches!(
            self,
            Action::Layout(_)
                | Action::Count(_)
                | Action::CountUntilOver(_)
                | Action::Threads(_)
                | Action::Simd(_)
                | Action::Churn(_)
                | Action::Seek(_)
                | Action::SeekKernel(_)
                | Action::Avoid(_)
                | Action::AvoidForm(_)
                | Action::Reach(_)
                | Action::Order(_)
                | Action::Resort(_)
                | Action::ResortCells(_)
                | Action::Pause(_)
        )
    }
}

/// What a `record` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClipRequest {
    Start(ClipSettings),
    Stop,
}

/// How a clip is recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipSettings {
    /// It ends after this many seconds; `None`: at `record stop`, the next `R` or the exit.
    pub seconds: Option<f64>,
    /// Each frame shrunk by this factor (1: the window's size; 2: half its width and height).
    pub scale: u8,
    /// Frames in one palette of 256 colours, for a clip a page can carry (about a quarter of
    /// the full colour size; dim dots may take a neighbour's colour).
    pub palette: bool,
}

impl Default for ClipSettings {
    fn default() -> Self {
        Self {
            seconds: None,
            scale: 1,
            palette: false,
        }
    }
}

/// The longest clip a script can ask for, in seconds.
pub const CLIP_MAX_SECONDS: f64 = 600.0;
/// The most a clip's frames can be shrunk by (`1/8`).
pub const CLIP_MAX_SCALE: u8 = 8;

impl fmt::Display for ClipRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClipRequest::Stop => f.write_str("stop"),
            ClipRequest::Start(settings) => {
                let mut parts = Vec::new();
                if let Some(s) = settings.seconds {
                    parts.push(s.to_string());
                }
                if settings.scale > 1 {
                    parts.push(format!("1/{}", settings.scale));
                }
                if settings.palette {
                    parts.push("palette".into());
                }
                f.write_str(&parts.join(" "))
            }
        }
    }
}

/// The action as a script line (`script::parse` reads it back).
impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Layout(kind) => write!(f, "layout {kind}"),
            Action::Count(n) => write!(f, "count {n}"),
            Action::CountUntilOver(ms) => write!(f, "count until-over {ms}"),
            Action::Threads(threads) => write!(f, "threads {threads}"),
            Action::Simd(choice) => write!(f, "simd {choice}"),
            Action::Churn(n) => write!(f, "churn {n}"),
            Action::Seek(true) => f.write_str("seek on"),
            Action::Seek(false) => f.write_str("seek off"),
            Action::SeekKernel(kernel) => write!(f, "seek {kernel}"),
            Action::Avoid(true) => f.write_str("neighbours on"),
            Action::Avoid(false) => f.write_str("neighbours off"),
            Action::AvoidForm(form) => write!(f, "neighbours {form}"),
            Action::Reach(Reach::Neighbours(k)) => write!(f, "neighbours {k}"),
            Action::Reach(Reach::Radius(r)) => write!(f, "radius {r}"),
            Action::Order(order) => write!(f, "order {order}"),
            Action::Resort(None) => f.write_str("resort off"),
            Action::Resort(Some(above)) => write!(f, "resort {}", above.percent()),
            Action::ResortCells(None) => f.write_str("resort-cells off"),
            Action::ResortCells(Some(every)) => write!(f, "resort-cells {}", every.frames()),
            Action::Pause(true) => f.write_str("pause"),
            Action::Pause(false) => f.write_str("resume"),
            Action::Wait(frames) => write!(f, "wait {frames}"),
            Action::WaitDone => f.write_str("wait done"),
            Action::Screenshot(path) => write!(f, "screenshot {}", path.display()),
            Action::Say(text) if text.is_empty() => f.write_str("say"),
            Action::Say(text) => write!(f, "say {text}"),
            Action::Resize(size) => write!(f, "size {size}"),
            Action::ShowPanel(true) => f.write_str("panel show"),
            Action::ShowPanel(false) => f.write_str("panel hide"),
            Action::Renderer(renderer) => write!(f, "renderer {renderer}"),
            Action::ShowMemory(true) => f.write_str("memory show"),
            Action::ShowMemory(false) => f.write_str("memory hide"),
            Action::Export => f.write_str("export"),
            Action::Record(ClipRequest::Start(settings))
                if *settings == ClipSettings::default() =>
            {
                f.write_str("record")
            }
            Action::Record(request) => write!(f, "record {request}"),
            Action::Exit => f.write_str("exit"),
        }
    }
}

/// What applying an action did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing changed: the setting already had that value.
    Unchanged,
    /// A setting changed, so frame times before and after it no longer compare.
    Changed,
    /// A layout switch started: this many entities are carried over during the next frames.
    SwitchStarted { to: LayoutKind, entities: usize },
    /// Asking for the layout the swarm is in: a pending switch to `cancelled` (with this many
    /// entities copied) was cancelled, if there was one.
    SwitchCancelled {
        staying: LayoutKind,
        cancelled: Option<(LayoutKind, usize)>,
    },
    /// A third layout asked for while a switch was pending: that switch (to `replaced`, with
    /// `copied` entities copied) gave way to a new one.
    SwitchReplaced {
        replaced: LayoutKind,
        copied: usize,
        to: LayoutKind,
        entities: usize,
    },
    /// An empty swarm switched on the spot.
    Switched { to: LayoutKind },
    /// A reorder started: this many entities are rebuilt in `order` during the next frames;
    /// `replaced` is the order a pending one was going to.
    ReorderStarted {
        order: Order,
        entities: usize,
        replaced: Option<Order>,
    },
    /// A reorder waits for the work under way (a switch, the start-up fill) to end.
    ReorderQueued { order: Order },
    /// The population already stands in `order` (a pending reorder into another was cancelled,
    /// if there was one).
    InOrder {
        order: Order,
        cancelled: Option<Order>,
    },
    /// Not the driver's to carry out: waits, screenshots, captions, exports and exit.
    NotForDriver,
}

//! SimPlugin: owns the live simulation (the core's `Driver`) as a resource, runs one
//! `Driver::frame_step` per Bevy frame and times it, then gathers the points the renderer draws.
//! Every change a person asks for arrives as a [`Request`] (keys, panel, script alike) and reaches
//! the driver through [`Sim::apply`], which keeps the population as it was when a request is
//! refused and says why.

use std::time::{Duration, Instant};

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy::render::renderer::{RenderDevice, RenderQueue};

use entity_layouts::error::SimError;
use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::action::{Action, Outcome};
use entity_layouts::runtime::catalog::DeviceTime;
use entity_layouts::runtime::catalog::capacity_limit;
use entity_layouts::runtime::driver::{Driver, LOAD_SLICE};
use entity_layouts::runtime::swarm::{Order, TargetSpread};
use entity_layouts::runtime::until_over::UntilOverResult;

use super::render::{DRAW_GPU, Drawing, GatheredPoints};
use super::stats::{FrameSplit, FrameStats, Setting};

#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum SimSet {
    /// Keys and scripts write requests; the dispatcher carries them out.
    Requests,
    Simulate,
    Gather,
}

/// Something a person (or a script) asked for: the one way keys, panel widgets and script lines
/// change anything.
#[derive(Message, Clone, Debug)]
pub struct Request(pub Action);

/// Needs a `Sim` resource (the app inserts it, built from the command line).
pub struct SimPlugin;

impl Plugin for SimPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<FrameStats>()
            .add_message::<Request>()
            .configure_sets(
                Update,
                (SimSet::Requests, SimSet::Simulate, SimSet::Gather).chain(),
            )
            .add_systems(Update, simulate.in_set(SimSet::Simulate))
            .add_systems(
                Update,
                (gather, record_frame).chain().in_set(SimSet::Gather),
            );
    }
}

/// A line for the panel: what just happened, or why a request was refused.
#[derive(Clone, Debug)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

/// A switch or a growth under way, timed from the request to the frame it ends: its frames,
/// its copying in all and its worst frame, with the share that frame was allowed, and of both
/// the time the app's thread waited for a core ([`crate::runtime::core_wait`]), where it is known.
#[derive(Clone, Copy, Debug)]
pub struct WorkClock {
    started: Instant,
    frames: u32,
    total_ms: f32,
    worst_ms: f32,
    worst_share_ms: f32,
    /// NaN once a frame's waiting was not known: no figure rather than part of one.
    waited_ms: f32,
    worst_waited_ms: f32,
}

impl WorkClock {
    fn start() -> Self {
        Self {
            started: Instant::now(),
            frames: 0,
            total_ms: 0.0,
            worst_ms: 0.0,
            worst_share_ms: 0.0,
            waited_ms: 0.0,
            worst_waited_ms: 0.0,
        }
    }

    /// Counts a frame that did `ms` of the work within a share of `share_ms`, waiting for a
    /// core for `waited_ms` of it (NaN: not known).
    fn add(&mut self, ms: f32, share_ms: f32, waited_ms: f32) {
        self.frames += 1;
        self.total_ms += ms;
        self.waited_ms += waited_ms;
        if ms > self.worst_ms {
            self.worst_ms = ms;
            self.worst_share_ms = share_ms;
            self.worst_waited_ms = waited_ms;
        }
    }

    /// `F frame(s), T ms after the request; VERB took C ms, at most W ms in one frame (its
    /// share S ms)`: the end of the log line of a switch and of a growth; then, where it is
    /// known, `; waiting for a core: A ms of it, B ms in that frame`.
    fn summary(&self, verb: &str) -> String {
        let mut text = format!(
            "{} frame(s), {:.0} ms after the request; {verb} took {:.0} ms, at most {:.1} ms in one frame (its share {:.1} ms)",
            self.frames,
            self.started.elapsed().as_secs_f64() * 1e3,
            self.total_ms,
            self.worst_ms,
            self.worst_share_ms,
        );
        if self.frames > 0 && !self.waited_ms.is_nan() {
            text += &format!(
                "; waiting for a core: {:.0} ms of it, {:.1} ms in that frame",
                self.waited_ms, self.worst_waited_ms
            );
        }
        text
    }
}

/// The start-up fill under way: when it began, and when its progress was last printed.
#[derive(Clone, Copy, Debug)]
pub struct LoadClock {
    started: Instant,
    printed: Instant,
}

#[derive(Resource)]
pub struct Sim {
    pub driver: Driver,
    pub notice: Option<Notice>,
    /// This frame's timings, ms: copying into the layout being switched to, move + regen (NaN
    /// when the gpu layout's time was not measured: see `device_note`), and gathering the points.
    pub switch_ms: f32,
    /// The share of this frame growing and switching were allowed ([`Driver::frame_share`]).
    pub share_ms: f32,
    pub simulate_ms: f32,
    /// The systems' shares of `simulate_ms` (NaN: not measured, or seek off).
    pub move_ms: f32,
    pub regen_ms: f32,
    pub seek_ms: f32,
    pub avoid_ms: f32,
    /// Why this frame's simulate time is missing: the gpu layout on an adapter without
    /// timestamp queries (or before its first timestamps arrive). Never replaced by a CPU time.
    pub device_note: Option<&'static str>,
    /// Gathering the points straight into wgpu's staging memory (no separate upload copy).
    pub gather_ms: f32,
    /// Whether this frame spawned toward the count or copied a switch chunk.
    pub busy_this_frame: bool,
    /// The switch under way (to this layout), and the growth (to this count).
    pub switch_clock: Option<(LayoutKind, WorkClock)>,
    /// The reorder under way, and its copying so far.
    pub order_clock: Option<(Order, WorkClock)>,
    /// How far seekers sit from their targets (the order's decay under churn), sampled twice a
    /// second: the share, the distance it counts as far ([`far_slots`]), and when.
    pub spread: Option<(TargetSpread, usize, Instant)>,
    pub grow_clock: Option<(usize, WorkClock)>,
    /// This frame's spawning toward the count, ms.
    pub grow_ms: f32,
    /// Of `grow_ms` and `switch_ms`, the time waited for a core (NaN: not known).
    pub grow_waited_ms: f32,
    pub switch_waited_ms: f32,
    /// Set while the start-up population is being filled (no frame is timed until it is).
    pub load_clock: Option<LoadClock>,
    /// This frame filled the start-up population instead of simulating.
    pub loading_frame: bool,
    /// Set when a change makes earlier scoreboard numbers incomparable.
    pub scoreboard_stale: bool,
    /// The count the scoreboard is for.
    pub scoreboard_count: usize,
    /// Set on exit: no more frames are simulated, so the printed checksum is final.
    pub frozen: bool,
    /// How the last `count until-over` ended: the captions' `{simulate_ms}` right after it.
    pub last_search: Option<UntilOverResult>,
}

impl Sim {
    /// The app's simulation; a driver that is loading ([`Driver::begin_loading`]) fills its
    /// population before the first timed frame.
    pub fn new(mut driver: Driver) -> Self {
        driver.follow_core_waits(true);
        let now = Instant::now();
        let load_clock = driver.loading().then_some(LoadClock {
            started: now,
            printed: now,
        });
        Self {
            driver,
            notice: None,
            switch_ms: 0.0,
            share_ms: 0.0,
            simulate_ms: 0.0,
            move_ms: f32::NAN,
            regen_ms: f32::NAN,
            seek_ms: f32::NAN,
            avoid_ms: f32::NAN,
            device_note: None,
            gather_ms: 0.0,
            busy_this_frame: false,
            switch_clock: None,
            order_clock: None,
            spread: None,
            grow_clock: None,
            grow_ms: 0.0,
            grow_waited_ms: f32::NAN,
            switch_waited_ms: f32::NAN,
            load_clock,
            loading_frame: false,
            scoreboard_stale: true,
            scoreboard_count: 0,
            frozen: false,
            last_search: None,
        }
    }

    /// Shows what happened (or why a request was refused) in the panel, and logs it, so a
    /// scripted or headless run keeps the same record.
    pub fn report(&mut self, result: Result<String, String>) {
        let (text, is_error) = match result {
            Ok(text) => {
                println!("[frame {}] {text}", self.driver.frame());
                (text, false)
            }
            Err(text) => {
                eprintln!("[frame {}] refused: {text}", self.driver.frame());
                (text, true)
            }
        };
        self.notice = Some(Notice { text, is_error });
    }

    /// Carries out one of the driver's actions and says what it did: the app's only way into the
    /// driver. Returns whether it was accepted.
    pub fn apply(&mut self, action: &Action) -> bool {
        let outcome = match self.driver.apply(action) {
            Ok(outcome) => outcome,
            Err(e) => {
                self.report_error(&e);
                return false;
            }
        };
        if outcome == Outcome::Changed
            && matches!(
                action,
                Action::Count(_) | Action::Churn(_) | Action::Threads(_)
            )
        {
            // Frame times at the new setting do not compare with the old ones; a layout switch
            // is what the scoreboard compares, so it keeps them.
            self.scoreboard_stale = true;
        }
        let text = match (action, outcome) {
            (_, Outcome::Unchanged | Outcome::NotForDriver) => None,
            (_, Outcome::SwitchCancelled { staying, cancelled }) => {
                self.switch_clock = None;
                Some(match cancelled {
                    Some((to, copied)) => format!(
                        "switch to {} cancelled after {copied} entities copied: staying in {}",
                        to.label(),
                        staying.label()
                    ),
                    None => format!("staying in {}", staying.label()),
                })
            }
            (
                _,
                Outcome::SwitchReplaced {
                    replaced,
                    copied,
                    to,
                    entities,
                },
            ) => {
                self.switch_clock = Some((to, WorkClock::start()));
                Some(format!(
                    "switching to {} instead of {} ({copied} of {entities} entities were copied there, of no use to another storage; {entities} to carry over)",
                    to.label(),
                    replaced.label(),
                ))
            }
            (_, Outcome::Switched { to }) => {
                self.switch_clock = None;
                Some(format!("switched to {} (no entities yet)", to.label()))
            }
            (
                _,
                Outcome::ReorderStarted {
                    order,
                    entities,
                    replaced,
                },
            ) => Some({
                self.order_clock = Some((order, WorkClock::start()));
                match replaced {
                    Some(was) => format!(
                        "sorting by {order} instead of by {was} ({entities} entities to rebuild)"
                    ),
                    None => format!("sorting by {order} ({entities} entities to rebuild)"),
                }
            }),
            (_, Outcome::ReorderQueued { order }) => Some(format!(
                "sorting by {order} once the work under way is done"
            )),
            (_, Outcome::InOrder { order, cancelled }) => Some(match cancelled {
                Some(was) => format!("sorting by {was} cancelled: staying in {order} order"),
                None => format!("already in {order} order"),
            }),
            (_, Outcome::SwitchStarted { to, entities }) => {
                self.switch_clock = Some((to, WorkClock::start()));
                Some(format!(
                    "switching to {} ({entities} entities to carry over)",
                    to.label()
                ))
            }
            (Action::Count(n), Outcome::Changed) => {
                self.grow_clock = self.driver.growing().then(|| (*n, WorkClock::start()));
                Some(format!("count set to {n}"))
            }
            (Action::Churn(n), Outcome::Changed) => Some(format!("churn set to {n} per frame")),
            (Action::Seek(_) | Action::Avoid(_), Outcome::Changed) => {
                Some(format!("systems: {}", self.driver.systems().name()))
            }
            (Action::AvoidForm(form), Outcome::Changed) => Some(format!("neighbour pass: {form}")),
            (Action::Reach(reach), Outcome::Changed) => {
                Some(format!("neighbour radius set by {}", reach.describe()))
            }
            (Action::SeekKernel(kernel), Outcome::Changed) => {
                let swarm = self.driver.swarm();
                Some(match swarm.seek_kernel_in_use() == *kernel {
                    true => format!("seek kernel: {kernel}"),
                    false => format!(
                        "seek kernel: {kernel} ({} has none and runs its idiomatic seek)",
                        swarm.kind().name()
                    ),
                })
            }
            (Action::Threads(t), Outcome::Changed) => Some(format!("threads set to {t}")),
            (Action::Pause(p), Outcome::Changed) => {
                Some(if *p { "paused" } else { "resumed" }.to_string())
            }
            (_, Outcome::Changed) => None,
        };
        if let Some(text) = text {
            self.report(Ok(text));
        }
        true
    }

    fn report_error(&mut self, e: &SimError) {
        self.report(Err(e.to_string()));
    }

    /// Counts this frame's copying toward a pending reorder (one that started on request, or
    /// once a switch landed), and says so once it is done: the order, the entities, the time
    /// and how far the targets now sit.
    fn follow_order(&mut self, copied: usize) {
        let pending = self.driver.swarm().transition().and_then(|p| p.order());
        match (&mut self.order_clock, pending) {
            (None, Some(order)) => {
                // A sort that waited for a switch (or a request this clock missed) began.
                let mut clock = WorkClock::start();
                if copied > 0 {
                    clock.add(self.switch_ms, self.share_ms, self.switch_waited_ms);
                }
                self.order_clock = Some((order, clock));
                let text = format!(
                    "sorting by {order} ({} entities to rebuild), now that nothing is in its way",
                    self.driver.swarm().len()
                );
                self.report(Ok(text));
            }
            (Some((order, clock)), Some(now)) if *order == now => {
                if copied > 0 {
                    clock.add(self.switch_ms, self.share_ms, self.switch_waited_ms);
                }
            }
            (Some(_), Some(now)) => self.order_clock = Some((now, WorkClock::start())),
            (Some((order, clock)), None) => {
                let (order, clock) = (*order, *clock);
                self.order_clock = None;
                // The storage changed order: the panel's spread is read again next frame, not
                // up to half a second later.
                self.spread = None;
                if self.driver.swarm().order() == order {
                    let text = format!(
                        "sorted by {order}: {} entities rebuilt in {}",
                        self.driver.swarm().len(),
                        clock.summary("copying"),
                    );
                    self.report(Ok(text));
                }
            }
            (None, None) => {}
        }
    }

    /// Counts this frame's copying toward the pending switch, and says so once it is done.
    fn follow_switch(&mut self, copied: usize) {
        let Some((to, clock)) = self.switch_clock.as_mut() else {
            return;
        };
        if copied > 0 {
            clock.add(self.switch_ms, self.share_ms, self.switch_waited_ms);
        }
        if self.driver.swarm().transition().is_some() {
            return;
        }
        let (to, clock) = (*to, *clock);
        self.switch_clock = None;
        if self.driver.swarm().kind() == to {
            let text = format!(
                "switched to {}: {} entities carried over in {}",
                to.label(),
                self.driver.swarm().len(),
                clock.summary("copying"),
            );
            self.report(Ok(text));
        }
    }

    /// Counts this frame's spawning toward the count, and says so once the count is reached.
    fn follow_growth(&mut self, spawned: usize) {
        let Some((target, clock)) = self.grow_clock.as_mut() else {
            return;
        };
        if spawned > 0 {
            clock.add(self.grow_ms, self.share_ms, self.grow_waited_ms);
        }
        if self.driver.growing() {
            return;
        }
        let (target, clock) = (*target, *clock);
        self.grow_clock = None;
        if self.driver.swarm().len() == target {
            let text = format!(
                "grew to {target} entities in {}: {}",
                self.driver.swarm().kind().name(),
                clock.summary("spawning"),
            );
            self.report(Ok(text));
        }
    }

    /// The slider's upper end: the most entities the layout asked for takes here (10M on the
    /// CPU; on the GPU up to 100M, or the adapter's limit if lower).
    pub fn max_count(&self) -> usize {
        let kind = self.driver.requested_layout();
        let max = self.driver.max_entities(kind);
        capacity_limit(kind).map_or(max, |limit| max.min(limit.max_entities))
    }

    /// Still filling the start-up population: no frame is simulated, timed or counted.
    pub fn loading(&self) -> bool {
        self.driver.loading()
    }

    /// One slice of the start-up fill, its progress printed once a second and its end once.
    fn load_step(&mut self) {
        if let Err(e) = self.driver.load_step(LOAD_SLICE) {
            self.report_error(&e);
        }
        let Some(clock) = self.load_clock.as_mut() else {
            return;
        };
        if let Some(progress) = self
            .driver
            .progress()
            .first()
            .filter(|_| self.driver.loading())
        {
            if clock.printed.elapsed() >= Duration::from_secs(1) {
                clock.printed = Instant::now();
                println!("{}", progress.line());
            }
            return;
        }
        let seconds = clock.started.elapsed().as_secs_f64();
        self.load_clock = None;
        let text = format!(
            "loaded {} entities into {} in {seconds:.1} s; the timed frames begin",
            self.driver.swarm().len(),
            self.driver.swarm().kind().label()
        );
        self.report(Ok(text));
    }

    /// Still copying entities into the layout being switched to.
    pub fn switching(&self) -> bool {
        self.driver.swarm().transition().is_some()
    }
}

/// A target is far when it sits more than a group's stretch from its seeker (the population
/// over [`GROUPS`]): sorted by group, every target lies within it, so the share says how much of
/// the sort churn has undone, at any count. In id order a group's members are spread over the
/// whole storage, and nearly every target is far.
pub fn far_slots(len: usize) -> usize {
    entity_layouts::runtime::swarm::group_stretch(len)
}
/// How many seekers the panel's spread samples, and how often.
const SPREAD_SAMPLES: usize = 1 << 16;
const SPREAD_EVERY: Duration = Duration::from_millis(500);

pub fn ms(d: Duration) -> f32 {
    (d.as_secs_f64() * 1e3) as f32
}

fn simulate(mut sim: ResMut<Sim>) {
    let sim = &mut *sim;
    if sim.frozen {
        return;
    }
    sim.loading_frame = sim.loading();
    if sim.loading_frame {
        sim.load_step();
        sim.busy_this_frame = true;
        return;
    }
    // The share is the one this frame's copying is held to, read before the frame measures
    // itself into the next one's.
    sim.share_ms = ms(sim.driver.frame_share());
    // The same frame the core's script replay runs, so the two end in the same state.
    let report = sim.driver.frame_step();
    if sim
        .spread
        .is_none_or(|(_, _, at)| at.elapsed() >= SPREAD_EVERY)
    {
        let swarm = sim.driver.swarm();
        let slots = far_slots(swarm.len());
        let spread = swarm.target_spread_sampled(slots, SPREAD_SAMPLES);
        sim.spread = Some((spread, slots, Instant::now()));
    }
    sim.switch_ms = ms(report.switch);
    sim.grow_ms = ms(report.grow);
    let known = |waited: Option<Duration>| waited.map_or(f32::NAN, ms);
    sim.switch_waited_ms = known(report.switch_waited);
    sim.grow_waited_ms = known(report.grow_waited);
    // The gpu layout's simulate time is the device's (timestamps); its CPU time is only the
    // dispatch, and would flatter it.
    (sim.simulate_ms, sim.device_note) = match report.device {
        None => (ms(report.simulate), None),
        Some(DeviceTime::Measured(d)) => (ms(d), None),
        Some(DeviceTime::Waiting) => (f32::NAN, Some("waiting for the first GPU timestamps")),
        Some(DeviceTime::Unavailable(reason)) => (f32::NAN, Some(reason)),
    };
    // Each system's own time, where the simulate time is the CPU's: the gpu layout's passes run
    // on the device, and only their dispatch is timed here.
    let cpu_timed = report.device.is_none() && !sim.driver.paused();
    let each = |d: Duration, ran: bool| if cpu_timed && ran { ms(d) } else { f32::NAN };
    sim.move_ms = each(report.moving, true);
    sim.regen_ms = each(report.regen, true);
    sim.seek_ms = each(report.seek, sim.driver.systems().seeks());
    sim.avoid_ms = each(report.avoid, sim.driver.systems().avoids());
    sim.busy_this_frame = report.spawned > 0 || report.copied > 0;
    if let Some(e) = report.error {
        sim.report_error(&e);
    }
    if let Some(found) = sim.driver.take_until_over_result() {
        let text = if found.crossed {
            format!(
                "until-over {} ms: {} crosses it at {} entities (simulate p50 {:.2} ms)",
                found.line_ms, found.layout, found.count, found.simulate_ms
            )
        } else {
            format!(
                "until-over {} ms: {} stays under it up to {} entities, its ceiling here (simulate p50 {:.2} ms)",
                found.line_ms, found.layout, found.count, found.simulate_ms
            )
        };
        sim.report(Ok(text));
        sim.last_search = Some(found);
    }
    if let Some(far) = report.resorted {
        let threshold = sim.driver.resort().map_or(0, |r| r.percent());
        sim.order_clock = Some((Order::Group, WorkClock::start()));
        let text = format!(
            "re-sorting by group: {:.0}% of the targets outside their group's stretch, past the {threshold}% threshold ({} entities to rebuild)",
            100.0 * far,
            sim.driver.swarm().len()
        );
        sim.report(Ok(text));
    }
    sim.follow_switch(report.copied);
    sim.follow_order(report.copied);
    sim.follow_growth(report.spawned);
}

fn gather(
    mut sim: ResMut<Sim>,
    mut points: ResMut<GatheredPoints>,
    device: Option<Res<RenderDevice>>,
    queue: Option<Res<RenderQueue>>,
) {
    let (Some(device), Some(queue)) = (device, queue) else {
        return;
    };
    let sim = &mut *sim;
    sim.gather_ms = points.gather(&mut sim.driver, &device, &queue);
}

/// How many frames in a row the draw time has not changed; past [`DrawSeen::STALE_AFTER`], the
/// value shown would be an old one. Where Bevy fails to download its render statistics ("Failed
/// to download render statistics buffer", on an NVIDIA H200 at 4M and 10M entities), the last
/// value read stays in place, for both renderers and setting after setting
/// (docs/runs/device-h200-2026-12-04).
#[derive(Default)]
struct DrawSeen {
    last: Option<Instant>,
    unchanged: u32,
}

impl DrawSeen {
    /// Render timings arrive a few frames late; on a frame of a second that is a few seconds,
    /// so a count of frames, not a time, says when one is stale.
    const STALE_AFTER: u32 = 8;

    fn fresh(&mut self, measured: Instant) -> bool {
        if self.last == Some(measured) {
            self.unchanged = self.unchanged.saturating_add(1);
        } else {
            self.last = Some(measured);
            self.unchanged = 0;
        }
        self.unchanged <= Self::STALE_AFTER
    }
}

fn record_frame(
    time: Res<Time<Real>>,
    diagnostics: Res<DiagnosticsStore>,
    drawing: Res<Drawing>,
    mut sim: ResMut<Sim>,
    mut stats: ResMut<FrameStats>,
    mut draw_seen: Local<DrawSeen>,
) {
    // The start-up fill's frames belong to no layout's summary, scoreboard or plot.
    if sim.loading_frame {
        return;
    }
    let frame_ms = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(|d| d.measurement())
        .map_or(0.0, |m| m.value as f32);
    if sim.scoreboard_stale || sim.driver.swarm().len() != sim.scoreboard_count {
        stats.clear_boards();
        sim.scoreboard_stale = false;
        sim.scoreboard_count = sim.driver.swarm().len();
    }
    // The panel's draw readout starts over with a new renderer, as the scoreboard does with a
    // new count.
    if drawing.frames_since_change == 0 {
        stats.draw = Default::default();
    }
    // The latest measurement, which may be a few frames old: none right after a renderer
    // change, when it would still be the other renderer's, and none once it has stopped
    // changing (the GPU's timings no longer reach the app).
    let latest = diagnostics.get(&DRAW_GPU).and_then(|d| d.measurement());
    let draw_ms = latest
        .filter(|m| draw_seen.fresh(m.time))
        .filter(|_| drawing.settled())
        .map_or(f32::NAN, |m| m.value as f32);
    let split = FrameSplit {
        frame_ms,
        simulate_ms: sim.simulate_ms,
        move_ms: sim.move_ms,
        regen_ms: sim.regen_ms,
        seek_ms: sim.seek_ms,
        avoid_ms: sim.avoid_ms,
        gather_ms: sim.gather_ms,
        draw_ms,
    };
    // Frames spent spawning, switching or paused say nothing about a layout's steady cost.
    let steady = !sim.driver.growing()
        && !sim.switching()
        && !sim.busy_this_frame
        && !sim.driver.paused()
        && !sim.frozen
        && drawing.settled()
        && frame_ms > 0.0;
    let setting = Setting {
        kind: sim.driver.swarm().kind(),
        threads: sim.driver.threads(),
        simd: sim.driver.swarm().simd_in_use(),
        count: sim.driver.swarm().len(),
        renderer: drawing.in_use,
        systems: sim.driver.systems(),
    };
    stats.record(time.elapsed_secs_f64(), setting, split, steady);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The waiting for a core follows the copying where every frame's was known, and is left
    /// out once one frame's was not: no part of a figure passes for the whole.
    #[test]
    fn a_work_clock_says_how_long_it_waited_only_where_it_knows() {
        let mut clock = WorkClock::start();
        clock.add(10.0, 16.0, 1.5);
        clock.add(24.0, 18.0, 9.0);
        let text = clock.summary("copying");
        assert!(
            text.contains("copying took 34 ms, at most 24.0 ms in one frame (its share 18.0 ms)"),
            "{text}"
        );
        assert!(
            text.ends_with("; waiting for a core: 10 ms of it, 9.0 ms in that frame"),
            "{text}"
        );
        clock.add(5.0, 16.0, f32::NAN);
        assert!(!clock.summary("copying").contains("waiting"));
        assert!(!WorkClock::start().summary("copying").contains("waiting"));
    }
}

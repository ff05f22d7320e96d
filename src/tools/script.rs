//! Scripts: a small text format of timed actions, for tests and for hands-free talks.
//!
//! ```text
//! # a comment; blank lines are ignored
//! count 100000        # entities (0 to 10,000,000; 1e6 and 100_000 work too)
//! layout boxed        # any `--layout` name
//! threads all         # 1 or all
//! simd best           # the kernels' widest SIMD tier this CPU has; `simd baseline`
//! churn 1000          # spawns + removals per frame, 0 to 100,000
//! seek on             # run the seek system too (each entity steers toward its target); `seek off`
//! seek tuned          # handles resolved once, prefetched, no branches; `seek idiomatic`
//! neighbours on       # run the neighbour system too (avoid); `neighbours off`
//! neighbours tuned    # positions copied into the grid in cell order; `neighbours idiomatic`
//! neighbours 8        # the radius set for about 8 neighbours each (1 to 64)
//! radius 2.5          # a fixed radius in world units instead
//! order group         # rebuild the storage with each seeker beside its target; `order id`
//! order cell          # rebuild it with neighbours beside each other
//! resort 50           # sort by group again once churn strays 50% of the targets; `resort off`
//! resort-cells 120    # sort by cell again every 120 frames; `resort-cells off`
//! wait 120            # frames
//! wait done           # until the switch, sort or growth under way has landed
//! say Objects on the heap: one pointer per entity
//! say                 # clears the caption
//! panel hide          # the audience's HUD instead of the panel; `panel show` brings it back
//! memory show         # the memory view: the layout's live storage, cache line by cache line
//! renderer quads     # draw with instanced quads (the control); `renderer compute` is the default
//! size 1920x1080      # resize the window (headless: the offscreen image)
//! screenshot shots/boxed.png
//! export              # screenshot, recent frames and scoreboard into a new folder
//! record 12           # an animated PNG of the next 12 s into the export folder (`record 12 1/2`:
//!                     # half the size; `palette`: 256 colours; `record`: until `record stop`)
//! pause               # stop the simulation (the window still draws)
//! resume              # go on
//! exit                # end the run (the app prints its summary and exits)
//! ```
//!
//! Actions run in order at the start of a frame until a `wait`, which lets that many frames pass.
//! A `#` starts a comment everywhere, captions included.

use std::fmt;
use std::path::PathBuf;

use crate::error::SimError;
use crate::layout::{LayoutKind, SeekKernel};
use crate::neighbours::{AvoidForm, Reach};
use crate::runtime::action::{Action, CLIP_MAX_SCALE, CLIP_MAX_SECONDS, ClipRequest, ClipSettings};
use crate::runtime::driver::{Driver, GROW_CHUNK};
use crate::runtime::pace::Pace;
use crate::runtime::renderer::Renderer;
use crate::runtime::swarm::Order;
use crate::runtime::values::{
    Churn, EntityCount, Frames, LineMs, ResortAbove, ResortEvery, ValueError, WindowSize,
};
use crate::simd::SimdChoice;
use crate::threads::Threads;

/// A parse error that names the line, what was written there and what is accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptError {
    pub line: usize,
    pub text: String,
    pub problem: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "script line {}: '{}': {}",
            self.line, self.text, self.problem
        )
    }
}

impl std::error::Error for ScriptError {}

/// One action a script understands: its verb, what may follow it, and an example line. The
/// parser's error lists these verbs, and the tests hold the parser, the actions' own text
/// ([`Action`]'s `Display`) and docs/app.md to this list.
#[derive(Clone, Copy, Debug)]
pub struct Verb {
    pub name: &'static str,
    pub usage: &'static str,
    pub example: &'static str,
}

const fn verb(name: &'static str, usage: &'static str, example: &'static str) -> Verb {
    Verb {
        name,
        usage,
        example,
    }
}

/// Every verb of the script language, in the order docs/app.md gives them.
pub const GRAMMAR: [Verb; 23] = [
    verb("layout", "layout NAME (any --layout name)", "layout soa"),
    verb(
        "count",
        "count N (0 to 10,000,000; 1e6 and 100_000 work too), or count until-over MS",
        "count until-over 16.67",
    ),
    verb("threads", "threads 1|all", "threads all"),
    verb("simd", "simd baseline|best", "simd best"),
    verb(
        "churn",
        "churn N (spawns + removals a frame, 0 to 100,000)",
        "churn 10000",
    ),
    verb(
        "seek",
        "seek on|off, or the kernel: seek idiomatic|tuned",
        "seek tuned",
    ),
    verb(
        "neighbours",
        "neighbours on|off, the form: neighbours idiomatic|tuned, or the mean neighbours the radius is set for: neighbours K (1 to 64)",
        "neighbours on",
    ),
    verb(
        "radius",
        "radius R (the neighbour radius in world units, fixed whatever the count)",
        "radius 2.5",
    ),
    verb(
        "order",
        "order group|id (rebuild the storage, seekers beside their targets, or by id)",
        "order group",
    ),
    verb(
        "resort",
        "resort PCT|off (sort by group again when churn has spread more than PCT% of the targets, 1 to 99)",
        "resort 50",
    ),
    verb(
        "resort-cells",
        "resort-cells N|off (sort by cell again every N frames, 1 to 36,000)",
        "resort-cells 120",
    ),
    verb("renderer", "renderer compute|quads", "renderer quads"),
    verb("memory", "memory show|hide", "memory show"),
    verb("panel", "panel show|hide", "panel hide"),
    verb("export", "export", "export"),
    verb(
        "record",
        "record [SECONDS] [1/N] [palette], or record stop",
        "record 12 1/2 palette",
    ),
    verb("pause", "pause", "pause"),
    verb("resume", "resume", "resume"),
    verb("size", "size WIDTHxHEIGHT", "size 1920x1080"),
    verb(
        "say",
        "say TEXT (with {count}, {layout}, {simulate_ms}, {budget_pct})",
        "say Over at {count}",
    ),
    verb(
        "wait",
        "wait FRAMES, or wait done (until the switch, sort or growth under way has landed)",
        "wait 120",
    ),
    verb(
        "screenshot",
        "screenshot PATH.png",
        "screenshot shots/boxed.png",
    ),
    verb("exit", "exit", "exit"),
];

/// The verbs, for the error that lists them.
fn verbs() -> String {
    GRAMMAR.map(|v| v.name).join(", ")
}

pub fn parse(source: &str) -> Result<Vec<Action>, ScriptError> {
    // A talk saved by a Windows editor starts with a UTF-8 byte-order mark; CRLF line ends are
    // taken care of by `lines()`.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let mut actions = Vec::new();
    for (index, raw) in source.lines().enumerate() {
        let text = raw.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let fail = |problem: String| ScriptError {
            line: index + 1,
            text: text.to_string(),
            problem,
        };
        let (verb, rest) = text
            .split_once(char::is_whitespace)
            .map_or((text, ""), |(verb, rest)| (verb, rest.trim()));
        // `say` takes the rest of the line, `count until-over MS` and `record SECONDS 1/N` two
        // words; every other verb at most one word.
        let arg = (!rest.is_empty()).then_some(rest);
        let until_over = verb == "count" && rest.starts_with("until-over");
        if verb != "say" && verb != "record" && !until_over && rest.split_whitespace().count() > 1 {
            return Err(fail(
                "too many words; each line is one action and at most one value".into(),
            ));
        }
        let need = |what: &str| arg.ok_or_else(|| fail(format!("'{verb}' needs {what}")));
        let value = |e: ValueError| fail(e.to_string());
        let action = match verb {
            "layout" => Action::Layout(
                need("a layout name")?
                    .parse::<LayoutKind>()
                    .map_err(value)?,
            ),
            "count" if until_over => {
                let ms = rest["until-over".len()..].trim();
                if ms.is_empty() || ms.split_whitespace().count() > 1 {
                    return Err(fail(
                        "'count until-over' needs one time in ms, e.g. count until-over 16.67"
                            .into(),
                    ));
                }
                Action::CountUntilOver(ms.parse::<LineMs>().map_err(value)?.0)
            }
            "count" => Action::Count(
                need("an entity count")?
                    .parse::<EntityCount>()
                    .map_err(value)?
                    .0,
            ),
            "threads" => Action::Threads(need("1 or all")?.parse::<Threads>().map_err(value)?),
            "simd" => Action::Simd(
                need("baseline or best")?
                    .parse::<SimdChoice>()
                    .map_err(value)?,
            ),
            "churn" => Action::Churn(
                need("a number per frame")?
                    .parse::<Churn>()
                    .map_err(value)?
                    .0,
            ),
            "wait" => match need("a number of frames, or done")? {
                "done" => Action::WaitDone,
                frames => Action::Wait(
                    frames
                        .parse::<Frames>()
                        .map_err(|e| fail(format!("{e}; or wait done")))?
                        .0,
                ),
            },
            "say" => {
                if let Some(bad) = unknown_placeholder(rest) {
                    return Err(fail(format!(
                        "unknown placeholder {{{bad}}}; accepted: {}",
                        SAY_PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                    )));
                }
                Action::Say(rest.to_string())
            }
            "size" => Action::Resize(need("WIDTHxHEIGHT")?.parse::<WindowSize>().map_err(value)?),
            "seek" => match need("on, off, idiomatic or tuned")?
                .to_ascii_lowercase()
                .as_str()
            {
                "on" => Action::Seek(true),
                "off" => Action::Seek(false),
                "idiomatic" => Action::SeekKernel(SeekKernel::Idiomatic),
                "tuned" => Action::SeekKernel(SeekKernel::Tuned),
                _ => return Err(fail("seek takes on, off, idiomatic or tuned".into())),
            },
            "neighbours" => match need("on, off, idiomatic, tuned or a neighbour target")?
                .to_ascii_lowercase()
                .as_str()
            {
                "on" => Action::Avoid(true),
                "off" => Action::Avoid(false),
                "idiomatic" => Action::AvoidForm(AvoidForm::Idiomatic),
                "tuned" => Action::AvoidForm(AvoidForm::Tuned),
                target => Action::Reach(parse_reach(target, Reach::neighbours).map_err(&fail)?),
            },
            "radius" => {
                Action::Reach(parse_reach(need("a radius")?, Reach::radius).map_err(&fail)?)
            }
            "order" => Action::Order(need("id or group")?.parse::<Order>().map_err(&fail)?),
            "resort" => match need("off or a percent")? {
                "off" => Action::Resort(None),
                above => Action::Resort(Some(above.parse::<ResortAbove>().map_err(value)?)),
            },
            "resort-cells" => match need("off or a number of frames")? {
                "off" => Action::ResortCells(None),
                every => Action::ResortCells(Some(every.parse::<ResortEvery>().map_err(value)?)),
            },
            "panel" => match need("show or hide")? {
                "show" => Action::ShowPanel(true),
                "hide" => Action::ShowPanel(false),
                _ => return Err(fail("panel takes show or hide".into())),
            },
            "renderer" => Action::Renderer(
                need("compute or quads")?
                    .parse::<Renderer>()
                    .map_err(value)?,
            ),
            "memory" => match need("show or hide")? {
                "show" => Action::ShowMemory(true),
                "hide" => Action::ShowMemory(false),
                _ => return Err(fail("memory takes show or hide".into())),
            },
            "screenshot" => {
                let path = PathBuf::from(need("a file path ending in .png")?);
                if path.extension().and_then(|e| e.to_str()) != Some("png") {
                    return Err(fail(
                        "screenshots are saved as PNG: the path must end in .png".into(),
                    ));
                }
                Action::Screenshot(path)
            }
            "record" => Action::Record(parse_record(rest).map_err(fail)?),
            "pause" | "resume" | "exit" | "export" if arg.is_some() => {
                return Err(fail(format!("'{verb}' takes no value")));
            }
            "pause" => Action::Pause(true),
            "resume" => Action::Pause(false),
            "export" => Action::Export,
            "exit" => Action::Exit,
            _ => return Err(fail(format!("unknown action; accepted: {}", verbs()))),
        };
        actions.push(action);
    }
    Ok(actions)
}

/// `record [SECONDS] [1/N] [palette]` or `record stop`.
fn parse_record(rest: &str) -> Result<ClipRequest, String> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    if words == ["stop"] {
        return Ok(ClipRequest::Stop);
    }
    let mut settings = ClipSettings::default();
    for (i, word) in words.iter().enumerate() {
        if let Some(n) = word.strip_prefix("1/") {
            settings.scale = n
                .parse()
                .ok()
                .filter(|n| (1..=CLIP_MAX_SCALE).contains(n))
                .ok_or(format!(
                    "'{word}': the clip's scale is 1/1 to 1/{CLIP_MAX_SCALE} of the window"
                ))?;
        } else if *word == "palette" {
            settings.palette = true;
        } else if i == 0 {
            let s: f64 = word
                .parse()
                .ok()
                .filter(|s: &f64| *s > 0.0 && *s <= CLIP_MAX_SECONDS)
                .ok_or(format!(
                    "'{word}': a clip lasts more than 0 and at most {CLIP_MAX_SECONDS} seconds"
                ))?;
            settings.seconds = Some(s);
        } else {
            return Err(format!(
                "'{word}': record takes [SECONDS] [1/N] [palette], or stop"
            ));
        }
    }
    Ok(ClipRequest::Start(settings))
}

/// Actions as a script, one line each.
pub fn to_text(actions: &[Action]) -> String {
    actions.iter().map(|a| format!("{a}\n")).collect()
}

/// What a `say` may quote from the run, as `{name}`: filled in when the caption is shown, so a
/// talk says what this machine measured.
pub const SAY_PLACEHOLDERS: [&str; 4] = ["count", "layout", "simulate_ms", "budget_pct"];

/// The first `{name}` in `text` (a lowercase word in braces) that is not a placeholder, if any.
/// Other braces (`{}`, `{ x }`, `{Count}`) are plain text.
fn unknown_placeholder(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(close) = after.find('}') {
            let name = &after[..close];
            let word = !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            if word && !SAY_PLACEHOLDERS.contains(&name) {
                return Some(name);
            }
        }
        rest = after;
    }
    None
}

/// The values a caption's placeholders stand for.
#[derive(Clone, Debug, PartialEq)]
pub struct SayValues {
    /// The entity count as a person reads it (`3.05M`).
    pub count: String,
    pub layout: String,
    /// Simulate p50, ms.
    pub simulate_ms: f64,
}

impl SayValues {
    /// `text` with every placeholder filled in.
    pub fn fill(&self, text: &str) -> String {
        let budget_pct = self.simulate_ms / crate::workload::BUDGET_MS * 100.0;
        text.replace("{count}", &self.count)
            .replace("{layout}", &self.layout)
            .replace("{simulate_ms}", &format!("{:.2}", self.simulate_ms))
            .replace("{budget_pct}", &format!("{budget_pct:.0}"))
    }
}

/// Hands out a script's actions frame by frame.
#[derive(Clone, Debug)]
pub struct ScriptRunner {
    actions: Vec<Action>,
    next: usize,
    waiting: u64,
    /// A `wait done` holds the lines after it until the driver has nothing under way.
    settling: bool,
}

/// What the driver is in the middle of, as far as a script's next lines must wait for it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Busy {
    /// A `count until-over` search, or its population growing back to the count it found:
    /// holds every line, waits included, so that the next caption can say what it found.
    pub searching: bool,
    /// A switch, a sort or a growth under way: holds the lines after a `wait done`.
    pub working: bool,
}

impl Busy {
    pub fn of(driver: &Driver) -> Self {
        Self {
            searching: driver.searching(),
            working: driver.working(),
        }
    }
}

impl ScriptRunner {
    pub fn new(actions: Vec<Action>) -> Self {
        Self {
            actions,
            next: 0,
            waiting: 0,
            settling: false,
        }
    }

    /// The actions due at the start of this frame (call once per frame, with what the driver is
    /// busy with at its start).
    pub fn due(&mut self, busy: Busy) -> Vec<Action> {
        let mut out = Vec::new();
        if busy.searching {
            return out;
        }
        if self.waiting > 0 {
            self.waiting -= 1;
            return out;
        }
        if self.settling {
            if busy.working {
                return out;
            }
            self.settling = false;
        }
        while let Some(action) = self.actions.get(self.next).cloned() {
            self.next += 1;
            match action {
                Action::Wait(frames) => {
                    self.waiting = frames - 1;
                    break;
                }
                // The actions just handed out start their work when applied, after this call:
                // the wait is judged from the next frame on.
                Action::WaitDone => {
                    self.settling = true;
                    break;
                }
                _ => {}
            }
            let ends_batch = matches!(action, Action::Exit | Action::CountUntilOver(_));
            out.push(action);
            if ends_batch {
                break;
            }
        }
        out
    }

    pub fn finished(&self) -> bool {
        self.next >= self.actions.len() && self.waiting == 0 && !self.settling
    }
}

/// The frames a script waits in all: its `wait N` lines. The least time it runs at 60 frames a
/// second; a search or a `wait done` adds what the machine takes.
pub fn waited_frames(actions: &[Action]) -> u64 {
    actions
        .iter()
        .map(|a| match a {
            Action::Wait(frames) => *frames,
            _ => 0,
        })
        .sum()
}

/// A script run without a window: the driver in its final state, and what was refused on the
/// way (frame, action, why), as the app would have shown it.
pub struct Replay {
    pub driver: Driver,
    pub refused: Vec<(u64, Action, SimError)>,
}

/// Runs a script without a window, frame for frame as the app does, until it exits or ends. A
/// refused action is noted and the run goes on, as in the app; only a refused starting count is
/// an error. The app's integration test compares checksums with this, and `entity-layouts replay`
/// prints them.
pub fn replay(
    actions: Vec<Action>,
    kind: LayoutKind,
    seed: u64,
    count: usize,
) -> Result<Replay, SimError> {
    // Growth by a count of entities a frame, as `--grow-chunk` makes the app grow: where growth's
    // chunks fall changes the state (switches are paced by time in both; that changes nothing).
    let mut driver = Driver::new(kind, seed)?.with_grow_pace(Pace::Entities(GROW_CHUNK));
    driver.apply(&Action::Count(count))?;
    let mut refused = Vec::new();
    // As the app opens: the starting count is loaded before the first frame (memory that runs
    // out part way stops it where it got to, as in the app, which says so and goes on).
    if let Err(e) = driver.load_all() {
        refused.push((0, Action::Count(count), e));
    }
    let mut runner = ScriptRunner::new(actions);
    loop {
        let due = runner.due(Busy::of(&driver));
        for action in &due {
            if let Err(e) = driver.apply(action) {
                refused.push((driver.frame(), action.clone(), e));
            }
        }
        if due.contains(&Action::Exit) {
            break;
        }
        driver.frame_step();
        if runner.finished() {
            break;
        }
    }
    Ok(Replay { driver, refused })
}

/// A number for `neighbours` or `radius`, checked by `make`: the error names the value and what
/// is accepted.
fn parse_reach(text: &str, make: fn(f64) -> Result<Reach, SimError>) -> Result<Reach, String> {
    let number: f64 = text.parse().map_err(|_| {
        format!("'{text}' is not a number; accepted: on, off, idiomatic, tuned, or a number")
    })?;
    make(number).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One grammar: every verb's example parses, and prints back as itself; every action the
    /// parser makes prints with a verb of the grammar; an unknown verb's error lists exactly the
    /// grammar; docs/app.md shows every verb, and this module's doc names every one.
    #[test]
    fn the_parser_the_actions_text_and_the_docs_follow_one_grammar() {
        for verb in GRAMMAR {
            let actions = parse(verb.example).unwrap_or_else(|e| panic!("{}: {e}", verb.name));
            assert_eq!(actions.len(), 1, "{}", verb.example);
            assert_eq!(
                to_text(&actions),
                format!("{}\n", verb.example),
                "{}",
                verb.name
            );
            assert!(verb.usage.starts_with(verb.name), "{}", verb.usage);
        }
        let err = parse("teleport home").unwrap_err();
        assert!(err.problem.ends_with(&verbs()), "{err}");
        let every_action = parse(
            "layout aos\ncount 5\ncount until-over 3\nthreads 1\nsimd baseline\nchurn 1\nseek off\n\
             seek tuned\norder id\nresort off\nresort 30\nneighbours on\nneighbours tuned\n\
             neighbours 12\nradius 3\norder cell\nresort-cells 60\nresort-cells off\n\
             renderer compute\nmemory hide\npanel show\nexport\nrecord\nrecord stop\npause\nresume\n\
             size 800x600\nsay\nwait 1\nscreenshot a.png\nexit",
        )
        .unwrap();
        for action in &every_action {
            let text = action.to_string();
            let first = text.split_whitespace().next().unwrap();
            assert!(GRAMMAR.iter().any(|v| v.name == first), "{text}");
        }
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/app.md"))
            .expect("docs/app.md");
        let module_doc = include_str!("script.rs");
        for verb in GRAMMAR {
            let shown = format!("`{}", verb.name);
            assert!(
                docs.contains(&shown),
                "docs/app.md does not show `{}`",
                verb.name
            );
            assert!(
                module_doc.contains(&format!("//! {}", verb.name)),
                "the module doc does not show {}",
                verb.name
            );
        }
    }

    #[test]
    fn parses_every_action() {
        let script = "# talk\ncount 1e5\nlayout boxed-shuffled\nthreads all\nchurn 100_000\nseek on\nseek off\nseek tuned\nseek Idiomatic\nwait 3 # frames\nscreenshot a.png\nsay  Boxes,  everywhere  # a comment\nsay\npanel hide\nmemory show\nrenderer quads\nrenderer Compute\nexport\npause\nresume\nexit\n";
        assert_eq!(
            parse(script).unwrap(),
            vec![
                Action::Count(100_000),
                Action::Layout(LayoutKind::BoxedShuffled),
                Action::Threads(Threads::All),
                Action::Churn(100_000),
                Action::Seek(true),
                Action::Seek(false),
                Action::SeekKernel(SeekKernel::Tuned),
                Action::SeekKernel(SeekKernel::Idiomatic),
                Action::Wait(3),
                Action::Screenshot("a.png".into()),
                Action::Say("Boxes,  everywhere".into()),
                Action::Say(String::new()),
                Action::ShowPanel(false),
                Action::ShowMemory(true),
                Action::Renderer(Renderer::Quads),
                Action::Renderer(Renderer::Compute),
                Action::Export,
                Action::Pause(true),
                Action::Pause(false),
                Action::Exit,
            ]
        );
    }

    #[test]
    fn scripts_from_windows_editors_parse() {
        let unix = "count 1000\nmemory show\nsay Hello # a comment\nexit\n";
        let windows = format!("\u{feff}{}", unix.replace('\n', "\r\n"));
        assert_eq!(parse(&windows).unwrap(), parse(unix).unwrap());
        assert_eq!(parse(&windows).unwrap()[0], Action::Count(1000));
        // Only a leading mark is one: elsewhere it is an unknown action, named by its line.
        let inner = "count 1000\n\u{feff}exit\n";
        assert_eq!(parse(inner).unwrap_err().line, 2);
    }

    #[test]
    fn errors_name_the_line_and_what_is_accepted() {
        let cases = [
            ("count 200000000", 1, "0 to 100000000"),
            ("\n\nlayout linked-list", 3, "accepted: ecs-table"),
            ("churn -1", 1, "0 to 100000"),
            ("wait 0", 1, "1 to 1000000"),
            ("threads 3", 1, "1 or all"),
            ("export now", 1, "takes no value"),
            ("renderer points", 1, "compute or quads"),
            ("renderer", 1, "compute or quads"),
            ("panel maybe", 1, "show or hide"),
            ("memory on", 1, "memory takes show or hide"),
            ("seek yes", 1, "seek takes on, off, idiomatic or tuned"),
            ("seek", 1, "'seek' needs on, off, idiomatic or tuned"),
            ("neighbours 0", 1, "accepted: 1 to 64 neighbours per entity"),
            (
                "neighbours 65",
                1,
                "accepted: 1 to 64 neighbours per entity",
            ),
            ("neighbours lots", 1, "'lots' is not a number"),
            ("radius 0", 1, "a radius above 0 and at most 299.7"),
            ("radius 400", 1, "at most 299.7 world units"),
            ("resort 0", 1, "1 to 99 (a percent of the targets"),
            ("resort 100%", 1, "re-sort threshold '100%' is not accepted"),
            ("resort", 1, "'resort' needs off or a percent"),
            ("resort-cells 0", 1, "1 to 36000 frames, or off"),
            (
                "resort-cells often",
                1,
                "re-sort interval 'often' is not accepted",
            ),
            ("jump 3", 1, "unknown action"),
            ("screenshot shot.jpg", 1, ".png"),
            ("count", 1, "needs an entity count"),
            ("pause now", 1, "takes no value"),
            ("count 5 6", 1, "too many words"),
            ("record 0", 1, "more than 0 and at most 600 seconds"),
            ("record 601", 1, "at most 600 seconds"),
            ("record ten", 1, "at most 600 seconds"),
            ("record 5 1/9", 1, "1/1 to 1/8"),
            (
                "record 5 1/2 loud",
                1,
                "record takes [SECONDS] [1/N] [palette], or stop",
            ),
        ];
        for (script, line, needle) in cases {
            let err = parse(script).unwrap_err();
            assert_eq!(err.line, line, "{script}");
            assert!(err.to_string().contains(needle), "{script}: {err}");
        }
    }

    #[test]
    fn record_reads_its_length_and_scale_and_round_trips() {
        let start = |seconds, scale, palette| {
            Action::Record(ClipRequest::Start(ClipSettings {
                seconds,
                scale,
                palette,
            }))
        };
        let cases = [
            ("record", start(None, 1, false)),
            ("record 12", start(Some(12.0), 1, false)),
            ("record 2.5 1/2", start(Some(2.5), 2, false)),
            ("record 1/3 palette", start(None, 3, true)),
            ("record 15 1/2 palette", start(Some(15.0), 2, true)),
            ("record stop", Action::Record(ClipRequest::Stop)),
        ];
        for (line, action) in cases {
            assert_eq!(parse(line).unwrap(), vec![action.clone()], "{line}");
            assert_eq!(
                parse(&to_text(std::slice::from_ref(&action))).unwrap(),
                vec![action]
            );
        }
    }

    const IDLE: Busy = Busy {
        searching: false,
        working: false,
    };
    const SEARCHING: Busy = Busy {
        searching: true,
        working: false,
    };
    const WORKING: Busy = Busy {
        searching: false,
        working: true,
    };

    #[test]
    fn wait_done_holds_the_next_lines_while_the_driver_works_and_no_longer() {
        let mut r = ScriptRunner::new(parse("layout aos\nwait done\nsay in aos\nexit").unwrap());
        assert_eq!(r.due(IDLE), vec![Action::Layout(LayoutKind::Aos)]);
        for _ in 0..3 {
            assert_eq!(r.due(WORKING), vec![]);
            assert!(!r.finished());
        }
        assert_eq!(
            r.due(IDLE),
            vec![Action::Say("in aos".into()), Action::Exit]
        );
        assert!(r.finished());
        // Nothing under way: the wait costs the one frame in which the request is applied.
        let mut r = ScriptRunner::new(parse("wait done\nexit").unwrap());
        assert_eq!(r.due(IDLE), vec![]);
        assert_eq!(r.due(IDLE), vec![Action::Exit]);
        let err = parse("wait soon").unwrap_err().problem;
        assert!(
            err.contains("soon") && err.contains("frames") && err.ends_with("or wait done"),
            "{err}"
        );
    }

    /// Every talk that ships parses: the tours too, which only the device run and the docs use.
    #[test]
    fn every_shipped_talk_parses() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/talks");
        let mut talks = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            talks += 1;
        }
        assert!(talks >= 5, "{talks} talks in {}", dir.display());
    }

    #[test]
    fn runner_hands_out_actions_per_frame() {
        let mut r = ScriptRunner::new(parse("count 10\nwait 2\nlayout aos\nexit").unwrap());
        assert_eq!(r.due(IDLE), vec![Action::Count(10)]);
        assert_eq!(r.due(IDLE), vec![]);
        assert_eq!(
            r.due(IDLE),
            vec![Action::Layout(LayoutKind::Aos), Action::Exit]
        );
        assert!(r.finished());
    }

    #[test]
    fn a_search_holds_the_lines_after_it_until_it_ends() {
        let script = "count until-over 16.67\nsay Over at {count}\nwait 2\nexit";
        let mut r = ScriptRunner::new(parse(script).unwrap());
        assert_eq!(r.due(IDLE), vec![Action::CountUntilOver(16.67)]);
        // While the driver searches, nothing else comes, waits included.
        for _ in 0..5 {
            assert_eq!(r.due(SEARCHING), vec![]);
        }
        assert_eq!(r.due(IDLE), vec![Action::Say("Over at {count}".into())]);
        assert_eq!(r.due(IDLE), vec![]);
        assert_eq!(r.due(IDLE), vec![Action::Exit]);
    }

    #[test]
    fn until_over_and_placeholders_parse_and_bad_ones_are_named() {
        assert_eq!(
            parse("count until-over 16.67").unwrap(),
            vec![Action::CountUntilOver(16.67)]
        );
        assert_eq!(
            Action::CountUntilOver(16.67).to_string(),
            "count until-over 16.67"
        );
        for (script, needle) in [
            ("count until-over", "needs one time in ms"),
            ("count until-over 0", "from 0.01 to 1000"),
            ("count until-over fast", "'fast'"),
            ("count until-over 5 6", "needs one time in ms"),
            (
                "say at {cont}",
                "unknown placeholder {cont}; accepted: {count}, {layout}",
            ),
        ] {
            let err = parse(script).unwrap_err().to_string();
            assert!(err.contains(needle), "{script}: {err}");
        }
        let values = SayValues {
            count: "3.05M".into(),
            layout: "boxed".into(),
            simulate_ms: 16.9,
        };
        assert_eq!(
            values.fill("{layout} over at {count}: {simulate_ms} ms, {budget_pct}%"),
            "boxed over at 3.05M: 16.90 ms, 101%"
        );
        // Braces that are not a lowercase word are text.
        assert_eq!(
            parse("say {} and { x } and {Count}").unwrap(),
            vec![Action::Say("{} and { x } and {Count}".into())]
        );
    }

    #[test]
    fn a_replayed_search_ends_over_its_line_or_at_its_ceiling() {
        // 0.01 ms: any layout crosses it within a few probes of 10,000 entities.
        let actions = parse("count until-over 0.01\nwait 1\nexit").unwrap();
        let replayed = replay(actions, LayoutKind::Boxed, 3, 0).unwrap().driver;
        assert!(!replayed.searching());
        assert!(
            replayed.swarm().len() >= 1_000,
            "{}",
            replayed.swarm().len()
        );
        // A line no layout reaches under a low ceiling: the search stops there.
        let mut d: Driver = Driver::new(LayoutKind::Soa, 3)
            .unwrap()
            .with_max_entities(40_000);
        d.apply(&Action::CountUntilOver(1000.0)).unwrap();
        let mut frames = 0;
        while d.searching() {
            d.frame_step();
            frames += 1;
            assert!(frames < 1000, "the search never ended");
        }
        let found = d.take_until_over_result().unwrap();
        assert!(!found.crossed);
        assert_eq!((found.count, d.swarm().len()), (40_000, 40_000));
        // A count typed in takes over from a search under way.
        d.apply(&Action::CountUntilOver(1000.0)).unwrap();
        d.apply(&Action::Count(500)).unwrap();
        assert!(!d.searching());
    }

    #[test]
    fn replay_matches_a_hand_driven_run() {
        let actions =
            parse("wait 3\nlayout ecs-table\nchurn 50\nwait 4\nthreads all\nwait 2").unwrap();
        let replayed = replay(actions, LayoutKind::Soa, 5, 2000).unwrap().driver;
        let mut d: Driver = Driver::new(LayoutKind::Soa, 5)
            .unwrap()
            .with_grow_pace(Pace::Entities(GROW_CHUNK));
        d.apply(&Action::Count(2000)).unwrap();
        d.load_all().unwrap();
        for _ in 0..3 {
            d.frame_step();
        }
        d.apply(&Action::Layout(LayoutKind::EcsTable)).unwrap();
        d.apply(&Action::Churn(50)).unwrap();
        for _ in 0..4 {
            d.frame_step();
        }
        d.apply(&Action::Threads(Threads::All)).unwrap();
        for _ in 0..2 {
            d.frame_step();
        }
        assert_eq!(replayed.frame(), 9);
        assert_eq!(replayed.swarm().checksum(), d.swarm().checksum());
    }
}

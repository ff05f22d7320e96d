//! Scripts: a small text format of timed actions, for tests and for hands-free talks.
//!
//! ```text
//! # a comment; blank lines are ignored
//! count 100000        # entities (0 to 10,000,000; 1e6 and 100_000 work too)
//! layout boxed        # any `--layout` name
//! threads all         # 1 or all
//! churn 1000          # spawns + removals per frame, 0 to 100,000
//! wait 120            # frames
//! screenshot shots/boxed.png
//! pause / resume
//! exit                # end the run (the app prints its summary and exits)
//! ```
//!
//! Actions run in order at the start of a frame until a `wait`, which lets that many frames pass.

use std::fmt;
use std::path::PathBuf;

use crate::driver::{APP_MAX_ENTITIES, Driver, MAX_CHURN};
use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::threads::Threads;

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Layout(LayoutKind),
    Count(usize),
    Threads(Threads),
    Churn(usize),
    Pause(bool),
    Wait(u64),
    Screenshot(PathBuf),
    Exit,
}

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

/// Parses a whole-number count written as `100000`, `100_000` or `1e6`.
pub fn parse_count(text: &str) -> Option<usize> {
    let clean = text.replace('_', "");
    clean.parse::<usize>().ok().or_else(|| {
        let v = clean.parse::<f64>().ok()?;
        (v.fract() == 0.0 && (0.0..=1e15).contains(&v)).then_some(v as usize)
    })
}

pub fn parse(source: &str) -> Result<Vec<Action>, ScriptError> {
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
        let mut words = text.split_whitespace();
        let verb = words.next().unwrap_or("");
        let arg = words.next();
        if words.next().is_some() {
            return Err(fail(
                "too many words; each line is one action and at most one value".into(),
            ));
        }
        let need = |what: &str| arg.ok_or_else(|| fail(format!("'{verb}' needs {what}")));
        let action = match verb {
            "layout" => Action::Layout(
                LayoutKind::parse(need("a layout name")?).map_err(|e| fail(e.to_string()))?,
            ),
            "count" => {
                let n = parse_count(need("an entity count")?)
                    .filter(|&n| n <= APP_MAX_ENTITIES)
                    .ok_or_else(|| {
                        fail(format!(
                            "count must be a whole number from 0 to {APP_MAX_ENTITIES}"
                        ))
                    })?;
                Action::Count(n)
            }
            "threads" => Action::Threads(
                Threads::parse(need("1 or all")?)
                    .ok_or_else(|| fail("threads must be 1 or all".into()))?,
            ),
            "churn" => {
                let n = parse_count(need("a number per frame")?)
                    .filter(|&n| n <= MAX_CHURN)
                    .ok_or_else(|| {
                        fail(format!(
                            "churn must be a whole number from 0 to {MAX_CHURN}"
                        ))
                    })?;
                Action::Churn(n)
            }
            "wait" => {
                let n = parse_count(need("a number of frames")?)
                    .filter(|&n| (1..=1_000_000).contains(&n))
                    .ok_or_else(|| {
                        fail("wait takes a whole number of frames from 1 to 1000000".into())
                    })?;
                Action::Wait(n as u64)
            }
            "screenshot" => Action::Screenshot(PathBuf::from(need("a file path ending in .png")?)),
            "pause" | "resume" | "exit" if arg.is_some() => {
                return Err(fail(format!("'{verb}' takes no value")));
            }
            "pause" => Action::Pause(true),
            "resume" => Action::Pause(false),
            "exit" => Action::Exit,
            _ => {
                return Err(fail(
                    "unknown action; accepted: layout, count, threads, churn, wait, screenshot, pause, resume, exit"
                        .into(),
                ));
            }
        };
        if let Action::Screenshot(path) = &action
            && path.extension().and_then(|e| e.to_str()) != Some("png")
        {
            return Err(fail(
                "screenshots are saved as PNG: the path must end in .png".into(),
            ));
        }
        actions.push(action);
    }
    Ok(actions)
}

/// Hands out a script's actions frame by frame.
#[derive(Clone, Debug)]
pub struct ScriptRunner {
    actions: Vec<Action>,
    next: usize,
    waiting: u64,
}

impl ScriptRunner {
    pub fn new(actions: Vec<Action>) -> Self {
        Self {
            actions,
            next: 0,
            waiting: 0,
        }
    }

    /// The actions due at the start of this frame (call once per frame).
    pub fn due(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        if self.waiting > 0 {
            self.waiting -= 1;
            return out;
        }
        while let Some(action) = self.actions.get(self.next).cloned() {
            self.next += 1;
            if let Action::Wait(frames) = action {
                self.waiting = frames - 1;
                break;
            }
            let exit = action == Action::Exit;
            out.push(action);
            if exit {
                break;
            }
        }
        out
    }

    pub fn finished(&self) -> bool {
        self.next >= self.actions.len() && self.waiting == 0
    }
}

/// Applies one action to the driver (screenshots and exit are the app's business).
pub fn apply(driver: &mut Driver, action: &Action) -> Result<(), SimError> {
    match action {
        Action::Layout(kind) => driver.set_layout(*kind),
        Action::Count(n) => driver.set_count(*n),
        Action::Threads(t) => {
            driver.threads = *t;
            Ok(())
        }
        Action::Churn(n) => driver.set_churn(*n),
        Action::Pause(p) => {
            driver.paused = *p;
            Ok(())
        }
        Action::Wait(_) | Action::Screenshot(_) | Action::Exit => Ok(()),
    }
}

/// Runs a script without a window, frame for frame as the app does, until it exits or ends;
/// returns the driver in its final state. The app's integration test compares checksums with this.
pub fn replay(
    actions: Vec<Action>,
    kind: LayoutKind,
    seed: u64,
    count: usize,
) -> Result<Driver, SimError> {
    let mut driver = Driver::new(kind, seed);
    driver.set_count(count)?;
    let mut runner = ScriptRunner::new(actions);
    loop {
        let due = runner.due();
        for action in &due {
            apply(&mut driver, action)?;
        }
        if due.contains(&Action::Exit) {
            break;
        }
        driver.frame_step();
        if runner.finished() {
            break;
        }
    }
    Ok(driver)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_action() {
        let script = "# talk\ncount 1e5\nlayout boxed-shuffled\nthreads all\nchurn 100_000\nwait 3 # frames\nscreenshot a.png\npause\nresume\nexit\n";
        assert_eq!(
            parse(script).unwrap(),
            vec![
                Action::Count(100_000),
                Action::Layout(LayoutKind::BoxedShuffled),
                Action::Threads(Threads::All),
                Action::Churn(100_000),
                Action::Wait(3),
                Action::Screenshot("a.png".into()),
                Action::Pause(true),
                Action::Pause(false),
                Action::Exit,
            ]
        );
    }

    #[test]
    fn errors_name_the_line_and_what_is_accepted() {
        let cases = [
            ("count 20000000", 1, "0 to 10000000"),
            ("\n\nlayout linked-list", 3, "accepted: ecs-table"),
            ("churn -1", 1, "0 to 100000"),
            ("wait 0", 1, "1 to 1000000"),
            ("threads 3", 1, "1 or all"),
            ("jump 3", 1, "unknown action"),
            ("screenshot shot.jpg", 1, ".png"),
            ("count", 1, "needs an entity count"),
            ("pause now", 1, "takes no value"),
            ("count 5 6", 1, "too many words"),
        ];
        for (script, line, needle) in cases {
            let err = parse(script).unwrap_err();
            assert_eq!(err.line, line, "{script}");
            assert!(err.to_string().contains(needle), "{script}: {err}");
        }
    }

    #[test]
    fn runner_hands_out_actions_per_frame() {
        let mut r = ScriptRunner::new(parse("count 10\nwait 2\nlayout aos\nexit").unwrap());
        assert_eq!(r.due(), vec![Action::Count(10)]);
        assert_eq!(r.due(), vec![]);
        assert_eq!(r.due(), vec![Action::Layout(LayoutKind::Aos), Action::Exit]);
        assert!(r.finished());
    }

    #[test]
    fn replay_matches_a_hand_driven_run() {
        let actions =
            parse("wait 3\nlayout ecs-table\nchurn 50\nwait 4\nthreads all\nwait 2").unwrap();
        let replayed = replay(actions, LayoutKind::Soa, 5, 2000).unwrap();
        let mut d = Driver::new(LayoutKind::Soa, 5);
        d.set_count(2000).unwrap();
        for _ in 0..3 {
            d.frame_step();
        }
        d.set_layout(LayoutKind::EcsTable).unwrap();
        d.set_churn(50).unwrap();
        for _ in 0..4 {
            d.frame_step();
        }
        d.threads = Threads::All;
        for _ in 0..2 {
            d.frame_step();
        }
        assert_eq!(replayed.frame(), 9);
        assert_eq!(replayed.swarm.checksum(), d.swarm.checksum());
    }
}

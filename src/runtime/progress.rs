//! Work that takes longer than a frame (loading the start-up count, growing toward a count,
//! switching layouts): how far it has come and about how long it has left, as the panel's bars,
//! the HUD and the terminal say it.

use std::time::{Duration, Instant};

use crate::layout::LayoutKind;
use crate::runtime::swarm::Order;

/// What the driver is busy with between steady frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// Filling the population asked for at start-up, before the first timed frame.
    Loading,
    /// Spawning toward a higher count, a share of each frame.
    Growing,
    /// Copying every entity into this layout, a share of each frame.
    Switching(LayoutKind),
    /// Moving the population into a layout of this kind prepared for this count (its growth
    /// readied on a thread), before growing to the count.
    Preparing(LayoutKind, usize),
    /// Rebuilding the storage in this order, a share of each frame.
    Sorting(Order),
}

/// How far the work under way has come, and about how long it has left at the pace it has kept
/// since it began (wall-clock, frames and all).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub work: Work,
    pub done: usize,
    pub total: usize,
    /// `None` until enough is done to tell.
    pub left: Option<Duration>,
}

impl Progress {
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            (self.done as f64 / self.total as f64).clamp(0.0, 1.0)
        }
    }

    /// `switching to flecs: 412,000 of 1,000,000 (41%), about 1.2 s left`: the terminal's line,
    /// and the panel bar's hover text.
    pub fn line(&self) -> String {
        let what = self.what();
        let left = self.left.map_or(String::new(), |d| {
            format!(", about {:.1} s left", d.as_secs_f64())
        });
        format!(
            "{what}: {} of {} ({:.0}%){left}",
            group_digits(self.done),
            group_digits(self.total),
            100.0 * self.fraction()
        )
    }
}

impl Progress {
    fn what(&self) -> String {
        match self.work {
            Work::Loading => "loading".to_string(),
            Work::Growing => "growing".to_string(),
            Work::Switching(to) => format!("switching to {}", to.name()),
            Work::Preparing(kind, count) => {
                format!("readying {} for {}", kind.name(), group_digits(count))
            }
            Work::Sorting(order) => format!("sorting by {order}"),
        }
    }

    /// `switching to flecs · 41% · 1.2 s left`: what fits on one line of the HUD and on the
    /// panel's progress bar, whose length shows how far it has come.
    pub fn short_line(&self) -> String {
        let left = self.left.map_or(String::new(), |d| {
            format!(" · {:.1} s left", d.as_secs_f64())
        });
        format!("{} · {:.0}%{left}", self.what(), 100.0 * self.fraction())
    }
}

fn group_digits(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, c) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// When a piece of work began and how much of it was done then: its pace so far, for the time
/// left.
#[derive(Clone, Copy, Debug)]
pub struct Eta {
    started: Instant,
    done_at_start: usize,
}

impl Eta {
    pub fn new(done: usize) -> Self {
        Self {
            started: Instant::now(),
            done_at_start: done,
        }
    }

    pub fn left(&self, done: usize, total: usize) -> Option<Duration> {
        let progressed = done.checked_sub(self.done_at_start).filter(|&d| d > 0)?;
        let elapsed = self.started.elapsed();
        // Too early to tell from one batch: the first frames of a switch also build the layout.
        if elapsed < Duration::from_millis(50) {
            return None;
        }
        let rest = total.saturating_sub(done) as f64;
        Some(elapsed.mul_f64(rest / progressed as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_how_far_and_how_long() {
        let p = Progress {
            work: Work::Switching(LayoutKind::Flecs),
            done: 412_000,
            total: 1_000_000,
            left: Some(Duration::from_millis(1_200)),
        };
        assert_eq!(
            p.line(),
            "switching to flecs: 412,000 of 1,000,000 (41%), about 1.2 s left"
        );
        assert_eq!(p.short_line(), "switching to flecs · 41% · 1.2 s left");
        let empty = Progress {
            work: Work::Loading,
            done: 0,
            total: 0,
            left: None,
        };
        assert_eq!(empty.fraction(), 1.0);
    }

    #[test]
    fn time_left_waits_for_progress_and_scales_with_the_pace() {
        let eta = Eta {
            started: Instant::now() - Duration::from_secs(2),
            done_at_start: 100,
        };
        assert_eq!(eta.left(100, 1_000), None, "nothing done yet");
        let left = eta.left(300, 1_100).unwrap();
        assert!((7.9..8.1).contains(&left.as_secs_f64()), "{left:?}");
    }
}

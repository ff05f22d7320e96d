//! How long this thread has waited for a core. Where other threads share the cores (a software
//! rasterizer's, on a 2-core machine), a frame's copying can sit runnable but unscheduled for
//! milliseconds: its wall-clock time then says as much about the scheduler as about the copy.
//! The app's log lines for a switch, a sort and a growth give that waiting beside the copying,
//! so that a frame over its share can be told apart from a copy that ran slow.
//!
//! Linux keeps each thread's time on a run queue, waiting for a core, in
//! `/proc/thread-self/schedstat` (its second field, in nanoseconds). Elsewhere there is no
//! figure, and the log lines leave it out.

use std::time::Duration;

/// This thread's time waiting for a core since it started, where the system says.
pub fn waited() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    run_queue_wait(&text)
}

/// The run-queue wait in a `schedstat` line: "on-cpu-ns run-queue-ns timeslices".
fn run_queue_wait(schedstat: &str) -> Option<Duration> {
    let ns = schedstat.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// The time waited since `before`, a reading of [`waited`] (none: nothing to count from).
pub fn since(before: Option<Duration>) -> Option<Duration> {
    let before = before?;
    Some(waited()?.saturating_sub(before))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_field_is_the_wait() {
        assert_eq!(
            run_queue_wait("1234567 8901234 56\n"),
            Some(Duration::from_nanos(8_901_234))
        );
        assert_eq!(run_queue_wait("1234567\n"), None);
        assert_eq!(run_queue_wait("12 x 3"), None);
    }

    /// Linux reports it (the CI machine, and every machine the log lines were read on), and it
    /// never runs backwards.
    #[cfg(target_os = "linux")]
    #[test]
    fn this_thread_has_a_wait_that_only_grows() {
        let first = waited().expect("no /proc/thread-self/schedstat here");
        std::thread::sleep(Duration::from_millis(1));
        let then = waited().expect("no /proc/thread-self/schedstat here");
        assert!(then >= first, "{then:?} after {first:?}");
        assert!(since(Some(then)).is_some());
        assert_eq!(since(None), None);
    }
}

//! One thread or all cores, for every layout, through Bevy's task pool only: the ECS layout uses
//! `par_iter_mut`, the others split their slices into chunks and run them in a
//! `ComputeTaskPool` scope. One pool for everything, no second thread library.

use std::fmt;

use bevy_tasks::{ComputeTaskPool, TaskPool};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Threads {
    #[default]
    One,
    All,
}

impl Threads {
    pub const BOTH: [Threads; 2] = [Threads::One, Threads::All];

    pub fn name(self) -> &'static str {
        match self {
            Threads::One => "1",
            Threads::All => "all",
        }
    }
}

impl fmt::Display for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The shared compute pool, created on first use with one thread per core (Bevy's default).
pub fn pool() -> &'static TaskPool {
    ComputeTaskPool::get_or_init(TaskPool::default)
}

/// Threads in the pool (what `Threads::All` means on this machine).
pub fn core_count() -> usize {
    pool().thread_num().max(1)
}

/// Below this many entities per task, spawning the task costs more than it saves
/// (BEVY-FACTS: par_iter only pays above a few thousand items per batch).
const MIN_CHUNK: usize = 16 * 1024;

/// How many entities each task gets: a few tasks per thread so a slow core does not hold the
/// frame, never fewer than `MIN_CHUNK`. With `Threads::One` the whole range is one chunk.
pub fn chunk_len(threads: Threads, n: usize) -> usize {
    match threads {
        Threads::One => n.max(1),
        Threads::All => n.div_ceil(core_count() * 4).max(MIN_CHUNK),
    }
}

/// Runs `work` on each part: inline for one thread (or a single part), else as tasks in the
/// compute pool. Parts are disjoint chunks that the caller zipped together.
pub fn for_each_part<T, I, F>(threads: Threads, parts: I, work: F)
where
    T: Send,
    I: Iterator<Item = T>,
    F: Fn(T) + Sync,
{
    match threads {
        Threads::One => parts.for_each(work),
        Threads::All => {
            let work = &work;
            pool().scope(|scope| {
                for part in parts {
                    scope.spawn(async move { work(part) });
                }
            });
        }
    }
}

/// Puts the calling thread at the lowest scheduling priority (niceness 19), for work that must
/// not take a core from the simulation: the app's clip encoder, on a 2-core machine where the
/// simulation and the software renderer already take both. Linux with glibc only; elsewhere it
/// does nothing. Returns whether the priority was lowered.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn lower_this_thread_priority() -> bool {
    // SAFETY: `gettid` and `setpriority` take integers only and have no preconditions; on Linux
    // PRIO_PROCESS with a thread id changes that one thread's niceness. No safe wrapper exists in
    // the crates this project uses; the measured win (simulate with and without it while a clip
    // records) is in docs/RESULTS.md, "Recording a clip".
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19) == 0
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn lower_this_thread_priority() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_part_runs_once_on_all_threads() {
        let data: Vec<usize> = (0..100_000).collect();
        let sum = AtomicUsize::new(0);
        let c = chunk_len(Threads::All, data.len());
        for_each_part(Threads::All, data.chunks(c), |chunk| {
            sum.fetch_add(chunk.iter().sum::<usize>(), Ordering::Relaxed);
        });
        assert_eq!(sum.into_inner(), data.iter().sum::<usize>());
    }
}

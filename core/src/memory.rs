//! Memory as part of the layout story: what a layout holds per entity, what the machine can still
//! give us before an allocation turns into an OOM kill, and handing freed memory back to the OS
//! when a population shrinks. Resident and available memory come from `sysinfo` (Linux, macOS,
//! Windows); where it cannot tell, callers get `None` and say "unknown".

use sysinfo::{MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate, System};

/// Bytes a layout holds, split the way the studies split it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// The fields and the id the caller asked to store, nothing else.
    pub payload_bytes: u64,
    /// What the layout has allocated for them: Vec growth slack, per-box allocator headers,
    /// Bevy's tables, change ticks and entity bookkeeping. Counted from capacities, not from the OS,
    /// except where [`MemoryUse::modelled`] says it is a model.
    pub allocated_bytes: u64,
    /// Whether `allocated_bytes` is in part a model rather than read from capacities: an ECS
    /// library's storage (its tables, sparse sets and bookkeeping, as its design says they are
    /// laid out; no library here reports its capacities), or each box's allocator chunk (glibc's
    /// rounding, [`glibc_malloc_chunk_bytes`]). Printed as "modelled" wherever the figure is.
    pub modelled: bool,
}

impl MemoryUse {
    pub fn per_entity(self, len: usize) -> (f64, f64) {
        if len == 0 {
            return (0.0, 0.0);
        }
        (
            self.payload_bytes as f64 / len as f64,
            self.allocated_bytes as f64 / len as f64,
        )
    }
}

/// Bytes the system would hand out before it starts reclaiming hard, within this process's
/// cgroup limit (`memory.max`) where there is one, or `None` where the OS does not say, in which
/// case only `try_reserve` and [`can_allocate`] guard us.
pub fn available_bytes() -> Option<u64> {
    let mut system = System::new();
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    let machine = Some(system.available_memory()).filter(|&b| b > 0);
    let cgroup = system.cgroup_limits().map(|limits| limits.free_memory);
    match (machine, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// The most bytes one allocation could get now, to within 1/64: what an address-space limit
/// leaves, found by asking (some 40 probes, none of them touched).
pub fn largest_allocation() -> usize {
    let (mut granted, mut refused) = (0usize, isize::MAX as usize);
    while refused - granted > refused / 64 {
        let mid = granted + (refused - granted) / 2;
        if can_allocate(mid).is_ok() {
            granted = mid;
        } else {
            refused = mid;
        }
    }
    granted
}

/// Whether `bytes` more could be allocated now: asks the allocator for them and gives them back
/// untouched (no page is faulted in). Catches what `available_bytes` cannot see, such as an
/// address-space limit (`ulimit -v`, `prlimit --as`), for storages that allocate piece by piece
/// (Bevy's tables, one box per entity), where a failure later would abort the process.
pub fn can_allocate(bytes: usize) -> Result<(), std::collections::TryReserveError> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes)
}

/// The machine's installed memory in bytes, `None` where the OS does not say.
pub fn total_bytes() -> Option<u64> {
    let mut system = System::new();
    system.refresh_memory_specifics(MemoryRefreshKind::nothing().with_ram());
    Some(system.total_memory()).filter(|&b| b > 0)
}

/// This process's resident set size in bytes, for the app's memory readout and the bench.
pub fn resident_bytes() -> Option<u64> {
    let pid = Pid::from_u32(std::process::id());
    let mut system = System::new();
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        false,
        ProcessRefreshKind::nothing().with_memory(),
    );
    system.process(pid).map(|p| p.memory()).filter(|&b| b > 0)
}

/// Peak resident set size of this process in bytes, where the kernel keeps one (Linux's
/// `VmHWM`; `sysinfo` has no peak). `None` elsewhere.
pub fn peak_resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    text.lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// Asks the allocator to hand memory that was freed back to the OS. glibc keeps freed chunks in
/// its arenas, and returns only the top of a heap by itself: without this, a boxed layout shrunk
/// from 1M to 10k entities keeps its resident memory, and a replaced layout freed on another
/// thread stays in that thread's arena (docs/results/memory.md, "Memory after shrinking").
/// Elsewhere (macOS, Windows, musl) the allocators return memory themselves, and this does
/// nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_to_os() {
    // SAFETY: `malloc_trim` takes no pointers and has no preconditions; glibc serializes it with
    // every other allocator call. No safe wrapper exists; what it buys is the `shrink` bench
    // experiment's resident memory after 1M -> 10k (docs/results/memory.md).
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_to_os() {}

/// Makes glibc serve every allocation of 1 MiB or more with its own mapping. By default glibc
/// raises that threshold as big blocks are freed (up to 32 MiB), and a growing array below it
/// lives in the heap, where `realloc` copies it; in a mapping, `realloc` remaps pages instead.
/// It shortens the longest frame of Bevy's growth to 10M entities, the one that doubles the
/// table past 8.4M (`bench --only grow`: docs/results/switching.md, "On another machine: the run
/// before pacing"). Called once, at the start of `main`; elsewhere it does nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn map_large_allocations() {
    mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn map_large_allocations() {}

/// Makes glibc serve every allocation of a page or more with a fresh mapping of its own, unless
/// its heap can serve it from memory it already holds, and keep no spare room at the top of its
/// heaps, where it would otherwise carve such a block right after whatever came before it. So a
/// big block starts a page at the offset of glibc's chunk header, whatever was allocated before
/// it: what the counting process runs with (`count-frames` says why). Called before any other
/// thread exists; elsewhere it does nothing.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn map_page_allocations() {
    mallopt(libc::M_MMAP_THRESHOLD, 4096);
    mallopt(libc::M_TOP_PAD, 0);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn map_page_allocations() {}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn mallopt(param: libc::c_int, value: libc::c_int) {
    // SAFETY: `mallopt` takes two integers and has no preconditions; its callers call it before
    // any other thread exists.
    unsafe {
        libc::mallopt(param, value);
    }
}

/// What glibc's malloc takes for a small allocation: an 8-byte header, rounded to 16, at least
/// 32. Used to count what `Box` costs beyond its payload. An estimate labelled as glibc's: macOS's
/// and Windows' allocators round differently (to 16 bytes, no header in the chunk).
pub fn glibc_malloc_chunk_bytes(size: usize) -> u64 {
    ((size + 8).div_ceil(16) * 16).max(32) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_reports_its_memory() {
        let resident = resident_bytes().expect("resident memory is known on the CI machine");
        let total = total_bytes().expect("installed memory is known");
        let available = available_bytes().expect("available memory is known");
        assert!(
            resident > 1 << 20 && resident < total,
            "{resident} of {total}"
        );
        assert!(available <= total);
    }

    #[test]
    fn malloc_chunks_round_like_glibc() {
        assert_eq!(glibc_malloc_chunk_bytes(32), 48);
        assert_eq!(glibc_malloc_chunk_bytes(64), 80);
        assert_eq!(glibc_malloc_chunk_bytes(1), 32);
    }
}

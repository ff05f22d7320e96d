//! The estimate that refuses a count before anything is allocated
//! (`Swarm::estimated_bytes_per_entity`: the layout's and the swarm's own) covers what every CPU layout really takes from the
//! heap: glibc's live bytes (`mallinfo2`), Rust's and the C library's (flecs) alike, measured
//! around growing a swarm to counts just past a doubling, where a growing array leaves the most
//! room unused.
//!
//! One test in a binary of its own: the heap figure is the whole process's, and no other test
//! may allocate while it measures.

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::workload::SEED;

/// Bytes glibc has handed out and not had back: its arenas' chunks in use and its own mappings.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn heap_in_use() -> Option<u64> {
    // SAFETY: `mallinfo2` takes no arguments and returns a struct of counters by value; glibc
    // serializes it with the allocator. No safe wrapper exists, and nothing else counts what
    // flecs' C code allocates.
    let info = unsafe { libc::mallinfo2() };
    Some((info.uordblks + info.hblkhd) as u64)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn heap_in_use() -> Option<u64> {
    None
}

/// Counts just past a power of two (every `Vec` and table has just doubled), and one between:
/// large enough that the swarm's spawn buffers, which do not grow with the count, are a small
/// part of the heap taken.
const COUNTS: [usize; 3] = [262_145, 400_000, 524_289];

#[test]
fn every_estimate_covers_what_the_layout_takes_from_the_heap() {
    if heap_in_use().is_none() {
        eprintln!("skipped: glibc's mallinfo2 is the only whole-heap count this test has");
        return;
    }
    let mut short = Vec::new();
    for kind in LayoutKind::CPU {
        for n in COUNTS {
            let mut swarm = Swarm::<f32>::new(kind, SEED).unwrap();
            swarm.wait_for_frees();
            let empty = heap_in_use().unwrap();
            swarm.resize(n).unwrap();
            let taken = heap_in_use().unwrap().saturating_sub(empty);
            let per_entity = Swarm::<f32>::estimated_bytes_per_entity(kind);
            // The spawn buffers are the swarm's whatever the count; the estimate is per entity.
            let estimate = (per_entity * n + Swarm::<f32>::SPAWN_BUFFER_BYTES) as u64;
            eprintln!(
                "{kind:<15} {n:>7}: {:>6.1} B/entity taken, {per_entity:>5} estimated",
                taken as f64 / n as f64,
            );
            if taken > estimate {
                short.push(format!(
                    "{kind} at {n}: took {taken} B of heap, estimated {estimate} B ({:.1} against {per_entity} per entity)",
                    taken as f64 / n as f64,
                ));
            }
        }
    }
    assert!(
        short.is_empty(),
        "estimates below the heap taken:\n{}",
        short.join("\n")
    );
}

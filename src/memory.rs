//! Memory as part of the layout story: what a layout holds per entity, and what the machine can
//! still give us before an allocation turns into an OOM kill.

/// Bytes a layout holds, split the way the studies split it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// The fields and the id the caller asked to store, nothing else.
    pub payload_bytes: u64,
    /// What the layout has allocated for them: Vec growth slack, per-box allocator headers,
    /// Bevy's tables, change ticks and entity bookkeeping. Counted from capacities, not from the OS.
    pub allocated_bytes: u64,
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

/// Bytes the system would hand out before it starts reclaiming hard (`MemAvailable`), or `None`
/// where that cannot be read (non-Linux), in which case only `try_reserve` guards us.
pub fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_field_kib(&text, "MemAvailable:").map(|kib| kib * 1024)
}

/// This process's resident set size in bytes (Linux), for the app's memory readout and the bench.
pub fn resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    meminfo_field_kib(&text, "VmRSS:").map(|kib| kib * 1024)
}

/// Peak resident set size of this process in bytes (Linux).
pub fn peak_resident_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    meminfo_field_kib(&text, "VmHWM:").map(|kib| kib * 1024)
}

fn meminfo_field_kib(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// What glibc's malloc really takes for a small allocation: an 8-byte header, rounded to 16,
/// at least 32. Used to count what `Box` costs beyond its payload.
pub fn malloc_chunk_bytes(size: usize) -> u64 {
    ((size + 8).div_ceil(16) * 16).max(32) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_meminfo_lines() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:   1234 kB\n";
        assert_eq!(meminfo_field_kib(text, "MemAvailable:"), Some(1234));
        assert_eq!(meminfo_field_kib(text, "Nope:"), None);
    }

    #[test]
    fn malloc_chunks_round_like_glibc() {
        assert_eq!(malloc_chunk_bytes(32), 48);
        assert_eq!(malloc_chunk_bytes(64), 80);
        assert_eq!(malloc_chunk_bytes(1), 32);
    }
}

//! Where a column's bytes sit, for the experiments that ask whether placement moves a timing:
//! the offset of its first byte inside a 4 KiB page (two streams whose offsets match, one of
//! them stored to, can meet the CPU's 4K-aliasing stall) and how much of the mapping holding it
//! is on transparent huge pages (Linux's `/proc/self/smaps`; `None` elsewhere).

/// The offset of `addr` inside its 4 KiB page.
pub fn page_offset(addr: usize) -> usize {
    addr % 4096
}

/// KiB of the mapping that holds `addr` on transparent huge pages, read from
/// `/proc/self/smaps`; `None` where that file cannot be read or holds no such mapping.
pub fn huge_kib_at(addr: usize) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    huge_kib_in(&smaps, addr)
}

fn huge_kib_in(smaps: &str, addr: usize) -> Option<u64> {
    let mut inside = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ')
            && let Some((start, end)) = range.split_once('-')
            && let (Ok(start), Ok(end)) = (
                usize::from_str_radix(start, 16),
                usize::from_str_radix(end, 16),
            )
        {
            inside = (start..end).contains(&addr);
            continue;
        }
        if inside && let Some(kib) = line.strip_prefix("AnonHugePages:") {
            return kib.trim().trim_end_matches("kB").trim().parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_holding_an_address_is_found() {
        let smaps = "\
7f0000000000-7f0000200000 rw-p 00000000 00:00 0
Size:               2048 kB
AnonHugePages:         0 kB
7f0000200000-7f0000600000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      2048 kB
";
        assert_eq!(huge_kib_in(smaps, 0x7f0000000010), Some(0));
        assert_eq!(huge_kib_in(smaps, 0x7f0000300000), Some(2048));
        assert_eq!(huge_kib_in(smaps, 0x10), None);
        assert_eq!(page_offset(0x7f0000001010), 16);
        // This process's own stack is in some mapping.
        let local = 0u8;
        if std::path::Path::new("/proc/self/smaps").exists() {
            assert!(huge_kib_at(std::ptr::from_ref(&local).addr()).is_some());
        }
    }
}

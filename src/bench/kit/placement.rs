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

/// The physical frame number behind the page holding `addr`, from `/proc/self/pagemap`: `None`
/// where the page is not present, the file cannot be read, or the kernel hides frame numbers
/// (it shows zeros to a process without `CAP_SYS_ADMIN`).
pub fn frame_of(addr: usize) -> Option<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut pagemap = std::fs::File::open("/proc/self/pagemap").ok()?;
    pagemap
        .seek(SeekFrom::Start((addr / 4096 * 8) as u64))
        .ok()?;
    let mut entry = [0u8; 8];
    pagemap.read_exact(&mut entry).ok()?;
    let entry = u64::from_le_bytes(entry);
    let present = entry >> 63 == 1;
    let frame = entry & ((1 << 55) - 1);
    (present && frame != 0).then_some(frame)
}

/// How often streams that advance in step meet in the same L2 sets: at `samples` positions
/// spread over the columns (each column given by its start address, all `len` bytes long), the
/// share of positions where two or more columns' pages have the same colour, the physical-page
/// bits of the set index (`colours` of them: an L2 of 2 MiB and 16 ways has 128 KiB a way, 32
/// colours of 4 KiB). Streams on pages of one colour at once compete for the same sets.
/// `None` when frame numbers are hidden.
pub fn colour_clashes(columns: &[usize], len: usize, samples: usize, colours: u64) -> Option<f64> {
    let mut clashes = 0;
    for k in 0..samples {
        let at = len / samples * k;
        let mut seen: Vec<u64> = Vec::with_capacity(columns.len());
        for &start in columns {
            seen.push(frame_of(start + at)? % colours);
        }
        seen.sort_unstable();
        if seen.windows(2).any(|w| w[0] == w[1]) {
            clashes += 1;
        }
    }
    Some(clashes as f64 / samples.max(1) as f64)
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

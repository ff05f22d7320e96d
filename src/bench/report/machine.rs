//! The machine line printed with every report: a number means little without the CPU, caches,
//! compiler and build it came from.

use serde::{Deserialize, Serialize};
use sysinfo::{CpuRefreshKind, RefreshKind, System};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub pool_threads: usize,
    pub caches: String,
    /// Data and unified cache sizes in bytes, by level name (`L1d`, `L2`, `L3`), where the OS
    /// says; the bench's ns-per-entity plot marks them.
    #[serde(default)]
    pub cache_bytes: Vec<(String, u64)>,
    pub memory_gib: f64,
    pub rustc: String,
    pub target_features: String,
    /// The SIMD tiers the kernels can run on this CPU (`baseline, avx2, avx512`).
    #[serde(default)]
    pub simd_tiers: String,
    pub profile: String,
}

impl Machine {
    pub fn detect() -> Self {
        let system =
            System::new_with_specifics(RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing()));
        let cpu = system
            .cpus()
            .first()
            .map(|c| c.brand().trim().to_string())
            .filter(|brand| !brand.is_empty())
            .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH));
        let memory_gib =
            crate::memory::total_bytes().map_or(0.0, |b| b as f64 / (1u64 << 30) as f64);
        let cache_bytes = cache_bytes();
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pool_threads: crate::threads::core_count(),
            caches: caches_label(&cache_bytes),
            cache_bytes,
            memory_gib,
            rustc: env!("ENTITY_LAYOUTS_RUSTC").to_string(),
            target_features: crate::simd::target_features(),
            simd_tiers: crate::simd::available_names(),
            profile: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
        }
    }

    pub fn line(&self) -> String {
        format!(
            "{} | {} cores ({} pool threads) | caches {} | {:.0} GiB | {} | {} | SIMD tiers {} | {} build",
            self.cpu,
            self.cores,
            self.pool_threads,
            self.caches,
            self.memory_gib,
            self.rustc,
            self.target_features,
            self.simd_tiers,
            self.profile
        )
    }
}

/// `L1d 48K, L2 1024K, L3 32768K`, or `unknown` where the OS does not say.
fn caches_label(caches: &[(String, u64)]) -> String {
    if caches.is_empty() {
        return "unknown".into();
    }
    caches
        .iter()
        .map(|(level, bytes)| format!("{level} {}K", bytes / 1024))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Data and unified cache sizes of the first core: from sysfs on Linux, from `sysctl` on macOS,
/// none elsewhere.
fn cache_bytes() -> Vec<(String, u64)> {
    if cfg!(target_os = "macos") {
        return ["L1d", "L2", "L3"]
            .into_iter()
            .filter_map(|level| {
                let key = format!("hw.{}cachesize", level.to_ascii_lowercase());
                let out = std::process::Command::new("sysctl")
                    .args(["-n", &key])
                    .output()
                    .ok()?;
                let bytes = String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse::<u64>()
                    .ok()?;
                (bytes > 0).then(|| (level.to_string(), bytes))
            })
            .collect();
    }
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let mut out = Vec::new();
    for i in 0..8 {
        let read = |f: &str| std::fs::read_to_string(format!("{base}/index{i}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let suffix = match kind.trim() {
            "Data" => "d",
            "Unified" => "",
            _ => continue, // instruction caches hold no entities
        };
        let size = size.trim();
        let bytes = match size.strip_suffix('K') {
            Some(k) => k.parse::<u64>().ok().map(|k| k * 1024),
            None => match size.strip_suffix('M') {
                Some(m) => m.parse::<u64>().ok().map(|m| m << 20),
                None => size.parse().ok(),
            },
        };
        if let Some(bytes) = bytes {
            out.push((format!("L{}{suffix}", level.trim()), bytes));
        }
    }
    out
}

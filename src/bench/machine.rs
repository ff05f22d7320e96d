//! The machine line printed with every report: a number means little without the CPU, caches,
//! compiler and build it came from.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub pool_threads: usize,
    pub caches: String,
    pub memory_gib: f64,
    pub rustc: String,
    pub target_features: String,
    pub profile: String,
}

impl Machine {
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_string())
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:"))
                    .and_then(|r| r.split_whitespace().next()?.parse::<f64>().ok())
            })
            .map_or(0.0, |kib| kib / (1024.0 * 1024.0));
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pool_threads: crate::threads::core_count(),
            caches: caches(),
            memory_gib,
            rustc: env!("ENTITY_LAYOUTS_RUSTC").to_string(),
            target_features: target_features(),
            profile: if cfg!(debug_assertions) {
                "debug".into()
            } else {
                "release".into()
            },
        }
    }

    pub fn line(&self) -> String {
        format!(
            "{} | {} cores ({} pool threads) | caches {} | {:.0} GiB | {} | {} | {} build",
            self.cpu,
            self.cores,
            self.pool_threads,
            self.caches,
            self.memory_gib,
            self.rustc,
            self.target_features,
            self.profile
        )
    }
}

/// Cache sizes of cpu0 as the kernel reports them, e.g. `L1d 48K, L2 2048K, L3 32768K`.
fn caches() -> String {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let mut out = Vec::new();
    for i in 0..8 {
        let read = |f: &str| std::fs::read_to_string(format!("{base}/index{i}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        let kind = match kind.trim() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        };
        out.push(format!("L{}{} {}", level.trim(), kind, size.trim()));
    }
    if out.is_empty() {
        "unknown".into()
    } else {
        out.join(", ")
    }
}

/// The SIMD features this binary was compiled for (not what the CPU could do).
fn target_features() -> String {
    let mut on = vec![std::env::consts::ARCH];
    macro_rules! feature {
        ($($f:literal),*) => { $( if cfg!(target_feature = $f) { on.push($f); } )* };
    }
    feature!("sse2", "sse4.2", "avx", "avx2", "fma", "avx512f", "neon");
    on.join("+")
}

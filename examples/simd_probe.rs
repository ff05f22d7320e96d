use entity_layouts::simd::{SimdTier, available};
use entity_layouts::{Dt, LayoutKind, Swarm, Threads};
use std::time::Instant;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10_000);
    for kind in [
        LayoutKind::Soa,
        LayoutKind::Chunks,
        LayoutKind::EcsContiguous,
        LayoutKind::Aos,
    ] {
        let mut sums = vec![];
        for &tier in available() {
            let mut s = Swarm::<f32>::with_count(kind, 1, n).unwrap();
            s.set_simd(tier);
            for _ in 0..20 {
                s.step(Dt::default(), Threads::One);
            }
            let reps = (20_000_000 / n).max(3);
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = Instant::now();
                for _ in 0..reps {
                    s.step(Dt::default(), Threads::One);
                }
                best = best.min(t.elapsed().as_secs_f64() / reps as f64 / n as f64 * 1e9);
            }
            sums.push(format!("{}={:.3}", tier.name(), best));
            let _ = SimdTier::Baseline;
        }
        println!("{n} {kind}: {}", sums.join(" "));
    }
}

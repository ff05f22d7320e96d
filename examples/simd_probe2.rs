use entity_layouts::{Dt, LayoutKind, Swarm, Threads};
use std::time::Instant;
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    for kind in [LayoutKind::Soa, LayoutKind::Chunks, LayoutKind::Aos] {
        let mut s = Swarm::<f32>::with_count(kind, 1, n).unwrap();
        for _ in 0..10 {
            s.step(Dt::default(), Threads::One);
        }
        let reps = (20_000_000 / n).max(3);
        let (mut bm, mut br) = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..reps {
                s.step_move(Dt::default(), Threads::One);
            }
            bm = bm.min(t.elapsed().as_secs_f64() / reps as f64 / n as f64 * 1e9);
            let t = Instant::now();
            for _ in 0..reps {
                s.step_regen(Dt::default(), Threads::One);
            }
            br = br.min(t.elapsed().as_secs_f64() / reps as f64 / n as f64 * 1e9);
        }
        println!("{n} {kind}: move={bm:.3} regen={br:.3}");
    }
}

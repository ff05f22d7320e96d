//! The gpu layout against the CPU's SoA, on whatever adapter this machine has (lavapipe in CI).
//! Skipped with a message where no adapter exists, except under CI, where that is a failure.

use entity_layouts::driver::Driver;
use entity_layouts::{Action, EntityState, LayoutKind};

fn adapter_or_skip() -> bool {
    match entity_layouts::gpu::context::availability() {
        Ok(()) => true,
        Err(reason) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: {reason}");
            false
        }
        Err(reason) => panic!("CI must have a GPU adapter (lavapipe): {reason}"),
    }
}

fn driver(kind: LayoutKind, n: usize, churn: usize) -> Driver {
    let mut d = Driver::new(kind, 7)
        .unwrap()
        .with_chunks(usize::MAX, 30_000);
    d.apply(&Action::Count(n)).unwrap();
    d.apply(&Action::Churn(churn)).unwrap();
    d
}

/// Largest difference in units in the last place between two states, field by field.
fn ulps(a: &EntityState<f32>, b: &EntityState<f32>) -> u32 {
    let key = |v: f32| {
        let bits = v.to_bits() as i32;
        if bits < 0 { i32::MIN - bits } else { bits }
    };
    a.to_array()
        .iter()
        .zip(b.to_array())
        .map(|(&x, y)| key(x).abs_diff(key(y)))
        .max()
        .unwrap_or(0)
}

#[test]
fn cpu_to_gpu_to_cpu_at_100k_with_churn_keeps_every_entity() {
    if !adapter_or_skip() {
        return;
    }
    let mut gpu = driver(LayoutKind::Soa, 100_000, 1_000);
    let mut reference = driver(LayoutKind::Soa, 100_000, 1_000);
    let mut worst = 0;
    for frame in 0..60 {
        if frame == 5 {
            gpu.apply(&Action::Layout(LayoutKind::Gpu)).unwrap();
        }
        if frame == 40 {
            assert_eq!(gpu.kind(), LayoutKind::Gpu);
            gpu.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
        }
        gpu.frame_step();
        reference.frame_step();
        let (a, b) = (gpu.export(), reference.export());
        assert_eq!(
            a.ids, b.ids,
            "frame {frame}: the same entities in the same order"
        );
        let frame_worst = a
            .states
            .iter()
            .zip(&b.states)
            .map(|(a, b)| ulps(a, b))
            .max();
        worst = worst.max(frame_worst.unwrap_or(0));
    }
    assert_eq!(gpu.kind(), LayoutKind::Aos);
    eprintln!("largest difference: {worst} ulps");
    assert_eq!(worst, 0);
}

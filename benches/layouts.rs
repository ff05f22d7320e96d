//! Regression benchmarks (criterion): the same kernels the `bench` subcommand reports, sized so
//! `cargo bench` finishes in minutes. Compare runs of the same machine, not across machines.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::threads::Threads;
use entity_layouts::workload::Dt;

const SEED: u64 = 42;

/// One frame (move + regen) per layout, one thread, at 10k and 1M entities.
fn frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame_f32_1thread");
    group
        .sample_size(15)
        .measurement_time(Duration::from_secs(2));
    for n in [10_000usize, 1_000_000] {
        for kind in LayoutKind::CPU {
            let mut swarm = Swarm::<f32>::with_count(kind, SEED, n).expect("fits in memory");
            group.bench_with_input(BenchmarkId::new(kind.name(), n), &n, |b, _| {
                b.iter(|| {
                    swarm.step(Dt::default(), Threads::One);
                    black_box(&mut swarm);
                })
            });
        }
    }
    group.finish();
}

/// The same frame on all cores, where threading is meant to pay: 1M entities.
fn frame_all_threads(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame_f32_all_threads");
    group
        .sample_size(15)
        .measurement_time(Duration::from_secs(2));
    for kind in [
        LayoutKind::EcsTable,
        LayoutKind::EcsContiguous,
        LayoutKind::Soa,
        LayoutKind::Aos,
        LayoutKind::Boxed,
    ] {
        let mut swarm = Swarm::<f32>::with_count(kind, SEED, 1_000_000).expect("fits in memory");
        group.bench_function(BenchmarkId::new(kind.name(), 1_000_000), |b| {
            b.iter(|| {
                swarm.step(Dt::default(), Threads::All);
                black_box(&mut swarm);
            })
        });
    }
    group.finish();
}

/// Churn: spawn and swap-remove 10k per frame from a base of 100k.
fn churn(c: &mut Criterion) {
    let mut group = c.benchmark_group("churn_10k_of_100k");
    group.sample_size(15);
    for kind in [LayoutKind::EcsTable, LayoutKind::Soa, LayoutKind::Boxed] {
        let mut swarm = Swarm::<f32>::with_count(kind, SEED, 100_000).expect("fits in memory");
        group.bench_function(kind.name(), |b| {
            b.iter(|| swarm.churn(10_000).expect("within limits"))
        });
    }
    group.finish();
}

/// Switching layout with every entity's state carried over, at 1M (the app's layout switch).
fn switch(c: &mut Criterion) {
    let mut group = c.benchmark_group("switch_1m");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    for (from, to) in [
        (LayoutKind::Soa, LayoutKind::Aos),
        (LayoutKind::Soa, LayoutKind::EcsTable),
        (LayoutKind::EcsTable, LayoutKind::Soa),
    ] {
        let mut swarm = Swarm::<f32>::with_count(from, SEED, 1_000_000).expect("fits in memory");
        group.bench_function(format!("{from}->{to}"), |b| {
            b.iter(|| {
                swarm.switch_to(to).expect("fits in memory");
                swarm.switch_to(from).expect("fits in memory");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, frame, frame_all_threads, churn, switch);
criterion_main!(benches);

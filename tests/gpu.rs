//! The gpu layout against the CPU's SoA, on whatever adapter this machine has (lavapipe in CI).
//! Skipped with a message where no adapter exists, except under CI, where that is a failure.

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::driver::Driver;
use entity_layouts::workload::EntityState;

mod support;

fn adapter_or_skip() -> bool {
    support::gpu_adapter()
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
    // Out of the GPU into the chunked layout on the widest SIMD tier: the same bits as SoA's
    // baseline all the same.
    gpu.apply(&Action::Simd(entity_layouts::simd::SimdChoice::Best))
        .unwrap();
    let mut worst = 0;
    for frame in 0..60 {
        if frame == 5 {
            gpu.apply(&Action::Layout(LayoutKind::Gpu)).unwrap();
        }
        if frame == 40 {
            assert_eq!(gpu.swarm().kind(), LayoutKind::Gpu);
            gpu.apply(&Action::Layout(LayoutKind::Chunks)).unwrap();
        }
        gpu.frame_step();
        reference.frame_step();
        let (a, b) = (gpu.swarm().export(), reference.swarm().export());
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
        if frame == 20 {
            // The points the compute pass packed, read back, are the ones SoA's gather packs.
            assert_eq!(gpu.swarm().kind(), LayoutKind::Gpu);
            let (mut on_gpu, mut on_cpu) = (Vec::new(), Vec::new());
            gpu.gather_points(&mut on_gpu);
            reference.gather_points(&mut on_cpu);
            assert_eq!(on_gpu, on_cpu);
        }
    }
    assert_eq!(gpu.swarm().kind(), LayoutKind::Chunks);
    eprintln!("largest difference: {worst} ulps");
    assert_eq!(worst, 0);
}

#[test]
fn the_adapter_limit_is_refused_by_name_and_nothing_changes() {
    if !adapter_or_skip() {
        return;
    }
    let limit =
        entity_layouts::runtime::catalog::capacity_limit(LayoutKind::Gpu).expect("an adapter");
    let mut d = driver(LayoutKind::Gpu, 1_000, 0);
    d.frame_step();
    let before = d.swarm().checksum();
    if limit.max_entities < 100_000_000 {
        let err = d
            .apply(&Action::Count(limit.max_entities + 1))
            .unwrap_err()
            .to_string();
        assert!(err.contains("max_"), "the limit is named: {err}");
        assert!(err.contains(&limit.max_entities.to_string()), "{err}");
    }
    let err = d
        .apply(&Action::Count(100_000_001))
        .unwrap_err()
        .to_string();
    assert!(err.contains("100000000"), "{err}");
    assert_eq!((d.swarm().len(), d.swarm().checksum()), (1_000, before));
}

#[test]
fn past_ten_million_only_the_gpu_layout_takes_it_and_cannot_leave_with_it() {
    if !adapter_or_skip() {
        return;
    }
    let n = 12_000_000;
    let mut cpu = driver(LayoutKind::Soa, 0, 0);
    let err = cpu.apply(&Action::Count(n)).unwrap_err().to_string();
    assert!(err.contains("soa layout's maximum of 10000000"), "{err}");
    let mut gpu = driver(LayoutKind::Gpu, 0, 0);
    gpu.apply(&Action::Count(n)).unwrap();
    assert_eq!(gpu.target(), n);
    let err = gpu
        .apply(&Action::Layout(LayoutKind::Aos))
        .unwrap_err()
        .to_string();
    assert!(err.contains("aos layout's maximum"), "{err}");
    assert_eq!(gpu.requested_layout(), LayoutKind::Gpu);
}

#[test]
fn f64_is_refused_with_the_reason() {
    let err = Driver::<f64>::new(LayoutKind::Gpu, 1)
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("f32 only"), "{err}");
}

/// `verify --gpu`'s comparison, shorter: on a software adapter (lavapipe, CI) every field is
/// bit-identical after 600 frames, measured; elsewhere the bound is what `verify --gpu` reports.
#[test]
fn six_hundred_frames_on_the_gpu_match_soa() {
    if !adapter_or_skip() {
        return;
    }
    let config = entity_layouts::tools::verify::VerifyConfig {
        count: 5_000,
        frames: 600,
        ..Default::default()
    };
    let software = entity_layouts::runtime::gpu::context::shared()
        .unwrap()
        .is_software();
    let runs = entity_layouts::tools::verify::compare_gpu(&config).unwrap();
    let sorted = runs.iter().filter(|r| r.name.contains("sorted")).count();
    assert_eq!(sorted, 2, "a sorted run with and without churn");
    // The device's neighbour grid and pass, in each form, with and without churn.
    let near = runs
        .iter()
        .filter(|r| r.name.contains("neighbours"))
        .count();
    assert_eq!(near, 4, "both forms, with and without churn");
    for run in runs {
        assert!(run.same_entities, "{}", run.name);
        let expected = if run.name.contains("sorted") {
            entity_layouts::runtime::swarm::Order::Group
        } else {
            entity_layouts::runtime::swarm::Order::Id
        };
        assert_eq!(run.order, expected, "{}", run.name);
        assert_eq!(run.entities, 5_000);
        if software {
            assert_eq!(
                run.max_ulps, 0,
                "{}: {} entities differ",
                run.name, run.differing
            );
        }
    }
}

/// What the device's neighbour pass found comes back a frame or two late, and it is what the
/// CPU's pass found on the same frame: the same grid, the same candidates, the same neighbours.
/// At 300k, some entities sit where an f32 guess of their cell is one off: the device corrects
/// it against the cells' edges, or the candidates would differ.
#[test]
fn the_device_grid_finds_what_the_cpu_grid_finds() {
    use entity_layouts::neighbours::AvoidForm;
    use entity_layouts::runtime::swarm::Swarm;
    use entity_layouts::threads::Threads;
    use entity_layouts::workload::{Dt, SEED};
    if !adapter_or_skip() {
        return;
    }
    for (n, form) in [
        (20_000, AvoidForm::Idiomatic),
        (20_000, AvoidForm::Tuned),
        (300_000, AvoidForm::Tuned),
    ] {
        let mut gpu = Swarm::<f32>::with_count(LayoutKind::Gpu, SEED, n).unwrap();
        let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, n).unwrap();
        let mut found = Vec::new();
        for s in [&mut gpu, &mut reference] {
            s.set_avoid_form(form);
        }
        for _ in 0..4 {
            for s in [&mut gpu, &mut reference] {
                s.step_avoid(Dt::default(), Threads::One);
                s.step(Dt::default(), Threads::One);
            }
            found.push(reference.neighbour_counts());
            gpu.finish_device_work();
        }
        let on_device = gpu.neighbour_counts();
        assert!(on_device.candidates > 0, "{n} {form}: nothing came back");
        let same = |c: &entity_layouts::neighbours::PassCounts| {
            (c.entities, c.candidates, c.neighbours, c.most, c.cells)
        };
        assert!(
            found.iter().any(|c| same(c) == same(&on_device)),
            "{n} {form}: {on_device:?} is none of the CPU's {found:?}"
        );
    }
}

/// The gpu layout sorts as the CPU layouts do (fresh buffers filled in the new order, read a
/// batch at a time by a gather on the device): every entity, state and target is kept, at once
/// and spread over steps with churn and seek between them, against SoA in id order.
#[test]
fn a_reorder_on_the_gpu_keeps_every_entity_state_and_target() {
    use entity_layouts::runtime::swarm::{Order, Swarm};
    use entity_layouts::threads::Threads;
    use entity_layouts::workload::{Dt, SEED};
    if !adapter_or_skip() {
        return;
    }
    let mut gpu = Swarm::<f32>::with_count(LayoutKind::Gpu, SEED, 20_000).unwrap();
    let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, SEED, 20_000).unwrap();
    let by_id = |swarm: &Swarm<f32>| {
        let export = swarm.export();
        let mut pairs: Vec<(u64, [u32; 8])> = export
            .ids
            .iter()
            .zip(&export.states)
            .map(|(&id, s)| (id, s.to_array().map(f32::to_bits)))
            .collect();
        pairs.sort_unstable_by_key(|p| p.0);
        pairs
    };
    let frame = |s: &mut Swarm<f32>| {
        s.step_seek(Dt::default(), Threads::One);
        s.step(Dt::default(), Threads::One);
    };
    for order in [Order::Group, Order::Id, Order::Group] {
        // At once.
        gpu.reorder(order).unwrap();
        assert_eq!(gpu.order(), order);
        gpu.check_targets().unwrap();
        for _ in 0..3 {
            frame(&mut gpu);
            frame(&mut reference);
        }
        assert_eq!(by_id(&gpu), by_id(&reference), "at once, {order}");
    }
    // Spread over steps, with churn and seek between them: the churn removes the same ids from
    // both when both are in the same logical order, so the reference is sorted alongside.
    reference.reorder(Order::Group).unwrap();
    gpu.begin_reorder(Order::Id).unwrap();
    reference.begin_reorder(Order::Id).unwrap();
    let mut steps = 0;
    while gpu.transition().is_some() {
        gpu.copy_step(1_500);
        reference.copy_step(1_500);
        for s in [&mut gpu, &mut reference] {
            s.churn(40).unwrap();
            frame(s);
        }
        gpu.check_targets().unwrap();
        steps += 1;
    }
    assert!(steps > 5, "spread over {steps} steps");
    assert_eq!(gpu.order(), Order::Id);
    assert_eq!(by_id(&gpu), by_id(&reference), "spread with churn");
}

/// `verify --gpu --fused`: against the CPU reference that rounds `a + b * c` once, by id. On a
/// software adapter, which rounds twice as the CPU does (measured: 0 ulps against SoA), the
/// unfused reference is bit-identical and the fused one is not, so the check can tell them apart.
#[test]
fn the_fused_reference_tells_a_fusing_gpu_from_one_that_does_not_fuse() {
    use entity_layouts::tools::verify::fused::Fusion;
    if !adapter_or_skip() {
        return;
    }
    let config = entity_layouts::tools::verify::VerifyConfig {
        count: 5_000,
        frames: 120,
        ..Default::default()
    };
    let software = entity_layouts::runtime::gpu::context::shared()
        .unwrap()
        .is_software();
    for (fusion, fuses) in [(Fusion::default(), false), (Fusion::ALL, true)] {
        let runs = entity_layouts::tools::verify::compare_gpu_fused(&config, fusion).unwrap();
        assert_eq!(runs.len(), 2, "with and without seek");
        for run in runs {
            assert!(run.same_entities, "{}", run.name);
            assert_eq!(run.entities, 5_000);
            if software {
                assert_eq!(
                    run.max_ulps > 0,
                    fuses,
                    "{}: {} ulps",
                    run.name,
                    run.max_ulps
                );
            }
        }
    }
}

/// The gpu layout asks the device whether its buffers were allocated through an error scope, and
/// the device is shared by every thread (the tests', the app's renderer's). Scopes must belong to
/// the thread that pushed them, or two threads growing a layout at once pop each other's: CI once
/// panicked with "error scopes must be popped in reverse order" in `verify`'s fused comparison.
#[test]
fn gpu_layouts_grown_on_several_threads_at_once_keep_their_own_error_scopes() {
    if !adapter_or_skip() {
        return;
    }
    let threads: Vec<_> = (0..4)
        .map(|seed| {
            std::thread::spawn(move || {
                for round in 1..=25 {
                    let mut d = driver(LayoutKind::Gpu, 0, 0);
                    for n in [round * 64, round * 640 + seed] {
                        d.apply(&Action::Count(n)).unwrap();
                        d.frame_step();
                        assert_eq!(d.swarm().len(), n);
                    }
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("a thread growing a gpu layout");
    }
}

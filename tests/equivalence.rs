//! The verify property as tests: every layout, on one thread and on all, with switches and with
//! churn, ends in the same state; and that state really moved.

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::catalog::AllLayouts;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::threads::Threads;
use entity_layouts::tools::verify::{VerifyConfig, run_suite};
use entity_layouts::workload::Dt;
use entity_layouts::workload::pack_point;

fn assert_all_agree<S: AllLayouts>(count: usize, frames: usize) {
    let config = VerifyConfig {
        count,
        frames,
        seed: 7,
        ..VerifyConfig::default()
    };
    for group in run_suite::<S>(&config).unwrap() {
        let bad = group.mismatches();
        assert!(bad.is_empty(), "n={count} {}: {bad:?}", group.name);
        // Every layout on 1 and all threads, every wider SIMD tier on the layouts compiled per
        // tier plus one run changing tier every frame, then switching at once and spread on
        // both; and every layout sorted by group, in the group without churn (the same states
        // as id order), or in a group of its own with churn.
        let wider = entity_layouts::simd::available().len() - 1;
        let per_tier = LayoutKind::CPU
            .iter()
            .filter(|k| k.has_simd_kernels())
            .count();
        let changing = usize::from(wider > 0);
        let layouts = LayoutKind::CPU.len();
        // With seek, the layouts with a tuned seek run it too: on both thread settings, sorted,
        // and one spread switching run.
        let tuned = if group.name.contains("seek") {
            LayoutKind::CPU
                .iter()
                .filter(|k| k.has_tuned_seek())
                .count()
        } else {
            0
        };
        let switching_tuned = usize::from(tuned > 0);
        // With the neighbours, every layout runs the tuned pass on both thread settings, and is
        // sorted by cell in both forms.
        let near = if group.name.contains("neighbours") {
            2 * layouts
        } else {
            0
        };
        let expected = if group.name.contains("sorted by group") {
            layouts + tuned
        } else if group.name.contains("sorted by cell") {
            near
        } else if group.name.contains("no churn") {
            3 * layouts + wider * per_tier + changing + 4 + 3 * tuned + switching_tuned + 2 * near
        } else {
            2 * layouts + wider * per_tier + changing + 4 + 2 * tuned + switching_tuned + near
        };
        assert_eq!(group.runs.len(), expected, "{}", group.name);
    }
}

#[test]
fn empty_single_and_odd_populations_agree_in_f32_and_f64() {
    for n in [0, 1, 2, 7, 1023] {
        assert_all_agree::<f32>(n, 7);
        assert_all_agree::<f64>(n, 7);
    }
}

/// Above the parallel chunk size, so `Threads::All` really splits the work into several tasks,
/// and not a multiple of the thread count or the chunk size.
#[test]
fn populations_split_across_tasks_agree() {
    assert_all_agree::<f32>(100_003, 4);
}

#[test]
fn stepping_changes_the_checksum_and_layouts_start_equal() {
    let dt = Dt::default();
    let reference = Swarm::<f32>::with_count(LayoutKind::Soa, 1, 5000).unwrap();
    for kind in LayoutKind::CPU {
        let mut swarm = Swarm::<f32>::with_count(kind, 1, 5000).unwrap();
        assert_eq!(
            swarm.export(),
            reference.export(),
            "{kind} holds the seeded entities"
        );
        let before = swarm.checksum();
        swarm.step(dt, Threads::All);
        assert_ne!(
            swarm.checksum(),
            before,
            "{kind}: a frame must move the swarm"
        );
    }
}

#[test]
fn checksum_sees_a_one_ulp_difference() {
    let mut swarm = Swarm::<f32>::with_count(LayoutKind::Aos, 3, 1000).unwrap();
    let mut snapshot = swarm.export();
    let before = swarm.checksum();
    let e = &mut snapshot.states[500];
    e.energy = f32::from_bits(e.energy.to_bits() + 1);
    swarm.import(&snapshot).unwrap();
    assert_ne!(swarm.checksum(), before);
}

#[test]
fn checksum_does_not_depend_on_storage_order() {
    let swarm = Swarm::<f64>::with_count(LayoutKind::Soa, 3, 1000).unwrap();
    let mut snapshot = swarm.export();
    snapshot.ids.reverse();
    snapshot.states.reverse();
    let mut reversed = Swarm::<f64>::new(LayoutKind::Boxed, 3).unwrap();
    reversed.import(&snapshot).unwrap();
    assert_eq!(reversed.checksum(), swarm.checksum());
}

#[test]
fn gathered_points_match_the_states_in_every_layout() {
    let mut reference: Vec<u32> = Swarm::<f32>::with_count(LayoutKind::Soa, 9, 40_000)
        .unwrap()
        .export()
        .states
        .iter()
        .map(|s| pack_point(s.x, s.y, s.hp))
        .collect();
    reference.sort_unstable();
    for kind in LayoutKind::CPU {
        for threads in Threads::BOTH {
            let mut swarm = Swarm::<f32>::with_count(kind, 9, 40_000).unwrap();
            let mut out = Vec::new();
            swarm.gather_points(&mut out, threads);
            out.sort_unstable();
            assert_eq!(out, reference, "{kind} threads={threads}");
        }
    }
}

/// The tuned ECS walks its tables with four cursors, each over an equal share, and hands what
/// the shares leave (fewer than four blocks and a remainder) to one cursor: from counts too few
/// for a share (all leftover) up, and with every kind of leftover, it ends where SoA does.
#[test]
fn the_tuned_ecs_four_cursor_move_matches_soa_at_every_leftover() {
    fn agree<S: AllLayouts>(n: usize) {
        let dt = Dt::default();
        let mut soa = Swarm::<S>::with_count(LayoutKind::Soa, 11, n).unwrap();
        let mut ecs = Swarm::<S>::with_count(LayoutKind::EcsContiguous, 11, n).unwrap();
        for _ in 0..3 {
            soa.step(dt, Threads::One);
            ecs.step(dt, Threads::One);
        }
        assert_eq!(ecs.checksum(), soa.checksum(), "n={n}");
    }
    // A power of two (the count the one-cursor loop used to stop at), and its neighbours:
    // every kind of leftover block and remainder around a large count.
    let base = 1 << 16;
    for n in [
        1,
        7,
        31,
        32,
        33,
        1_000,
        base - 1,
        base,
        base + 1,
        base + 7,
        base + 8,
        base + 31,
        base + 33,
        3 * base + 29,
    ] {
        agree::<f32>(n);
        agree::<f64>(n);
    }
}

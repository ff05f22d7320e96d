//! Random sequences of resize, churn, step and switch, from a seeded generator: every layout that
//! follows the same sequence stays identical to a reference run, entity by entity, and so does a
//! swarm whose switches are spread over many small steps with everything else going on between.
//! The gpu layout takes part where an adapter exists (lavapipe in CI, where one must).
//!
//! With seek in the sequences too (the gpu layout's seek pass included, where an adapter exists), every
//! entity's handle names the entity it should seek after every operation, through swap-removes,
//! churn, shrinks and switches at once and spread, and seeking keeps every layout identical.

mod support;

use rand::RngExt;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::threads::Threads;
use entity_layouts::workload::Dt;

#[derive(Clone, Copy, Debug)]
enum Op {
    Resize(usize),
    Churn(usize),
    Step(Threads),
    Switch(LayoutKind),
    /// Carries a spread switch on by this many entities.
    SwitchStep(usize),
    /// The seek system.
    Seek(Threads),
}

#[derive(Clone, Copy, PartialEq)]
enum Switching {
    Never,
    AtOnce,
    Spread,
}

/// Every CPU layout, and the gpu layout where this machine has an adapter.
fn layouts() -> Vec<LayoutKind> {
    if support::gpu_adapter() {
        LayoutKind::ALL.to_vec()
    } else {
        LayoutKind::CPU.to_vec()
    }
}

fn random_ops(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let layouts = layouts();
    (0..len)
        .map(|_| match rng.random_range(0..5) {
            0 => Op::Resize(rng.random_range(0..3000)),
            1 => Op::Churn(rng.random_range(0..400)),
            2 => Op::Step(Threads::BOTH[rng.random_range(0..2)]),
            3 => Op::Switch(layouts[rng.random_range(0..layouts.len())]),
            _ => Op::SwitchStep(rng.random_range(0..1200)),
        })
        .collect()
}

fn apply(swarm: &mut Swarm<f32>, op: Op, switching: Switching) {
    match op {
        Op::Resize(n) => swarm.resize(n).unwrap(),
        Op::Churn(k) => swarm.churn(k).unwrap(),
        Op::Step(threads) => swarm.step(Dt::default(), threads),
        Op::Switch(kind) => match switching {
            Switching::Never => {}
            Switching::AtOnce => swarm.switch_to(kind).unwrap(),
            Switching::Spread => swarm.begin_switch(kind).unwrap(),
        },
        Op::SwitchStep(k) if switching == Switching::Spread => {
            swarm.copy_step(k);
        }
        Op::SwitchStep(_) => {}
        Op::Seek(threads) => swarm.step_seek(Dt::default(), threads),
    }
}

#[test]
fn every_layout_follows_random_sequences_exactly() {
    let mut completed_spread_switches = 0;
    for seed in 0..8 {
        let ops = random_ops(seed, 60);
        let mut reference = Swarm::<f32>::new(LayoutKind::Soa, seed).unwrap();
        let mut switching = Swarm::<f32>::new(LayoutKind::EcsTable, seed).unwrap();
        let mut spreading = Swarm::<f32>::new(LayoutKind::Boxed, seed).unwrap();
        let mut fixed: Vec<Swarm<f32>> = layouts()
            .into_iter()
            .map(|k| Swarm::new(k, seed).unwrap())
            .collect();
        for (step, &op) in ops.iter().enumerate() {
            apply(&mut reference, op, Switching::Never);
            apply(&mut switching, op, Switching::AtOnce);
            let kind_before = spreading.kind();
            apply(&mut spreading, op, Switching::Spread);
            if spreading.kind() != kind_before {
                completed_spread_switches += 1;
            }
            for swarm in &mut fixed {
                apply(swarm, op, Switching::Never);
            }
            let expected = reference.checksum();
            assert_eq!(
                switching.checksum(),
                expected,
                "seed {seed} step {step} {op:?}"
            );
            assert_eq!(
                spreading.checksum(),
                expected,
                "seed {seed} step {step} {op:?}: spread switch"
            );
            for swarm in &fixed {
                assert_eq!(
                    swarm.checksum(),
                    expected,
                    "seed {seed} step {step} {op:?} in {}",
                    swarm.kind()
                );
            }
        }
        let expected = reference.export();
        assert_eq!(
            switching.export(),
            expected,
            "seed {seed}: ids and states in order"
        );
        // What a pending switch copied so far is read once it takes over.
        let pending = spreading.transition().map(|p| p.to);
        spreading.copy_step(usize::MAX);
        assert_eq!(spreading.transition(), None);
        if let Some(kind) = pending {
            assert_eq!(spreading.kind(), kind);
        }
        assert_eq!(spreading.export(), expected, "seed {seed}: spread switch");
        for swarm in &fixed {
            assert_eq!(swarm.export(), expected, "seed {seed} in {}", swarm.kind());
            assert_eq!(swarm.next_id(), reference.next_id());
        }
    }
    // The sequences must exercise switches that complete with other operations interleaved.
    assert!(
        completed_spread_switches >= 10,
        "{completed_spread_switches}"
    );
}

#[test]
fn a_spread_switch_mirrors_churn_and_shrinking_on_what_it_copied() {
    let dt = Dt::default();
    let mut pairs: Vec<(LayoutKind, LayoutKind)> = layouts()
        .into_iter()
        .map(|kind| match kind {
            LayoutKind::Aos => (LayoutKind::EcsSparse, kind),
            _ => (LayoutKind::Aos, kind),
        })
        .collect();
    if layouts().contains(&LayoutKind::Gpu) {
        // Out of the GPU: every removal below the copied part reads one entity back.
        pairs.push((LayoutKind::Gpu, LayoutKind::Soa));
    }
    for (from, kind) in pairs {
        let mut reference = Swarm::<f32>::with_count(LayoutKind::Soa, 21, 5000).unwrap();
        let mut spreading = Swarm::<f32>::with_count(from, 21, 5000).unwrap();
        spreading.begin_switch(kind).unwrap();
        for round in 0..6 {
            spreading.copy_step(300);
            for swarm in [&mut reference, &mut spreading] {
                // Heavy churn removes many entities from the copied part, and appends behind it.
                swarm.churn(900).unwrap();
                swarm.step(dt, Threads::All);
                if round == 3 {
                    swarm.resize(2000).unwrap();
                }
            }
            assert_eq!(spreading.kind(), from, "{kind}: still pending");
            assert_eq!(spreading.checksum(), reference.checksum(), "{kind}");
        }
        let progress = spreading.transition().expect("pending");
        assert_eq!((progress.to, progress.len), (kind, 2000));
        // Shrinking to what was copied completes the switch on the spot.
        let copied = progress.copied;
        assert!(copied > 0 && copied < 2000, "{copied}");
        for swarm in [&mut reference, &mut spreading] {
            swarm.resize(copied).unwrap();
        }
        assert_eq!(spreading.kind(), kind);
        assert_eq!(spreading.export(), reference.export(), "{kind}");
    }
}

#[test]
fn switching_back_cancels_and_an_empty_swarm_switches_at_once() {
    let mut swarm = Swarm::<f32>::with_count(LayoutKind::Soa, 2, 1000).unwrap();
    swarm.begin_switch(LayoutKind::Boxed).unwrap();
    swarm.copy_step(10);
    swarm.begin_switch(LayoutKind::Boxed).unwrap();
    assert_eq!(swarm.transition().unwrap().copied, 10, "same kind: kept");
    swarm.begin_switch(LayoutKind::Soa).unwrap();
    assert_eq!((swarm.kind(), swarm.transition()), (LayoutKind::Soa, None));
    let mut empty = Swarm::<f32>::new(LayoutKind::Soa, 2).unwrap();
    empty.begin_switch(LayoutKind::EcsTable).unwrap();
    assert_eq!(empty.kind(), LayoutKind::EcsTable);
}

#[test]
fn growing_appends_and_shrinking_drops_the_tail() {
    for kind in LayoutKind::CPU {
        let mut swarm = Swarm::<f64>::with_count(kind, 5, 100).unwrap();
        let first = swarm.export();
        swarm.resize(250).unwrap();
        let grown = swarm.export();
        assert_eq!(grown.ids, (0..250).collect::<Vec<u64>>(), "{kind}");
        assert_eq!(
            &grown.states[..100],
            &first.states[..],
            "{kind}: old entities untouched"
        );
        swarm.resize(60).unwrap();
        let shrunk = swarm.export();
        assert_eq!(shrunk.ids, (0..60).collect::<Vec<u64>>(), "{kind}");
        swarm.resize(61).unwrap();
        assert_eq!(
            swarm.export().ids.last(),
            Some(&250),
            "{kind}: ids are never reused"
        );
    }
}

#[test]
fn switching_carries_every_entity_over_exactly() {
    let dt = Dt::default();
    let mut swarm = Swarm::<f32>::with_count(LayoutKind::BoxedShuffled, 11, 3333).unwrap();
    swarm.churn(500).unwrap();
    swarm.step(dt, Threads::All);
    for kind in layouts() {
        let before = swarm.export();
        swarm.switch_to(kind).unwrap();
        assert_eq!(swarm.kind(), kind);
        assert_eq!(swarm.export(), before, "switch to {kind}");
    }
}

/// [`random_ops`] with seek among them.
fn random_ops_with_seek(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5EE4);
    let layouts = layouts();
    (0..len)
        .map(|_| match rng.random_range(0..7) {
            0 => Op::Resize(rng.random_range(0..3000)),
            1 => Op::Churn(rng.random_range(0..400)),
            2 => Op::Step(Threads::BOTH[rng.random_range(0..2)]),
            3 => Op::Switch(layouts[rng.random_range(0..layouts.len())]),
            4 => Op::SwitchStep(rng.random_range(0..1200)),
            _ => Op::Seek(Threads::BOTH[rng.random_range(0..2)]),
        })
        .collect()
}

#[test]
fn handles_name_their_targets_through_every_operation_and_seek_agrees() {
    let mut waited = 0;
    for seed in 0..6 {
        let ops = random_ops_with_seek(seed, 70);
        let mut reference = Swarm::<f32>::new(LayoutKind::Soa, seed).unwrap();
        let mut switching = Swarm::<f32>::new(LayoutKind::Aos, seed).unwrap();
        let mut spreading = Swarm::<f32>::new(LayoutKind::Hecs, seed).unwrap();
        let mut fixed: Vec<Swarm<f32>> = layouts()
            .into_iter()
            .map(|k| Swarm::new(k, seed).unwrap())
            .collect();
        for (step, &op) in ops.iter().enumerate() {
            apply(&mut reference, op, Switching::Never);
            apply(&mut switching, op, Switching::AtOnce);
            apply(&mut spreading, op, Switching::Spread);
            for swarm in &mut fixed {
                apply(swarm, op, Switching::Never);
            }
            let expected = reference.checksum();
            for swarm in fixed.iter().chain([&switching, &spreading]) {
                assert_eq!(
                    swarm.checksum(),
                    expected,
                    "seed {seed} step {step} {op:?} in {}",
                    swarm.kind()
                );
                if let Err(e) = swarm.check_targets() {
                    panic!("seed {seed} step {step} {op:?}: {e}");
                }
            }
            if spreading.transition().is_some() {
                waited += 1;
            }
        }
    }
    assert!(
        waited >= 20,
        "spread switches under way with seek: {waited}"
    );
}

/// The target check is a real check: a handle pointed at the wrong entity, or a dead target
/// reported alive, is caught.
#[test]
fn a_wrong_handle_is_caught() {
    for kind in [
        LayoutKind::Soa,
        LayoutKind::EcsTable,
        LayoutKind::Flecs,
        LayoutKind::Boxed,
    ] {
        let mut swarm = Swarm::<f32>::with_count(kind, 3, 2000).unwrap();
        assert_eq!(swarm.check_targets(), Ok(()), "{kind}");
        // Entity 1000's target is an earlier entity; point it at entity 999 instead.
        swarm.layout_mut().unwrap().set_targets(1000, &[Some(999)]);
        let err = swarm.check_targets().unwrap_err();
        assert!(err.contains("entity 1000 at 1000"), "{kind}: {err}");
        // No target where one is alive: caught too.
        swarm.layout_mut().unwrap().set_targets(1000, &[None]);
        assert!(swarm.check_targets().is_err(), "{kind}");
    }
}

/// Where a seeker's target is removed, its handle finds nothing, in every layout, and the
/// seeker keeps its velocity.
#[test]
fn a_removed_target_leaves_its_seekers_without_one() {
    use entity_layouts::workload::target_of;
    let (seed, n) = (9, 3000);
    let seeker = (0..n as u64)
        .rev()
        .find(|&id| target_of(seed, id).is_some())
        .unwrap();
    let target = target_of(seed, seeker).unwrap();
    for kind in layouts() {
        let mut swarm = Swarm::<f32>::with_count(kind, seed, n).unwrap();
        let at = |swarm: &Swarm<f32>, id: u64| swarm.export().ids.iter().position(|&i| i == id);
        let seeker_at = at(&swarm, seeker).unwrap();
        assert_eq!(
            swarm.layout_mut().unwrap().target_at(seeker_at),
            Some(target)
        );
        // Remove the target by churning until it is gone (churn picks at random).
        let mut rounds = 0;
        while at(&swarm, target).is_some() {
            swarm.churn(200).unwrap();
            rounds += 1;
            assert!(rounds < 200, "{kind}");
        }
        if let Some(seeker_at) = at(&swarm, seeker) {
            assert_eq!(
                swarm.layout_mut().unwrap().target_at(seeker_at),
                None,
                "{kind}"
            );
            let before = swarm.export().states[seeker_at];
            swarm.step_seek(Dt::default(), Threads::One);
            let after = swarm.export().states[seeker_at];
            assert_eq!((before.vx, before.vy), (after.vx, after.vy), "{kind}");
        }
        assert_eq!(swarm.check_targets(), Ok(()), "{kind}");
    }
}

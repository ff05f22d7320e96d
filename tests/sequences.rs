//! Random sequences of resize, churn, step and switch, from a seeded generator: every layout that
//! follows the same sequence stays identical to a reference run, entity by entity.

use rand::RngExt;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use entity_layouts::{Dt, LayoutKind, Swarm, Threads};

#[derive(Clone, Copy, Debug)]
enum Op {
    Resize(usize),
    Churn(usize),
    Step(Threads),
    Switch(LayoutKind),
}

fn random_ops(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| match rng.random_range(0..4) {
            0 => Op::Resize(rng.random_range(0..3000)),
            1 => Op::Churn(rng.random_range(0..400)),
            2 => Op::Step(Threads::BOTH[rng.random_range(0..2)]),
            _ => Op::Switch(LayoutKind::ALL[rng.random_range(0..LayoutKind::ALL.len())]),
        })
        .collect()
}

fn apply(swarm: &mut Swarm<f32>, op: Op, follow_switches: bool) {
    match op {
        Op::Resize(n) => swarm.resize(n).unwrap(),
        Op::Churn(k) => swarm.churn(k).unwrap(),
        Op::Step(threads) => swarm.step(Dt::default(), threads),
        Op::Switch(kind) if follow_switches => swarm.switch_to(kind).unwrap(),
        Op::Switch(_) => {}
    }
}

#[test]
fn every_layout_follows_random_sequences_exactly() {
    for seed in 0..6 {
        let ops = random_ops(seed, 40);
        let mut reference = Swarm::<f32>::new(LayoutKind::Soa, seed);
        let mut switching = Swarm::<f32>::new(LayoutKind::EcsTable, seed);
        let mut fixed: Vec<Swarm<f32>> = LayoutKind::ALL
            .into_iter()
            .map(|k| Swarm::new(k, seed))
            .collect();
        for (step, &op) in ops.iter().enumerate() {
            apply(&mut reference, op, false);
            apply(&mut switching, op, true);
            for swarm in &mut fixed {
                apply(swarm, op, false);
            }
            let expected = reference.checksum();
            assert_eq!(
                switching.checksum(),
                expected,
                "seed {seed} step {step} {op:?}"
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
        for swarm in &fixed {
            assert_eq!(swarm.export(), expected, "seed {seed} in {}", swarm.kind());
            assert_eq!(swarm.next_id(), reference.next_id());
        }
    }
}

#[test]
fn growing_appends_and_shrinking_drops_the_tail() {
    for kind in LayoutKind::ALL {
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
    for kind in LayoutKind::ALL {
        let before = swarm.export();
        swarm.switch_to(kind).unwrap();
        assert_eq!(swarm.kind(), kind);
        assert_eq!(swarm.export(), before, "switch to {kind}");
    }
}

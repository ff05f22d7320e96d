//! A layout filled with the bench's seeded population, for the experiments that drive a layout
//! directly rather than through a `Swarm`.

use crate::workload::SEED;

/// Fills `layout` with entities `0..n` of the bench seed and returns their initial states, for
/// experiments that drive a layout directly rather than through a `Swarm`.
pub fn fill_seeded<S: crate::scalar::Scalar>(
    layout: &mut dyn crate::layout::Layout<S>,
    n: usize,
) -> Vec<crate::workload::EntityState<S>> {
    let mut states = Vec::with_capacity(n);
    crate::workload::spawn_range(
        crate::workload::SpawnPattern::default(),
        SEED,
        0,
        n,
        &mut states,
    );
    let ids: Vec<u64> = (0..n as u64).collect();
    layout.push(&ids, &states);
    states
}

//! Memory follows the count: a population that shrank gives back what it no longer needs, in
//! every layout. In the process itself (capacities), and as the OS sees it (resident memory of a
//! process that grew to 1M and shrank to 10k, against a fresh one at 10k, each measured in a
//! process of its own by the bench's `shrink` experiment).

use std::process::Command;

use entity_layouts::bench::report::metric::Metric;
use entity_layouts::bench::report::output::read_results;
use entity_layouts::bench::report::record::Query;
use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::swarm::Swarm;

#[test]
fn allocated_bytes_follow_the_count_down() {
    for kind in LayoutKind::CPU {
        let mut swarm = Swarm::<f32>::with_count(kind, 3, 200_000).unwrap();
        let before = swarm.export();
        swarm.resize(2_000).unwrap();
        // The ECS libraries' tables never shrink: their worlds are rebuilt into fresh ones, a
        // chunk at a time.
        if let Some(progress) = swarm.transition() {
            assert!(kind.is_ecs(), "{kind}: only the ECS libraries rebuild");
            assert_eq!(progress.to, kind, "{kind}: a rebuild keeps the layout");
            swarm.copy_step(usize::MAX);
        } else {
            assert!(!kind.is_ecs(), "{kind} did not rebuild");
        }
        assert_eq!(swarm.kind(), kind);
        let (payload, allocated) = swarm.memory().per_entity(swarm.len());
        // Against the payload, or for a storage whose bookkeeping alone is more (shipyard's
        // sparse sets), against a fresh population of the same size.
        let fresh = Swarm::<f32>::with_count(kind, 3, 2_000).unwrap();
        let (_, fresh_allocated) = fresh.memory().per_entity(fresh.len());
        assert!(
            allocated < (4.0 * payload).max(1.5 * fresh_allocated),
            "{kind}: {allocated:.0} B allocated per entity of {payload:.0} B after 200k -> 2k (fresh: {fresh_allocated:.0})"
        );
        assert_eq!(
            swarm.export().states[..],
            before.states[..2_000],
            "{kind}: the survivors are kept exactly"
        );
    }
}

#[test]
fn resident_memory_after_1m_to_10k_is_near_a_fresh_process() {
    let dir = std::env::temp_dir().join(format!("entity-layouts-shrink-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(["bench", "--only", "shrink", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = read_results(&dir.join("results.json")).unwrap().records;
    for kind in LayoutKind::CPU {
        let name = kind.name();
        let rss = |how: &str| {
            Query::metric(Metric::ResidentMib)
                .layout(name)
                .param(how)
                .find(&records)
                .unwrap_or_else(|| panic!("no {how} record for {kind}"))
                .p50
        };
        let (fresh, shrunk) = (rss("fresh"), rss("shrunk"));
        assert!(
            shrunk <= 1.5 * fresh,
            "{kind}: {shrunk:.1} MiB after 1M -> 10k, {fresh:.1} MiB fresh"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! The memory view's data, checked against each storage: the regions a layout reports are its
//! live memory (SoA's columns advance one scalar per entity, AoS's records one struct, Bevy's
//! table columns one component, every boxed entity is one box), and stay so after churn.

use entity_layouts::layout::LayoutKind;
use entity_layouts::layout::regions::{Field, Region, cache_lines, median_stride};
use entity_layouts::runtime::catalog::AllLayouts;
use entity_layouts::runtime::swarm::Swarm;
use entity_layouts::workload::EntityState;

fn regions_of<S: AllLayouts>(
    kind: LayoutKind,
    n: usize,
    range: std::ops::Range<usize>,
) -> Vec<Region> {
    Swarm::<S>::with_count(kind, 42, n).unwrap().regions(range)
}

fn field(regions: &[Region], f: Field) -> Vec<&Region> {
    regions.iter().filter(|r| r.field == f).collect()
}

fn strides(regions: &[&Region]) -> Vec<isize> {
    regions
        .windows(2)
        .map(|w| w[1].addr as isize - w[0].addr as isize)
        .collect()
}

#[test]
fn every_cpu_layout_reports_nine_disjoint_fields_per_entity() {
    for kind in LayoutKind::CPU {
        let regions = regions_of::<f32>(kind, 500, 100..164);
        assert_eq!(regions.len(), 64 * 9, "{kind}");
        for entity in 100..164 {
            let mine: Vec<&Region> = regions.iter().filter(|r| r.entity == entity).collect();
            let mut fields: Vec<Field> = mine.iter().map(|r| r.field).collect();
            fields.sort();
            assert_eq!(fields, Field::ALL.to_vec(), "{kind} entity {entity}");
            let id = mine.iter().find(|r| r.field == Field::Id).unwrap();
            assert_eq!(id.len, 8, "{kind}: ids are u64");
            assert!(
                mine.iter()
                    .filter(|r| r.field != Field::Id)
                    .all(|r| r.len == 4)
            );
        }
        let mut sorted = regions.clone();
        sorted.sort_by_key(|r| r.addr);
        for pair in sorted.windows(2) {
            assert!(pair[0].end() <= pair[1].addr, "{kind}: {pair:?} overlap");
        }
    }
}

#[test]
fn soa_columns_advance_one_scalar_per_entity() {
    let regions = regions_of::<f32>(LayoutKind::Soa, 1000, 0..64);
    for f in Field::STATE {
        assert!(
            strides(&field(&regions, f)).iter().all(|&s| s == 4),
            "{f:?}"
        );
    }
    assert!(strides(&field(&regions, Field::Id)).iter().all(|&s| s == 8));
    let regions = regions_of::<f64>(LayoutKind::Soa, 1000, 0..64);
    assert!(strides(&field(&regions, Field::X)).iter().all(|&s| s == 8));
    // move reads four columns of 64 x 4 B: four lines each, five where a column does not
    // start on a line.
    let regions = regions_of::<f32>(LayoutKind::Soa, 1000, 0..64);
    let lines = cache_lines(&regions, Field::read_by_move);
    let unaligned = [Field::X, Field::Y, Field::Vx, Field::Vy]
        .iter()
        .filter(|&&f| !field(&regions, f)[0].addr.is_multiple_of(64))
        .count();
    assert_eq!(lines, 16 + unaligned);
}

#[test]
fn aos_records_advance_one_struct_per_entity() {
    let regions = regions_of::<f32>(LayoutKind::Aos, 1000, 0..64);
    let entity = size_of::<EntityState<f32>>() as isize;
    assert_eq!(entity, 32);
    for f in Field::STATE {
        assert!(
            strides(&field(&regions, f)).iter().all(|&s| s == entity),
            "{f:?}"
        );
    }
    // Every entity's eight fields are one 32-byte record, in declaration order.
    let x = field(&regions, Field::X);
    let armor = field(&regions, Field::Armor);
    assert!(x.iter().zip(&armor).all(|(x, a)| a.addr == x.addr + 28));
    // move's four fields sit in every record: 64 records of 32 B are 32 lines.
    assert!((32..=33).contains(&cache_lines(&regions, Field::read_by_move)));
}

#[test]
fn ecs_table_columns_advance_one_component_per_entity() {
    for kind in [
        LayoutKind::EcsTable,
        LayoutKind::EcsContiguous,
        LayoutKind::EcsSparse,
    ] {
        let regions = regions_of::<f32>(kind, 1000, 0..64);
        // Position { x, y } is one 8-byte component: x and y interleave within its column.
        assert!(
            strides(&field(&regions, Field::X)).iter().all(|&s| s == 8),
            "{kind}"
        );
        let (x, y) = (field(&regions, Field::X), field(&regions, Field::Y));
        assert!(
            x.iter().zip(&y).all(|(x, y)| y.addr == x.addr + 4),
            "{kind}"
        );
        assert!(
            strides(&field(&regions, Field::Hp)).iter().all(|&s| s == 4),
            "{kind}"
        );
        assert!(
            strides(&field(&regions, Field::Id)).iter().all(|&s| s == 8),
            "{kind}"
        );
    }
}

#[test]
fn boxed_regions_are_the_boxes_themselves() {
    for kind in [LayoutKind::Boxed, LayoutKind::BoxedShuffled] {
        let mut swarm = Swarm::<f32>::with_count(kind, 42, 2000).unwrap();
        let regions = swarm.regions(0..2000);
        let layout = swarm.layout_mut().unwrap();
        // The visitor is handed each box's contents in place: its address is the box's.
        let mut boxes = Vec::new();
        layout.for_each_entity(&mut |_, state| boxes.push(std::ptr::from_ref(state).addr()));
        let x = field(&regions, Field::X);
        assert!(x.iter().zip(&boxes).all(|(r, &b)| r.addr == b), "{kind}");
        let stride = median_stride(&regions).unwrap();
        if kind == LayoutKind::Boxed {
            // Allocation order: one malloc chunk per box (32 B of entity + glibc's 16 B).
            assert_eq!(stride, 48, "{kind}");
        } else {
            assert!(
                stride > 10_000,
                "{kind}: shuffled boxes jump (median {stride} B)"
            );
        }
    }
}

#[test]
fn regions_follow_the_storage_through_churn() {
    // Swap-removes and spawns move entities between slots; the reported regions move with them.
    for kind in [
        LayoutKind::Soa,
        LayoutKind::Aos,
        LayoutKind::EcsTable,
        LayoutKind::Boxed,
    ] {
        let mut swarm = Swarm::<f32>::with_count(kind, 7, 3000).unwrap();
        for _ in 0..5 {
            swarm.churn(400).unwrap();
        }
        let n = swarm.len();
        let regions = swarm.regions(0..n);
        let layout = swarm.layout_mut().unwrap();
        assert_eq!(regions.len(), n * 9, "{kind}");
        if kind == LayoutKind::Boxed {
            let mut boxes = Vec::new();
            layout.for_each_entity(&mut |_, s| boxes.push(std::ptr::from_ref(s).addr()));
            let x = field(&regions, Field::X);
            assert!(x.iter().zip(&boxes).all(|(r, &b)| r.addr == b));
        } else if kind != LayoutKind::EcsTable {
            let step = if kind == LayoutKind::Soa { 4 } else { 32 };
            assert!(
                strides(&field(&regions, Field::X))
                    .iter()
                    .all(|&s| s == step),
                "{kind}"
            );
        }
    }
}

#[test]
fn the_gpu_layout_has_no_host_regions() {
    // Without an adapter the layout cannot be built at all, which is fine here.
    if let Ok(swarm) = Swarm::<f32>::with_count(LayoutKind::Gpu, 42, 100) {
        assert_eq!(swarm.len(), 100);
        assert!(swarm.regions(0..100).is_empty());
    }
}

//! The factory: every CPU layout built by kind, and what one of its entities costs before
//! anything is allocated. The top floor of the layouts: it imports every layout file, and no
//! layout imports it. The facts it builds from are [`super::facts`], the bottom floor.
//!
//! The factory is in the core rather than in the crates above it because a crate that builds a
//! layout gets the layout's code from this crate (its vtable points here), not a copy compiled
//! among its own code: that keeps the counted kernels where the counts check expects them (the
//! crate docs say why).

use crate::layout::aos::Aos;
use crate::layout::boxed::BoxedEntities;
use crate::layout::chunks::Chunks;
use crate::layout::dyn_agents::DynAgents;
use crate::layout::ecs::EcsLayout;
use crate::layout::facts::{Footprint, LayoutKind};
use crate::layout::flecs_world::FlecsLayout;
use crate::layout::hecs_world::HecsLayout;
use crate::layout::shipyard_world::ShipyardLayout;
use crate::layout::slots::Targets;
use crate::layout::soa::Soa;
use crate::layout::{HostLayout, InSparseSet, ecs, flecs_world, hecs_world, shipyard_world};
use crate::scalar::Scalar;
use crate::workload::EntityState;
use bevy_ecs::component::StorageType;

impl LayoutKind {
    /// Builds an empty layout of this kind if it lives in CPU memory; `None` for the gpu layout,
    /// which `entity_layouts::runtime::catalog` builds.
    pub fn create_cpu<S: CpuLayouts>(self) -> Option<Box<dyn HostLayout<S>>> {
        S::create_cpu(self)
    }

    /// A generous estimate of what one entity really costs in this layout (slack included), used
    /// to refuse a count before allocating rather than after: its footprint, doubled for the
    /// room a doubling `Vec` can leave unused while it grows.
    pub fn estimated_bytes_per_entity<S: Scalar>(self) -> usize {
        self.row().footprint.bytes_per_entity::<S>() * 2
    }
}

impl Footprint {
    /// What one entity costs in a layout of this footprint, its bookkeeping included, before the
    /// slack of a growing `Vec`.
    fn bytes_per_entity<S: Scalar>(self) -> usize {
        let payload = LayoutKind::payload_bytes_per_entity::<S>();
        let target = Targets::bytes_per_entity();
        match self {
            Footprint::Payload => payload + target,
            Footprint::Blocks => payload + payload / 16 + target,
            Footprint::Boxes => {
                payload
                    + 16
                    + crate::memory::glibc_malloc_chunk_bytes(size_of::<EntityState<S>>()) as usize
                    + target
            }
            Footprint::Bevy => ecs::bytes_per_entity::<S>(StorageType::Table),
            Footprint::BevySparse => ecs::bytes_per_entity::<S>(StorageType::SparseSet),
            Footprint::Hecs => hecs_world::bytes_per_entity::<S>(),
            Footprint::Flecs => flecs_world::bytes_per_entity::<S>(),
            Footprint::Shipyard => shipyard_world::bytes_per_entity::<S>(),
            Footprint::Device => payload + 4,
        }
    }
}

/// A number type every CPU layout is built for here, in this crate: `f32` (the app's) and `f64`
/// (the JS study's).
pub trait CpuLayouts: Scalar {
    /// An empty layout of `kind`, or `None` for one that does not live in CPU memory.
    fn create_cpu(kind: LayoutKind) -> Option<Box<dyn HostLayout<Self>>>;
}

impl CpuLayouts for f32 {
    #[inline(never)]
    fn create_cpu(kind: LayoutKind) -> Option<Box<dyn HostLayout<f32>>> {
        build_cpu::<f32>(kind)
    }
}

impl CpuLayouts for f64 {
    #[inline(never)]
    fn create_cpu(kind: LayoutKind) -> Option<Box<dyn HostLayout<f64>>> {
        build_cpu::<f64>(kind)
    }
}

fn build_cpu<S: Scalar>(kind: LayoutKind) -> Option<Box<dyn HostLayout<S>>> {
    Some(match kind {
        LayoutKind::EcsTable => Box::new(EcsLayout::<S>::table()),
        LayoutKind::EcsSparse => Box::new(EcsLayout::<S, InSparseSet>::sparse()),
        LayoutKind::EcsContiguous => Box::new(EcsLayout::<S>::contiguous()),
        LayoutKind::Hecs => Box::new(HecsLayout::<S>::new(false)),
        LayoutKind::HecsTuned => Box::new(HecsLayout::<S>::new(true)),
        LayoutKind::Flecs => Box::new(FlecsLayout::<S>::new(false)),
        LayoutKind::FlecsTuned => Box::new(FlecsLayout::<S>::new(true)),
        LayoutKind::Shipyard => Box::new(ShipyardLayout::<S>::new(false)),
        LayoutKind::ShipyardTuned => Box::new(ShipyardLayout::<S>::new(true)),
        LayoutKind::Soa => Box::new(Soa::<S>::default()),
        LayoutKind::Chunks => Box::new(Chunks::<S>::default()),
        LayoutKind::Aos => Box::new(Aos::<S>::default()),
        LayoutKind::Boxed => Box::new(BoxedEntities::<S>::new(false)),
        LayoutKind::BoxedShuffled => Box::new(BoxedEntities::<S>::new(true)),
        LayoutKind::Dyn(k) => Box::new(DynAgents::<S>::new(k)),
        LayoutKind::Gpu => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SeekKernel;
    use crate::simd::SimdTier;

    /// The table says what each CPU layout can do; each layout, built, does exactly that: its
    /// kind, SIMD kernels (a tier asked for is the tier it runs), the tuned seek, and a tuned
    /// sibling of the same family.
    #[test]
    fn the_table_agrees_with_what_each_layout_does() {
        let best = Some(SimdTier::best()).filter(|t| *t != SimdTier::Baseline);
        for kind in LayoutKind::CPU {
            let row = kind.row();
            let mut layout = kind.create_cpu::<f32>().expect("a CPU layout builds");
            assert_eq!(layout.kind(), kind);
            assert!(!row.device, "{kind}: built in host memory");
            if let Some(tier) = best {
                let runs = layout.set_simd(tier);
                assert_eq!(
                    runs == tier,
                    row.simd_kernels,
                    "{kind}: the table says simd_kernels {}, asked for {tier} it runs {runs}",
                    row.simd_kernels
                );
            }
            assert_eq!(layout.set_simd(SimdTier::Baseline), SimdTier::Baseline);
            let runs = layout.set_seek_kernel(SeekKernel::Tuned);
            assert_eq!(
                runs == SeekKernel::Tuned,
                row.tuned_seek,
                "{kind}: the table says tuned_seek {}, asked for the tuned seek it runs {runs}",
                row.tuned_seek
            );
            assert_eq!(
                layout.set_seek_kernel(SeekKernel::Idiomatic),
                SeekKernel::Idiomatic
            );
            if let Some(tuned) = row.tuned {
                assert_eq!(tuned.row().family, row.family, "{kind}: its tuned sibling");
                assert!(
                    tuned.row().tuned.is_none(),
                    "{tuned} is itself the tuned form"
                );
            }
        }
        assert_eq!(LayoutKind::Gpu.create_cpu::<f32>().map(|l| l.kind()), None);
    }
}

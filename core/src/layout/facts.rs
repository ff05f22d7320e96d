//! The facts about every layout, one row each: its name and key, its family and tuned sibling,
//! what it can do, how its memory is estimated, its doc line. The bottom floor of the layouts:
//! it imports no layout, and every layout, the factory ([`super::factory`]) and everything that
//! asks what a layout *is* read it; what a layout *does* is its file's `impl`. Adding a layout is
//! a variant of [`LayoutKind`], its row in [`TABLE`], its file, and its line in the factory
//! (docs/layouts.md walks through it).

use std::fmt;

use crate::scalar::Scalar;
use crate::workload::EntityState;

/// Every layout and variant, as a user picks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    EcsTable,
    EcsSparse,
    EcsContiguous,
    /// hecs, idiomatic (`query_mut`) and tuned (archetype column slices).
    Hecs,
    HecsTuned,
    /// flecs, idiomatic (`par_each`) and tuned (`par_run` with field slices).
    Flecs,
    FlecsTuned,
    /// shipyard, idiomatic (`(&mut a, &b).iter()`) and tuned (one packed array walked alone).
    Shipyard,
    ShipyardTuned,
    Soa,
    /// Fixed 16 KiB blocks, each holding its entities' fields as arrays (Unity's chunks).
    Chunks,
    Aos,
    Boxed,
    BoxedShuffled,
    /// `Vec<Box<dyn Agent>>` over this many concrete kinds (1, 2, 4 or 12).
    Dyn(u8),
    /// GPU storage buffers, simulated by compute passes (f32 only; needs a GPU adapter).
    Gpu,
}

/// Who wrote the storage a layout runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Bevy's `bevy_ecs`: archetype tables or sparse sets, systems in schedules.
    Bevy,
    /// The other ECS libraries, Bevy's peers.
    Hecs,
    Flecs,
    Shipyard,
    /// Arrays this project writes by hand (SoA, AoS, Unity-style chunks).
    Arrays,
    /// One heap object per entity behind a pointer (the studies' OOP rows).
    Objects,
    /// Buffers on the GPU.
    Device,
}

impl Family {
    /// An ECS library's world: entities in tables or sparse sets that the library owns and never
    /// shrinks, so the swarm rebuilds it after a big shrink.
    pub fn is_ecs(self) -> bool {
        matches!(
            self,
            Family::Bevy | Family::Hecs | Family::Flecs | Family::Shipyard
        )
    }

    /// How a sort of the storage ([`crate::layout::Layout::for_each_entity_at`], the swarm's
    /// reorder) reaches this family's memory, and what the library itself would allow: what
    /// the panel and docs/results/order.md say beside the order switch.
    pub fn how_it_sorts(self) -> &'static str {
        match self {
            Family::Bevy => {
                "rebuilt: a fresh world spawned in the new order, as a Bevy user must; Bevy cannot reorder a table's rows (bevyengine/bevy#13464, open)"
            }
            Family::Hecs => {
                "rebuilt: a fresh world spawned in the new order; hecs has no call that reorders an archetype's rows"
            }
            Family::Flecs => {
                "rebuilt: a fresh world spawned in the new order; flecs' own order_by sorts in place, but in one call that no frame can share out, and slower (docs/results/order.md)"
            }
            Family::Shipyard => {
                "rebuilt: a fresh world spawned in the new order; shipyard's own sort orders one storage by its own values, which the other storages cannot follow"
            }
            Family::Arrays => "rebuilt: fresh arrays filled in the new order",
            Family::Objects => {
                "re-allocated: each entity's object allocated afresh in the new order, so the heap follows it (boxed-shuffled scatters its boxes again, on purpose)"
            }
            Family::Device => {
                "rebuilt: fresh buffers filled in the new order, each batch gathered on the device, read back and uploaded (a round trip per 1M entities)"
            }
        }
    }
}

/// How one entity's memory is estimated before anything is allocated: what the memory check
/// multiplies by the count asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Footprint {
    /// The fields and the id, in arrays, and the seek target's handle (`slots::Targets`).
    Payload,
    /// The payload and the target's handle, and a last block partly empty.
    Blocks,
    /// A pointer (16 bytes for a fat `dyn` one), the box's malloc chunk, and the target's handle.
    Boxes,
    /// The library's own bookkeeping beside the payload (each library's file says what).
    Bevy,
    /// Bevy with every component in a sparse set of its own.
    BevySparse,
    Hecs,
    Flecs,
    Shipyard,
    /// Ids in host memory, plus the device's columns and points, which a software rasterizer
    /// (lavapipe) keeps in host memory too.
    Device,
}

/// Everything that is a fact about one layout.
#[derive(Clone, Copy, Debug)]
pub struct LayoutRow {
    pub kind: LayoutKind,
    /// On the command line, in scripts and in CSV/JSON.
    pub name: &'static str,
    /// What a reader of a table or the panel sees.
    pub label: &'static str,
    /// The app's key for it.
    pub key: &'static str,
    pub family: Family,
    /// The same library's tuned form, for an idiomatic layout that has one.
    pub tuned: Option<LayoutKind>,
    /// Its move and regen kernels are compiled per SIMD tier ([`Layout::set_simd`]); the others
    /// run the baseline whatever the setting.
    pub simd_kernels: bool,
    /// Beside its idiomatic seek, it has the tuned one ([`crate::layout::SeekKernel::Tuned`]).
    pub tuned_seek: bool,
    /// How it runs on all cores, where that is not by splitting its arrays across Bevy's pool
    /// as the others do.
    pub parallel: Option<&'static str>,
    /// It lives on a device: its entities' bytes are not in this process's memory.
    pub device: bool,
    pub footprint: Footprint,
    /// One line: what it is.
    pub doc: &'static str,
}

const fn row(kind: LayoutKind, name: &'static str, label: &'static str) -> LayoutRow {
    LayoutRow {
        kind,
        name,
        label,
        key: "",
        family: Family::Arrays,
        tuned: None,
        simd_kernels: false,
        tuned_seek: false,
        parallel: None,
        device: false,
        footprint: Footprint::Payload,
        doc: "",
    }
}

/// Every layout, in the order the panel and the reports list them: the CPU layouts, then the
/// gpu layout.
pub const TABLE: &[LayoutRow] = &[
    LayoutRow {
        key: "1",
        family: Family::Bevy,
        tuned: Some(LayoutKind::EcsContiguous),
        parallel: Some("Bevy's par_iter_mut"),
        footprint: Footprint::Bevy,
        doc: "Bevy 0.19 World, table storage, ordinary systems",
        ..row(
            LayoutKind::EcsTable,
            "ecs-table",
            "Bevy ECS, table (idiomatic)",
        )
    },
    LayoutRow {
        key: "2",
        family: Family::Bevy,
        tuned: Some(LayoutKind::EcsContiguous),
        parallel: Some("Bevy's par_iter_mut"),
        footprint: Footprint::BevySparse,
        doc: "the same systems over SparseSet-stored components",
        ..row(
            LayoutKind::EcsSparse,
            "ecs-sparse",
            "Bevy ECS, sparse set (idiomatic)",
        )
    },
    LayoutRow {
        key: "3",
        family: Family::Bevy,
        simd_kernels: true,
        tuned_seek: true,
        footprint: Footprint::Bevy,
        doc: "table storage, systems over whole column slices",
        ..row(
            LayoutKind::EcsContiguous,
            "ecs-contiguous",
            "Bevy ECS, contiguous slices (tuned)",
        )
    },
    LayoutRow {
        key: "Shift+1",
        family: Family::Hecs,
        tuned: Some(LayoutKind::HecsTuned),
        parallel: Some(
            "hecs' iter_batched, its batches on Bevy's pool (hecs has no threads of its own)",
        ),
        footprint: Footprint::Hecs,
        doc: "hecs 0.11 World (archetypes, pure Rust, no change ticks)",
        ..row(LayoutKind::Hecs, "hecs", "hecs, archetypes (idiomatic)")
    },
    LayoutRow {
        key: "Shift+2",
        family: Family::Hecs,
        simd_kernels: true,
        tuned_seek: true,
        footprint: Footprint::Hecs,
        doc: "the same world, each archetype's columns as slices",
        ..row(
            LayoutKind::HecsTuned,
            "hecs-tuned",
            "hecs, archetype columns (tuned)",
        )
    },
    LayoutRow {
        key: "Shift+3",
        family: Family::Flecs,
        tuned: Some(LayoutKind::FlecsTuned),
        parallel: Some(
            "flecs' own worker threads (World::set_threads), each table split among them",
        ),
        footprint: Footprint::Flecs,
        doc: "flecs (C, through flecs_ecs 0.2.2) tables, a system and a pipeline per step",
        ..row(LayoutKind::Flecs, "flecs", "flecs, tables (idiomatic)")
    },
    LayoutRow {
        key: "Shift+4",
        family: Family::Flecs,
        simd_kernels: true,
        tuned_seek: true,
        parallel: Some(
            "flecs' own worker threads (World::set_threads), each table split among them",
        ),
        footprint: Footprint::Flecs,
        doc: "the same world, systems over each table's field slices",
        ..row(
            LayoutKind::FlecsTuned,
            "flecs-tuned",
            "flecs, table fields (tuned)",
        )
    },
    LayoutRow {
        key: "Shift+5",
        family: Family::Shipyard,
        tuned: Some(LayoutKind::ShipyardTuned),
        parallel: Some("shipyard's par_iter (rayon's pool)"),
        footprint: Footprint::Shipyard,
        doc: "shipyard 0.11 sparse sets (EnTT's model)",
        ..row(
            LayoutKind::Shipyard,
            "shipyard",
            "shipyard, sparse sets (idiomatic)",
        )
    },
    LayoutRow {
        key: "Shift+6",
        family: Family::Shipyard,
        simd_kernels: true,
        tuned_seek: true,
        parallel: Some(
            "shipyard's par_iter, the idiomatic path: the packed walk has no parallel form",
        ),
        footprint: Footprint::Shipyard,
        doc: "the same world, one packed array walked alone beside the other's packed values",
        ..row(
            LayoutKind::ShipyardTuned,
            "shipyard-tuned",
            "shipyard, packed walk (tuned)",
        )
    },
    LayoutRow {
        key: "4",
        simd_kernels: true,
        tuned_seek: true,
        doc: "one Vec per field",
        ..row(LayoutKind::Soa, "soa", "SoA (Vec per field)")
    },
    LayoutRow {
        key: "5",
        simd_kernels: true,
        footprint: Footprint::Blocks,
        doc: "16 KiB blocks, each holding its entities' fields as short arrays (Unity's chunks)",
        ..row(
            LayoutKind::Chunks,
            "chunks",
            "16 KiB chunks of arrays (Unity)",
        )
    },
    LayoutRow {
        key: "6",
        simd_kernels: true,
        doc: "one Vec of a #[repr(C)] entity",
        ..row(LayoutKind::Aos, "aos", "AoS (Vec<Entity>)")
    },
    LayoutRow {
        key: "7",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "Vec<Box<Entity>>, boxes in allocation order",
        ..row(LayoutKind::Boxed, "boxed", "Vec<Box<Entity>>")
    },
    LayoutRow {
        key: "8",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "the same, the boxes' heap addresses permuted (a long-running game's heap)",
        ..row(
            LayoutKind::BoxedShuffled,
            "boxed-shuffled",
            "Vec<Box<Entity>>, shuffled heap",
        )
    },
    LayoutRow {
        key: "9",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "Vec<Box<dyn Agent>> over one concrete kind",
        ..row(LayoutKind::Dyn(1), "dyn-1", "Vec<Box<dyn Agent>>, 1 kinds")
    },
    LayoutRow {
        key: "0",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "Vec<Box<dyn Agent>> over 2 concrete kinds",
        ..row(LayoutKind::Dyn(2), "dyn-2", "Vec<Box<dyn Agent>>, 2 kinds")
    },
    LayoutRow {
        key: "-",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "Vec<Box<dyn Agent>> over 4 concrete kinds",
        ..row(LayoutKind::Dyn(4), "dyn-4", "Vec<Box<dyn Agent>>, 4 kinds")
    },
    LayoutRow {
        key: "=",
        family: Family::Objects,
        footprint: Footprint::Boxes,
        doc: "Vec<Box<dyn Agent>> over 12 concrete kinds",
        ..row(
            LayoutKind::Dyn(12),
            "dyn-12",
            "Vec<Box<dyn Agent>>, 12 kinds",
        )
    },
    LayoutRow {
        key: "G",
        family: Family::Device,
        device: true,
        footprint: Footprint::Device,
        doc: "eight GPU storage buffers, f32 only, simulated by compute passes",
        ..row(LayoutKind::Gpu, "gpu", "GPU storage buffers (compute)")
    },
];

/// The kind counts the dyn layout offers (the JS study's 1, 2, 4 and 12 shapes).
pub const DYN_KINDS: [u8; 4] = [1, 2, 4, 12];

/// How many rows of [`TABLE`] live in CPU memory.
const CPU_ROWS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < TABLE.len() {
        if !TABLE[i].device {
            n += 1;
        }
        i += 1;
    }
    n
};

impl LayoutKind {
    /// Every layout in CPU memory, in the order the panel and the reports list them: what the
    /// CPU benches, the equivalence tests and `verify` (f32 and f64) run.
    pub const CPU: [LayoutKind; CPU_ROWS] = {
        let mut cpu = [LayoutKind::Soa; CPU_ROWS];
        let (mut i, mut k) = (0, 0);
        while i < TABLE.len() {
            if !TABLE[i].device {
                cpu[k] = TABLE[i].kind;
                k += 1;
            }
            i += 1;
        }
        cpu
    };

    /// Every layout a person can pick, in the table's order.
    pub const ALL: [LayoutKind; TABLE.len()] = {
        let mut all = [LayoutKind::Soa; TABLE.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = TABLE[i].kind;
            i += 1;
        }
        all
    };

    /// This layout's row of [`TABLE`].
    pub fn row(self) -> &'static LayoutRow {
        TABLE
            .iter()
            .find(|row| row.kind == self)
            .unwrap_or_else(|| panic!("{self:?} has no row in the table of layouts"))
    }

    /// The name used on the command line and in CSV/JSON.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// What a reader of a table or the panel sees.
    pub fn label(self) -> &'static str {
        self.row().label
    }

    /// Bytes one entity's fields and id take in any layout, before slack and bookkeeping: what
    /// the memory check multiplies by the requested count.
    pub fn payload_bytes_per_entity<S: Scalar>() -> usize {
        size_of::<EntityState<S>>() + size_of::<u64>()
    }

    /// Whether this layout's move and regen kernels are compiled per SIMD tier.
    pub fn has_simd_kernels(self) -> bool {
        self.row().simd_kernels
    }

    /// Whether it has a tuned seek beside the idiomatic one.
    pub fn has_tuned_seek(self) -> bool {
        self.row().tuned_seek
    }

    /// How this layout runs on all cores, where that is not by splitting its arrays across
    /// Bevy's pool as the others do: the panel's hover and the bench's `threads` notes say it.
    pub fn parallel_note(self) -> Option<&'static str> {
        self.row().parallel
    }

    /// Whether this layout is an ECS library's world ([`Family::is_ecs`]).
    pub fn is_ecs(self) -> bool {
        self.row().family.is_ecs()
    }

    /// Whether this is a library's tuned form: an idiomatic sibling names it as its own.
    pub fn is_tuned_form(self) -> bool {
        TABLE.iter().any(|row| row.tuned == Some(self))
    }

    /// Every ECS library's layout, Bevy's and its peers', in the table's order.
    pub fn ecs_layouts() -> Vec<LayoutKind> {
        Self::CPU.into_iter().filter(|k| k.is_ecs()).collect()
    }

    /// Whether this is the layout that lives on the GPU.
    pub fn is_gpu(self) -> bool {
        self.row().device
    }
}

impl fmt::Display for LayoutKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ecs_layouts_and_the_tuned_forms_are_read_off_the_table() {
        let ecs = LayoutKind::ecs_layouts();
        assert_eq!(ecs.len(), 9, "Bevy's three and the peers' six");
        assert!(ecs.iter().all(|k| k.row().family != Family::Arrays));
        let tuned: Vec<LayoutKind> = LayoutKind::ALL
            .into_iter()
            .filter(|k| k.is_tuned_form())
            .collect();
        assert_eq!(
            tuned,
            [
                LayoutKind::EcsContiguous,
                LayoutKind::HecsTuned,
                LayoutKind::FlecsTuned,
                LayoutKind::ShipyardTuned,
            ]
        );
    }

    #[test]
    fn every_kind_finds_its_own_row_and_names_are_unique_and_lowercase() {
        for (i, kind) in LayoutKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.row().kind, kind);
            // (By name: a `const` slice may be copied where it is used, so no pointer compare.)
            assert_eq!(kind.row().name, TABLE[i].name);
        }
        for k in DYN_KINDS {
            assert_eq!(LayoutKind::Dyn(k).row().name, format!("dyn-{k}"));
        }
        assert!(LayoutKind::CPU.iter().all(|k| !k.is_gpu()));
        assert_eq!(LayoutKind::CPU.len() + 1, LayoutKind::ALL.len());
        let names: std::collections::HashSet<&str> =
            LayoutKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), LayoutKind::ALL.len());
        assert!(names.iter().all(|n| *n == n.to_ascii_lowercase()));
        let keys: std::collections::HashSet<&str> = TABLE.iter().map(|r| r.key).collect();
        assert_eq!(keys.len(), TABLE.len(), "every layout has a key of its own");
        assert!(
            TABLE
                .iter()
                .all(|r| !r.doc.is_empty() && !r.label.is_empty())
        );
    }
}

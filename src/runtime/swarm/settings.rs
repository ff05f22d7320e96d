//! What every layout a swarm builds runs on (its settings), and the scratch batches growing and
//! copying pass to a layout.

use std::ops::Range;

use crate::error::SimError;
use crate::layout::{Layout, LayoutKind, SeekKernel};
use crate::runtime::catalog::{self, AllLayouts, Built};
use crate::simd::SimdTier;
use crate::workload::EntityState;

/// What every layout this swarm builds runs on: the SIMD tier and the seek kernel asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Settings {
    pub(super) simd: SimdTier,
    pub(super) seek_kernel: SeekKernel,
}

impl Settings {
    /// A fresh, empty layout of `kind` on these settings.
    pub(super) fn create<S: AllLayouts>(self, kind: LayoutKind) -> Result<Built<S>, SimError> {
        let mut layout = catalog::create::<S>(kind)?;
        self.configure(&mut *layout);
        Ok(layout)
    }

    /// Puts `layout` on these settings.
    pub(super) fn configure<S: AllLayouts>(self, layout: &mut dyn Layout<S>) {
        layout.set_simd(self.simd);
        layout.set_seek_kernel(self.seek_kernel);
    }
}

/// The batches growing and copying pass to a layout: kept between calls, so that growing or
/// switching by millions allocates them once.
pub(super) struct Scratch<S> {
    pub(super) states: Vec<EntityState<S>>,
    pub(super) ids: Vec<u64>,
    pub(super) targets: Vec<Option<usize>>,
}

impl<S: AllLayouts> Scratch<S> {
    pub(super) fn new() -> Self {
        Self {
            states: Vec::new(),
            ids: Vec::new(),
            targets: Vec::new(),
        }
    }

    /// The entities at logical indices `range` of `from`, into `ids` and `states`.
    pub(super) fn read(&mut self, from: &Built<S>, range: Range<usize>) {
        self.ids.clear();
        self.states.clear();
        from.for_each_entity_in(range, &mut |id, state| {
            self.ids.push(id);
            self.states.push(*state);
        });
    }

    /// The entities at logical indices `at` of `from`, in that order.
    pub(super) fn read_at(&mut self, from: &Built<S>, at: &[usize]) {
        self.ids.clear();
        self.states.clear();
        from.for_each_entity_at(at, &mut |id, state| {
            self.ids.push(id);
            self.states.push(*state);
        });
    }
}

//! The chunked layout's shape for the experiments whose entity has F `f64` fields rather than the
//! core's eight (the width reversal, random access): 16 KiB blocks, each holding its entities'
//! fields as F arrays of [`ChunkedFields::CAP`], as [`crate::layout::Chunks`] does.

use crate::layout::chunks::CHUNK_BYTES;

pub struct ChunkedFields<const F: usize> {
    /// Each block is `CAP * F` values: field `f` of slot `s` at `f * CAP + s`. The last block's
    /// unused slots hold zeros, so a sum over whole blocks is the sum over the entities.
    blocks: Vec<Box<[f64]>>,
}

impl<const F: usize> ChunkedFields<F> {
    /// Entities per block: as many as fit, in whole 64-byte lines of each column (8 `f64`s):
    /// 96 at 20 fields, 1024 at 2.
    pub const CAP: usize = CHUNK_BYTES / (F * 8) / 8 * 8;

    /// `n` entities, field `f` of entity `i` being `value(i, f)`.
    pub fn new(n: usize, value: impl Fn(usize, usize) -> f64) -> Self {
        let blocks = (0..n.div_ceil(Self::CAP))
            .map(|b| {
                let mut block = vec![0.0; Self::CAP * F].into_boxed_slice();
                for s in 0..Self::CAP.min(n - b * Self::CAP) {
                    for f in 0..F {
                        block[f * Self::CAP + s] = value(b * Self::CAP + s, f);
                    }
                }
                block
            })
            .collect();
        Self { blocks }
    }

    /// Field `f` of entity `i`.
    #[inline]
    pub fn get(&self, i: usize, f: usize) -> f64 {
        self.blocks[i / Self::CAP][f * Self::CAP + i % Self::CAP]
    }

    /// The blocks, whole (padding included).
    pub fn blocks(&self) -> impl Iterator<Item = &[f64]> {
        self.blocks.iter().map(|b| &**b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entity_reads_back() {
        let value = |i: usize, f: usize| (i * 100 + f) as f64;
        let c = ChunkedFields::<20>::new(1000, value);
        assert_eq!(ChunkedFields::<20>::CAP, 96);
        const { assert!(ChunkedFields::<20>::CAP * 20 * 8 <= CHUNK_BYTES) };
        for i in [0, 95, 96, 500, 999] {
            for f in [0, 7, 19] {
                assert_eq!(c.get(i, f), value(i, f));
            }
        }
        let total: f64 = c.blocks().flat_map(|b| b.iter()).sum();
        let expected: f64 = (0..1000)
            .flat_map(|i| (0..20).map(move |f| value(i, f)))
            .sum();
        assert_eq!(total, expected);
    }
}

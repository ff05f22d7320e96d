//! The one workload every layout runs: what an entity is, how entity *i* is born, and the per-entity
//! math of the two systems. Layouts call these functions; none of them re-types a formula, so a
//! difference in speed can only come from where the bytes live.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::error::SimError;
use crate::scalar::Scalar;

/// The world rectangle entities live in, in world units (x right, y up, origin at a corner).
pub const WORLD_WIDTH: f64 = 1600.0;
pub const WORLD_HEIGHT: f64 = 900.0;
/// Regen clamps energy here (the studies' `if (energy > 100) energy = 100`).
pub const MAX_ENERGY: f64 = 100.0;
/// The studies' fixed step; results are deterministic and comparable bit for bit.
pub const DEFAULT_DT: f64 = 1.0 / 60.0;
/// A step longer than this is no longer a frame but a jump; rejected so a typo is not a teleport.
pub const MAX_DT: f64 = 1.0;

/// One entity's eight fields, the JS study's `{x, y, vx, vy, hp, energy, regen, armor}`.
/// `#[repr(C)]` because the array-of-structs layout stores exactly this, 32 bytes at `f32`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntityState<S> {
    pub x: S,
    pub y: S,
    pub vx: S,
    pub vy: S,
    pub hp: S,
    pub energy: S,
    pub regen: S,
    pub armor: S,
}

impl<S: Scalar> EntityState<S> {
    /// The fields in declaration order (hashing, field-permuted storage).
    #[inline]
    pub fn to_array(&self) -> [S; 8] {
        [
            self.x,
            self.y,
            self.vx,
            self.vy,
            self.hp,
            self.energy,
            self.regen,
            self.armor,
        ]
    }

    #[inline]
    pub fn from_array(f: [S; 8]) -> Self {
        Self {
            x: f[0],
            y: f[1],
            vx: f[2],
            vy: f[3],
            hp: f[4],
            energy: f[5],
            regen: f[6],
            armor: f[7],
        }
    }

    /// Position as the renderer wants it.
    #[inline]
    pub fn position_f32(&self) -> [f32; 2] {
        [self.x.to_f32(), self.y.to_f32()]
    }
}

/// A validated time step. Negative, zero, NaN or absurdly long steps are refused at the edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dt(f64);

impl Dt {
    pub fn new(seconds: f64) -> Result<Self, SimError> {
        if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_DT {
            Ok(Self(seconds))
        } else {
            Err(SimError::BadDt {
                value: seconds,
                max: MAX_DT,
            })
        }
    }

    pub fn seconds(self) -> f64 {
        self.0
    }

    pub fn as_scalar<S: Scalar>(self) -> S {
        S::from_f64(self.0)
    }
}

impl Default for Dt {
    fn default() -> Self {
        Self(DEFAULT_DT)
    }
}

/// Every entity draws eight 32-bit words from one ChaCha8 stream, so entity `id` starts at word
/// `id * 8`: its state is a pure function of `(seed, id)`, whoever spawns it and in what order.
const WORDS_PER_ENTITY: u128 = 8;

/// Appends the initial states of entities `first_id .. first_id + count` to `out`.
/// One seek, then a sequential read: spawning 10M entities costs one pass over the stream.
pub fn spawn_range<S: Scalar>(
    seed: u64,
    first_id: u64,
    count: usize,
    out: &mut Vec<EntityState<S>>,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_word_pos(u128::from(first_id) * WORDS_PER_ENTITY);
    out.extend((0..count).map(|_| spawn_next(&mut rng)));
}

/// Entity `id`'s initial state (the same value `spawn_range` produces for it).
pub fn spawn<S: Scalar>(seed: u64, id: u64) -> EntityState<S> {
    let mut out = Vec::with_capacity(1);
    spawn_range(seed, id, 1, &mut out);
    out[0]
}

fn spawn_next<S: Scalar>(rng: &mut ChaCha8Rng) -> EntityState<S> {
    let mut uniform = |lo: f64, hi: f64| {
        let unit = f64::from(rng.next_u32()) / 4_294_967_296.0;
        S::from_f64(lo + unit * (hi - lo))
    };
    EntityState {
        x: uniform(0.0, WORLD_WIDTH),
        y: uniform(0.0, WORLD_HEIGHT),
        vx: uniform(-120.0, 120.0),
        vy: uniform(-120.0, 120.0),
        hp: uniform(50.0, 150.0),
        energy: uniform(0.0, MAX_ENERGY),
        regen: uniform(0.0, 10.0),
        armor: uniform(0.0, 20.0),
    }
}

/// Wraps a coordinate back into `[0, extent)` after a step shorter than the extent.
/// The inner check catches `-tiny + extent` rounding up to `extent` itself.
#[inline(always)]
fn wrap<S: Scalar>(v: S, extent: S) -> S {
    if v < S::ZERO {
        let w = v + extent;
        if w < extent { w } else { S::ZERO }
    } else if v >= extent {
        v - extent
    } else {
        v
    }
}

/// The move system for one entity: integrate velocity, then wrap into the world rectangle.
#[inline(always)]
pub fn move_one<S: Scalar>(x: S, y: S, vx: S, vy: S, dt: S) -> (S, S) {
    (
        wrap(x + vx * dt, S::from_f64(WORLD_WIDTH)),
        wrap(y + vy * dt, S::from_f64(WORLD_HEIGHT)),
    )
}

/// The regen system for one entity: `energy += regen * dt`, clamped at `MAX_ENERGY`.
#[inline(always)]
pub fn regen_one<S: Scalar>(energy: S, regen: S, dt: S) -> S {
    let e = energy + regen * dt;
    let max = S::from_f64(MAX_ENERGY);
    if e > max { max } else { e }
}

/// The renderer's 4-byte point: x in 14 bits and y in 13 bits, normalized inside the world
/// rectangle (about 0.1 world units of resolution), and hp in 5 bits for the dot's color. Half the
/// bytes of two `f32`s, and bytes moved per frame are the renderer's cost.
#[inline(always)]
pub fn pack_point<S: Scalar>(x: S, y: S, hp: S) -> u32 {
    quantize(x.to_f32() * (16384.0 / WORLD_WIDTH as f32), 0x3FFF)
        | (quantize(y.to_f32() * (8192.0 / WORLD_HEIGHT as f32), 0x1FFF) << 14)
        | (quantize((hp.to_f32() - 50.0) * (32.0 / 100.0), 31) << 27)
}

/// `v` clamped to `[0, max]` and rounded to the nearest whole number, without a float-to-int
/// conversion: adding 2^23 puts the integer part in the mantissa's low bits. Plain float and bit
/// operations, so the gather loops vectorize (`as u32` did not, and cost ~6 ns per entity).
#[inline(always)]
fn quantize(v: f32, max: u32) -> u32 {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    // `max` is 2^k - 1, so the mask also keeps a (never expected) NaN inside its own field.
    (v.clamp(0.0, max as f32) + MAGIC).to_bits() & max
}

/// `(x, y, hp bucket)` back from a packed point, in world units (for tests and tools).
pub fn unpack_point(p: u32) -> (f32, f32, u32) {
    let x = (p & 0x3FFF) as f32 * (WORLD_WIDTH as f32 / 16384.0);
    let y = ((p >> 14) & 0x1FFF) as f32 * (WORLD_HEIGHT as f32 / 8192.0);
    (x, y, p >> 27)
}

/// Order-independent fingerprint of one entity: its id and the exact bits of all eight fields.
/// Summing these (wrapping) makes the checksum of a population independent of storage order.
#[inline]
pub fn entity_hash<S: Scalar>(id: u64, state: &EntityState<S>) -> u64 {
    let mut h = mix(id ^ 0x9E37_79B9_7F4A_7C15);
    for field in state.to_array() {
        h = mix(h ^ field.to_bits_u64());
    }
    h
}

/// SplitMix64's finalizer: cheap, and every input bit reaches every output bit.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_is_a_pure_function_of_seed_and_id() {
        let mut batch = Vec::new();
        spawn_range::<f32>(7, 100, 50, &mut batch);
        for (k, state) in batch.iter().enumerate() {
            assert_eq!(*state, spawn::<f32>(7, 100 + k as u64));
        }
        assert_ne!(spawn::<f32>(7, 3), spawn::<f32>(8, 3));
        assert_ne!(spawn::<f32>(7, 3), spawn::<f32>(7, 4));
    }

    #[test]
    fn spawned_entities_start_inside_the_world() {
        let mut batch = Vec::new();
        spawn_range::<f64>(1, 0, 10_000, &mut batch);
        for s in &batch {
            assert!((0.0..WORLD_WIDTH).contains(&s.x) && (0.0..WORLD_HEIGHT).contains(&s.y));
            assert!((0.0..=MAX_ENERGY).contains(&s.energy));
        }
    }

    #[test]
    fn move_wraps_into_the_world_rectangle() {
        let dt = 1.0f32;
        assert_eq!(move_one(1599.0f32, 10.0, 2.0, 0.0, dt), (1.0, 10.0));
        assert_eq!(move_one(1.0f32, 10.0, -2.0, 0.0, dt), (1599.0, 10.0));
        assert_eq!(move_one(10.0f32, 899.5, 0.0, 1.0, dt), (10.0, 0.5));
        // -tiny + 1600 rounds to 1600 in f32: must land at 0, not on the excluded edge.
        let (x, _) = move_one(0.0f32, 0.0, -1e-9, 0.0, dt);
        assert!((0.0..1600.0).contains(&x));
    }

    #[test]
    fn points_pack_inside_the_world_with_a_tenth_of_a_unit_error() {
        for (x, y, hp) in [
            (0.0f32, 0.0f32, 50.0f32),
            (1599.9, 899.9, 150.0),
            (800.0, 450.0, 100.0),
        ] {
            let (ux, uy, h) = unpack_point(pack_point(x, y, hp));
            assert!(
                (ux - x).abs() <= 0.1 && (uy - y).abs() <= 0.12,
                "{x},{y} -> {ux},{uy}"
            );
            assert!(h <= 31);
        }
        assert_eq!(unpack_point(pack_point(0.0f32, 0.0, 150.0)).2, 31);
        assert_eq!(unpack_point(pack_point(0.0f32, 0.0, 50.0)).2, 0);
    }

    #[test]
    fn regen_clamps_at_max_energy() {
        assert_eq!(regen_one(99.0f64, 120.0, 1.0 / 60.0), 100.0);
        assert_eq!(regen_one(50.0f64, 60.0, 0.5), 80.0);
    }

    #[test]
    fn dt_rejects_nonsense_with_the_accepted_range() {
        for bad in [-0.1, 0.0, f64::NAN, f64::INFINITY, 2.0] {
            let err = Dt::new(bad).unwrap_err().to_string();
            assert!(err.contains("(0, 1]"), "{err}");
        }
        assert_eq!(Dt::new(0.5).unwrap().seconds(), 0.5);
    }

    #[test]
    fn hash_sees_every_field_and_the_id() {
        let s = spawn::<f32>(1, 1);
        let base = entity_hash(1, &s);
        assert_ne!(base, entity_hash(2, &s));
        for f in 0..8 {
            let mut a = s.to_array();
            a[f] += 1.0;
            assert_ne!(
                base,
                entity_hash(1, &EntityState::from_array(a)),
                "field {f}"
            );
        }
    }
}

//! The one workload every layout runs: what an entity is, how entity *i* is born, which entity it
//! seeks, and the per-entity math of the three systems (`move_one`, `regen_one`, `seek_one`).
//! Layouts call these functions; none of them re-types a formula, so a difference in speed can
//! only come from where the bytes live.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::SimError;
use crate::scalar::Scalar;

/// The world rectangle entities live in, in world units (x right, y up, origin at a corner).
/// The seed the bench and the counters spawn from: one constant below both, so that the
/// counters' processes build the very populations the bench measures.
pub const SEED: u64 = 42;

pub const WORLD_WIDTH: f64 = 1600.0;
pub const WORLD_HEIGHT: f64 = 900.0;
/// Regen clamps energy here (the studies' `if (energy > 100) energy = 100`).
pub const MAX_ENERGY: f64 = 100.0;
/// The studies' fixed step; results are deterministic and comparable bit for bit.
pub const DEFAULT_DT: f64 = 1.0 / 60.0;
/// The frame budget of a 60 Hz display, in ms: the line the app's plot, HUD and scoreboard, the
/// scripts' `say` and the bench's crossings all draw. The one place the number is written.
pub const BUDGET_MS: f64 = 1000.0 / 60.0;
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

/// How entities are born. Both are pure functions of `(seed, id)`; they differ only in where
/// entities start and how they head off, never in the fields or the systems.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SpawnPattern {
    /// Streams (the default): most entities are born in one of [`STREAMS`] streams, a line of
    /// [`CLUMPS`] clumps across the world whose members share a heading and nearly share a speed,
    /// so flows cross the world, wrap, and keep their shape while they move; the rest drift
    /// anywhere at any velocity. Density varies, so a million dots still show structure, and
    /// motion shows as clumps travelling along their stream.
    #[default]
    Streams,
    /// The studies' pattern: position, velocity and every other field uniform at random. At
    /// 100k entities and more it reads as TV static; kept as the bench's control that the
    /// pattern does not move the timings.
    Uniform,
}

impl SpawnPattern {
    pub fn name(self) -> &'static str {
        match self {
            SpawnPattern::Streams => "streams",
            SpawnPattern::Uniform => "uniform",
        }
    }
}

/// Which systems a frame runs. `move` and `regen` stream over each entity's own fields (the
/// pattern data-oriented layouts always win); `seek` reads another entity by handle; `avoid`
/// reads every entity near it, through a grid ([`crate::neighbours`]). Order within a frame:
/// seek, avoid, move, regen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Systems {
    pub seek: bool,
    pub avoid: bool,
}

impl Systems {
    /// `move + regen`: what the app was built around, and its default.
    pub const MOVE_REGEN: Systems = Systems {
        seek: false,
        avoid: false,
    };
    /// `move + regen + seek`.
    pub const WITH_SEEK: Systems = Systems {
        seek: true,
        avoid: false,
    };
    /// `move + regen + avoid`.
    pub const WITH_AVOID: Systems = Systems {
        seek: false,
        avoid: true,
    };
    /// Every system.
    pub const ALL: Systems = Systems {
        seek: true,
        avoid: true,
    };
    pub const EVERY: [Systems; 4] = [
        Systems::MOVE_REGEN,
        Systems::WITH_SEEK,
        Systems::WITH_AVOID,
        Systems::ALL,
    ];

    /// As reports, CSV and the panel name it.
    pub fn name(self) -> &'static str {
        match (self.seek, self.avoid) {
            (false, false) => "move+regen",
            (true, false) => "move+regen+seek",
            (false, true) => "move+regen+avoid",
            (true, true) => "move+regen+seek+avoid",
        }
    }

    /// Whether the seek system runs.
    pub fn seeks(self) -> bool {
        self.seek
    }

    /// Whether the neighbour system runs.
    pub fn avoids(self) -> bool {
        self.avoid
    }

    pub fn with_seek(self, seek: bool) -> Self {
        Self { seek, ..self }
    }

    pub fn with_avoid(self, avoid: bool) -> Self {
        Self { avoid, ..self }
    }
}

/// Streams in the [`SpawnPattern::Streams`] pattern; each has its own heading, speed and color.
pub const STREAMS: usize = 12;
/// Clumps along each stream: what makes motion along a stream visible.
pub const CLUMPS: usize = 5;
/// The share of entities born outside any stream (a faint haze over the whole world): one group
/// in `STREAMS + 1` ([`group_of`]).
pub const DRIFTER_SHARE: f64 = 1.0 / (STREAMS + 1) as f64;
/// Random draws per entity, each one `random_range` call: a fixed count, so entity `id` starts
/// at a known position of the generator's stream whatever the pattern.
const DRAWS_PER_ENTITY: u128 = 11;

/// The groups of the [`SpawnPattern::Streams`] pattern: one per clump of each stream, and
/// [`CLUMPS`] of drifters. Entity `id` is born in group `id % GROUPS`, so the entities of one
/// group are exactly `GROUPS` ids apart: which lets [`target_of`] pick a target in the seeker's
/// own clump (the world stays legible while everyone seeks) that lives anywhere in storage (the
/// random access is real), as a pure function of the id.
pub const GROUPS: u64 = ((STREAMS + 1) * CLUMPS) as u64;

/// Entity `id`'s group ([`GROUPS`]): its stream (`STREAMS` for a drifter) and clump.
#[inline]
pub fn group_of(id: u64) -> (usize, usize) {
    let group = (id % GROUPS) as usize;
    (group / CLUMPS, group % CLUMPS)
}

/// The entity that entity `id` seeks: an earlier id of its own group, drawn uniformly from all of
/// them (so over a population the distance in storage between seeker and target spreads over the
/// whole storage), or none for the first entity of each group. A pure function of the seed and
/// the id, the same in every layout; whether that entity is still alive is the layout's to find
/// out through the handle it holds.
pub fn target_of(seed: u64, id: u64) -> Option<u64> {
    let earlier = id / GROUPS;
    if earlier == 0 {
        return None;
    }
    let pick = 1 + mix(seed ^ mix(id ^ 0x7A26_E7A5_EE4E_5EED)) % earlier;
    Some(id - pick * GROUPS)
}

/// One stream of the pattern, a pure function of the seed.
#[derive(Clone, Copy, Debug)]
struct Stream {
    origin: [f64; 2],
    /// Unit heading.
    heading: [f64; 2],
    speed: f64,
    /// Distance between clump centers along the heading.
    clump_spacing: f64,
    /// Half the length of a clump along the heading, and half the width across it.
    clump_half_length: f64,
    half_width: f64,
    hp_center: f64,
}

/// The streams of `seed`, from their own generator stream (entities read stream 0, so adding
/// streams never shifts an entity's draws).
fn streams(seed: u64) -> [Stream; STREAMS] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    std::array::from_fn(|k| {
        // A direction from a point in the unit disc, normalized with `sqrt` (correctly rounded
        // everywhere) rather than `cos`/`sin`, whose last bit differs between math libraries and
        // even between CPUs (glibc picks an FMA variant at run time): entity states must be the
        // same bits on every machine.
        let heading = loop {
            let (a, b) = (
                rng.random_range(-1.0..1.0f64),
                rng.random_range(-1.0..1.0f64),
            );
            let norm = (a * a + b * b).sqrt();
            if (0.1..=1.0).contains(&norm) {
                break [a / norm, b / norm];
            }
        };
        let length = rng.random_range(400.0..1100.0);
        // Colors spread over the whole hp ramp, one band per stream.
        let hp_band = (k as f64 + rng.random_range(0.2..0.8)) / STREAMS as f64;
        Stream {
            origin: [
                rng.random_range(0.0..WORLD_WIDTH),
                rng.random_range(0.0..WORLD_HEIGHT),
            ],
            heading,
            speed: rng.random_range(35.0..140.0),
            clump_spacing: length / CLUMPS as f64,
            clump_half_length: length / CLUMPS as f64 * rng.random_range(0.15..0.4),
            half_width: rng.random_range(4.0..22.0),
            hp_center: 55.0 + 90.0 * hp_band,
        }
    })
}

/// Appends the initial states of entities `first_id .. first_id + count` in `pattern` to `out`.
/// One seek, then a sequential read: spawning 10M entities costs one pass over the stream.
pub fn spawn_range<S: Scalar>(
    pattern: SpawnPattern,
    seed: u64,
    first_id: u64,
    count: usize,
    out: &mut Vec<EntityState<S>>,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Each draw takes one 32-bit word of the stream for `f32`, two for `f64`.
    let words_per_draw = (size_of::<S>() / 4) as u128;
    rng.set_word_pos(u128::from(first_id) * DRAWS_PER_ENTITY * words_per_draw);
    let streams = streams(seed);
    out.extend((first_id..first_id + count as u64).map(|id| match pattern {
        SpawnPattern::Streams => spawn_in_stream(&mut rng, &streams, id),
        SpawnPattern::Uniform => spawn_uniform(&mut rng),
    }));
}

/// Entity `id`'s initial state in the default pattern (the value `spawn_range` produces for it).
pub fn spawn<S: Scalar>(seed: u64, id: u64) -> EntityState<S> {
    let mut out = Vec::with_capacity(1);
    spawn_range(SpawnPattern::default(), seed, id, 1, &mut out);
    out[0]
}

/// A uniform draw in `[lo, hi)`, computed in `S` as the layouts store it.
#[inline]
fn draw<S: Scalar>(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> S {
    rng.random_range(S::from_f64(lo)..S::from_f64(hi))
}

/// A draw in `[-1, 1)`.
#[inline]
fn draw_signed<S: Scalar>(rng: &mut ChaCha8Rng) -> f64 {
    draw::<S>(rng, -1.0, 1.0).to_f64()
}

/// The fields every pattern draws the same way, last, so the draw count stays fixed.
#[inline]
fn finish<S: Scalar>(rng: &mut ChaCha8Rng, x: S, y: S, vx: S, vy: S, hp: S) -> EntityState<S> {
    EntityState {
        x,
        y,
        vx,
        vy,
        hp,
        energy: draw(rng, 0.0, MAX_ENERGY),
        regen: draw(rng, 0.0, 10.0),
        armor: draw(rng, 0.0, 20.0),
    }
}

fn spawn_uniform<S: Scalar>(rng: &mut ChaCha8Rng) -> EntityState<S> {
    let x = into_world(draw::<S>(rng, 0.0, WORLD_WIDTH).to_f64(), WORLD_WIDTH);
    let y = into_world(draw::<S>(rng, 0.0, WORLD_HEIGHT).to_f64(), WORLD_HEIGHT);
    let vx = draw(rng, -120.0, 120.0);
    let vy = draw(rng, -120.0, 120.0);
    let hp = draw(rng, 50.0, 150.0);
    // Unused draws keep the count fixed at `DRAWS_PER_ENTITY`.
    for _ in 0..3 {
        draw_signed::<S>(rng);
    }
    finish(rng, x, y, vx, vy, hp)
}

fn spawn_in_stream<S: Scalar>(
    rng: &mut ChaCha8Rng,
    streams: &[Stream; STREAMS],
    id: u64,
) -> EntityState<S> {
    // The stream and clump are the id's group; this draw is kept so that every later draw stays
    // where it was (the generator's position is a function of the id alone).
    let _unused = draw::<S>(rng, 0.0, 1.0);
    let clump = draw::<S>(rng, 0.0, 1.0).to_f64();
    // Sums of two uniforms: clumps and streams thin out toward their edges instead of ending in
    // hard rectangles.
    let along = draw_signed::<S>(rng) + draw_signed::<S>(rng);
    let across = draw_signed::<S>(rng) + draw_signed::<S>(rng);
    let jitter = draw_signed::<S>(rng);
    let hp_jitter = draw_signed::<S>(rng);
    let (k, c) = group_of(id);
    if k == STREAMS {
        // A drifter: anywhere, any heading, any color; the stream draws are reused as its own.
        return finish(
            rng,
            into_world(WORLD_WIDTH * clump, WORLD_WIDTH),
            into_world(WORLD_HEIGHT * (0.5 + 0.5 * hp_jitter), WORLD_HEIGHT),
            S::from_f64(60.0 * across),
            S::from_f64(120.0 * jitter),
            S::from_f64(100.0 + 25.0 * along),
        );
    }
    let s = &streams[k];
    let along = c as f64 * s.clump_spacing + along * s.clump_half_length;
    let across = across * s.half_width;
    let [hx, hy] = s.heading;
    let x = s.origin[0] + along * hx - across * hy;
    let y = s.origin[1] + along * hy + across * hx;
    // Nearly the same speed: clumps keep their shape for minutes and smear only slowly.
    let speed = s.speed * (1.0 + 0.01 * jitter);
    finish(
        rng,
        into_world(x, WORLD_WIDTH),
        into_world(y, WORLD_HEIGHT),
        S::from_f64(speed * hx),
        S::from_f64(speed * hy),
        S::from_f64(s.hp_center + 6.0 * hp_jitter),
    )
}

/// `v` wrapped into `[0, extent)` and stored in `S`; a value that rounds up to `extent` in `S`
/// lands on 0, as `move_one`'s wrap does.
fn into_world<S: Scalar>(v: f64, extent: f64) -> S {
    let s = S::from_f64(v.rem_euclid(extent));
    if s < S::from_f64(extent) { s } else { S::ZERO }
}

/// Wraps a coordinate back into `[0, extent)` after a step shorter than the extent.
/// The inner check catches `-tiny + extent` rounding up to `extent` itself.
#[inline(always)]
pub fn wrap<S: Scalar>(v: S, extent: S) -> S {
    if v < S::ZERO {
        let w = v + extent;
        if w < extent { w } else { S::ZERO }
    } else if v >= extent {
        v - extent
    } else {
        v
    }
}

/// The move system for one coordinate: integrate its velocity, then wrap into `[0, extent)`.
/// Loops that see coordinates as one flat stream (the tuned ECS over interleaved `Position`s)
/// call this with a repeating `[WORLD_WIDTH, WORLD_HEIGHT]` extent.
#[inline(always)]
pub fn move_coordinate<S: Scalar>(v: S, velocity: S, dt: S, extent: S) -> S {
    wrap(v + velocity * dt, extent)
}

/// The move system for one entity: integrate velocity, then wrap into the world rectangle.
#[inline(always)]
pub fn move_one<S: Scalar>(x: S, y: S, vx: S, vy: S, dt: S) -> (S, S) {
    (
        move_coordinate(x, vx, dt, S::from_f64(WORLD_WIDTH)),
        move_coordinate(y, vy, dt, S::from_f64(WORLD_HEIGHT)),
    )
}

/// The regen system for one entity: `energy += regen * dt`, clamped at `MAX_ENERGY`.
#[inline(always)]
pub fn regen_one<S: Scalar>(energy: S, regen: S, dt: S) -> S {
    let e = energy + regen * dt;
    let max = S::from_f64(MAX_ENERGY);
    if e > max { max } else { e }
}

/// How hard a seeker steers toward its target: velocity gained per second per world unit of
/// distance (a spring; a clump-mate 20 units away pulls at 12 units/s²), gentle enough that a
/// stream keeps its heading and a clump its shape, drawing together as it travels.
pub const SEEK_GAIN: f64 = 0.6;
/// The fastest a seeker may go along each axis, in world units per second: the pull of a target
/// across the world cannot run away (stream speeds go up to 140, drifters' up to 120 an axis).
pub const MAX_SEEK_SPEED: f64 = 240.0;

/// The shortest way from one coordinate to another across the wrapping world: `d` in
/// `(-extent, extent)` folded into `[-extent/2, extent/2]`.
#[inline(always)]
pub fn shortest<S: Scalar>(d: S, extent: S, half: S) -> S {
    if d > half {
        d - extent
    } else if d < S::ZERO - half {
        d + extent
    } else {
        d
    }
}

/// Limits one axis of a seeker's velocity to `[-max, max]`.
#[inline(always)]
pub fn clamp_speed<S: Scalar>(v: S, max: S) -> S {
    if v > max {
        max
    } else if v < S::ZERO - max {
        S::ZERO - max
    } else {
        v
    }
}

/// The seek system for one entity: steer toward the target's position `(tx, ty)` (the shortest
/// way across the wrapping world), within [`MAX_SEEK_SPEED`] on each axis. Writes only the
/// seeker's own velocity, and reads no velocity: every seeker can run at once, in any order.
#[inline(always)]
pub fn seek_one<S: Scalar>(x: S, y: S, vx: S, vy: S, tx: S, ty: S, dt: S) -> (S, S) {
    let [w, h, half_w, half_h, pull, max] = seek_constants(dt);
    (
        clamp_speed(vx + shortest(tx - x, w, half_w) * pull, max),
        clamp_speed(vy + shortest(ty - y, h, half_h) * pull, max),
    )
}

/// [`seek_one`] as the tuned seek runs it: the same values, picked by selects instead of
/// branches. Whether a target lies across the world's wrap, or a pull takes a velocity past the
/// limit, depends on where two entities stand; where the predictor guesses wrong, the work
/// behind the branch starts over, the loads of the gather with it. It picks among the same
/// candidates and computes no new value: bit-identical to [`seek_one`].
#[inline(always)]
pub fn seek_one_unpredictable<S: Scalar>(x: S, y: S, vx: S, vy: S, tx: S, ty: S, dt: S) -> (S, S) {
    use std::hint::select_unpredictable as pick;
    let [w, h, half_w, half_h, pull, max] = seek_constants(dt);
    let shortest = |d: S, extent: S, half: S| {
        pick(
            d > half,
            d - extent,
            pick(d < S::ZERO - half, d + extent, d),
        )
    };
    let clamp = |v: S| pick(v > max, max, pick(v < S::ZERO - max, S::ZERO - max, v));
    (
        clamp(vx + shortest(tx - x, w, half_w) * pull),
        clamp(vy + shortest(ty - y, h, half_h) * pull),
    )
}

/// The world's extents, their halves, the pull over `dt` and the speed limit, in `S`.
#[inline(always)]
fn seek_constants<S: Scalar>(dt: S) -> [S; 6] {
    [
        S::from_f64(WORLD_WIDTH),
        S::from_f64(WORLD_HEIGHT),
        S::from_f64(WORLD_WIDTH / 2.0),
        S::from_f64(WORLD_HEIGHT / 2.0),
        S::from_f64(SEEK_GAIN) * dt,
        S::from_f64(MAX_SEEK_SPEED),
    ]
}

/// How hard neighbours push apart: velocity gained per second, along each axis, for a push of
/// one ([`avoid_pair`]: a neighbour at the same spot pushes with one, one at the radius with
/// none). Strong enough that a dense clump visibly spreads within a few seconds, weak beside a
/// stream's speed, so that streams keep their heading while their clumps thin out.
pub const AVOID_GAIN: f64 = 40.0;
/// The fixed point a push is summed in: each pair's push is truncated to a multiple of
/// `1 / AVOID_FIXED_ONE` and summed as an integer. An integer sum does not depend on the order
/// its terms come in (a wrapping one neither), so an entity's result is the same bits whichever
/// order its neighbours are visited in (cell order, id order, any layout, any thread count); a
/// float sum would not be. A power of two: the scaling is exact, a push keeps 16 bits below
/// one, and one entity's pushes fit an `i32` up to tens of thousands of neighbours, far past
/// what a reach accepts ([`crate::neighbours::MAX_CANDIDATES`]).
pub const AVOID_FIXED_ONE: f64 = 65_536.0;

/// What [`avoid_pair`] adds up for one entity: its push in fixed point ([`AVOID_FIXED_ONE`]),
/// and how many entities sat within the radius (itself included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Push {
    pub x: i32,
    pub y: i32,
    pub within: u32,
}

/// The avoid rule's constants for one radius, in `S`: the world's extents and their halves,
/// the radius squared, its inverse, the inverse of its square, and the fixed point's one.
#[derive(Clone, Copy, Debug)]
pub struct AvoidConstants<S> {
    w: S,
    h: S,
    half_w: S,
    half_h: S,
    r2: S,
    inv_r: S,
    inv_r2: S,
    one: S,
    fixed: S,
}

impl<S: Scalar> AvoidConstants<S> {
    pub fn new(radius: f64) -> Self {
        Self {
            w: S::from_f64(WORLD_WIDTH),
            h: S::from_f64(WORLD_HEIGHT),
            half_w: S::from_f64(WORLD_WIDTH / 2.0),
            half_h: S::from_f64(WORLD_HEIGHT / 2.0),
            r2: S::from_f64(radius * radius),
            inv_r: S::from_f64(1.0 / radius),
            inv_r2: S::from_f64(1.0 / (radius * radius)),
            one: S::from_f64(1.0),
            fixed: S::from_f64(AVOID_FIXED_ONE),
        }
    }

    /// The radius squared, its inverse and the inverse of its square, as the rule rounds them
    /// (what the gpu layout's shader is handed).
    pub fn radius_terms(&self) -> [S; 3] {
        [self.r2, self.inv_r, self.inv_r2]
    }
}

/// The avoid rule for one pair: the entity at `(x, y)` is pushed away from the one at
/// `(nx, ny)` when it is within the radius, the shortest way across the wrapping world, by
/// `(1 - d²/R²)` along `d/R`: hardest up close, nothing at the radius, no square root. The push
/// is added to `push` in fixed point ([`AVOID_FIXED_ONE`]). Written with selects, not
/// branches: whether a candidate is within the radius is a coin toss the predictor loses, and
/// a loop of selects over a run of candidates vectorizes. An entity paired with itself, or one
/// outside the radius, adds a push of zero.
#[inline(always)]
pub fn avoid_pair<S: Scalar>(c: &AvoidConstants<S>, x: S, y: S, nx: S, ny: S, push: &mut Push) {
    use std::hint::select_unpredictable as pick;
    let shortest = |d: S, extent: S, half: S| {
        pick(
            d > half,
            d - extent,
            pick(d < S::ZERO - half, d + extent, d),
        )
    };
    let dx = shortest(nx - x, c.w, c.half_w);
    let dy = shortest(ny - y, c.h, c.half_h);
    let d2 = dx * dx + dy * dy;
    let inside = d2 < c.r2;
    let fall = pick(inside, c.one - d2 * c.inv_r2, S::ZERO) * c.inv_r * c.fixed;
    push.x = push.x.wrapping_sub((dx * fall).trunc_i32());
    push.y = push.y.wrapping_sub((dy * fall).trunc_i32());
    push.within += u32::from(inside);
}

/// The avoid system for one entity, once its push is summed ([`avoid_pair`] over everyone
/// within the radius): the push, scaled by [`AVOID_GAIN`] over `dt`, is added to its velocity,
/// clamped as seek clamps it ([`MAX_SEEK_SPEED`]). Reads no other entity's velocity, so every
/// entity can run at once, in any order.
#[inline(always)]
pub fn avoid_one<S: Scalar>(vx: S, vy: S, push: Push, dt: S) -> (S, S) {
    let gain = S::from_f64(AVOID_GAIN) * dt;
    let max = S::from_f64(MAX_SEEK_SPEED);
    let px = S::from_f64(f64::from(push.x) / AVOID_FIXED_ONE);
    let py = S::from_f64(f64::from(push.y) / AVOID_FIXED_ONE);
    (
        clamp_speed(vx + px * gain, max),
        clamp_speed(vy + py * gain, max),
    )
}

/// The renderer's 4-byte point: x in [`POINT_X_BITS`] bits and y in [`POINT_Y_BITS`] bits,
/// normalized inside the world rectangle (about 0.1 world units of resolution), and hp in
/// [`POINT_HP_BITS`] bits for the dot's color. Half the bytes of two `f32`s, and bytes moved per
/// frame are the renderer's cost. The shader is compiled with these constants (shader defs), so
/// the format is written down once, here.
pub const POINT_X_BITS: u32 = 14;
pub const POINT_Y_BITS: u32 = 13;
pub const POINT_HP_BITS: u32 = 32 - POINT_X_BITS - POINT_Y_BITS;
/// The hp that maps to color bucket 0, and the span mapped onto all buckets.
pub const POINT_HP_MIN: f32 = 50.0;
pub const POINT_HP_SPAN: f32 = 100.0;

const fn mask(bits: u32) -> u32 {
    (1 << bits) - 1
}

/// Quantization steps per world unit (and per hp), as `f32`s rounded once here: the gather loops
/// and the gpu layout's shader (a pipeline override) multiply by exactly these.
pub const POINT_X_SCALE: f32 = (1u32 << POINT_X_BITS) as f32 / WORLD_WIDTH as f32;
pub const POINT_Y_SCALE: f32 = (1u32 << POINT_Y_BITS) as f32 / WORLD_HEIGHT as f32;
pub const POINT_HP_SCALE: f32 = (1u32 << POINT_HP_BITS) as f32 / POINT_HP_SPAN;

#[inline(always)]
pub fn pack_point<S: Scalar>(x: S, y: S, hp: S) -> u32 {
    quantize(x.to_f32() * POINT_X_SCALE, mask(POINT_X_BITS))
        | (quantize(y.to_f32() * POINT_Y_SCALE, mask(POINT_Y_BITS)) << POINT_X_BITS)
        | (quantize(
            (hp.to_f32() - POINT_HP_MIN) * POINT_HP_SCALE,
            mask(POINT_HP_BITS),
        ) << (POINT_X_BITS + POINT_Y_BITS))
}

/// Where a gather writes packed points: wgpu's write-only staging memory in the app, so the points
/// go to the GPU without a copy in between, or a plain slice ([`sink_of`]). Write-only, because
/// mapped GPU memory may be write-combining: reading it back would crawl. Gathers fill it with
/// `write_iter`, which compiles to the same vectorized loop as a slice's (docs/results/gpu.md,
/// "The CPU layouts' path to the GPU").
pub type PointSink<'a> = wgpu_types::WriteOnly<'a, [[u8; 4]]>;

/// A sink over a slice of points.
pub fn sink_of(points: &mut [u32]) -> PointSink<'_> {
    wgpu_types::WriteOnly::from_mut(bytemuck::cast_slice_mut(points))
}

/// A piece of a [`PointSink`] that a gather hands to a thread of the pool.
pub struct SinkPart<'a>(pub PointSink<'a>);

// SAFETY: `WriteOnly<'a, [T]>` is a write-only `&'a mut [T]` (a pointer to the slice and a
// `PhantomData<&'a mut T>`), which is `Send` when `T` is. wgpu-types 29.0.4 implements `Send` for
// `WriteOnly<T>` only where `T: Sized`, which leaves slices out; parts never overlap
// (`split_at`). Measured need: without it a gather into wgpu's staging memory runs on one core.
// The assertions below hold that reading of wgpu-types' private layout to the build: a version
// that gave `WriteOnly` more than the slice's pointer and length (a guard, a shared counter)
// changes its size and fails to compile, and so does one whose sized form stopped being `Send`.
#[allow(unsafe_code)]
unsafe impl Send for SinkPart<'_> {}

const _: () = assert!(size_of::<PointSink<'static>>() == size_of::<&'static mut [[u8; 4]]>());
const _: () = assert!(align_of::<PointSink<'static>>() == align_of::<&'static mut [[u8; 4]]>());
const _: fn() = || {
    fn sized_write_only_is_send<T: Send>() {}
    sized_write_only_is_send::<wgpu_types::WriteOnly<'static, [u8; 4]>>();
};

/// `sink` cut into consecutive pieces of `chunk` points (the last one shorter), for a gather
/// split over threads.
pub fn sink_chunks(sink: PointSink<'_>, chunk: usize) -> impl Iterator<Item = SinkPart<'_>> {
    let chunk = chunk.max(1);
    let mut rest = Some(sink);
    std::iter::from_fn(move || {
        let sink = rest.take()?;
        let len = sink.len();
        if len == 0 {
            return None;
        }
        let (head, tail) = sink.split_at(chunk.min(len));
        rest = Some(tail);
        Some(SinkPart(head))
    })
}

/// A packed point as the sink stores it.
#[inline(always)]
pub fn point_bytes<S: Scalar>(x: S, y: S, hp: S) -> [u8; 4] {
    pack_point(x, y, hp).to_le_bytes()
}

/// `v` clamped to `[0, max]` and rounded to the nearest whole number, without a float-to-int
/// conversion: adding 2^23 puts the integer part in the mantissa's low bits. Plain float and bit
/// operations, so the gather loops vectorize (`as u32` does not, and the gather is slower for it).
#[inline(always)]
fn quantize(v: f32, max: u32) -> u32 {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    // `max` is 2^k - 1, so the mask also keeps a (never expected) NaN inside its own field.
    (v.clamp(0.0, max as f32) + MAGIC).to_bits() & max
}

/// `(x, y, hp bucket)` back from a packed point, in world units (for tests and tools).
pub fn unpack_point(p: u32) -> (f32, f32, u32) {
    let x = (p & mask(POINT_X_BITS)) as f32 * (WORLD_WIDTH as f32 / (1u32 << POINT_X_BITS) as f32);
    let y = ((p >> POINT_X_BITS) & mask(POINT_Y_BITS)) as f32
        * (WORLD_HEIGHT as f32 / (1u32 << POINT_Y_BITS) as f32);
    (x, y, p >> (POINT_X_BITS + POINT_Y_BITS))
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

    /// The tuned seek's branchless arithmetic picks exactly what the branches do: on both sides
    /// of every wrap and limit, at the edges themselves, at signed zeros, and over random pairs.
    #[test]
    fn the_branchless_seek_is_bit_identical_to_the_branching_one() {
        fn check<S: Scalar>(values: &[f64], dts: &[f64]) -> usize {
            let mut compared = 0;
            for &a in values {
                for &b in values {
                    for &step in dts {
                        let [x, tx, v, dt] = [a, b, a - b, step].map(S::from_f64);
                        let want = seek_one(x, x, v, v, tx, tx, dt);
                        let got = seek_one_unpredictable(x, x, v, v, tx, tx, dt);
                        let bits = |(a, b): (S, S)| (a.to_bits_u64(), b.to_bits_u64());
                        assert_eq!(bits(got), bits(want), "{} x {a} to {b}, dt {step}", S::NAME);
                        compared += 1;
                    }
                }
            }
            compared
        }
        let (w, h, m) = (WORLD_WIDTH, WORLD_HEIGHT, MAX_SEEK_SPEED);
        let mut values = vec![0.0, -0.0, w, h, w / 2.0, h / 2.0, m, -m, 2.0 * m, -2.0 * m];
        for edge in [w / 2.0, h / 2.0, m, -m] {
            values.extend([edge.next_up(), edge.next_down()]);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        values.extend((0..60).map(|_| rng.random_range(-w..w)));
        let dts = [0.0, 1.0 / 60.0, 0.5, 40.0];
        assert!(check::<f32>(&values, &dts) > 10_000);
        assert!(check::<f64>(&values, &dts) > 10_000);
    }

    #[test]
    fn spawn_is_a_pure_function_of_seed_and_id() {
        let mut batch = Vec::new();
        spawn_range::<f32>(SpawnPattern::Streams, 7, 100, 50, &mut batch);
        for (k, state) in batch.iter().enumerate() {
            assert_eq!(*state, spawn::<f32>(7, 100 + k as u64));
        }
        assert_ne!(spawn::<f32>(7, 3), spawn::<f32>(8, 3));
        assert_ne!(spawn::<f32>(7, 3), spawn::<f32>(7, 4));
    }

    #[test]
    fn spawned_entities_start_inside_the_world() {
        for pattern in [SpawnPattern::Streams, SpawnPattern::Uniform] {
            let mut batch = Vec::new();
            spawn_range::<f64>(pattern, 1, 0, 10_000, &mut batch);
            let mut small = Vec::new();
            spawn_range::<f32>(pattern, 1, 0, 10_000, &mut small);
            for s in &batch {
                assert!((0.0..WORLD_WIDTH).contains(&s.x) && (0.0..WORLD_HEIGHT).contains(&s.y));
                assert!((0.0..=MAX_ENERGY).contains(&s.energy));
                // A step must stay shorter than the world, as `move_one`'s wrap assumes.
                assert!(s.vx.abs() < 200.0 && s.vy.abs() < 200.0);
            }
            for s in &small {
                assert!((0.0..1600.0f32).contains(&s.x) && (0.0..900.0f32).contains(&s.y));
            }
        }
    }

    /// Coefficient of variation of entity counts over a 32 x 18 grid of the world.
    fn density_cv(pattern: SpawnPattern) -> f64 {
        let mut batch = Vec::new();
        spawn_range::<f32>(pattern, 3, 0, 200_000, &mut batch);
        let mut cells = vec![0f64; 32 * 18];
        for s in &batch {
            let cx = (s.x / 1600.0 * 32.0) as usize;
            let cy = (s.y / 900.0 * 18.0) as usize;
            cells[cy * 32 + cx] += 1.0;
        }
        let mean = cells.iter().sum::<f64>() / cells.len() as f64;
        let var = cells.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / cells.len() as f64;
        var.sqrt() / mean
    }

    #[test]
    fn streams_have_structure_and_uniform_does_not() {
        // 350 entities per cell: Poisson noise alone is a CV of about 0.05.
        let uniform = density_cv(SpawnPattern::Uniform);
        let streams = density_cv(SpawnPattern::Streams);
        assert!(uniform < 0.1, "{uniform}");
        assert!(streams > 1.0, "{streams}");
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

//! A reference for a GPU that fuses: the systems stepped in plain loops over `f32`, with each
//! `a + b * c` of `workload.rs` either rounded twice, as every CPU layout computes it, or once,
//! as `f32::mul_add` (one fused multiply-add).
//!
//! SPIR-V lets a driver contract `x + v * dt` into an FMA, and WGSL cannot forbid it, so a GPU's
//! results may differ from the CPU's by that alone. `verify --gpu --fused` checks the gpu layout
//! against this reference: bit-identical means contraction explains the whole difference, and
//! the sites fused say where the driver contracts. Unfused, the reference must equal SoA bit for
//! bit (a test holds it there), so a difference is never the reference's own.

use crate::workload::{
    Dt, EntityState, MAX_ENERGY, MAX_SEEK_SPEED, SEEK_GAIN, SpawnPattern, WORLD_HEIGHT,
    WORLD_WIDTH, clamp_speed, shortest, spawn_range, target_of, wrap,
};

/// A place in the systems where the math has the shape `a + b * c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// `move`: `x + vx * dt` and `y + vy * dt`.
    Move,
    /// `regen`: `energy + regen * dt`.
    Regen,
    /// `seek`: `vx + dx * pull` and `vy + dy * pull`.
    Seek,
}

/// Which sites the reference computes with one rounding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fusion {
    pub moves: bool,
    pub regen: bool,
    pub seek: bool,
}

impl Fusion {
    pub const ALL: Fusion = Fusion {
        moves: true,
        regen: true,
        seek: true,
    };

    pub fn of(sites: &[Site]) -> Self {
        Fusion {
            moves: sites.contains(&Site::Move),
            regen: sites.contains(&Site::Regen),
            seek: sites.contains(&Site::Seek),
        }
    }

    /// `--fused`'s value: `all`, `none`, or sites joined by commas (`move,seek`).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "all" => return Ok(Fusion::ALL),
            "none" => return Ok(Fusion::default()),
            _ => {}
        }
        let sites = text
            .split(',')
            .map(|name| match name.trim() {
                "move" => Ok(Site::Move),
                "regen" => Ok(Site::Regen),
                "seek" => Ok(Site::Seek),
                other => Err(format!(
                    "'{other}' is not a site; accepted: all, none, or any of move, regen, seek joined by commas"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fusion::of(&sites))
    }

    /// As `verify` prints it: the fused sites, or "none".
    pub fn describe(self) -> String {
        let sites: Vec<&str> = [
            (self.moves, "move"),
            (self.regen, "regen"),
            (self.seek, "seek"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        if sites.is_empty() {
            "none".into()
        } else {
            sites.join(", ")
        }
    }
}

/// `a + b * c`, rounded once when `fused`.
#[inline]
fn add_product(fused: bool, a: f32, b: f32, c: f32) -> f32 {
    if fused { b.mul_add(c, a) } else { a + b * c }
}

/// Entities `0..count` of `seed` after `frames` frames of seek (when `seek`), move and regen, in
/// that order, without churn: index `i` holds entity `i`.
pub fn reference_states(
    seed: u64,
    count: usize,
    frames: usize,
    dt: Dt,
    seek: bool,
    fusion: Fusion,
) -> Vec<EntityState<f32>> {
    let mut states = Vec::with_capacity(count);
    spawn_range(SpawnPattern::default(), seed, 0, count, &mut states);
    // Without churn every target is alive: the earlier id `target_of` names.
    let targets: Vec<Option<usize>> = (0..count as u64)
        .map(|id| target_of(seed, id).map(|t| t as usize))
        .collect();
    let dt = dt.as_scalar::<f32>();
    let (w, h) = (WORLD_WIDTH as f32, WORLD_HEIGHT as f32);
    let (half_w, half_h) = ((WORLD_WIDTH / 2.0) as f32, (WORLD_HEIGHT / 2.0) as f32);
    let pull = SEEK_GAIN as f32 * dt;
    let max_speed = MAX_SEEK_SPEED as f32;
    let max_energy = MAX_ENERGY as f32;
    for _ in 0..frames {
        if seek {
            // Seek reads positions only and writes only the seeker's velocity, so one pass in
            // place is every seeker reading the frame's positions.
            for i in 0..count {
                let Some(t) = targets[i] else { continue };
                let (tx, ty) = (states[t].x, states[t].y);
                let s = &mut states[i];
                let dx = shortest(tx - s.x, w, half_w);
                let dy = shortest(ty - s.y, h, half_h);
                s.vx = clamp_speed(add_product(fusion.seek, s.vx, dx, pull), max_speed);
                s.vy = clamp_speed(add_product(fusion.seek, s.vy, dy, pull), max_speed);
            }
        }
        for s in &mut states {
            s.x = wrap(add_product(fusion.moves, s.x, s.vx, dt), w);
            s.y = wrap(add_product(fusion.moves, s.y, s.vy, dt), h);
            let e = add_product(fusion.regen, s.energy, s.regen, dt);
            s.energy = if e > max_energy { max_energy } else { e };
        }
    }
    states
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LayoutKind;
    use crate::runtime::action::Action;
    use crate::runtime::driver::Driver;

    const SEED: u64 = 42;
    const COUNT: usize = 5_000;
    const FRAMES: usize = 60;

    fn soa(seek: bool) -> Vec<EntityState<f32>> {
        let mut d = Driver::<f32>::new(LayoutKind::Soa, SEED)
            .unwrap()
            .with_chunks(usize::MAX, usize::MAX);
        d.apply(&Action::Count(COUNT)).unwrap();
        d.apply(&Action::Seek(seek)).unwrap();
        for _ in 0..FRAMES {
            assert!(d.frame_step().error.is_none());
        }
        let snapshot = d.swarm().export();
        let mut by_id = vec![None; COUNT];
        for (id, state) in snapshot.ids.iter().zip(snapshot.states) {
            by_id[*id as usize] = Some(state);
        }
        by_id.into_iter().map(Option::unwrap).collect()
    }

    fn bits(states: &[EntityState<f32>]) -> Vec<[u32; 8]> {
        states
            .iter()
            .map(|s| s.to_array().map(f32::to_bits))
            .collect()
    }

    fn reference(seek: bool, fusion: Fusion) -> Vec<EntityState<f32>> {
        reference_states(SEED, COUNT, FRAMES, Dt::default(), seek, fusion)
    }

    #[test]
    fn unfused_the_reference_is_soa_bit_for_bit() {
        for seek in [false, true] {
            assert_eq!(
                bits(&reference(seek, Fusion::default())),
                bits(&soa(seek)),
                "seek {seek}"
            );
        }
    }

    /// Each site fused alone changes some entity's bits, so a GPU that fuses one site and not
    /// another is told apart from one that fuses all.
    #[test]
    fn each_fused_site_changes_the_result() {
        let plain = bits(&reference(true, Fusion::default()));
        let mut seen = Vec::new();
        for site in [Site::Move, Site::Regen, Site::Seek] {
            let fused = bits(&reference(true, Fusion::of(&[site])));
            assert_ne!(fused, plain, "{site:?}");
            assert!(!seen.contains(&fused), "{site:?} repeats another site");
            seen.push(fused);
        }
        assert!(!seen.contains(&bits(&reference(true, Fusion::ALL))));
    }

    #[test]
    fn fusion_is_described_by_its_sites() {
        assert_eq!(Fusion::default().describe(), "none");
        assert_eq!(Fusion::ALL.describe(), "move, regen, seek");
        assert_eq!(
            Fusion::of(&[Site::Seek, Site::Move]).describe(),
            "move, seek"
        );
        assert_eq!(Fusion::parse("all"), Ok(Fusion::ALL));
        assert_eq!(Fusion::parse("none"), Ok(Fusion::default()));
        assert_eq!(Fusion::parse("seek,move"), Fusion::parse("move, seek"));
        let err = Fusion::parse("move,fma").unwrap_err();
        assert!(
            err.contains("'fma'") && err.contains("move, regen, seek"),
            "{err}"
        );
    }
}

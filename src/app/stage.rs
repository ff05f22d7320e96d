//! Where things go on the canvas: the panel on the left, and in the rest the world, letterboxed
//! to its aspect. With the memory view open the stage is split three ways, so that nothing is
//! left black and the view's sentences can be read from the back of the room: the world at the
//! top left, the view's readings (what a system brings in, the bandwidth share) beside it, and
//! the view's picture (cache lines, address scatter) across the whole width below them.
//!
//! Everything here is in physical pixels, `[x, y, width, height]`.

use entity_layouts::workload::{WORLD_HEIGHT, WORLD_WIDTH};

/// The places of the world and of the memory view's two parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    pub world: [f32; 4],
    /// The view's readings, beside the world (memory view open only).
    pub readings: Option<[f32; 4]>,
    /// The view's picture, below the world and the readings (memory view open only).
    pub picture: Option<[f32; 4]>,
}

/// The share of the free width the world takes beside the readings.
const WORLD_SHARE: f32 = 0.6;
/// The most of the height the world takes, leaving the rest to the picture.
const WORLD_MAX_HEIGHT_SHARE: f32 = 0.5;

fn aspect() -> f32 {
    (WORLD_WIDTH / WORLD_HEIGHT) as f32
}

/// The stage of a canvas of `size` physical pixels whose left `panel` pixels the panel covers.
pub fn stage([w, h]: [f32; 2], panel: f32, memory_view: bool) -> Stage {
    if !memory_view {
        return Stage {
            world: letterbox([w, h], panel),
            readings: None,
            picture: None,
        };
    }
    let (w, h) = (w.max(1.0), h.max(1.0));
    let left = panel.clamp(0.0, w - 1.0);
    let free = w - left;
    let mut world_w = free * WORLD_SHARE;
    let mut world_h = world_w / aspect();
    if world_h > h * WORLD_MAX_HEIGHT_SHARE {
        world_h = h * WORLD_MAX_HEIGHT_SHARE;
        world_w = world_h * aspect();
    }
    let (world_w, world_h) = (world_w.max(1.0), world_h.max(1.0));
    Stage {
        world: [left, 0.0, world_w, world_h],
        readings: Some([left + world_w, 0.0, (free - world_w).max(1.0), world_h]),
        picture: Some([left, world_h, free.max(1.0), (h - world_h).max(1.0)]),
    }
}

/// The world rectangle's place in a canvas of `size` physical pixels whose left `panel` pixels
/// the panel covers: as large as fits, centred, aspect kept.
pub fn letterbox([w, h]: [f32; 2], panel: f32) -> [f32; 4] {
    let (w, h) = (w.max(1.0), h.max(1.0));
    let left = panel.clamp(0.0, w - 1.0);
    let (aw, ah) = (w - left, h);
    let (vw, vh) = if aw / ah > aspect() {
        (ah * aspect(), ah)
    } else {
        (aw, aw / aspect())
    };
    [
        left + (aw - vw) / 2.0,
        (ah - vh) / 2.0,
        vw.max(1.0),
        vh.max(1.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_world_is_letterboxed_beside_the_panel() {
        let [x, y, w, h] = letterbox([1280.0, 720.0], 360.0);
        assert!((w / h - 16.0 / 9.0).abs() < 1e-3);
        assert!(x >= 360.0 && x + w <= 1280.0 + 1e-3 && y >= 0.0);
        // Extremes: a 1x1 window and a panel wider than the window still give a valid rect.
        for (size, panel) in [
            ([1.0, 1.0], 0.0),
            ([320.0, 240.0], 5000.0),
            ([7680.0, 4320.0], 0.0),
        ] {
            let [x, y, w, h] = letterbox(size, panel);
            assert!(
                w >= 1.0 && h >= 1.0 && x >= 0.0 && y >= 0.0,
                "{size:?} {panel}"
            );
        }
    }

    fn overlap(a: [f32; 4], b: [f32; 4]) -> bool {
        a[0] < b[0] + b[2] - 0.01
            && b[0] < a[0] + a[2] - 0.01
            && a[1] < b[1] + b[3] - 0.01
            && b[1] < a[1] + a[3] - 0.01
    }

    #[test]
    fn with_the_memory_view_the_stage_uses_the_whole_canvas() {
        // 1280x720 and 1920x1080, the panel at UI scale 1 and 1.25, and no panel (the HUD).
        for (size, panel) in [
            ([1280.0, 720.0], 360.0),
            ([1280.0, 720.0], 450.0),
            ([1920.0, 1080.0], 360.0),
            ([1920.0, 1080.0], 0.0),
        ] {
            let s = stage(size, panel, true);
            let (world, readings, picture) = (s.world, s.readings.unwrap(), s.picture.unwrap());
            assert!((world[2] / world[3] - 16.0 / 9.0).abs() < 1e-3, "{size:?}");
            // No part overlaps another, and together they cover everything right of the panel.
            assert!(!overlap(world, readings) && !overlap(world, picture));
            assert!(!overlap(readings, picture));
            let area: f32 = [world, readings, picture].iter().map(|r| r[2] * r[3]).sum();
            let free = (size[0] - panel) * size[1];
            assert!((area - free).abs() < 1.0, "{size:?}: {area} of {free}");
            // The world is the part of the stage the audience came for: at least a third of the
            // free width; the picture gets at least half the height.
            assert!(world[2] >= (size[0] - panel) / 3.0, "{size:?}");
            assert!(picture[3] >= size[1] / 2.0 - 0.5, "{size:?}");
        }
        // Without the view, the letterbox.
        let s = stage([1280.0, 720.0], 360.0, false);
        assert_eq!(s.world, letterbox([1280.0, 720.0], 360.0));
        assert!(s.readings.is_none() && s.picture.is_none());
        // Degenerate canvases still give valid rectangles.
        for (size, panel) in [([1.0, 1.0], 0.0), ([320.0, 240.0], 5000.0)] {
            let s = stage(size, panel, true);
            for r in [s.world, s.readings.unwrap(), s.picture.unwrap()] {
                assert!(r[2] >= 1.0 && r[3] >= 1.0, "{size:?} {panel}: {r:?}");
            }
        }
    }
}

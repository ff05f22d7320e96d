//! How the app draws the points: the name a person types for it. The drawing itself lives in the
//! app (`src/app/render/`); this is only the choice, so that the command line, scripts and the
//! bench parse it in one place (`values`).

use std::fmt;

/// Which of the app's two point renderers draws the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Renderer {
    /// A compute pass adds every point's colour into a per-pixel buffer with integer atomics,
    /// then one full-screen pass resolves that buffer into the image: the cost per point is a
    /// few atomic adds, with no triangle setup.
    #[default]
    Compute,
    /// One instanced quad (two triangles) per point, blended additively by the rasterizer: the
    /// control, and what draws where the adapter lacks compute or fragment storage.
    Quads,
}

impl Renderer {
    pub const BOTH: [Renderer; 2] = [Renderer::Compute, Renderer::Quads];

    pub fn name(self) -> &'static str {
        match self {
            Renderer::Compute => "compute",
            Renderer::Quads => "quads",
        }
    }

    /// The other one: what a toggle (key or button) switches to.
    pub fn other(self) -> Renderer {
        match self {
            Renderer::Compute => Renderer::Quads,
            Renderer::Quads => Renderer::Compute,
        }
    }
}

impl fmt::Display for Renderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

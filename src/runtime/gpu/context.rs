//! The device the gpu layout lives on. In the app it is the renderer's own device (installed at
//! startup), so the renderer draws the very buffer the compute pass writes; headless (`verify`,
//! `bench`, `replay`, tests) the first gpu layout opens one of its own. One per process: a
//! buffer can only be used on the device that made it.

use std::sync::{Arc, OnceLock};

use super::kernels::Kernels;

/// wgpu's queue, named for the app, which hands over Bevy's (`RenderQueue` derefs to it).
pub use wgpu::Queue;

/// A device that can run the gpu layout, with its pipelines built.
pub struct GpuContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub(crate) kernels: Kernels,
    /// Whether the simulate time is taken from timestamps: the device has them and they time
    /// the work (not on a software rasterizer, below).
    pub timestamps: bool,
    /// Whether the device can write timestamps at all.
    pub has_timestamp_queries: bool,
}

/// What one field's buffer may hold: the smaller of the adapter's largest storage binding and
/// largest buffer, 4 bytes per entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityLimit {
    pub max_entities: usize,
    /// The limit that decides it, with its value, as a person reads it.
    pub limit: String,
}

impl GpuContext {
    /// Checks that `device` can run the gpu layout and builds its pipelines.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        downlevel: wgpu::DownlevelFlags,
    ) -> Result<Self, String> {
        if !downlevel.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
            return Err(format!(
                "the GPU adapter '{}' ({:?}) has no compute shaders",
                info.name, info.backend
            ));
        }
        let limits = device.limits();
        // The move pass binds six storage buffers; 8 is WebGPU's guaranteed minimum, so this
        // only trips on a downlevel adapter (one below 8 runs the neighbour pass on the host).
        if limits.max_storage_buffers_per_shader_stage < 6 {
            return Err(format!(
                "the GPU adapter '{}' allows {} storage buffers per shader stage; the gpu layout needs 6",
                info.name, limits.max_storage_buffers_per_shader_stage
            ));
        }
        // Lavapipe offers timestamps, and headless they agree with the wall clock (`bench --only
        // gpu`); inside the app they read a small fraction of the wall time, so a software
        // adapter's timestamps are not shown (docs/results/gpu.md, "Simulate: the gpu layout
        // against SoA").
        let software = info.device_type == wgpu::DeviceType::Cpu;
        let has_timestamp_queries = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let timestamps = has_timestamp_queries && !software;
        let kernels = Kernels::new(&device);
        Ok(Self {
            device,
            queue,
            info,
            kernels,
            timestamps,
            has_timestamp_queries,
        })
    }

    /// The most entities one field buffer holds on this device, and the limit that says so.
    pub fn capacity_limit(&self) -> CapacityLimit {
        let limits = self.device.limits();
        let binding = limits.max_storage_buffer_binding_size;
        let buffer = limits.max_buffer_size;
        let (bytes, name) = if binding <= buffer {
            (binding, "max_storage_buffer_binding_size")
        } else {
            (buffer, "max_buffer_size")
        };
        CapacityLimit {
            max_entities: usize::try_from(bytes / 4).unwrap_or(usize::MAX),
            limit: format!("the adapter's {name} is {bytes} bytes, 4 bytes per entity per field"),
        }
    }

    /// Lavapipe, SwiftShader, WARP: the "GPU" is the CPU. Reports must say so.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The adapter as the bench and panel name it, e.g. `llvmpipe (LLVM 15.0.6, 256 bits), Vulkan,
    /// software rasterizer`.
    pub fn describe(&self) -> String {
        let kind = if self.is_software() {
            "software rasterizer (runs on the CPU)".to_string()
        } else {
            format!("{:?}", self.info.device_type)
        };
        format!("{}, {:?}, {kind}", self.info.name, self.info.backend)
    }
}

static CONTEXT: OnceLock<Result<Arc<GpuContext>, String>> = OnceLock::new();

/// Makes `context` the one every gpu layout of this process uses (the app hands over its
/// renderer's device). Fails if a device was already chosen.
pub fn install(context: Result<GpuContext, String>) -> Result<(), String> {
    CONTEXT
        .set(context.map(Arc::new))
        .map_err(|_| "a GPU device was already chosen for this process".to_string())
}

/// The process's device, opening one on first use if none was installed; or why there is none.
pub fn shared() -> Result<Arc<GpuContext>, String> {
    CONTEXT
        .get_or_init(|| open_headless().map(Arc::new))
        .clone()
}

/// Whether the gpu layout can run here, or why not (opens the device on first use; the answer
/// holds for the process).
pub fn availability() -> Result<(), String> {
    shared().map(|_| ())
}

/// A device of our own, as Bevy would pick it (high performance, every limit the adapter has,
/// timestamps where offered). `WGPU_BACKEND` and `WGPU_ADAPTER_NAME` choose as they do for Bevy.
fn open_headless() -> Result<GpuContext, String> {
    let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    if wgpu::Backends::from_env().is_none() {
        // GL adapters have no compute on most drivers; the primary backends are the ones that do.
        descriptor.backends = wgpu::Backends::PRIMARY;
    }
    let instance = wgpu::Instance::new(descriptor);
    let adapter = bevy_tasks::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: false,
        compatible_surface: None,
    }))
    .map_err(|e| {
        format!(
            "no GPU adapter was found ({e}); install your GPU's Vulkan driver, or Mesa's software \
             Vulkan (Debian/Ubuntu: mesa-vulkan-drivers)"
        )
    })?;
    let required_features = adapter.features() & wgpu::Features::TIMESTAMP_QUERY;
    let (device, queue) = bevy_tasks::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("entity-layouts gpu layout"),
        required_features,
        required_limits: adapter.limits(),
        ..Default::default()
    }))
    .map_err(|e| {
        format!(
            "the GPU adapter '{}' refused a device: {e}",
            adapter.get_info().name
        )
    })?;
    GpuContext::new(
        device,
        queue,
        adapter.get_info(),
        adapter.get_downlevel_capabilities().flags,
    )
}

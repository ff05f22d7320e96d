//! The gpu layout's compute pipelines (assets/shaders/simulate.wgsl), compiled once per device
//! with every constant taken from workload.rs as a pipeline override.

use crate::workload::{
    MAX_ENERGY, MAX_SEEK_SPEED, POINT_HP_BITS, POINT_HP_MIN, POINT_HP_SCALE, POINT_X_BITS,
    POINT_X_SCALE, POINT_Y_BITS, POINT_Y_SCALE, SEEK_GAIN, WORLD_HEIGHT, WORLD_WIDTH,
};

/// Invocations per workgroup (the shader's `@workgroup_size`).
pub const WORKGROUP: u32 = 256;
/// WebGPU's guaranteed maximum of workgroups per dispatch dimension.
const MAX_GROUPS_PER_DIMENSION: u32 = 65_535;

/// One dispatch's arguments, the shader's `Dispatch`.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DispatchArgs {
    pub len: u32,
    pub groups_x: u32,
    pub dt: f32,
    pub _pad: u32,
}

impl DispatchArgs {
    /// Arguments and workgroup counts (x, y) for `len` invocations.
    pub fn new(len: usize, dt: f32) -> (Self, [u32; 2]) {
        let groups = u32::try_from(len.div_ceil(WORKGROUP as usize)).unwrap_or(u32::MAX);
        let groups_x = groups.clamp(1, MAX_GROUPS_PER_DIMENSION);
        let groups_y = groups.div_ceil(groups_x);
        let args = Self {
            len: u32::try_from(len).unwrap_or(u32::MAX),
            groups_x,
            dt,
            _pad: 0,
        };
        (args, [groups_x, groups_y])
    }
}

pub const ARGS_BYTES: u64 = size_of::<DispatchArgs>() as u64;

pub(crate) struct Kernels {
    pub move_layout: wgpu::BindGroupLayout,
    pub move_pipeline: wgpu::ComputePipeline,
    pub regen_layout: wgpu::BindGroupLayout,
    pub regen_pipeline: wgpu::ComputePipeline,
    pub seek_layout: wgpu::BindGroupLayout,
    pub seek_pipeline: wgpu::ComputePipeline,
    pub move_list_layout: wgpu::BindGroupLayout,
    pub gather_pipeline: wgpu::ComputePipeline,
    pub scatter_pipeline: wgpu::ComputePipeline,
}

fn uniform(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(ARGS_BYTES),
        },
        count: None,
    }
}

fn storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

impl Kernels {
    pub fn new(device: &wgpu::Device) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("simulate.wgsl"),
            source: wgpu::ShaderSource::Wgsl(
                include_str!("../../../assets/shaders/simulate.wgsl").into(),
            ),
        });
        let constants = [
            ("WORLD_WIDTH", f64::from(WORLD_WIDTH as f32)),
            ("WORLD_HEIGHT", f64::from(WORLD_HEIGHT as f32)),
            ("MAX_ENERGY", f64::from(MAX_ENERGY as f32)),
            // As seek_one rounds them: f64 constants taken to the scalar type once.
            ("SEEK_GAIN", f64::from(SEEK_GAIN as f32)),
            ("MAX_SEEK_SPEED", f64::from(MAX_SEEK_SPEED as f32)),
            ("POINT_X_SCALE", f64::from(POINT_X_SCALE)),
            ("POINT_Y_SCALE", f64::from(POINT_Y_SCALE)),
            ("POINT_HP_SCALE", f64::from(POINT_HP_SCALE)),
            ("POINT_HP_MIN", f64::from(POINT_HP_MIN)),
            ("POINT_X_BITS", f64::from(POINT_X_BITS)),
            ("POINT_Y_BITS", f64::from(POINT_Y_BITS)),
            ("POINT_HP_BITS", f64::from(POINT_HP_BITS)),
        ];
        let layout = |label: &str, entries: &[wgpu::BindGroupLayoutEntry]| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries,
            })
        };
        let pipeline = |layout: &wgpu::BindGroupLayout, entry: &str| {
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(entry),
                bind_group_layouts: &[Some(layout)],
                immediate_size: 0,
            });
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    ..Default::default()
                },
                cache: None,
            })
        };
        let move_layout = layout(
            "move_and_pack",
            &[
                uniform(0),
                storage(1, false),
                storage(2, false),
                storage(3, true),
                storage(4, true),
                storage(5, true),
                storage(6, false),
            ],
        );
        let regen_layout = layout(
            "regen_energy",
            &[uniform(10), storage(11, false), storage(12, true)],
        );
        let seek_layout = layout(
            "seek",
            &[
                uniform(30),
                storage(31, true),
                storage(32, true),
                storage(33, false),
                storage(34, false),
                storage(35, true),
            ],
        );
        let move_list_layout = layout(
            "move_list",
            &[
                uniform(20),
                storage(21, false),
                storage(22, true),
                storage(23, false),
            ],
        );
        Self {
            move_pipeline: pipeline(&move_layout, "move_and_pack"),
            regen_pipeline: pipeline(&regen_layout, "regen_energy"),
            seek_pipeline: pipeline(&seek_layout, "seek"),
            gather_pipeline: pipeline(&move_list_layout, "gather_sources"),
            scatter_pipeline: pipeline(&move_list_layout, "scatter_destinations"),
            move_layout,
            regen_layout,
            seek_layout,
            move_list_layout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatches_cover_every_entity_within_the_dimension_limit() {
        for len in [0, 1, 255, 256, 257, 1_000_000, 100_000_000] {
            let (args, [x, y]) = DispatchArgs::new(len, 0.5);
            assert!(x <= MAX_GROUPS_PER_DIMENSION && y <= MAX_GROUPS_PER_DIMENSION);
            assert!(u64::from(x) * u64::from(y) * u64::from(WORKGROUP) >= len as u64);
            assert_eq!(args.groups_x, x);
        }
    }
}

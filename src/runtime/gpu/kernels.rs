//! The gpu layout's compute pipelines (assets/shaders/simulate.wgsl), compiled once per device
//! with every constant taken from workload.rs as a pipeline override.

use crate::workload::{
    AVOID_FIXED_ONE, AVOID_GAIN, MAX_ENERGY, MAX_SEEK_SPEED, POINT_HP_BITS, POINT_HP_MIN,
    POINT_HP_SCALE, POINT_X_BITS, POINT_X_SCALE, POINT_Y_BITS, POINT_Y_SCALE, SEEK_GAIN,
    WORLD_HEIGHT, WORLD_WIDTH,
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

/// The neighbour grid's arguments, the shader's `Grid`: one for every grid kernel, each taking
/// its workgroup count from `num_workgroups`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GridArgs {
    pub len: u32,
    pub cells: u32,
    pub cols: u32,
    pub rows: u32,
    pub col_scale: f32,
    pub row_scale: f32,
    pub r2: f32,
    pub inv_r: f32,
    pub inv_r2: f32,
    pub dt: f32,
    pub blocks: u32,
    pub tuned: u32,
}

pub const GRID_BYTES: u64 = size_of::<GridArgs>() as u64;
/// Cells one workgroup of the grid's scan covers, four per invocation (the shader's
/// `SCAN_BLOCK`).
pub const SCAN_BLOCK: u32 = 4 * WORKGROUP;

/// A compute pipeline and the layout of its one bind group.
pub(crate) struct Kernel {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// The neighbour grid's kernels, in the order a frame runs them.
pub(crate) struct GridKernels {
    pub count: Kernel,
    pub scan_blocks: Kernel,
    pub scan_sums: Kernel,
    pub scan_add: Kernel,
    pub place: Kernel,
    pub idiomatic: Kernel,
    pub tuned: Kernel,
}

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
    /// None where the device binds fewer storage buffers per stage than the grid's place and
    /// pass need ([`GRID_STORAGE_BUFFERS`]): the neighbour pass then runs on the host.
    pub grid: Option<GridKernels>,
}

/// Storage buffers the grid's place and pass bind, WebGPU's guaranteed minimum.
pub const GRID_STORAGE_BUFFERS: u32 = 8;

fn uniform(binding: u32) -> wgpu::BindGroupLayoutEntry {
    uniform_of(binding, ARGS_BYTES)
}

fn uniform_of(binding: u32, bytes: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(bytes),
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
            ("AVOID_GAIN", f64::from(AVOID_GAIN as f32)),
            ("AVOID_FIXED_ONE", f64::from(AVOID_FIXED_ONE as f32)),
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
        // Each grid kernel's bindings: its uniform, then its storage buffers (binding, read
        // only), as simulate.wgsl declares them.
        let kernel = |entry: &str, args: u32, buffers: &[(u32, bool)]| {
            let mut entries = vec![uniform_of(args, GRID_BYTES)];
            entries.extend(buffers.iter().map(|&(b, read_only)| storage(b, read_only)));
            let layout = layout(entry, &entries);
            Kernel {
                pipeline: pipeline(&layout, entry),
                layout,
            }
        };
        let (ro, rw) = (true, false);
        // The pass's bindings both forms share: velocities, cells, starts, totals.
        let pass = [(78, rw), (79, rw), (80, ro), (81, ro), (82, rw)];
        let grid_fits =
            device.limits().max_storage_buffers_per_shader_stage >= GRID_STORAGE_BUFFERS;
        let grid = grid_fits.then(|| GridKernels {
            count: kernel(
                "grid_count",
                40,
                &[(41, ro), (42, ro), (43, rw), (44, rw), (45, rw), (46, ro)],
            ),
            scan_blocks: kernel("scan_blocks", 50, &[(51, rw), (52, rw)]),
            scan_sums: kernel("scan_block_sums", 55, &[(56, rw)]),
            scan_add: kernel("scan_add", 60, &[(61, rw), (62, ro)]),
            place: kernel(
                "grid_place",
                65,
                &[
                    (66, ro),
                    (67, ro),
                    (68, ro),
                    (69, ro),
                    (70, ro),
                    (71, rw),
                    (72, rw),
                    (73, rw),
                ],
            ),
            idiomatic: kernel(
                "avoid_idiomatic",
                75,
                &[&[(76, ro), (77, ro)], &pass[..], &[(83, ro)]].concat(),
            ),
            tuned: kernel(
                "avoid_tuned",
                75,
                &[&pass[..], &[(84, ro), (85, ro), (86, ro)]].concat(),
            ),
        });
        Self {
            grid,
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

/// A bind group holding each buffer whole at its binding.
pub(super) fn bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffers: &[(u32, &wgpu::Buffer)],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .map(|(binding, buffer)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: buffer.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout,
        entries: &entries,
    })
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

//! `cuLaunchKernel` with both parameter forms, `cuLaunchKernelEx`, cooperative launches, host functions
//! and occupancy.

use std::ffi::c_void;

use cuda::{CallConfig, Error, Kernel, Params};

use crate::abi::{CUfunction, CUlaunchConfig, CUstream};
use crate::error::CUresult;
use crate::{out, ret, with_context};

/// `CU_LAUNCH_PARAM_END`, `CU_LAUNCH_PARAM_BUFFER_POINTER`, `CU_LAUNCH_PARAM_BUFFER_SIZE`, and the
/// "end as one" form of CUDA 11.
const PARAM_END: usize = 0x00;
const PARAM_BUFFER_POINTER: usize = 0x01;
const PARAM_BUFFER_SIZE: usize = 0x02;
const PARAM_END_AS_INT: usize = 0x00;

/// The parameters of a launch: `kernel_params` (one pointer per parameter) or, when it is null, the
/// buffer that `extra` names.
///
/// # Safety
/// `kernel_params` is null or holds one pointer per kernel parameter; `extra` is null or a list of
/// (key, value) pointer pairs ending with `CU_LAUNCH_PARAM_END`, whose buffer holds the size it gives.
unsafe fn params<'a>(kernel_params: *mut *mut c_void, extra: *mut *mut c_void) -> cuda::Result<Params<'a>> {
    match (kernel_params.is_null(), extra.is_null()) {
        (false, false) => Err(Error::INVALID_VALUE),
        (false, true) | (true, true) => Ok(Params::Pointers(kernel_params as *const *const c_void)),
        (true, false) => {
            let (mut buffer, mut size) = (None, None);
            let mut i = 0;
            loop {
                // SAFETY: the caller's promise: pairs until the end marker.
                let key = unsafe { *extra.add(i) } as usize;
                if key == PARAM_END || key == PARAM_END_AS_INT {
                    break;
                }
                // SAFETY: as above.
                let value = unsafe { *extra.add(i + 1) };
                match key {
                    PARAM_BUFFER_POINTER => buffer = Some(value as *const u8),
                    // SAFETY: the value of BUFFER_SIZE points at a size_t.
                    PARAM_BUFFER_SIZE => size = Some(unsafe { (value as *const usize).read_unaligned() }),
                    _ => return Err(Error::INVALID_VALUE),
                }
                i += 2;
                if i > 64 {
                    return Err(Error::INVALID_VALUE);
                }
            }
            match (buffer, size) {
                // SAFETY: the caller's promise: the buffer holds `size` bytes.
                (Some(b), Some(s)) if !b.is_null() => Ok(Params::Buffer(unsafe { std::slice::from_raw_parts(b, s) })),
                (None, None) => Ok(Params::Pointers(std::ptr::null())),
                _ => Err(Error::INVALID_VALUE),
            }
        }
    }
}

/// # Safety
/// As [`params`].
#[allow(clippy::too_many_arguments)]
unsafe fn launch(
    function: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: CUstream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    cooperative: bool,
) -> CUresult {
    let result = with_context().and_then(|c| {
        // SAFETY: the caller's promise.
        let params = unsafe { params(kernel_params, extra) }?;
        let config = CallConfig {
            grid: device_dim(grid),
            block: device_dim(block),
            shared: u64::from(shared),
            stream: stream as u64,
            cooperative,
        };
        // SAFETY: the caller's promise.
        unsafe { c.launch_kernel(Kernel::Function(function as u64), config, params) }
    });
    ret(result)
}

fn device_dim(d: [u32; 3]) -> cuda::Dim3 {
    cuda::Dim3 { x: d[0], y: d[1], z: d[2] }
}

/// # Safety
/// `kernel_params` or `extra` as the CUDA documentation describes (see [`params`]).
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    function: CUfunction,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared: u32,
    stream: CUstream,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        launch(
            function,
            [grid_x, grid_y, grid_z],
            [block_x, block_y, block_z],
            shared,
            stream,
            kernel_params,
            extra,
            false,
        )
    }
}

/// Every CTA of the grid is resident at once, so that grid-wide barriers work; a grid larger than occupancy
/// times multiprocessors fails with `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` (`Cuda::launch_kernel`).
///
/// # Safety
/// As [`cuLaunchKernel`].
#[cshell::export]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    function: CUfunction,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared: u32,
    stream: CUstream,
    kernel_params: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe {
        launch(
            function,
            [grid_x, grid_y, grid_z],
            [block_x, block_y, block_z],
            shared,
            stream,
            kernel_params,
            std::ptr::null_mut(),
            true,
        )
    }
}

/// Launch attributes (priorities, programmatic dependent launch) are accepted and have no effect: kernels
/// run one after another, whole. A cluster of more than one CTA is refused (`Cuda::check_cluster`);
/// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` makes a cooperative launch.
///
/// # Safety
/// `config` points at a valid configuration; the parameters as for [`cuLaunchKernel`].
unsafe fn launch_ex(
    config: *const CUlaunchConfig,
    function: CUfunction,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    ptsz: bool,
) -> CUresult {
    if config.is_null() {
        return ret(Err(Error::INVALID_VALUE));
    }
    // SAFETY: non-null, and the caller's promise.
    let c = unsafe { config.read_unaligned() };
    let mut cooperative = false;
    if !c.attrs.is_null() {
        for i in 0..c.numAttrs as usize {
            // SAFETY: the caller's promise: `numAttrs` attributes.
            let a = unsafe { c.attrs.add(i).read_unaligned() };
            // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: three unsigned ints.
            if a.id == 4 {
                let dim = |k: usize| {
                    u32::from_le_bytes([a.value[4 * k], a.value[4 * k + 1], a.value[4 * k + 2], a.value[4 * k + 3]])
                };
                if let Err(e) = crate::cuda().check_cluster([dim(0), dim(1), dim(2)]) {
                    return ret(Err(e));
                }
            }
            // CU_LAUNCH_ATTRIBUTE_COOPERATIVE: an int.
            if a.id == 2 {
                cooperative = a.value[..4] != [0; 4];
            }
        }
    }
    let stream = if ptsz { crate::per_thread_stream(c.hStream) } else { c.hStream };
    // SAFETY: the caller's promise.
    unsafe {
        launch(
            function,
            [c.gridDimX, c.gridDimY, c.gridDimZ],
            [c.blockDimX, c.blockDimY, c.blockDimZ],
            c.sharedMemBytes,
            stream,
            kernel_params,
            extra,
            cooperative,
        )
    }
}

/// # Safety
/// As [`launch_ex`].
#[cshell::export]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const CUlaunchConfig,
    function: CUfunction,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { launch_ex(config, function, kernel_params, extra, false) }
}

/// # Safety
/// As [`launch_ex`].
#[cshell::export]
pub unsafe extern "C" fn cuLaunchKernelEx_ptsz(
    config: *const CUlaunchConfig,
    function: CUfunction,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { launch_ex(config, function, kernel_params, extra, true) }
}

per_thread! {
    cuLaunchKernel_ptsz => cuLaunchKernel(function: CUfunction, grid_x: u32, grid_y: u32, grid_z: u32, block_x: u32, block_y: u32, block_z: u32, shared: u32, stream: CUstream, kernel_params: *mut *mut c_void, extra: *mut *mut c_void);
    cuLaunchCooperativeKernel_ptsz => cuLaunchCooperativeKernel(function: CUfunction, grid_x: u32, grid_y: u32, grid_z: u32, block_x: u32, block_y: u32, block_z: u32, shared: u32, stream: CUstream, kernel_params: *mut *mut c_void);
}

/// # Safety
/// `f` is a function the program provides; `data` is what it expects.
#[cshell::export]
pub unsafe extern "C" fn cuLaunchHostFunc(stream: CUstream, f: Option<cuda::HostFn>, data: *mut c_void) -> CUresult {
    let result = with_context().and_then(|c| {
        let f = f.ok_or(Error::INVALID_VALUE)?;
        c.launch_host_fn(stream as u64, f, data)
    });
    ret(result)
}

/// CUDA 13.1's form, with flags (none defined that change the order of work here).
///
/// # Safety
/// As [`cuLaunchHostFunc`].
#[cshell::export]
pub unsafe extern "C" fn cuLaunchHostFunc_v2(
    stream: CUstream,
    f: Option<cuda::HostFn>,
    data: *mut c_void,
    _flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuLaunchHostFunc(stream, f, data) }
}

per_thread! {
    cuLaunchHostFunc_ptsz => cuLaunchHostFunc(stream: CUstream, f: Option<cuda::HostFn>, data: *mut c_void);
    cuLaunchHostFunc_v2_ptsz => cuLaunchHostFunc_v2(stream: CUstream, f: Option<cuda::HostFn>, data: *mut c_void, _flags: u32);
}

// ---- occupancy -------------------------------------------------------------------------------------------

/// # Safety
/// `blocks` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut i32,
    function: CUfunction,
    block_size: i32,
    shared: usize,
) -> CUresult {
    let result =
        with_context().and_then(|c| c.kernel_occupancy(Kernel::Function(function as u64), block_size, shared as u64));
    // SAFETY: the caller's promise.
    ret(result.and_then(|n| unsafe { out(blocks, n) }))
}

/// # Safety
/// As [`cuOccupancyMaxActiveBlocksPerMultiprocessor`].
#[cshell::export]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut i32,
    function: CUfunction,
    block_size: i32,
    shared: usize,
    _flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, function, block_size, shared) }
}

/// `CUoccupancyB2DSize`: dynamic shared memory for a block size.
type BlockToShared = Option<unsafe extern "C" fn(i32) -> usize>;

/// The block size (a multiple of 32, up to the kernel's and the caller's limits) that keeps the most
/// threads resident per multiprocessor, and the grid that fills the device with it.
///
/// # Safety
/// `min_grid` and `block` are valid for writes; `to_shared` is null or a function of the program.
#[cshell::export]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(
    min_grid: *mut i32,
    block: *mut i32,
    function: CUfunction,
    to_shared: BlockToShared,
    shared: usize,
    limit: i32,
) -> CUresult {
    let result = with_context().and_then(|c| {
        let kernel = Kernel::Function(function as u64);
        let attrs = c.kernel_attributes(kernel)?;
        let max = if limit > 0 { limit.min(attrs.max_threads_per_block) } else { attrs.max_threads_per_block };
        let (mut best, mut best_blocks) = (0, 0);
        let mut size = max - max % 32;
        while size >= 32 {
            // SAFETY: the program's function, called as CUDA calls it.
            let dynamic = match to_shared {
                Some(f) => unsafe { f(size) },
                None => shared,
            };
            let n = c.kernel_occupancy(kernel, size, dynamic as u64)?;
            if n * size > best * best_blocks.max(1) || best == 0 && n > 0 {
                best = size;
                best_blocks = n;
            }
            size -= 32;
        }
        if best == 0 {
            best = max.clamp(1, 32);
            best_blocks = 1;
        }
        let multiprocessors = c.properties().multiprocessors;
        // SAFETY: the caller's promise.
        unsafe {
            out(min_grid, best_blocks * multiprocessors)?;
            out(block, best)
        }
    });
    ret(result)
}

/// # Safety
/// As [`cuOccupancyMaxPotentialBlockSize`].
#[cshell::export]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSizeWithFlags(
    min_grid: *mut i32,
    block: *mut i32,
    function: CUfunction,
    to_shared: BlockToShared,
    shared: usize,
    limit: i32,
    _flags: u32,
) -> CUresult {
    // SAFETY: the caller's promise.
    unsafe { cuOccupancyMaxPotentialBlockSize(min_grid, block, function, to_shared, shared, limit) }
}

/// # Safety
/// `shared` is valid for a write.
#[cshell::export]
pub unsafe extern "C" fn cuOccupancyAvailableDynamicSMemPerBlock(
    shared: *mut usize,
    function: CUfunction,
    blocks: i32,
    block_size: i32,
) -> CUresult {
    let result = with_context().and_then(|c| {
        if blocks <= 0 || block_size <= 0 {
            return Err(Error::INVALID_VALUE);
        }
        let attrs = c.kernel_attributes(Kernel::Function(function as u64))?;
        let per_block = cuda::properties::SHARED_PER_MULTIPROCESSOR / blocks as u64;
        let available = per_block.min(cuda::properties::SHARED_PER_BLOCK_OPTIN).saturating_sub(attrs.shared_size_bytes);
        // SAFETY: the caller's promise.
        unsafe { out(shared, available as usize) }
    });
    ret(result)
}

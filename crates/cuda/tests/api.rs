//! The CUDA host API's semantics, on a fatbinary made here: what a program registers loads on first use,
//! launches copy their arguments by the kernel's parameter layout, faults stick from the next synchronizing
//! call on, device `printf` waits for one, and memory calls check what CUDA checks. Each test has its own
//! `Cuda`; kernels run on both engines.

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use cuda::{Backend, CallConfig, Config, CopyKind, Cuda, Error, MemoryType};
use device::Dim3;

const PTX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 $str[12] = {104, 101, 108, 108, 111, 32, 37, 100, 10, 0, 0, 0};
.visible .global .align 4 .u32 scale = 3;
.visible .entry fill(.param .u64 out, .param .u32 n, .param .u8 add)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    ld.param.u8 %rs1, [add];
    cvt.u32.u16 %r6, %rs1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    ld.global.u32 %r7, [scale];
    mad.lo.s32 %r7, %r5, %r7, %r6;
    mul.wide.u32 %rd2, %r5, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r7;
DONE:
    ret;
}
.visible .entry boom(.param .u64 out)
{
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    trap;
    ret;
}
.visible .entry hello(.param .u32 v)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<4>;
    .local .align 8 .b8 buf[8];
    ld.param.u32 %r1, [v];
    mov.u64 %rd1, buf;
    cvta.local.u64 %rd2, %rd1;
    st.local.u32 [buf], %r1;
    mov.u64 %rd3, $str;
    cvta.global.u64 %rd3, %rd3;
    {
        .param .b64 p0;
        st.param.b64 [p0], %rd3;
        .param .b64 p1;
        st.param.b64 [p1], %rd2;
        .param .b32 r0;
        call.uni (r0), vprintf, (p0, p1);
    }
    ret;
}
"#;

/// The fatbinary and its wrapper live in statics: the runtime reads them only inside a loaded segment.
static mut IMAGE: [u8; 8192] = [0; 8192];
static mut WRAPPER: [u64; 3] = [0; 3];
/// Host "stubs" and the shadow of `scale`: any distinct addresses do.
static FILL: u8 = 0;
static BOOM: u8 = 0;
static HELLO: u8 = 0;
static SCALE: u32 = 0;

/// The wrapper's address, with a container holding `PTX` uncompressed.
fn wrapper() -> u64 {
    static MADE: OnceLock<u64> = OnceLock::new();
    *MADE.get_or_init(|| {
        let mut payload = PTX.as_bytes().to_vec();
        payload.push(0);
        payload.resize(payload.len().div_ceil(8) * 8, 0);
        let mut entry = vec![0u8; 64];
        entry[0..2].copy_from_slice(&1u16.to_le_bytes()); // PTX
        entry[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        entry[4..8].copy_from_slice(&64u32.to_le_bytes());
        entry[8..16].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        entry[28..32].copy_from_slice(&80u32.to_le_bytes());
        entry[40..48].copy_from_slice(&0x11u64.to_le_bytes());
        let mut container = vec![0u8; 16];
        container[0..4].copy_from_slice(&0xBA55_ED50u32.to_le_bytes());
        container[4..6].copy_from_slice(&1u16.to_le_bytes());
        container[6..8].copy_from_slice(&16u16.to_le_bytes());
        container[8..16].copy_from_slice(&((entry.len() + payload.len()) as u64).to_le_bytes());
        container.extend_from_slice(&entry);
        container.extend_from_slice(&payload);
        // SAFETY: written once, before any reader (the OnceLock orders it).
        unsafe {
            let image = &mut *std::ptr::addr_of_mut!(IMAGE);
            image[..container.len()].copy_from_slice(&container);
            let w = &mut *std::ptr::addr_of_mut!(WRAPPER);
            w[0] = u64::from(0x466243B1u32) | 1 << 32;
            w[1] = image.as_ptr() as u64;
            w[2] = 0;
            w.as_ptr() as u64
        }
    })
}

#[derive(Clone, Default)]
struct Printed(Arc<Mutex<Vec<u8>>>);

impl Write for Printed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A runtime with the fatbinary registered, as nvcc's start-up code would.
fn registered(backend: Backend) -> (Cuda, Printed) {
    let printed = Printed::default();
    let config = Config { backend, threads: 2, jit_cache: None, quiet: true, ..Config::default() };
    let cuda = Cuda::new(config, Box::new(printed.clone()));
    let h = cuda.register_fatbin(wrapper());
    cuda.register_function(h, &FILL as *const u8 as u64, "fill");
    cuda.register_function(h, &BOOM as *const u8 as u64, "boom");
    cuda.register_function(h, &HELLO as *const u8 as u64, "hello");
    cuda.register_var(h, &SCALE as *const u32 as u64, "scale");
    (cuda, printed)
}

fn config(grid: u32, block: u32) -> CallConfig {
    CallConfig { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), shared: 0, stream: 0, cooperative: false }
}

fn read_u32s(cuda: &Cuda, ptr: u64, n: usize) -> Vec<u32> {
    let mut out = vec![0u32; n];
    cuda.memcpy(out.as_mut_ptr() as u64, ptr, 4 * n as u64, CopyKind::DeviceToHost).unwrap();
    out
}

fn fill(cuda: &Cuda, out: u64, n: u32, add: u8, grid: u32) -> cuda::Result<()> {
    let args: [*const libc::c_void; 3] = [&out as *const u64 as _, &n as *const u32 as _, &add as *const u8 as _];
    // SAFETY: one pointer per parameter of `fill`, each to a value of the parameter's size.
    unsafe { cuda.launch(&FILL as *const u8 as u64, config(grid, 64), args.as_ptr()) }
}

#[test]
fn kernels_load_on_first_use_and_take_their_arguments_by_the_param_layout() {
    for backend in [Backend::Jit, Backend::Emu] {
        let (cuda, _) = registered(backend);
        let n = 1000u32;
        let out = cuda.malloc(4 * u64::from(n)).unwrap();
        fill(&cuda, out, n, 7, n.div_ceil(64)).unwrap();
        cuda.synchronize().unwrap();
        let got = read_u32s(&cuda, out, n as usize);
        assert!(got.iter().enumerate().all(|(i, &v)| v == 3 * i as u32 + 7), "{backend:?}: {:?}", &got[..8]);
        // A module variable through its host shadow: its address and size, then a new value.
        let (addr, size) = cuda.symbol(&SCALE as *const u32 as u64).unwrap();
        assert_eq!(size, 4);
        assert_eq!(cuda.pointer_attributes(addr).unwrap().kind, MemoryType::Device);
        let two = 2u32;
        cuda.memcpy_to_symbol(
            &SCALE as *const u32 as u64,
            &two as *const u32 as u64,
            4,
            0,
            CopyKind::HostToDevice,
            None,
        )
        .unwrap();
        fill(&cuda, out, n, 1, n.div_ceil(64)).unwrap();
        assert_eq!(read_u32s(&cuda, out, 3), [1, 3, 5], "{backend:?}");
        assert_eq!(
            cuda.memcpy_to_symbol(
                &SCALE as *const u32 as u64,
                &two as *const u32 as u64,
                4,
                1,
                CopyKind::HostToDevice,
                None
            ),
            Err(Error::INVALID_VALUE),
            "past the variable's end"
        );
        let report = cuda.report();
        let k = report.kernels.iter().find(|k| k.name == "fill").unwrap();
        assert_eq!(k.launches, 2);
        assert_eq!(k.stats.is_some(), backend == Backend::Emu, "statistics come from the emulator");
    }
}

#[test]
fn launch_errors_come_back_at_once_and_do_not_stick() {
    let (cuda, _) = registered(Backend::Jit);
    let out = cuda.malloc(64).unwrap();
    let n = 16u32;
    let add = 0u8;
    let args: [*const libc::c_void; 3] = [&out as *const u64 as _, &n as *const u32 as _, &add as *const u8 as _];
    // SAFETY: as in `fill`.
    let r = unsafe { cuda.launch(&FILL as *const u8 as u64, config(1, 2048), args.as_ptr()) };
    assert_eq!(r, Err(Error::INVALID_VALUE), "CUDA 13: a shape no device runs is an invalid value");
    // SAFETY: as above; the host function was never registered.
    let r = unsafe { cuda.launch(0x1234, config(1, 32), args.as_ptr()) };
    assert_eq!(r, Err(Error::INVALID_DEVICE_FUNCTION));
    cuda.synchronize().unwrap();
    fill(&cuda, out, n, 0, 1).unwrap();
    cuda.synchronize().unwrap();
}

#[test]
fn a_kernel_fault_reaches_the_next_synchronizing_call_and_sticks_until_reset() {
    for backend in [Backend::Jit, Backend::Emu] {
        let (cuda, _) = registered(backend);
        let out = cuda.malloc(64).unwrap();
        let args: [*const libc::c_void; 1] = [&out as *const u64 as _];
        // SAFETY: `boom` takes one pointer.
        unsafe { cuda.launch(&BOOM as *const u8 as u64, config(1, 32), args.as_ptr()) }.unwrap();
        assert_eq!(cuda.peek_last_error(), 0, "{backend:?}: not before a synchronizing call");
        assert_eq!(cuda.synchronize(), Err(Error::LAUNCH_FAILURE), "{backend:?}");
        assert_eq!(cuda.malloc(16), Err(Error::LAUNCH_FAILURE), "{backend:?}: sticky");
        assert_eq!(cuda.take_last_error(), Error::LAUNCH_FAILURE.code());
        assert_eq!(cuda.take_last_error(), Error::LAUNCH_FAILURE.code(), "cudaGetLastError cannot clear it");
        cuda.reset().unwrap();
        assert!(cuda.malloc(16).is_ok(), "{backend:?}: cudaDeviceReset clears it");
        let report = cuda.report();
        assert_eq!(report.faults.len(), 1);
        assert!(report.faults[0].contains("trap"), "{}", report.faults[0]);
    }
}

#[test]
fn device_printf_waits_for_a_synchronizing_call() {
    for backend in [Backend::Jit, Backend::Emu] {
        let (cuda, printed) = registered(backend);
        let v = 42u32;
        let args: [*const libc::c_void; 1] = [&v as *const u32 as _];
        // SAFETY: `hello` takes one u32.
        unsafe { cuda.launch(&HELLO as *const u8 as u64, config(1, 1), args.as_ptr()) }.unwrap();
        assert!(printed.0.lock().unwrap().is_empty(), "{backend:?}: held until a synchronizing call");
        cuda.synchronize().unwrap();
        assert_eq!(String::from_utf8_lossy(&printed.0.lock().unwrap()), "hello 42\n", "{backend:?}");
    }
}

#[test]
fn memory_calls_check_what_cuda_checks() {
    let (cuda, _) = registered(Backend::Jit);
    let a = cuda.malloc(100).unwrap();
    assert_eq!(a % 256, 0, "cudaMalloc aligns to 256 bytes");
    let host = [1u8; 200];
    assert_eq!(cuda.memcpy(a, host.as_ptr() as u64, 101, CopyKind::HostToDevice), Err(Error::INVALID_VALUE));
    assert_eq!(cuda.memcpy(a + 50, host.as_ptr() as u64, 50, CopyKind::HostToDevice), Ok(()));
    assert_eq!(CopyKind::from_raw(7), Err(Error::INVALID_MEMCPY_DIRECTION));
    assert_eq!(cuda.memset(a + 99, 0, 2), Err(Error::INVALID_VALUE));
    assert_eq!(cuda.free(a + 4), Err(Error::INVALID_VALUE), "not an allocation's start");
    cuda.free(a).unwrap();
    assert_eq!(cuda.free(a), Err(Error::INVALID_VALUE), "freed twice");
    cuda.free(0).unwrap();
    // Every kind, and what cudaPointerGetAttributes says of it.
    let d = cuda.malloc(64).unwrap();
    let h = cuda.malloc_host(64, 0).unwrap();
    let m = cuda.malloc_managed(64, 1).unwrap();
    let mut mine = vec![0u8; 4096];
    // SAFETY: `mine` outlives the registration (unregistered below).
    unsafe { cuda.host_register(mine.as_mut_ptr() as u64, 4096, 0) }.unwrap();
    // SAFETY: as above.
    let again = unsafe { cuda.host_register(mine.as_mut_ptr() as u64, 4096, 0) };
    assert_eq!(again, Err(Error::HOST_MEMORY_ALREADY_REGISTERED));
    let kind = |p: u64| cuda.pointer_attributes(p).unwrap().kind;
    assert_eq!(kind(d + 10), MemoryType::Device);
    assert_eq!(kind(h), MemoryType::Host);
    assert_eq!(kind(m), MemoryType::Managed);
    assert_eq!(kind(mine.as_ptr() as u64 + 100), MemoryType::Host);
    let stack = 0u64;
    assert_eq!(kind(&stack as *const u64 as u64), MemoryType::Unregistered);
    assert_eq!(cuda.host_device_pointer(h + 8), Ok(h + 8));
    assert_eq!(cuda.free_host(d), Err(Error::INVALID_VALUE), "cudaFreeHost of device memory");
    cuda.host_unregister(mine.as_ptr() as u64).unwrap();
    assert_eq!(cuda.host_unregister(mine.as_ptr() as u64), Err(Error::HOST_MEMORY_NOT_REGISTERED));
    // Pitched memory and 2-D sets.
    let (p, pitch) = cuda.malloc_pitch(100, 3).unwrap();
    assert_eq!(pitch, 512);
    cuda.memset_2d(p, pitch, 0xAB, 100, 3).unwrap();
    let mut row = vec![0u8; 3 * 512];
    cuda.memcpy(row.as_mut_ptr() as u64, p, 3 * 512, CopyKind::DeviceToHost).unwrap();
    assert!(row[..100].iter().all(|&b| b == 0xAB) && row[100..512].iter().all(|&b| b == 0) && row[1024 + 99] == 0xAB);
    let (free, total) = cuda.mem_info().unwrap();
    assert!(free <= total && total > 0);
}

/// Thread block clusters larger than one CTA are refused, from a launch attribute or a kernel's
/// `.reqnctapercluster`, instead of running with one-CTA clusters.
#[test]
fn clusters_of_more_than_one_cta_are_refused() {
    let (c, _) = registered(Backend::Emu);
    assert_eq!(c.check_cluster([1, 1, 1]), Ok(()));
    assert_eq!(c.check_cluster([0, 0, 0]), Ok(()));
    assert_eq!(c.check_cluster([2, 1, 1]), Err(Error::INVALID_CLUSTER_SIZE));
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\
        .visible .entry k() .reqnctapercluster 2, 1, 1\n{\n ret;\n}\n\
        .visible .entry one() .reqnctapercluster 1, 1, 1\n{\n ret;\n}\n";
    let m = c.module_load_ptx(ptx, "clusters").unwrap();
    let run = |name: &str| {
        let f = c.module_function(m, name).unwrap();
        // SAFETY: the kernels take no parameters.
        unsafe { c.launch_kernel(cuda::Kernel::Function(f), config(2, 32), cuda::Params::Pointers(std::ptr::null())) }
    };
    assert_eq!(run("k"), Err(Error::INVALID_CLUSTER_SIZE));
    assert_eq!(run("one"), Ok(()));
}

/// A cooperative launch may have as many CTAs as `cudaOccupancyMaxActiveBlocksPerMultiprocessor` times the
/// multiprocessor count; one more is `cudaErrorCooperativeLaunchTooLarge` and runs nothing. The device
/// reports cooperative launches.
#[test]
fn cooperative_launches_fit_occupancy_times_multiprocessors() {
    for backend in [Backend::Jit, Backend::Emu] {
        let (cuda, _) = registered(backend);
        assert_eq!(cuda.properties().attribute(95), Some(1), "cudaDevAttrCooperativeLaunch");
        let sms = cuda.properties().attribute(16).unwrap();
        let per_sm = cuda.occupancy(&FILL as *const u8 as u64, 64, 0).unwrap();
        let most = (per_sm * sms) as u32;
        let n = 64 * (most + 1);
        let out = cuda.malloc(4 * u64::from(n)).unwrap();
        let launch = |grid: u32, add: u8| {
            let args: [*const libc::c_void; 3] =
                [&out as *const u64 as _, &n as *const u32 as _, &add as *const u8 as _];
            let config = CallConfig { cooperative: true, ..config(grid, 64) };
            // SAFETY: one pointer per parameter of `fill`, each to a value of the parameter's size.
            unsafe { cuda.launch(&FILL as *const u8 as u64, config, args.as_ptr()) }
        };
        launch(most, 7).unwrap();
        cuda.synchronize().unwrap();
        assert_eq!(read_u32s(&cuda, out, 1), [7], "{backend:?}");
        assert_eq!(launch(most + 1, 9), Err(Error::COOPERATIVE_LAUNCH_TOO_LARGE), "{backend:?}");
        cuda.synchronize().unwrap();
        assert_eq!(read_u32s(&cuda, out, 1), [7], "{backend:?}: the refused launch ran");
    }
}

/// Numba's `this_grid().sync()`: calls of the device runtime's `cudaCGGetIntrinsicHandle` and
/// `cudaCGSynchronize`, declared and not defined; lockstep links its own PTX for them. Each CTA publishes
/// its index, syncs the grid, and reads its right neighbour's. In an ordinary launch the handle is null and
/// the sync traps.
#[test]
fn the_device_runtimes_grid_sync_links_in_and_works_in_cooperative_launches() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .extern .func (.param .b64 func_retval0) cudaCGGetIntrinsicHandle\n(\n .param .b32 p0\n)\n;\n\
        .extern .func (.param .b32 func_retval0) cudaCGSynchronize\n(\n .param .b64 p0,\n .param .b32 p1\n)\n;\n\
        .visible .entry rotate(.param .u64 a, .param .u64 b)\n{\n\
        .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [a];\n ld.param.u64 %rd2, [b];\n\
        mov.u32 %r1, %ctaid.x;\n mov.u32 %r2, %nctaid.x;\n mov.u32 %r3, %tid.x;\n\
        setp.ne.u32 %p1, %r3, 0;\n add.u32 %r4, %r1, 100;\n mul.wide.u32 %rd3, %r1, 4;\n add.s64 %rd4, %rd1, %rd3;\n\
        @!%p1 st.global.u32 [%rd4], %r4;\n\
        { .param .b32 param0;\n st.param.b32 [param0], 1;\n .param .b64 retval0;\n\
        call.uni (retval0), cudaCGGetIntrinsicHandle, (param0);\n ld.param.b64 %rd5, [retval0]; }\n\
        { .param .b64 param0;\n st.param.b64 [param0], %rd5;\n .param .b32 param1;\n st.param.b32 [param1], 0;\n\
        .param .b32 retval0;\n call.uni (retval0), cudaCGSynchronize, (param0, param1);\n ld.param.b32 %r5, [retval0]; }\n\
        add.u32 %r6, %r1, 1;\n rem.u32 %r6, %r6, %r2;\n mul.wide.u32 %rd6, %r6, 4;\n add.s64 %rd6, %rd1, %rd6;\n\
        ld.global.u32 %r7, [%rd6];\n add.s64 %rd7, %rd2, %rd3;\n @!%p1 st.global.u32 [%rd7], %r7;\n ret;\n}\n";
    for backend in [Backend::Jit, Backend::Emu] {
        let (c, _) = registered(backend);
        let m = c.module_load_ptx(ptx, "numba grid sync").unwrap();
        let f = c.module_function(m, "rotate").unwrap();
        let n = 6u32;
        let (a, b) = (c.malloc(4 * u64::from(n)).unwrap(), c.malloc(4 * u64::from(n)).unwrap());
        let args: [*const libc::c_void; 2] = [&a as *const u64 as _, &b as *const u64 as _];
        let launch = |cooperative: bool| {
            let config = CallConfig { cooperative, ..config(n, 32) };
            // SAFETY: one pointer per parameter of `rotate`, each to a u64.
            unsafe { c.launch_kernel(cuda::Kernel::Function(f), config, cuda::Params::Pointers(args.as_ptr())) }
        };
        launch(true).unwrap();
        c.synchronize().unwrap();
        let want: Vec<u32> = (0..n).map(|k| (k + 1) % n + 100).collect();
        assert_eq!(read_u32s(&c, b, n as usize), want, "{backend:?}");
        launch(false).unwrap();
        assert_eq!(c.synchronize(), Err(Error::LAUNCH_FAILURE), "{backend:?}: a null grid handle traps");
    }
}

/// A host memory pool gives the device no access until `cudaMemPoolSetAccess` does (as on a GPU): a kernel
/// that writes its memory faults on the emulator (an illegal address); once access is granted it runs, and
/// read-only access faults its stores again.
#[test]
fn host_pool_memory_needs_the_pools_access_for_the_device() {
    let (cuda, _) = registered(Backend::Emu);
    // cudaMemAllocationTypePinned in cudaMemLocationTypeHost.
    let pool = cuda.mem_pool_create(1, 0, 2, 0).unwrap();
    let p = cuda.malloc_from_pool(256, Some(pool)).unwrap();
    fill(&cuda, p, 64, 1, 1).unwrap();
    assert_eq!(cuda.synchronize(), Err(Error::ILLEGAL_ADDRESS), "no access");
    let (cuda, _) = registered(Backend::Emu);
    let pool = cuda.mem_pool_create(1, 0, 2, 0).unwrap();
    let p = cuda.malloc_from_pool(256, Some(pool)).unwrap();
    cuda.set_mem_pool_access(pool, 1, 0, 3).unwrap();
    fill(&cuda, p, 64, 1, 1).unwrap();
    cuda.synchronize().unwrap();
    assert_eq!(read_u32s(&cuda, p, 2), vec![1, 4], "out[i] = i * scale + 1");
    cuda.set_mem_pool_access(pool, 1, 0, 1).unwrap();
    fill(&cuda, p, 64, 1, 1).unwrap();
    assert_eq!(cuda.synchronize(), Err(Error::ILLEGAL_ADDRESS), "read-only access");
}

//! A wild access by unchecked compiled code fails the launch with an error naming the kernel and the
//! address, and the process goes on: the next launch runs.

mod common;

use common::{launch, Arg};
use device::Dim3;

const KERNEL: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry wild(.param .u64 p, .param .u64 far)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<6>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [p];
    ld.param.u64 %rd2, [far];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.u32 [%rd4], %r1;
    setp.ne.u32 %p1, %r1, 5;
    @%p1 bra DONE;
    add.s64 %rd5, %rd1, %rd2;
    st.global.u32 [%rd5], %r1;
DONE:
    ret;
}
"#;

#[test]
fn a_wild_store_is_an_error_and_the_process_lives_on() {
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let mut jit = jit::Jit::new(jit::Options { threads: 2, ..jit::Options::default() });
    let (grid, block) = (Dim3::new(4, 1, 1), Dim3::new(32, 1, 1));
    // 1 TiB past the buffer: unmapped (or outside the address space altogether).
    let far = 1u64 << 40;
    let args = |far: u64| vec![Arg::Buf(vec![0; 256]), Arg::Scalar(far.to_le_bytes().to_vec())];
    let e = launch(&mut jit, &module, "wild", grid, block, 0, &args(far)).unwrap_err();
    assert!(e.contains("out-of-bounds global access"), "{e}");
    assert!(e.contains("kernel `wild`"), "{e}");
    assert!(e.contains("--check"), "the message says how to find the thread and line: {e}");
    // The same launch with an offset inside the buffer runs, on the same engine.
    let (out, _) = launch(&mut jit, &module, "wild", Dim3::new(1, 1, 1), block, 0, &args(200)).unwrap();
    let words: Vec<u32> = out[0].chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(words[50], 5, "thread 5 wrote its index 200 bytes in");
    assert_eq!(words[31], 31);
}

/// Workers keep their buffers from launch to launch; what they copy of a launch (its allocations, for the
/// checked mode's bounds) must be the launch's own, also when the next launch has as many allocations at
/// other addresses.
#[test]
fn checked_launches_see_their_own_allocations() {
    use device::{Backend, DeviceMemory, Launch, LaunchConfig, LoadedModule, ParamBuffer};
    let module = ir::compile(KERNEL).unwrap_or_else(|d| panic!("{d:?}"));
    let mut jit = jit::Jit::new(jit::Options { threads: 2, check: true, ..jit::Options::default() });
    // Both memories stay alive, so the second's buffer is elsewhere.
    let mut memories: Vec<DeviceMemory> = Vec::new();
    for round in 0..3 {
        let mut memory = DeviceMemory::new();
        let loaded = LoadedModule::load(module.clone(), &mut memory).unwrap();
        let k = loaded.module.function("wild").unwrap();
        let buf = memory.alloc(256, "buffer");
        let mut params = ParamBuffer::for_kernel(&loaded.module.functions[k]);
        params.set(0, &buf.to_le_bytes()).unwrap();
        params.set(1, &200u64.to_le_bytes()).unwrap();
        let config = LaunchConfig { grid: Dim3::new(2, 1, 1), block: Dim3::new(32, 1, 1), dynamic_shared: 0 };
        let launch = Launch { module: &loaded, kernel: k, config, params: &params, collect_stats: false };
        let r = jit.launch(&launch, &mut memory, &mut Vec::new());
        assert!(r.is_ok(), "round {round}: {r:?}");
        memories.push(memory);
    }
}

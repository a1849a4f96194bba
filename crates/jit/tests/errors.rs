//! The JIT in checked mode (`--check`) reports the seeded faults exactly as the emulator does: kernel, block,
//! thread, PTX line and address. The rendered errors must equal the emulator's expected file,
//! `crates/emu/tests/expected/errors.txt` (device addresses, which differ from run to run, read `0xADDR`).

use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

fn run(file: &str, kernel: &str, grid: u32, block: u32, buffers: usize, n: Option<u32>) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx/handwritten").join(file);
    run_text(&std::fs::read_to_string(&path).unwrap(), kernel, grid, block, buffers, n)
}

fn run_text(text: &str, kernel: &str, grid: u32, block: u32, buffers: usize, n: Option<u32>) -> String {
    let text = text.to_string();
    let mut mem = DeviceMemory::new();
    let module = LoadedModule::load(ir::compile(&text).unwrap(), &mut mem).unwrap();
    let k = module.module.function(kernel).unwrap();
    let mut params = ParamBuffer::for_kernel(&module.module.functions[k]);
    let threads = grid * block;
    for i in 0..buffers {
        let p = mem.alloc(u64::from(threads) * 4, format!("argument {i}"));
        params.set(i, &p.to_le_bytes()).unwrap();
    }
    if let Some(n) = n {
        params.set(buffers, &n.to_le_bytes()).unwrap();
    }
    let config = LaunchConfig { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), dynamic_shared: 0 };
    let launch = Launch { module: &module, kernel: k, config, params: &params, collect_stats: false };
    let mut jit = jit::Jit::new(jit::Options { threads: 1, check: true, ..jit::Options::default() });
    match jit.launch(&launch, &mut mem, &mut std::io::sink()) {
        Ok(_) => format!("{kernel}: no error\n"),
        Err(e) => format!("{kernel}: {}\n", mask_addresses(&e.to_string())),
    }
}

fn mask_addresses(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let n = tail.chars().take_while(char::is_ascii_hexdigit).count();
        out.push_str(if n >= 8 { "0xADDR" } else { &rest[i..i + 2 + n] });
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

#[test]
fn seeded_faults_are_reported_with_their_location() {
    let mut actual = String::new();
    actual += &run("bad_oob.ptx", "bad_oob", 2, 64, 1, Some(128));
    actual += &run("bad_misaligned.ptx", "bad_misaligned", 1, 32, 2, None);
    actual += &run("bad_misaligned.ptx", "bad_misaligned_vec", 1, 32, 2, None);
    actual += &run("bad_barrier_divergence.ptx", "bad_barrier_divergence", 1, 64, 1, None);
    actual += &run("bad_barrier_divergence.ptx", "bad_barrier_partial_warps", 1, 128, 1, None);
    actual += &run_text(SHARED_OOB, "shared_oob", 1, 64, 1, None);
    actual += &run_text(LOCAL_OOB, "local_oob", 1, 32, 1, None);
    actual += &run_text(TRAP, "traps", 2, 32, 1, None);
    let expected_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../emu/tests/expected/errors.txt");
    // Blessed by the emulator's test only: the JIT must match it, not redefine it.
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    assert!(!actual.contains("no error"), "a seeded fault went undetected:\n{actual}");
    assert_eq!(actual, expected);
}

const SHARED_OOB: &str = ".version 8.0
.target sm_80
.address_size 64
.visible .entry shared_oob(.param .u64 out)
{
	.reg .b32 %r<4>;
	.shared .align 4 .b8 tile[128];
	mov.u32 %r1, %tid.x;
	shl.b32 %r2, %r1, 2;
	mov.u32 %r3, tile;
	add.s32 %r3, %r3, %r2;
	st.shared.u32 [%r3], %r1;
	ret;
}
";

const LOCAL_OOB: &str = ".version 8.0
.target sm_80
.address_size 64
.visible .entry local_oob(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	.local .align 4 .b8 buf[16];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd1, %r1, 4;
	mov.u64 %rd2, buf;
	add.s64 %rd3, %rd2, %rd1;
	st.local.u32 [%rd3], %r1;
	ret;
}
";

const TRAP: &str = ".version 8.0
.target sm_80
.address_size 64
.visible .entry traps(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %tid.x;
	setp.eq.u32 %p1, %r1, 1;
	@!%p1 bra $L_end;
	setp.eq.u32 %p1, %r2, 7;
	@%p1 trap;
$L_end:
	ret;
}
";

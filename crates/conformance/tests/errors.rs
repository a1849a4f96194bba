//! Seeded faults are caught, and the error names kernel, block, thread, PTX line and address: by the emulator,
//! and by the JIT in checked mode (`--check`) in exactly the same words. The rendered errors of both engines
//! are compared with `tests/expected/errors.txt` (`BLESS=1` rewrites it from the emulator's); device
//! addresses, which differ from run to run, are replaced by `0xADDR`.

use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

/// The engines whose errors must read alike: the emulator, and the JIT checking every access.
fn engines() -> Vec<(&'static str, Box<dyn Backend>)> {
    vec![
        ("emu", Box::new(emu::Emulator::new())),
        ("jit --check", Box::new(jit::Jit::new(jit::Options { threads: 1, check: true, ..jit::Options::default() }))),
    ]
}

fn run(
    engine: &mut dyn Backend,
    file: &str,
    kernel: &str,
    grid: u32,
    block: u32,
    buffers: usize,
    n: Option<u32>,
) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx/handwritten").join(file);
    run_text(engine, &std::fs::read_to_string(&path).unwrap(), kernel, grid, block, buffers, n)
}

fn run_text(
    engine: &mut dyn Backend,
    text: &str,
    kernel: &str,
    grid: u32,
    block: u32,
    buffers: usize,
    n: Option<u32>,
) -> String {
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
    match engine.launch(&launch, &mut mem, &mut std::io::sink()) {
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
    let expected_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expected/errors.txt");
    for (name, mut engine) in engines() {
        let e = engine.as_mut();
        let mut actual = String::new();
        actual += &run(e, "bad_oob.ptx", "bad_oob", 2, 64, 1, Some(128));
        actual += &run(e, "bad_misaligned.ptx", "bad_misaligned", 1, 32, 2, None);
        actual += &run(e, "bad_misaligned.ptx", "bad_misaligned_vec", 1, 32, 2, None);
        actual += &run(e, "bad_barrier_divergence.ptx", "bad_barrier_divergence", 1, 64, 1, None);
        actual += &run(e, "bad_barrier_divergence.ptx", "bad_barrier_partial_warps", 1, 128, 1, None);
        actual += &run_text(e, SHARED_OOB, "shared_oob", 1, 64, 1, None);
        actual += &run_text(e, LOCAL_OOB, "local_oob", 1, 32, 1, None);
        actual += &run_text(e, TRAP, "traps", 2, 32, 1, None);
        if name == "emu" && std::env::var_os("BLESS").is_some() {
            std::fs::write(&expected_path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        assert!(!actual.contains("no error"), "{name}: a seeded fault went undetected:\n{actual}");
        assert_eq!(actual, expected, "{name}");
    }
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

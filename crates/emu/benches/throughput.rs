//! Emulator throughput in thread instructions per second, on an ALU-heavy kernel (a loop of integer and
//! floating-point arithmetic per thread) and a memory-heavy one (vector add and a strided copy).
//! `cargo bench -p emu --bench throughput`; criterion reports elements/s = thread instructions/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

const ALU: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry alu(.param .u64 out, .param .u32 iters)
{
	.reg .pred %p<2>;
	.reg .b32 %r<12>;
	.reg .f32 %f<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [iters];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mad.lo.s32 %r5, %r3, %r4, %r2;
	mov.u32 %r6, 0;
	mov.u32 %r7, %r5;
	cvt.rn.f32.s32 %f1, %r5;
	mov.f32 %f2, 0f3F800000;
$L_loop:
	mad.lo.s32 %r7, %r7, 1664525, 1013904223;
	xor.b32 %r8, %r7, %r5;
	shr.u32 %r9, %r8, 3;
	add.s32 %r7, %r7, %r9;
	fma.rn.f32 %f2, %f2, %f1, 0f3F000000;
	mul.f32 %f3, %f2, 0f3F7FF000;
	add.f32 %f2, %f3, 0fBF000000;
	add.s32 %r6, %r6, 1;
	setp.lt.u32 %p1, %r6, %r1;
	@%p1 bra $L_loop;
	cvt.rzi.s32.f32 %r10, %f2;
	add.s32 %r11, %r10, %r7;
	mul.wide.s32 %rd2, %r5, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r11;
	ret;
}
"#;

fn setup(text: &str, mem: &mut DeviceMemory) -> LoadedModule {
    LoadedModule::load(ir::compile(text).unwrap(), mem).unwrap()
}

fn run(module: &LoadedModule, mem: &mut DeviceMemory, name: &str, args: &[Vec<u8>], grid: u32, block: u32) -> u64 {
    let kernel = module.module.function(name).unwrap();
    let mut params = ParamBuffer::for_kernel(&module.module.functions[kernel]);
    for (i, a) in args.iter().enumerate() {
        params.set(i, a).unwrap();
    }
    let config = LaunchConfig { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), dynamic_shared: 0 };
    let launch = Launch { module, kernel, config, params: &params, collect_stats: true };
    let report = emu::Emulator::new().launch(&launch, mem, &mut std::io::sink()).unwrap();
    report.stats.unwrap().thread_instructions
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("emulator");
    group.sample_size(10);
    group.measurement_time(std::time::Duration::from_secs(5));

    // ALU-heavy: 64 CTAs x 256 threads x 100 iterations of 10 instructions.
    let mut mem = DeviceMemory::new();
    let module = setup(ALU, &mut mem);
    let out = mem.alloc(64 * 256 * 4, "out");
    let args = vec![out.to_le_bytes().to_vec(), 100u32.to_le_bytes().to_vec()];
    let per_run = run(&module, &mut mem, "alu", &args, 64, 256);
    group.throughput(Throughput::Elements(per_run));
    group.bench_function("alu_heavy", |b| b.iter(|| run(&module, &mut mem, "alu", &args, 64, 256)));

    // Memory-heavy: vector_add from the corpus over 1M elements (3 accesses per 14 instructions).
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/ptx/workloads/workloads.sm_80.O3.ptx"
    ))
    .unwrap();
    let mut mem = DeviceMemory::new();
    let module = setup(&text, &mut mem);
    let n = 1u32 << 20;
    let a = mem.alloc(u64::from(n) * 4, "a");
    let b = mem.alloc(u64::from(n) * 4, "b");
    let cc = mem.alloc(u64::from(n) * 4, "c");
    let args =
        vec![a.to_le_bytes().to_vec(), b.to_le_bytes().to_vec(), cc.to_le_bytes().to_vec(), n.to_le_bytes().to_vec()];
    let per_run = run(&module, &mut mem, "vector_add", &args, n / 256, 256);
    group.throughput(Throughput::Elements(per_run));
    group.bench_function("memory_heavy", |bch| bch.iter(|| run(&module, &mut mem, "vector_add", &args, n / 256, 256)));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! SIMT statistics on kernels whose answers are known by construction.

use device::{Backend, DeviceMemory, Dim3, KernelStats, Launch, LaunchConfig, LoadedModule, ParamBuffer};

fn run_text(text: &str, kernel: &str, grid: u32, block: u32, extra: &[u32]) -> KernelStats {
    let mut mem = DeviceMemory::new();
    let module =
        LoadedModule::load(ir::compile(text).unwrap_or_else(|d| panic!("{}", d[0].render("test", text))), &mut mem)
            .unwrap();
    let k = module.module.function(kernel).unwrap();
    let func = &module.module.functions[k];
    let mut params = ParamBuffer::for_kernel(func);
    let threads = u64::from(grid * block);
    let pointers = func.params.len() - extra.len();
    for i in 0..pointers {
        // Room for strided and scattered accesses.
        let p = mem.alloc(threads * 4 * 8 + 4096 * 4, format!("buffer {i}"));
        params.set(i, &p.to_le_bytes()).unwrap();
    }
    for (k, v) in extra.iter().enumerate() {
        params.set(pointers + k, &v.to_le_bytes()).unwrap();
    }
    let config = LaunchConfig { grid: Dim3::new(grid, 1, 1), block: Dim3::new(block, 1, 1), dynamic_shared: 0 };
    let launch = Launch { module: &module, kernel: k, config, params: &params, collect_stats: true };
    emu::Emulator::new().launch(&launch, &mut mem, &mut std::io::sink()).unwrap().stats.unwrap()
}

fn corpus(kernel: &str, grid: u32, block: u32, extra: &[u32]) -> KernelStats {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../corpus/ptx/simt_stats/simt_stats.sm_80.O3.ptx"
    ))
    .unwrap();
    run_text(&text, kernel, grid, block, extra)
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

#[test]
fn uniform_work_is_fully_efficient() {
    let s = corpus("uniform_work", 4, 128, &[]);
    assert_eq!(s.simt_efficiency, 1.0);
    assert_eq!(s.thread_instructions, s.warp_instructions * 32);
    assert!(s.branches.iter().all(|b| b.diverged == 0));
}

#[test]
fn lane_parity_halves_the_divergent_paths() {
    // 4 instructions before the branch (32 lanes), 5 on each side (16 lanes; the even side ends in
    // `bra.uni`), `ret` after the join (32 lanes).
    let text = format!(
        "{HEADER}.visible .entry parity(.param .u64 out)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	mov.u32 %r1, %laneid;
	and.b32 %r2, %r1, 1;
	setp.eq.u32 %p1, %r2, 1;
	@%p1 bra $L_odd;
	add.s32 %r3, %r1, 1;
	add.s32 %r3, %r3, 1;
	add.s32 %r3, %r3, 1;
	add.s32 %r3, %r3, 1;
	bra.uni $L_join;
$L_odd:
	mul.lo.s32 %r3, %r1, 3;
	mul.lo.s32 %r3, %r3, 3;
	mul.lo.s32 %r3, %r3, 3;
	mul.lo.s32 %r3, %r3, 3;
	mul.lo.s32 %r3, %r3, 3;
$L_join:
	ret;
}}"
    );
    let s = run_text(&text, "parity", 1, 64, &[]);
    let warps = 2;
    assert_eq!(s.warp_instructions, warps * (4 + 5 + 5 + 1));
    assert_eq!(s.thread_instructions, warps * (4 * 32 + 5 * 16 + 5 * 16 + 32));
    assert_eq!(s.simt_efficiency, (4.0 * 32.0 + 160.0 + 32.0) / (15.0 * 32.0));
    let branch = s.branches.iter().find(|b| b.instruction.starts_with("@%p1 bra")).unwrap();
    assert_eq!((branch.executed, branch.diverged), (warps, warps));
    // The corpus kernel diverges at its parity branch in every warp too.
    let s = corpus("branch_on_lane_parity", 2, 64, &[]);
    assert!(s.branches.iter().any(|b| b.diverged == b.executed && b.executed == 4));
    assert!(s.simt_efficiency > 0.5 && s.simt_efficiency < 1.0);
}

#[test]
fn lane_dependent_trip_counts_give_528_of_1024() {
    // Loop body of 3 instructions (add, setp, bra); lane l runs it l+1 times.
    let text = format!(
        "{HEADER}.visible .entry trips(.param .u64 out)
{{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	mov.u32 %r1, %laneid;
	add.s32 %r2, %r1, 1;
	mov.u32 %r3, 0;
$L_loop:
	add.s32 %r3, %r3, 1;
	setp.lt.s32 %p1, %r3, %r2;
	@%p1 bra $L_loop;
	ret;
}}"
    );
    let s = run_text(&text, "trips", 1, 32, &[]);
    // Body: 3 × Σ(l+1) = 3 × 528 thread instructions in 3 × 32 warp instructions; 3 + 1 outside at 32 lanes.
    assert_eq!(s.thread_instructions, 3 * 528 + 4 * 32);
    assert_eq!(s.warp_instructions, 3 * 32 + 4);
    let body_efficiency = (3.0 * 528.0) / (3.0 * 32.0 * 32.0);
    assert_eq!(body_efficiency, 528.0 / 1024.0);
    let branch = s.branches.iter().find(|b| b.instruction.contains("bra")).unwrap();
    assert_eq!(branch.executed, 32);
    assert_eq!(branch.diverged, 31);
}

#[test]
fn coalescing_counts_32_byte_transactions() {
    let coalesced = corpus("load_coalesced", 2, 128, &[]);
    assert_eq!(coalesced.memory.global_loads.transactions_per_access, 4.0);
    assert_eq!(coalesced.memory.global_stores.transactions_per_access, 4.0);
    let strided = corpus("load_strided_32B", 2, 128, &[]);
    assert_eq!(strided.memory.global_loads.transactions_per_access, 32.0);
    assert_eq!(strided.memory.global_stores.transactions_per_access, 4.0);
    let scattered = corpus("load_scattered", 2, 128, &[4095]);
    assert!(scattered.memory.global_loads.transactions_per_access > 25.0, "{:?}", scattered.memory.global_loads);
}

#[test]
fn shared_memory_strides_have_known_bank_conflicts() {
    for k in [1u64, 2, 4, 32] {
        let s = corpus(&format!("shared_bank_conflicts_stride{k}"), 1, 256, &[]);
        // 8 warps fill 1024 words with stride-1 stores (4 conflict-free accesses each), then each warp reads
        // one word per lane at stride k: k wavefronts.
        assert_eq!(s.memory.shared.warp_accesses, 8 * 4 + 8, "stride {k}");
        assert_eq!(s.memory.shared.wavefronts, 8 * 4 + 8 * k, "stride {k}");
        assert_eq!(s.memory.shared.bank_conflicts, 8 * (k - 1), "stride {k}");
    }
}

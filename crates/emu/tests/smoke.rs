//! Quick end-to-end checks of the emulator on corpus kernels, through the device API.

use device::{Backend, DeviceMemory, Dim3, Launch, LaunchConfig, LoadedModule, ParamBuffer};

fn load(rel: &str, memory: &mut DeviceMemory) -> LoadedModule {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx").join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let module = ir::compile(&text).unwrap_or_else(|d| panic!("{}", d[0].render(rel, &text)));
    LoadedModule::load(module, memory).unwrap()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn vector_add_and_reduce() {
    for arch in ["sm_50", "sm_80", "sm_90"] {
        for variant in ["O3", "lineinfo", "G"] {
            let rel = format!("workloads/workloads.{arch}.{variant}.ptx");
            if !std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/ptx").join(&rel).exists() {
                continue;
            }
            let mut mem = DeviceMemory::new();
            let module = load(&rel, &mut mem);
            let n = 1000u32;
            let a: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
            let b: Vec<u8> = (0..n).flat_map(|i| (2.0 * i as f32).to_le_bytes()).collect();
            let pa = mem.alloc_bytes(&a, "a");
            let pb = mem.alloc_bytes(&b, "b");
            let pc = mem.alloc(u64::from(n) * 4, "c");
            let kernel = module.module.function("vector_add").unwrap();
            let mut params = ParamBuffer::for_kernel(&module.module.functions[kernel]);
            params.set(0, &pa.to_le_bytes()).unwrap();
            params.set(1, &pb.to_le_bytes()).unwrap();
            params.set(2, &pc.to_le_bytes()).unwrap();
            params.set(3, &n.to_le_bytes()).unwrap();
            let config = LaunchConfig { grid: Dim3::new(4, 1, 1), block: Dim3::new(256, 1, 1), dynamic_shared: 0 };
            let launch = Launch { module: &module, kernel, config, params: &params, collect_stats: true };
            let mut emu = emu::Emulator::new();
            let report = emu.launch(&launch, &mut mem, &mut std::io::stdout()).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let c = f32s(mem.bytes(pc).unwrap());
            for (i, v) in c.iter().enumerate() {
                assert_eq!(*v, 3.0 * i as f32, "{rel}: c[{i}]");
            }
            let stats = report.stats.unwrap();
            assert!(stats.simt_efficiency > 0.9, "{rel}: {}", stats.simt_efficiency);

            // reduce_tree: one partial sum per block of 256.
            let kernel = module.module.function("reduce_tree").unwrap();
            let partial = mem.alloc(4 * 4, "partial");
            let mut params = ParamBuffer::for_kernel(&module.module.functions[kernel]);
            params.set(0, &pa.to_le_bytes()).unwrap();
            params.set(1, &partial.to_le_bytes()).unwrap();
            params.set(2, &n.to_le_bytes()).unwrap();
            let config = LaunchConfig { grid: Dim3::new(4, 1, 1), block: Dim3::new(256, 1, 1), dynamic_shared: 1024 };
            let launch = Launch { module: &module, kernel, config, params: &params, collect_stats: false };
            emu.launch(&launch, &mut mem, &mut std::io::stdout()).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let sums = f32s(mem.bytes(partial).unwrap());
            for (blk, s) in sums.iter().enumerate() {
                let expected: f32 = (blk * 256..((blk + 1) * 256).min(n as usize)).map(|i| i as f32).sum();
                assert!((s - expected).abs() <= expected * 1e-6, "{rel}: block {blk}: {s} vs {expected}");
            }
        }
    }
}

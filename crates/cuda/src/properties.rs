//! The device lockstep presents: one device, honest about being a CPU.
//!
//! Its name says it is lockstep on this CPU and which engine runs kernels; multiprocessors are the worker
//! threads; warps are 32 lanes; the compute capability is that of the newest PTX target the front end
//! runs (sm_90); global memory is the host's memory. Where a GPU property has no CPU meaning, the value is
//! the limit the engines enforce (threads per block, shared memory) or what an H100 reports (texture
//! sizes), so that programs which size their work from them behave.

use std::sync::OnceLock;

use crate::config::{Backend, Config};

/// The device's PCI bus id (`cudaDeviceGetPCIBusId`, `cuDeviceGetPCIBusId`): there is no bus; a fixed id.
pub const PCI_BUS_ID: &str = "0000:00:00.0";

/// Whether `id` names the device (`cudaDeviceGetByPCIBusId`, `cuDeviceGetByPCIBusId`): the full id or its
/// shorter forms, in any case.
pub fn is_pci_bus_id(id: &str) -> bool {
    [PCI_BUS_ID, "00:00.0", "0000:00:00"].iter().any(|o| id.eq_ignore_ascii_case(o))
}

/// The compute capability presented (the newest PTX target the front end accepts).
pub const COMPUTE_CAPABILITY: (i32, i32) = (9, 0);

/// The static shared memory a block may use without opting in (`cudaFuncAttributeMaxDynamicSharedMemorySize`).
pub const SHARED_PER_BLOCK: u64 = 48 * 1024;
/// With opt-in: the engines' limit.
pub const SHARED_PER_BLOCK_OPTIN: u64 = runtime::MAX_SHARED_PER_BLOCK;
pub const SHARED_PER_MULTIPROCESSOR: u64 = 228 * 1024;
pub const CONSTANT_MEMORY: u64 = 64 * 1024;
pub const REGISTERS_PER_BLOCK: i32 = 65536;
pub const MAX_THREADS_PER_MULTIPROCESSOR: i32 = 2048;
pub const MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 32;

/// What `cudaGetDeviceProperties` reports (the fields with meaning here; the C shell fills the rest with
/// zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Properties {
    pub name: String,
    pub total_global_mem: u64,
    pub multiprocessors: i32,
    pub clock_khz: i32,
    pub l2_cache_bytes: i32,
}

impl Properties {
    /// The device as `config` runs it, on this host.
    pub fn for_config(config: &Config) -> Properties {
        let host = host();
        let engine = match config.backend {
            Backend::Jit if config.check => "JIT, checked",
            Backend::Jit => "JIT",
            Backend::Emu => "SIMT emulator",
        };
        let workers = config.worker_threads();
        let name = format!("lockstep {engine} on {} ({workers} worker threads)", host.cpu);
        Properties {
            name,
            total_global_mem: host.memory,
            multiprocessors: workers.min(i32::MAX as usize) as i32,
            clock_khz: host.clock_khz,
            l2_cache_bytes: host.l2_cache_bytes,
        }
    }

    /// `cudaDeviceGetAttribute` / `cuDeviceGetAttribute` (the two enumerations share values): `None` for an
    /// attribute id that CUDA does not define.
    pub fn attribute(&self, id: i32) -> Option<i32> {
        let (major, minor) = COMPUTE_CAPABILITY;
        let clamp = |v: u64| v.min(i32::MAX as u64) as i32;
        Some(match id {
            1 => 1024,                                    // MaxThreadsPerBlock
            2 | 3 => 1024,                                // MaxBlockDimX, Y
            4 => 64,                                      // MaxBlockDimZ
            5 => i32::MAX,                                // MaxGridDimX
            6 | 7 => 65535,                               // MaxGridDimY, Z
            8 => clamp(SHARED_PER_BLOCK),                 // MaxSharedMemoryPerBlock
            9 => clamp(CONSTANT_MEMORY),                  // TotalConstantMemory
            10 => 32,                                     // WarpSize
            11 => i32::MAX,                               // MaxPitch
            12 => REGISTERS_PER_BLOCK,                    // MaxRegistersPerBlock
            13 => self.clock_khz,                         // ClockRate (kHz)
            14 => 512,                                    // TextureAlignment
            15 => 0,                                      // GpuOverlap: copies do not overlap kernels
            16 => self.multiprocessors,                   // MultiProcessorCount
            17 => 0,                                      // KernelExecTimeout
            18 => 1,                                      // Integrated: the host's memory
            19 => 1,                                      // CanMapHostMemory
            20 => 0,                                      // ComputeMode: default
            21 => 131072,                                 // MaxTexture1DWidth
            22 | 23 => 131072,                            // MaxTexture2DWidth, Height
            24..=26 => 16384,                             // MaxTexture3D*
            27 | 28 => 32768,                             // MaxTexture2DLayeredWidth, Height
            29 => 2048,                                   // MaxTexture2DLayeredLayers
            30 => 512,                                    // SurfaceAlignment
            31 => 0,                                      // ConcurrentKernels: kernels run one at a time
            32 => 0,                                      // EccEnabled
            33..=35 => 0,                                 // PciBusId, PciDeviceId, TccDriver
            36 => 0,                                      // MemoryClockRate: unknown
            37 => 64,                                     // GlobalMemoryBusWidth (one DDR channel)
            38 => self.l2_cache_bytes,                    // L2CacheSize
            39 => MAX_THREADS_PER_MULTIPROCESSOR,         // MaxThreadsPerMultiProcessor
            40 => 0,                                      // AsyncEngineCount
            41 => 1,                                      // UnifiedAddressing
            42 => 32768,                                  // MaxTexture1DLayeredWidth
            43 => 2048,                                   // MaxTexture1DLayeredLayers
            45 | 46 => 32768,                             // MaxTexture2DGatherWidth, Height
            47..=49 => 8192,                              // MaxTexture3D*Alt
            50 => 0,                                      // PciDomainId
            51 => 32,                                     // TexturePitchAlignment
            52 | 53 => 32768,                             // MaxTextureCubemapWidth, LayeredWidth
            54 => 2046,                                   // MaxTextureCubemapLayeredLayers
            55 => 32768,                                  // MaxSurface1DWidth
            56 | 57 => 65536,                             // MaxSurface2DWidth, Height
            58..=60 => 16384,                             // MaxSurface3D*
            61 => 32768,                                  // MaxSurface1DLayeredWidth
            62 => 2048,                                   // MaxSurface1DLayeredLayers
            63 | 64 => 32768,                             // MaxSurface2DLayeredWidth, Height
            65 => 2048,                                   // MaxSurface2DLayeredLayers
            66 | 67 => 32768,                             // MaxSurfaceCubemapWidth, LayeredWidth
            68 => 2046,                                   // MaxSurfaceCubemapLayeredLayers
            69 => 268435456,                              // MaxTexture1DLinearWidth
            70 | 71 => 131072,                            // MaxTexture2DLinearWidth, Height
            72 => 2097120,                                // MaxTexture2DLinearPitch
            73 | 74 => 32768,                             // MaxTexture2DMipmappedWidth, Height
            75 => major,                                  // ComputeCapabilityMajor
            76 => minor,                                  // ComputeCapabilityMinor
            77 => 32768,                                  // MaxTexture1DMipmappedWidth
            78 => 1,                                      // StreamPrioritiesSupported
            79 | 80 => 1,                                 // GlobalL1CacheSupported, LocalL1CacheSupported
            81 => clamp(SHARED_PER_MULTIPROCESSOR),       // MaxSharedMemoryPerMultiprocessor
            82 => 65536,                                  // MaxRegistersPerMultiprocessor
            83 => 1,                                      // ManagedMemory
            84 | 85 => 0,                                 // IsMultiGpuBoard, MultiGpuBoardGroupID
            86 => 1,                                      // HostNativeAtomicSupported
            87 => 2,                                      // SingleToDoublePrecisionPerfRatio
            88 => 0,                                      // PageableMemoryAccess: the emulator checks pointers
            89 => 1,                                      // ConcurrentManagedAccess
            90 => 0,                                      // ComputePreemptionSupported
            91 => 1,                                      // CanUseHostPointerForRegisteredMem
            92..=94 | 96 => 0,                            // reserved
            95 => 1,                                      // CooperativeLaunch: every CTA resident at once
            97 => clamp(SHARED_PER_BLOCK_OPTIN),          // MaxSharedMemoryPerBlockOptin
            98 => 0,                                      // CanFlushRemoteWrites
            99 => 1,                                      // HostRegisterSupported
            100 => 0,                                     // PageableMemoryAccessUsesHostPageTables
            101 => 1,                                     // DirectManagedMemAccessFromHost
            106 => MAX_BLOCKS_PER_MULTIPROCESSOR,         // MaxBlocksPerMultiprocessor
            108 | 109 => 0,                               // MaxPersistingL2CacheSize, MaxAccessPolicyWindowSize
            111 => 0,                                     // ReservedSharedMemoryPerBlock
            112 => 0,                                     // SparseCudaArraySupported
            113 => 1,                                     // HostRegisterReadOnlySupported
            114 => 0,                                     // TimelineSemaphoreInteropSupported
            115 => 1,                                     // MemoryPoolsSupported (pool.rs)
            116..=118 => 0,                               // GPUDirectRDMA*
            119 => 0,                                     // MemoryPoolSupportedHandleTypes
            120 => 0,                                     // ClusterLaunch
            121 => 0,                                     // DeferredMappingCudaArraySupported
            122..=124 | 127..=129 | 132 | 141 | 145 => 0, // reserved
            125 => 0,                                     // IpcEventSupport
            126 => 1,                                     // MemSyncDomainCount
            130 => 0,                                     // NumaConfig: none
            131 | 134 => -1,                              // NumaId, HostNumaId
            133 => 0,                                     // MpsEnabled
            135 | 138 => 0,                               // D3D12CigSupported, VulkanCigSupported
            139 | 140 => 0,                               // GpuPciDeviceId, GpuPciSubsystemId
            142..=144 => 0,                               // Host NUMA / memory pools
            147 => 0,                                     // OnlyPartialHostNativeAtomicSupported
            148 => 0,                                     // AtomicReductionSupported
            149 => 1,                                     // LocalityDomainCount
            150 => 0,                                     // OversizedSharedMemoryPerBlock
            151 => 0,                                     // CigStreamsSupported
            157 => self.multiprocessors,                  // LocalityDomainMultiprocessorCount
            160 => 0,                                     // TensorMapLargeTensorMinSize
            _ => return None,
        })
    }
}

/// Facts about the host, read once.
#[derive(Clone, Debug)]
struct Host {
    cpu: String,
    memory: u64,
    clock_khz: i32,
    l2_cache_bytes: i32,
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let cpu = field("model name").filter(|s| !s.is_empty()).unwrap_or_else(|| std::env::consts::ARCH.to_string());
        let clock_khz = field("cpu MHz").and_then(|m| m.parse::<f64>().ok()).map_or(0, |mhz| (mhz * 1000.0) as i32);
        Host { cpu, memory: physical_memory(), clock_khz, l2_cache_bytes: l2_cache_bytes() }
    })
}

/// The host's physical memory in bytes.
pub fn physical_memory() -> u64 {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        if pages > 0 && size > 0 {
            return pages as u64 * size as u64;
        }
    }
    16 << 30
}

/// The L2 cache of CPU 0, from sysfs (0 when unknown).
fn l2_cache_bytes() -> i32 {
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).map(|s| s.trim().to_string());
        if read("level").ok().as_deref() != Some("2") {
            continue;
        }
        if let Ok(size) = read("size") {
            let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit()).unwrap_or(size.len()));
            let n: i64 = digits.parse().unwrap_or(0);
            let bytes = match unit {
                "K" => n << 10,
                "M" => n << 20,
                _ => n,
            };
            return bytes.min(i64::from(i32::MAX)) as i32;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_says_what_it_is() {
        let config = Config { threads: 3, ..Config::default() };
        let p = Properties::for_config(&config);
        assert!(p.name.starts_with("lockstep JIT on "), "{}", p.name);
        assert!(p.name.ends_with("(3 worker threads)"), "{}", p.name);
        assert_eq!(p.multiprocessors, 3);
        assert_eq!(p.attribute(16), Some(3));
        assert_eq!(p.attribute(10), Some(32));
        assert_eq!(p.attribute(75), Some(9));
        assert_eq!(p.attribute(76), Some(0));
        assert!(p.total_global_mem > 0);
        assert_eq!(p.attribute(44), None, "44 is not a cudaDeviceAttr");
        assert_eq!(p.attribute(10_000), None);
        let emu = Properties::for_config(&Config { backend: Backend::Emu, ..Config::default() });
        assert!(emu.name.contains("SIMT emulator"), "{}", emu.name);
    }
}

// clang_nvptx_shim.h -- the few CUDA declarations the clang fixtures need.
//
// clang 14 cannot parse the CUDA 12/13 toolkit headers, so the clang PTX in
// corpus/ptx/clang/ is built with -nocudainc -nocudalib and this header is
// force-included (-include). It maps the CUDA spellings used by the chosen
// sources onto clang's NVPTX builtins; nothing here is NVIDIA code.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

struct __lockstep_dim3 { unsigned x, y, z; };

#define __LS_SREG(name, f)                                                          \
  struct __lockstep_##name##_t {                                                    \
    __declspec(property(get = __get_x)) unsigned x;                                 \
    __declspec(property(get = __get_y)) unsigned y;                                 \
    __declspec(property(get = __get_z)) unsigned z;                                 \
    static __device__ __forceinline__ unsigned __get_x() { return __nvvm_read_ptx_sreg_##f##_x(); } \
    static __device__ __forceinline__ unsigned __get_y() { return __nvvm_read_ptx_sreg_##f##_y(); } \
    static __device__ __forceinline__ unsigned __get_z() { return __nvvm_read_ptx_sreg_##f##_z(); } \
  };                                                                                \
  extern const __device__ __attribute__((weak)) __lockstep_##name##_t name;
__LS_SREG(threadIdx, tid)
__LS_SREG(blockIdx, ctaid)
__LS_SREG(blockDim, ntid)
__LS_SREG(gridDim, nctaid)
#undef __LS_SREG

extern "C" __device__ int printf(const char *, ...);
extern "C" __device__ int vprintf(const char *, const char *);

// Barriers, fences, warp primitives.
static __device__ __forceinline__ int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
static __device__ __forceinline__ int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
static __device__ __forceinline__ int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
static __device__ __forceinline__ void __syncwarp(unsigned m = 0xffffffffu) { __nvvm_bar_warp_sync(m); }
static __device__ __forceinline__ void __threadfence_block() { __nvvm_membar_cta(); }
static __device__ __forceinline__ void __threadfence() { __nvvm_membar_gl(); }
static __device__ __forceinline__ void __threadfence_system() { __nvvm_membar_sys(); }
static __device__ __forceinline__ __attribute__((noreturn)) void __trap() { __builtin_trap(); }
static __device__ __forceinline__ void __brkpt() { asm volatile("brkpt;"); }
static __device__ __forceinline__ float __shfl_down_sync(unsigned m, float v, unsigned d) {
  return __nvvm_shfl_sync_down_f32(m, v, d, 0x1f);
}
static __device__ __forceinline__ float __shfl_xor_sync(unsigned m, float v, int l) {
  return __nvvm_shfl_sync_bfly_f32(m, v, l, 0x1f);
}

// Atomics (generic address space).
static __device__ __forceinline__ float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
static __device__ __forceinline__ unsigned atomicAdd(unsigned *p, unsigned v) {
  return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v);
}
static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }

// Integer helpers.
static __device__ __forceinline__ int __mulhi(int a, int b) { return __nvvm_mulhi_i(a, b); }
static __device__ __forceinline__ unsigned __umulhi(unsigned a, unsigned b) { return __nvvm_mulhi_ui(a, b); }
static __device__ __forceinline__ long long __mul64hi(long long a, long long b) { return __nvvm_mulhi_ll(a, b); }
static __device__ __forceinline__ unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return __nvvm_mulhi_ull(a, b);
}
static __device__ __forceinline__ unsigned __sad(int a, int b, unsigned c) { return (unsigned)__nvvm_sad_i(a, b, (int)c); }
static __device__ __forceinline__ unsigned __usad(unsigned a, unsigned b, unsigned c) { return __nvvm_sad_ui(a, b, c); }
static __device__ __forceinline__ int __mul24(int a, int b) { return __nvvm_mul24_i(a, b); }
static __device__ __forceinline__ unsigned __umul24(unsigned a, unsigned b) { return __nvvm_mul24_ui(a, b); }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
static __device__ __forceinline__ long long llmin(long long a, long long b) { return a < b ? a : b; }
static __device__ __forceinline__ long long llmax(long long a, long long b) { return a > b ? a : b; }
static __device__ __forceinline__ int abs(int a) { return a < 0 ? -a : a; }
static __device__ __forceinline__ long long llabs(long long a) { return a < 0 ? -a : a; }

// Float helpers (lowered by the NVPTX backend to fma.rn / sqrt.rn / abs).
static __device__ __forceinline__ float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static __device__ __forceinline__ float sqrtf(float a) { return __builtin_sqrtf(a); }
static __device__ __forceinline__ float fabsf(float a) { return __builtin_fabsf(a); }

struct float3 { float x, y, z; };
static __device__ __forceinline__ float3 make_float3(float x, float y, float z) {
  float3 r = {x, y, z};
  return r;
}

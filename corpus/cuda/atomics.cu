// atomics.cu -- atomic read-modify-write and reductions.
//
// Covers: atomicAdd on int, unsigned, unsigned long long, float, double
// (sm_60+), atomicSub/Min/Max (signed, unsigned, 64-bit), atomicInc/Dec,
// atomicAnd/Or/Xor (32 and 64), atomicExch (int, float, 64), atomicCAS (32,
// 64, and a CAS loop building a float max), on global and shared memory;
// scoped variants atomicAdd_block / atomicAdd_system / atomicCAS_block
// (sm_60+); unused-result atomics that become red.*; memory-ordered
// accesses via cuda::atomic_ref (ld.acquire / st.release / atom.acq_rel /
// fence) and the same forms spelled in inline asm (sm_70+), plus
// atom.global.cas.b16 / atom.add.noftz.f16 where the arch allows.
#include <cuda_fp16.h>
#if __CUDA_ARCH__ >= 700 || !defined(__CUDA_ARCH__)
#include <cuda/atomic>
#endif

extern "C" __global__ void atomics_global(int *ci, unsigned *cu,
                                          unsigned long long *cl, float *cf,
                                          double *cd, long long *cs,
                                          int *old) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  int k = 0;
  old[16 * i + k++] = atomicAdd(&ci[0], 1);
  old[16 * i + k++] = atomicSub(&ci[1], 2);
  old[16 * i + k++] = atomicMin(&ci[2], i - 100);
  old[16 * i + k++] = atomicMax(&ci[3], i);
  old[16 * i + k++] = atomicExch(&ci[4], i);
  old[16 * i + k++] = atomicCAS(&ci[5], i - 1, i);
  old[16 * i + k++] = (int)atomicInc(&cu[0], 17u);
  old[16 * i + k++] = (int)atomicDec(&cu[1], 17u);
  old[16 * i + k++] = (int)atomicAnd(&cu[2], ~(1u << (i & 31)));
  old[16 * i + k++] = (int)atomicOr(&cu[3], 1u << (i & 31));
  old[16 * i + k++] = (int)atomicXor(&cu[4], (unsigned)i);
  old[16 * i + k++] = (int)atomicMin(&cu[5], (unsigned)i) + (int)atomicMax(&cu[6], (unsigned)i);
  old[16 * i + k++] = (int)atomicAdd(&cl[0], 1ull);
  old[16 * i + k++] = (int)atomicCAS(&cl[1], 0ull, (unsigned long long)i) +
                      (int)atomicExch(&cl[2], (unsigned long long)i);
  old[16 * i + k++] = (int)atomicAdd(&cf[0], 0.5f) + (int)atomicExch(&cf[1], (float)i);
#if __CUDA_ARCH__ >= 600
  old[16 * i + k++] = (int)atomicAdd(&cd[0], 0.25);
#endif
#if __CUDA_ARCH__ >= 350
  atomicMin(&cs[0], (long long)i - 5);      // 64-bit signed min/max (sm_35+)
  atomicMax(&cs[1], (long long)i);
  atomicAnd(&cl[3], ~(1ull << (i & 63)));
  atomicOr(&cl[4], 1ull << (i & 63));
  atomicXor(&cl[5], (unsigned long long)i);
  atomicMin(&cl[6], (unsigned long long)i);
#endif
}

// Results unused -> the compiler emits red.global.* instead of atom.
extern "C" __global__ void reductions_unused(int *ci, unsigned *cu, float *cf,
                                             unsigned long long *cl, double *cd) {
  int i = threadIdx.x;
  atomicAdd(&ci[0], i);
  atomicSub(&ci[1], 1);
  atomicMin(&ci[2], -i);
  atomicMax(&ci[3], i);
  atomicAnd(&cu[0], 0xFFu << (i & 7));
  atomicOr(&cu[1], 1u << (i & 31));
  atomicXor(&cu[2], (unsigned)i);
  atomicInc(&cu[3], 100u);
  atomicDec(&cu[4], 100u);
  atomicAdd(&cf[0], 1.0f);
  atomicAdd(&cl[0], 3ull);
#if __CUDA_ARCH__ >= 600
  atomicAdd(&cd[0], 1.0);
#endif
  // nvcc itself emits atom.* with a dead destination (ptxas turns those into
  // RED); spell the red.* forms explicitly so the PTX contains them.
  asm volatile("red.global.add.u32 [%0], %1;" :: "l"(cu + 5), "r"(i) : "memory");
  asm volatile("red.global.min.s32 [%0], %1;" :: "l"(ci + 4), "r"(-i) : "memory");
  asm volatile("red.global.and.b64 [%0], %1;" :: "l"(cl + 1), "l"(~0ull) : "memory");
  asm volatile("red.global.inc.u32 [%0], 15;" :: "l"(cu + 6) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(cf + 1), "f"(0.5f) : "memory");
#if __CUDA_ARCH__ >= 600
  asm volatile("red.global.add.f64 [%0], %1;" :: "l"(cd + 1), "d"(0.5) : "memory");
#endif
#if __CUDA_ARCH__ >= 700
  asm volatile("red.relaxed.gpu.global.add.u64 [%0], 1;" :: "l"(cl + 2) : "memory");
#endif
  __shared__ unsigned sred;
  if (i == 0) sred = 0;
  __syncthreads();
  asm volatile("red.shared.add.u32 [%0], 1;" :: "r"((unsigned)__cvta_generic_to_shared(&sred)) : "memory");
  __syncthreads();
  if (i == 0) cu[7] = sred;
}

extern "C" __global__ void atomics_shared(const int *in, int *out, float *fout) {
  __shared__ int s[8];
  __shared__ unsigned su[4];
  __shared__ float sf[2];
  __shared__ unsigned long long sl[2];
  int i = threadIdx.x;
  if (i < 8) s[i] = 0;
  if (i < 4) su[i] = 0xFFFFFFFFu;
  if (i < 2) { sf[i] = 0.0f; sl[i] = 0ull; }
  __syncthreads();
  int v = in[i];
  int o = atomicAdd(&s[0], v);
  atomicSub(&s[1], v);
  atomicMin(&s[2], v);
  atomicMax(&s[3], v);
  o += atomicExch(&s[4], i);
  o += atomicCAS(&s[5], 0, i);
  atomicAnd(&su[0], ~(1u << (i & 31)));
  atomicOr(&su[1], (unsigned)v);
  atomicXor(&su[2], (unsigned)i);
  atomicInc(&su[3], 31u);
  atomicAdd(&sf[0], 1.0f);
  atomicAdd(&sl[0], (unsigned long long)v);
  atomicCAS(&sl[1], 0ull, 7ull);
  __syncthreads();
  out[i] = o;
  if (i < 8) out[blockDim.x + i] = s[i];
  if (i == 0) fout[0] = sf[0] + (float)sl[0] + (float)su[1];
}

// Float max via a CAS loop (common idiom).
__device__ float atomic_max_float(float *addr, float val) {
  int *ai = (int *)addr;
  int old = *ai, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val) break;
    old = atomicCAS(ai, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void atomic_cas_loop(const float *in, float *maxv) {
  atomic_max_float(maxv, in[threadIdx.x + blockIdx.x * blockDim.x]);
}

extern "C" __global__ void atomics_scoped(int *ci, float *cf, double *cd,
                                          unsigned long long *cl, int *old) {
  int i = threadIdx.x;
#if __CUDA_ARCH__ >= 600
  old[4 * i + 0] = atomicAdd_block(&ci[0], 1);
  old[4 * i + 1] = atomicAdd_system(&ci[1], 1);
  old[4 * i + 2] = atomicCAS_block(&ci[2], 0, i) + atomicExch_system(&ci[3], i);
  atomicAdd_block(&cf[0], 1.0f);
  atomicAdd_system(&cd[0], 2.0);
  atomicMax_block(&ci[4], i);
  atomicOr_system((unsigned *)&ci[5], 1u << (i & 31));
  old[4 * i + 3] = (int)atomicAdd_system(&cl[0], 1ull);
#else
  old[4 * i + 0] = atomicAdd(&ci[0], 1);
#endif
}

// Memory orders: producer/consumer flag with release/acquire.
extern "C" __global__ void memory_order(int *data, int *flag, int *out) {
  int i = threadIdx.x;
#if __CUDA_ARCH__ >= 700
  cuda::atomic_ref<int, cuda::thread_scope_device> f(*flag);
  if (i == 0) {
    data[0] = 123;
    f.store(1, cuda::memory_order_release);           // st.release.gpu
  } else if (i == 32) {
    while (f.load(cuda::memory_order_acquire) == 0) {  // ld.acquire.gpu
    }
    out[0] = data[0];
  }
  cuda::atomic_ref<int, cuda::thread_scope_block> b(data[1]);
  int prev = b.fetch_add(1, cuda::memory_order_acq_rel);  // atom.acq_rel.cta
  cuda::atomic_ref<int, cuda::thread_scope_system> s(data[2]);
  int prev2 = s.exchange(i, cuda::memory_order_relaxed);  // atom.relaxed.sys
  int expected = 0;
  b.compare_exchange_strong(expected, i, cuda::memory_order_seq_cst);
  cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_device);
  out[1 + i] = prev + prev2 + expected;
  // Explicit PTX spellings.
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(data + 3));
  asm volatile("st.relaxed.cta.global.b32 [%0], %1;" :: "l"(data + 4), "r"(v));
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  asm volatile("fence.sc.cta;" ::: "memory");
  asm volatile("membar.sys;" ::: "memory");
  int a;
  asm volatile("atom.acquire.gpu.global.add.s32 %0, [%1], 1;" : "=r"(a) : "l"(data + 5));
  asm volatile("red.release.sys.global.add.u32 [%0], 1;" :: "l"(data + 6));
  asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(0) : "memory");
  unsigned short h16;
  asm volatile("atom.global.cas.b16 %0, [%1], %2, %3;" : "=h"(h16) : "l"(data + 7),
               "h"((unsigned short)0), "h"((unsigned short)i));
  out[65 + i] = a + v + h16;
#else
  if (i == 0) { data[0] = 123; __threadfence(); atomicExch(flag, 1); }
  out[1 + i] = atomicAdd(&data[1], 1);
#endif
}

extern "C" __global__ void atomics_half(__half *h, __half2 *h2) {
#if __CUDA_ARCH__ >= 700
  atomicAdd(&h[0], __float2half(1.0f));                  // atom.add.noftz.f16
  atomicAdd(&h2[0], __floats2half2_rn(1.0f, 2.0f));      // atom.add.noftz.f16x2
#endif
}

// 128-bit integers in CUDA: arithmetic, loads and stores of __int128 (nvcc makes them .v2.u64 accesses and
// add.cc/mul.hi chains), and on sm_90 the 128-bit atomics (atomicCAS/atomicExch on unsigned __int128, and
// cuda::atomic_ref<__int128>, which nvcc 13 builds from .reg .b128 registers, mov.b128, ld/st.b128 with
// .acquire/.release/.relaxed and atom.cas/exch.b128). Run by crates/jit/tests/b128.rs against a CPU
// reference. int128.sm_90.ptx is nvcc 13.5.37's output (corpus/.toolchain, see corpus/README.md), its first
// comment line naming the command: nvcc -arch=sm_90 -ptx -O3 int128.cu
#include <cuda/atomic>

typedef unsigned __int128 u128;

// Per thread i: x + y, x - y, x * y, x >> (i % 128) (arithmetic), y << (i % 128), min(x, y), x ^ ~y.
extern "C" __global__ void int128_arith(const __int128 *a, const __int128 *b, __int128 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __int128 x = a[i], y = b[i];
  unsigned s = (unsigned)i % 128;
  __int128 *o = out + 7 * i;
  o[0] = x + y;
  o[1] = x - y;
  o[2] = (__int128)((u128)x * (u128)y);
  o[3] = x >> s;
  o[4] = (__int128)((u128)y << s);
  o[5] = x < y ? x : y;
  o[6] = x ^ ~y;
}

// Every thread adds its amount (i + 1) * K (K a 128-bit constant) to counter[0] with an atomicCAS loop, and
// to a shared total of its block with cuda::atomic_ref compare_exchange_weak (generic addresses of shared
// memory), which thread 0 then adds to counter[1] with an acquire load and compare_exchange_strong; every
// thread exchanges a value of its own into slot[0] (atomicExch) and keeps what it took out. slot[1] keeps its
// value: thread 0 stores back what it loads (release), every thread exchanges in what it loads (acquire) and
// keeps the old value, then tries a compare-and-swap that fails (expected all ones) and keeps what it saw.
extern "C" __global__ void int128_atomics(u128 *counter, u128 *slot, u128 *taken, u128 *loaded) {
#if __CUDA_ARCH__ >= 900
  const u128 K = ((u128)0x0123456789abcdefULL << 64) | 0xfedcba9876543210ULL;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  u128 amount = (u128)(i + 1) * K;
  u128 old = counter[0];
  for (;;) {
    u128 seen = atomicCAS(&counter[0], old, old + amount);
    if (seen == old) break;
    old = seen;
  }
  __shared__ u128 total;
  if (threadIdx.x == 0) total = 0;
  __syncthreads();
  cuda::atomic_ref<u128, cuda::thread_scope_block> t(total);
  u128 cur = t.load(cuda::memory_order_relaxed);
  while (!t.compare_exchange_weak(cur, cur + amount, cuda::memory_order_relaxed)) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    cuda::atomic_ref<u128, cuda::thread_scope_device> c(counter[1]);
    u128 before = c.load(cuda::memory_order_acquire);
    while (!c.compare_exchange_strong(before, before + t.load(cuda::memory_order_relaxed),
                                      cuda::memory_order_acq_rel)) {
    }
  }
  u128 mine = ((u128)i << 64) | (u128)(0x5555u * (i + 7));
  taken[i] = atomicExch(&slot[0], mine);
  cuda::atomic_ref<u128, cuda::thread_scope_device> s1(slot[1]);
  if (i == 0) s1.store(s1.load(cuda::memory_order_relaxed), cuda::memory_order_release);
  loaded[2 * i] = s1.exchange(s1.load(cuda::memory_order_acquire), cuda::memory_order_relaxed);
  u128 expected = ~(u128)0;
  bool swapped = s1.compare_exchange_strong(expected, 0, cuda::memory_order_acq_rel);
  loaded[2 * i + 1] = swapped ? 0 : expected;
#endif
}

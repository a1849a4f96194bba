// reduce_atomic: reductions built on atomics.
//  * shared-memory block reduction + atomicAdd of block partials into an
//    unsigned long long, and the "last block finishes" pattern
//    (__threadfence + atomicInc on a block counter);
//  * a histogram with atomicAdd on __shared__ bins merged into global bins;
//  * atomicAdd on double, an atomicCAS loop implementing a float max,
//    atomicOr / atomicAnd / atomicXor / atomicInc (wrapping) / atomicSub /
//    atomicExch / atomicMin.
// Every result is order-independent, so it is exact.
#include "common.h"
#include <cstring>
#include <vector>

const int kBlock = 256, kBins = 64;

struct Totals {
  unsigned long long sum;    // atomicAdd of block partials
  unsigned long long last;   // written by the last block to finish
  unsigned int blocks_done;  // atomicInc counter
  unsigned int wrap;         // atomicInc(…, 9) by every thread
  unsigned int or_mask, and_mask, xor_all;
  int sub;                   // atomicSub by every thread
  int min_v;
  int exch;                  // atomicExch: some thread's value, checked for range only
  float max_f;               // atomicCAS loop
  double sum_d;              // atomicAdd on double
};

__device__ unsigned long long g_partials[1024];

__device__ float atomic_max_float(float* addr, float v) {
  int* ai = (int*)addr;
  int old = *ai, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(ai, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

__global__ void reduce_all(const int* in, int n, Totals* t, unsigned* hist) {
  __shared__ unsigned long long part[kBlock];
  __shared__ unsigned bins[kBins];
  __shared__ bool am_last;
  int tid = threadIdx.x, i = blockIdx.x * kBlock + tid;
  if (tid < kBins) bins[tid] = 0;
  int v = i < n ? in[i] : 0;
  part[tid] = (unsigned long long)v;
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (tid < s) part[tid] += part[tid + s];
    __syncthreads();
  }
  if (i < n) {
    atomicAdd(&bins[v % kBins], 1u);
    atomicAdd(&t->sum_d, v * 0.25);
    atomic_max_float(&t->max_f, v * 0.5f);
    atomicOr(&t->or_mask, 1u << (v % 32));
    atomicAnd(&t->and_mask, ~(1u << (v % 31)));
    atomicXor(&t->xor_all, (unsigned)v);
    atomicInc(&t->wrap, 9u);
    atomicSub(&t->sub, v);
    atomicMin(&t->min_v, v);
    atomicExch(&t->exch, v);
  }
  __syncthreads();
  if (tid < kBins && bins[tid]) atomicAdd(&hist[tid], bins[tid]);
  if (tid == 0) {
    atomicAdd(&t->sum, part[0]);
    g_partials[blockIdx.x] = part[0];
    __threadfence();
    unsigned ticket = atomicInc(&t->blocks_done, gridDim.x);
    am_last = (ticket == gridDim.x - 1);
  }
  __syncthreads();
  if (am_last && tid == 0) {
    unsigned long long s = 0;
    for (unsigned b = 0; b < gridDim.x; b++) s += ((volatile unsigned long long*)g_partials)[b];
    t->last = s;
  }
}

int main() {
  const int n = 65536, nb = n / kBlock;
  printf("reduce_atomic: n=%d, %d blocks\n", n, nb);
  Lcg rng(99);
  std::vector<int> in(n);
  for (int i = 0; i < n; i++) in[i] = (int)rng.below(1000);
  int* din;
  unsigned* dhist;
  Totals* dt;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dhist, kBins * sizeof(unsigned)));
  CHECK(cudaMalloc(&dt, sizeof(Totals)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dhist, 0, kBins * sizeof(unsigned)));
  Totals t0;
  memset(&t0, 0, sizeof(t0));
  t0.and_mask = 0xffffffffu;
  t0.sub = 0;
  t0.min_v = 1 << 30;
  t0.exch = -1;
  t0.max_f = -1.0f;
  CHECK(cudaMemcpy(dt, &t0, sizeof(t0), cudaMemcpyHostToDevice));
  reduce_all<<<nb, kBlock>>>(din, n, dt, dhist);
  CHECK_LAUNCH();
  Totals t;
  unsigned hist[kBins];
  CHECK(cudaMemcpy(&t, dt, sizeof(t), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hist, dhist, sizeof(hist), cudaMemcpyDeviceToHost));

  unsigned long long sum = 0;
  unsigned ref_hist[kBins] = {0};
  unsigned or_mask = 0, and_mask = 0xffffffffu, xor_all = 0;
  int mx = -1, mn = 1 << 30;
  for (int i = 0; i < n; i++) {
    int v = in[i];
    sum += v;
    ref_hist[v % kBins]++;
    or_mask |= 1u << (v % 32);
    and_mask &= ~(1u << (v % 31));
    xor_all ^= (unsigned)v;
    mx = v > mx ? v : mx;
    mn = v < mn ? v : mn;
  }
  if (t.sum != sum) FAIL("atomicAdd u64 sum %llu, expected %llu", t.sum, sum);
  if (t.last != sum) FAIL("last-block sum %llu, expected %llu", t.last, sum);
  if (t.blocks_done != (unsigned)nb) FAIL("atomicInc block counter ended at %u, expected %d", t.blocks_done, nb);
  for (int b = 0; b < kBins; b++)
    if (hist[b] != ref_hist[b]) FAIL("hist[%d] = %u, expected %u", b, hist[b], ref_hist[b]);
  if (t.sum_d != sum * 0.25) FAIL("atomicAdd double %f, expected %f", t.sum_d, sum * 0.25);
  if (t.max_f != mx * 0.5f) FAIL("CAS float max %f, expected %f", t.max_f, mx * 0.5f);
  if (t.or_mask != or_mask || t.and_mask != and_mask || t.xor_all != xor_all)
    FAIL("bitwise atomics or %08x and %08x xor %u, expected %08x %08x %u", t.or_mask, t.and_mask, t.xor_all, or_mask,
         and_mask, xor_all);
  if (t.wrap != (unsigned)(n % 10)) FAIL("atomicInc wrap %u, expected %d", t.wrap, n % 10);
  if (t.sub != -(int)sum) FAIL("atomicSub %d, expected %lld", t.sub, -(long long)sum);
  if (t.min_v != mn) FAIL("atomicMin %d, expected %d", t.min_v, mn);
  if (t.exch < 0 || t.exch >= 1000) FAIL("atomicExch left %d, not one of the inputs", t.exch);
  printf("sum %llu (atomicAdd u64 and last block), double sum %.2f\n", t.sum, t.sum_d);
  printf("histogram: bin0 %u, bin63 %u\n", hist[0], hist[63]);
  printf("max %.1f (atomicCAS), min %d, sub %d\n", t.max_f, t.min_v, t.sub);
  printf("or %08x, and %08x, xor %u, inc-wrap %u\n", t.or_mask, t.and_mask, t.xor_all, t.wrap);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dhist));
  CHECK(cudaFree(dt));
  printf("PASSED\n");
  return 0;
}

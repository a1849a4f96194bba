// multi_arch: a fatbinary with several targets:
//   -gencode arch=compute_75,code=sm_75              (SASS only)
//   -gencode arch=compute_80,code=[sm_80,compute_80] (SASS + PTX)
//   -gencode arch=compute_90,code=compute_90         (PTX only)
// The kernels take different code paths by __CUDA_ARCH__ (warp reduction with
// __reduce_add_sync on sm_80+, shuffles below) but every path computes the
// same result, so the output does not depend on which image is chosen.
#include "common.h"

__device__ __host__ unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

__global__ void hash_kernel(unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = hash32((unsigned)i);
}

// n must be a multiple of 32 (whole warps).
__global__ void warp_sums(const unsigned* in, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = in[i] & 0xffffu;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned s = __reduce_add_sync(0xffffffffu, v);
#else
  unsigned s = v;
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
#endif
  if ((threadIdx.x & 31) == 0) out[i / 32] = s;
}

int main() {
  const int n = 8192, nw = n / 32;
  printf("multi_arch: n=%d\n", n);
  unsigned *dh, *dw;
  CHECK(cudaMalloc(&dh, n * sizeof(unsigned)));
  CHECK(cudaMalloc(&dw, nw * sizeof(unsigned)));
  hash_kernel<<<n / 256, 256>>>(dh, n);
  CHECK_LAUNCH();
  warp_sums<<<n / 256, 256>>>(dh, dw, n);
  CHECK_LAUNCH();
  unsigned* h = new unsigned[n];
  unsigned* w = new unsigned[nw];
  CHECK(cudaMemcpy(h, dh, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(w, dw, nw * sizeof(unsigned), cudaMemcpyDeviceToHost));
  unsigned long long hsum = 0, wsum = 0;
  for (int i = 0; i < n; i++) {
    if (h[i] != hash32((unsigned)i)) FAIL("hash[%d] = %u, expected %u", i, h[i], hash32((unsigned)i));
    hsum += h[i];
  }
  for (int k = 0; k < nw; k++) {
    unsigned want = 0;
    for (int j = 0; j < 32; j++) want += hash32((unsigned)(k * 32 + j)) & 0xffffu;
    if (w[k] != want) FAIL("warp sum %d = %u, expected %u", k, w[k], want);
    wsum += w[k];
  }
  printf("hash checksum %llu, warp sums checksum %llu\n", hsum, wsum);
  CHECK(cudaFree(dh));
  CHECK(cudaFree(dw));
  delete[] h;
  delete[] w;
  printf("PASSED\n");
  return 0;
}

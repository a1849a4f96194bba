// two_units, second translation unit: its own kernels, a __constant__ table
// and a kernel with the same names as main.cu's (both have internal linkage),
// and host wrappers that launch them.
#include "common.h"
#include "two_units.h"

static __constant__ int kFactor[4] = {2, 3, 5, 7};

static __global__ void transform(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] * kFactor[i % 4];
}

__global__ void second_only(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] -= 1;
}

void run_second(int* d, int n) {
  transform<<<(n + 127) / 128, 128>>>(d, n);
  CHECK_LAUNCH();
  second_only<<<(n + 127) / 128, 128>>>(d, n);
  CHECK_LAUNCH();
}

int second_factor_sum() {
  int h[4];
  CHECK(cudaMemcpyFromSymbol(h, kFactor, sizeof(h)));
  return h[0] + h[1] + h[2] + h[3];
}

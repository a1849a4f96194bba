// lud (CUDA side): LU decomposition, one kernel launch per elimination step
// k over n threads, one row per thread: thread i > k computes its multiplier
// l = a[i][k] / a[k][k] and updates the trailing part of its row; threads
// i <= k are masked off (a triangle of idle lanes that grows with k). Rows
// are n floats apart, so the warp's accesses to its rows do not coalesce.
// CPU side: lud.c.
#include "lud.h"

__global__ void lud_step(float *a, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > k && i < n) {
    float l = a[i * n + k] / a[k * n + k];
    a[i * n + k] = l;
    for (int j = k + 1; j < n; j++) a[i * n + j] -= l * a[k * n + j];
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 128);
  const int block = 128;
  float *init = (float *)malloc(n * n * sizeof(float)), *result = (float *)malloc(n * n * sizeof(float));
  lud_inputs(init, n);
  float *da;
  CHECK(cudaMalloc(&da, n * n * sizeof(float)));
  CHECK(cudaMemcpy(da, init, n * n * sizeof(float), cudaMemcpyHostToDevice));
  int launches = 0;
  for (int k = 0; k < n - 1; k++) {
    lud_step<<<(n + block - 1) / block, block>>>(da, n, k);
    CHECK_LAUNCH();
    launches++;
  }
  CHECK(cudaMemcpy(result, da, n * n * sizeof(float), cudaMemcpyDeviceToHost));
  return lud_report(init, result, n, launches);
}

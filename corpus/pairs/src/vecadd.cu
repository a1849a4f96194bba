// vecadd (CUDA side): c[i] = a[i] + b[i], one element per thread, coalesced.
// CPU side: vecadd.c (vadd_step: one loop iteration per CUDA thread).
#include "pairs.h"

__global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 65536);
  const int block = 256;
  float *a = (float *)malloc(n * sizeof(float));
  float *b = (float *)malloc(n * sizeof(float));
  float *c = (float *)malloc(n * sizeof(float));
  lcg_t g = lcg_seed(1);
  for (int i = 0; i < n; i++) a[i] = lcg_unit(&g);
  for (int i = 0; i < n; i++) b[i] = lcg_unit(&g);

  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CHECK(cudaMemcpy(da, a, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, n * sizeof(float), cudaMemcpyHostToDevice));
  vadd<<<(n + block - 1) / block, block>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(c, dc, n * sizeof(float), cudaMemcpyDeviceToHost));

  double sum = 0;
  for (int i = 0; i < n; i++) {
    if (c[i] != a[i] + b[i]) FAIL("c[%d] = %g, expected %g", i, c[i], a[i] + b[i]);
    sum += c[i];
  }
  printf("vecadd n=%d\nchecksum %.6f\nPASSED\n", n, sum);
  return 0;
}

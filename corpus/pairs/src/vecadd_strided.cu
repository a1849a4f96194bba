// vecadd_strided (CUDA side): thread i adds element i*s (s from argv[2]):
// c[i*s] = a[i*s] + b[i*s]. With 4-byte floats a warp touches 32 elements
// s*4 bytes apart. CPU side: vecadd_strided.c.
#include "pairs.h"

__global__ void vadd_strided(const float *a, const float *b, float *c, int n, int s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int j = i * s;
    c[j] = a[j] + b[j];
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 16384);
  const int s = arg_int(argc, argv, 2, 4);
  const int len = n * s, block = 256;
  float *a = (float *)malloc(len * sizeof(float));
  float *b = (float *)malloc(len * sizeof(float));
  float *c = (float *)malloc(len * sizeof(float));
  lcg_t g = lcg_seed(2);
  for (int i = 0; i < len; i++) a[i] = lcg_unit(&g);
  for (int i = 0; i < len; i++) b[i] = lcg_unit(&g);
  for (int i = 0; i < len; i++) c[i] = 0.0f;

  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, len * sizeof(float)));
  CHECK(cudaMalloc(&db, len * sizeof(float)));
  CHECK(cudaMalloc(&dc, len * sizeof(float)));
  CHECK(cudaMemcpy(da, a, len * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, len * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, c, len * sizeof(float), cudaMemcpyHostToDevice));
  vadd_strided<<<(n + block - 1) / block, block>>>(da, db, dc, n, s);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(c, dc, len * sizeof(float), cudaMemcpyDeviceToHost));

  double sum = 0;
  for (int j = 0; j < len; j++) {
    float want = j % s == 0 ? a[j] + b[j] : 0.0f;
    if (c[j] != want) FAIL("c[%d] = %g, expected %g", j, c[j], want);
    sum += c[j];
  }
  printf("vecadd_strided n=%d stride=%d\nchecksum %.6f\nPASSED\n", n, s, sum);
  return 0;
}

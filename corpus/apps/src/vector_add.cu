// vector_add: the basic runtime path. cudaMalloc, cudaMemcpy H2D/D2H/D2D,
// cudaMemset, a grid-stride kernel, cudaDeviceSynchronize,
// cudaGetDeviceProperties (stable facts only) and cudaMemGetInfo.
// Also built as vector_add_nocompress, vector_add_lz4 and vector_add_sass_only
// (same source, different fatbinary flags; see build.sh).
#include "common.h"

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}

int main() {
  const int n = 50000;
  const size_t bytes = n * sizeof(float);
  printf("vector_add: n=%d\n", n);

  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 1) FAIL("cudaGetDeviceCount gave %d", count);
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("warpSize %d\n", prop.warpSize);
  if (prop.maxThreadsPerBlock < 256) FAIL("maxThreadsPerBlock %d < 256", prop.maxThreadsPerBlock);

  size_t free_b = 0, total_b = 0;
  CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (total_b == 0 || free_b > total_b) FAIL("cudaMemGetInfo: free > total or total == 0");
  printf("cudaMemGetInfo: free <= total\n");

  float* ha = (float*)malloc(bytes);
  float* hb = (float*)malloc(bytes);
  float* hc = (float*)malloc(bytes);
  for (int i = 0; i < n; i++) {
    ha[i] = (float)i;
    hb[i] = (float)(2 * i);
  }

  float *da, *db, *dc, *dd;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMalloc(&dd, bytes));

  // cudaMemset: every byte 0xAB, then read back.
  CHECK(cudaMemset(dc, 0xAB, bytes));
  unsigned char* raw = (unsigned char*)hc;
  CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < bytes; i++)
    if (raw[i] != 0xAB) FAIL("memset byte %zu = 0x%02x, expected 0xab", i, raw[i]);
  CHECK(cudaMemset(dc, 0, bytes));
  printf("cudaMemset ok\n");

  CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));

  const int block = 256, grid = 64;  // 16384 threads: each handles ~3 elements
  vadd<<<grid, block>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hc[i] != (float)(3 * i)) FAIL("c[%d] = %f, expected %d", i, hc[i], 3 * i);
  printf("kernel result ok (grid %d x block %d)\n", grid, block);

  // Device-to-device copy, then back; also cudaMemcpyDefault (unified addressing).
  CHECK(cudaMemcpy(dd, dc, bytes, cudaMemcpyDeviceToDevice));
  for (int i = 0; i < n; i++) hc[i] = -1.0f;
  CHECK(cudaMemcpy(hc, dd, bytes, cudaMemcpyDefault));
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    if (hc[i] != (float)(3 * i)) FAIL("d2d c[%d] = %f, expected %d", i, hc[i], 3 * i);
    sum += (long long)hc[i];
  }
  printf("device-to-device copy ok\n");
  printf("checksum %lld\n", sum);

  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dd));
  free(ha);
  free(hb);
  free(hc);
  printf("PASSED\n");
  return 0;
}

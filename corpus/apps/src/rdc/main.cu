// rdc: relocatable device code (-rdc=true) across three units. util.cu
// defines `__device__ int combine(int, int)` and the __device__ variables
// g_bias / g_calls; kernels.cu and main.cu call combine() from their kernels
// and reach the variables through extern declarations, from the device and
// from the host (cudaMemcpyToSymbol / cudaMemcpyFromSymbol).
#include "common.h"
#include "rdc.h"

__global__ void bias_kernel(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = combine(i, -i) - g_bias;  // 3i - i + bias - bias = 2i
}

int main() {
  const int n = 1000;
  printf("rdc: n=%d\n", n);
  int bias = 0;
  CHECK(cudaMemcpyFromSymbol(&bias, g_bias, sizeof(int)));
  printf("initial g_bias %d\n", bias);

  int ha[n], hb[n], hout[n];
  for (int i = 0; i < n; i++) {
    ha[i] = i % 50;
    hb[i] = -(i % 7);
  }
  int *da, *db, *dout;
  CHECK(cudaMalloc(&da, sizeof(ha)));
  CHECK(cudaMalloc(&db, sizeof(hb)));
  CHECK(cudaMalloc(&dout, sizeof(hout)));
  CHECK(cudaMemcpy(da, ha, sizeof(ha), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, sizeof(hb), cudaMemcpyHostToDevice));
  launch_combine(da, db, dout, n);
  CHECK(cudaMemcpy(hout, dout, sizeof(hout), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    int want = ha[i] * 3 + hb[i] + 7;
    if (hout[i] != want) FAIL("combine_kernel out[%d] = %d, expected %d", i, hout[i], want);
    sum += hout[i];
  }
  printf("kernels.cu calling util.cu's combine(): checksum %lld\n", sum);

  bias = -4;
  CHECK(cudaMemcpyToSymbol(g_bias, &bias, sizeof(int)));
  bias_kernel<<<(n + 127) / 128, 128>>>(dout, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hout, dout, sizeof(hout), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (hout[i] != 2 * i) FAIL("bias_kernel out[%d] = %d, expected %d", i, hout[i], 2 * i);
  printf("main.cu calling util.cu's combine() with g_bias = %d: ok\n", bias);

  launch_read_bias(dout);
  int seen = 0;
  CHECK(cudaMemcpy(&seen, dout, sizeof(int), cudaMemcpyDeviceToHost));
  printf("g_bias as seen from kernels.cu: %d\n", seen);

  unsigned calls = 0;
  CHECK(cudaMemcpyFromSymbol(&calls, g_calls, sizeof(calls)));
  printf("combine() calls counted in util.cu's g_calls: %u\n", calls);
  if (seen != -4 || calls != 2u * n) FAIL("g_bias seen %d (expected -4), calls %u (expected %d)", seen, calls, 2 * n);

  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dout));
  printf("PASSED\n");
  return 0;
}

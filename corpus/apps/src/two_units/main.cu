// two_units: two .cu files compiled separately (whole-program mode, no -rdc)
// and linked into one program: each registers its own fatbinary, kernels and
// __constant__ data. Both units define a kernel `transform` and a
// __constant__ table `kFactor` with internal linkage, which must not be
// confused with each other.
#include "common.h"
#include "two_units.h"

namespace {
__constant__ int kFactor[4] = {1, -1, 10, -10};

__global__ void transform(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = d[i] + kFactor[i % 4];
}
}  // namespace

__global__ void main_only(int* d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = 2 * d[i];
}

int main() {
  const int n = 1000;
  printf("two_units: n=%d\n", n);
  int h[n];
  for (int i = 0; i < n; i++) h[i] = i;
  int* d;
  CHECK(cudaMalloc(&d, sizeof(h)));
  CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  transform<<<(n + 127) / 128, 128>>>(d, n);  // main.cu's: add
  CHECK_LAUNCH();
  run_second(d, n);                            // second.cu's: multiply, then -1
  main_only<<<(n + 127) / 128, 128>>>(d, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
  const int add[4] = {1, -1, 10, -10}, mul[4] = {2, 3, 5, 7};
  long long sum = 0;
  for (int i = 0; i < n; i++) {
    int want = 2 * ((i + add[i % 4]) * mul[i % 4] - 1);
    if (h[i] != want) FAIL("d[%d] = %d, expected %d", i, h[i], want);
    sum += h[i];
  }
  int mine[4];
  CHECK(cudaMemcpyFromSymbol(mine, kFactor, sizeof(mine)));
  printf("kFactor sums: main.cu %d, second.cu %d\n", mine[0] + mine[1] + mine[2] + mine[3], second_factor_sum());
  printf("d[0..3] = %d %d %d %d, checksum %lld\n", h[0], h[1], h[2], h[3], sum);
  CHECK(cudaFree(d));
  printf("PASSED\n");
  return 0;
}

// legacy: device-management and deprecated-but-present calls that older
// programs and test suites make: cudaSetDeviceFlags / cudaGetDeviceFlags,
// cudaDeviceSetCacheConfig / cudaFuncSetCacheConfig, cudaDeviceSetLimit /
// cudaDeviceGetLimit, cudaFuncSetAttribute, cudaGetDeviceCount,
// cudaDriverGetVersion / cudaRuntimeGetVersion, cudaFuncGetAttributes,
// cudaOccupancyMaxPotentialBlockSize, cudaOccupancyMaxActiveBlocksPerMultiprocessor,
// cudaChooseDevice, cudaDeviceGetAttribute, cudaProfilerStart / Stop and
// cudaDeviceReset followed by more work.
//
// cudaThreadSynchronize and cudaThreadExit were removed in CUDA 13: neither
// the headers nor libcudart.so.13 have them, so this program uses their
// replacements (cudaDeviceSynchronize, cudaDeviceReset) at the same places.
#include "common.h"
#include <cstring>
// cudaDeviceSetSharedMemConfig is deprecated; calling it is the point here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#if __has_include(<cuda_profiler_api.h>)
#include <cuda_profiler_api.h>
#else
// The PyPI CUDA wheels do not ship cuda_profiler_api.h; libcudart.so.13
// exports both functions.
extern "C" __host__ cudaError_t CUDARTAPI cudaProfilerStart(void);
extern "C" __host__ cudaError_t CUDARTAPI cudaProfilerStop(void);
#endif

const int kBlock = 256;

__global__ void block_sum(const float* in, float* out) {
  __shared__ float buf[kBlock];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * kBlock + t];
  __syncthreads();
  for (int s = kBlock / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

__global__ void scale(float* d, int n, float f) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) d[i] *= f;
}

// Runs block_sum over nb blocks of 1..256-valued inputs and checks the sums.
static void run_block_sum(const char* when, int nb) {
  const int n = nb * kBlock;
  float* h = new float[n];
  float* sums = new float[nb];
  for (int i = 0; i < n; i++) h[i] = (float)(i % kBlock + 1);
  float *din, *dout;
  CHECK(cudaMalloc(&din, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, nb * sizeof(float)));
  CHECK(cudaMemcpy(din, h, n * sizeof(float), cudaMemcpyHostToDevice));
  block_sum<<<nb, kBlock>>>(din, dout);
  CHECK_LAUNCH();
  CHECK(cudaDeviceSynchronize());  // was cudaThreadSynchronize()
  CHECK(cudaMemcpy(sums, dout, nb * sizeof(float), cudaMemcpyDeviceToHost));
  for (int b = 0; b < nb; b++)
    if (sums[b] != 32896.0f) FAIL("%s: block %d sum %f, expected 32896", when, b, sums[b]);
  printf("%s: %d block sums of 1..256 = %.0f\n", when, nb, sums[0]);
  CHECK(cudaFree(din));
  CHECK(cudaFree(dout));
  delete[] h;
  delete[] sums;
}

int main() {
  printf("legacy\n");
  // Before anything else initialises the device.
  CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));

  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  if (count < 1) FAIL("cudaGetDeviceCount gave %d", count);
  printf("cudaGetDeviceCount >= 1\n");
  int drv = 0, rt = 0;
  CHECK(cudaDriverGetVersion(&drv));
  CHECK(cudaRuntimeGetVersion(&rt));
  if (drv <= 0 || rt <= 0) FAIL("versions: driver %d, runtime %d", drv, rt);
  printf("cudaDriverGetVersion / cudaRuntimeGetVersion > 0\n");

  unsigned flags = 0;
  CHECK(cudaGetDeviceFlags(&flags));
  if ((flags & cudaDeviceScheduleMask) != cudaDeviceScheduleBlockingSync)
    FAIL("cudaGetDeviceFlags: 0x%x lacks cudaDeviceScheduleBlockingSync", flags);
  printf("cudaGetDeviceFlags: cudaDeviceScheduleBlockingSync\n");

  CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  cudaFuncCache cache;
  CHECK(cudaDeviceGetCacheConfig(&cache));
  CHECK(cudaFuncSetCacheConfig(block_sum, cudaFuncCachePreferL1));
  CHECK(cudaFuncSetCacheConfig(scale, cudaFuncCachePreferEqual));
  CHECK(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeFourByte));
  printf("cache configuration calls ok\n");
  CHECK(cudaFuncSetAttribute(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 8192));
  CHECK(cudaFuncSetAttribute(scale, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
  printf("cudaFuncSetAttribute ok\n");

  CHECK(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20));
  size_t lim = 0;
  CHECK(cudaDeviceGetLimit(&lim, cudaLimitPrintfFifoSize));
  if (lim < (1 << 20)) FAIL("printf FIFO limit %zu < %d", lim, 1 << 20);
  CHECK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
  if (lim == 0) FAIL("stack size limit 0");
  printf("cudaDeviceSetLimit / cudaDeviceGetLimit ok\n");

  int warp = 0, maxtpb = 0;
  CHECK(cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0));
  CHECK(cudaDeviceGetAttribute(&maxtpb, cudaDevAttrMaxThreadsPerBlock, 0));
  printf("cudaDevAttrWarpSize %d\n", warp);
  if (maxtpb < kBlock) FAIL("cudaDevAttrMaxThreadsPerBlock %d < %d", maxtpb, kBlock);

  cudaDeviceProp want;
  memset(&want, 0, sizeof(want));
  want.major = 7;
  want.minor = 5;
  int chosen = -1;
  CHECK(cudaChooseDevice(&chosen, &want));
  printf("cudaChooseDevice: %d\n", chosen);

  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, block_sum));
  if (fa.maxThreadsPerBlock < kBlock) FAIL("block_sum maxThreadsPerBlock %d < %d", fa.maxThreadsPerBlock, kBlock);
  printf("cudaFuncGetAttributes(block_sum): maxThreadsPerBlock >= %d, sharedSizeBytes %zu\n", kBlock, fa.sharedSizeBytes);

  int min_grid = 0, best_block = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &best_block, scale, 0, 0));
  if (min_grid < 1 || best_block < 32 || best_block > 1024 || best_block % 32 != 0)
    FAIL("cudaOccupancyMaxPotentialBlockSize: grid %d, block %d", min_grid, best_block);
  int active = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&active, block_sum, kBlock, 0));
  if (active < 1) FAIL("cudaOccupancyMaxActiveBlocksPerMultiprocessor gave %d", active);
  printf("occupancy queries ok\n");

  // A launch shaped by the occupancy calculator.
  const int n = 5000;
  float* h = new float[n];
  for (int i = 0; i < n; i++) h[i] = (float)i;
  float* d;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaProfilerStart());
  scale<<<(n + best_block - 1) / best_block, best_block>>>(d, n, 3.0f);
  CHECK_LAUNCH();
  CHECK(cudaProfilerStop());
  CHECK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (h[i] != 3.0f * i) FAIL("scale[%d] = %f, expected %f", i, h[i], 3.0f * i);
  printf("occupancy-sized launch between cudaProfilerStart/Stop ok\n");
  CHECK(cudaFree(d));
  delete[] h;

  run_block_sum("before cudaDeviceReset", 4);
  float* leak;
  CHECK(cudaMalloc(&leak, 1024));  // freed by the reset
  CHECK(cudaDeviceReset());
  printf("cudaDeviceReset ok\n");
  run_block_sum("after cudaDeviceReset", 3);

  CHECK(cudaDeviceReset());  // was cudaThreadExit()
  printf("PASSED\n");
  return 0;
}

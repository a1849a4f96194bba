// grid_sync: grid-wide synchronization in cooperative launches
// (cooperative_groups::this_grid().sync(), cudaLaunchCooperativeKernel and
// cudaLaunchKernelEx with cudaLaunchAttributeCooperative).
//
// A three-phase reduction in one kernel: each block sums a slice into
// partial[blockIdx.x], the grid synchronizes, block 0 sums the partials into
// *total, the grid synchronizes again, then every thread scales its elements
// by the total. The grid is sized from the occupancy API, as CUDA's samples
// do; a grid one block larger must fail with cudaErrorCooperativeLaunchTooLarge
// and run nothing.
#include <cooperative_groups.h>
#include "common.h"

namespace cg = cooperative_groups;

constexpr int BLOCK = 128;

__global__ void reduce_scale(const int *in, int *partial, int *total, int *out, int n, int rounds) {
  cg::grid_group grid = cg::this_grid();
  __shared__ int sums[BLOCK];
  for (int r = 0; r < rounds; ++r) {
    int s = 0;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) s += in[i] + r;
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k /= 2) {
      if (threadIdx.x < k) sums[threadIdx.x] += sums[threadIdx.x + k];
      __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      int t = 0;
      for (int b = 0; b < gridDim.x; ++b) t += partial[b];
      total[r] = t;
    }
    grid.sync();
    for (size_t i = grid.thread_rank(); i < (size_t)n; i += grid.size()) out[i] = in[i] * (total[r] % 7);
    grid.sync();
  }
}

int main() {
  int dev = 0, coop = 0, sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (!coop) FAIL("the device reports no cooperative launch");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, dev));
  if (!prop.cooperativeLaunch) FAIL("cudaDeviceProp.cooperativeLaunch is 0");
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_scale, BLOCK, 0));
  if (per_sm < 1) FAIL("occupancy %d", per_sm);
  int max_blocks = per_sm * sms;
  // A few blocks more than one per worker, at most what can be resident.
  int blocks = max_blocks < 6 ? max_blocks : 6;

  const int n = 5000, rounds = 3;
  int *h_in = new int[n], *h_out = new int[n];
  Lcg lcg(7);
  for (int i = 0; i < n; ++i) h_in[i] = (int)lcg.below(100);
  int *in, *partial, *total, *out;
  CHECK(cudaMalloc(&in, n * sizeof(int)));
  CHECK(cudaMalloc(&partial, max_blocks * sizeof(int) + sizeof(int)));
  CHECK(cudaMalloc(&total, rounds * sizeof(int)));
  CHECK(cudaMalloc(&out, n * sizeof(int)));
  CHECK(cudaMemcpy(in, h_in, n * sizeof(int), cudaMemcpyHostToDevice));
  int n_ = n, rounds_ = rounds;
  void *args[] = {&in, &partial, &total, &out, &n_, &rounds_};

  // cudaLaunchCooperativeKernel.
  CHECK(cudaMemset(out, 0, n * sizeof(int)));
  CHECK(cudaLaunchCooperativeKernel((void *)reduce_scale, blocks, BLOCK, args, 0, 0));
  CHECK(cudaDeviceSynchronize());
  int h_total[rounds];
  CHECK(cudaMemcpy(h_total, total, sizeof h_total, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(h_out, out, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += h_in[i];
  for (int r = 0; r < rounds; ++r) {
    long long want = sum + (long long)r * n;
    if (h_total[r] != want) FAIL("round %d: total %d, expected %lld", r, h_total[r], want);
    printf("round %d: total %d\n", r, h_total[r]);
  }
  for (int i = 0; i < n; ++i)
    if (h_out[i] != h_in[i] * (h_total[rounds - 1] % 7)) FAIL("out[%d] = %d", i, h_out[i]);
  printf("cudaLaunchCooperativeKernel: ok\n");

  // cudaLaunchKernelEx with the cooperative attribute, with the largest grid that fits.
  CHECK(cudaMemset(total, 0, rounds * sizeof(int)));
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(max_blocks);
  config.blockDim = dim3(BLOCK);
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, reduce_scale, (const int *)in, partial, total, out, n_, rounds_));
  CHECK(cudaDeviceSynchronize());
  int again[rounds];
  CHECK(cudaMemcpy(again, total, sizeof again, cudaMemcpyDeviceToHost));
  for (int r = 0; r < rounds; ++r)
    if (again[r] != h_total[r]) FAIL("cudaLaunchKernelEx round %d: total %d, expected %d", r, again[r], h_total[r]);
  printf("cudaLaunchKernelEx (cooperative, the largest grid): ok\n");

  // One block more than can be resident: refused before anything runs.
  CHECK(cudaMemset(total, 0, rounds * sizeof(int)));
  EXPECT_ERR(cudaLaunchCooperativeKernel((void *)reduce_scale, max_blocks + 1, BLOCK, args, 0, 0),
             cudaErrorCooperativeLaunchTooLarge);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(again, total, sizeof again, cudaMemcpyDeviceToHost));
  if (again[0] != 0) FAIL("a refused launch ran");
  printf("too large: %s\n", cudaGetErrorName(cudaErrorCooperativeLaunchTooLarge));
  printf("PASSED\n");
  CHECK(cudaFree(in));
  CHECK(cudaFree(partial));
  CHECK(cudaFree(total));
  CHECK(cudaFree(out));
  delete[] h_in;
  delete[] h_out;
  return 0;
}

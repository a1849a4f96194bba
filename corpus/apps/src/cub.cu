// cub: CUB device-wide primitives with the two-phase temp-storage pattern
// (query the size with a null buffer, cudaMalloc it, run):
// DeviceRadixSort::SortKeys / SortPairs (with a bit range), DeviceReduce::Sum
// / Max, DeviceScan::ExclusiveSum; and a kernel using the block- and
// warp-level collectives cub::BlockReduce, cub::BlockScan and cub::WarpReduce.
#include "common.h"
#include <cub/cub.cuh>
#include <algorithm>
#include <numeric>
#include <vector>

const int kBlock = 128;

// Per block: the block sum (BlockReduce), every thread's exclusive prefix
// within the block (BlockScan), and per warp the warp sum (WarpReduce).
__global__ void block_collectives(const int* in, int* block_sums, int* prefix, int* warp_sums, int n) {
  typedef cub::BlockReduce<int, kBlock> BlockReduce;
  typedef cub::BlockScan<int, kBlock> BlockScan;
  typedef cub::WarpReduce<int> WarpReduce;
  __shared__ typename BlockReduce::TempStorage reduce_storage;
  __shared__ typename BlockScan::TempStorage scan_storage;
  __shared__ typename WarpReduce::TempStorage warp_storage[kBlock / 32];

  int i = blockIdx.x * kBlock + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int total = BlockReduce(reduce_storage).Sum(v);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;

  int excl;
  BlockScan(scan_storage).ExclusiveSum(v, excl);
  if (i < n) prefix[i] = excl;

  int warp = threadIdx.x / 32;
  int wsum = WarpReduce(warp_storage[warp]).Sum(v);
  if (threadIdx.x % 32 == 0) warp_sums[blockIdx.x * (kBlock / 32) + warp] = wsum;
}

template <typename T>
static void expect_equal(const char* what, const T* dptr, const std::vector<T>& ref) {
  std::vector<T> h(ref.size());
  CHECK(cudaMemcpy(h.data(), dptr, ref.size() * sizeof(T), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < ref.size(); i++)
    if (h[i] != ref[i]) FAIL("%s: [%zu] = %lld, expected %lld", what, i, (long long)h[i], (long long)ref[i]);
}

int main() {
  const int n = 10000;
  printf("cub: n=%d\n", n);
  Lcg rng(777);
  std::vector<int> keys(n), small(n), vals(n);
  for (int i = 0; i < n; i++) {
    keys[i] = (int)rng.next();  // full 32-bit range, negative keys included
    small[i] = (int)rng.below(65536);
    vals[i] = i;
  }
  int *dkeys, *dkeys_out, *dsmall, *dsmall_out, *dvals, *dvals_out;
  CHECK(cudaMalloc(&dkeys, n * sizeof(int)));
  CHECK(cudaMalloc(&dkeys_out, n * sizeof(int)));
  CHECK(cudaMalloc(&dsmall, n * sizeof(int)));
  CHECK(cudaMalloc(&dsmall_out, n * sizeof(int)));
  CHECK(cudaMalloc(&dvals, n * sizeof(int)));
  CHECK(cudaMalloc(&dvals_out, n * sizeof(int)));
  CHECK(cudaMemcpy(dkeys, keys.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dsmall, small.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dvals, vals.data(), n * sizeof(int), cudaMemcpyHostToDevice));

  // ---- DeviceRadixSort::SortKeys ----
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, dkeys, dkeys_out, n));
  if (temp_bytes == 0) FAIL("SortKeys asked for no temporary storage");
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, dkeys, dkeys_out, n));
  CHECK(cudaFree(temp));
  std::vector<int> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  expect_equal("SortKeys", dkeys_out, sorted);
  printf("DeviceRadixSort::SortKeys: min %d, max %d\n", sorted[0], sorted[n - 1]);

  // ---- DeviceRadixSort::SortPairs on the low 16 bits (stable) ----
  temp = nullptr;
  temp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, dsmall, dsmall_out, dvals, dvals_out, n, 0, 16));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, dsmall, dsmall_out, dvals, dvals_out, n, 0, 16));
  CHECK(cudaFree(temp));
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return small[a] < small[b]; });
  std::vector<int> small_sorted(n);
  for (int i = 0; i < n; i++) small_sorted[i] = small[order[i]];
  expect_equal("SortPairs keys", dsmall_out, small_sorted);
  expect_equal("SortPairs values", dvals_out, order);
  unsigned long long ck = 0;
  for (int i = 0; i < n; i++) ck += (unsigned long long)(i + 1) * (unsigned)order[i];
  printf("DeviceRadixSort::SortPairs (bits 0..16): values checksum %llu\n", ck);

  // ---- DeviceReduce::Sum / Max ----
  int* dres;
  CHECK(cudaMalloc(&dres, sizeof(int)));
  temp = nullptr;
  temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, dsmall, dres, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, dsmall, dres, n));
  CHECK(cudaFree(temp));
  int gsum = 0;
  CHECK(cudaMemcpy(&gsum, dres, sizeof(int), cudaMemcpyDeviceToHost));
  long long hsum = std::accumulate(small.begin(), small.end(), 0LL);  // < 2^31
  if (gsum != hsum) FAIL("DeviceReduce::Sum = %d, expected %lld", gsum, hsum);
  temp = nullptr;
  temp_bytes = 0;
  CHECK(cub::DeviceReduce::Max(temp, temp_bytes, dkeys, dres, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceReduce::Max(temp, temp_bytes, dkeys, dres, n));
  CHECK(cudaFree(temp));
  int gmax = 0;
  CHECK(cudaMemcpy(&gmax, dres, sizeof(int), cudaMemcpyDeviceToHost));
  if (gmax != sorted[n - 1]) FAIL("DeviceReduce::Max = %d, expected %d", gmax, sorted[n - 1]);
  printf("DeviceReduce::Sum %lld, DeviceReduce::Max %d\n", hsum, gmax);

  // ---- DeviceScan::ExclusiveSum ----
  int* dscan;
  CHECK(cudaMalloc(&dscan, n * sizeof(int)));
  temp = nullptr;
  temp_bytes = 0;
  CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, dsmall, dscan, n));
  CHECK(cudaMalloc(&temp, temp_bytes));
  CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, dsmall, dscan, n));
  CHECK(cudaFree(temp));
  std::vector<int> excl(n);
  int acc = 0;
  for (int i = 0; i < n; i++) {
    excl[i] = acc;
    acc += small[i];
  }
  expect_equal("ExclusiveSum", dscan, excl);
  printf("DeviceScan::ExclusiveSum: last %d\n", excl[n - 1]);

  // ---- block- and warp-level collectives ----
  const int nb = (n + kBlock - 1) / kBlock, nw = nb * (kBlock / 32);
  std::vector<int> in(n);
  for (int i = 0; i < n; i++) in[i] = small[i] % 1000 - 500;
  int *din, *dbsum, *dprefix, *dwsum;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMalloc(&dbsum, nb * sizeof(int)));
  CHECK(cudaMalloc(&dprefix, n * sizeof(int)));
  CHECK(cudaMalloc(&dwsum, nw * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  block_collectives<<<nb, kBlock>>>(din, dbsum, dprefix, dwsum, n);
  CHECK_LAUNCH();
  std::vector<int> bsum(nb, 0), prefix(n), wsum(nw, 0);
  for (int i = 0; i < n; i++) {
    int b = i / kBlock;
    prefix[i] = bsum[b];
    bsum[b] += in[i];
    wsum[i / 32] += in[i];
  }
  expect_equal("BlockReduce sums", dbsum, bsum);
  expect_equal("BlockScan prefixes", dprefix, prefix);
  expect_equal("WarpReduce sums", dwsum, wsum);
  long long total = 0;
  for (int b = 0; b < nb; b++) total += bsum[b];
  printf("BlockReduce/BlockScan/WarpReduce: %d blocks, %d warps, total %lld\n", nb, nw, total);

  CHECK(cudaFree(dkeys));
  CHECK(cudaFree(dkeys_out));
  CHECK(cudaFree(dsmall));
  CHECK(cudaFree(dsmall_out));
  CHECK(cudaFree(dvals));
  CHECK(cudaFree(dvals_out));
  CHECK(cudaFree(dres));
  CHECK(cudaFree(dscan));
  CHECK(cudaFree(din));
  CHECK(cudaFree(dbsum));
  CHECK(cudaFree(dprefix));
  CHECK(cudaFree(dwsum));
  printf("PASSED\n");
  return 0;
}

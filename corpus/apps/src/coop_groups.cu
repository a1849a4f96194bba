// coop_groups: cooperative groups inside a block (no grid-wide sync):
// this_thread_block + block.sync(), tiled_partition<32> and <8> with
// shfl_down, cg::reduce and cg::inclusive_scan on a warp tile, tile ballot /
// any / all, meta_group_rank, a dynamic tiled_partition(block, 16), and
// coalesced_threads() inside a divergent branch.
#include "common.h"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <algorithm>
#include <vector>

namespace cg = cooperative_groups;
const int kBlock = 128;

struct Out {
  int* tile8_sums;    // per 8-thread tile
  int* warp_sums;     // per warp (cg::reduce)
  int* block_sums;    // per block
  int* scan;          // per thread: inclusive scan within its warp
  int* ballot;        // per warp: popcount of ballot(v even), any(v > 45), all(v > -51)
  int* tile16_max;    // per 16-thread dynamic tile
  int* coalesced;     // per thread: rank among the warp's lanes with v % 3 == 0, else -1
};

__global__ void cg_kernel(const int* in, Out out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::thread_block_tile<8> tile8 = cg::tiled_partition<8>(block);
  cg::thread_group tile16 = cg::tiled_partition(block, 16);
  __shared__ int warp_part[kBlock / 32];
  __shared__ int tile16_vals[kBlock];

  int i = block.group_index().x * block.size() + block.thread_rank();
  int v = in[i];

  // First, while the warp is known to be converged (__syncwarp): the lanes
  // taking this branch form the coalesced group.
  __syncwarp();
  if (v % 3 == 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    out.coalesced[i] = (int)active.thread_rank() * 100 + (int)active.size();
  } else {
    out.coalesced[i] = -1;
  }

  int s = v;
  for (int o = tile8.size() / 2; o > 0; o >>= 1) s += tile8.shfl_down(s, o);
  if (tile8.thread_rank() == 0) out.tile8_sums[i / 8] = s;

  int ws = cg::reduce(warp, v, cg::plus<int>());
  if (warp.thread_rank() == 0) {
    out.warp_sums[i / 32] = ws;
    warp_part[warp.meta_group_rank()] = ws;
  }
  out.scan[i] = cg::inclusive_scan(warp, v);

  unsigned even = warp.ballot(v % 2 == 0);
  bool any_big = warp.any(v > 45), all_ok = warp.all(v > -51);
  if (warp.thread_rank() == 0) out.ballot[i / 32] = __popc(even) * 100 + (any_big ? 10 : 0) + (all_ok ? 1 : 0);

  // Dynamic 16-thread tiles: the tile's first thread takes the max via shared memory.
  tile16_vals[block.thread_rank()] = v;
  tile16.sync();
  if (tile16.thread_rank() == 0) {
    int m = v;
    for (unsigned k = 1; k < tile16.size(); k++) m = max(m, tile16_vals[block.thread_rank() + k]);
    out.tile16_max[i / 16] = m;
  }

  block.sync();
  if (block.thread_rank() == 0) {
    int t = 0;
    for (int w = 0; w < kBlock / 32; w++) t += warp_part[w];
    out.block_sums[block.group_index().x] = t;
  }

}

template <typename T>
static void expect(const char* what, const int* d, const std::vector<T>& ref) {
  std::vector<int> h(ref.size());
  CHECK(cudaMemcpy(h.data(), d, ref.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (size_t k = 0; k < ref.size(); k++)
    if (h[k] != ref[k]) FAIL("%s[%zu] = %d, expected %d", what, k, h[k], (int)ref[k]);
}

int main() {
  const int n = 4096, nb = n / kBlock;
  printf("coop_groups: n=%d, %d blocks of %d\n", n, nb, kBlock);
  std::vector<int> in(n);
  for (int i = 0; i < n; i++) in[i] = (i * 37) % 101 - 50;
  int* din;
  CHECK(cudaMalloc(&din, n * sizeof(int)));
  CHECK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  Out o;
  CHECK(cudaMalloc(&o.tile8_sums, n / 8 * sizeof(int)));
  CHECK(cudaMalloc(&o.warp_sums, n / 32 * sizeof(int)));
  CHECK(cudaMalloc(&o.block_sums, nb * sizeof(int)));
  CHECK(cudaMalloc(&o.scan, n * sizeof(int)));
  CHECK(cudaMalloc(&o.ballot, n / 32 * sizeof(int)));
  CHECK(cudaMalloc(&o.tile16_max, n / 16 * sizeof(int)));
  CHECK(cudaMalloc(&o.coalesced, n * sizeof(int)));
  cg_kernel<<<nb, kBlock>>>(din, o);
  CHECK_LAUNCH();

  std::vector<int> t8(n / 8, 0), ws(n / 32, 0), bs(nb, 0), scan(n), bal(n / 32), t16(n / 16, -1000), co(n, -1);
  for (int i = 0; i < n; i++) {
    t8[i / 8] += in[i];
    ws[i / 32] += in[i];
    bs[i / kBlock] += in[i];
    scan[i] = (i % 32 == 0 ? 0 : scan[i - 1]) + in[i];
    t16[i / 16] = std::max(t16[i / 16], in[i]);
  }
  long long coalesced_total = 0;
  for (int w = 0; w < n / 32; w++) {
    int even = 0, any_big = 0, all_ok = 1, active = 0;
    for (int l = 0; l < 32; l++) {
      int v = in[w * 32 + l];
      even += v % 2 == 0;
      any_big |= v > 45;
      all_ok &= v > -51;
      active += v % 3 == 0;
    }
    bal[w] = even * 100 + (any_big ? 10 : 0) + all_ok;
    int rank = 0;
    for (int l = 0; l < 32; l++)
      if (in[w * 32 + l] % 3 == 0) {
        co[w * 32 + l] = rank * 100 + active;
        rank++;
      }
    coalesced_total += active;
  }
  expect("tile8 sums", o.tile8_sums, t8);
  expect("warp sums (cg::reduce)", o.warp_sums, ws);
  expect("block sums", o.block_sums, bs);
  expect("warp inclusive_scan", o.scan, scan);
  expect("ballot/any/all", o.ballot, bal);
  expect("dynamic tile16 max", o.tile16_max, t16);
  expect("coalesced_threads rank/size", o.coalesced, co);
  long long total = 0;
  for (int b = 0; b < nb; b++) total += bs[b];
  printf("block sums total %lld, first block %d, first warp %d, first tile8 %d\n", total, bs[0], ws[0], t8[0]);
  printf("warp 0: scan end %d, ballot/any/all code %d, tile16 max %d\n", scan[31], bal[0], t16[0]);
  printf("coalesced groups: %lld active lanes in total\n", coalesced_total);
  CHECK(cudaFree(din));
  CHECK(cudaFree(o.tile8_sums));
  CHECK(cudaFree(o.warp_sums));
  CHECK(cudaFree(o.block_sums));
  CHECK(cudaFree(o.scan));
  CHECK(cudaFree(o.ballot));
  CHECK(cudaFree(o.tile16_max));
  CHECK(cudaFree(o.coalesced));
  printf("PASSED\n");
  return 0;
}

// TMA (Hopper's tensor memory accelerator) through libcu++ and the driver API:
// cuTensorMapEncodeTiled, reached with cudaGetDriverEntryPointByVersion, describes
// a 100 x 70 float tensor with padded rows; each block loads a 32 x 16 box with
// cp.async.bulk.tensor completing on a cuda::barrier, once through a plain map
// and once through a 128-byte-swizzled one (un-swizzled here by the documented
// pattern), with boxes shifted so that they cross the top and left edges and
// run past the right and bottom ones (out-of-bounds elements read as zero).
// A second kernel stores swizzled boxes back, from the origin on: out-of-bounds
// elements and the row padding are not written. A GPU (H200, CUDA 13) faults
// with an illegal instruction on a box whose innermost start is not 16-byte
// aligned (hence OX = -4 floats) and on a store box starting before the
// tensor. Invalid encodings return CUDA_ERROR_INVALID_VALUE. The host checks
// everything against its own model.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/barrier>
#include <utility>
#include "common.h"

namespace cde = cuda::device::experimental;
using barrier = cuda::barrier<cuda::thread_scope_block>;

constexpr int W = 100, H = 70, PITCH = 112;  // elements; rows padded to 448 bytes
constexpr int BW = 32, BH = 16, OX = -4, OY = -3;  // load boxes' origin
constexpr int SX = 0, SY = 0;                       // store boxes' origin
constexpr int TX = (W - OX + BW - 1) / BW, TY = (H - OY + BH - 1) / BH;
constexpr int BOX = BW * BH;

// Byte offset of box byte `o` under the 128-byte swizzle: the 16-byte chunk
// index within each 128-byte row is XOR-ed with the row index modulo 8.
__host__ __device__ inline int swizzle128(int o) { return o ^ (((o >> 7) & 7) << 4); }

__global__ void load_tiles(const __grid_constant__ CUtensorMap plain,
                           const __grid_constant__ CUtensorMap swz, float* out) {
  __shared__ alignas(1024) float a[BOX];
  __shared__ alignas(1024) float b[BOX];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ barrier bar;
  int x0 = OX + (int)blockIdx.x * BW, y0 = OY + (int)blockIdx.y * BH;
  if (threadIdx.x == 0) {
    init(&bar, blockDim.x);
    cde::fence_proxy_async_shared_cta();
  }
  __syncthreads();
  barrier::arrival_token token;
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_global_to_shared(a, &plain, x0, y0, bar);
    cde::cp_async_bulk_tensor_2d_global_to_shared(b, &swz, x0, y0, bar);
    token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(a) + sizeof(b));
  } else {
    token = bar.arrive();
  }
  bar.wait(std::move(token));
  float* tile = out + (size_t)(blockIdx.y * TX + blockIdx.x) * BOX * 2;
  for (int i = threadIdx.x; i < BOX; i += blockDim.x) {
    tile[2 * i] = a[i];
    tile[2 * i + 1] = *(const float*)((const char*)b + swizzle128(i * 4));
  }
}

__global__ void store_tiles(const __grid_constant__ CUtensorMap swz) {
  __shared__ alignas(1024) float s[BOX];
  int t = blockIdx.y * TX + blockIdx.x;
  for (int i = threadIdx.x; i < BOX; i += blockDim.x)
    *(float*)((char*)s + swizzle128(i * 4)) = (float)(t * 1000 + i);
  cde::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    cde::cp_async_bulk_tensor_2d_shared_to_global(&swz, SX + (int)blockIdx.x * BW, SY + (int)blockIdx.y * BH, s);
    cde::cp_async_bulk_commit_group();
    cde::cp_async_bulk_wait_group_read<0>();
  }
}

static PFN_cuTensorMapEncodeTiled_v12000 encode;

static CUresult make_map(CUtensorMap* map, float* base, CUtensorMapSwizzle swizzle, cuuint32_t box_w) {
  cuuint64_t dims[2] = {W, H};
  cuuint64_t strides[1] = {PITCH * sizeof(float)};
  cuuint32_t box[2] = {box_w, BH};
  cuuint32_t estrides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, estrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

int main() {
  cudaDriverEntryPointQueryResult status;
  void* fn = nullptr;
  CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &status));
  if (status != cudaDriverEntryPointSuccess || fn == nullptr) FAIL("no cuTensorMapEncodeTiled (status %d)", (int)status);
  encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;

  const size_t n = (size_t)PITCH * H;
  float* host = (float*)malloc(n * sizeof(float));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < PITCH; x++) host[y * PITCH + x] = x < W ? (float)(y * 1000 + x) : -7.0f;
  float *tensor, *dst, *out;
  const size_t out_n = (size_t)TX * TY * BOX * 2;
  CHECK(cudaMalloc(&tensor, n * sizeof(float)));
  CHECK(cudaMalloc(&dst, n * sizeof(float)));
  CHECK(cudaMalloc(&out, out_n * sizeof(float)));
  CHECK(cudaMemcpy(tensor, host, n * sizeof(float), cudaMemcpyHostToDevice));

  alignas(64) CUtensorMap plain, swz, swz_dst, bad;
  if (make_map(&plain, tensor, CU_TENSOR_MAP_SWIZZLE_NONE, BW) != CUDA_SUCCESS) FAIL("encode plain");
  if (make_map(&swz, tensor, CU_TENSOR_MAP_SWIZZLE_128B, BW) != CUDA_SUCCESS) FAIL("encode swizzled");
  if (make_map(&swz_dst, dst, CU_TENSOR_MAP_SWIZZLE_128B, BW) != CUDA_SUCCESS) FAIL("encode store map");
  // A 64-element inner box is 256 bytes: wider than the 128-byte swizzle span.
  printf("box wider than the swizzle: %d\n", (int)make_map(&bad, tensor, CU_TENSOR_MAP_SWIZZLE_128B, 64));
  // A 2-element inner box is 8 bytes: not a multiple of 16.
  printf("8-byte inner box: %d\n", (int)make_map(&bad, tensor, CU_TENSOR_MAP_SWIZZLE_NONE, 2));

  load_tiles<<<dim3(TX, TY), 128>>>(plain, swz, out);
  CHECK_LAUNCH();
  float* got = (float*)malloc(out_n * sizeof(float));
  CHECK(cudaMemcpy(got, out, out_n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad_loads = 0, outside = 0;
  double sum = 0;
  for (int ty = 0; ty < TY; ty++)
    for (int tx = 0; tx < TX; tx++)
      for (int i = 0; i < BOX; i++) {
        int x = OX + tx * BW + i % BW, y = OY + ty * BH + i / BW;
        bool in = x >= 0 && x < W && y >= 0 && y < H;
        float want = in ? host[y * PITCH + x] : 0.0f;
        outside += !in;
        const float* g = got + ((size_t)(ty * TX + tx) * BOX + i) * 2;
        bad_loads += (g[0] != want) + (g[1] != want);
        sum += g[0] + g[1];
      }
  printf("loaded %d boxes of %d elements (%d outside the tensor): %d mismatches, sum %.1f\n", TX * TY, BOX,
         outside, bad_loads, sum);

  CHECK(cudaMemset(dst, 0xff, n * sizeof(float)));  // NaN sentinels
  store_tiles<<<dim3(TX, TY), 128>>>(swz_dst);
  CHECK_LAUNCH();
  float* stored = (float*)malloc(n * sizeof(float));
  CHECK(cudaMemcpy(stored, dst, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad_stores = 0, untouched = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < PITCH; x++) {
      float v = stored[y * PITCH + x];
      if (x >= W) {
        untouched += v != v;
        continue;
      }
      int tx = (x - SX) / BW, ty = (y - SY) / BH;
      int i = ((y - SY) % BH) * BW + (x - SX) % BW;
      bad_stores += v != (float)((ty * TX + tx) * 1000 + i);
    }
  printf("stored %d boxes: %d mismatches, %d of %d padding elements untouched\n", TX * TY, bad_stores, untouched,
         (PITCH - W) * H);
  if (bad_loads || bad_stores || untouched != (PITCH - W) * H) FAIL("TMA results differ");
  printf("PASSED\n");
  return 0;
}

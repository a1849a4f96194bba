// async_copy: Ampere's asynchronous global->shared copies (cp.async) as nvcc emits them for sm_80:
// a tiled matrix multiply that double-buffers its tiles with the __pipeline_* primitives, and a
// scale that stages its input with cuda::memcpy_async and a thread-scope cuda::pipeline. Both are
// checked against CPU references. (Block-scope pipelines use mbarrier objects, which lockstep does not run.)
#include "common.h"

#include <cuda/pipeline>
#include <cuda_pipeline.h>

constexpr int TILE = 16;

// C = A * B for n x n matrices (n a multiple of TILE); tiles of A and B are prefetched one step ahead.
__global__ void matmul_pipelined(const float* a, const float* b, float* c, int n) {
  __shared__ float as[2][TILE][TILE];
  __shared__ float bs[2][TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  int steps = n / TILE;
  __pipeline_memcpy_async(&as[0][ty][tx], &a[row * n + tx], sizeof(float));
  __pipeline_memcpy_async(&bs[0][ty][tx], &b[ty * n + col], sizeof(float));
  __pipeline_commit();
  float acc = 0.0f;
  for (int s = 0; s < steps; s++) {
    int cur = s & 1;
    if (s + 1 < steps) {
      int k = (s + 1) * TILE;
      __pipeline_memcpy_async(&as[cur ^ 1][ty][tx], &a[row * n + k + tx], sizeof(float));
      __pipeline_memcpy_async(&bs[cur ^ 1][ty][tx], &b[(k + ty) * n + col], sizeof(float));
    }
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += as[cur][ty][k] * bs[cur][k][tx];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// y[i] = 2 * x[i] + 1, each thread staging its 4 inputs (one 16-byte piece) with cuda::memcpy_async into a
// thread-scope cuda::pipeline (cp.async with commit and wait groups).
__global__ void scale_staged(const float4* x, float* y) {
  __shared__ float4 stage[64];
  auto pipe = cuda::make_pipeline();
  int t = threadIdx.x;
  pipe.producer_acquire();
  cuda::memcpy_async(&stage[t], &x[blockIdx.x * 64 + t], cuda::aligned_size_t<16>(sizeof(float4)), pipe);
  pipe.producer_commit();
  cuda::pipeline_consumer_wait_prior<0>(pipe);
  __syncthreads();
  // Each thread writes values another thread staged.
  const float* s = reinterpret_cast<const float*>(stage);
  for (int i = t; i < 256; i += blockDim.x) y[blockIdx.x * 256 + i] = 2.0f * s[i] + 1.0f;
  pipe.consumer_release();
}

int main() {
  const int n = 64;
  const size_t bytes = n * n * sizeof(float);
  float *ha = (float*)malloc(bytes), *hb = (float*)malloc(bytes), *hc = (float*)malloc(bytes);
  for (int i = 0; i < n * n; i++) {
    ha[i] = (float)((i * 7) % 13) - 6.0f;
    hb[i] = (float)((i * 5) % 11) - 5.0f;
  }
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice));
  matmul_pipelined<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost));
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++) {
      float want = 0.0f;
      for (int k = 0; k < n; k++) want += ha[r * n + k] * hb[k * n + c];
      if (hc[r * n + c] != want) FAIL("C[%d][%d] = %g, want %g\n", r, c, hc[r * n + c], want);
    }
  printf("matmul_pipelined %dx%d: ok\n", n, n);

  const int blocks = 8, m = blocks * 256;
  float *hx = (float*)malloc(m * sizeof(float)), *hy = (float*)malloc(m * sizeof(float));
  for (int i = 0; i < m; i++) hx[i] = (float)i * 0.5f;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, m * sizeof(float)));
  CHECK(cudaMalloc(&dy, m * sizeof(float)));
  CHECK(cudaMemcpy(dx, hx, m * sizeof(float), cudaMemcpyHostToDevice));
  scale_staged<<<blocks, 64>>>((const float4*)dx, dy);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(hy, dy, m * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < m; i++)
    if (hy[i] != 2.0f * hx[i] + 1.0f) FAIL("y[%d] = %g, want %g\n", i, hy[i], 2.0f * hx[i] + 1.0f);
  printf("scale_staged (cuda::memcpy_async): ok\n");
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  return 0;
}

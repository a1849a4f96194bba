// stencil2d: an iterated 5-point Jacobi stencil on a 2D grid. Each block
// stages its tile plus a one-cell halo in dynamic shared memory
// (extern __shared__, size given at launch), with clamp-to-edge boundaries.
// Run with two block shapes (so two dynamic shared sizes) and compared
// exactly with the CPU: both sides do the same float operations in the same
// order.
#include "common.h"
#include <cstring>
#include <vector>

__device__ __host__ inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

__device__ __host__ inline float stencil(float c, float up, float down, float left, float right) {
  return ((((c + up) + down) + left) + right) * 0.2f;
}

__global__ void jacobi(const float* in, float* out, int w, int h) {
  extern __shared__ float tile[];
  const int bw = blockDim.x + 2;
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  // Cooperative load of the (blockDim.x+2) x (blockDim.y+2) tile with halo.
  int x0 = blockIdx.x * blockDim.x - 1, y0 = blockIdx.y * blockDim.y - 1;
  int tile_n = bw * (blockDim.y + 2);
  for (int k = threadIdx.y * blockDim.x + threadIdx.x; k < tile_n; k += blockDim.x * blockDim.y) {
    int tx = k % bw, ty = k / bw;
    int gx = clampi(x0 + tx, 0, w - 1), gy = clampi(y0 + ty, 0, h - 1);
    tile[k] = in[gy * w + gx];
  }
  __syncthreads();
  if (x < w && y < h) {
    int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
    out[y * w + x] = stencil(tile[ty * bw + tx], tile[(ty - 1) * bw + tx], tile[(ty + 1) * bw + tx],
                             tile[ty * bw + tx - 1], tile[ty * bw + tx + 1]);
  }
}

static void cpu_jacobi(const std::vector<float>& in, std::vector<float>& out, int w, int h) {
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      auto at = [&](int xx, int yy) { return in[clampi(yy, 0, h - 1) * w + clampi(xx, 0, w - 1)]; };
      out[y * w + x] = stencil(at(x, y), at(x, y - 1), at(x, y + 1), at(x - 1, y), at(x + 1, y));
    }
}

int main() {
  const int W = 128, H = 96, iters = 8;
  printf("stencil2d: %dx%d, %d iterations\n", W, H, iters);
  std::vector<float> init(W * H), ref(W * H), tmp(W * H), got(W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) init[y * W + x] = (float)((x * 7 + y * 13) % 17);
  ref = init;
  for (int it = 0; it < iters; it++) {
    cpu_jacobi(ref, tmp, W, H);
    ref.swap(tmp);
  }
  double checksum = 0;
  for (int i = 0; i < W * H; i++) checksum += ref[i];

  float *da, *db;
  CHECK(cudaMalloc(&da, W * H * sizeof(float)));
  CHECK(cudaMalloc(&db, W * H * sizeof(float)));
  const dim3 shapes[2] = {dim3(16, 8), dim3(32, 4)};
  for (int s = 0; s < 2; s++) {
    dim3 block = shapes[s], grid((W + block.x - 1) / block.x, (H + block.y - 1) / block.y);
    size_t shmem = (block.x + 2) * (block.y + 2) * sizeof(float);
    CHECK(cudaMemcpy(da, init.data(), W * H * sizeof(float), cudaMemcpyHostToDevice));
    float *src = da, *dst = db;
    for (int it = 0; it < iters; it++) {
      jacobi<<<grid, block, shmem>>>(src, dst, W, H);
      CHECK_LAUNCH();
      float* t = src;
      src = dst;
      dst = t;
    }
    CHECK(cudaMemcpy(got.data(), src, W * H * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++)
      if (got[i] != ref[i]) FAIL("block %ux%u: cell (%d,%d) = %.9g, CPU %.9g", block.x, block.y, i % W, i / W, got[i], ref[i]);
    printf("block %ux%u, %zu bytes of dynamic shared memory: matches the CPU\n", block.x, block.y, shmem);
  }
  printf("checksum %.4f, u(0,0) %.6f, u(%d,%d) %.6f\n", checksum, ref[0], W / 2, H / 2, ref[(H / 2) * W + W / 2]);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  printf("PASSED\n");
  return 0;
}

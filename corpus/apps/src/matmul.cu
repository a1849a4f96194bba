// matmul: tiled shared-memory matrix multiply (16x16 tiles, __syncthreads,
// matrix sizes that are not multiples of the tile), then a statistics kernel
// using a warp-shuffle reduction (__shfl_down_sync) and atomics: atomicAdd on
// float and int, atomicMax / atomicMin on int. Inputs are small integers, so
// every float result is exact whatever the summation order.
#include "common.h"
#include <vector>

const int TILE = 16;

__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int K, int N) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; t++) {
    int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

__global__ void stats(const float* C, int n, float* total, int* positives, int* maxv, int* minv) {
  float sum = 0.0f;
  int pos = 0, mx = -2147483647 - 1, mn = 2147483647;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = C[i];
    sum += v;
    pos += v > 0.0f;
    mx = max(mx, (int)v);
    mn = min(mn, (int)v);
  }
  for (int o = 16; o > 0; o >>= 1) {
    sum += __shfl_down_sync(0xffffffffu, sum, o);
    pos += __shfl_down_sync(0xffffffffu, pos, o);
    mx = max(mx, __shfl_down_sync(0xffffffffu, mx, o));
    mn = min(mn, __shfl_down_sync(0xffffffffu, mn, o));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(total, sum);
    atomicAdd(positives, pos);
    atomicMax(maxv, mx);
    atomicMin(minv, mn);
  }
}

int main() {
  const int M = 100, K = 80, N = 120;
  printf("matmul: %dx%d * %dx%d\n", M, K, K, N);
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) A[i * K + k] = (float)((i * 3 + k) % 7 - 3);
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++) B[k * N + j] = (float)((k * 5 + j) % 9 - 4);
  float *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, M * K * sizeof(float)));
  CHECK(cudaMalloc(&dB, K * N * sizeof(float)));
  CHECK(cudaMalloc(&dC, M * N * sizeof(float)));
  CHECK(cudaMemcpy(dA, A.data(), M * K * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), K * N * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_tiled<<<grid, block>>>(dA, dB, dC, M, K, N);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(C.data(), dC, M * N * sizeof(float), cudaMemcpyDeviceToHost));
  double ref_sum = 0;
  int ref_pos = 0, ref_max = -2147483647 - 1, ref_min = 2147483647;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      int acc = 0;
      for (int k = 0; k < K; k++) acc += (int)A[i * K + k] * (int)B[k * N + j];
      if (C[i * N + j] != (float)acc) FAIL("C[%d][%d] = %f, expected %d", i, j, C[i * N + j], acc);
      ref_sum += acc;
      ref_pos += acc > 0;
      ref_max = acc > ref_max ? acc : ref_max;
      ref_min = acc < ref_min ? acc : ref_min;
    }
  printf("C[0][0] %.0f, C[%d][%d] %.0f\n", C[0], M - 1, N - 1, C[M * N - 1]);

  float* dtotal;
  int* dints;
  CHECK(cudaMalloc(&dtotal, sizeof(float)));
  CHECK(cudaMalloc(&dints, 3 * sizeof(int)));
  const int init[3] = {0, -2147483647 - 1, 2147483647};
  CHECK(cudaMemset(dtotal, 0, sizeof(float)));
  CHECK(cudaMemcpy(dints, init, sizeof(init), cudaMemcpyHostToDevice));
  stats<<<8, 128>>>(dC, M * N, dtotal, dints, dints + 1, dints + 2);
  CHECK_LAUNCH();
  float total = 0;
  int res[3];
  CHECK(cudaMemcpy(&total, dtotal, sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(res, dints, sizeof(res), cudaMemcpyDeviceToHost));
  if ((double)total != ref_sum || res[0] != ref_pos || res[1] != ref_max || res[2] != ref_min)
    FAIL("stats: sum %.1f positives %d max %d min %d; expected %.1f %d %d %d", total, res[0], res[1], res[2], ref_sum,
         ref_pos, ref_max, ref_min);
  printf("shuffle + atomics: sum %.0f, positives %d, max %d, min %d\n", total, res[0], res[1], res[2]);
  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));
  CHECK(cudaFree(dtotal));
  CHECK(cudaFree(dints));
  printf("PASSED\n");
  return 0;
}

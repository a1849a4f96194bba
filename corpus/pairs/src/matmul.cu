// matmul (CUDA side): naive C = A * B for n x n row-major floats, one output
// element per thread; 32x8 blocks, so a warp is 32 consecutive columns of one
// row (A's element is the same for the whole warp, B's row is coalesced).
// CPU side: matmul.c.
#include "pairs.h"
#include "matmul.h"

__global__ void matmul(const float *a, const float *b, float *c, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; k++) sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
  }
}

int main(int argc, char **argv) {
  const int n = arg_int(argc, argv, 1, 64);
  const size_t bytes = (size_t)n * n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
  matmul_inputs(a, b, n);
  float *da, *db, *dc;
  CHECK(cudaMalloc(&da, bytes));
  CHECK(cudaMalloc(&db, bytes));
  CHECK(cudaMalloc(&dc, bytes));
  CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));
  dim3 block(32, 8), grid((n + 31) / 32, (n + 7) / 8);
  matmul<<<grid, block>>>(da, db, dc, n);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));
  return matmul_report(a, b, c, n);
}
